//! What a fleet owes, as Prometheus metrics: `status -o prometheus` (node_exporter's
//! textfile collector) and the delivery loop's `/metrics`.
//!
//! A plain data model ([`Facts`]: a [`Row`] per domain and channel, the loop's counters,
//! whether each domain's store could be read) and its encoding in Prometheus' text
//! exposition format (version 0.0.4) by the Prometheus project's own client crate, so the
//! escaping, `# HELP`/`# TYPE` lines and the counters' `_total` suffix are not
//! hand-written. The text format, not OpenMetrics: node_exporter's textfile collector
//! reads only it, and every Prometheus scrapes it ([`CONTENT_TYPE`]).
//!
//! | metric | type | labels | value |
//! | --- | --- | --- | --- |
//! | `clinv_owed` | gauge | domain, channel | snapshots (cluster) or pushes (git, oci) owed |
//! | `clinv_owed_oldest_timestamp_seconds` | gauge | domain, channel | when the oldest owed item was recorded |
//! | `clinv_last_delivery_timestamp_seconds` | gauge | domain, channel | when the channel last delivered |
//! | `clinv_next_attempt_timestamp_seconds` | gauge | domain, channel | when the loop tries next |
//! | `clinv_deliveries_total` | counter | domain, channel | deliveries since the loop started |
//! | `clinv_delivery_failures_total` | counter | domain, channel, reason | failed attempts, by [`Reason`] |
//! | `clinv_delivery_errors_total` | counter | domain, channel | attempts that ended in an error of clinv's own (the store, a damaged snapshot, the target) |
//! | `clinv_store_readable` | gauge | domain | 1 when the domain's store was read, else 0 |
//!
//! Timestamps are seconds since the epoch (Prometheus' convention: an age is
//! `time() - metric`). A value that is not known — nothing owed has no oldest item, a
//! channel that never delivered has no last delivery — is no series at all, never a 0
//! that would read as 1970. A domain whose store could not be read has no rows, and
//! `clinv_store_readable` 0 says so: never a silently missing domain.

use crate::delivery::Reason;
use crate::error::{Error, Result};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Registry;
use std::collections::BTreeMap;

/// The `Content-Type` of [`encode`]'s text (Prometheus text format 0.0.4).
pub const CONTENT_TYPE: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;

/// A delivery channel: the label value `channel`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Channel {
    /// Snapshots queued for the domain's cluster (`clinv replay`).
    Cluster,
    /// Commits owed to a GitOps remote (`commit --push`).
    Git,
    /// Artifacts owed to an OCI registry (`push oci://…`).
    Oci,
}

impl Channel {
    /// Every channel, in label order.
    pub const ALL: [Channel; 3] = [Channel::Cluster, Channel::Git, Channel::Oci];

    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            Channel::Cluster => "cluster",
            Channel::Git => "git",
            Channel::Oci => "oci",
        }
    }
}

/// What one domain owes on one channel. Times are milliseconds since the epoch; `None`
/// is unknown (no series is written).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub domain: String,
    pub channel: Channel,
    /// Snapshots (cluster) or pushes (git, oci) owed.
    pub owed: u64,
    /// When the oldest owed item was recorded.
    pub oldest_owed_ms: Option<i64>,
    /// When the channel last delivered (the newest applied, committed or pushed change).
    pub last_delivered_ms: Option<i64>,
    /// When the loop will try next (only the loop knows).
    pub next_attempt_ms: Option<i64>,
}

impl Row {
    /// Nothing owed and nothing known of `domain` on `channel`.
    pub fn new(domain: impl Into<String>, channel: Channel) -> Row {
        Row {
            domain: domain.into(),
            channel,
            owed: 0,
            oldest_owed_ms: None,
            last_delivered_ms: None,
            next_attempt_ms: None,
        }
    }
}

/// Everything one exposition says; encoded in key order, so equal facts are equal text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Facts {
    /// A row per domain and channel (encoded sorted by domain, then channel).
    pub rows: Vec<Row>,
    /// Deliveries since the loop started, per domain and channel.
    pub deliveries: BTreeMap<(String, Channel), u64>,
    /// Failed delivery attempts since the loop started, per domain, channel and reason.
    pub failures: BTreeMap<(String, Channel, Reason), u64>,
    /// Attempts since the loop started that ended in an error of clinv's own (the store
    /// could not be read or written — a full disk —, a damaged snapshot, a recorded
    /// target it cannot use), per domain and channel.
    pub errors: BTreeMap<(String, Channel), u64>,
    /// Per domain: whether its store could be read (`false`: it has no rows).
    pub readable: BTreeMap<String, bool>,
}

/// The Prometheus text exposition of `facts`.
///
/// # Errors
/// The client crate's encoder failed (it writes to a `String`: never in practice).
pub fn encode(facts: &Facts) -> Result<String> {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(Exposition(facts.clone())));
    let mut text = String::new();
    prometheus_client::encoding::prometheus_text::encode(&mut text, &registry)
        .map_err(Error::Exposition)?;
    Ok(text)
}

/// A domain's rows from its store's delivery facts.
///
/// The cluster channel's pending snapshots, the Git and OCI channels' owed pushes (the
/// push queue's, [`crate::store::outbox`]), and each channel's last delivery (the newest
/// applied, committed, pushed change).
pub fn rows_of(domain: &str, delivery: &crate::ops::status::Delivery) -> [Row; 3] {
    let mut rows = landed_rows(domain, delivery);
    for push in owed_pushes(&delivery.owed) {
        if let Some(row) = rows.iter_mut().find(|r| r.channel == push.channel) {
            add_to(row, &push);
        }
    }
    rows
}

/// The owed pushes of the push queue, per domain and channel.
pub fn owed_pushes(owed: &[crate::store::outbox::Owed]) -> Vec<OwedPushes> {
    let ms = |at: &str| crate::util::time::parse_rfc3339(at).map(|t| t.as_millisecond());
    owed.iter()
        .map(|o| OwedPushes {
            domain: o.domain.to_string(),
            channel: match o.push {
                crate::store::outbox::Push::Git(_) => Channel::Git,
                crate::store::outbox::Push::Oci(_) => Channel::Oci,
            },
            owed: 1,
            oldest_ms: ms(&o.at),
        })
        .collect()
}

fn landed_rows(domain: &str, delivery: &crate::ops::status::Delivery) -> [Row; 3] {
    let ms = |at: &str| crate::util::time::parse_rfc3339(at).map(|t| t.as_millisecond());
    let cluster = Row {
        owed: delivery.pending as u64,
        oldest_owed_ms: delivery.oldest_pending_at.as_deref().and_then(ms),
        last_delivered_ms: delivery.last_applied.as_ref().and_then(|(at, _)| ms(at)),
        ..Row::new(domain, Channel::Cluster)
    };
    let landed = |channel, last: &Option<crate::ops::status::Landed>| Row {
        last_delivered_ms: last.as_ref().and_then(|l| ms(&l.at)),
        ..Row::new(domain, channel)
    };
    [
        cluster,
        landed(Channel::Git, &delivery.last_committed),
        landed(Channel::Oci, &delivery.last_pushed),
    ]
}

/// What the Git or OCI channel owes one domain for one target: how many pushes, and
/// when the oldest was recorded (milliseconds since the epoch).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwedPushes {
    pub domain: String,
    pub channel: Channel,
    pub owed: u64,
    pub oldest_ms: Option<i64>,
}

/// Adds the pushes owed (the push queue's, per target) to the domain's row of their
/// channel: the counts summed, the oldest kept; a row is added when there is none.
pub fn add_owed_pushes(facts: &mut Facts, owed: &[OwedPushes]) {
    for push in owed {
        let at = facts
            .rows
            .iter()
            .position(|r| r.domain == push.domain && r.channel == push.channel);
        let i = at.unwrap_or_else(|| {
            facts.rows.push(Row::new(push.domain.clone(), push.channel));
            facts.rows.len() - 1
        });
        add_to(&mut facts.rows[i], push);
    }
}

/// Adds `push` to its domain's row of its channel: the count summed, the oldest kept.
fn add_to(row: &mut Row, push: &OwedPushes) {
    row.owed += push.owed;
    row.oldest_owed_ms = earliest(row.oldest_owed_ms, push.oldest_ms);
}

/// The earlier of two times, either of which may be unknown.
fn earliest(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The facts of one scrape, as the client crate's collector: read on each encode.
#[derive(Debug)]
struct Exposition(Facts);

/// A metric's name (without a counter's `_total`, which the client adds) and help.
type Descriptor = (&'static str, &'static str);

const OWED: Descriptor = (
    "clinv_owed",
    "Snapshots (channel cluster) or pushes (git, oci) owed and not yet delivered.",
);
const OLDEST: Descriptor = (
    "clinv_owed_oldest_timestamp_seconds",
    "When the oldest owed item was recorded (seconds since the epoch).",
);
const LAST: Descriptor = (
    "clinv_last_delivery_timestamp_seconds",
    "When the channel last delivered (seconds since the epoch).",
);
const NEXT: Descriptor = (
    "clinv_next_attempt_timestamp_seconds",
    "When the delivery loop tries next (seconds since the epoch).",
);
const DELIVERIES: Descriptor = (
    "clinv_deliveries",
    "Deliveries since the delivery loop started.",
);
const FAILURES: Descriptor = (
    "clinv_delivery_failures",
    "Failed delivery attempts since the delivery loop started, by reason.",
);
const ERRORS: Descriptor = (
    "clinv_delivery_errors",
    "Delivery attempts since the delivery loop started that ended in an error of clinv's own: the store could not be read or written (a full disk), a damaged snapshot, a recorded target it cannot use.",
);
const READABLE: Descriptor = (
    "clinv_store_readable",
    "Whether the domain's snapshot store could be read (1) or not (0: no other series of it).",
);

impl Collector for Exposition {
    fn encode(&self, mut encoder: DescriptorEncoder) -> std::fmt::Result {
        let facts = &self.0;
        let mut rows: Vec<&Row> = facts.rows.iter().collect();
        rows.sort_by(|a, b| (&a.domain, a.channel).cmp(&(&b.domain, b.channel)));
        let labels = |r: &Row| {
            [
                ("domain", r.domain.clone()),
                ("channel", r.channel.as_str().into()),
            ]
        };
        let gauge = MetricType::Gauge;
        let owed = rows.iter().map(|r| (labels(r), ConstGauge::new(r.owed)));
        family(&mut encoder, OWED, gauge, owed)?;
        let times: [(Descriptor, TimeOf); 3] = [
            (OLDEST, |r| r.oldest_owed_ms),
            (LAST, |r| r.last_delivered_ms),
            (NEXT, |r| r.next_attempt_ms),
        ];
        for (descriptor, field) in times {
            let known = rows
                .iter()
                .filter_map(|r| field(r).map(|ms| (labels(r), ConstGauge::new(seconds(ms)))));
            family(&mut encoder, descriptor, gauge, known)?;
        }
        let counter = MetricType::Counter;
        let deliveries = facts.deliveries.iter().map(|((domain, channel), n)| {
            let labels = [("domain", domain.as_str()), ("channel", channel.as_str())];
            (labels, ConstCounter::new(*n))
        });
        family(&mut encoder, DELIVERIES, counter, deliveries)?;
        let failures = facts.failures.iter().map(|((domain, channel, reason), n)| {
            let labels = [
                ("domain", domain.as_str()),
                ("channel", channel.as_str()),
                ("reason", reason.as_str()),
            ];
            (labels, ConstCounter::new(*n))
        });
        family(&mut encoder, FAILURES, counter, failures)?;
        let errors = facts.errors.iter().map(|((domain, channel), n)| {
            let labels = [("domain", domain.as_str()), ("channel", channel.as_str())];
            (labels, ConstCounter::new(*n))
        });
        family(&mut encoder, ERRORS, counter, errors)?;
        let readable = facts.readable.iter().map(|(domain, ok)| {
            (
                [("domain", domain.as_str())],
                ConstGauge::new(i64::from(*ok)),
            )
        });
        family(&mut encoder, READABLE, gauge, readable)
    }
}

/// A row's time field (milliseconds since the epoch, `None` unknown).
type TimeOf = fn(&Row) -> Option<i64>;

/// One metric family: its `# HELP` and `# TYPE` lines (also when it has no sample), then
/// a line per sample.
fn family<L: EncodeLabelSet, M: EncodeMetric>(
    encoder: &mut DescriptorEncoder,
    (name, help): Descriptor,
    kind: MetricType,
    samples: impl Iterator<Item = (L, M)>,
) -> std::fmt::Result {
    let mut metric = encoder.encode_descriptor(name, help, None, kind)?;
    for (labels, value) in samples {
        value.encode(metric.encode_family(&labels)?)?;
    }
    Ok(())
}

/// Milliseconds since the epoch as Prometheus' seconds.
fn seconds(ms: i64) -> f64 {
    // Exact to the millisecond for any time before the year 287,000.
    ms as f64 / 1000.0
}

/// The delivery loop's facts at a tick.
///
/// Each domain's cluster slot, and its owed pushes summed per channel (counts, the oldest, the next attempt; deliveries and failures
/// since the loop started). Instants become wall-clock milliseconds through `now`.
pub fn of_loop(view: &crate::ops::watch::View<'_>, now: std::time::Instant, now_ms: i64) -> Facts {
    let wall = |at: std::time::Instant| {
        let ahead = at.saturating_duration_since(now).as_millis();
        now_ms.saturating_add(i64::try_from(ahead).unwrap_or(i64::MAX))
    };
    let mut facts = Facts::default();
    for (domain, slot) in view.clusters.slots() {
        let name = domain.to_string();
        facts.rows.push(Row {
            owed: slot.owed as u64,
            oldest_owed_ms: slot.oldest_ms,
            last_delivered_ms: slot.delivered_ms,
            next_attempt_ms: slot.next.map(wall),
            ..Row::new(name.clone(), Channel::Cluster)
        });
        count(&mut facts, &name, Channel::Cluster, slot);
        facts.readable.insert(name, !slot.unreadable);
    }
    for (key, slot) in view.pushes.slots() {
        let Some(item) = view.push_items.get(key) else {
            continue;
        };
        let push = owed_pushes(std::slice::from_ref(item)).remove(0);
        let owed = OwedPushes {
            owed: slot.owed as u64,
            ..push.clone()
        };
        add_owed_pushes(&mut facts, &[owed]);
        if let Some(row) = facts
            .rows
            .iter_mut()
            .find(|r| r.domain == push.domain && r.channel == push.channel)
        {
            let next = slot.next.map(wall);
            row.next_attempt_ms = earliest(row.next_attempt_ms, next);
            row.last_delivered_ms = row.last_delivered_ms.max(slot.delivered_ms);
        }
        count(&mut facts, &push.domain, push.channel, slot);
    }
    facts
}

/// Adds a slot's deliveries and failures to its domain and channel's counters.
fn count(
    facts: &mut Facts,
    domain: &str,
    channel: Channel,
    slot: &crate::ops::watch::schedule::Slot,
) {
    if slot.deliveries > 0 {
        *facts
            .deliveries
            .entry((domain.to_string(), channel))
            .or_default() += slot.deliveries;
    }
    for (reason, n) in &slot.failures {
        *facts
            .failures
            .entry((domain.to_string(), channel, *reason))
            .or_default() += n;
    }
    if slot.errors > 0 {
        *facts
            .errors
            .entry((domain.to_string(), channel))
            .or_default() += slot.errors;
    }
}

/// `status -o prometheus`: what each selected domain owes and last delivered, from its
/// store alone (never a cluster, as `--offline`), as Prometheus text for node_exporter's
/// textfile collector.
///
/// A store that cannot be read is a warning naming the domain and `clinv_store_readable`
/// 0 — never a domain left out — and the exposition is still written (exit 0; with
/// `--strict` the warning is an error and the exit 1). Deploy domains have no inventory
/// of their own, so no series: an `[info]` names each.
///
/// # Errors
/// A selection error, an encoding or write error, `--strict` with a store not read.
pub fn say(
    cx: crate::ops::context::Context<'_>,
    project: &crate::project::Project,
    selection: crate::ops::context::Selection<'_>,
) -> Result<crate::error::Outcome> {
    use crate::ops::context::Picked;
    let domains = match cx.pick(project, selection)? {
        Picked::Several(domains) => domains,
        Picked::One(domain) => vec![domain],
    };
    let store = cx.store(project);
    // Reading a store is local work (no network): one worker per core, in name order.
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let read = crate::util::pool::ordered(&domains, cores, |domain| {
        match project.domain_kind(domain) {
            crate::project::DomainKind::Deploy { cluster_ref, .. } => Err(cluster_ref),
            _ => Ok(crate::ops::status::Delivery::of_store(
                &store.domain(domain),
            )),
        }
    });
    let mut facts = Facts::default();
    let mut unreadable = 0;
    for (domain, read) in domains.iter().zip(read) {
        let name = domain.to_string();
        match read {
            Err(cluster_ref) => cx.deploy(&name, cluster_ref.as_deref()),
            Ok(Ok((delivery, _))) => {
                facts.rows.extend(rows_of(&name, &delivery));
                facts.readable.insert(name, true);
            }
            Ok(Err(e)) => {
                let message = format!("status: {name}: {}", crate::error::chain(&e));
                match cx.strict {
                    true => cx.console.error(&message),
                    false => cx.console.warn(&message),
                }
                unreadable += 1;
                facts.readable.insert(name, false);
            }
        }
    }
    cx.console.data(&encode(&facts)?)?;
    if cx.strict && unreadable > 0 {
        return Err(Error::Strict(unreadable));
    }
    Ok(crate::error::Outcome::Done)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(domain: &str, channel: Channel, owed: u64) -> Row {
        Row {
            owed,
            ..Row::new(domain, channel)
        }
    }

    /// Two domains, one of each kind of value, and a third whose store was unreadable:
    /// every line read.
    fn small() -> Facts {
        let mut facts = Facts {
            rows: vec![
                Row {
                    oldest_owed_ms: Some(1_764_936_000_500),
                    last_delivered_ms: Some(1_764_900_000_000),
                    next_attempt_ms: Some(1_764_936_100_000),
                    ..row("prod-7", Channel::Cluster, 2)
                },
                row("prod-7", Channel::Git, 0),
                row("a-lab", Channel::Cluster, 0),
            ],
            ..Facts::default()
        };
        facts
            .deliveries
            .insert(("prod-7".into(), Channel::Cluster), 3);
        facts
            .failures
            .insert(("prod-7".into(), Channel::Cluster, Reason::Unreachable), 5);
        facts
            .failures
            .insert(("prod-7".into(), Channel::Cluster, Reason::Forbidden), 1);
        facts.readable.insert("a-lab".into(), true);
        facts.readable.insert("prod-7".into(), true);
        facts.readable.insert("z-broken".into(), false);
        facts.errors.insert(("prod-7".into(), Channel::Cluster), 2);
        facts
    }

    #[test]
    fn a_small_fleet_is_every_known_value_and_no_unknown_one() {
        let expected = "\
# HELP clinv_owed Snapshots (channel cluster) or pushes (git, oci) owed and not yet delivered.
# TYPE clinv_owed gauge
clinv_owed{domain=\"a-lab\",channel=\"cluster\"} 0
clinv_owed{domain=\"prod-7\",channel=\"cluster\"} 2
clinv_owed{domain=\"prod-7\",channel=\"git\"} 0
# HELP clinv_owed_oldest_timestamp_seconds When the oldest owed item was recorded (seconds since the epoch).
# TYPE clinv_owed_oldest_timestamp_seconds gauge
clinv_owed_oldest_timestamp_seconds{domain=\"prod-7\",channel=\"cluster\"} 1764936000.5
# HELP clinv_last_delivery_timestamp_seconds When the channel last delivered (seconds since the epoch).
# TYPE clinv_last_delivery_timestamp_seconds gauge
clinv_last_delivery_timestamp_seconds{domain=\"prod-7\",channel=\"cluster\"} 1764900000.0
# HELP clinv_next_attempt_timestamp_seconds When the delivery loop tries next (seconds since the epoch).
# TYPE clinv_next_attempt_timestamp_seconds gauge
clinv_next_attempt_timestamp_seconds{domain=\"prod-7\",channel=\"cluster\"} 1764936100.0
# HELP clinv_deliveries_total Deliveries since the delivery loop started.
# TYPE clinv_deliveries_total counter
clinv_deliveries_total{domain=\"prod-7\",channel=\"cluster\"} 3
# HELP clinv_delivery_failures_total Failed delivery attempts since the delivery loop started, by reason.
# TYPE clinv_delivery_failures_total counter
clinv_delivery_failures_total{domain=\"prod-7\",channel=\"cluster\",reason=\"unreachable\"} 5
clinv_delivery_failures_total{domain=\"prod-7\",channel=\"cluster\",reason=\"forbidden\"} 1
# HELP clinv_delivery_errors_total Delivery attempts since the delivery loop started that ended in an error of clinv's own: the store could not be read or written (a full disk), a damaged snapshot, a recorded target it cannot use.
# TYPE clinv_delivery_errors_total counter
clinv_delivery_errors_total{domain=\"prod-7\",channel=\"cluster\"} 2
# HELP clinv_store_readable Whether the domain's snapshot store could be read (1) or not (0: no other series of it).
# TYPE clinv_store_readable gauge
clinv_store_readable{domain=\"a-lab\"} 1
clinv_store_readable{domain=\"prod-7\"} 1
clinv_store_readable{domain=\"z-broken\"} 0
";
        assert_eq!(encode(&small()).unwrap(), expected);
    }

    #[test]
    fn the_loops_errors_of_its_own_are_counted_and_an_unreadable_store_said() {
        use crate::ops::watch::schedule::{Attempt, Schedule};
        use crate::util::backoff::Rng;
        use std::time::{Duration, Instant};
        let s = Duration::from_secs(1);
        let (now, d) = (
            Instant::now(),
            crate::domain::Domain::parse("a.example").unwrap(),
        );
        let mut clusters = Schedule::new(5 * s, 300 * s, 10 * s, Rng::seeded(1));
        clusters.owed(&d, 1, None, now);
        for _ in 0..2 {
            clusters.take_due(now + 600 * s, 1);
            clusters.finished(&d, Attempt::Errored, now, 0);
        }
        clusters.readable(&d, false);
        let pushes = Schedule::new(5 * s, 300 * s, 10 * s, Rng::seeded(1));
        let items = std::collections::HashMap::new();
        let view = crate::ops::watch::View {
            clusters: &clusters,
            pushes: &pushes,
            push_items: &items,
        };
        let facts = of_loop(&view, now, 0);
        assert_eq!(facts.errors[&("a.example".into(), Channel::Cluster)], 2);
        assert!(!facts.readable["a.example"]);
    }

    #[test]
    fn no_facts_are_the_descriptors_only() {
        let text = encode(&Facts::default()).unwrap();
        assert_eq!(text.lines().filter(|l| l.starts_with("# TYPE")).count(), 8);
        assert!(text.lines().all(|l| l.starts_with('#')), "{text}");
    }

    #[test]
    fn the_order_of_the_rows_does_not_change_the_text() {
        let mut reversed = small();
        reversed.rows.reverse();
        assert_eq!(encode(&reversed).unwrap(), encode(&small()).unwrap());
    }

    #[test]
    fn a_domains_rows_come_from_its_delivery_facts() {
        use crate::ops::status::{Delivery, Landed};
        let delivery = Delivery {
            pending: 2,
            oldest_pending_at: Some("2026-12-05T13:49:58.981Z".into()),
            last_applied: Some(("2026-12-04T10:00:00Z".into(), "abc".into())),
            last_committed: None,
            last_pushed: Some(Landed {
                at: "not a time".into(),
                snapshot: "abc".into(),
                to: None,
            }),
            owed: Vec::new(),
            outbox_damage: Vec::new(),
        };
        let [cluster, git, oci] = rows_of("d", &delivery);
        assert_eq!(
            cluster,
            Row {
                owed: 2,
                oldest_owed_ms: Some(1_796_478_598_981),
                last_delivered_ms: Some(1_796_378_400_000),
                ..Row::new("d", Channel::Cluster)
            }
        );
        assert_eq!(git, Row::new("d", Channel::Git));
        // A time that does not parse is unknown: no series, never 1970.
        assert_eq!(oci, Row::new("d", Channel::Oci));
    }

    #[test]
    fn owed_pushes_are_summed_per_domain_and_channel_with_the_oldest_kept() {
        let mut facts = Facts {
            rows: vec![row("d", Channel::Git, 0), row("d", Channel::Cluster, 4)],
            ..Facts::default()
        };
        let owed = |domain: &str, channel, owed, oldest_ms| OwedPushes {
            domain: domain.into(),
            channel,
            owed,
            oldest_ms,
        };
        add_owed_pushes(
            &mut facts,
            &[
                owed("d", Channel::Git, 1, Some(2_000)),
                owed("d", Channel::Git, 2, Some(1_000)),
                owed("d", Channel::Oci, 1, None),
            ],
        );
        let git = Row {
            owed: 3,
            oldest_owed_ms: Some(1_000),
            ..Row::new("d", Channel::Git)
        };
        let oci = row("d", Channel::Oci, 1);
        assert_eq!(facts.rows, [git, row("d", Channel::Cluster, 4), oci]);
    }

    #[test]
    fn a_label_value_is_escaped_by_the_client() {
        let facts = Facts {
            rows: vec![row("a\"b\\c\nd", Channel::Oci, 1)],
            ..Facts::default()
        };
        let text = encode(&facts).unwrap();
        assert!(
            text.contains("clinv_owed{domain=\"a\\\"b\\\\c\\nd\",channel=\"oci\"} 1\n"),
            "{text}"
        );
    }
}
