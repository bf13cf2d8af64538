//! Delivering one owed push, bounded in time, from any thread.

use super::{GitPush, OciPush, Owed, Push, Settled};
use crate::delivery::Reason;
use crate::error::{Error, PushError, Result};
use crate::store::{State, StateRecord, Store, now_millis};
use std::sync::Mutex;
use std::time::Duration;

/// How one delivery of an owed push ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivery {
    /// It landed (or the far end already had it); recorded in the domain's journal as
    /// the original command records a push, and the item removed — unless a newer owed
    /// push to the same target replaced it meanwhile (`settled` says which).
    Delivered {
        /// The far end already had it (a delivery whose record a crash lost).
        already_there: bool,
        settled: Settled,
        /// The journal append or the removal failed (the push happened): redacted.
        not_recorded: Option<String>,
    },
    /// The far end did not answer, or clinv could not try (the repository is locked by
    /// another clinv): still owed. `reason` is `None` for a local cause.
    StillOwed {
        reason: Option<Reason>,
        message: String,
    },
    /// The far end or the repository refused it (the remote moved on, the local branch
    /// was reset, credentials refused, the key does not open): still owed, and trying
    /// again will not help until someone acts; the message says what to do.
    Refused { message: String },
}

/// One process runs one Git push at a time: libgit2's transport registry and the HTTPS
/// transport's settings are global.
static GIT: Mutex<()> = Mutex::new(());

/// Delivers `item` of `store`, waiting at most `timeout` for it.
///
/// A far end that does not answer in time is [`Delivery::StillOwed`]. A registry push
/// ends by itself at `timeout`; a Git push goes on in the background and ends at the
/// transport's own limits (a late success is still recorded). Safe from any thread; Git
/// deliveries of one process run one at a time.
pub fn deliver(store: &Store, item: &Owed, timeout: Duration) -> Delivery {
    if let Push::Oci(_) = &item.push {
        // Every step of it (the credential helper, each request) is bounded by the
        // attempt's end: it is given up there by itself, on the caller's thread.
        return attempt(store, item, timeout);
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let (store, owned) = (store.clone(), item.clone());
    let spawned = std::thread::Builder::new()
        .name("clinv-owed".into())
        .spawn(move || {
            let _ = tx.send(attempt(&store, &owned, timeout));
        });
    if let Err(e) = spawned {
        return Delivery::StillOwed {
            reason: None,
            message: format!("cannot start the delivery: {e}"),
        };
    }
    rx.recv_timeout(timeout)
        .unwrap_or_else(|_| Delivery::StillOwed {
            reason: Some(Reason::Unreachable),
            message: format!(
                "{} did not answer within {}s",
                item.push.shown_target(),
                timeout.as_secs_f64()
            ),
        })
}

fn attempt(store: &Store, item: &Owed, timeout: Duration) -> Delivery {
    let until = std::time::Instant::now() + timeout;
    let pushed = match &item.push {
        Push::Git(g) => push_git(g, timeout).map(|already| (already, git_state(item, g))),
        Push::Oci(o) => push_oci(store, item, o, until),
    };
    match pushed {
        Ok((already_there, change)) => {
            let domain = store.domain(&item.domain);
            match domain.settle(item, &change) {
                Ok(settled) => Delivery::Delivered {
                    already_there,
                    settled,
                    not_recorded: None,
                },
                Err(e) => Delivery::Delivered {
                    already_there,
                    settled: Settled::Gone,
                    not_recorded: Some(super::detail(&e)),
                },
            }
        }
        Err(e) => failed(&e),
    }
}

/// Still owed when the far end did not answer or the repository was busy; else refused.
fn failed(e: &Error) -> Delivery {
    let message = crate::util::redact::detail(&crate::error::chain(e));
    let reason = match e {
        Error::Push(PushError::Unanswered { reason, .. }) => Some(*reason),
        Error::Locked { .. } | Error::Oci(crate::error::OciError::TagChanged { .. }) => {
            return Delivery::StillOwed {
                reason: None,
                message,
            };
        }
        Error::Oci(o) => o.unanswered(),
        _ => None,
    };
    match reason {
        Some(reason) => Delivery::StillOwed {
            reason: Some(reason),
            message,
        },
        None => Delivery::Refused { message },
    }
}

/// Pushes the owed commit; whether the remote had it already.
///
/// The whole attempt ends within `timeout` of its start, waiting for the process's one
/// git operation included: a delivery whose caller gave up never pushes later, and never
/// holds the next one up.
fn push_git(g: &GitPush, timeout: Duration) -> Result<bool> {
    let start = std::time::Instant::now();
    let _one = loop {
        match GIT.try_lock() {
            Ok(held) => break held,
            Err(std::sync::TryLockError::Poisoned(e)) => break e.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) if start.elapsed() >= timeout => {
                return Err(Error::Locked {
                    what: g.repo.display().to_string(),
                    holder: "another git delivery of this process is still in flight".into(),
                });
            }
            Err(std::sync::TryLockError::WouldBlock) => {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    };
    let left = timeout.saturating_sub(start.elapsed());
    let repo =
        crate::gitops::Repo::open(&g.repo, left)?.with_https(crate::gitops::https::Options {
            token_env: g.token_env.clone(),
            allow_insecure_tls: g.allow_insecure_tls,
        });
    repo.push_owed(&g.remote, &g.url, &g.branch, &g.commit, left)
}

/// The state `commit --push` records for a pushed commit.
fn git_state(item: &Owed, g: &GitPush) -> StateRecord {
    StateRecord {
        detail: Some(format!("pushed to {}", g.remote)),
        commit: Some(g.commit.clone()),
        pushed: Some(g.remote.clone()),
        ..StateRecord::new(&item.snapshot, &now_millis(), State::Committed)
    }
}

/// Re-packs the snapshot's folder with the annotations it was first packed with, pushes
/// it (signed when asked, the key read now), and returns the state `push` records.
///
/// Nothing of it is sent after `until`, and the tag moves only while it still names what
/// it named when it was checked and the outbox still owes this very push: an attempt
/// that lasted past a direct push of a newer snapshot never moves the tag back.
fn push_oci(
    store: &Store,
    item: &Owed,
    o: &OciPush,
    until: std::time::Instant,
) -> Result<(bool, StateRecord)> {
    use crate::oci::{self, LayerType};
    let domain = store.domain(&item.domain);
    let picked = crate::ops::commit::pick(&domain, Some(item.snapshot.as_str()))?;
    let Some((snap, inventory)) = picked.found else {
        return Err(crate::error::SnapshotError::NotOfDomain {
            reference: item.snapshot.to_string(),
            domain: item.domain.to_string(),
        }
        .into());
    };
    let folder = crate::ops::commit::folder(&domain, &snap, &inventory)?;
    let layer = match o.layer.as_str() {
        "oci" => LayerType::Oci,
        _ => LayerType::Flux,
    };
    let artifact = crate::ops::push::pack_with(&folder, &snap, layer, &o.annotations)?;
    let target = oci::parse_tag(&o.reference)?;
    let access = oci::Access {
        plain_http: o.plain_http,
        insecure: o.insecure,
        ca_file: o.ca_file.clone(),
        creds_env: o.creds_env.clone(),
        token_env: o.token_env.clone(),
        until: Some(until),
    };
    let signer = o.sign_key.as_deref().map(oci::signing_key).transpose()?;
    let snapshot_tag = format!("snapshot-{}", snap.id);
    let seen = not_moved_on(&target, &access, &artifact, &o.annotations)?;
    let guard = |now: Option<&str>| now == seen.as_deref() && still_owed(store, item);
    let sending = oci::Sending {
        extra_tags: std::slice::from_ref(&snapshot_tag),
        signer: signer.as_ref(),
        last_push: None,
        guard: Some(&guard),
    };
    let pushed = oci::push(&target, &artifact, &access, &sending)?;
    let already = pushed.uploaded == 0 && pushed.tagged.is_empty();
    let change = crate::ops::push::pushed_state(&snap.id, &target, &artifact.digest);
    Ok((already, change))
}

/// Whether the outbox still owes this very push (a direct push of this or a newer
/// snapshot settles or replaces it).
fn still_owed(store: &Store, item: &Owed) -> bool {
    let listing = crate::store::outbox::list(store.root(), Some(&item.domain));
    listing.owed.iter().any(|e| e.owed == *item)
}

/// Refuses an owed push whose tag now names another artifact of an inventory rendered
/// later (another machine pushed a newer one meanwhile): the registry's analogue of a
/// remote that moved on. A tag that names nothing, this artifact, or an older or
/// undated one is pushed over as `push` would. What the tag names, for the move's guard.
fn not_moved_on(
    target: &crate::oci::Reference,
    access: &crate::oci::Access,
    artifact: &crate::oci::Artifact,
    ours: &std::collections::BTreeMap<String, String>,
) -> Result<Option<String>> {
    const CREATED: &str = "org.opencontainers.image.created";
    let mut session = crate::oci::Session::open(target, access)?;
    let seen = session.digest(&target.tag)?;
    let Some(digest) = seen.clone().filter(|d| *d != artifact.digest) else {
        return Ok(seen);
    };
    let theirs = session.pull(&digest, None)?;
    let when = |a: &std::collections::BTreeMap<String, String>| {
        a.get(CREATED)
            .and_then(|t| crate::util::time::parse_rfc3339(t).map(|p| (p, t.clone())))
    };
    match (when(&theirs.annotations), when(ours)) {
        (Some((theirs_at, theirs_rendered)), Some((ours_at, ours_rendered)))
            if theirs_at > ours_at =>
        {
            Err(crate::error::OciError::MovedOn {
                reference: format!("{}:{}", target.url(), target.tag),
                theirs: digest,
                theirs_rendered,
                ours_rendered,
            }
            .into())
        }
        _ => Ok(seen),
    }
}
