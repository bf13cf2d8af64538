//! The journal line codec — `<sha256 of the JSON> <JSON>\n` — and reading a whole
//! journal (the store's own, or an exported one) back into snapshots. Pure: bytes in,
//! records out; the file handling is the store's.

use super::record::{Damage, Journal, Record, Snapshot, State};
use crate::project::spec::hex_sha256;
use std::collections::HashMap;
use std::path::Path;

/// One journal line: `<sha256 of the JSON> <JSON>\n`.
pub fn encode(record: &Record) -> String {
    let json = serde_json::to_string(record).unwrap_or_default();
    format!("{} {json}\n", hex_sha256(json.as_bytes()))
}

/// Splits the journal into lines with their parse results (1-based line numbers).
/// An incomplete last line is left out.
pub(super) fn records(bytes: &[u8]) -> Vec<(usize, std::result::Result<Record, String>)> {
    let complete = match bytes.iter().rposition(|b| *b == b'\n') {
        Some(i) => &bytes[..=i],
        None => &bytes[..0],
    };
    complete
        .split(|b| *b == b'\n')
        .enumerate()
        .filter(|(_, l)| !l.is_empty())
        .map(|(i, l)| (i + 1, decode(l)))
        .collect()
}

/// Reads one journal line (without its newline), checking its checksum.
///
/// # Errors
/// What is wrong with the line.
pub fn decode(line: &[u8]) -> std::result::Result<Record, String> {
    let text = std::str::from_utf8(line).map_err(|_| "not UTF-8".to_string())?;
    let (sum, json) = text.split_once(' ').ok_or("no checksum")?;
    if hex_sha256(json.as_bytes()) != sum {
        return Err("checksum mismatch (damaged or edited)".into());
    }
    serde_json::from_str(json).map_err(|e| format!("unreadable record: {e}"))
}

/// Reads a domain's journal from its bytes (`path` names it in [`Damage`]): damaged
/// lines are reported, an incomplete last line is counted, never fatal.
pub fn parse_journal(path: &Path, bytes: &[u8]) -> Journal {
    let mut journal = Journal {
        torn_tail: bytes.len() as u64
            - bytes
                .iter()
                .rposition(|b| *b == b'\n')
                .map_or(0, |i| i as u64 + 1),
        ..Journal::default()
    };
    let mut index: HashMap<String, usize> = HashMap::new();
    for (line_no, parsed) in records(bytes) {
        let record = match parsed {
            Ok(r) => r,
            Err(what) => {
                journal.damage.push(Damage {
                    path: path.to_path_buf(),
                    line: line_no,
                    what,
                });
                continue;
            }
        };
        match record {
            Record::Snapshot(s) => {
                if index.contains_key(&s.id) {
                    continue; // imported twice: the first record wins
                }
                index.insert(s.id.clone(), journal.snapshots.len());
                journal.snapshots.push(Snapshot {
                    state: State::Pending,
                    reason: None,
                    detail: None,
                    state_at: s.at.clone(),
                    commit: None,
                    history: Vec::new(),
                    record: s,
                });
            }
            Record::State(st) => {
                let Some(&i) = index.get(&st.id) else {
                    journal.damage.push(Damage {
                        path: path.to_path_buf(),
                        line: line_no,
                        what: format!("state change for unknown snapshot {}", st.id),
                    });
                    continue;
                };
                let snap = &mut journal.snapshots[i];
                if snap.state == State::Deleted {
                    // Deleted is final: its objects may be gone. A late state change (a
                    // commit that read the snapshot before gc deleted it) is history only.
                    snap.history.push(st);
                    continue;
                }
                snap.state = st.state;
                snap.reason = st.reason;
                snap.detail = st.detail.clone();
                snap.state_at = st.at.clone();
                if st.commit.is_some() {
                    snap.commit = st.commit.clone();
                }
                snap.history.push(st);
            }
            Record::Repair(_) => {}
        }
    }
    journal
}

/// Parses an exported journal, refusing any line that does not verify.
///
/// # Errors
/// `(line, what)` of the first bad line.
pub fn parse_export(bytes: &[u8]) -> std::result::Result<Vec<Record>, (usize, String)> {
    if !bytes.is_empty() && bytes.last() != Some(&b'\n') {
        return Err((
            bytes.split(|b| *b == b'\n').count(),
            "incomplete last line".into(),
        ));
    }
    records(bytes)
        .into_iter()
        .map(|(line, r)| r.map_err(|what| (line, what)))
        .collect()
}
