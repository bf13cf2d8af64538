//! The audit trail of one domain: what changed at each recorded step, and when each version
//! of Kubernetes and of every addon arrived and left.
//!
//! Pure: the caller (the snapshot store behind `clinv log` / `clinv report`) reads the
//! history and passes it in as [`Step`]s, oldest first.
//!
//! Every step is compared with the step before it ([`crate::history::diff`]); the first one with
//! nothing ([`crate::history::diff::initial`]), so it lists what the domain started with. Which
//! steps count (only `applied` ones, or all) is the caller's choice: pass those steps.

use crate::history::diff::{self, Change, Ignore, Op, SCHEMA_VERSION, Summary};
use crate::history::version::{self, Order};
use crate::inventory::{ClusterInventory, DOMAIN_LABEL};
use serde::Serialize;
use std::collections::HashMap;

/// The `kind` of a serialised [`Trail`].
pub const TRAIL_KIND: &str = "InventoryAuditTrail";

/// The key of the Kubernetes lane in a [`Timeline`].
pub const KUBERNETES_LANE: &str = "kubernetes";

/// One recorded inventory of the history.
#[derive(Debug, Clone, Copy)]
pub struct Step<'a> {
    /// The store's id of the record.
    pub id: &'a str,
    /// When it was recorded, RFC 3339 (`2026-03-02T10:00:00Z`).
    pub at: &'a str,
    /// `applied`, `pending`, `committed` or `superseded` (carried through as text).
    pub outcome: &'a str,
    pub inventory: &'a ClusterInventory,
    /// Its number in the domain's history, from 1 (`helm history`'s REVISION): the
    /// snapshot's position in the store's order, or the commit's along `--repo`'s
    /// history. `None`: its position among the steps given to [`trail`].
    pub revision: Option<u64>,
    /// Who recorded it, where known: a Git commit's author (`name <email>`).
    pub author: Option<&'a str>,
    /// The host that recorded it, where the snapshot record carries one.
    pub host: Option<&'a str>,
}

/// The trail: entries newest first (like `git log`) and the version timeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Trail {
    /// Always [`SCHEMA_VERSION`] (shared with the diff report).
    pub schema_version: u32,
    /// Always [`TRAIL_KIND`].
    pub kind: &'static str,
    /// The domain label of the newest step.
    pub domain: Option<String>,
    /// One per step, newest first.
    pub entries: Vec<Entry>,
    pub timeline: Timeline,
}

/// One step and its changes against the step before it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    pub id: String,
    pub at: String,
    pub outcome: String,
    /// Its number in the domain's history, from 1 ([`Step::revision`]).
    pub revision: u64,
    /// A Git commit's author (`name <email>`), with `--repo`.
    pub author: Option<String>,
    /// The host that recorded the snapshot, where the record carries one.
    pub host: Option<String>,
    /// The oldest step: `changes` list everything it holds, as added or set.
    pub initial: bool,
    /// `spec.kubernetesVersion` at this step.
    pub kubernetes_version: Option<String>,
    pub has_changes: bool,
    pub summary: Summary,
    pub changes: Vec<Change>,
    pub ignored: Vec<Change>,
}

/// Version history per lane, for charts: the Kubernetes lane first, then one lane per addon
/// (in the newest inventory's order, then addons that are gone, in order of first
/// appearance).
///
/// A repeated addon name gets a lane per occurrence (`x`, `x#2`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Timeline {
    /// `at` of the oldest and the newest step.
    pub start: Option<String>,
    pub end: Option<String>,
    pub lanes: Vec<Lane>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LaneKind {
    Kubernetes,
    Addon,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Lane {
    /// `kubernetes`, or the addon name with `#N` for its N-th occurrence (N ≥ 2).
    pub key: String,
    pub kind: LaneKind,
    pub addon: Option<String>,
    pub occurrence: Option<usize>,
    /// The category at the lane's last appearance.
    pub category: Option<String>,
    /// Present in the newest step.
    pub current: bool,
    pub spans: Vec<Span>,
}

/// A stretch of steps with one version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Span {
    /// `null`: present without a version (a target, or a chart without a pin).
    pub version: Option<String>,
    /// How it arrived: `added` (after absence or at the start), `upgraded`,
    /// `downgraded` or `changed` (versions that cannot be ordered).
    pub arrival: Op,
    /// The step where this version arrived.
    pub since_id: String,
    pub since: String,
    /// The step where it left (replaced or removed); `null` while current.
    pub until_id: Option<String>,
    pub until: Option<String>,
}

/// A time bound from a command line or a record: RFC 3339, or a bare `YYYY-MM-DD` (its
/// start, or with `end_of_day` its last second, UTC).
pub fn parse_bound(text: &str, end_of_day: bool) -> Option<jiff::Timestamp> {
    use crate::util::time;
    if let Some(t) = time::parse_rfc3339(text) {
        return Some(t);
    }
    let day = time::parse_date(text)?;
    let at = if end_of_day {
        day.at(23, 59, 59, 0)
    } else {
        day.at(0, 0, 0, 0)
    };
    jiff::tz::Offset::UTC.to_timestamp(at).ok()
}

/// A `--since`/`--until` bound, absolute or relative to `now`.
///
/// A `--since`/`--until` bound: as [`parse_bound`], or relative to `now`: `today` and
/// `yesterday` (their start, or with `end_of_day` their last second, UTC), or a time
/// ago — a number and a unit, `s`, `m`, `h`, `d` or `w` (`90m`, `2d`, `1w`), or git's
/// `2 hours ago`.
pub fn parse_query_bound(
    text: &str,
    end_of_day: bool,
    now: jiff::Timestamp,
) -> Option<jiff::Timestamp> {
    if let Some(t) = parse_bound(text, end_of_day) {
        return Some(t);
    }
    let today = now.to_zoned(jiff::tz::TimeZone::UTC).date();
    let day = match text {
        "today" => Some(today),
        "yesterday" => today.yesterday().ok(),
        _ => None,
    };
    if let Some(day) = day {
        return parse_bound(&day.to_string(), end_of_day);
    }
    let (n, secs) = time_ago(text)?;
    now.checked_sub(jiff::SignedDuration::from_secs(n.checked_mul(secs)?))
        .ok()
}

/// A time ago: `90m`, `2d`, `1w`, or git's spelling, `2 hours ago`, `2.hours.ago`,
/// `3 days` (seconds, minutes, hours, days, weeks; singular or plural). Months and years
/// have no fixed length and are refused. Returns the count and the unit's seconds.
fn time_ago(text: &str) -> Option<(i64, i64)> {
    let spelled = text.replace(['.', '_'], " ");
    let spelled = spelled.trim();
    let spelled = spelled.strip_suffix(" ago").unwrap_or(spelled).trim_end();
    let unit_at = spelled.find(|c: char| !c.is_ascii_digit())?;
    let (n, unit) = spelled.split_at(unit_at);
    let n: i64 = n.parse().ok()?;
    let secs = match unit.trim_start() {
        "s" | "sec" | "secs" | "second" | "seconds" => 1,
        "m" | "min" | "mins" | "minute" | "minutes" => 60,
        "h" | "hour" | "hours" => 3600,
        "d" | "day" | "days" => 86_400,
        "w" | "week" | "weeks" => 7 * 86_400,
        _ => return None,
    };
    Some((n, secs))
}

/// Builds the trail of `steps` (oldest first). `ignore` applies to every step's changes.
pub fn trail(steps: &[Step], ignore: &Ignore) -> Trail {
    let mut entries: Vec<Entry> = steps
        .iter()
        .enumerate()
        .map(|(i, step)| {
            let report = match i.checked_sub(1).map(|p| &steps[p]) {
                Some(prev) => diff::diff_with(prev.inventory, step.inventory, ignore),
                None => diff::initial(step.inventory, ignore),
            };
            let mut e = entry(step, i == 0, report);
            e.revision = step.revision.unwrap_or(i as u64 + 1);
            e
        })
        .collect();
    entries.reverse();
    Trail {
        schema_version: SCHEMA_VERSION,
        kind: TRAIL_KIND,
        domain: steps
            .last()
            .and_then(|s| s.inventory.metadata.labels.get(DOMAIN_LABEL).cloned()),
        entries,
        timeline: timeline(steps),
    }
}

/// The entry of `step` with `report`, its comparison with the step before it (or, for the
/// `initial` oldest step, [`diff::initial`]).
///
/// Its revision is [`Step::revision`] (0 when that is `None`: [`trail`] numbers by
/// position).
pub fn entry(step: &Step, initial: bool, report: diff::Report) -> Entry {
    Entry {
        id: step.id.to_string(),
        at: step.at.to_string(),
        outcome: step.outcome.to_string(),
        revision: step.revision.unwrap_or(0),
        author: step.author.map(str::to_string),
        host: step.host.map(str::to_string),
        initial,
        kubernetes_version: step.inventory.spec.kubernetes_version.clone(),
        has_changes: report.has_changes,
        summary: report.summary,
        changes: report.changes,
        ignored: report.ignored,
    }
}

impl Trail {
    /// The lane named `key` (`kubernetes`, `cilium`, `cilium#2`).
    pub fn lane(&self, key: &str) -> Option<&Lane> {
        self.timeline.lanes.iter().find(|l| l.key == key)
    }
}

/// When each version of the addon `name` (its first occurrence) arrived and left.
pub fn addon_timeline(steps: &[Step], name: &str) -> Vec<Span> {
    let mut spans = AddonSpans::new(name);
    for step in steps {
        spans.push(step);
    }
    spans.finish()
}

/// [`addon_timeline`] built a step at a time (oldest first), so a history too long to
/// hold as steps needs only the spans.
#[derive(Debug)]
pub struct AddonSpans<'n> {
    name: &'n str,
    runs: Runs,
    steps: usize,
}

impl<'n> AddonSpans<'n> {
    pub fn new(name: &'n str) -> AddonSpans<'n> {
        AddonSpans {
            name,
            runs: Runs::default(),
            steps: 0,
        }
    }

    /// The next step.
    pub fn push(&mut self, step: &Step) {
        let addons = &step.inventory.spec.addons;
        let now = addons.iter().find(|a| a.name == self.name);
        self.runs
            .push(self.steps, step, now.map(|a| a.chart_version.clone()));
        self.steps += 1;
    }

    pub fn finish(self) -> Vec<Span> {
        self.runs.out
    }
}

/// When each Kubernetes version arrived and left.
pub fn kubernetes_timeline(steps: &[Step]) -> Vec<Span> {
    spans(steps, |s| {
        s.inventory.spec.kubernetes_version.clone().map(Some)
    })
}

/// Runs of equal values; `value` is `None` when the subject is absent at a step and
/// `Some(None)` when it is present without a version.
fn spans(steps: &[Step], value: impl Fn(&Step) -> Option<Option<String>>) -> Vec<Span> {
    let mut runs = Runs::default();
    for (i, step) in steps.iter().enumerate() {
        runs.push(i, step, value(step));
    }
    runs.out
}

/// The spans of one lane as the steps go by (see [`spans`]).
#[derive(Debug, Default)]
struct Runs {
    out: Vec<Span>,
    /// Whether the last span is still open.
    open: bool,
    /// The step index where the last one closed.
    closed_at: Option<usize>,
}

impl Runs {
    /// Step `i` (counted from 0, oldest first) with the subject's value `now`.
    fn push(&mut self, i: usize, step: &Step, now: Option<Option<String>>) {
        if let Some(last) = self.out.last_mut().filter(|_| self.open) {
            if now.as_ref() == Some(&last.version) {
                return;
            }
            last.until_id = Some(step.id.to_string());
            last.until = Some(step.at.to_string());
            self.open = false;
            self.closed_at = Some(i);
        }
        let Some(version) = now else { return };
        let previous = self.out.last().filter(|_| self.closed_at == Some(i));
        let arrival = match (previous.map(|p| p.version.as_deref()), version.as_deref()) {
            // Replaces the version before it at this very step.
            (Some(Some(p)), Some(v)) => match version::compare(p, v) {
                Order::Upgrade => Op::Upgraded,
                Order::Downgrade => Op::Downgraded,
                Order::Equal | Order::Unordered => Op::Changed,
            },
            (Some(_), _) => Op::Changed,
            (None, _) => Op::Added,
        };
        self.out.push(Span {
            version,
            arrival,
            since_id: step.id.to_string(),
            since: step.at.to_string(),
            until_id: None,
            until: None,
        });
        self.open = true;
    }
}

/// One addon lane while its [`Timeline`] is built.
#[derive(Debug)]
struct AddonLane {
    name: String,
    occurrence: usize,
    category: Option<String>,
    runs: Runs,
}

/// Builds the [`Timeline`] of steps handed to it one at a time, oldest first.
///
/// The [`Timeline`] of steps handed to it one at a time, oldest first: what [`trail`]
/// gives, in the memory of the lanes and their spans, never of the steps — so a store's
/// history of a million records gets its timeline as it is read.
#[derive(Debug, Default)]
pub struct TimelineBuilder {
    steps: usize,
    start: Option<String>,
    end: Option<String>,
    kubernetes: Runs,
    kubernetes_current: bool,
    /// Addon lanes in order of first appearance, and where each `(name, occurrence)` is.
    lanes: Vec<AddonLane>,
    index: HashMap<(String, usize), usize>,
    /// The lanes of the newest step, in its order.
    newest: Vec<usize>,
}

impl TimelineBuilder {
    /// The next step (oldest first).
    pub fn push(&mut self, step: &Step) {
        let i = self.steps;
        self.steps += 1;
        if self.start.is_none() {
            self.start = Some(step.at.to_string());
        }
        self.end = Some(step.at.to_string());
        let k8s = &step.inventory.spec.kubernetes_version;
        self.kubernetes.push(i, step, k8s.clone().map(Some));
        self.kubernetes_current = k8s.is_some();
        // The N-th addon of a name is lane (name, N).
        let mut seen: HashMap<&str, usize> = HashMap::new();
        let mut present = vec![None; self.lanes.len()];
        self.newest.clear();
        for addon in &step.inventory.spec.addons {
            let k = seen.entry(addon.name.as_str()).or_insert(0);
            *k += 1;
            let key = (addon.name.clone(), *k);
            let lane = match self.index.get(&key) {
                Some(&lane) => lane,
                None => {
                    self.lanes.push(AddonLane {
                        name: addon.name.clone(),
                        occurrence: *k,
                        category: None,
                        runs: Runs::default(),
                    });
                    present.push(None);
                    self.index.insert(key, self.lanes.len() - 1);
                    self.lanes.len() - 1
                }
            };
            present[lane] = Some(addon);
            self.newest.push(lane);
        }
        for (lane, addon) in self.lanes.iter_mut().zip(present) {
            if let Some(a) = addon {
                // The category at the lane's last appearance.
                lane.category = a.category.clone();
            }
            lane.runs
                .push(i, step, addon.map(|a| a.chart_version.clone()));
        }
    }

    /// The timeline: the Kubernetes lane, then the newest step's lanes in its order, then
    /// the gone ones in order of first appearance.
    pub fn finish(self) -> Timeline {
        let mut lanes = Vec::new();
        if !self.kubernetes.out.is_empty() {
            lanes.push(Lane {
                key: KUBERNETES_LANE.into(),
                kind: LaneKind::Kubernetes,
                addon: None,
                occurrence: None,
                category: None,
                current: self.kubernetes_current,
                spans: self.kubernetes.out,
            });
        }
        let gone = (0..self.lanes.len()).filter(|i| !self.newest.contains(i));
        let order: Vec<usize> = self.newest.iter().copied().chain(gone).collect();
        let current = self.newest.len();
        let mut slots: Vec<Option<AddonLane>> = self.lanes.into_iter().map(Some).collect();
        for (n, i) in order.into_iter().enumerate() {
            let Some(lane) = slots[i].take() else {
                continue;
            };
            let k = lane.occurrence;
            lanes.push(Lane {
                key: if k > 1 {
                    format!("{}#{k}", lane.name)
                } else {
                    lane.name.clone()
                },
                kind: LaneKind::Addon,
                addon: Some(lane.name),
                occurrence: Some(k),
                category: lane.category,
                current: n < current,
                spans: lane.runs.out,
            });
        }
        Timeline {
            start: self.start,
            end: self.end,
            lanes,
        }
    }
}

fn timeline(steps: &[Step]) -> Timeline {
    let mut builder = TimelineBuilder::default();
    for step in steps {
        builder.push(step);
    }
    builder.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_bounds() {
        let now: jiff::Timestamp = "2026-12-03T06:00:00Z".parse().unwrap();
        let at = |t: &str, end: bool| parse_query_bound(t, end, now).map(|t| t.to_string());
        assert_eq!(at("2d", false).as_deref(), Some("2026-12-01T06:00:00Z"));
        assert_eq!(at("90m", false).as_deref(), Some("2026-12-03T04:30:00Z"));
        assert_eq!(at("1w", false).as_deref(), Some("2026-11-26T06:00:00Z"));
        assert_eq!(
            at("yesterday", false).as_deref(),
            Some("2026-12-02T00:00:00Z")
        );
        assert_eq!(
            at("yesterday", true).as_deref(),
            Some("2026-12-02T23:59:59Z")
        );
        assert_eq!(at("today", false).as_deref(), Some("2026-12-03T00:00:00Z"));
        assert_eq!(
            at("2026-01-02", false).as_deref(),
            Some("2026-01-02T00:00:00Z")
        );
        // git's spelling.
        for (text, want) in [
            ("2 hours ago", "2026-12-03T04:00:00Z"),
            ("2.hours.ago", "2026-12-03T04:00:00Z"),
            ("1 day ago", "2026-12-02T06:00:00Z"),
            ("3 weeks", "2026-11-12T06:00:00Z"),
            ("30 minutes ago", "2026-12-03T05:30:00Z"),
        ] {
            assert_eq!(at(text, false).as_deref(), Some(want), "{text}");
        }
        for bad in [
            "2x",
            "d",
            "",
            "-1d",
            "99999999999999999999d",
            "tomorrow",
            "2 months ago",
            "ago",
            "2 hours hence",
        ] {
            assert_eq!(at(bad, false), None, "{bad}");
        }
    }
    use crate::inventory::{Addon, InventorySpec, Metadata};
    use std::collections::BTreeMap;

    fn inv(k8s: &str, addons: &[(&str, Option<&str>)]) -> ClusterInventory {
        ClusterInventory {
            api_version: "lok8s.dev/v1alpha1".into(),
            kind: "ClusterInventory".into(),
            metadata: Metadata {
                name: "cluster".into(),
                labels: BTreeMap::from([(DOMAIN_LABEL.into(), "d.example".into())]),
            },
            spec: InventorySpec {
                lok8s_version: "0.7.9".into(),
                kind: "kubeone".into(),
                spec_hash: "h".into(),
                rendered_at: "2026-01-01T00:00:00Z".into(),
                addons: addons
                    .iter()
                    .map(|(n, v)| Addon {
                        name: n.to_string(),
                        source: None,
                        chart_version: v.map(Into::into),
                        category: Some("c".into()),
                        app_version: None,
                    })
                    .collect(),
                provider: None,
                kubernetes_version: Some(k8s.into()),
            },
        }
    }

    fn steps(invs: &[ClusterInventory]) -> Vec<Step<'_>> {
        const IDS: [&str; 6] = ["1", "2", "3", "4", "5", "6"];
        const AT: [&str; 6] = [
            "2026-01-01T00:00:00Z",
            "2026-01-02T00:00:00Z",
            "2026-01-03T00:00:00Z",
            "2026-01-04T00:00:00Z",
            "2026-01-05T00:00:00Z",
            "2026-01-06T00:00:00Z",
        ];
        invs.iter()
            .enumerate()
            .map(|(i, inventory)| Step {
                id: IDS[i],
                at: AT[i],
                outcome: "applied",
                inventory,
                revision: None,
                author: None,
                host: None,
            })
            .collect()
    }

    /// `(version, arrival, since_id, until_id)` per span.
    fn shape(spans: &[Span]) -> Vec<(String, &'static str, String, String)> {
        spans
            .iter()
            .map(|s| {
                (
                    s.version.clone().unwrap_or("-".into()),
                    s.arrival.as_str(),
                    s.since_id.clone(),
                    s.until_id.clone().unwrap_or("now".into()),
                )
            })
            .collect()
    }

    fn row(v: &str, a: &'static str, s: &str, u: &str) -> (String, &'static str, String, String) {
        (v.into(), a, s.into(), u.into())
    }

    #[test]
    fn each_step_is_compared_with_the_one_before() {
        let invs = [
            inv("v1.30.0", &[("a", Some("1.0.0"))]),
            inv("v1.31.0", &[("a", Some("1.0.0"))]),
            inv("v1.31.0", &[("a", Some("1.0.0"))]),
            inv("v1.31.0", &[("a", Some("0.9.0")), ("b", None)]),
        ];
        let t = trail(&steps(&invs), &Ignore::default());
        let ids: Vec<&str> = t.entries.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(ids, ["4", "3", "2", "1"], "newest first");
        let paths = |i: usize| -> Vec<(&str, &str)> {
            t.entries[i]
                .changes
                .iter()
                .map(|c| (c.path.as_str(), c.change.as_str()))
                .collect()
        };
        assert_eq!(
            paths(0),
            [
                ("spec.addons[a].chartVersion", "downgraded"),
                ("spec.addons[b]", "added")
            ]
        );
        assert!(!t.entries[1].has_changes && paths(1).is_empty());
        assert_eq!(paths(2), [("spec.kubernetesVersion", "upgraded")]);
        assert!(t.entries[3].initial && !t.entries[2].initial);
        assert!(paths(3).contains(&("spec.addons[a]", "added")));
        assert_eq!(t.domain.as_deref(), Some("d.example"));
    }

    #[test]
    fn ignore_applies_to_every_step() {
        let invs = [
            inv("v1.30.0", &[("a", Some("1.0.0"))]),
            inv("v1.31.0", &[("a", Some("1.0.0"))]),
        ];
        let ignore = Ignore::parse(&["spec.kubernetesVersion".into()]).unwrap();
        let t = trail(&steps(&invs), &ignore);
        assert!(!t.entries[0].has_changes);
        assert_eq!(t.entries[0].ignored.len(), 1);
    }

    #[test]
    fn addon_timeline_records_arrivals_and_departures() {
        let invs = [
            inv("v1.30.0", &[("a", Some("1.0.0"))]),
            inv("v1.30.0", &[("a", Some("1.1.0"))]),
            inv("v1.30.0", &[]),
            inv("v1.30.0", &[("a", Some("1.0.5"))]),
            inv("v1.30.0", &[("a", Some("main"))]),
            inv("v1.30.0", &[("a", Some("1.0.0"))]),
        ];
        let s = steps(&invs);
        assert_eq!(
            shape(&addon_timeline(&s, "a")),
            [
                row("1.0.0", "added", "1", "2"),
                row("1.1.0", "upgraded", "2", "3"),
                row("1.0.5", "added", "4", "5"),
                row("main", "changed", "5", "6"),
                row("1.0.0", "changed", "6", "now"),
            ]
        );
        assert!(addon_timeline(&s, "nope").is_empty());
        assert_eq!(
            shape(&kubernetes_timeline(&s)),
            [row("v1.30.0", "added", "1", "now")]
        );
    }

    #[test]
    fn lanes_follow_the_newest_inventory_then_gone_addons() {
        let invs = [
            inv(
                "v1.30.0",
                &[("old", Some("1.0.0")), ("x", None), ("x", Some("2.0.0"))],
            ),
            inv(
                "v1.31.0",
                &[("x", None), ("new", Some("1.0.0")), ("x", Some("2.1.0"))],
            ),
        ];
        let t = trail(&steps(&invs), &Ignore::default());
        let keys: Vec<(&str, bool)> = t
            .timeline
            .lanes
            .iter()
            .map(|l| (l.key.as_str(), l.current))
            .collect();
        assert_eq!(
            keys,
            [
                ("kubernetes", true),
                ("x", true),
                ("new", true),
                ("x#2", true),
                ("old", false)
            ]
        );
        assert_eq!(
            shape(&t.lane("x#2").unwrap().spans),
            [
                row("2.0.0", "added", "1", "2"),
                row("2.1.0", "upgraded", "2", "now")
            ]
        );
        assert_eq!(
            shape(&t.lane("x").unwrap().spans),
            [row("-", "added", "1", "now")]
        );
        assert_eq!(t.timeline.start.as_deref(), Some("2026-01-01T00:00:00Z"));
        assert_eq!(t.timeline.end.as_deref(), Some("2026-01-02T00:00:00Z"));
    }

    #[test]
    fn an_empty_history_is_an_empty_trail() {
        let t = trail(&[], &Ignore::default());
        assert!(t.entries.is_empty() && t.timeline.lanes.is_empty() && t.domain.is_none());
    }
}
