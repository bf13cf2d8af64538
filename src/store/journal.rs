//! The journal line codec — `<sha256 of the JSON> <JSON>\n` — and reading a whole journal
//! (the store's own, or an exported one) back into snapshots.
//!
//! Pure: bytes in, records out; the file handling is the store's.

use super::fold::Fold;
use super::record::{
    Damage, EventRecord, Journal, Record, Snapshot, SnapshotId, State, StateRecord,
};
use crate::util::hash::hex_sha256;
use std::collections::HashMap;
use std::path::Path;

/// One journal line: `<sha256 of the JSON> <JSON>\n`.
///
/// # Errors
/// serde's, which these record types do not produce; never an empty line instead.
pub fn encode(record: &Record) -> Result<String, serde_json::Error> {
    let json = serde_json::to_string(record)?;
    Ok(format!("{} {json}\n", hex_sha256(json.as_bytes())))
}

/// The journal lines of `records`, one after the other.
///
/// # Errors
/// As [`encode`].
pub fn encode_all<'a>(
    records: impl IntoIterator<Item = &'a Record>,
) -> Result<String, serde_json::Error> {
    records.into_iter().map(encode).collect()
}

/// What is wrong with a journal line (a damaged line's description, kept with it).
#[derive(Debug, thiserror::Error)]
pub enum LineError {
    #[error("not UTF-8")]
    NotUtf8,
    #[error("no checksum")]
    NoChecksum,
    #[error("checksum mismatch (damaged or edited)")]
    Checksum,
    /// The checksum verifies but the record does not parse (serde's words).
    #[error("unreadable record: {0}")]
    Unreadable(serde_json::Error),
    #[error("incomplete last line")]
    Incomplete,
}

/// Reads one journal line (without its newline), checking its checksum.
///
/// # Errors
/// What is wrong with the line.
pub fn decode(line: &[u8]) -> std::result::Result<Record, LineError> {
    let text = std::str::from_utf8(line).map_err(|_| LineError::NotUtf8)?;
    let (sum, json) = text.split_once(' ').ok_or(LineError::NoChecksum)?;
    if !checksum_matches(sum, json.as_bytes()) {
        return Err(LineError::Checksum);
    }
    if let Some(record) = parse_direct(json) {
        return Ok(record);
    }
    serde_json::from_str(json).map_err(LineError::Unreadable)
}

/// The record of a line as clinv writes it — the `kind` tag first — parsed straight
/// into its struct, without the buffering of every value that the tagged enum needs
/// (most of the time of reading a journal). `None` for anything else (another layout,
/// a second `kind`, an error): the caller parses it the general way, whose answer
/// (value or error message) is the one that counts.
fn parse_direct(json: &str) -> Option<Record> {
    fn rest<'a>(json: &'a str, kind: &str) -> Option<&'a str> {
        let rest = json
            .strip_prefix("{\"kind\":\"")?
            .strip_prefix(kind)?
            .strip_prefix("\",")?;
        (!rest.contains("\"kind\"")).then_some(rest)
    }
    fn parse<T: serde::de::DeserializeOwned>(rest: &str) -> Option<T> {
        let mut text = String::with_capacity(rest.len() + 1);
        text.push('{');
        text.push_str(rest);
        serde_json::from_str(&text).ok()
    }
    if let Some(r) = rest(json, "snapshot") {
        parse(r).map(Record::Snapshot)
    } else if let Some(r) = rest(json, "state") {
        parse(r).map(Record::State)
    } else {
        None
    }
}

/// Whether `sum` is the lowercase hex sha256 of `json` (what [`hex_sha256`] writes),
/// compared without formatting the digest.
pub(super) fn checksum_matches(sum: &str, json: &[u8]) -> bool {
    use sha2::Digest;
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let sum = sum.as_bytes();
    if sum.len() != 64 {
        return false;
    }
    let digest = sha2::Sha256::digest(json);
    digest.iter().zip(sum.chunks_exact(2)).all(|(b, pair)| {
        pair[0] == HEX[usize::from(b >> 4)] && pair[1] == HEX[usize::from(b & 0xf)]
    })
}

/// Lines decoded together, split across the cores: large enough to keep both busy,
/// small enough that a batch (at most this many lines of [`MAX_LINE`]) stays bounded.
const BATCH: usize = 4096;
/// Bytes of lines held for one batch at most.
const BATCH_BYTES: usize = 8 << 20;

/// Decodes a batch of lines, on up to two threads; results in the lines' order.
fn decode_batch(lines: &[Vec<u8>]) -> Vec<std::result::Result<Record, LineError>> {
    on_two_threads(lines, decode)
}

/// `f` of every line, on up to two threads (the machine's cores, at most two: a journal
/// read is memory-bound beyond that); results in the lines' order. A panicking half is
/// redone on this thread.
pub(super) fn on_two_threads<'a, T: Send>(
    lines: &'a [Vec<u8>],
    f: impl Fn(&'a [u8]) -> T + Sync,
) -> Vec<T> {
    // Asked once: the answer reads the cgroup files under /proc each time, which cost
    // `log -A` of a thousand small domains a fifth of its time.
    static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    let threads =
        *THREADS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get().min(2)));
    // A second thread pays for itself on a large batch only (a small domain's journal
    // is one batch of a few hundred lines, and `log -A` already reads two domains at once).
    let bytes: usize = lines.iter().map(Vec::len).sum();
    if threads < 2 || lines.len() < 64 || bytes < 1 << 20 {
        return lines.iter().map(|l| f(l)).collect();
    }
    let (first, second) = lines.split_at(lines.len() / 2);
    std::thread::scope(|scope| {
        let other = scope.spawn(|| second.iter().map(|l| f(l)).collect::<Vec<_>>());
        let mut out: Vec<_> = first.iter().map(|l| f(l)).collect();
        match other.join() {
            Ok(rest) => out.extend(rest),
            Err(_) => out.extend(second.iter().map(|l| f(l))),
        }
        out
    })
}

/// Longest journal line (one record). A longer one is damage, skipped without being
/// held in memory.
pub const MAX_LINE: usize = 1 << 20;

/// What reads journal lines, file after file, in line order: [`Builder`] folds them
/// into snapshots; `gc` and `export` stream them through ([`read_lines`] feeds both).
pub trait Lines {
    /// A line that verified (1-based `line_no`), with its bytes (no newline).
    fn record(&mut self, path: &Path, line_no: usize, record: Record, raw: &[u8]);
    /// A line that did not verify, with what is wrong with it.
    fn damage(&mut self, path: &Path, line_no: usize, raw: &[u8], what: String);
    /// The incomplete last line of a file: `bytes` long.
    fn torn_tail(&mut self, bytes: u64);
    /// The torn tail counted so far, reset (a sealed file's is damage).
    fn take_torn_tail(&mut self) -> u64;
    /// Whether a whole line is wanted at all: one that is not is neither decoded nor
    /// checked (a reader of a few records; what it skips is another pass's to report).
    fn wants(&self, _raw: &[u8]) -> bool {
        true
    }
}

/// Folds journal lines, file after file, into snapshots: damaged lines are reported, an
/// incomplete last line of the last file is counted, never fatal.
///
/// Memory grows with the snapshots, not with the bytes read.
#[derive(Default)]
pub struct Builder {
    journal: Journal,
    index: HashMap<SnapshotId, usize>,
    /// State changes read before their snapshot's record (or of no snapshot at all),
    /// in line order; the rest go straight to their snapshot's history.
    early: HashMap<SnapshotId, Vec<StateRecord>>,
    /// Events read before their snapshot's record, in line order.
    early_events: HashMap<SnapshotId, Vec<EventRecord>>,
    /// Snapshots that may be pending (recorded for the cluster, or re-queued, since a
    /// `supersede` record last looked): what the next one looks through.
    maybe_pending: Vec<usize>,
    head_only: bool,
}

impl Builder {
    /// Only tracks the head (newest time, largest seq): memory stays constant.
    pub fn head_only() -> Builder {
        Builder {
            head_only: true,
            ..Builder::default()
        }
    }

    /// The newest recorded time and the largest `seq` so far.
    pub fn head(&self) -> Option<(String, u64)> {
        self.journal.head.clone()
    }

    /// One line of `path` (1-based `line_no`) without its newline.
    pub fn line(&mut self, path: &Path, line_no: usize, line: &[u8]) {
        match decode(line) {
            Ok(record) => self.record(path, line_no, record, line),
            Err(what) => self.damage(path, line_no, line, what.to_string()),
        }
    }
}

impl Lines for Builder {
    fn take_torn_tail(&mut self) -> u64 {
        std::mem::take(&mut self.journal.torn_tail)
    }

    /// A damaged line: reported, and every object id it may name remembered.
    fn damage(&mut self, path: &Path, line_no: usize, line: &[u8], what: String) {
        if self.head_only {
            return;
        }
        self.journal.damaged_ids.extend(hex_words(line));
        self.journal.damage.push(Damage {
            path: path.to_path_buf(),
            line: line_no,
            what,
        });
    }

    /// The incomplete last line of the newest segment (a crash mid-append).
    fn torn_tail(&mut self, bytes: u64) {
        self.journal.torn_tail = bytes;
    }

    /// A record that verified; version 1 records take their line number as `seq`.
    fn record(&mut self, _path: &Path, line_no: usize, record: Record, _raw: &[u8]) {
        self.add(line_no, record);
    }
}

/// The id of a line written in clinv's own layout: `<sum> {"kind":"WORD","v":DIGITS,"id":"ID"`;
/// `None` for any other shape.
fn clinv_layout_id(raw: &[u8]) -> Option<&str> {
    let json = &raw[raw.iter().position(|b| *b == b' ')? + 1..];
    let rest = json.strip_prefix(b"{\"kind\":\"")?;
    let rest = &rest[rest.iter().position(|b| *b == b'"')?..];
    let rest = rest.strip_prefix(b"\",\"v\":")?;
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    let rest = rest[digits..].strip_prefix(b",\"id\":\"")?;
    let id = &rest[..rest.iter().position(|b| *b == b'"')?];
    std::str::from_utf8(id).ok()
}

/// A [`Builder`] of only the snapshots `wanted` names (their records, state changes and
/// events; no damage, no head): a window of a listing built whole, in the memory of
/// the window.
pub struct Only<'a> {
    wanted: &'a std::collections::HashSet<&'a str>,
    builder: Builder,
}

impl<'a> Only<'a> {
    pub fn new(wanted: &'a std::collections::HashSet<&'a str>) -> Only<'a> {
        Only {
            wanted,
            builder: Builder::default(),
        }
    }

    /// The wanted snapshots, folded as [`Builder::finish`] folds them.
    pub fn finish(self, path: &Path) -> Journal {
        self.builder.finish(path)
    }
}

impl Lines for Only<'_> {
    /// A line in clinv's layout (`<sum> {"kind":"…","v":N,"id":"…",…`) whose id is not
    /// wanted is skipped undecoded; any other line is decoded and judged by its record.
    fn wants(&self, raw: &[u8]) -> bool {
        clinv_layout_id(raw).is_none_or(|id| self.wanted.contains(id))
    }

    fn record(&mut self, path: &Path, line_no: usize, record: Record, raw: &[u8]) {
        // A `supersede` record names no snapshot and may change any wanted one.
        if matches!(record, Record::Supersede(_))
            || record.id().is_some_and(|id| self.wanted.contains(id))
        {
            self.builder.record(path, line_no, record, raw);
        }
    }

    fn damage(&mut self, _path: &Path, _line_no: usize, _raw: &[u8], _what: String) {}

    fn torn_tail(&mut self, _bytes: u64) {}

    fn take_torn_tail(&mut self) -> u64 {
        0
    }
}

impl Builder {
    fn bump_head(&mut self, at: &str, seq: u64) {
        let head = self
            .journal
            .head
            .get_or_insert_with(|| (at.to_string(), seq));
        if at > head.0.as_str() {
            head.0 = at.to_string();
        }
        head.1 = head.1.max(seq);
    }

    /// A record that verified; version 1 records take their line number as `seq`.
    fn add(&mut self, line_no: usize, record: Record) {
        let seq = record.seq().unwrap_or(line_no as u64);
        self.bump_head(record.at(), seq);
        if self.head_only {
            return;
        }
        match record {
            Record::Snapshot(s) => {
                if self.index.contains_key(&s.id) {
                    return; // imported twice: the first record wins
                }
                self.index
                    .insert(s.id.clone(), self.journal.snapshots.len());
                // Pending when recorded for the cluster, or by a change read before it.
                self.maybe_pending.push(self.journal.snapshots.len());
                self.journal.snapshots.push(Snapshot {
                    state: State::Pending,
                    order_seq: seq,
                    cluster_state: s.cluster.then_some(State::Pending),
                    pushed: None,
                    reason: None,
                    detail: None,
                    state_at: s.at.clone(),
                    commit: None,
                    registry: None,
                    history: self.early.remove(&s.id).unwrap_or_default(),
                    events: self.early_events.remove(&s.id).unwrap_or_default(),
                    record: s,
                });
            }
            // History in line order, as if every state change were added at the end.
            Record::State(st) => match self.index.get(&st.id) {
                Some(&i) => {
                    if st.state == State::Pending {
                        self.maybe_pending.push(i);
                    }
                    self.journal.snapshots[i].history.push(st);
                }
                None => self.early.entry(st.id.clone()).or_default().push(st),
            },
            Record::Supersede(mark) => self.supersede(&mark, seq),
            Record::Event(ev) => match self.index.get(&ev.id) {
                Some(&i) => self.journal.snapshots[i].events.push(ev),
                None => self.early_events.entry(ev.id.clone()).or_default().push(ev),
            },
            Record::Repair(_) | Record::Head(_) => {}
        }
    }

    /// A `supersede` record: the `superseded` change it stands for, added to the history
    /// of each snapshot pending now (by the lines so far) and ordered before its bound.
    fn supersede(&mut self, mark: &super::record::SupersedeRecord, seq: u64) {
        let mut candidates = std::mem::take(&mut self.maybe_pending);
        candidates.sort_unstable();
        candidates.dedup();
        candidates.retain(|&i| {
            let snap = &mut self.journal.snapshots[i];
            if !pending_now(snap) {
                return false;
            }
            let (at, seq_of, id) = snap.order_key();
            if !mark.covers(at, seq_of, id) {
                return true;
            }
            let id = snap.record.id.clone();
            snap.history.push(StateRecord {
                seq: Some(seq),
                by: Some(mark.by.clone()),
                ..StateRecord::new(&id, &mark.at, State::Superseded)
            });
            false
        });
        self.maybe_pending = candidates;
    }

    /// The snapshots in the order (at, seq, id), each with its state.
    pub fn finish(mut self, _path: &Path) -> Journal {
        // What is left early is a state change of a snapshot a gc left out of the
        // journal (a commit that read it before gc deleted it): nothing left to change.
        self.early = HashMap::new();
        self.early_events = HashMap::new();
        self.maybe_pending = Vec::new();
        for snap in &mut self.journal.snapshots {
            fold(snap);
        }
        self.journal
            .snapshots
            .sort_by(|a, b| a.order_key().cmp(&b.order_key()));
        self.journal
    }
}

/// Applies a snapshot's state changes in recorded-time order (stable: lines of the same
/// time keep their order) through [`Fold::take`], keeping what it says of each: the
/// time, commit, references, reason and detail of the changes that count.
fn fold(snap: &mut Snapshot) {
    snap.history.sort_by(|a, b| a.at.cmp(&b.at));
    let mut fold = Fold::recorded(snap.record.cluster);
    for st in &snap.history {
        let took = fold.take(st.state, true);
        if took.state_time {
            snap.state_at.clone_from(&st.at);
        }
        if took.in_force {
            snap.reason = st.reason;
            snap.detail.clone_from(&st.detail);
        }
        match st.state {
            State::Committed if took.taken => {
                if st.commit.is_some() {
                    snap.commit.clone_from(&st.commit);
                }
                if st.pushed.is_some() {
                    snap.pushed.clone_from(&st.pushed);
                }
            }
            State::Pushed if took.taken => snap.registry.clone_from(&st.pushed),
            _ => {}
        }
    }
    snap.cluster_state = fold.cluster();
    snap.state = fold.state();
}

/// Whether the snapshot is pending by the state changes read so far (the fold of
/// [`fold`], of the cluster channel).
fn pending_now(snap: &Snapshot) -> bool {
    let mut changes: Vec<&StateRecord> = snap.history.iter().collect();
    changes.sort_by(|a, b| a.at.cmp(&b.at));
    let mut fold = Fold::recorded(snap.record.cluster);
    for st in changes {
        fold.take(st.state, true);
    }
    !fold.deleted() && fold.cluster() == Some(State::Pending)
}

/// Every maximal run of exactly 64 hex digits in `line`.
pub fn hex_words(line: &[u8]) -> Vec<String> {
    line.split(|b| !b.is_ascii_hexdigit())
        .filter(|w| w.len() == 64)
        .map(|w| String::from_utf8_lossy(w).to_ascii_lowercase())
        .collect()
}

/// Reads a domain's journal from its bytes (`path` names it in [`Damage`]): damaged
/// lines are reported, an incomplete last line is counted, never fatal.
pub fn parse_journal(path: &Path, bytes: &[u8]) -> Journal {
    let mut builder = Builder::default();
    read_lines(path, bytes, &mut builder).ok();
    builder.finish(path)
}

/// Feeds the lines of one file to `builder`, streaming; a line longer than
/// [`MAX_LINE`] is damage. Returns the number of lines.
///
/// # Errors
/// A read error.
pub fn read_lines(
    path: &Path,
    reader: impl std::io::Read,
    builder: &mut impl Lines,
) -> std::io::Result<usize> {
    let mut reader = std::io::BufReader::with_capacity(256 << 10, reader);
    let mut line = Vec::with_capacity(4096);
    let mut line_no = 0;
    // Lines waiting to be decoded (checksum and JSON), with their numbers; fed to the
    // builder in order, so the result is that of decoding them one by one.
    let mut batch: Vec<(usize, Vec<u8>)> = Vec::with_capacity(BATCH);
    let mut batch_bytes = 0;
    let flush = |batch: &mut Vec<(usize, Vec<u8>)>, builder: &mut dyn Lines| {
        let lines: Vec<Vec<u8>> = batch.iter_mut().map(|(_, l)| std::mem::take(l)).collect();
        let decoded = decode_batch(&lines);
        for (((no, _), line), result) in batch.drain(..).zip(&lines).zip(decoded) {
            match result {
                Ok(record) => builder.record(path, no, record, line),
                Err(what) => builder.damage(path, no, line, what.to_string()),
            }
        }
    };
    loop {
        line.clear();
        let (n, complete) = read_line(&mut reader, &mut line)?;
        if n == 0 {
            flush(&mut batch, builder);
            return Ok(line_no);
        }
        line_no += 1;
        if !complete {
            flush(&mut batch, builder);
            builder.torn_tail(n as u64);
            return Ok(line_no - 1);
        }
        if n > MAX_LINE + 1 {
            flush(&mut batch, builder);
            batch_bytes = 0;
            builder.damage(
                path,
                line_no,
                &line,
                format!("line of {n} bytes is over the limit ({MAX_LINE})"),
            );
        } else if !line.is_empty() && builder.wants(&line) {
            batch_bytes += line.len();
            batch.push((line_no, line.clone()));
            if batch.len() >= BATCH || batch_bytes >= BATCH_BYTES {
                flush(&mut batch, builder);
                batch_bytes = 0;
            }
        }
    }
}

/// Reads up to and without the next newline into `line`, keeping at most
/// [`MAX_LINE`] + 1 bytes of it. Returns the bytes consumed (with the newline) and
/// whether the line was complete.
pub fn read_line(
    reader: &mut impl std::io::BufRead,
    line: &mut Vec<u8>,
) -> std::io::Result<(usize, bool)> {
    let mut consumed = 0;
    loop {
        let buf = match reader.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            return Ok((consumed, false));
        }
        let (take, done) = match memchr_nl(buf) {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        let keep = take - usize::from(done);
        let room = (MAX_LINE + 1).saturating_sub(line.len());
        line.extend_from_slice(&buf[..keep.min(room)]);
        consumed += take;
        reader.consume(take);
        if done {
            return Ok((consumed, true));
        }
    }
}

fn memchr_nl(buf: &[u8]) -> Option<usize> {
    buf.iter().position(|b| *b == b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{SnapshotRecord, TargetRecord};

    fn general(json: &str) -> std::result::Result<Record, LineError> {
        serde_json::from_str(json).map_err(LineError::Unreadable)
    }

    #[test]
    fn the_direct_parse_agrees_with_the_tagged_one() {
        let snapshot = Record::Snapshot(SnapshotRecord {
            v: 2,
            id: "a1".into(),
            at: "2026-01-01T00:00:00.000Z".into(),
            seq: Some(7),
            cluster: false,
            domain: "d".into(),
            rendered_at: "2026-01-01T00:00:00.000Z".into(),
            spec_hash: "h".into(),
            lok8s_version: "1".into(),
            tool: "clinv \"0\"".into(),
            cr: "c".repeat(64),
            crd: "e".repeat(64),
            target: Some(TargetRecord {
                server: "https://x".into(),
                context: Some("kind".into()),
                kubeconfig: vec!["/home/u/.kube/x.yaml".into()],
            }),
            host: Some("build-1.example".into()),
        });
        let state = Record::State(StateRecord {
            reason: Some(crate::delivery::Reason::Conflict),
            detail: Some("the \"kind\" field".into()),
            by: Some("b".into()),
            ..StateRecord::new(&"a1".into(), "2026-01-01T00:00:01.000Z", State::Superseded)
        });
        for record in [snapshot, state] {
            let line = encode(&record).unwrap();
            assert_eq!(
                decode(line.trim_end().as_bytes()).ok(),
                Some(record.clone())
            );
            let json = serde_json::to_string(&record).unwrap();
            assert_eq!(general(&json).ok(), Some(record));
        }
        // Not the usual layout, a second tag, a wrong value: the general parse answers.
        for json in [
            r#"{"kind":"state","v":1,"id":"a","at":"t","state":"applied","kind":"snapshot"}"#,
            r#"{"kind":"state","v":1,"id":"a","at":"t","state":"nope"}"#,
            r#"{ "kind":"state","v":1,"id":"a","at":"t","state":"applied"}"#,
            r#"{"kind":"state","v":1,"id":"a","at":"t","state":"applied"} x"#,
        ] {
            let line = format!("{} {json}", hex_sha256(json.as_bytes()));
            let text = |r: std::result::Result<Record, LineError>| r.map_err(|e| e.to_string());
            assert_eq!(text(decode(line.as_bytes())), text(general(json)), "{json}");
        }
    }

    #[test]
    fn state_changes_read_before_their_snapshot_keep_line_order() {
        let at = "2026-01-01T00:00:00.000Z";
        let snap = Record::Snapshot(SnapshotRecord {
            v: 2,
            id: "a1".into(),
            at: at.into(),
            seq: Some(1),
            cluster: true,
            domain: "d".into(),
            rendered_at: at.into(),
            spec_hash: "h".into(),
            lok8s_version: "1".into(),
            tool: "t".into(),
            cr: "c".into(),
            crd: "e".into(),
            target: None,
            host: None,
        });
        let st = |state, detail: &str| {
            Record::State(StateRecord {
                detail: Some(detail.into()),
                ..StateRecord::new(&"a1".into(), at, state)
            })
        };
        let text: String = [
            st(State::Applied, "1"),
            st(State::Committed, "orphan?"),
            snap,
            st(State::Superseded, "3"),
            st(State::Pending, "4"),
            Record::State(StateRecord::new(&"gone".into(), at, State::Applied)),
        ]
        .iter()
        .map(|r| encode(r).unwrap())
        .collect();
        let journal = parse_journal(Path::new("j"), text.as_bytes());
        let details: Vec<&str> = journal.snapshots[0]
            .history
            .iter()
            .filter_map(|h| h.detail.as_deref())
            .collect();
        assert_eq!(details, ["1", "orphan?", "3", "4"]);
        assert_eq!(journal.snapshots[0].state, State::Pending);
        assert_eq!(journal.snapshots.len(), 1);
    }

    #[test]
    fn batches_keep_line_order_and_damage() {
        let mut text = String::new();
        for i in 0..(BATCH * 2 + 5) {
            let mut st = StateRecord::new(
                &"x".into(),
                &format!("2026-01-01T00:00:{:02}.000Z", i % 60),
                State::Applied,
            );
            st.seq = Some(i as u64 + 1);
            text.push_str(&encode(&Record::State(st)).unwrap());
            if i % 1000 == 3 {
                text.push_str("garbage\n");
            }
        }
        let journal = parse_journal(Path::new("j"), text.as_bytes());
        let lines: Vec<usize> = journal.damage.iter().map(|d| d.line).collect();
        let expected: Vec<usize> = text
            .lines()
            .enumerate()
            .filter(|(_, l)| *l == "garbage")
            .map(|(i, _)| i + 1)
            .collect();
        assert_eq!(lines, expected);
        assert_eq!(journal.head.map(|h| h.1), Some(BATCH as u64 * 2 + 5));
    }
}
