//! `clinv status`: the `lo status` inventory block, its ages, last apply and queue.

use crate::domain::Domain;
use crate::error::Outcome;
use crate::error::Result;
use crate::ops::context::{Context, Picked, Selection};
use crate::ops::status::{self, Shown};
use crate::ops::{Scope, live::Live};
use crate::project::Project;
use crate::util::redact;
use crate::view::format::StatusFormat;

/// The `lo status` inventory block (spec §8) for a live object, followed by a blank line.
pub fn inventory_block(object: &serde_json::Value) -> String {
    block(&StatusSource::Live, object)
}

/// The inventory block under a header that says where it comes from.
///
/// The inventory block under a header that says where it comes from: `lo status`'s own
/// for the live object; for a snapshot its id, when it was applied and why it is shown —
/// so stdout alone never passes a snapshot off as the cluster.
pub fn block(source: &StatusSource, object: &serde_json::Value) -> String {
    let e = |v: &str| redact::escape_line(v);
    let header = match source {
        StatusSource::Live => "ClusterInventory/cluster".to_string(),
        StatusSource::Snapshot { id, at, why: None } => {
            format!("snapshot {}, applied {}; --offline", e(id), e(at))
        }
        StatusSource::Snapshot {
            id,
            at,
            why: Some(why),
        } => format!(
            "NOT the live cluster, which was not read ({}): snapshot {}, applied {}",
            e(why),
            e(id),
            e(at)
        ),
        StatusSource::NotRead { why } => {
            return format!(
                "--- Inventory: the live cluster was not read ({}) ---\n  no snapshot was ever applied: nothing to show\n\n",
                e(why)
            );
        }
        StatusSource::NothingApplied { said } => {
            return format!("--- Inventory (--offline) ---\n  {}\n\n", e(said));
        }
    };
    let body = block_body(object).unwrap_or_else(|| "  (unreadable inventory)\n".to_string());
    format!("--- Inventory ({header}) ---\n{body}\n")
}

/// Where the inventory `status` shows comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StatusSource {
    /// The live object.
    Live,
    /// The snapshot `id` applied last, applied `at`: with `--offline` (`why` is `None`) or
    /// because the cluster could not be read (`why`: the reason and its detail).
    Snapshot {
        id: crate::snapshot_id::SnapshotId,
        at: String,
        why: Option<String>,
    },
    /// The cluster could not be read and no snapshot was ever applied.
    NotRead { why: String },
    /// `--offline` and no snapshot was ever applied: `said` says so and what is pending.
    NothingApplied { said: String },
}

impl StatusSource {
    /// Whether the answer is the live cluster's, or one asked for (`--offline`).
    pub fn read_the_cluster(&self) -> bool {
        matches!(
            self,
            StatusSource::Live | StatusSource::Snapshot { why: None, .. }
        )
    }
}

/// A time as recorded and how long ago it was: `3h ago (2026-…Z)`; `<unknown>` for an
/// age when the text is not an RFC 3339 time.
fn ago(at: &str, now: i64) -> String {
    format!("{} ({})", age_ago(at, now), redact::escape_line(at))
}

/// How long ago an RFC 3339 time was, kubectl's way: `3h ago`; `<unknown>` otherwise.
fn age_ago(at: &str, now: i64) -> String {
    let mut out = String::new();
    match crate::util::time::parse_rfc3339(at) {
        Some(t) => {
            crate::util::time::write_age(t.as_second(), now, &mut out);
            out.push_str(" ago");
        }
        None => out.push_str(crate::util::time::UNKNOWN_AGE),
    }
    out
}

/// A string field of the inventory, by JSON pointer.
fn text_at<'a>(object: &'a serde_json::Value, pointer: &str) -> Option<&'a str> {
    object.pointer(pointer).and_then(serde_json::Value::as_str)
}

/// `status` text after the inventory block: where it comes from (on stdout, so a reader of
/// the output alone knows a snapshot from the live object), its ages, the last apply and
/// the queue.
///
/// Ages are kubectl's, against `now` (seconds since the epoch); the absolute times follow
/// in parentheses.
pub fn status_section(
    domain: &str,
    source: &StatusSource,
    delivery: Option<&crate::ops::status::Delivery>,
    inventory: &serde_json::Value,
    now: i64,
) -> String {
    let e = |v: &str| redact::escape_line(v);
    let mut out = format!("--- Delivery ({}) ---\n", e(domain));
    match source {
        StatusSource::Live => {
            out.push_str("  source:       live (ClusterInventory/cluster)\n");
            if let Some(created) = text_at(inventory, "/metadata/creationTimestamp") {
                out.push_str(&format!("  created:      {}\n", ago(created, now)));
            }
        }
        StatusSource::Snapshot { id, at, why } => {
            let why = match why {
                Some(why) => format!("the live cluster was not read: {}", e(why)),
                None => "--offline".to_string(),
            };
            out.push_str(&format!(
                "  source:       snapshot {} (applied last; {why})\n",
                e(id)
            ));
            out.push_str(&format!("  applied:      {}\n", ago(at, now)));
        }
        StatusSource::NotRead { why } => out.push_str(&format!(
            "  source:       none (the live cluster was not read: {})\n",
            e(why)
        )),
        StatusSource::NothingApplied { .. } => {
            out.push_str("  source:       none (nothing applied yet; --offline)\n");
        }
    }
    match text_at(inventory, "/spec/renderedAt") {
        Some(rendered) => out.push_str(&format!("  rendered:     {}\n", ago(rendered, now))),
        None => out.push_str("  rendered:     ?\n"),
    }
    match delivery {
        Some(d) => delivery_lines(d, now, &mut out),
        None => {
            out.push_str("  last applied: ? (the store could not be read)\n  queue:        ?\n");
        }
    }
    out
}

/// The delivery facts: the last apply, commit and push (those two only when there are
/// any) and the queue.
fn delivery_lines(d: &crate::ops::status::Delivery, now: i64, out: &mut String) {
    let e = |v: &str| redact::escape_line(v);
    // `2d ago (AT)` → `2d ago (AT, snapshot ID…)`.
    let when = |at: &str| ago(at, now).trim_end_matches(')').to_string();
    match &d.last_applied {
        Some((at, id)) => {
            out.push_str(&format!(
                "  last applied: {}, snapshot {})\n",
                when(at),
                e(id)
            ));
        }
        None => out.push_str("  last applied: never\n"),
    }
    for (label, landed, what) in [
        ("committed:   ", &d.last_committed, "commit"),
        ("pushed:      ", &d.last_pushed, "as"),
    ] {
        if let Some(l) = landed {
            let to =
                l.to.as_deref()
                    .map_or(String::new(), |t| format!(", {what} {}", e(t)));
            out.push_str(&format!(
                "  last {label}{}, snapshot {}{to})\n",
                when(&l.at),
                e(&l.snapshot)
            ));
        }
    }
    match (&d.oldest_pending_at, d.pending) {
        (Some(oldest), n) if n > 0 => {
            let age = age_ago(oldest, now);
            out.push_str(&format!("  queue:        {n} pending, oldest {age}\n"));
        }
        _ => out.push_str("  queue:        empty\n"),
    }
    for o in &d.owed {
        out.push_str(&format!(
            "  owed:         {}: 1 push owed to {} since {} ({}: {})\n",
            o.push.channel(),
            e(&o.push.shown_target()),
            age_ago(&o.at, now),
            o.reason,
            e(&o.detail)
        ));
    }
}

/// The `status -o json` document, `schemaVersion` 3.
///
/// Version 2 had no `live` and `notRead`, and showed the newest snapshot, even a pending
/// one; version 1 had only `domain`, `source`, `snapshot` and `inventory`.
///
/// Times are absolute RFC 3339, as recorded: `appliedAt` (when the snapshot shown was
/// applied, else null; v2 had `recordedAt`), `createdAt` (the live object's
/// creationTimestamp, else null), `renderedAt` (`spec.renderedAt`), `lastApplied` (`{at,
/// snapshot}` or null), `lastCommitted` and `lastPushed` (`{at, snapshot, to}` or null;
/// added within version 3), `queue` (`{pending, oldestPendingAt}`; null when the store
/// could not be read).
///
/// # Errors
/// Serialisation failures (not expected).
pub fn status_json(
    domain: &str,
    source: &StatusSource,
    delivery: Option<&crate::ops::status::Delivery>,
    inventory: serde_json::Value,
) -> Result<String> {
    crate::inventory::render::to_json(&status_doc(domain, source, delivery, inventory)?)
}

// The `status -o json` document's parts (see [`status_json`]).
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Applied<'a> {
    at: &'a str,
    snapshot: &'a str,
}
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Landed<'a> {
    at: &'a str,
    snapshot: &'a str,
    to: Option<&'a str>,
}
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Queue<'a> {
    pending: usize,
    oldest_pending_at: Option<&'a str>,
}
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Status<'a> {
    schema_version: u32,
    domain: &'a str,
    /// `live`, `snapshot` (`snapshot` is its id), or `none`.
    source: &'a str,
    /// The answer is the live cluster's (or `--offline` asked for the snapshot).
    live: bool,
    /// Why the cluster was not read, when it was not.
    not_read: Option<&'a str>,
    snapshot: Option<&'a str>,
    applied_at: Option<&'a str>,
    created_at: Option<&'a str>,
    rendered_at: Option<&'a str>,
    last_applied: Option<Applied<'a>>,
    /// The Git channel (`to`: the commit) and the registry channel (`to`: the
    /// reference and digest), as the store recorded them.
    last_committed: Option<Landed<'a>>,
    last_pushed: Option<Landed<'a>>,
    queue: Option<Queue<'a>>,
    /// The owed pushes (added within version 3; absent when none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    owed: Vec<OwedPush<'a>>,
    /// `--offline` and no snapshot was ever applied: that, and what is pending (added
    /// within version 3; absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    nothing_applied: Option<&'a str>,
    inventory: &'a serde_json::Value,
}
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct OwedPush<'a> {
    /// `git` or `oci`.
    channel: &'a str,
    /// `origin (main)`, `oci://host/repo:tag`.
    target: String,
    snapshot: &'a str,
    /// When it was recorded as owed.
    at: &'a str,
    reason: crate::delivery::Reason,
    detail: &'a str,
}
fn owed_push(o: &crate::store::outbox::Owed) -> OwedPush<'_> {
    OwedPush {
        channel: o.push.channel(),
        target: o.push.shown_target(),
        snapshot: &o.snapshot,
        at: &o.at,
        reason: o.reason,
        detail: &o.detail,
    }
}
fn landed(l: &crate::ops::status::Landed) -> Landed<'_> {
    Landed {
        at: &l.at,
        snapshot: &l.snapshot,
        to: l.to.as_deref(),
    }
}

/// The document of [`status_json`]: one element of `status -A -o json` too.
///
/// # Errors
/// Serialisation failures (not expected).
pub fn status_doc(
    domain: &str,
    source: &StatusSource,
    delivery: Option<&crate::ops::status::Delivery>,
    inventory: serde_json::Value,
) -> Result<serde_json::Value> {
    let (name, snapshot, applied_at, not_read) = match source {
        StatusSource::Live => ("live", None, None, None),
        StatusSource::Snapshot { id, at, why } => (
            "snapshot",
            Some(id.as_str()),
            Some(at.as_str()),
            why.as_deref(),
        ),
        StatusSource::NotRead { why } => ("none", None, None, Some(why.as_str())),
        StatusSource::NothingApplied { .. } => ("none", None, None, None),
    };
    serde_json::to_value(Status {
        schema_version: 3,
        domain,
        source: name,
        live: source.read_the_cluster(),
        not_read,
        snapshot,
        applied_at,
        created_at: match source {
            StatusSource::Live => text_at(&inventory, "/metadata/creationTimestamp"),
            _ => None,
        },
        rendered_at: text_at(&inventory, "/spec/renderedAt"),
        last_applied: delivery.and_then(|d| {
            d.last_applied
                .as_ref()
                .map(|(at, id)| Applied { at, snapshot: id })
        }),
        last_committed: delivery.and_then(|d| d.last_committed.as_ref().map(landed)),
        last_pushed: delivery.and_then(|d| d.last_pushed.as_ref().map(landed)),
        queue: delivery.map(|d| Queue {
            pending: d.pending,
            oldest_pending_at: d.oldest_pending_at.as_deref(),
        }),
        owed: delivery.map_or_else(Vec::new, |d| d.owed.iter().map(owed_push).collect()),
        nothing_applied: match source {
            StatusSource::NothingApplied { said } => Some(said),
            _ => None,
        },
        inventory: &inventory,
    })
    .map_err(|e| crate::error::Error::encode("the status document", e))
}

/// `None` when a field has a type lo's template cannot print.
fn block_body(object: &serde_json::Value) -> Option<String> {
    use serde_json::Value;
    let truthy = |v: Option<&Value>| {
        v.filter(|v| !v.is_null() && **v != Value::Bool(false))
            .cloned()
    };
    // Every value comes from the live object or the store: one line each, control
    // characters escaped.
    let show = |v: &Value| match v {
        Value::String(s) => redact::escape_line(s),
        other => redact::escape_line(&other.to_string()),
    };
    let text = |v: Option<Value>| -> Option<Option<String>> {
        match v {
            None => Some(None),
            Some(Value::String(s)) => Some(Some(redact::escape_line(&s))),
            Some(_) => None,
        }
    };
    if !object.is_object() {
        return None;
    }
    let spec = match truthy(object.get("spec")) {
        None => Value::Object(Default::default()),
        Some(s) if s.is_object() => s,
        Some(_) => return None,
    };
    let field = |k: &str| truthy(spec.get(k));
    let or_q = |v: Option<Value>| v.map(|v| show(&v)).unwrap_or_else(|| "?".into());
    let mut out = format!("  lok8s:      {}\n", or_q(field("lok8sVersion")));
    let provider = text(field("provider"))?
        .map(|p| format!(" · {p}"))
        .unwrap_or_default();
    out.push_str(&format!(
        "  driver:     {}{provider}\n",
        or_q(field("kind"))
    ));
    if let Some(k) = field("kubernetesVersion") {
        out.push_str(&format!("  kubernetes: {}\n", show(&k)));
    }
    let hash: String = text(field("specHash"))?
        .map(|h| h.chars().take(12).collect())
        .unwrap_or_else(|| "?".into());
    out.push_str(&format!("  specHash:   {hash}…\n"));
    out.push_str(&format!("  renderedAt: {}\n", or_q(field("renderedAt"))));
    let addons = match field("addons") {
        None => Vec::new(),
        Some(Value::Array(items)) => items,
        Some(_) => return None,
    };
    out.push_str(&format!("  addons:     {}\n", addons.len()));
    for addon in &addons {
        let Value::Object(a) = addon else { return None };
        let name = a.get("name").map(show).unwrap_or_else(|| "null".into());
        let version = text(truthy(a.get("chartVersion")))?
            .map(|v| format!(" {v}"))
            .unwrap_or_default();
        let category = text(truthy(a.get("category")))?
            .map(|c| format!(" ({c})"))
            .unwrap_or_default();
        out.push_str(&format!("    {name}{version}{category}\n"));
    }
    if let Some(at) = truthy(object.pointer("/status/lastReported")) {
        out.push_str(&format!("  agent:      last reported {}\n", show(&at)));
    }
    Some(out)
}

/// `status -A`'s DRIFT: the inventory shown against the project's render (the same
/// comparison as `drift`, from the one read).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Drifted {
    InSync,
    Changes(usize),
    /// The cluster was not read: no answer, never "in sync".
    NotRead,
    /// The cluster holds another domain's ClusterInventory: not this domain's answer.
    OtherDomain,
    /// What was read is not a ClusterInventory (or the cluster has none).
    Unknown,
    /// The project could not be rendered.
    Error(String),
}

impl Drifted {
    pub fn of(verdict: crate::error::Result<crate::ops::drift::Verdict>) -> Drifted {
        use crate::ops::drift::Verdict;
        match verdict {
            Ok(Verdict::InSync) => Drifted::InSync,
            Ok(Verdict::Drift(r)) => Drifted::Changes(r.changes.len()),
            Ok(Verdict::Unknown) => Drifted::Unknown,
            Err(e) => Drifted::Error(crate::error::headline(&e)),
        }
    }

    fn text(&self) -> String {
        match self {
            Drifted::InSync => "in sync".into(),
            Drifted::Changes(n) => format!("{n} change(s)"),
            Drifted::NotRead => "unknown (not read)".into(),
            Drifted::OtherDomain => "another domain's inventory".into(),
            Drifted::Unknown => "unknown".into(),
            Drifted::Error(e) => format!("error: {}", redact::escape_line(e)),
        }
    }

    /// `{verdict, changes}`: `in-sync`, `drift` (with the count), `unknown`, `not-read`,
    /// `other-domain` or `error` (with `detail`).
    fn json(&self) -> serde_json::Value {
        use serde_json::json;
        match self {
            Drifted::InSync => json!({"verdict": "in-sync", "changes": 0}),
            Drifted::Changes(n) => json!({"verdict": "drift", "changes": n}),
            Drifted::NotRead => json!({"verdict": "not-read", "changes": null}),
            Drifted::OtherDomain => json!({"verdict": "other-domain", "changes": null}),
            Drifted::Unknown => json!({"verdict": "unknown", "changes": null}),
            Drifted::Error(e) => json!({"verdict": "error", "changes": null, "detail": e}),
        }
    }
}

/// `, push owed` when `d` owes a push on `channel` (`git`, `oci`).
fn owed_mark(d: &crate::ops::status::Delivery, channel: &str) -> &'static str {
    match d.owed.iter().any(|o| o.push.channel() == channel) {
        true => ", push owed",
        false => "",
    }
}

/// Where the answer came from, the inventory shown, and why the cluster was not read;
/// or, when there is nothing to show, the reason and the message.
pub type Answer = (
    StatusSource,
    serde_json::Value,
    Option<crate::delivery::Reason>,
);

/// What `status` shows of a domain's report: [`Answer`], or why there is nothing.
///
/// # Errors
/// Nothing to show: the reason and the message (the fail-soft rule's input).
pub fn answer(
    shown: crate::ops::status::Shown,
) -> std::result::Result<Answer, (crate::delivery::Reason, String)> {
    Ok(match shown {
        crate::ops::status::Shown::Live(value) => (StatusSource::Live, value, None),
        crate::ops::status::Shown::Snapshot {
            id,
            at,
            not_read,
            inventory,
        } => {
            let why = not_read.as_ref().map(|(r, d)| format!("{r}: {d}"));
            let source = StatusSource::Snapshot { id, at, why };
            (source, inventory, not_read.map(|(r, _)| r))
        }
        crate::ops::status::Shown::NotRead { reason, detail } => {
            let why = format!("{reason}: {detail}");
            (
                StatusSource::NotRead { why },
                serde_json::Value::Null,
                Some(reason),
            )
        }
        crate::ops::status::Shown::NothingApplied { said, .. } => (
            StatusSource::NothingApplied { said },
            serde_json::Value::Null,
            None,
        ),
        crate::ops::status::Shown::Nothing { reason, message } => return Err((reason, message)),
    })
}

/// One row of `status -A`.
pub struct FleetRow {
    pub domain: String,
    pub source: String,
    pub drift: String,
    pub queue: String,
    pub last_applied: String,
    pub last_committed: String,
    pub last_pushed: String,
    pub json: serde_json::Value,
    /// The live cluster was not read (or not tried).
    pub not_read: bool,
    /// The domain could not be answered at all (its spec does not parse): an error.
    pub failed: bool,
    /// The cluster holds another domain's ClusterInventory.
    pub other_domain: bool,
}

impl FleetRow {
    /// What the row says of the command's exit: an error, another domain's inventory, a
    /// cluster not read, or done ([`crate::error::Outcome::worse`] folds them).
    pub fn outcome(&self) -> crate::error::Outcome {
        use crate::error::Outcome;
        match self {
            r if r.failed => Outcome::Failed,
            r if r.other_domain => Outcome::OtherDomain,
            r if r.not_read => Outcome::NotLive,
            _ => Outcome::Done,
        }
    }

    /// The row of a domain that answered; `json` is its [`status_doc`], which gains
    /// `drift`.
    pub fn of(
        domain: &str,
        source: &StatusSource,
        delivery: Option<&crate::ops::status::Delivery>,
        drift: &Drifted,
        mut json: serde_json::Value,
        now: i64,
    ) -> FleetRow {
        let ago = |at: &str| age_ago(at, now);
        let landed = |l: &Option<crate::ops::status::Landed>| {
            l.as_ref()
                .map_or_else(|| "never".to_string(), |l| ago(&l.at))
        };
        let unknown = || "?".to_string();
        let (queue, applied, committed, pushed) = match delivery {
            None => (unknown(), unknown(), unknown(), unknown()),
            Some(d) => (
                match (&d.oldest_pending_at, d.pending) {
                    (Some(oldest), n) if n > 0 => format!("{n} (oldest {})", ago(oldest)),
                    _ => "0".to_string(),
                },
                d.last_applied
                    .as_ref()
                    .map_or_else(|| "never".to_string(), |(at, _)| ago(at)),
                landed(&d.last_committed) + owed_mark(d, "git"),
                landed(&d.last_pushed) + owed_mark(d, "oci"),
            ),
        };
        json["drift"] = drift.json();
        FleetRow {
            domain: domain.to_string(),
            source: source_cell(source),
            drift: drift.text(),
            queue,
            last_applied: applied,
            last_committed: committed,
            last_pushed: pushed,
            json,
            not_read: !source.read_the_cluster(),
            failed: false,
            other_domain: *drift == Drifted::OtherDomain,
        }
    }

    /// A domain that was not read, and why (a deploy domain, the `--timeout` spent, an
    /// error).
    pub fn skipped(domain: &str, what: &str, detail: &str, not_read: bool) -> FleetRow {
        let why = format!("{what}: {}", redact::escape_line(detail));
        let dash = || "-".to_string();
        FleetRow {
            domain: domain.to_string(),
            json: serde_json::json!({"schemaVersion": 3, "domain": domain, "source": "none", "live": false, "skipped": why}),
            source: why,
            drift: dash(),
            queue: dash(),
            last_applied: dash(),
            last_committed: dash(),
            last_pushed: dash(),
            not_read,
            failed: false,
            other_domain: false,
        }
    }

    /// The row of a domain that could not be answered: the error, named as it is.
    pub fn failed(domain: &str, error: &str) -> FleetRow {
        FleetRow {
            failed: true,
            ..FleetRow::skipped(domain, "error", error, false)
        }
    }
}

/// Where a row's answer came from, on one line.
fn source_cell(source: &StatusSource) -> String {
    let e = |v: &str| redact::escape_line(v);
    match source {
        StatusSource::Live => "live".to_string(),
        StatusSource::Snapshot { id, why: None, .. } => format!("snapshot {} (--offline)", e(id)),
        StatusSource::Snapshot {
            id, why: Some(why), ..
        } => format!("not read ({}); snapshot {}", e(why), e(id)),
        StatusSource::NotRead { why } => format!("not read ({})", e(why)),
        StatusSource::NothingApplied { .. } => "none (--offline)".to_string(),
    }
}

/// `status -A`'s table: DOMAIN, DRIFT, PENDING, LAST APPLIED and SOURCE.
///
/// SOURCE is cut with `…` to fit `style.width` (a domain not read says why at length);
/// `-o wide` appends LAST COMMITTED and LAST PUSHED and cuts nothing (kubectl's wide:
/// more columns at the end).
pub fn fleet_table(rows: &[FleetRow], style: crate::view::TableStyle) -> String {
    let mut header = vec!["DOMAIN", "DRIFT", "PENDING", "LAST APPLIED", "SOURCE"];
    if style.wide {
        header.extend(["LAST COMMITTED", "LAST PUSHED"]);
    }
    let mut table = crate::view::table::Table::new(&header).no_header(style.no_headers);
    for r in rows {
        let mut cells = vec![&r.domain, &r.drift, &r.queue, &r.last_applied, &r.source];
        if style.wide {
            cells.extend([&r.last_committed, &r.last_pushed]);
        }
        table.row(&cells);
    }
    table.render_fit(style.width.filter(|_| !style.wide), 4)
}

/// What `status` asked for: `-o` (prometheus is [`crate::view::metrics::say`]'s) and
/// `--offline`.
#[derive(Debug, Clone, Copy)]
pub struct Ask {
    pub format: Option<StatusFormat>,
    pub offline: bool,
}

impl Ask {
    fn json(&self) -> bool {
        self.format == Some(StatusFormat::Json)
    }
}

/// `clinv status` of the domains `selection` names: one domain's block, or a row each.
///
/// # Errors
/// What `refuse` returns for several domains (flags that name one cluster), a selection
/// or read error, `--strict`'s fail-soft error, a write error.
pub fn say<E: From<crate::Error>>(
    cx: Context<'_>,
    live: &Live,
    project: &Project,
    selection: Selection<'_>,
    ask: Ask,
    refuse: impl FnOnce() -> std::result::Result<(), E>,
) -> std::result::Result<Outcome, E> {
    match cx.pick(project, selection)? {
        Picked::One(domain) => Ok(say_one(cx, &live.scope(project, &domain), ask)?),
        Picked::Several(domains) => say_several(cx, live, project, &domains, ask, refuse),
    }
}

fn say_one(cx: Context<'_>, scope: &Scope<'_>, ask: Ask) -> Result<Outcome> {
    let domain = scope.domain;
    let report = status::status(scope, ask.offline)?;
    cx.console.notices(&report.notices);
    // Nothing applied yet (--offline): said on stdout, then status's nothing-to-show exit.
    let nothing = match &report.shown {
        Shown::NothingApplied { message, .. } => Some(message.clone()),
        _ => None,
    };
    let (source, value, not_read) = match answer(report.shown) {
        Ok(answer) => answer,
        Err((reason, message)) => return cx.fail_soft(reason, message),
    };
    let text = if ask.json() {
        status_json(domain, &source, report.delivery.as_ref(), value)?
    } else {
        let now = jiff::Timestamp::now().as_second();
        let mut text = block(&source, &value);
        text.push_str(&status_section(
            domain,
            &source,
            report.delivery.as_ref(),
            &value,
            now,
        ));
        text
    };
    cx.console.data(&text)?;
    if let Some(message) = nothing {
        return cx.fail_soft(crate::delivery::Reason::Rejected, message);
    }
    Ok(status::outcome(not_read, cx.strict))
}

/// One domain's row of `status -A` (an error is a row too: the others go on): what was
/// read, and its drift from the project's render.
fn row(scope: &Scope<'_>, offline: bool, rendered_at: jiff::Timestamp, now: i64) -> FleetRow {
    let domain = scope.domain;
    match status::status(scope, offline).and_then(|r| answered_row(scope, r, rendered_at, now)) {
        Ok(row) => row,
        Err(e) => FleetRow::failed(domain, &crate::error::headline(&e)),
    }
}

fn answered_row(
    scope: &Scope<'_>,
    report: status::Report,
    rendered_at: jiff::Timestamp,
    now: i64,
) -> Result<FleetRow> {
    let domain = scope.domain;
    // Nothing applied yet (--offline): no inventory to compare, a row that says so.
    if let Shown::NothingApplied { said, .. } = &report.shown {
        return Ok(FleetRow::skipped(domain, "nothing", said, false));
    }
    let (source, value, why) = match answer(report.shown) {
        Ok(answer) => answer,
        Err((_, message)) => {
            return Ok(FleetRow::skipped(domain, "nothing", &message, false));
        }
    };
    // Never "in sync" from a snapshot shown because the cluster was not read.
    let drift = match (source.read_the_cluster(), why) {
        (_, Some(crate::delivery::Reason::DomainMismatch)) => Drifted::OtherDomain,
        (true, _) => Drifted::of(crate::ops::drift::against(scope, rendered_at, &value)),
        (false, _) => Drifted::NotRead,
    };
    let delivery = report.delivery.as_ref();
    let json = status_doc(domain, &source, delivery, value)?;
    Ok(FleetRow::of(domain, &source, delivery, &drift, json, now))
}

/// `status -A`: every domain selected, a row each ([`Live::each`]): where the answer
/// came from, the queue and the last apply.
fn say_several<E: From<crate::Error>>(
    cx: Context<'_>,
    live: &Live,
    project: &Project,
    domains: &[Domain],
    ask: Ask,
    refuse: impl FnOnce() -> std::result::Result<(), E>,
) -> std::result::Result<Outcome, E> {
    let now = jiff::Timestamp::now().as_second();
    let at = cx.rendered_at()?;
    let results = live.each(
        project,
        domains,
        refuse,
        |domain, live| row(&live.scope(project, domain), ask.offline, at, now),
        |domain, why| {
            let (what, detail) = why.words();
            let not_tried = matches!(why, crate::fleet::Skip::NotTried);
            FleetRow::skipped(domain, what, &detail, not_tried)
        },
    )?;
    let text = if ask.json() {
        crate::inventory::render::to_json(&results.iter().map(|r| &r.json).collect::<Vec<_>>())?
    } else {
        fleet_table(
            &results,
            crate::view::TableStyle {
                wide: ask.format == Some(StatusFormat::Wide),
                no_headers: false,
                width: cx.console.width(),
            },
        )
    };
    cx.console.data(&text)?;
    let outcomes = results.iter().map(FleetRow::outcome);
    Ok(outcomes.fold(Outcome::Done, Outcome::worse))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_block_matches_lo_status() {
        let v = serde_json::json!({
            "spec": {"lok8sVersion": "0.7.4", "kind": "kubeone", "provider": "hetzner", "kubernetesVersion": "v1.31.10",
                     "specHash": "3fb0c5e02a41aaaaaaaaaaaa", "renderedAt": "2026-07-06T10:12:03Z",
                     "addons": [{"name": "cilium", "chartVersion": "1.20.1", "category": "networking"}, {"name": "site-glue", "source": "target"}]},
            "status": {"lastReported": "2026-07-06T11:00:00Z"}
        });
        assert_eq!(
            inventory_block(&v),
            "--- Inventory (ClusterInventory/cluster) ---\n  lok8s:      0.7.4\n  driver:     kubeone · hetzner\n  kubernetes: v1.31.10\n  specHash:   3fb0c5e02a41…\n  renderedAt: 2026-07-06T10:12:03Z\n  addons:     2\n    cilium 1.20.1 (networking)\n    site-glue\n  agent:      last reported 2026-07-06T11:00:00Z\n\n"
        );
        let hostile = serde_json::json!({"spec": {"lok8sVersion": "0.7\u{1b}[2J", "kind": "k\nforged: line",
            "addons": [{"name": "a\u{7}", "chartVersion": "1\n2"}]}});
        let block = inventory_block(&hostile);
        assert!(!block.contains(['\u{1b}', '\u{7}']), "{block}");
        assert!(!block.lines().any(|l| l.starts_with("forged")), "{block}");
        assert!(block.contains("    a\\u{7} 1\\n2\n"), "{block}");
        assert_eq!(
            inventory_block(&serde_json::json!({"spec": {}})),
            "--- Inventory (ClusterInventory/cluster) ---\n  lok8s:      ?\n  driver:     ?\n  specHash:   ?…\n  renderedAt: ?\n  addons:     0\n\n"
        );
    }

    #[test]
    fn status_block_edge_cases() {
        let body = |v: serde_json::Value| {
            let block = inventory_block(&v);
            block
                .lines()
                .skip(1)
                .collect::<Vec<_>>()
                .join("\n")
                .trim_end()
                .to_string()
        };
        assert_eq!(body(serde_json::json!("text")), "  (unreadable inventory)");
        assert_eq!(
            body(serde_json::json!({"spec": {"provider": 5}})),
            "  (unreadable inventory)"
        );
        assert_eq!(
            body(serde_json::json!({"spec": {"addons": {}}})),
            "  (unreadable inventory)"
        );
        assert_eq!(
            body(serde_json::json!({"spec": {"addons": ["x"]}})),
            "  (unreadable inventory)"
        );
        assert_eq!(
            body(serde_json::json!({"spec": {"addons": [{"chartVersion": 1}]}})),
            "  (unreadable inventory)"
        );
        let b = body(
            serde_json::json!({"spec": {"lok8sVersion": 1.2, "kubernetesVersion": "", "specHash": "abc", "provider": false, "addons": [{}]}}),
        );
        assert!(
            b.contains("  lok8s:      1.2\n")
                && b.contains("  kubernetes: \n")
                && b.contains("  specHash:   abc…"),
            "{b}"
        );
        assert!(
            b.contains("  driver:     ?\n") && b.contains("    null"),
            "{b}"
        );
    }

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(redact::escape_controls("a\u{1b}[2Jb"), "a\\u{1b}[2Jb");
        assert_eq!(redact::escape_controls("plain — text"), "plain — text");
    }
}
