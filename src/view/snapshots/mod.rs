//! `clinv snapshots`: the table (streamed from listings), names, and one snapshot's header;
//! the listing in every `-o` form ([`list`]) and what the other subcommands say ([`say`]).

pub mod list;
pub mod say;

use crate::util::redact;
use std::io::{self, Write};

/// The header of `snapshots list -o wide`: the table's, then the absolute RECORDED and
/// RENDERED times, the first 12 characters of SPECHASH, LOK8S and TOOL.
pub const WIDE_HEADER: [&str; 11] = [
    "DOMAIN", "ID", "STATE", "REASON", "TARGET", "AGE", "RECORDED", "RENDERED", "SPECHASH",
    "LOK8S", "TOOL",
];

/// The snapshots whose push is owed (from the outbox: `(domain, id)`), marked in the
/// STATE column (`committed, push owed`).
pub type OwedIds = std::collections::HashSet<(String, String)>;

/// The owed snapshots of `listing`.
pub fn owed_ids(listing: &crate::store::outbox::Listing) -> OwedIds {
    listing
        .owed
        .iter()
        .map(|e| (e.owed.domain.to_string(), e.owed.snapshot.to_string()))
        .collect()
}

/// The STATE cell: the state, with `, push owed` when the snapshot's push is owed.
fn state_cell(state: &str, domain: &str, id: &str, owed: &OwedIds, out: &mut String) {
    out.clear();
    out.push_str(state);
    if !owed.is_empty() && owed.contains(&(domain.to_string(), id.to_string())) {
        out.push_str(", push owed");
    }
}

/// The cells of one row of `snapshots list -o wide` (see [`WIDE_HEADER`]), with kubectl's
/// AGE of the recorded time (`now` in seconds since the epoch, read once for the table).
pub fn wide_cells(s: &crate::store::Snapshot, now: i64, owed: &OwedIds) -> [String; 11] {
    let mut age = String::new();
    match crate::util::time::parse_rfc3339(&s.record.at) {
        Some(t) => crate::util::time::write_age(t.as_second(), now, &mut age),
        None => age.push_str(crate::util::time::UNKNOWN_AGE),
    }
    let r = &s.record;
    let mut state = String::new();
    state_cell(s.state.as_str(), &r.domain, &r.id, owed, &mut state);
    [
        r.domain.clone(),
        r.id.to_string(),
        state,
        s.reason.map_or("-", |r| r.as_str()).to_string(),
        r.target
            .as_ref()
            .map_or("-", |t| t.server.as_str())
            .to_string(),
        age,
        r.at.clone(),
        r.rendered_at.clone(),
        r.spec_hash.chars().take(12).collect(),
        r.lok8s_version.clone(),
        r.tool.clone(),
    ]
}

/// `snapshots list -o name`: `DOMAIN/ID` per snapshot, streamed from the listings.
pub fn write_snapshot_names(listed: &crate::store::Listed, out: &mut dyn Write) -> io::Result<()> {
    for (_, row) in listed.rows() {
        writeln!(out, "{}/{}", row.domain(), &*row.id())?;
    }
    Ok(())
}

/// [`snapshots_table`] of compact listings, written as it goes (a listing of a million
/// snapshots is not held as cells): the same bytes.
///
/// The AGE of a row is computed from its packed time (no parse) once per pass, into one
/// reused buffer.
///
/// # Errors
/// Write errors.
pub fn write_snapshots_table(
    listed: &crate::store::Listed,
    now: i64,
    no_headers: bool,
    owed: &OwedIds,
    out: &mut dyn Write,
) -> io::Result<()> {
    const HEADER: [&str; 6] = ["DOMAIN", "ID", "STATE", "REASON", "TARGET", "AGE"];
    let mut cells = Cells {
        owed,
        domain: Memo::default(),
        target: Memo::default(),
        id: Default::default(),
        state: Default::default(),
        reason: ("", 0),
        age: String::new(),
    };
    let mut widths = HEADER.map(|h| measure(h).1);
    for (n, row) in listed.rows() {
        cells.fill(n, &row, now);
        for (i, w) in widths.iter_mut().enumerate() {
            *w = (*w).max(cells.cell(i).1);
        }
    }
    let mut line = String::new();
    let push = |line: &mut String, i: usize, (text, width): (&str, usize)| {
        line.push_str(text);
        if i + 1 < HEADER.len() {
            let mut pad = widths[i].saturating_sub(width) + 2;
            while pad > 0 {
                let n = pad.min(SPACES.len());
                line.push_str(&SPACES[..n]);
                pad -= n;
            }
        }
    };
    let emit = |line: &mut String, out: &mut dyn Write| -> io::Result<()> {
        let trimmed = line.trim_end().len();
        line.truncate(trimmed);
        line.push('\n');
        out.write_all(line.as_bytes())?;
        line.clear();
        Ok(())
    };
    if !no_headers {
        for (i, h) in HEADER.iter().enumerate() {
            let (text, width) = measure(h);
            push(&mut line, i, (&text, width));
        }
        emit(&mut line, out)?;
    }
    for (n, row) in listed.rows() {
        cells.fill(n, &row, now);
        for i in 0..HEADER.len() {
            push(&mut line, i, cells.cell(i));
        }
        emit(&mut line, out)?;
    }
    Ok(())
}

const SPACES: &str = "                                                                ";

/// A cell as the table prints it (controls escaped) and its width in columns.
fn measure(text: &str) -> (std::borrow::Cow<'_, str>, usize) {
    use unicode_width::UnicodeWidthStr;
    let shown = crate::view::table::cell_text(text);
    let width = if shown.is_ascii() {
        shown.len()
    } else {
        shown.width()
    };
    (shown, width)
}

/// One interned column's cell (a domain, a target), escaped and measured once per name
/// and listing while consecutive rows share it, as they mostly do: a million rows are
/// not each escaped and measured twice.
#[derive(Default)]
struct Memo {
    key: Option<(usize, u32)>,
    text: String,
    width: usize,
}

impl Memo {
    fn set(&mut self, key: (usize, u32), text: &str) {
        if self.key != Some(key) {
            let (shown, width) = measure(text);
            self.text.clear();
            self.text.push_str(&shown);
            self.width = width;
            self.key = Some(key);
        }
    }
}

/// The six cells of one row of [`write_snapshots_table`], reused row after row.
struct Cells<'a> {
    owed: &'a OwedIds,
    domain: Memo,
    target: Memo,
    id: (String, usize),
    state: (String, usize),
    reason: (&'static str, usize),
    age: String,
}

impl Cells<'_> {
    /// The cells of `row`, of the `n`th listing.
    fn fill(&mut self, n: usize, row: &crate::store::scan::RowRef<'_>, now: i64) {
        self.domain.set((n, row.domain_key()), row.domain());
        self.target
            .set((n, row.target_key()), row.target_server().unwrap_or("-"));
        let id = row.id();
        let (shown, width) = measure(&id);
        self.id.0.clear();
        self.id.0.push_str(&shown);
        self.id.1 = width;
        state_cell(
            row.state().as_str(),
            row.domain(),
            &id,
            self.owed,
            &mut self.state.0,
        );
        self.state.1 = measure(&self.state.0).1;
        let reason = row.reason().map_or("-", |r| r.as_str());
        self.reason = (reason, measure(reason).1);
        self.age.clear();
        match row.at_second() {
            Some(then) => crate::util::time::write_age(then, now, &mut self.age),
            None => self.age.push_str(crate::util::time::UNKNOWN_AGE),
        }
    }

    /// Cell `i` (in the order of the header) and its width.
    fn cell(&self, i: usize) -> (&str, usize) {
        match i {
            0 => (&self.domain.text, self.domain.width),
            1 => (&self.id.0, self.id.1),
            2 => (&self.state.0, self.state.1),
            3 => self.reason,
            4 => (&self.target.text, self.target.width),
            // An AGE is ASCII: digits and units, or `<unknown>`.
            _ => (&self.age, self.age.len()),
        }
    }
}

/// `snapshots show`: the `#` header above the inventory — metadata, both delivery
/// channels, and every state change.
pub fn snapshot_header(snap: &crate::store::Snapshot) -> String {
    // Every value comes from the journal, which a store writer controls: one line each.
    let e = |v: &str| redact::escape_line(v);
    let r = &snap.record;
    let mut out = format!(
        "# snapshot {}\n# domain:     {}\n# recorded:   {} by {}\n# state:      {}{}\n# specHash:   {}\n",
        e(&r.id),
        e(&r.domain),
        e(&r.at),
        e(&r.tool),
        snap.state.as_str(),
        snap.reason.map(|x| format!(" ({x})")).unwrap_or_default(),
        e(&r.spec_hash)
    );
    // Both delivery channels.
    out.push_str(&format!(
        "# cluster:    {}\n# git:        {}\n",
        snap.cluster_state
            .map_or("not pending (recorded for Git only)", |c| c.as_str()),
        match (&snap.commit, &snap.pushed) {
            (Some(c), Some(p)) => format!("committed {}, pushed to {}", e(c), e(p)),
            (Some(c), None) => format!("committed {}", e(c)),
            (None, _) => "not committed".to_string(),
        }
    ));
    if let Some(reg) = &snap.registry {
        out.push_str(&format!("# registry:   pushed as {}\n", e(reg)));
    }
    if let Some(t) = &r.target {
        out.push_str(&format!(
            "# target:     {}{}\n",
            e(&t.server),
            t.context
                .as_ref()
                .map(|c| format!(" (context {})", e(c)))
                .unwrap_or_default()
        ));
        if !t.kubeconfig.is_empty() {
            let files: Vec<String> = t.kubeconfig.iter().map(|k| e(k)).collect();
            out.push_str(&format!("# kubeconfig: {}\n", files.join(", ")));
        }
    }
    for ev in &snap.events {
        out.push_str(&format!(
            "# {}  {} again (renderedAt {}, {}; same inventory, no new snapshot)\n",
            e(&ev.at),
            e(&ev.event),
            e(&ev.rendered_at),
            e(&ev.tool)
        ));
    }
    for h in &snap.history {
        let extra = [
            h.reason.map(|x| x.to_string()),
            h.by.as_ref().map(|b| format!("by {}", e(b))),
            h.commit.as_deref().map(e),
            h.pushed.as_ref().map(|p| match h.state {
                crate::store::State::Pushed => format!("as {}", e(p)),
                _ => format!("pushed to {}", e(p)),
            }),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(", ");
        out.push_str(&format!(
            "# {}  {}{}\n",
            e(&h.at),
            h.state.as_str(),
            if extra.is_empty() {
                String::new()
            } else {
                format!(" ({extra})")
            }
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::delivery::{Reason, Target};
    use crate::store::{State, StateRecord, Store, sample_inventory as cr};

    /// The table of whole rows held at once: what the streamed tables must print.
    fn reference(rows: &[crate::store::Snapshot], now: i64, wide: bool) -> String {
        let columns = if wide { 11 } else { 6 };
        let mut table = crate::view::table::Table::new(&WIDE_HEADER[..columns]);
        for s in rows {
            table.row(&wide_cells(s, now, &OwedIds::new())[..columns]);
        }
        table.render()
    }

    /// The streamed table of compact listings is byte for byte the table of snapshots:
    /// every state, reasons, targets (wide and control characters), two domains,
    /// deleted snapshots and damage left out, `--state` filters.
    #[test]
    fn the_streamed_table_is_the_table() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::at(dir.path());
        for (d, n) in [("a.example", 7), ("b.example", 4)] {
            let ds = store.domain(&crate::domain::d(d));
            let mut ids = Vec::new();
            for i in 0..n {
                let target = Target {
                    server: format!("https://ツール{i}\u{1b}[31m.example:6443\n"),
                    context: Some("ctx".into()),
                    kubeconfig: Vec::new(),
                };
                let rec = ds
                    .record_for(&cr(i), "{}", (i % 2 == 0).then_some(&target), i != 3)
                    .unwrap();
                ids.push(rec.id);
            }
            let at = crate::store::now_millis();
            let mut pending = StateRecord::new(&ids[1], &at, State::Pending);
            pending.reason = Some(Reason::Conflict);
            ds.set_states(&[
                StateRecord::new(&ids[0], &at, State::Applied),
                pending,
                StateRecord::new(&ids[2], &at, State::Superseded),
                StateRecord::new(&ids[3], &at, State::Committed),
                StateRecord::new(&ids[ids.len() - 1], &at, State::Deleted),
            ])
            .unwrap();
        }
        // A damaged line is skipped by both.
        let seg = dir.path().join("b.example/segments/1/000001.log");
        let mut text = std::fs::read_to_string(&seg).unwrap();
        text.push_str("0000 {\"kind\":\"snapshot\"}\n");
        std::fs::write(&seg, text).unwrap();
        for state in [
            None,
            Some(State::Pending),
            Some(State::Applied),
            Some(State::Committed),
            Some(State::Recorded),
            Some(State::Deleted),
        ] {
            let b = crate::domain::d("b.example");
            for domain in [None, Some(&b)] {
                let (rows, damage) = store.list(domain.map(std::slice::from_ref), state).unwrap();
                let shown = crate::store::Shown {
                    state,
                    ..Default::default()
                };
                let (listings, compact_damage) = store
                    .listings(domain.map(std::slice::from_ref), &shown)
                    .unwrap();
                assert_eq!(damage, compact_damage);
                assert_eq!(rows.len(), listings.iter().map(|l| l.len()).sum::<usize>());
                let mut out = Vec::new();
                let now = jiff::Timestamp::now().as_second();
                let listed = crate::store::Listed::from(listings);
                write_snapshots_table(&listed, now, false, &OwedIds::new(), &mut out).unwrap();
                assert_eq!(
                    String::from_utf8(out).unwrap(),
                    reference(&rows, now, false),
                    "{state:?} {domain:?}"
                );
                // The wide table: whole rows read twice, in the listings' order.
                let mut wide = crate::view::table::Streamed::new(&WIDE_HEADER, false);
                store
                    .each_row(&listed, |s| {
                        wide.measure(&wide_cells(&s, now, &OwedIds::new()));
                        Ok(())
                    })
                    .unwrap();
                let mut out = Vec::new();
                wide.write_header(&mut out).unwrap();
                store
                    .each_row(&listed, |s| {
                        wide.write(&wide_cells(&s, now, &OwedIds::new()), &mut out)
                            .unwrap();
                        Ok(())
                    })
                    .unwrap();
                assert_eq!(
                    String::from_utf8(out).unwrap(),
                    reference(&rows, now, true),
                    "{state:?} {domain:?}"
                );
            }
        }
    }
}

/// `snapshots show -o json`: the snapshot, its state history and its inventory.
#[derive(serde::Serialize)]
struct Shown<'a> {
    snapshot: &'a crate::store::Snapshot,
    history: &'a [crate::store::StateRecord],
    inventory: &'a crate::inventory::ClusterInventory,
}

/// `snapshots show -o json`.
///
/// # Errors
/// The document cannot be encoded.
pub fn shown_json(
    snap: &crate::store::Snapshot,
    inventory: &crate::inventory::ClusterInventory,
) -> crate::Result<String> {
    crate::inventory::render::to_json(&Shown {
        snapshot: snap,
        history: &snap.history,
        inventory,
    })
}

/// `snapshots show`: the header comment, then the inventory's YAML.
///
/// # Errors
/// The inventory cannot be encoded.
pub fn shown_yaml(
    snap: &crate::store::Snapshot,
    inventory: &crate::inventory::ClusterInventory,
) -> crate::Result<String> {
    let mut out = snapshot_header(snap);
    out.push_str(&crate::inventory::render::to_yaml(inventory)?);
    Ok(out)
}

/// `snapshots verify -o json`: the counts and every finding (`schemaVersion` 1).
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct VerifyJson<'a> {
    schema_version: u32,
    store: String,
    domains: usize,
    snapshots: usize,
    objects: usize,
    problems: Vec<&'a str>,
    /// Incomplete last records (a write interrupted by a crash), ignored.
    torn_tails: Vec<serde_json::Value>,
}

/// `snapshots verify -o json`.
///
/// # Errors
/// The document cannot be encoded.
pub fn verified_json(
    store: &std::path::Path,
    verified: &crate::store::gc::Verified,
) -> crate::Result<String> {
    use crate::store::gc::Finding;
    let mut doc = VerifyJson {
        schema_version: 1,
        store: store.display().to_string(),
        domains: verified.domains,
        snapshots: verified.snapshots,
        objects: verified.objects,
        problems: Vec::new(),
        torn_tails: Vec::new(),
    };
    for finding in &verified.findings {
        match finding {
            Finding::Problem(message) => doc.problems.push(message),
            Finding::TornTail { journal, bytes } => doc.torn_tails.push(
                serde_json::json!({"journal": journal.display().to_string(), "bytes": bytes}),
            ),
        }
    }
    crate::inventory::render::to_json(&doc)
}

/// A finding of `snapshots verify`, said on stderr.
pub fn finding(finding: &crate::store::gc::Finding) -> String {
    match finding {
        crate::store::gc::Finding::Problem(message) => message.clone(),
        crate::store::gc::Finding::TornTail { journal, bytes } => format!(
            "{}: incomplete last record ({bytes} bytes, a write interrupted by a crash) — ignored",
            journal.display()
        ),
    }
}

/// `snapshots verify`'s verdict: the counts, and "verified" or how many problems.
pub fn verified_line(store: &std::path::Path, verified: &crate::store::gc::Verified) -> String {
    format!(
        "{}: {} snapshot(s), {} object(s) in {} domain(s): {}\n",
        store.display(),
        verified.snapshots,
        verified.objects,
        verified.domains,
        match verified.problems() {
            0 => "verified".to_string(),
            n => format!("{n} problem(s)"),
        }
    )
}

/// One row of `snapshots gc -o json`.
#[derive(serde::Serialize)]
pub struct GcRow<'a> {
    pub domain: &'a str,
    pub id: &'a str,
    pub state: &'a str,
    pub deleted: bool,
}

/// What `snapshots export` left out of the archive, a warning each (bounded: the rest
/// counted).
pub fn left_out_lines(left: &crate::store::export::LeftOut) -> Vec<String> {
    let mut lines: Vec<String> = left
        .lines
        .iter()
        .map(|line| format!("left out of the archive: {line}"))
        .collect();
    if left.more > 0 {
        lines.push(format!(
            "left out of the archive: … and {} more (all counted in its LEFT-OUT entry)",
            left.more
        ));
    }
    lines
}

/// What `snapshots export` wrote, of `what` (a domain, or how many).
pub fn exported_line(
    exported: &crate::store::export::Exported,
    what: &str,
    file: &std::path::Path,
) -> String {
    format!(
        "exported {} record(s) and {} object(s) of {what} to {}",
        exported.records,
        exported.objects,
        file.display()
    )
}

/// What `snapshots import` added, folded and kept.
pub fn imported_line(imported: &crate::store::export::Imported, file: &std::path::Path) -> String {
    let orphaned = match imported.orphaned {
        0 => String::new(),
        n => format!("; {n} left out (their snapshot is in neither the archive nor the store)"),
    };
    format!(
        "imported {} record(s) from {}: {} snapshot(s), {} state change(s), {} repeated publish(es) folded into their snapshot(s); {} already held{orphaned}; the store's {} record(s) untouched",
        imported.added,
        file.display(),
        imported.snapshots,
        imported.changes,
        imported.folded,
        imported.already,
        imported.kept
    )
}
