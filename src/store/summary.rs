//! Segment summaries: a cache of what a listing (`snapshots list`, `log`) takes from a
//! sealed segment, so a listing of a long history does not checksum and parse every
//! line again.
//!
//! ```text
//! <domain>/segments/<g>/000003.log   a sealed segment (never written again)
//! <domain>/segments/<g>/000003.sum   its summary
//! ```
//!
//! A summary holds the segment's events in line order — each snapshot record's listing
//! fields, each state change, each damaged line (with its line number and what is wrong)
//! — exactly what [`scan`](super::scan) derives from the lines, so a listing fed from it
//! is the listing fed from the lines (a unit test holds the two equal). Layout:
//! `clinvsum` + the segment's identity (32 bytes) + blocks (`u32` length, events; a
//! zero length ends them) + the sha256 of everything before it.
//!
//! The identity is a sha256 over this format's version, clinv's version, the state and
//! reason names (their numbering), and the segment's size, mtime and ctime (ns; the
//! kernel sets ctime on every change, and nothing can set it back), device, inode,
//! first and last 4 KiB: a summary is used only for the very file it was made from,
//! unchanged.
//! A summary that is missing, of another identity or version, damaged or unreadable is
//! ignored (the segment is read line by line): it is a cache and never changes an
//! answer. Only sealed segments have one (the active segment still grows).
//!
//! Readers write the summaries they are missing: events go to a temporary file next to
//! the segment while the lines are read (constant memory), and the files are renamed
//! into place only if the domain lock is free at once (otherwise they are removed) —
//! a reader never waits for, or fails because of, a summary. A generation removed by
//! `gc` takes its summaries with it; a new generation starts without.
#![allow(clippy::disallowed_methods)] // the store: the one owner of its files

use super::record::{Record, State};
use super::scan::{self, Ev, Field, Listing, Snap};
use super::segments::Layout;
use super::segments::open_read;
use crate::delivery::Reason;
use sha2::{Digest, Sha256};
use std::borrow::Cow;
use std::collections::HashMap;
use std::fs::{self, File};
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

const MAGIC: &[u8; 8] = b"clinvsum";
/// Bump when what a summary holds, or how a line becomes events, changes.
const VERSION: u32 = 6;
const HEADER: usize = MAGIC.len() + 32;
const DIGEST: usize = 32;
/// Events are written in blocks of about this size.
const BLOCK: usize = 64 << 10;
/// A block longer than this is damage (one event holds one line's strings at most).
const MAX_BLOCK: usize = 8 << 20;
/// The bytes of each end of a segment its identity covers.
const ENDS: u64 = 4096;

const SNAPSHOT: u8 = 1;
const STATE: u8 = 2;
const DAMAGE: u8 = 3;
const SUPERSEDE: u8 = 4;

/// The summary of `segment`: `000003.log` → `000003.sum`.
pub fn path_of(segment: &Path) -> PathBuf {
    segment.with_extension("sum")
}

/// What a summary must match: see the module documentation.
#[cfg(unix)]
fn identity(file: &File) -> io::Result<[u8; 32]> {
    use std::os::unix::fs::{FileExt, MetadataExt};
    let meta = file.metadata()?;
    let mut h = Sha256::new();
    h.update(VERSION.to_le_bytes());
    h.update(env!("CARGO_PKG_VERSION").as_bytes());
    for name in State::ALL
        .iter()
        .map(|s| s.as_str())
        .chain(Reason::ALL.iter().map(|r| r.as_str()))
    {
        h.update(name.as_bytes());
        h.update([0]);
    }
    let len = meta.len();
    for n in [
        len,
        meta.mtime() as u64,
        meta.mtime_nsec() as u64,
        meta.ctime() as u64,
        meta.ctime_nsec() as u64,
        meta.ino(),
        meta.dev(),
    ] {
        h.update(n.to_le_bytes());
    }
    let mut buf = vec![0u8; ENDS as usize];
    for from in [0, len.saturating_sub(ENDS)] {
        let n = (len - from).min(ENDS) as usize;
        file.read_exact_at(&mut buf[..n], from)?;
        h.update(&buf[..n]);
    }
    Ok(h.finalize().into())
}

#[cfg(not(unix))]
fn identity(_file: &File) -> io::Result<[u8; 32]> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn text(out: &mut Vec<u8>, s: &str) {
    varint(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

/// A string packed in 8 bytes when it can be, else 8 zero bytes and the text.
fn packed(out: &mut Vec<u8>, f: Field<'_>) {
    let s = match f {
        Field::Packed(v) => return out.extend_from_slice(&v.to_le_bytes()),
        Field::Text(s) => s,
    };
    match scan::pack(s) {
        Some(v) => out.extend_from_slice(&v.to_le_bytes()),
        None => {
            out.extend_from_slice(&0u64.to_le_bytes());
            text(out, s);
        }
    }
}

/// Writes a segment's summary while its lines are read.
pub struct Writer {
    tmp: PathBuf,
    target: PathBuf,
    identity: [u8; 32],
    out: BufWriter<File>,
    hasher: Sha256,
    block: Vec<u8>,
    names: HashMap<String, u64>,
    failed: bool,
}

impl Writer {
    /// Starts the summary of `segment` (`file`, open, at its start); `None` when it
    /// cannot be written (nothing to report: a summary is a cache).
    pub fn create(segment: &Path, file: &File) -> Option<Writer> {
        static COUNT: AtomicU64 = AtomicU64::new(0);
        let identity = identity(file).ok()?;
        let target = path_of(segment);
        let name = target.file_name()?.to_string_lossy().into_owned();
        let tmp = target.with_file_name(format!(
            ".{name}.tmp.{}.{}",
            std::process::id(),
            COUNT.fetch_add(1, Ordering::Relaxed)
        ));
        let mut options = fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let file = options.open(&tmp).ok()?;
        let mut w = Writer {
            tmp,
            target,
            identity,
            out: BufWriter::with_capacity(256 << 10, file),
            hasher: Sha256::new(),
            block: Vec::with_capacity(BLOCK + 4096),
            names: HashMap::new(),
            failed: false,
        };
        w.emit(MAGIC.as_slice());
        w.emit(&identity);
        Some(w)
    }

    fn emit(&mut self, bytes: &[u8]) {
        self.hasher.update(bytes);
        if !self.failed && self.out.write_all(bytes).is_err() {
            self.failed = true;
        }
    }

    fn flush_block(&mut self) {
        let block = std::mem::take(&mut self.block);
        self.emit(&(block.len() as u32).to_le_bytes());
        self.emit(&block);
        self.block = block;
        self.block.clear();
    }

    /// A name (domain, target, object id): its number, and the text the first time.
    fn name(&mut self, s: &str) {
        match self.names.get(s) {
            Some(&i) => varint(&mut self.block, i),
            None => {
                let i = self.names.len() as u64;
                self.names.insert(s.to_string(), i);
                varint(&mut self.block, i);
                text(&mut self.block, s);
            }
        }
    }

    /// The next event of the segment.
    pub fn push(&mut self, ev: &Ev<'_>) {
        match ev {
            Ev::Snapshot(s) => {
                self.block.push(SNAPSHOT);
                self.block.push(
                    u8::from(s.cluster)
                        | u8::from(s.target.is_some()) << 1
                        | u8::from(s.host.is_some()) << 2,
                );
                packed(&mut self.block, s.id);
                packed(&mut self.block, s.at);
                packed(&mut self.block, s.rendered_at);
                varint(&mut self.block, s.seq);
                self.name(s.domain);
                if let Some(t) = s.target {
                    self.name(t);
                }
                if let Some(h) = s.host {
                    self.name(h);
                }
                self.name(s.cr);
            }
            Ev::State {
                id,
                at,
                state,
                reason,
            } => {
                self.block.push(STATE);
                packed(&mut self.block, *id);
                packed(&mut self.block, *at);
                self.block.push(index_of(&State::ALL, state));
                self.block
                    .push(reason.map_or(0, |r| index_of(&Reason::ALL, &r) + 1));
            }
            Ev::Damage { line, what } => {
                self.block.push(DAMAGE);
                varint(&mut self.block, *line as u64);
                text(&mut self.block, what);
            }
            Ev::Supersede {
                at,
                by,
                by_at,
                by_seq,
            } => {
                self.block.push(SUPERSEDE);
                packed(&mut self.block, *at);
                packed(&mut self.block, *by);
                packed(&mut self.block, *by_at);
                varint(&mut self.block, *by_seq);
            }
        }
        if self.block.len() >= BLOCK {
            self.flush_block();
        }
    }

    /// Ends the summary; `(temporary file, summary)` to put in place if it is whole and
    /// the segment (`file`) did not change while it was read.
    pub fn finish(mut self, file: &File, counts: Counts) -> Option<(PathBuf, PathBuf)> {
        if !self.block.is_empty() {
            self.flush_block();
        }
        self.flush_block(); // the empty block: the end
        let trailer = counts.trailer(&self.identity);
        self.emit(&trailer);
        let digest: [u8; 32] = std::mem::take(&mut self.hasher).finalize().into();
        let whole = !self.failed
            && self.out.write_all(&digest).is_ok()
            && self.out.flush().is_ok()
            && identity(file).is_ok_and(|id| id == self.identity);
        if whole {
            Some((self.tmp, self.target))
        } else {
            let _ = fs::remove_file(&self.tmp);
            None
        }
    }
}

/// What a sealed segment adds to a listing read from the start: its rows (snapshots not
/// seen before) and its damaged lines. Kept after a summary's events, so a reader that
/// wants only the newest rows counts the older segments without decoding them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    pub rows: u64,
    pub damage: u64,
    /// Above every recorded time of the segment's snapshot records: seconds since the
    /// epoch, one past the newest (`i64::MIN` for none, a time that does not parse
    /// counts for none: it is never in a time window). A `log --since` after it needs
    /// nothing of the segment but its counts.
    pub newest: i64,
    /// Snapshots owed to the cluster at the end of this segment, by every line of the
    /// generation up to it ([`scan::Listing::owed`]): zero says that nothing before the
    /// segment's end is owed but through a later line ([`super::queue`]).
    pub owed: u64,
    /// Of `applied`, `committed` and `pushed`, the newest time of a change up to the end
    /// of this segment ([`scan::Listing::newest_changes`]).
    pub changes: [i64; 3],
    /// Of `owed`, the snapshots pending at the segment's end ([`scan::Listing::pending`]):
    /// when it is all of `owed` (no change waits for its snapshot's line, no id was
    /// recorded twice), a `supersede` record after the segment that covers every snapshot
    /// up to it leaves nothing before it owed ([`read_owed`]).
    pub pending: u64,
}

impl Default for Counts {
    fn default() -> Self {
        Counts {
            rows: 0,
            damage: 0,
            newest: i64::MIN,
            owed: u64::MAX,
            changes: [i64::MAX; 3],
            pending: 0,
        }
    }
}

/// Bytes of [`Counts`] as stored: rows, damage, newest, owed, the three change times,
/// pending, and 8 bytes of a sha256 binding them to the segment's identity (checked
/// without reading the whole summary).
const TRAILER: usize = 72;
/// Bytes of the counts before their check.
const WORDS: usize = TRAILER - 8;

impl Counts {
    fn trailer(self, identity: &[u8; 32]) -> [u8; TRAILER] {
        let mut out = [0u8; TRAILER];
        let words = [
            self.rows,
            self.damage,
            self.newest as u64,
            self.owed,
            self.changes[0] as u64,
            self.changes[1] as u64,
            self.changes[2] as u64,
            self.pending,
        ];
        for (i, w) in words.iter().enumerate() {
            out[i * 8..i * 8 + 8].copy_from_slice(&w.to_le_bytes());
        }
        let check = Sha256::new()
            .chain_update(identity)
            .chain_update(&out[..WORDS])
            .finalize();
        out[WORDS..].copy_from_slice(&check[..8]);
        out
    }
}

/// The [`Counts`] of `segment` from its summary, if it has a valid one for this very
/// segment (its identity; the trailer's own check) — without reading its events.
pub fn counts(segment: &Path) -> Option<Counts> {
    let log = open_read(segment).ok()?;
    let identity = identity(&log).ok()?;
    let mut file = open_read(&path_of(segment)).ok()?;
    let len = file.metadata().ok()?.len();
    let end = len.checked_sub((DIGEST + TRAILER) as u64)?;
    if end < HEADER as u64 {
        return None;
    }
    let mut header = [0u8; HEADER];
    file.read_exact(&mut header).ok()?;
    if &header[..MAGIC.len()] != MAGIC || header[MAGIC.len()..] != identity {
        return None;
    }
    let mut trailer = [0u8; TRAILER];
    file.seek(SeekFrom::Start(end)).ok()?;
    file.read_exact(&mut trailer).ok()?;
    let word = |i: usize| u64::from_le_bytes(trailer[i..i + 8].try_into().unwrap_or_default());
    let counts = Counts {
        rows: word(0),
        damage: word(8),
        newest: word(16) as i64,
        owed: word(24),
        changes: [word(32) as i64, word(40) as i64, word(48) as i64],
        pending: word(56),
    };
    // Every row is a line, and a line is at least its checksum and a space: a count
    // beyond that is not this segment's (and never sizes an allocation).
    let possible = log.metadata().ok()?.len() / (2 * DIGEST as u64 + 1);
    (counts.trailer(&identity) == trailer && counts.rows <= possible).then_some(counts)
}

fn index_of<T: PartialEq>(all: &[T], v: &T) -> u8 {
    all.iter().position(|x| x == v).unwrap_or(0) as u8
}

/// Puts written summaries in place (the caller holds the domain lock).
pub fn install(written: &[(PathBuf, PathBuf)]) {
    for (tmp, target) in written {
        if fs::rename(tmp, target).is_err() {
            let _ = fs::remove_file(tmp);
        }
    }
}

/// Removes written summaries that are not to be put in place.
pub fn discard(written: &[(PathBuf, PathBuf)]) {
    for (tmp, _) in written {
        let _ = fs::remove_file(tmp);
    }
}

/// What [`load`] did.
#[derive(Debug, PartialEq, Eq)]
pub enum Loaded {
    /// Every event of the segment went to the sink.
    Applied,
    /// No usable summary (missing, stale, damaged, of another version): nothing was
    /// given to the sink; read the segment.
    Absent,
    /// The summary verified but did not decode after some events were given: read
    /// everything again without summaries.
    Broken,
}

/// Feeds `segment`'s events from its summary to `sink`, if it has a valid one.
pub fn load(segment: &Path, sink: &mut dyn FnMut(&Ev<'_>)) -> Loaded {
    let Ok(mut file) = open_read(&path_of(segment)) else {
        return Loaded::Absent;
    };
    let Some(identity) = open_read(segment).ok().and_then(|f| identity(&f).ok()) else {
        return Loaded::Absent;
    };
    if !verified(&mut file, &identity).unwrap_or(false) {
        return Loaded::Absent;
    }
    match decode(&mut file, sink) {
        Some(()) => Loaded::Applied,
        None => Loaded::Broken,
    }
}

/// Whether the summary in `file` is whole (its digest) and made from `identity`.
fn verified(file: &mut File, identity: &[u8; 32]) -> io::Result<bool> {
    let len = file.metadata()?.len();
    if len < (HEADER + 4 + DIGEST) as u64 {
        return Ok(false);
    }
    let mut header = [0u8; HEADER];
    file.read_exact(&mut header)?;
    if &header[..MAGIC.len()] != MAGIC || &header[MAGIC.len()..] != identity {
        return Ok(false);
    }
    let mut hasher = Sha256::new();
    hasher.update(header);
    let mut rest = (&mut *file).take(len - (HEADER + DIGEST) as u64);
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = rest.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    let mut digest = [0u8; DIGEST];
    file.read_exact(&mut digest)?;
    let ours: [u8; 32] = hasher.finalize().into();
    file.seek(SeekFrom::Start(HEADER as u64))?;
    Ok(ours == digest)
}

/// Reads the blocks of a verified summary into `sink`; `None` if they do not decode.
fn decode(file: &mut File, sink: &mut dyn FnMut(&Ev<'_>)) -> Option<()> {
    let mut reader = io::BufReader::with_capacity(256 << 10, file);
    let mut names: Vec<String> = Vec::new();
    let mut block = Vec::new();
    loop {
        let mut len = [0u8; 4];
        reader.read_exact(&mut len).ok()?;
        let len = u32::from_le_bytes(len) as usize;
        if len == 0 {
            return Some(());
        }
        if len > MAX_BLOCK {
            return None;
        }
        block.resize(len, 0);
        reader.read_exact(&mut block).ok()?;
        let mut c = Cursor {
            bytes: &block,
            at: 0,
        };
        while !c.done() {
            event(&mut c, &mut names, sink)?;
        }
    }
}

/// Decodes one event of a block into `sink`; `None` if it does not decode.
fn event(c: &mut Cursor<'_>, names: &mut Vec<String>, sink: &mut dyn FnMut(&Ev<'_>)) -> Option<()> {
    match c.byte()? {
        SNAPSHOT => {
            let flags = c.byte()?;
            let id = c.packed()?;
            let at = c.packed()?;
            let rendered_at = c.packed()?;
            let seq = c.varint()?;
            let domain = c.name(names)?;
            let target = if flags & 2 != 0 {
                Some(c.name(names)?)
            } else {
                None
            };
            let host = if flags & 4 != 0 {
                Some(c.name(names)?)
            } else {
                None
            };
            let cr = c.name(names)?;
            sink(&Ev::Snapshot(Snap {
                id,
                at,
                rendered_at,
                seq,
                cluster: flags & 1 != 0,
                domain: &names[domain],
                host: host.map(|h| names[h].as_str()),
                target: target.map(|t| names[t].as_str()),
                cr: &names[cr],
            }));
        }
        STATE => {
            let id = c.packed()?;
            let at = c.packed()?;
            let state = *State::ALL.get(usize::from(c.byte()?))?;
            let reason = match c.byte()? {
                0 => None,
                r => Some(*Reason::ALL.get(usize::from(r) - 1)?),
            };
            sink(&Ev::State {
                id,
                at,
                state,
                reason,
            });
        }
        DAMAGE => {
            let line = usize::try_from(c.varint()?).ok()?;
            let what = c.text()?;
            sink(&Ev::Damage {
                line,
                what: Cow::Borrowed(what),
            });
        }
        SUPERSEDE => {
            let at = c.packed()?;
            let by = c.packed()?;
            let by_at = c.packed()?;
            let by_seq = c.varint()?;
            sink(&Ev::Supersede {
                at,
                by,
                by_at,
                by_seq,
            });
        }
        _ => return None,
    }
    Some(())
}

struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn done(&self) -> bool {
        self.at >= self.bytes.len()
    }

    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let out = self.bytes.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(out)
    }

    fn byte(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }

    fn varint(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }

    fn text(&mut self) -> Option<&'a str> {
        let n = usize::try_from(self.varint()?).ok()?;
        std::str::from_utf8(self.take(n)?).ok()
    }

    fn packed(&mut self) -> Option<Field<'a>> {
        let v = u64::from_le_bytes(self.take(8)?.try_into().ok()?);
        if v == 0 {
            return self.text().map(Field::Text);
        }
        scan::valid_packed(v).then_some(Field::Packed(v))
    }

    /// A name: its number, defined by its text the first time.
    fn name(&mut self, names: &mut Vec<String>) -> Option<usize> {
        let i = usize::try_from(self.varint()?).ok()?;
        if i == names.len() {
            names.push(self.text()?.to_string());
        }
        (i < names.len()).then_some(i)
    }
}

/// How a read may use segment summaries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Summaries {
    /// Read every line (what `verify`-like readers and the tests' reference do).
    Ignore,
    /// Use valid summaries; write none (another user's domain, gc, and shell
    /// completion, which promises no write at all).
    Use,
    /// Use valid summaries and write the missing ones (the domain is ours to write).
    UseAndWrite,
}

/// Reads a domain's live files into a [`Listing`]: an incomplete last line counts as a
/// torn tail in the newest file only; in a sealed one it is damage. A sealed segment
/// with a valid summary is read from its summary (the same events, without parsing a
/// line); with `UseAndWrite`, summaries of the sealed segments read line by line are
/// written next to them, then put in place if `lock` gets the domain lock at once.
///
/// # Errors
/// `(path, error)` of a file that cannot be read.
pub fn read<L>(
    layout: &Layout,
    summaries: Summaries,
    lock: impl FnOnce() -> Option<L>,
) -> Result<Listing, (PathBuf, std::io::Error)> {
    read_listing(layout, summaries, false, lock)
}

/// [`read`], and with `track` into a listing that also keeps the newest change to
/// `applied`, `committed` and `pushed` ([`Listing::last_change`]).
///
/// # Errors
/// `(path, error)` of a file that cannot be read.
pub fn read_listing<L>(
    layout: &Layout,
    summaries: Summaries,
    track: bool,
    lock: impl FnOnce() -> Option<L>,
) -> Result<Listing, (PathBuf, std::io::Error)> {
    let mut written = Vec::new();
    let listing = match read_with(layout, summaries, track, &mut written) {
        Ok(Some(listing)) => listing,
        // A summary that verified but did not decode: read every line instead.
        Ok(None) => read_with(layout, Summaries::Ignore, track, &mut written)?
            .ok_or_else(|| (layout.segments_dir(), std::io::Error::other("unreadable")))?,
        Err(e) => {
            discard(&written);
            return Err(e);
        }
    };
    if !written.is_empty() {
        match lock() {
            Some(_lock) => install(&written),
            None => discard(&written),
        }
    }
    Ok(listing)
}

/// [`read`] once; `None` when a summary has to be given up half applied.
fn read_with(
    layout: &Layout,
    summaries: Summaries,
    track: bool,
    written: &mut Vec<(PathBuf, PathBuf)>,
) -> Result<Option<Listing>, (PathBuf, std::io::Error)> {
    let fresh = |listing: Listing| if track { listing.tracking() } else { listing };
    match read_into(fresh(Listing::default()), layout, summaries, written)? {
        Some((listing, true)) => Ok(Some(listing)),
        // A snapshot recorded twice: read again into an eager listing (which drops it
        // as it comes), writing no summary twice.
        Some((_, false)) => {
            // The first pass counted the repeated snapshot twice (in what is owed, above
            // all): its summaries go, and the eager pass writes them.
            discard(written);
            written.clear();
            Ok(
                read_into(fresh(Listing::eager()), layout, summaries, written)?
                    .map(|(listing, _)| listing),
            )
        }
        None => Ok(None),
    }
}

/// [`read_with`] into `listing`, with what [`Listing::finish`] said.
fn read_into(
    mut listing: Listing,
    layout: &Layout,
    summaries: Summaries,
    written: &mut Vec<(PathBuf, PathBuf)>,
) -> Result<Option<(Listing, bool)>, (PathBuf, std::io::Error)> {
    let list = layout
        .live_files()
        .map_err(|e| (layout.segments_dir(), e))?;
    let last = list.len().saturating_sub(1);
    if summaries != Summaries::Ignore {
        let known: u64 = list[..last]
            .iter()
            .filter_map(|p| counts(p))
            .map(|c| c.rows)
            .sum();
        listing.reserve(usize::try_from(known).unwrap_or(0));
    }
    for (i, path) in list.iter().enumerate() {
        if !read_file(&mut listing, path, i != last, summaries, written)? {
            return Ok(None);
        }
    }
    let done = listing.finish();
    Ok(Some((listing, done)))
}

/// Applies one live file to `listing`: from its summary when `sealed` and it has a valid
/// one, else line by line (writing the summary with `UseAndWrite`). `false` when a
/// summary has to be given up half applied.
fn read_file(
    listing: &mut Listing,
    path: &Path,
    sealed: bool,
    summaries: Summaries,
    written: &mut Vec<(PathBuf, PathBuf)>,
) -> Result<bool, (PathBuf, std::io::Error)> {
    if sealed && summaries != Summaries::Ignore {
        match load(path, &mut |ev| listing.apply(path, ev)) {
            Loaded::Applied => return Ok(true),
            Loaded::Absent => {}
            Loaded::Broken => return Ok(false),
        }
    }
    let (rows, damage) = (listing.len(), listing.damage.len());
    let file = open_read(path).map_err(|e| (path.to_path_buf(), e))?;
    let mut writer = (sealed && summaries == Summaries::UseAndWrite)
        .then(|| Writer::create(path, &file))
        .flatten();
    let mut newest = i64::MIN;
    let (lines, torn) = scan::read_file(&file, &mut |ev| {
        listing.apply(path, ev);
        if let Some(w) = writer.as_mut() {
            w.push(ev);
            if let Ev::Snapshot(s) = ev {
                newest = newest.max(scan::time_bound(s.at).unwrap_or(i64::MIN));
            }
        }
    })
    .map_err(|e| (path.to_path_buf(), e))?;
    if !sealed {
        listing.torn_tail = torn;
    } else if let Some(ev) = scan::sealed_torn(lines, torn) {
        listing.apply(path, &ev);
        if let Some(w) = writer.as_mut() {
            w.push(&ev);
        }
    }
    let counts = Counts {
        rows: (listing.len() - rows) as u64,
        damage: (listing.damage.len() - damage) as u64,
        newest,
        owed: listing.owed(),
        changes: listing.newest_changes(),
        pending: listing.pending(),
    };
    if let Some(w) = writer
        && let Some(done) = w.finish(&file, counts)
    {
        written.push(done);
    }
    Ok(true)
}

/// The newest rows, how many rows come before them, the first live file read.
pub type Tail = (Listing, u64, usize);

/// The newest rows of a domain without reading its whole history: the live files from
/// the end, a window growing until it holds `want` snapshots that are not deleted, and how many rows come before the
/// window (their revisions), counted from the older segments' summaries, and the index
/// of the window's first live file. `None` when
/// this cannot be told exactly — an older segment without a valid summary, or with
/// damage (which the full listing reports) — and the caller reads everything.
///
/// Sound because every segment after the first (`000000.log`, which may hold a body
/// not in the order) is in the order and after all that precedes it: appends are
/// stamped after the newest record, and a new generation is written in line order; and
/// a state change always follows its snapshot's line.
///
/// # Errors
/// `(path, error)` of a file that cannot be read.
pub fn read_tail(layout: &Layout, want: usize) -> Result<Option<Tail>, (PathBuf, std::io::Error)> {
    let list = layout
        .live_files()
        .map_err(|e| (layout.segments_dir(), e))?;
    let mut width = 1;
    loop {
        let start = list.len().saturating_sub(width);
        if start == 0 {
            return Ok(None); // the whole history: the caller reads it all
        }
        let (listing, whole) = read_window(&list, start)?;
        if whole && listing.live_len() >= want {
            let mut before = 0;
            for path in &list[..start] {
                match counts(path) {
                    Some(c) if c.damage == 0 => before += c.rows,
                    _ => return Ok(None),
                }
            }
            return Ok(Some((listing, before, start)));
        }
        width *= 2;
    }
}

/// The newest rows of a domain for a time window from `since`: the window of segments
/// that holds every row recorded at or after `since` and, before them, a row that is
/// not deleted and recorded before it (what the first entry of the window is compared
/// with), with [`read_tail`]'s answer. A segment is left out only when its summary says
/// all its records are older than `since` (its [`Counts::newest`]), so the rows left
/// out are never in the window, whatever the order of their times. `None` when the end
/// cannot tell (a sealed segment without a valid summary, or with damage).
///
/// # Errors
/// `(path, error)` of a file that cannot be read.
pub fn read_tail_since(
    layout: &Layout,
    since: jiff::Timestamp,
) -> Result<Option<Tail>, (PathBuf, std::io::Error)> {
    let list = layout
        .live_files()
        .map_err(|e| (layout.segments_dir(), e))?;
    let Some(last) = list.len().checked_sub(1) else {
        return Ok(None);
    };
    let mut older = Vec::with_capacity(last);
    for path in &list[..last] {
        match counts(path) {
            Some(c) if c.damage == 0 => older.push(c),
            _ => return Ok(None),
        }
    }
    // Whole seconds at or before `since`: a segment whose bound is not above them holds
    // nothing at or after it.
    let floor = since.as_second() - i64::from(since.subsec_nanosecond() < 0);
    let mut start = older.iter().rposition(|c| c.newest > floor).unwrap_or(last);
    if start == last
        && let Some((listing, rows)) = active_since(&list[last], since)?
    {
        let before = older.iter().map(|c| c.rows).sum::<u64>() + rows;
        return Ok(Some((listing, before, last)));
    }
    let before_since = |l: &Listing| {
        l.rows().any(|r| {
            r.state() != State::Deleted
                && crate::history::audit::parse_bound(&r.at(), false).is_none_or(|t| t < since)
        })
    };
    while start > 0 {
        let (listing, whole) = read_window(&list, start)?;
        if whole && before_since(&listing) {
            let before = older[..start].iter().map(|c| c.rows).sum();
            return Ok(Some((listing, before, start)));
        }
        start = start.saturating_sub((list.len() - start).max(1));
    }
    Ok(None) // the whole history: the caller reads it all
}

/// Bytes of an active segment [`active_since`] reads at once (segments roll at 4 MiB):
/// a larger one is read as before.
const ACTIVE_MAX: u64 = 64 << 20;

/// The rows of the active segment `path` from its newest snapshot recorded before
/// `since` that is not deleted (what the window's first entry is compared with), and
/// how many rows of the segment come before that one — when every row of the older
/// segments is older than `since`. `None` when that cannot be told exactly: the segment
/// is not in the order (`000000.log`, a version 1 journal) or too large, holds no such
/// snapshot, or its lines before the window hold damage or a snapshot recorded twice
/// (the full listing reports and drops those).
///
/// The cost is the window's lines: the lines after the cut are read as [`read_window`]
/// reads them (every check, the torn tail), those before it only checksummed and
/// counted (a line of clinv's layout is not parsed, see [`scan::row_before`]). Sound
/// because an ordered segment's lines are in the order (as [`read_tail`] says): no
/// line before the cut is recorded at or after `since`.
///
/// # Errors
/// `(path, error)` of a file that cannot be read.
fn active_since(
    path: &Path,
    since: jiff::Timestamp,
) -> Result<Option<(Listing, u64)>, (PathBuf, std::io::Error)> {
    let ordered = path.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
        n.len() == 10 && n.ends_with(".log") && n[..6].bytes().all(|b| b.is_ascii_digit())
    });
    if !ordered || path.file_name().is_some_and(|n| n == "000000.log") {
        return Ok(None);
    }
    let err = |e| (path.to_path_buf(), e);
    let mut file = open_read(path).map_err(err)?;
    if file.metadata().map_err(err)?.len() > ACTIVE_MAX {
        return Ok(None);
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).map_err(err)?;
    let Some(cut) = cut_before(&bytes, since) else {
        return Ok(None);
    };
    let (prefix, window) = bytes.split_at(cut);
    let mut ids = std::collections::HashSet::new();
    for line in prefix.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        let fresh = match scan::row_before(line) {
            Ok(Some(id)) => ids.insert(id),
            Ok(None) => true,
            Err(()) => false,
        };
        if !fresh {
            return Ok(None);
        }
    }
    let lines_before = prefix.iter().filter(|b| **b == b'\n').count();
    let read = |mut listing: Listing| {
        let (_, torn) =
            scan::read_file_after(window, lines_before, &mut |ev| listing.apply(path, ev))
                .map_err(err)?;
        listing.torn_tail = torn;
        let done = listing.finish();
        Ok::<_, (PathBuf, std::io::Error)>((listing, done))
    };
    let listing = match read(Listing::default())? {
        (listing, true) => listing,
        _ => read(Listing::eager())?.0,
    };
    if listing.rows().any(|r| ids.contains(&*r.id())) {
        return Ok(None);
    }
    Ok(Some((listing, ids.len() as u64)))
}

/// Where the line of the newest snapshot recorded before `since` that is not deleted
/// starts in `bytes` (a segment in the order), looking from the end; `None` when there
/// is none. Only that line and the `deleted` changes after it are decoded (the lines
/// after it are checked when read).
fn cut_before(bytes: &[u8], since: jiff::Timestamp) -> Option<usize> {
    // An incomplete last line is no record (the read calls it a torn tail).
    let mut end = bytes.iter().rposition(|b| *b == b'\n')?;
    let mut deleted = std::collections::HashSet::new();
    loop {
        let start = bytes[..end]
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |p| p + 1);
        let line = &bytes[start..end];
        let older =
            |at: &str| crate::history::audit::parse_bound(at, false).is_none_or(|t| t < since);
        let candidate = match scan::snapshot_at_unchecked(line) {
            Some(at) => older(at),
            None => !line.is_empty() && !super::segments::passes_over(line),
        };
        if candidate {
            match super::journal::decode(line) {
                Ok(Record::Snapshot(s)) if older(&s.at) && !deleted.contains(&s.id) => {
                    return Some(start);
                }
                Ok(Record::State(st)) if st.state == State::Deleted => {
                    deleted.insert(st.id);
                }
                _ => {}
            }
        }
        end = start.checked_sub(1)?;
    }
}

/// What [`read_owed`] found: the newest segments' listing (tracking the newest
/// changes), and what the segments before them hold.
pub struct Owed {
    pub listing: Listing,
    /// Of `applied`, `committed` and `pushed`, the newest time of a change before the
    /// window ([`scan::change_time`]).
    pub before: [i64; 3],
    /// Sealed segments of the window without a summary (read line by line).
    pub unsummarised: usize,
}

/// The newest segments of a domain that hold everything it owes the cluster, without
/// reading its whole history: the live files after the newest sealed segment at whose
/// end nothing was owed ([`Counts::owed`], by every line up to it). `None` when that
/// cannot be told exactly — a sealed segment up to it without a valid summary or with
/// damage (which the full listing reports), none where nothing was owed, a state
/// change in the window that re-queues a snapshot before it, or a snapshot of the
/// window not recorded after every one before it (a repeated id: the first record is
/// every reader's) — and the caller reads everything.
///
/// Sound because a snapshot before the window is owed only through a line after its
/// end (a `pending` change: the window says so), and, in a generation's line order, a
/// snapshot's changes follow its line (a change before its snapshot's line counts as
/// owed in [`Counts::owed`]).
///
/// # Errors
/// `(path, error)` of a file that cannot be read.
pub fn read_owed(layout: &Layout) -> Result<Option<Owed>, (PathBuf, std::io::Error)> {
    let list = layout
        .live_files()
        .map_err(|e| (layout.segments_dir(), e))?;
    let last = list.len().saturating_sub(1);
    let sealed: Vec<Option<Counts>> = list[..last].iter().map(|p| counts(p)).collect();
    let b = sealed.iter().rposition(|c| c.is_some_and(|c| c.owed == 0));
    if b.is_none_or(|b| b + 1 < last)
        && let Some(owed) = superseded_window(&list, &sealed)?
    {
        return Ok(Some(owed));
    }
    let Some(b) = b else {
        return Ok(None);
    };
    let mut bound = i64::MIN;
    for c in &sealed[..=b] {
        match c {
            Some(c) if c.damage == 0 => bound = bound.max(c.newest),
            _ => return Ok(None),
        }
    }
    let before = sealed[b].map_or([i64::MAX; 3], |c| c.changes);
    let unsummarised = sealed[b + 1..].iter().filter(|c| c.is_none()).count();
    let (listing, whole) = read_window_with(&list, b + 1, true)?;
    let later = |r: scan::RowRef<'_>| r.at_second().is_some_and(|s| s >= bound);
    if !whole || listing.reopened || !listing.rows().all(later) {
        return Ok(None);
    }
    Ok(Some(Owed {
        listing,
        before,
        unsummarised,
    }))
}

/// [`read_owed`]'s window when the active segment holds a `supersede` record that
/// covers every snapshot before it (the first delivery after a backlog: every sealed
/// segment still owes what the record then superseded): the active segment alone, when
/// each sealed one has a valid summary without damage, the last owes only pending
/// snapshots (no change waits for its snapshot's line, no id was recorded twice), and
/// the record's snapshot was recorded in a later second than every snapshot of them.
/// `None` when it cannot tell so.
fn superseded_window(
    list: &[PathBuf],
    sealed: &[Option<Counts>],
) -> Result<Option<Owed>, (PathBuf, std::io::Error)> {
    let Some(Some(end)) = sealed.last() else {
        return Ok(None);
    };
    if end.owed != end.pending {
        return Ok(None);
    }
    let mut bound = i64::MIN;
    for c in sealed {
        match c {
            Some(c) if c.damage == 0 => bound = bound.max(c.newest),
            _ => return Ok(None),
        }
    }
    let (listing, whole) = read_window_with(list, sealed.len(), true)?;
    let later = |r: scan::RowRef<'_>| r.at_second().is_some_and(|s| s >= bound);
    let covered = listing.superseded_before.is_some_and(|s| s >= bound);
    if !whole || !covered || listing.reopened || !listing.rows().all(later) {
        return Ok(None);
    }
    Ok(Some(Owed {
        listing,
        before: end.changes,
        unsummarised: 0,
    }))
}

/// The live files from `start` read into a listing (eagerly again when an id repeats),
/// and whether every summary used decoded.
fn read_window(
    list: &[PathBuf],
    start: usize,
) -> Result<(Listing, bool), (PathBuf, std::io::Error)> {
    read_window_with(list, start, false)
}

/// [`read_window`], the listing `track`ing the newest changes.
fn read_window_with(
    list: &[PathBuf],
    start: usize,
    track: bool,
) -> Result<(Listing, bool), (PathBuf, std::io::Error)> {
    let fresh = |listing: Listing| if track { listing.tracking() } else { listing };
    let last = list.len().saturating_sub(1);
    let window = |mut listing: Listing| {
        let mut whole = true;
        for (i, path) in list.iter().enumerate().skip(start) {
            whole &= read_file(
                &mut listing,
                path,
                i != last,
                Summaries::Use,
                &mut Vec::new(),
            )?;
        }
        let done = listing.finish();
        Ok::<_, (PathBuf, std::io::Error)>((listing, whole, done))
    };
    Ok(match window(fresh(Listing::default()))? {
        (listing, whole, true) => (listing, whole),
        // A snapshot recorded twice: again, dropping it as it comes.
        _ => {
            let (listing, whole, _) = window(fresh(Listing::eager()))?;
            (listing, whole)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::super::journal;
    use super::super::record::Journal;
    use super::*;

    /// The pseudo-random journals of the listing test (shuffled, damaged, torn), each a
    /// sealed segment: the listing read from their summaries is the full read's.
    #[test]
    fn summaries_agree_with_the_full_read() {
        for text in scan::testing::random_journals() {
            summaries_agree(&text);
        }
    }

    /// A domain whose random `text` is a sealed segment (followed by an active one):
    /// the full read ([`journal::Builder`]), the line-by-line listing, the listing that
    /// writes summaries and the one read from them agree — rows, order, states, damage.
    fn summaries_agree(text: &str) {
        let dir = tempfile::tempdir().unwrap();
        let generation = dir.path().join("segments/1");
        std::fs::create_dir_all(&generation).unwrap();
        std::fs::write(dir.path().join("segments/CURRENT"), "1\n").unwrap();
        let sealed = generation.join("000001.log");
        std::fs::write(&sealed, text).unwrap();
        let tail = journal::encode(&scan::testing::snap(
            "0123456789ab",
            "2026-01-01T00:00:02.000Z",
            None,
            true,
        ))
        .unwrap();
        std::fs::write(generation.join("000002.log"), tail).unwrap();
        let layout = Layout::new(dir.path());
        let full = super::super::segments::read_journal(&layout).unwrap();
        let lock = || Some(());
        let lines = read(&layout, Summaries::Ignore, lock).unwrap();
        assert!(!super::path_of(&sealed).exists());
        let writing = read(&layout, Summaries::UseAndWrite, lock).unwrap();
        assert!(super::path_of(&sealed).exists(), "{text}");
        let mut loaded = Listing::default();
        assert_eq!(
            super::load(&sealed, &mut |ev| loaded.apply(&sealed, ev)),
            super::Loaded::Applied
        );
        let summarised = read(&layout, Summaries::Use, lock).unwrap();
        for listing in [&lines, &writing, &summarised] {
            same(&full, listing, text);
        }
    }

    /// `full` and `compact` hold the same snapshots, order, states and damage.
    fn same(full: &Journal, compact: &Listing, text: &str) {
        scan::testing::assert_lists_the_same(full, compact, text);
        for (s, r) in full.snapshots.iter().zip(compact.rows()) {
            assert_eq!(s.order_seq, r.seq());
        }
    }

    /// A summary is used only for the segment it was made from: a damaged summary, one
    /// of a segment rewritten in place (same size, mtime set back), one of a segment
    /// replaced by another file, are all ignored — the listing is the full read's.
    #[test]
    fn stale_or_damaged_summaries_are_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let generation = dir.path().join("segments/1");
        std::fs::create_dir_all(&generation).unwrap();
        std::fs::write(dir.path().join("segments/CURRENT"), "1\n").unwrap();
        let at = "2026-01-01T00:00:01.000Z";
        let mut text = String::new();
        for n in 0..100u64 {
            text.push_str(
                &journal::encode(&scan::testing::snap(
                    &format!("{n:012x}"),
                    at,
                    Some(n),
                    true,
                ))
                .unwrap(),
            );
        }
        let sealed = generation.join("000001.log");
        std::fs::write(generation.join("000002.log"), "").unwrap();
        let layout = Layout::new(dir.path());
        let lock = || Some(());
        let listing = |layout: &Layout| {
            let full = super::super::segments::read_journal(layout).unwrap();
            let got = read(layout, Summaries::Use, lock).unwrap();
            same(&full, &got, "");
            got
        };
        let fresh = |text: &str| {
            std::fs::write(&sealed, text).unwrap();
            let _ = std::fs::remove_file(super::path_of(&sealed));
            read(&layout, Summaries::UseAndWrite, lock).unwrap();
            assert!(super::path_of(&sealed).exists());
            assert_eq!(super::load(&sealed, &mut |_| {}), super::Loaded::Applied);
        };
        let absent = || super::load(&sealed, &mut |_| panic!("a stale summary was used"));

        // Damaged: one byte of the summary flipped, or the summary cut short.
        fresh(&text);
        let sum = super::path_of(&sealed);
        let mut bytes = std::fs::read(&sum).unwrap();
        let middle = bytes.len() / 2;
        bytes[middle] ^= 1;
        std::fs::write(&sum, &bytes).unwrap();
        assert_eq!(absent(), super::Loaded::Absent);
        listing(&layout);
        bytes[middle] ^= 1;
        std::fs::write(&sum, &bytes[..bytes.len() - 1]).unwrap();
        assert_eq!(absent(), super::Loaded::Absent);
        std::fs::write(&sum, b"").unwrap();
        assert_eq!(absent(), super::Loaded::Absent);

        // Rewritten in place, same size, mtime set back: one line in the middle of the
        // segment (beyond the ends the identity hashes) damaged.
        fresh(&text);
        let before = std::fs::metadata(&sealed).unwrap();
        let middle = text[text.len() / 2..].find('\n').unwrap() + text.len() / 2 + 1;
        let mut edited = text.clone().into_bytes();
        edited[middle] = if edited[middle] == b'0' { b'1' } else { b'0' };
        assert!(middle > 4096 && text.len() - middle > 4096);
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(&sealed)
            .unwrap();
        use std::io::Write;
        (&file).write_all(&edited).unwrap();
        {
            use std::os::unix::fs::MetadataExt;
            let time = rustix::fs::Timestamps {
                last_access: rustix::fs::Timespec {
                    tv_sec: before.atime(),
                    tv_nsec: before.atime_nsec() as _,
                },
                last_modification: rustix::fs::Timespec {
                    tv_sec: before.mtime(),
                    tv_nsec: before.mtime_nsec() as _,
                },
            };
            rustix::fs::futimens(&file, &time).unwrap();
            let after = std::fs::metadata(&sealed).unwrap();
            assert_eq!(
                (after.len(), after.mtime(), after.mtime_nsec()),
                (before.len(), before.mtime(), before.mtime_nsec())
            );
        }
        drop(file);
        assert_eq!(absent(), super::Loaded::Absent);
        let got = listing(&layout);
        assert_eq!(got.damage.len(), 1, "the edited line is read again");

        // Replaced by another file of the same bytes: another inode.
        fresh(&text);
        let copy = generation.join("copy");
        std::fs::copy(&sealed, &copy).unwrap();
        std::fs::rename(&copy, &sealed).unwrap();
        assert_eq!(absent(), super::Loaded::Absent);
        listing(&layout);

        // A summary of another version (or format) is ignored too.
        fresh(&text);
        let mut bytes = std::fs::read(&sum).unwrap();
        bytes[0] = b'X';
        std::fs::write(&sum, &bytes).unwrap();
        assert_eq!(absent(), super::Loaded::Absent);
        listing(&layout);

        // Written by a reader only when the lock is free at once.
        std::fs::remove_file(&sum).unwrap();
        read(&layout, Summaries::UseAndWrite, || None::<()>).unwrap();
        assert!(!sum.exists());
        assert!(
            std::fs::read_dir(&generation).unwrap().all(|e| !e
                .unwrap()
                .file_name()
                .to_string_lossy()
                .contains(".tmp.")),
            "a summary not put in place is removed"
        );
    }
}
