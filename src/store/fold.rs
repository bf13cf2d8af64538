//! The state rules of one snapshot: the one fold of the journal. Three readers run it
//! over the same lines — the full read ([`super::journal::Builder`]: every record, with
//! history), the compact listing ([`super::scan`], fed from the lines or their
//! summaries) and the end scan ([`super::segments::Layout::newest_queue`], newest lines
//! first) — each with its own traversal and keeping what it shows, never with a rule of
//! its own: [`Fold::take`] says which change is in force and whose time is the state's.
//! The store's model tests hold their answers equal.
//!
//! The rules: `deleted` is final; `committed` (Git) and `pushed` (a registry) are
//! channels of their own and never change the cluster's; of the cluster changes
//! (`pending`, `applied`, `superseded`) the newest by recorded time is in force (of equal
//! times, the later line), and a snapshot recorded for the cluster starts `pending`. The
//! state shown is the first that holds of: deleted, the cluster state, committed,
//! pushed, recorded.

use super::record::State;

const DELETED: u8 = 1;
const COMMITTED: u8 = 2;
const PUSHED: u8 = 4;

/// One snapshot's state so far (two bytes: a listing keeps one per row).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Fold {
    channels: u8,
    cluster: Option<State>,
}

impl Fold {
    /// A snapshot just recorded: `pending` when it is for the cluster.
    pub fn recorded(for_cluster: bool) -> Fold {
        Fold {
            channels: 0,
            cluster: for_cluster.then_some(State::Pending),
        }
    }

    /// Takes one change. A cluster change replaces the cluster state only when it is
    /// `newest` (at least as recent as the one in force; a reader that goes in time
    /// order passes `true`). Whether the change is now the cluster's, so the caller
    /// keeps its time, reason and detail.
    fn apply(&mut self, state: State, newest: bool) -> bool {
        if Self::is_cluster_change(state) {
            if newest {
                self.cluster = Some(state);
            }
            return newest;
        }
        self.channels |= match state {
            State::Deleted => DELETED,
            State::Committed => COMMITTED,
            State::Pushed => PUSHED,
            _ => 0,
        };
        false
    }

    /// Takes one change (nothing once deleted: a change after `deleted` is history
    /// only — its objects may be gone). `newest` as for [`Fold::apply`]. What the
    /// reader keeps of the change: see [`Took`].
    pub fn take(&mut self, state: State, newest: bool) -> Took {
        if self.deleted() {
            return Took::default();
        }
        // Before this change: whether a channel's time is the state's time.
        let (cluster, committed) = (self.cluster, self.committed());
        let in_force = self.apply(state, newest);
        let state_time = match state {
            State::Deleted => true,
            State::Committed => cluster.is_none(),
            State::Pushed => cluster.is_none() && !committed,
            _ => in_force,
        };
        Took {
            taken: true,
            in_force,
            state_time,
        }
    }

    /// Whether `state` is a change of the cluster channel (which of two is in force
    /// depends on their times).
    pub fn is_cluster_change(state: State) -> bool {
        matches!(state, State::Pending | State::Applied | State::Superseded)
    }

    pub fn deleted(self) -> bool {
        self.channels & DELETED != 0
    }

    pub fn committed(self) -> bool {
        self.channels & COMMITTED != 0
    }

    pub fn pushed(self) -> bool {
        self.channels & PUSHED != 0
    }

    /// The cluster channel's state (of a snapshot that is not deleted).
    pub fn cluster(self) -> Option<State> {
        self.cluster
    }

    /// The state to show.
    pub fn state(self) -> State {
        if self.deleted() {
            State::Deleted
        } else if let Some(c) = self.cluster {
            c
        } else if self.committed() {
            State::Committed
        } else if self.pushed() {
            State::Pushed
        } else {
            State::Recorded
        }
    }
}

/// What a reader keeps of a change [`Fold::take`] took.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Took {
    /// Not after `deleted`: a Git change's commit and remote, a registry change's
    /// reference, are the snapshot's.
    pub taken: bool,
    /// The cluster change now in force: its reason and detail are the snapshot's.
    pub in_force: bool,
    /// Its time is the time of the state shown.
    pub state_time: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folded(for_cluster: bool, changes: &[State]) -> Fold {
        let mut fold = Fold::recorded(for_cluster);
        for &state in changes {
            fold.apply(state, true);
        }
        fold
    }

    #[test]
    fn the_state_shown_follows_the_precedence_of_the_rules() {
        use State::*;
        assert_eq!(folded(true, &[]).state(), Pending);
        assert_eq!(folded(false, &[]).state(), Recorded);
        assert_eq!(folded(false, &[Pushed]).state(), Pushed);
        assert_eq!(folded(false, &[Pushed, Committed]).state(), Committed);
        assert_eq!(folded(true, &[Committed, Pushed]).state(), Pending);
        assert_eq!(folded(true, &[Applied, Committed]).state(), Applied);
        assert_eq!(folded(true, &[Applied, Superseded]).state(), Superseded);
        assert_eq!(folded(true, &[Applied, Deleted, Applied]).state(), Deleted);
        assert_eq!(folded(false, &[Recorded]).state(), Recorded);
    }

    #[test]
    fn an_older_cluster_change_does_not_replace_the_one_in_force() {
        let mut fold = Fold::recorded(true);
        assert!(fold.apply(State::Applied, true));
        assert!(!fold.apply(State::Superseded, false));
        assert_eq!(fold.cluster(), Some(State::Applied));
        // A channel change is never the cluster's.
        assert!(!fold.apply(State::Committed, true));
        assert!(fold.committed() && !fold.pushed() && !fold.deleted());
    }

    #[test]
    fn the_state_time_is_the_change_that_decides_the_state_shown() {
        let took = |for_cluster: bool, before: &[State], change: State| {
            let mut fold = folded(for_cluster, before);
            fold.take(change, true)
        };
        let (cluster, git) = (true, false);
        // The cluster's state is shown: a Git or registry change does not set its time.
        assert!(!took(cluster, &[], State::Committed).state_time);
        assert!(took(cluster, &[], State::Applied).state_time);
        assert!(took(git, &[], State::Committed).state_time);
        assert!(took(git, &[], State::Pushed).state_time);
        // Committed is shown before pushed.
        assert!(!took(git, &[State::Committed], State::Pushed).state_time);
        assert!(took(cluster, &[], State::Deleted).state_time);
        // After deleted, nothing is taken.
        assert_eq!(
            took(cluster, &[State::Deleted], State::Applied),
            Took::default()
        );
        assert!(took(cluster, &[], State::Superseded).in_force);
    }

    #[test]
    fn it_stays_two_bytes() {
        assert_eq!(std::mem::size_of::<Fold>(), 2);
    }
}
