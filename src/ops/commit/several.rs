//! `clinv commit` of several domains in one commit.
//!
//! `clinv commit` of several domains (`-A`, `--domain` repeated, a glob): every selected
//! domain's folder in **one** commit — one pull request for a fleet-wide pin bump — with a
//! subject and body that summarise the change per domain.
//!
//! Every domain is chosen (rendered and recorded, or picked from the store) before the
//! repository is touched; when one cannot be, nothing is committed. A domain whose folder
//! the branch holds rendered later is left alone, as one domain's commit leaves it.

use super::{Chosen, Options, Origin, Source, chosen, folder, older_message, request};
use crate::domain::Domain;
use crate::error::{ArgumentError, Error, Result};
use crate::gitops::{self, Folder, Found, Part, Repo};
use crate::inventory::ClusterInventory;
use crate::snapshot_id::SnapshotId;
use crate::store::{DomainStore, SnapshotRecord, State, StateRecord, now_millis};
use crate::util::notice::Notice;

/// The placeholders `--message` may use with several domains: the others are a domain's.
const FLEET_PLACEHOLDERS: [&str; 2] = ["{domain}", "{summary}"];

/// What the commit did for one domain.
pub enum Row {
    /// A deploy domain: it has no inventory of its own, nothing was committed.
    DeployDomain { cluster_ref: Option<String> },
    /// A cluster domain: its snapshot, where it came from, and what the branch held.
    Folder {
        snapshot: SnapshotId,
        origin: Origin,
        path: String,
        found: Found,
        /// With [`Found::Older`]: why the folder was left alone.
        older: Option<String>,
    },
}

/// How the commit of several domains ended.
pub struct Several {
    pub branch: String,
    /// Each selected domain, in the order given.
    pub rows: Vec<(Domain, Row)>,
    /// The one new commit, when a folder changed.
    pub commit: Option<String>,
    /// The pushed tip and the attempts it took.
    pub pushed: Option<(String, u32)>,
    /// The remote did not answer: the push is owed, once per delivered domain (the first
    /// delivery pushes the commit, the others find it there).
    pub owed: Vec<super::super::owed::Owing>,
    /// Domains whose commit the store could not record (it happened all the same).
    pub not_recorded: Vec<(Domain, Error)>,
}

/// The messages of the way (always), and how it ended.
pub type Report = crate::ops::Reported<Several>;

/// A selected domain: a member of the commit, or a deploy domain (its cluster reference).
enum Pick<'a> {
    Member(Box<Member<'a>>),
    Deploy(Option<String>),
}

/// The selected domains, in order.
type Picks<'a> = Vec<(Domain, Pick<'a>)>;

/// A cluster domain ready to commit.
struct Member<'a> {
    store: &'a DomainStore,
    snapshot: SnapshotRecord,
    inventory: ClusterInventory,
    origin: Origin,
    folder: Folder,
    path: String,
}

/// Commits the domains of `stores` from `source` in one commit (module documentation).
pub fn run(stores: &[DomainStore], source: &Source<'_>, opts: &Options<'_>) -> Report {
    let mut notices = Vec::new();
    let result = check_template(opts.template)
        .and_then(|()| choose(stores, source, &mut notices))
        .and_then(|picks| commit(picks, opts, &mut notices));
    Report { notices, result }
}

/// `--message` with several domains takes only [`FLEET_PLACEHOLDERS`].
fn check_template(template: Option<&str>) -> Result<()> {
    let Some(text) = template else { return Ok(()) };
    let mut rest = text;
    while let Some(start) = rest.find('{') {
        let end = rest[start..]
            .find('}')
            .map_or(rest.len(), |e| start + e + 1);
        let placeholder = &rest[start..end];
        if !FLEET_PLACEHOLDERS.contains(&placeholder) && placeholder.len() > 2 {
            return Err(ArgumentError::FleetTemplate(placeholder.to_string()).into());
        }
        rest = &rest[end..];
    }
    Ok(())
}

/// Each domain's snapshot and folder (up to 64 at once), or the first domain that failed.
fn choose<'a>(
    stores: &'a [DomainStore],
    source: &Source<'_>,
    notices: &mut Vec<Notice>,
) -> Result<Picks<'a>> {
    let each = crate::util::pool::ordered(stores, 64, |store| {
        let mut said = Vec::new();
        let got = chosen(store, source, &mut said);
        (said, got)
    });
    let mut rows = Vec::with_capacity(stores.len());
    for (store, (said, got)) in stores.iter().zip(each) {
        let domain = &store.domain;
        notices.extend(said.into_iter().map(|n| Notice {
            text: format!("{domain}: {}", n.text),
            ..n
        }));
        let got = got
            .and_then(|c| member(store, c))
            .map_err(|e| Error::InDomain {
                domain: domain.to_string(),
                source: Box::new(e),
            })?;
        rows.push((domain.clone(), got));
    }
    Ok(rows)
}

/// A chosen snapshot as a member of the commit; a deploy domain as its cluster reference.
fn member(store: &DomainStore, chosen: Chosen) -> Result<Pick<'_>> {
    let (snapshot, inventory, origin) = match chosen {
        Chosen::Snapshot(c) => *c,
        Chosen::DeployDomain { cluster_ref } => return Ok(Pick::Deploy(cluster_ref)),
    };
    Ok(Pick::Member(Box::new(Member {
        folder: folder(store, &snapshot, &inventory)?,
        path: gitops::default_path(&store.domain),
        store,
        snapshot,
        inventory,
        origin,
    })))
}

/// The one commit of every member's folder, pushed when asked, recorded per domain.
fn commit(picks: Picks<'_>, opts: &Options<'_>, notices: &mut Vec<Notice>) -> Result<Several> {
    let members: Vec<&Member<'_>> = picks
        .iter()
        .filter_map(|(_, p)| match p {
            Pick::Member(m) => Some(&**m),
            Pick::Deploy(_) => None,
        })
        .collect();
    let repo = Repo::open(opts.repo, crate::store::lock_timeout()?)?.with_https(opts.https.clone());
    let branch = repo.branch(opts.branch)?;
    let parts: Vec<Part<'_>> = members.iter().map(|m| part(m)).collect();
    let template = opts.template;
    let message = |found: &[Found]| message(template, &members, found);
    let made = repo.commit(&request(opts, &parts, &message))?;
    if let Some(oid) = &made.oid {
        let changed = made
            .found
            .iter()
            .filter(|f| matches!(f, Found::Changed { .. }));
        notices.push(Notice::info(format!(
            "committed {} of {} folder(s) as {} on {branch}",
            changed.count(),
            parts.len(),
            &oid[..oid.len().min(12)]
        )));
    }
    // The folders left alone as older are not pushed over what the remote holds.
    let delivered: Vec<usize> = (0..parts.len())
        .filter(|&i| !matches!(made.found[i], Found::Older { .. }))
        .collect();
    let (mut pushed, mut owed) = (None, Vec::new());
    if let Some((remote, timeout)) = opts.push.filter(|_| !delivered.is_empty()) {
        let kept: Vec<Part<'_>> = delivered.iter().map(|&i| part(members[i])).collect();
        match repo.push(remote, &request(opts, &kept, &message), timeout) {
            Ok(attempts) => {
                let tip = repo.head_commit(&branch).unwrap_or_default();
                pushed = Some((tip, attempts.attempts));
                settle(&repo, remote, &branch, opts, &members, notices);
            }
            Err(Error::Push(e @ crate::error::PushError::Unanswered { .. })) => {
                let owing = delivered.iter().map(|&i| members[i]);
                owed = owe(&repo, remote, &branch, opts, owing, &e);
            }
            Err(e) => return Err(e),
        }
    }
    let tip = repo.head_commit(&branch);
    let remote = opts.push.filter(|_| owed.is_empty()).map(|(r, _)| r);
    let not_recorded = record(&members, &made.found, tip.as_deref(), remote, &made.oid);
    let rows = rows(picks, made.found, &branch);
    Ok(Several {
        branch,
        rows,
        commit: made.oid,
        pushed,
        owed,
        not_recorded,
    })
}

/// The branch landed on `remote`: a push of it owed by any of `members` (an older commit
/// the branch holds) is no longer owed, as after a one-domain `commit --push`.
fn settle(
    repo: &Repo,
    remote: &str,
    branch: &str,
    opts: &Options<'_>,
    members: &[&Member<'_>],
    notices: &mut Vec<Notice>,
) {
    let target = crate::store::outbox::Push::Git(super::git_target(repo, remote, branch, opts, ""));
    for m in members {
        if let Err(e) = m.store.settle_target(&target) {
            notices.push(Notice::warn(format!(
                "{}: the owed push is settled but could not be removed from the outbox: {}",
                m.store.domain,
                crate::error::chain(&e)
            )));
        }
    }
}

/// Records the push of `branch` to `remote` as owed by each of `members` (the remote did
/// not answer: `e`).
fn owe<'a, 'm: 'a>(
    repo: &Repo,
    remote: &str,
    branch: &str,
    opts: &Options<'_>,
    members: impl Iterator<Item = &'a Member<'m>>,
    e: &crate::error::PushError,
) -> Vec<super::super::owed::Owing> {
    let crate::error::PushError::Unanswered { reason, .. } = e else {
        return Vec::new();
    };
    let tip = repo.head_commit(branch).unwrap_or_default();
    let push = super::git_target(repo, remote, branch, opts, &tip);
    members
        .map(|m| {
            let item = crate::store::outbox::Owed {
                version: crate::store::outbox::VERSION,
                domain: m.store.domain.clone(),
                snapshot: m.snapshot.id.clone(),
                at: now_millis(),
                reason: *reason,
                detail: super::super::owed::detail(e),
                push: crate::store::outbox::Push::Git(push.clone()),
            };
            super::super::owed::owe(m.store, &item, e)
        })
        .collect()
}

fn part<'a>(m: &'a Member<'_>) -> Part<'a> {
    Part {
        path: &m.path,
        folder: &m.folder,
        inventory: &m.inventory,
    }
}

/// Records the commit in each delivered domain's store (the Git channel only), pushed to
/// `remote` when it was.
fn record(
    members: &[&Member<'_>],
    found: &[Found],
    tip: Option<&str>,
    remote: Option<&str>,
    oid: &Option<String>,
) -> Vec<(Domain, Error)> {
    let remote = remote.map(str::to_string);
    let mut failed = Vec::new();
    for (m, f) in members.iter().zip(found) {
        let detail = match f {
            Found::Older { .. } => continue,
            Found::UpToDate => "checked: the branch already holds it".to_string(),
            Found::Changed { .. } => match &remote {
                Some(r) => format!("pushed to {r}"),
                None => "committed with other domains".to_string(),
            },
        };
        let change = StateRecord {
            detail: Some(detail),
            commit: tip.map(str::to_string).or_else(|| oid.clone()),
            pushed: remote.clone(),
            ..StateRecord::new(&m.snapshot.id, &now_millis(), State::Committed)
        };
        if let Err(e) = m.store.set_states(&[change]) {
            failed.push((m.store.domain.clone(), e));
        }
    }
    failed
}

/// One row per selected domain, the members' in the order of `found`.
fn rows(picks: Picks<'_>, found: Vec<Found>, branch: &str) -> Vec<(Domain, Row)> {
    let mut found = found.into_iter();
    picks
        .into_iter()
        .map(|(domain, pick)| {
            let row = match pick {
                Pick::Deploy(cluster_ref) => Row::DeployDomain { cluster_ref },
                Pick::Member(m) => {
                    let found = found.next().unwrap_or(Found::UpToDate);
                    let older = match &found {
                        Found::Older { branch_rendered_at } => Some(older_message(
                            m.store,
                            branch,
                            &m.snapshot,
                            branch_rendered_at,
                        )),
                        _ => None,
                    };
                    Row::Folder {
                        snapshot: m.snapshot.id.clone(),
                        origin: m.origin,
                        path: m.path,
                        found,
                        older,
                    }
                }
            };
            (domain, row)
        })
        .collect()
}

/// The message of a commit of several folders: a subject naming the changed domains and
/// the change when they share it, one body line per changed domain, the paragraphs on
/// changes made outside clinv, and one `Snapshot:` and `Spec-Hash:` trailer per domain
/// (clinv's commits are known by their `Snapshot:` trailer).
fn message(template: Option<&str>, members: &[&Member<'_>], found: &[Found]) -> String {
    let changed: Vec<(&Member<'_>, &str, Option<&str>)> = members
        .iter()
        .zip(found)
        .filter_map(|(m, f)| match f {
            Found::Changed {
                summary, outside, ..
            } => Some((*m, summary.as_str(), outside.as_deref())),
            _ => None,
        })
        .collect();
    let names: Vec<&str> = changed
        .iter()
        .map(|(m, ..)| m.store.domain.as_str())
        .collect();
    let each: Vec<(&str, &[String])> = members
        .iter()
        .zip(found)
        .filter_map(|(m, f)| match f {
            Found::Changed { changes, .. } => Some((m.store.domain.as_str(), &changes[..])),
            _ => None,
        })
        .collect();
    let summary = fleet_summary(&each);
    let who = if names.len() <= 3 {
        names.join(", ")
    } else {
        format!("{} domains", names.len())
    };
    let head = match template {
        Some(t) => t
            .replace("{domain}", &names.join(", "))
            .replace("{summary}", &summary),
        None => format!("inventory({who}): {summary}\n"),
    };
    let mut text = format!("{}\n\n", head.trim_end());
    for (m, s, _) in &changed {
        let snap = &m.snapshot;
        text.push_str(&format!(
            "- {}: {s} (snapshot {}, rendered at {})\n",
            m.store.domain, snap.id, snap.rendered_at
        ));
    }
    for (_, _, outside) in &changed {
        if let Some(paragraph) = outside {
            text.push_str(&format!("\n{paragraph}\n"));
        }
    }
    text.push('\n');
    for (m, ..) in &changed {
        let snap = &m.snapshot;
        text.push_str(&format!(
            "Snapshot: {} ({})\nSpec-Hash: {} ({})\n",
            snap.id, m.store.domain, snap.spec_hash, m.store.domain
        ));
    }
    text
}

/// How long a fleet commit's summary grows before the rest is counted.
const SUMMARY_CHARS: usize = 100;

/// What a commit of several domains changed, for its subject: each change once, those
/// of the most domains first (then in the order met) — bare when every changed domain
/// shares it, with the domain when one has it, else with how many ("cilium 1.16 → 1.17
/// in 10 domains"); past [`SUMMARY_CHARS`], the rest counted.
fn fleet_summary(each: &[(&str, &[String])]) -> String {
    let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
    for (domain, changes) in each {
        for change in *changes {
            match groups.iter_mut().find(|(c, _)| c == change) {
                Some((_, domains)) => domains.push(domain),
                None => groups.push((change, vec![domain])),
            }
        }
    }
    groups.sort_by_key(|(_, domains)| std::cmp::Reverse(domains.len()));
    let items: Vec<String> = groups
        .iter()
        .map(|(change, domains)| match domains.as_slice() {
            _ if domains.len() == each.len() => (*change).to_string(),
            [one] => format!("{change} in {one}"),
            many => format!("{change} in {} domains", many.len()),
        })
        .collect();
    let mut text = String::new();
    for (i, item) in items.iter().enumerate() {
        let sep = if i == 0 { "" } else { ", " };
        let rest = items.len() - i;
        if i > 0 && text.chars().count() + sep.len() + item.chars().count() > SUMMARY_CHARS {
            text.push_str(&format!(", … ({rest} more)"));
            break;
        }
        text.push_str(sep);
        text.push_str(item);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::{check_template, fleet_summary};

    #[test]
    fn a_fleet_summary_names_each_change_once_with_where() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let first = s(&["record inventory"]);
        let all: Vec<(&str, &[String])> = vec![("a", &first), ("b", &first), ("c", &first)];
        assert_eq!(fleet_summary(&all), "record inventory");
        let bump = s(&["cilium 1.16 → 1.17"]);
        let both = s(&["kubernetes v1.30 → v1.31", "cilium 1.16 → 1.17"]);
        let mixed: Vec<(&str, &[String])> =
            vec![("a", &first), ("b", &bump), ("c", &both), ("d", &bump)];
        assert_eq!(
            fleet_summary(&mixed),
            "cilium 1.16 → 1.17 in 3 domains, record inventory in a, kubernetes v1.30 → v1.31 in c"
        );
        let many: Vec<Vec<String>> = (0..12)
            .map(|i| s(&[&format!("add addon-{i} 1.0.0")]))
            .collect();
        let many: Vec<(&str, &[String])> = many.iter().map(|c| ("some.domain", &c[..])).collect();
        let text = fleet_summary(&many);
        assert!(text.chars().count() <= 100 + 12, "{text}");
        assert!(
            text.starts_with("add addon-0 1.0.0 in some.domain, "),
            "{text}"
        );
        assert!(text.ends_with(" more)"), "{text}");
    }

    #[test]
    fn a_fleet_template_takes_only_domain_and_summary() {
        assert!(check_template(None).is_ok());
        assert!(check_template(Some("chore: {summary} in {domain}")).is_ok());
        assert!(check_template(Some("literal {} braces")).is_ok());
        let e = check_template(Some("x {snapshot}")).unwrap_err();
        assert!(e.to_string().contains("{snapshot}"), "{e}");
    }
}
