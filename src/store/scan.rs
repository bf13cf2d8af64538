//! Reading a domain's journal into compact rows for listings (`snapshots list`, `log`).
//!
//! Reading a domain's journal for listings (`snapshots list`, `log`): the same files,
//! lines, checksums and damage as [`journal::Builder`], folded into compact rows that
//! hold only what a listing shows instead of a whole [`super::Snapshot`] per record.
//!
//! A row is 56 bytes plus its strings: ids of hex digits and times in clinv's own
//! layouts (`2026-01-02T03:04:05.678Z`, `…05Z`) are packed into 8 bytes each, any other
//! string goes to one text arena; record domains and hosts (as one pair), targets and
//! object ids are interned.
//! Memory grows with the records (≈ 56–60 bytes each), not with their bytes.
//!
//! Every line is checked exactly as [`journal::decode`] checks it: a line is parsed
//! borrowing its strings when it has clinv's layout (the `kind` tag first, nothing
//! that needs the general parse), else by [`journal::decode`] itself, whose answer —
//! record or damage — is the one that counts. The state of a snapshot is folded as
//! [`journal::Builder`] folds it (a unit test holds the two equal on shuffled histories).

use super::fold::Fold;
use super::journal::{self, LineError, MAX_LINE};
use super::record::{Damage, Record, State};

use crate::delivery::Reason;
use jiff::civil::{Date, Time};
use jiff::tz::Offset;
use serde::Deserialize;
use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::HashMap;
use std::path::Path;

/// A string of a listing: packed into the 8 bytes when it has a common shape, else a
/// span of the listing's arena.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Str(u64);

const TAG_SHIFT: u32 = 62;
const TAG_SPAN: u64 = 0;
const TAG_HEX: u64 = 1;
const TAG_MILLIS: u64 = 2;
const TAG_SECS: u64 = 3;
/// No string (a snapshot no cluster state change has reached yet).
const NONE: Str = Str(u64::MAX);
/// Longest packed hex id (4 bits of length, 4 bits per digit).
const HEX_MAX: usize = 14;

/// A string read back from a listing: borrowed from the arena or unpacked.
pub enum Text<'a> {
    Borrowed(&'a str),
    Inline([u8; 24], u8),
}

impl std::ops::Deref for Text<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        match self {
            Text::Borrowed(s) => s,
            // Only ASCII digits, hex digits and punctuation are ever packed.
            Text::Inline(buf, len) => std::str::from_utf8(&buf[..usize::from(*len)]).unwrap_or(""),
        }
    }
}

fn digits(bytes: &[u8], value: &mut u64) -> bool {
    for b in bytes {
        if !b.is_ascii_digit() {
            return false;
        }
        *value = *value * 10 + u64::from(b - b'0');
    }
    true
}

/// Packs `YYYY-MM-DDTHH:MM:SS.mmmZ` or `YYYY-MM-DDTHH:MM:SSZ` (digits kept as a number,
/// so packed times of one layout compare like their text).
fn pack_time(s: &[u8]) -> Option<Str> {
    let (tag, frac) = match s.len() {
        24 if s[19] == b'.' && s[23] == b'Z' => (TAG_MILLIS, true),
        20 if s[19] == b'Z' => (TAG_SECS, false),
        _ => return None,
    };
    if s[4] != b'-' || s[7] != b'-' || s[10] != b'T' || s[13] != b':' || s[16] != b':' {
        return None;
    }
    let mut v = 0u64;
    for part in [
        &s[0..4],
        &s[5..7],
        &s[8..10],
        &s[11..13],
        &s[14..16],
        &s[17..19],
    ] {
        if !digits(part, &mut v) {
            return None;
        }
    }
    if frac && !digits(&s[20..23], &mut v) {
        return None;
    }
    Some(Str(tag << TAG_SHIFT | v))
}

fn pack_hex(s: &[u8]) -> Option<Str> {
    if s.is_empty() || s.len() > HEX_MAX {
        return None;
    }
    let mut v = 0u64;
    for b in s {
        let d = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            _ => return None,
        };
        v = v << 4 | u64::from(d);
    }
    Some(Str(TAG_HEX << TAG_SHIFT | (s.len() as u64) << 56 | v))
}

/// `s` packed into 8 bytes (never 0) when it has a common shape (summaries store it so).
pub(super) fn pack(s: &str) -> Option<u64> {
    pack_time(s.as_bytes())
        .or_else(|| pack_hex(s.as_bytes()))
        .map(|p| p.0)
}

/// The string `v` was packed from (`None`: not a packed string).
pub(super) fn unpack(v: u64) -> Option<Text<'static>> {
    let s = Str(v);
    if s.tag() == TAG_SPAN || (s.tag() == TAG_HEX && (s.payload() >> 56) as usize > HEX_MAX) {
        return None;
    }
    match s.text("") {
        Text::Inline(buf, len) => Some(Text::Inline(buf, len)),
        Text::Borrowed(_) => None,
    }
}

impl Str {
    fn tag(self) -> u64 {
        self.0 >> TAG_SHIFT
    }

    fn payload(self) -> u64 {
        self.0 & ((1 << TAG_SHIFT) - 1)
    }

    fn text(self, arena: &str) -> Text<'_> {
        let mut buf = [0u8; 24];
        match self.tag() {
            TAG_SPAN => {
                let start = (self.0 & ((1 << 40) - 1)) as usize;
                let len = (self.payload() >> 40) as usize;
                Text::Borrowed(arena.get(start..start + len).unwrap_or(""))
            }
            TAG_HEX => {
                let len = ((self.payload() >> 56) & 0xf) as usize;
                let mut v = self.payload() & ((1 << 56) - 1);
                for i in (0..len).rev() {
                    buf[i] = b"0123456789abcdef"[(v & 0xf) as usize];
                    v >>= 4;
                }
                Text::Inline(buf, len as u8)
            }
            tag => {
                let millis = tag == TAG_MILLIS;
                let mut v = self.payload();
                let layout: &[u8] = if millis {
                    b"0000-00-00T00:00:00.000Z"
                } else {
                    b"0000-00-00T00:00:00Z"
                };
                buf[..layout.len()].copy_from_slice(layout);
                for i in (0..layout.len()).rev() {
                    if buf[i] == b'0' {
                        buf[i] = b'0' + (v % 10) as u8;
                        v /= 10;
                    }
                }
                Text::Inline(buf, layout.len() as u8)
            }
        }
    }

    /// Seconds since the epoch of a time (packed in one of clinv's layouts: its digits
    /// taken as fields, without a parse; any other string: the RFC 3339 parse), `None`
    /// when the string is not an RFC 3339 time.
    fn epoch_second(self, arena: &str) -> Option<i64> {
        let mut v = match self.tag() {
            TAG_MILLIS => self.payload() / 1000,
            TAG_SECS => self.payload(),
            _ => {
                return crate::util::time::parse_rfc3339(&self.text(arena)).map(|t| t.as_second());
            }
        } as i64;
        let mut take = |n: i64| {
            let field = v % n;
            v /= n;
            field
        };
        let (second, minute, hour) = (take(100), take(100), take(100));
        let (day, month) = (take(100), take(100));
        // jiff checks the fields (month, the month's days, leap years); a leap second
        // reads as :59, as the parse reads it.
        let field = |n: i64| i8::try_from(n).ok();
        let date = Date::new(i16::try_from(v).ok()?, field(month)?, field(day)?);
        let second = if second == 60 { 59 } else { second };
        let time = Time::new(field(hour)?, field(minute)?, field(second)?, 0);
        let at = date.and_then(|d| time.map(|t| d.to_datetime(t)));
        match at.and_then(|at| Offset::UTC.to_timestamp(at)) {
            Ok(t) => Some(t.as_second()),
            // Not a time (the layout, with impossible digits): as the parse would say.
            Err(_) => crate::util::time::parse_rfc3339(&self.text(arena)).map(|t| t.as_second()),
        }
    }

    /// Compares like the strings (the numbers when both are packed the same way).
    fn cmp(self, other: Str, arena: &str) -> Ordering {
        let (a, b) = (self.tag(), other.tag());
        if a == b && (a == TAG_MILLIS || a == TAG_SECS) {
            return self.payload().cmp(&other.payload());
        }
        if a == TAG_HEX && b == TAG_HEX && (self.payload() >> 56) == (other.payload() >> 56) {
            return self.payload().cmp(&other.payload());
        }
        self.text(arena).cmp(&other.text(arena))
    }
}

/// One snapshot of a listing.
#[derive(Debug, Clone)]
struct Row {
    id: Str,
    at: Str,
    rendered_at: Str,
    /// `at` of the cluster state change in force (the newest so far; of equal times the
    /// later line), or [`NONE`].
    cluster_at: Str,
    /// The effective tie-breaker (the line number for a version 1 record).
    seq: u64,
    /// The record's domain and host: an index of [`Listing::origins`] (a pair, so the
    /// host costs a row nothing).
    origin: u32,
    /// Interned target server, `u32::MAX` for none.
    target: u32,
    cr: u32,
    /// Its state by the store's rules (two bytes, so a row stays within its size).
    fold: Fold,
    reason: Option<Reason>,
}

// A row stays 56 bytes: the host shares the domain's slot ([`Row::origin`]).
const _: () = assert!(std::mem::size_of::<Row>() <= 56);

/// What one line of a segment gives a listing — all a listing needs of it, in line
/// order. It is also what a segment's summary holds ([`super::summary`]).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Ev<'a> {
    Snapshot(Snap<'a>),
    State {
        id: Field<'a>,
        at: Field<'a>,
        state: State,
        reason: Option<Reason>,
    },
    Damage {
        line: usize,
        what: Cow<'a, str>,
    },
    /// A `supersede` record ([`super::record::SupersedeRecord`]): every row pending now
    /// and ordered before (`by_at`, `by_seq`, `by`) superseded at `at`.
    Supersede {
        at: Field<'a>,
        by: Field<'a>,
        by_at: Field<'a>,
        by_seq: u64,
    },
}

/// A `snapshot` record as a listing reads it; `seq` is the effective tie-breaker (the
/// line number for a version 1 record).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Snap<'a> {
    pub id: Field<'a>,
    pub at: Field<'a>,
    pub rendered_at: Field<'a>,
    pub seq: u64,
    pub cluster: bool,
    pub domain: &'a str,
    /// The host that recorded it (none in older records).
    pub host: Option<&'a str>,
    pub target: Option<&'a str>,
    pub cr: &'a str,
}

/// A string of an event: its text (read from a line), or packed as a listing packs it
/// (read from a summary, which stores it so: no unpacking and packing again).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Field<'a> {
    Text(&'a str),
    Packed(u64),
}

impl<'a> Field<'a> {
    /// The string.
    pub fn text(&self) -> Text<'a> {
        match self {
            Field::Text(s) => Text::Borrowed(s),
            Field::Packed(v) => unpack(*v).unwrap_or(Text::Borrowed("")),
        }
    }
}

/// One second past the recorded time `at` as `log --since` reads it
/// ([`crate::history::audit::parse_bound`]): above it whatever its fraction; `None`
/// when it is not a time (never in a window). Times in clinv's layouts by integer
/// arithmetic, as a listing reads them.
pub(super) fn time_bound(at: Field<'_>) -> Option<i64> {
    let text = at.text();
    match pack_time(text.as_bytes()) {
        Some(p) => p.epoch_second(""),
        None => crate::history::audit::parse_bound(&text, false).map(|t| t.as_second()),
    }
    .map(|s| s.saturating_add(1))
}

/// Whether `v` is a string [`pack`] could have written.
pub(super) fn valid_packed(v: u64) -> bool {
    let s = Str(v);
    s.tag() != TAG_SPAN && (s.tag() != TAG_HEX || (s.payload() >> 56) as usize <= HEX_MAX)
}

/// A state change read before its snapshot's record.
struct Early {
    at: String,
    state: State,
    reason: Option<Reason>,
}

/// The snapshots of one domain, compactly, in the order (at, seq, id), with the damage
/// met on the way.
#[derive(Default)]
pub struct Listing {
    pub domain: String,
    arena: String,
    names: Vec<String>,
    name_index: HashMap<String, u32>,
    last_names: [Option<u32>; 4],
    /// (domain, host) name pairs; host `u32::MAX` for none.
    origins: Vec<(u32, u32)>,
    origin_index: HashMap<(u32, u32), u32>,
    last_origin: Option<u32>,
    rows: Vec<Row>,
    pub damage: Vec<Damage>,
    /// Bytes of an incomplete last line of the newest segment (ignored).
    pub torn_tail: u64,
    /// The snapshot lines were already in the order (at, seq, id): a rewrite that keeps
    /// line order keeps a generation's tail telling the newest snapshot.
    pub line_ordered: bool,
    /// Snapshot ids: an open-addressing table of row numbers + 1 (0: free) beside the
    /// high half of the id's hash, at most half full — 8 bytes a slot, where a map of
    /// ids would take 16 and double at growth. It holds the first `indexed` rows: it is
    /// brought up to date only when a lookup needs it (see [`Listing::filter`]).
    ids: Vec<u64>,
    indexed: usize,
    /// A Bloom filter of the ids of every row (two bits of one word per id, 8 bits a
    /// row: a million rows in 1 MiB): a new id — nearly every snapshot — is told new by one word that stays in
    /// the cache, where a probe of the id table is a cache miss per row in a long
    /// listing (a quarter of `snapshots list`'s time at a million rows). A state change
    /// that follows its snapshot needs no table either; only the others (and the rare
    /// id the filter may hold) bring it up to date.
    filter: Vec<u64>,
    /// Whether a snapshot whose id is already a row's is dropped as it comes (the
    /// first record wins), which needs the id table. Not eager (the default), a
    /// snapshot the filter may already hold is kept and noted in `suspects`, and
    /// [`Listing::finish`] tells whether one really was a duplicate: then the files are
    /// read again eagerly (rare: an id recorded twice).
    eager: bool,
    suspects: Vec<u32>,
    hasher: std::collections::hash_map::RandomState,
    early: HashMap<String, Vec<Early>>,
    /// The rows pending so far (as [`super::Snapshot::is_pending`]), kept as the lines
    /// come: a segment's summary records it ([`Listing::owed`]).
    pending: u64,
    /// Snapshot records dropped so far as repeats of an id (an eager listing).
    repeats: u64,
    /// Rows that may be pending (each became so since it was last looked at): what a
    /// `supersede` record looks through, so it costs the rows it may change, not the
    /// listing.
    maybe_pending: Vec<u32>,
    /// The latest bound (seconds since the epoch of its snapshot's recorded time) of the
    /// `supersede` records read: every snapshot recorded in an earlier second before
    /// them is no longer pending but through a later line ([`super::summary::read_owed`]).
    pub(super) superseded_before: Option<i64>,
    /// Of `applied`, `committed` and `pushed`, the newest time of a change so far
    /// ([`Listing::newest_changes`]).
    newest_changes: NewestChanges,
    /// Set by [`Listing::finish`]: a state change re-queued (`pending`) a snapshot whose
    /// line was not read (a window of the newest segments: see [`super::queue`]).
    pub(super) reopened: bool,
    /// With [`Listing::tracking`]: the newest changes to `applied`, `committed` and
    /// `pushed` (what `status` shows), so no reader needs every record's history.
    last: Option<Box<[Last; 3]>>,
}

/// Whether a snapshot of this state is owed to the cluster (pending, not deleted).
fn owed(fold: Fold) -> bool {
    !fold.deleted() && fold.cluster() == Some(State::Pending)
}

/// [`Listing::newest_changes`], none to begin with.
#[derive(Debug, Clone, Copy)]
struct NewestChanges([i64; 3]);

impl Default for NewestChanges {
    fn default() -> Self {
        NewestChanges([NO_CHANGE; 3])
    }
}

/// No change at all, in [`Listing::newest_changes`].
pub(super) const NO_CHANGE: i64 = i64::MIN;
/// Changes whose times do not parse (older than any that does), and none that does.
const UNPARSED: i64 = i64::MIN + 1;

/// A change's time as [`Listing::newest_changes`] keeps it: nanoseconds since the
/// epoch by [`crate::util::time::parse_rfc3339`] (saturated: a time beyond what they
/// hold is never beaten), [`UNPARSED`] when it does not parse.
pub(super) fn change_time(at: &str) -> i64 {
    crate::util::time::parse_rfc3339(at).map_or(UNPARSED, |t| {
        i64::try_from(t.as_nanosecond()).unwrap_or(if t.as_second() < 0 {
            UNPARSED + 1
        } else {
            i64::MAX
        })
    })
}

/// The states whose newest change a tracking listing keeps.
const LAST: [State; 3] = [State::Applied, State::Committed, State::Pushed];

/// Of one state, the changes of the newest time (by RFC 3339, as
/// [`super::Journal::last_in`] compares them: a time that does not parse is older than
/// any that does), in line order: `(id, at)`.
#[derive(Debug, Default, Clone)]
struct Last {
    time: Option<jiff::Timestamp>,
    changes: Vec<(String, String)>,
}

/// One row of a [`Listing`].
#[derive(Clone, Copy)]
pub struct RowRef<'a> {
    listing: &'a Listing,
    row: &'a Row,
}

impl<'a> RowRef<'a> {
    pub fn id(&self) -> Text<'a> {
        self.row.id.text(&self.listing.arena)
    }

    pub fn at(&self) -> Text<'a> {
        self.row.at.text(&self.listing.arena)
    }

    /// [`RowRef::at`] in seconds since the epoch (for an AGE), `None` when it is not
    /// an RFC 3339 time.
    pub fn at_second(&self) -> Option<i64> {
        self.row.at.epoch_second(&self.listing.arena)
    }

    pub fn rendered_at(&self) -> Text<'a> {
        self.row.rendered_at.text(&self.listing.arena)
    }

    /// The record's `domain` field.
    pub fn domain(&self) -> &'a str {
        let (domain, _) = self.listing.origins[self.row.origin as usize];
        &self.listing.names[domain as usize]
    }

    /// A number naming [`RowRef::domain`] within the listing (equal domains, equal
    /// numbers): a table measures each name once.
    pub fn domain_key(&self) -> u32 {
        self.listing.origins[self.row.origin as usize].0
    }

    /// A number naming [`RowRef::target_server`] within the listing (none: `u32::MAX`).
    pub fn target_key(&self) -> u32 {
        self.row.target
    }

    /// The host that recorded it (none in records written before hosts were recorded).
    pub fn host(&self) -> Option<&'a str> {
        let (_, host) = self.listing.origins[self.row.origin as usize];
        self.listing.names.get(host as usize).map(String::as_str)
    }

    pub fn target_server(&self) -> Option<&'a str> {
        self.listing
            .names
            .get(self.row.target as usize)
            .map(String::as_str)
    }

    /// The CR object id.
    pub fn cr(&self) -> &'a str {
        &self.listing.names[self.row.cr as usize]
    }

    /// A number naming the CR object within the listing (equal objects, equal numbers).
    pub fn cr_key(&self) -> u32 {
        self.row.cr
    }

    /// The state to show, as [`super::Snapshot::state`].
    pub fn state(&self) -> State {
        self.row.fold.state()
    }

    /// The cluster channel, as [`super::Snapshot::cluster_state`] (of a snapshot that is
    /// not deleted: a deleted one is only `deleted`).
    pub fn cluster_state(&self) -> Option<State> {
        self.row.fold.cluster()
    }

    pub fn reason(&self) -> Option<Reason> {
        self.row.reason
    }

    /// The tie-breaker of the order (the line number for a version 1 record).
    pub fn seq(&self) -> u64 {
        self.row.seq
    }
}

impl Listing {
    /// How many snapshots it holds.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The rows not deleted.
    pub fn live_len(&self) -> usize {
        self.rows.iter().filter(|r| !r.fold.deleted()).count()
    }

    /// The rows, in the listing's order.
    pub fn rows(&self) -> impl DoubleEndedIterator<Item = RowRef<'_>> + ExactSizeIterator {
        self.rows
            .iter()
            .map(move |row| RowRef { listing: self, row })
    }

    /// Whether a snapshot id was recorded twice (the listing then keeps the first
    /// record, as every reader does).
    pub fn has_repeats(&self) -> bool {
        self.eager
    }

    /// The row at `i`.
    pub fn row(&self, i: usize) -> Option<RowRef<'_>> {
        self.rows.get(i).map(|row| RowRef { listing: self, row })
    }

    /// Keeps the rows `keep` accepts, in the same order.
    pub fn retain(&mut self, mut keep: impl FnMut(RowRef<'_>) -> bool) {
        let rows = std::mem::take(&mut self.rows);
        let mut kept = rows;
        kept.retain(|row| keep(RowRef { listing: self, row }));
        self.rows = kept;
    }

    /// Newest first.
    pub fn reverse(&mut self) {
        self.rows.reverse();
    }

    /// Keeps the first `n` rows.
    pub fn truncate(&mut self, n: usize) {
        self.rows.truncate(n);
    }

    fn put(&mut self, s: &str) -> Str {
        if let Some(p) = pack_time(s.as_bytes()).or_else(|| pack_hex(s.as_bytes())) {
            return p;
        }
        let start = self.arena.len() as u64;
        self.arena.push_str(s);
        Str(TAG_SPAN << TAG_SHIFT | (s.len() as u64) << 40 | start)
    }

    /// Interns `s`; `last` is the field's previous name, compared before any hashing
    /// (consecutive records mostly share domain, target and object).
    fn name(&mut self, s: &str, last: usize) -> u32 {
        if let Some(i) = self.last_names[last]
            && self.names[i as usize] == s
        {
            return i;
        }
        let i = match self.name_index.get(s) {
            Some(&i) => i,
            None => {
                let i = self.names.len() as u32;
                self.names.push(s.to_string());
                self.name_index.insert(s.to_string(), i);
                i
            }
        };
        self.last_names[last] = Some(i);
        i
    }

    /// The (domain, host) pair of a record, interned; consecutive records mostly share it.
    fn origin(&mut self, domain: &str, host: Option<&str>) -> u32 {
        let pair = (
            self.name(domain, 0),
            host.map_or(u32::MAX, |h| self.name(h, 3)),
        );
        if let Some(i) = self.last_origin
            && self.origins[i as usize] == pair
        {
            return i;
        }
        let next = self.origins.len() as u32;
        let i = *self.origin_index.entry(pair).or_insert(next);
        if i == next {
            self.origins.push(pair);
        }
        self.last_origin = Some(i);
        i
    }

    /// The key of an id: packed as [`Listing::put`] packs it (time or hex), else its
    /// text. Equal ids have equal keys, whatever the shape (the text of a packed id
    /// is never in the arena, so it is compared packed).
    fn id_key(id: &str) -> (Option<Str>, &str) {
        (
            pack_time(id.as_bytes()).or_else(|| pack_hex(id.as_bytes())),
            id,
        )
    }

    fn id_hash(&self, key: (Option<Str>, &str)) -> u64 {
        use std::hash::BuildHasher;
        match key.0 {
            Some(p) => self.hasher.hash_one(p.0),
            None => self.hasher.hash_one(key.1),
        }
    }

    /// The row of the id of `key` (hashed to `hash`), or the free slot it would take.
    /// A slot holds the high half of its id's hash beside the row number + 1, so a
    /// probe reads a row (a cache miss in a long listing) only when they agree.
    fn probe(&self, hash: u64, key: (Option<Str>, &str)) -> Result<u32, usize> {
        if self.ids.is_empty() {
            return Err(0);
        }
        let mask = self.ids.len() - 1;
        let mut slot = hash as usize & mask;
        loop {
            let entry = self.ids[slot];
            if entry == 0 {
                return Err(slot);
            }
            if entry >> 32 == hash >> 32 {
                let n = entry as u32;
                let row = self.rows[n as usize - 1].id;
                let same = match key.0 {
                    Some(p) => row == p,
                    None => row.tag() == TAG_SPAN && &*row.text(&self.arena) == key.1,
                };
                if same {
                    return Ok(n - 1);
                }
            }
            slot = (slot + 1) & mask;
        }
    }

    /// The row of snapshot `id`, if listed; the last row first (a state change mostly
    /// follows its snapshot's record: no probe then).
    fn find_key(&mut self, key: (Option<Str>, &str)) -> Option<u32> {
        let last = self.rows.last()?;
        let same = match key.0 {
            Some(p) => last.id == p,
            None => last.id.tag() == TAG_SPAN && &*last.id.text(&self.arena) == key.1,
        };
        if same {
            return Some(self.rows.len() as u32 - 1);
        }
        let hash = self.id_hash(key);
        if !self.may_hold(hash) {
            return None;
        }
        self.index_rows();
        self.probe(hash, key).ok()
    }

    /// A listing that drops a snapshot recorded twice as it comes (see
    /// [`Listing::eager`]).
    pub(super) fn eager() -> Listing {
        Listing {
            eager: true,
            ..Listing::default()
        }
    }

    /// How many snapshots are owed to the cluster after the lines read so far, counting
    /// as owed every state change still waiting for its snapshot's line and every
    /// repeated snapshot record (so a count of zero after a segment says nothing before
    /// its end can be owed later but through a later line, and each id before it was
    /// recorded once: see [`super::queue`]).
    pub(super) fn owed(&self) -> u64 {
        self.pending + self.early.len() as u64 + self.repeats
    }

    /// How many rows are pending after the lines read so far (of [`Listing::owed`]).
    pub(super) fn pending(&self) -> u64 {
        self.pending
    }

    /// Of `applied`, `committed` and `pushed`, the newest time of any change read so far
    /// ([`change_time`]; [`NO_CHANGE`] when there was none).
    pub(super) fn newest_changes(&self) -> [i64; 3] {
        self.newest_changes.0
    }

    /// A listing that also keeps the newest change to `applied`, `committed` and
    /// `pushed` ([`Listing::last_change`]).
    pub(super) fn tracking(mut self) -> Listing {
        self.last = Some(Box::default());
        self
    }

    /// The newest change to `state` (`applied`, `committed` or `pushed`) of any
    /// snapshot, as [`super::Journal::last_in`] finds it: the row and the change's time.
    /// `Some(None)`: there is none; `None`: the listing did not track it, or cannot tell
    /// (the newest changes name no snapshot of the listing: the full read tells).
    pub fn last_change(&self, state: State) -> Option<Option<(usize, String)>> {
        let k = LAST.iter().position(|s| *s == state)?;
        let last = &self.last.as_ref()?[k];
        if last.changes.is_empty() {
            return Some(None);
        }
        let ids: std::collections::HashSet<&str> =
            last.changes.iter().map(|(id, _)| id.as_str()).collect();
        // Of equal times, the first snapshot in the order, then its first change in the
        // order of the times' text, then of the lines.
        let (i, id) = self
            .rows()
            .enumerate()
            .find_map(|(i, r)| ids.get(&*r.id()).map(|id| (i, *id)))?;
        // The full read's history is in the order of the times' text (stable).
        let at = last
            .changes
            .iter()
            .filter(|(c, _)| c == id)
            .min_by(|a, b| a.1.cmp(&b.1))?
            .1
            .clone();
        Some(Some((i, at)))
    }

    /// What [`Listing::last_change`] chooses from: the newest time of a change to
    /// `state` and its changes `(id, at)` in line order; `None` when not tracked.
    pub(super) fn last_candidates(&self, state: State) -> Option<&[(String, String)]> {
        let k = LAST.iter().position(|s| *s == state)?;
        Some(&self.last.as_ref()?[k].changes)
    }

    /// Notes a change for [`Listing::last_change`].
    fn track(&mut self, id: Field<'_>, at: Field<'_>, state: State) {
        let Some(k) = LAST.iter().position(|s| *s == state) else {
            return;
        };
        let Some(last) = self.last.as_mut() else {
            return;
        };
        let l = &mut last[k];
        let at = at.text().to_string();
        let time = crate::util::time::parse_rfc3339(&at);
        if l.changes.is_empty() || time > l.time {
            l.time = time;
            l.changes.clear();
        } else if time < l.time {
            return;
        }
        l.changes.push((id.text().to_string(), at));
    }

    /// Whether two stored ids are the same id.
    fn same_id(&self, a: Str, b: Str) -> bool {
        a == b
            || (a.tag() == TAG_SPAN
                && b.tag() == TAG_SPAN
                && *a.text(&self.arena) == *b.text(&self.arena))
    }

    /// Whether a suspect row (see [`Listing::eager`]) repeats the id of another row:
    /// one pass over the rows, hashing each, keeping those that hash like a suspect.
    fn has_duplicates(&self) -> bool {
        if self.suspects.is_empty() {
            return false;
        }
        type Set = std::collections::HashSet<u64, std::hash::BuildHasherDefault<Hashed>>;
        let suspects: Set = self
            .suspects
            .iter()
            .map(|&i| self.row_hash(i as usize))
            .collect();
        let mut alike: HashMap<u64, Vec<Str>, std::hash::BuildHasherDefault<Hashed>> =
            HashMap::default();
        for i in 0..self.rows.len() {
            let hash = self.row_hash(i);
            if suspects.contains(&hash) {
                let id = self.rows[i].id;
                let same = alike.entry(hash).or_default();
                if same.iter().any(|&other| self.same_id(other, id)) {
                    return true;
                }
                same.push(id);
            }
        }
        false
    }

    /// Makes room for `rows` more snapshots at once: a listing that knows its size
    /// (from the summaries' counts) sizes its filter once instead of at each doubling.
    pub(super) fn reserve(&mut self, rows: usize) {
        self.rows.reserve(rows);
        self.grow_filter(self.rows.len() + rows);
    }

    /// Sizes the filter for `rows` ids (8 bits each), every row added again.
    fn grow_filter(&mut self, rows: usize) {
        let words = rows
            .saturating_mul(8)
            .div_ceil(64)
            .next_power_of_two()
            .max(64);
        if words <= self.filter.len() {
            return;
        }
        self.filter = vec![0; words];
        for i in 0..self.rows.len() {
            let hash = self.row_hash(i);
            self.remember(hash);
        }
    }

    /// The two bits of `hash` in the filter: its word, and the mask of its bits.
    fn filter_bits(&self, hash: u64) -> (usize, u64) {
        let word = (hash >> 12) as usize & (self.filter.len() - 1);
        (word, 1 << (hash & 63) | 1 << ((hash >> 6) & 63))
    }

    /// Whether an id of `hash` may be a row's (never `false` for one that is).
    fn may_hold(&self, hash: u64) -> bool {
        if self.filter.is_empty() {
            return false;
        }
        let (word, bits) = self.filter_bits(hash);
        self.filter[word] & bits == bits
    }

    fn remember(&mut self, hash: u64) {
        let (word, bits) = self.filter_bits(hash);
        self.filter[word] |= bits;
    }

    /// The hash of row `i`'s id.
    fn row_hash(&self, i: usize) -> u64 {
        let id = self.rows[i].id;
        match id.tag() {
            TAG_SPAN => self.id_hash((None, &id.text(&self.arena))),
            _ => self.id_hash((Some(id), "")),
        }
    }

    /// Brings the id table up to date with every row.
    fn index_rows(&mut self) {
        if self.rows.len() * 2 > self.ids.len() {
            let size = (self.rows.capacity().max(self.rows.len() + 1) * 2)
                .next_power_of_two()
                .max(1024);
            self.ids = vec![0; size];
            self.indexed = 0;
        }
        while self.indexed < self.rows.len() {
            let i = self.indexed;
            let id = self.rows[i].id;
            let text = match id.tag() {
                TAG_SPAN => id.text(&self.arena).to_string(),
                _ => String::new(),
            };
            let key = (id.tag() != TAG_SPAN).then_some(id);
            let hash = self.id_hash((key, &text));
            if let Err(slot) = self.probe(hash, (key, &text)) {
                self.ids[slot] = hash >> 32 << 32 | (i as u64 + 1);
            }
            self.indexed += 1;
        }
    }

    fn damage(&mut self, path: &Path, line: usize, what: String) {
        self.damage.push(Damage {
            path: path.to_path_buf(),
            line,
            what,
        });
    }

    /// One event of a line (read from the segment or from its summary), in line order.
    pub(super) fn apply(&mut self, path: &Path, ev: &Ev<'_>) {
        match ev {
            Ev::Snapshot(s) => self.snapshot(s),
            Ev::State {
                id,
                at,
                state,
                reason,
            } => self.state(*id, *at, *state, *reason),
            Ev::Damage { line, what } => self.damage(path, *line, what.to_string()),
            Ev::Supersede {
                at,
                by,
                by_at,
                by_seq,
            } => self.supersede(*at, *by, *by_at, *by_seq),
        }
    }

    /// A `supersede` record: each row pending now and ordered before the bound takes a
    /// `superseded` change at `at` (the rows still pending after it stay candidates).
    fn supersede(&mut self, at: Field<'_>, by: Field<'_>, by_at: Field<'_>, by_seq: u64) {
        let (by, by_at) = (by.text(), by_at.text());
        let second = crate::util::time::parse_rfc3339(&by_at).map(|t| t.as_second());
        self.superseded_before = self.superseded_before.max(second);
        let mut candidates = std::mem::take(&mut self.maybe_pending);
        candidates.sort_unstable();
        candidates.dedup();
        candidates.retain(|&i| {
            let row = &self.rows[i as usize];
            if !owed(row.fold) {
                return false;
            }
            let (row_at, row_id) = (row.at.text(&self.arena), row.id.text(&self.arena));
            if (&*row_at, row.seq, &*row_id) >= (&*by_at, by_seq, &*by) {
                return true;
            }
            self.change(i as usize, at, State::Superseded, None);
            owed(self.rows[i as usize].fold)
        });
        self.maybe_pending = candidates;
    }

    /// A string of an event, stored.
    fn put_field(&mut self, f: Field<'_>) -> Str {
        match f {
            Field::Packed(v) => Str(v),
            Field::Text(s) => self.put(s),
        }
    }

    /// The key of an id of an event (a summary stores it packed as [`Listing::put`]
    /// packs it).
    fn field_key(f: Field<'_>) -> (Option<Str>, &str) {
        match f {
            Field::Text(s) => Listing::id_key(s),
            Field::Packed(v) => (Some(Str(v)), ""),
        }
    }

    fn snapshot(&mut self, s: &Snap<'_>) {
        self.grow_filter(self.rows.len() + 1);
        let key = Listing::field_key(s.id);
        let hash = self.id_hash(key);
        if self.may_hold(hash) {
            if !self.eager {
                self.suspects.push(self.rows.len() as u32);
            } else {
                self.index_rows();
                if self.probe(hash, key).is_ok() {
                    self.repeats += 1;
                    return; // imported twice: the first record wins
                }
            }
        }
        self.remember(hash);
        let i = self.rows.len() as u32;
        let row = Row {
            id: self.put_field(s.id),
            at: self.put_field(s.at),
            rendered_at: self.put_field(s.rendered_at),
            cluster_at: NONE,
            seq: s.seq,
            origin: self.origin(s.domain, s.host),
            target: match s.target {
                Some(t) => self.name(t, 1),
                None => u32::MAX,
            },
            cr: self.name(s.cr, 2),
            fold: Fold::recorded(s.cluster),
            reason: None,
        };
        if owed(row.fold) {
            self.pending += 1;
            self.maybe_pending.push(i);
        }
        self.rows.push(row);
        if !self.early.is_empty()
            && let Some(early) = self.early.remove(&*s.id.text())
        {
            for e in early {
                self.change(i as usize, Field::Text(&e.at), e.state, e.reason);
            }
        }
    }

    fn state(&mut self, id: Field<'_>, at: Field<'_>, state: State, reason: Option<Reason>) {
        if self.last.is_some() {
            self.track(id, at, state);
        }
        if let Some(k) = LAST.iter().position(|s| *s == state) {
            let time = change_time(&at.text());
            self.newest_changes.0[k] = self.newest_changes.0[k].max(time);
        }
        match self.find_key(Listing::field_key(id)) {
            Some(i) => self.change(i as usize, at, state, reason),
            None => self
                .early
                .entry(id.text().to_string())
                .or_default()
                .push(Early {
                    at: at.text().to_string(),
                    state,
                    reason,
                }),
        }
    }

    /// One state change, in line order, by the rules of [`Fold`]: a cluster change is in
    /// force when its time is no earlier than the one in force (of equal times, the later
    /// line) — what the full read's time-ordered fold gives.
    fn change(&mut self, i: usize, at: Field<'_>, state: State, reason: Option<Reason>) {
        let was = owed(self.rows[i].fold);
        self.fold_change(i, at, state, reason);
        let is = owed(self.rows[i].fold);
        self.pending = self.pending + u64::from(is) - u64::from(was);
        if is && !was {
            self.maybe_pending.push(i as u32);
        }
    }

    fn fold_change(&mut self, i: usize, at: Field<'_>, state: State, reason: Option<Reason>) {
        if !Fold::is_cluster_change(state) {
            self.rows[i].fold.take(state, false);
            return;
        }
        let current = self.rows[i].cluster_at;
        // An `at` of another layout is appended even when it loses: rare.
        let stored = self.put_field(at);
        let newest = current == NONE || stored.cmp(current, &self.arena) != Ordering::Less;
        let row = &mut self.rows[i];
        if row.fold.take(state, newest).in_force {
            row.cluster_at = stored;
            row.reason = reason;
        }
    }

    /// Orders the rows by (at, seq, id) once every file is read. `false` when the
    /// listing is not the answer: a snapshot was recorded twice and the listing was not
    /// eager — read the files again into [`Listing::eager`].
    #[must_use]
    pub(super) fn finish(&mut self) -> bool {
        if !self.eager && self.has_duplicates() {
            return false;
        }
        self.reopened = self
            .early
            .values()
            .flatten()
            .any(|e| e.state == State::Pending);
        self.early = HashMap::new();
        self.maybe_pending = Vec::new();
        self.ids = Vec::new();
        self.filter = Vec::new();
        self.suspects = Vec::new();
        let arena = &self.arena;
        let cmp = |a: &Row, b: &Row| {
            a.at.cmp(b.at, arena)
                .then(a.seq.cmp(&b.seq))
                .then_with(|| a.id.cmp(b.id, arena))
        };
        self.line_ordered = self
            .rows
            .is_sorted_by(|a, b| cmp(a, b) != Ordering::Greater);
        if !self.line_ordered {
            self.rows.sort_unstable_by(cmp);
        }
        true
    }
}

/// A hasher of values that are already hashes (a set of [`Listing::row_hash`]es): the
/// value itself.
#[derive(Default)]
struct Hashed(u64);

impl std::hash::Hasher for Hashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

fn yes() -> bool {
    true
}

/// A target as [`super::TargetRecord`] reads it.
#[derive(Deserialize)]
struct TargetLine<'a> {
    #[serde(borrow)]
    server: Cow<'a, str>,
    #[serde(default, borrow)]
    #[allow(dead_code)]
    context: Option<Cow<'a, str>>,
}

/// A `snapshot` line with the fields, types and defaults of
/// [`super::SnapshotRecord`] (plus its `kind` tag), strings borrowed.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct SnapLine<'a> {
    #[serde(borrow)]
    kind: Cow<'a, str>,
    v: u32,
    #[serde(borrow)]
    id: Cow<'a, str>,
    #[serde(borrow)]
    at: Cow<'a, str>,
    #[serde(default)]
    seq: Option<u64>,
    #[serde(default = "yes")]
    cluster: bool,
    #[serde(borrow)]
    domain: Cow<'a, str>,
    #[serde(borrow)]
    rendered_at: Cow<'a, str>,
    #[serde(borrow)]
    spec_hash: Cow<'a, str>,
    #[serde(borrow)]
    lok8s_version: Cow<'a, str>,
    #[serde(borrow)]
    tool: Cow<'a, str>,
    #[serde(borrow)]
    cr: Cow<'a, str>,
    #[serde(borrow)]
    crd: Cow<'a, str>,
    #[serde(default, borrow)]
    target: Option<TargetLine<'a>>,
    #[serde(default, borrow)]
    host: Option<Cow<'a, str>>,
}

/// A `state` line with the fields, types and defaults of [`super::StateRecord`].
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct StateLine<'a> {
    #[serde(borrow)]
    kind: Cow<'a, str>,
    v: u32,
    #[serde(borrow)]
    id: Cow<'a, str>,
    #[serde(borrow)]
    at: Cow<'a, str>,
    #[serde(default)]
    seq: Option<u64>,
    state: State,
    #[serde(default)]
    reason: Option<Reason>,
    #[serde(default, borrow)]
    detail: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    by: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    commit: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pushed: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    target: Option<TargetLine<'a>>,
}

/// A verified line, as much of it as a listing needs.
enum Light<'a> {
    Snapshot(SnapLine<'a>),
    State(StateLine<'a>),
    Supersede(super::record::SupersedeRecord),
    Other,
}

impl From<Record> for Light<'_> {
    fn from(record: Record) -> Self {
        match record {
            Record::Snapshot(s) => Light::Snapshot(SnapLine {
                kind: Cow::Borrowed("snapshot"),
                v: s.v,
                id: Cow::Owned(s.id.into_string()),
                at: Cow::Owned(s.at),
                seq: s.seq,
                cluster: s.cluster,
                domain: Cow::Owned(s.domain),
                rendered_at: Cow::Owned(s.rendered_at),
                spec_hash: Cow::Owned(s.spec_hash),
                lok8s_version: Cow::Owned(s.lok8s_version),
                tool: Cow::Owned(s.tool),
                cr: Cow::Owned(s.cr),
                crd: Cow::Owned(s.crd),
                target: s.target.map(|t| TargetLine {
                    server: Cow::Owned(t.server),
                    context: t.context.map(Cow::Owned),
                }),
                host: s.host.map(Cow::Owned),
            }),
            Record::State(st) => Light::State(StateLine {
                kind: Cow::Borrowed("state"),
                v: st.v,
                id: Cow::Owned(st.id.into_string()),
                at: Cow::Owned(st.at),
                seq: st.seq,
                state: st.state,
                reason: st.reason,
                detail: None,
                by: None,
                commit: None,
                pushed: None,
                target: None,
            }),
            Record::Supersede(r) => Light::Supersede(r),
            // A folded publish (an event on an existing snapshot) adds no row.
            Record::Repair(_) | Record::Head(_) | Record::Event(_) => Light::Other,
        }
    }
}

/// The record of a line as [`journal::decode`] reads it.
fn decode(line: &[u8]) -> Result<Light<'_>, LineError> {
    if let Some(light) = decode_direct(line) {
        return Ok(light);
    }
    journal::decode(line).map(Light::from)
}

/// A line of clinv's own layout, parsed borrowing; `None` for anything else (damage
/// included), which [`journal::decode`] then reads.
fn decode_direct(line: &[u8]) -> Option<Light<'_>> {
    let text = std::str::from_utf8(line).ok()?;
    let (sum, json) = text.split_once(' ')?;
    if !journal::checksum_matches(sum, json.as_bytes()) {
        return None;
    }
    let rest = json.strip_prefix("{\"kind\":\"")?;
    let (kind, rest) = if let Some(r) = rest.strip_prefix("snapshot\",") {
        (true, r)
    } else {
        (false, rest.strip_prefix("state\",")?)
    };
    if rest.contains("\"kind\"") {
        return None;
    }
    if kind {
        serde_json::from_str(json).ok().map(Light::Snapshot)
    } else {
        serde_json::from_str(json).ok().map(Light::State)
    }
}

/// Lines decoded together, split across the cores.
const BATCH: usize = 8192;
const BATCH_BYTES: usize = 8 << 20;

/// Decodes lines on up to two threads; results in the lines' order.
fn decode_batch(lines: &[Vec<u8>]) -> Vec<Result<Light<'_>, LineError>> {
    journal::on_two_threads(lines, decode)
}

/// The event of a decoded line (`None`: a line that adds nothing to a listing).
fn event<'a>(line_no: usize, result: &'a Result<Light<'a>, LineError>) -> Option<Ev<'a>> {
    match result {
        Ok(Light::Snapshot(s)) => Some(Ev::Snapshot(Snap {
            id: Field::Text(&s.id),
            at: Field::Text(&s.at),
            rendered_at: Field::Text(&s.rendered_at),
            seq: s.seq.unwrap_or(line_no as u64),
            cluster: s.cluster,
            domain: &s.domain,
            host: s.host.as_deref(),
            target: s.target.as_ref().map(|t| t.server.as_ref()),
            cr: &s.cr,
        })),
        Ok(Light::State(st)) => Some(Ev::State {
            id: Field::Text(&st.id),
            at: Field::Text(&st.at),
            state: st.state,
            reason: st.reason,
        }),
        Ok(Light::Supersede(r)) => Some(Ev::Supersede {
            at: Field::Text(&r.at),
            by: Field::Text(&r.by),
            by_at: Field::Text(&r.by_at),
            by_seq: r.by_seq,
        }),
        Ok(Light::Other) => None,
        Err(what) => Some(Ev::Damage {
            line: line_no,
            what: Cow::Owned(what.to_string()),
        }),
    }
}

/// Feeds one file's lines, as events, to `sink`, as [`journal::read_lines`] feeds a
/// builder. Returns the number of complete lines and the bytes of an incomplete last one.
pub(super) fn read_file(
    reader: impl std::io::Read,
    sink: &mut dyn FnMut(&Ev<'_>),
) -> std::io::Result<(usize, u64)> {
    read_file_after(reader, 0, sink)
}

/// [`read_file`] of the part of a file after its first `lines_before` lines (numbered
/// on from there, in damage and a record's default `seq`, as the whole file's read
/// numbers them). Returns the number of the last complete line.
pub(super) fn read_file_after(
    reader: impl std::io::Read,
    lines_before: usize,
    sink: &mut dyn FnMut(&Ev<'_>),
) -> std::io::Result<(usize, u64)> {
    let mut reader = std::io::BufReader::with_capacity(1 << 20, reader);
    // Reused line buffers: `pool[..count]` hold the batch, numbered by `numbers`.
    let mut pool: Vec<Vec<u8>> = Vec::new();
    let mut numbers: Vec<usize> = Vec::with_capacity(BATCH);
    let mut count = 0;
    let mut batch_bytes = 0;
    let mut line_no = lines_before;
    let mut line = Vec::with_capacity(4096);
    fn flush(pool: &[Vec<u8>], numbers: &mut Vec<usize>, sink: &mut dyn FnMut(&Ev<'_>)) {
        let decoded = decode_batch(pool);
        for (no, result) in numbers.drain(..).zip(&decoded) {
            if let Some(ev) = event(no, result) {
                sink(&ev);
            }
        }
    }
    loop {
        line.clear();
        let (n, complete) = journal::read_line(&mut reader, &mut line)?;
        if n == 0 || !complete {
            flush(&pool[..count], &mut numbers, sink);
            return Ok(if n == 0 {
                (line_no, 0)
            } else {
                (line_no, n as u64)
            });
        }
        line_no += 1;
        if n > MAX_LINE + 1 {
            flush(&pool[..count], &mut numbers, sink);
            (count, batch_bytes) = (0, 0);
            sink(&Ev::Damage {
                line: line_no,
                what: Cow::Owned(format!("line of {n} bytes is over the limit ({MAX_LINE})")),
            });
        } else if !line.is_empty() {
            if pool.len() == count {
                pool.push(Vec::new());
            }
            std::mem::swap(&mut pool[count], &mut line);
            count += 1;
            numbers.push(line_no);
            batch_bytes += n;
            if count >= BATCH || batch_bytes >= BATCH_BYTES {
                flush(&pool[..count], &mut numbers, sink);
                (count, batch_bytes) = (0, 0);
            }
        }
    }
}

/// What a line before a `--since` window adds to the rows before it — `Ok(Some(id))`
/// a snapshot, `Ok(None)` nothing, `Err(())` damage (or a line that may be: the caller
/// reads the whole history, which reports it) — told for a line of clinv's own layout
/// by its checksum and layout alone, not parsed: those lines are only counted (their
/// revisions), never shown. Any other line is decoded as the full read decodes it.
pub(super) fn row_before(line: &[u8]) -> Result<Option<Cow<'_, str>>, ()> {
    if line.len() > MAX_LINE {
        return Err(());
    }
    if let Some(kind) = checked_kind(line) {
        return Ok(kind.map(Cow::Borrowed));
    }
    match decode(line) {
        Ok(Light::Snapshot(s)) => Ok(Some(s.id)),
        Ok(_) => Ok(None),
        Err(_) => Err(()),
    }
}

/// A verified line of clinv's layout: `Some(None)` a state change, `Some(Some(id))` a
/// snapshot; `None` for anything else.
fn checked_kind(line: &[u8]) -> Option<Option<&str>> {
    let text = std::str::from_utf8(line).ok()?;
    let (sum, json) = text.split_once(' ')?;
    let rest = json.strip_prefix("{\"kind\":\"")?;
    let found = if let Some(r) = rest.strip_prefix("state\",") {
        (None, r)
    } else {
        let (id, r) = snapshot_fields(rest.strip_prefix("snapshot\",")?)?;
        (Some(id), r)
    };
    (!found.1.contains("\"kind\"") && journal::checksum_matches(sum, json.as_bytes()))
        .then_some(found.0)
}

/// The id of a snapshot line in clinv's layout (`"v":N,"id":"…"` after its kind) and
/// the text after it.
fn snapshot_fields(rest: &str) -> Option<(&str, &str)> {
    let rest = rest.strip_prefix("\"v\":")?;
    let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit());
    let rest = rest.strip_prefix(",\"id\":\"")?;
    let end = rest.find('"')?;
    let id = &rest[..end];
    (!id.is_empty() && !id.contains('\\')).then_some((id, &rest[end + 1..]))
}

/// The `at` of a line that looks like a snapshot of clinv's layout
/// (`…"id":"…","at":"…"`), not verified: where a backward scan may stop, the line then
/// decoded. `None` for anything else.
pub(super) fn snapshot_at_unchecked(line: &[u8]) -> Option<&str> {
    let text = std::str::from_utf8(line.get(65..)?).ok()?;
    let rest = text.strip_prefix("{\"kind\":\"snapshot\",")?;
    let (_, rest) = snapshot_fields(rest)?;
    let rest = rest.strip_prefix(",\"at\":\"")?;
    Some(&rest[..rest.find('"')?])
}

/// The damage of an incomplete last line in a sealed segment.
pub(super) fn sealed_torn(lines: usize, torn: u64) -> Option<Ev<'static>> {
    (torn > 0).then(|| Ev::Damage {
        line: lines + 1,
        what: Cow::Owned(format!(
            "incomplete last line ({torn} bytes) in a sealed segment"
        )),
    })
}

/// Reads a journal's bytes into a listing (tests and the fuzz targets).
pub fn read_bytes(path: &Path, bytes: &[u8]) -> Listing {
    let read = |mut listing: Listing| {
        // Reading from memory cannot fail.
        let read = read_file(bytes, &mut |ev| listing.apply(path, ev));
        listing.torn_tail = read.map_or(0, |(_, torn)| torn);
        let done = listing.finish();
        (listing, done)
    };
    match read(Listing::default()) {
        (listing, true) => listing,
        // A snapshot recorded twice: read again, dropping it as it comes.
        _ => read(Listing::eager()).0,
    }
}

/// What the listing tests and the summary tests share.
#[cfg(test)]
pub(super) mod testing {
    use super::Listing;
    use super::journal;
    use crate::delivery::Reason;
    use crate::store::record::{Journal, Record, SnapshotRecord, State, StateRecord, TargetRecord};

    /// `compact` lists what the full read `full` holds: damage, torn tail, and each
    /// snapshot's fields and states in order (`text`: the journal, for the message).
    pub(crate) fn assert_lists_the_same(full: &Journal, compact: &Listing, text: &str) {
        assert_eq!(full.damage, compact.damage, "{text}");
        assert_eq!(full.torn_tail, compact.torn_tail);
        assert_eq!(full.snapshots.len(), compact.len(), "{text}");
        for (s, r) in full.snapshots.iter().zip(compact.rows()) {
            assert_eq!(s.record.id, &*r.id(), "{text}");
            assert_eq!(s.record.at, &*r.at());
            assert_eq!(s.record.rendered_at, &*r.rendered_at());
            assert_eq!(s.record.cr, r.cr());
            assert_eq!(s.record.domain, r.domain());
            assert_eq!(s.record.host.as_deref(), r.host(), "{text}");
            assert_eq!(
                s.record.target.as_ref().map(|t| t.server.as_str()),
                r.target_server()
            );
            assert_eq!(s.state, r.state(), "{text}");
            // Of a deleted snapshot only that counts (listings leave it out).
            if s.state != State::Deleted {
                assert_eq!(s.cluster_state, r.cluster_state(), "{text}");
                assert_eq!(s.reason, r.reason(), "{text}");
            }
        }
    }

    pub(crate) fn snap(id: &str, at: &str, seq: Option<u64>, cluster: bool) -> Record {
        Record::Snapshot(SnapshotRecord {
            v: 2,
            id: id.into(),
            at: at.into(),
            seq,
            cluster,
            domain: "d".into(),
            rendered_at: "2026-01-01T00:00:00Z".into(),
            spec_hash: "h".into(),
            lok8s_version: "1".into(),
            tool: "t".into(),
            cr: "c".repeat(64),
            crd: "e".repeat(64),
            target: Some(TargetRecord {
                server: "https://x".into(),
                context: None,
                kubeconfig: Vec::new(),
            }),
            // Some records carry a host (one of a few), older ones none.
            host: match id.len() % 3 {
                0 => None,
                n => Some(format!("build-{n}.example")),
            },
        })
    }

    /// A xorshift generator from `seed`: `next(n)` is in `0..n`, the same on every run.
    pub(crate) fn xorshift(mut seed: u64) -> impl FnMut(u64) -> u64 {
        move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        }
    }

    /// Pseudo-random journals — state changes out of time order, before their snapshot,
    /// of no snapshot, duplicates, damage, a torn tail.
    pub(crate) fn random_journals() -> Vec<String> {
        let mut out = Vec::new();
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        let states = State::ALL;
        let times = [
            "2026-01-01T00:00:01.000Z",
            "2026-01-01T00:00:01Z",
            "2026-01-01T00:00:02.000Z",
            "2026-01-01T00:00:02.5Z",
            "2026-01-01T00:00:03.000Z",
        ];
        for round in 0..300 {
            // An id of a time's shape is packed as a time: still found by its text.
            let ids: Vec<String> = (0..7)
                .map(|i| match i {
                    4 => format!("not-hex-{round}"),
                    5 => "f".repeat(20),
                    6 => "2026-01-01T00:00:09Z".to_string(),
                    _ => format!("{:012x}", i * 7 + round),
                })
                .collect();
            let mut text = String::new();
            for _ in 0..(5 + next(30)) {
                let id = &ids[next(ids.len() as u64) as usize];
                let at = times[next(times.len() as u64) as usize];
                let line = match next(10) {
                    0..=2 => journal::encode(&snap(
                        id,
                        at,
                        (next(2) == 0).then(|| next(5)),
                        next(3) != 0,
                    ))
                    .unwrap(),
                    3 => "garbage line\n".to_string(),
                    _ => {
                        let mut st = StateRecord::new(
                            &id.as_str().into(),
                            at,
                            states[next(states.len() as u64) as usize],
                        );
                        st.reason = (next(2) == 0).then_some(Reason::Conflict);
                        st.detail = (next(2) == 0).then(|| "d\"kind\"".into());
                        journal::encode(&Record::State(st)).unwrap()
                    }
                };
                text.push_str(&line);
            }
            if next(2) == 0 {
                text.push_str("abc {\"kind\"");
            }
            out.push(text);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::super::record::StateRecord;
    use super::testing::{random_journals, snap};
    use super::*;

    #[test]
    fn packed_times_give_the_seconds_the_parse_gives() {
        let mut listing = super::Listing::default();
        for text in [
            "2026-01-02T03:04:05.678Z",
            "2026-01-02T03:04:05Z",
            "2024-02-29T23:59:60Z",
            "2023-02-29T00:00:00Z",
            "2026-13-01T00:00:00Z",
            "2026-04-31T00:00:00.000Z",
            "1969-12-31T23:59:59.000Z",
            "2026-01-02T03:04:05+02:00",
            "yesterday",
            "0123456789abcd",
        ] {
            let packed = listing.put(text);
            assert_eq!(
                packed.epoch_second(&listing.arena),
                crate::util::time::parse_rfc3339(text).map(|t| t.as_second()),
                "{text}"
            );
        }
    }

    #[test]
    fn packed_strings_read_back_and_compare_like_text() {
        let mut l = Listing::default();
        let samples = [
            "2026-01-02T03:04:05.678Z",
            "2026-01-02T03:04:05Z",
            "2026-01-02T03:04:05.6789Z",
            "0a1b2c3d4e5f",
            "ABCDEF",
            "00000000000000",
            "000000000000000",
            "",
            "x\ny",
            "0",
        ];
        let packed: Vec<Str> = samples.iter().map(|s| l.put(s)).collect();
        for (s, p) in samples.iter().zip(&packed) {
            assert_eq!(&*p.text(&l.arena), *s);
        }
        for (a, pa) in samples.iter().zip(&packed) {
            for (b, pb) in samples.iter().zip(&packed) {
                assert_eq!(pa.cmp(*pb, &l.arena), a.cmp(b), "{a} vs {b}");
            }
        }
    }

    /// The pseudo-random journals — state changes out of time order, before their snapshot,
    /// of no snapshot, duplicates, damage — read both ways: the same snapshots, order,
    /// states, reasons and damage.
    #[test]
    fn listings_agree_with_the_full_read() {
        for text in random_journals() {
            let path = Path::new("j");
            let full = journal::parse_journal(path, text.as_bytes());
            let compact = read_bytes(path, text.as_bytes());
            testing::assert_lists_the_same(&full, &compact, &text);
        }
    }

    /// The id table grows past its first size; every state change still finds its
    /// snapshot, hex ids or not, and a repeated snapshot record is still ignored.
    #[test]
    fn the_id_table_grows() {
        let at = "2026-01-01T00:00:01.000Z";
        let ids: Vec<String> = (0..3000)
            .map(|i| {
                if i % 3 == 0 {
                    format!("id-{i}")
                } else {
                    format!("{i:012x}")
                }
            })
            .collect();
        let mut text = String::new();
        for (n, id) in ids.iter().enumerate() {
            text.push_str(&journal::encode(&snap(id, at, Some(n as u64), true)).unwrap());
        }
        text.push_str(&journal::encode(&snap(&ids[7], at, Some(9999), true)).unwrap());
        for id in &ids {
            text.push_str(
                &journal::encode(&Record::State(StateRecord::new(
                    &id.as_str().into(),
                    at,
                    State::Applied,
                )))
                .unwrap(),
            );
        }
        let listing = read_bytes(Path::new("j"), text.as_bytes());
        assert_eq!(listing.len(), ids.len());
        assert!(listing.rows().all(|r| r.state() == State::Applied));
    }
}
