//! The journal on disk: generations of segment files, the version 1 `journal`, and
//! the writes that keep them consistent (append, generation switch, migration,
//! clean-up of what a dead writer left).
//!
//! ```text
//! <domain>/segments/CURRENT        the live generation's number ("3\n"), replaced atomically
//! <domain>/segments/3/000000.log   a version 1 journal carried over as it was (if any)
//! <domain>/segments/3/000001.log   segments, appended in turn; a new one at 4 MiB
//! <domain>/journal                 version 1: read while no CURRENT exists
//! ```
//!
//! Sealed segments are never written again. `gc` and `import` write a whole new
//! generation next to the live one and switch to it by replacing `CURRENT` (one
//! rename); a crash before the rename leaves the old generation live and the new one a
//! leftover, after it the new one live and the old one a leftover. Leftovers (other
//! generations, the version 1 journal once migrated, temporary files) are removed by
//! the next writer under the lock.
#![allow(clippy::disallowed_methods)] // the store: the one owner of its files

use super::fold::Fold;
use super::journal::{self, Builder, Lines};
use super::record::{HeadRecord, Journal, Record, SnapshotId, SnapshotRecord, State, StateRecord};
use crate::util::files;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// A segment is sealed and a new one started once it holds this many bytes.
pub const SEGMENT_ROLL: u64 = 4 << 20;

/// The files of one domain's journal.
#[derive(Debug, Clone)]
pub struct Layout {
    dir: PathBuf,
}

impl Layout {
    pub fn new(dir: &Path) -> Layout {
        Layout {
            dir: dir.to_path_buf(),
        }
    }

    pub fn v1_journal(&self) -> PathBuf {
        self.dir.join("journal")
    }

    pub fn segments_dir(&self) -> PathBuf {
        self.dir.join("segments")
    }

    fn current_path(&self) -> PathBuf {
        self.segments_dir().join("CURRENT")
    }

    fn gen_dir(&self, generation: u64) -> PathBuf {
        self.segments_dir().join(generation.to_string())
    }

    /// Whether the domain has a journal of either version, or its `segments` folder: a
    /// first write killed before `CURRENT` leaves only that, and the next writer (a gc of
    /// every domain among them) must see the domain to clean it up.
    pub fn exists(&self) -> bool {
        self.current_path().is_file() || self.v1_journal().is_file() || self.segments_dir().is_dir()
    }

    /// The live generation, if the domain has been written in version 2.
    ///
    /// # Errors
    /// `CURRENT` is unreadable or does not name a generation.
    pub fn current(&self) -> io::Result<Option<u64>> {
        let path = self.current_path();
        match files::read_bounded_nofollow(&path, 64) {
            Ok(bytes) => String::from_utf8_lossy(&bytes)
                .trim()
                .parse()
                .map(Some)
                .map_err(|_| io::Error::other(format!("{}: not a generation", path.display()))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The segment files of `generation`, in order.
    fn segment_files(&self, generation: u64) -> io::Result<Vec<(u64, PathBuf)>> {
        let dir = self.gen_dir(generation);
        let mut out = Vec::new();
        for entry in fs::read_dir(&dir)? {
            let entry = entry?;
            let name = entry.file_name();
            let Some(n) = name
                .to_str()
                .and_then(|n| n.strip_suffix(".log"))
                .and_then(|n| n.parse::<u64>().ok())
            else {
                continue;
            };
            out.push((n, entry.path()));
        }
        out.sort();
        Ok(out)
    }

    /// The files to read, oldest first: the live generation's segments, else the
    /// version 1 journal, else none.
    ///
    /// # Errors
    /// I/O errors.
    pub fn live_files(&self) -> io::Result<Vec<PathBuf>> {
        match self.current()? {
            Some(g) => Ok(self.segment_files(g)?.into_iter().map(|(_, p)| p).collect()),
            None if self.v1_journal().exists() => Ok(vec![self.v1_journal()]),
            None => Ok(Vec::new()),
        }
    }

    /// What the live files are now: their paths, the last one's size, inode, mtime and
    /// ctime (ns), and the newest record's time and `seq` (every append stamps the next
    /// `seq`: file times are coarser than two writes). Every write of the journal — an
    /// append, a cut torn tail, a new segment, a new generation — changes it; so a
    /// reader holding the lock can tell that what it read earlier still stands. `None`
    /// when it cannot be read.
    pub fn fingerprint(&self) -> Option<Fingerprint> {
        let files = self.live_files().ok()?;
        let last = match files.last() {
            Some(path) => {
                let meta = fs::symlink_metadata(path).ok()?;
                file_stamp(&meta)
            }
            None => [0; 4],
        };
        let head = self.current().ok()?.and_then(|g| self.tail_head(g));
        Some(Fingerprint { files, last, head })
    }

    /// Streams every live file into `builder` ([`Builder`], or a gc or export pass). An incomplete last line counts as a
    /// torn tail in the newest file only; in a sealed one it is damage.
    ///
    /// # Errors
    /// `(path, error)` of a file that cannot be read.
    pub fn read(&self, builder: &mut impl Lines) -> Result<(), (PathBuf, io::Error)> {
        self.read_from(0, builder)
    }

    /// [`Layout::read`] from the live file at index `from` on.
    ///
    /// # Errors
    /// `(path, error)` of a file that cannot be read.
    pub fn read_from(
        &self,
        from: usize,
        builder: &mut impl Lines,
    ) -> Result<(), (PathBuf, io::Error)> {
        let list = self.live_files().map_err(|e| (self.segments_dir(), e))?;
        let last = list.len().saturating_sub(1);
        for (i, path) in list.iter().enumerate().skip(from) {
            let file = open_read(path).map_err(|e| (path.clone(), e))?;
            let lines = journal::read_lines(path, file, builder).map_err(|e| (path.clone(), e))?;
            if i != last {
                let torn = builder.take_torn_tail();
                if torn > 0 {
                    builder.damage(
                        path,
                        lines + 1,
                        b"",
                        format!("incomplete last line ({torn} bytes) in a sealed segment"),
                    );
                }
            }
        }
        Ok(())
    }

    /// Removes what dead writers left: other generations, the version 1 journal once
    /// migrated, temporary files next to the journal. The caller holds the lock (every
    /// writer does), so no live writer owns any of them. Not `objects/`: it holds a file
    /// per distinct inventory, and listing it would make every append O(history). Objects
    /// are staged in the domain folder instead; gc sweeps `objects/` for an older clinv's
    /// leftovers ([`Layout::clean_up_objects`]).
    pub fn clean_up(&self) {
        let live = self.current().ok().flatten();
        if let Some(live) = live {
            if let Ok(entries) = fs::read_dir(self.segments_dir()) {
                for entry in entries.flatten() {
                    let name = entry.file_name();
                    let name = name.to_string_lossy();
                    let path = entry.path();
                    if name.parse::<u64>().is_ok_and(|g| g != live) {
                        let _ = fs::remove_dir_all(&path);
                    } else if name.contains(".tmp.") {
                        let _ = fs::remove_file(&path);
                    }
                }
            }
            let _ = fs::remove_file(self.v1_journal());
        }
        // Temporary files sit next to their targets: the domain folder (lock holder,
        // v1 journal) and the live generation's segments.
        remove_temporaries(&self.dir);
        if let Some(live) = live {
            remove_temporaries(&self.gen_dir(live));
        }
    }

    /// Removes the temporary files a dead writer left among the objects. The caller
    /// holds the lock.
    pub fn clean_up_objects(&self) {
        remove_temporaries(&self.dir.join("objects"));
    }

    /// Makes the journal version 2 (the caller holds the lock): the version 1 journal,
    /// its torn tail cut, becomes segment 0 of generation 1 (a hard link, no copy),
    /// followed by a segment holding a `head` record; then `CURRENT` is written. A crash
    /// before that leaves the version 1 journal live. Returns the live generation.
    ///
    /// # Errors
    /// I/O errors.
    pub fn ensure_v2(&self, now: &str) -> io::Result<u64> {
        if let Some(g) = self.current()? {
            return Ok(g);
        }
        let _critical = crate::util::signals::critical();
        create_private_dir(&self.segments_dir())?;
        let generation = 1;
        let dir = self.gen_dir(generation);
        let _ = fs::remove_dir_all(&dir);
        create_private_dir(&dir)?;
        let mut first: Vec<Record> = Vec::new();
        let v1 = self.v1_journal();
        let mut head = (now.to_string(), 0);
        if v1.exists() {
            if let Some(torn) = self.cut_v1_tail()? {
                first.push(Record::Repair(super::record::RepairRecord {
                    v: super::record::FORMAT,
                    at: now.to_string(),
                    seq: None,
                    torn_bytes: torn,
                }));
            }
            let mut builder = Builder::head_only();
            let lines = journal::read_lines(&v1, open_read(&v1)?, &mut builder)?;
            if let Some((at, seq)) = builder.head() {
                head = (at.max(now.to_string()), seq.max(lines as u64));
            } else {
                head.1 = lines as u64;
            }
            let legacy = dir.join("000000.log");
            if fs::hard_link(&v1, &legacy).is_err() {
                fs::copy(&v1, &legacy)?;
                File::open(&legacy)?.sync_all()?;
            }
        }
        if let Some(Record::Repair(r)) = first.first_mut() {
            head.1 += 1;
            r.seq = Some(head.1);
        }
        first.push(Record::Head(HeadRecord {
            v: super::record::FORMAT,
            at: head.0,
            seq: head.1,
        }));
        let text = journal::encode_all(&first).map_err(std::io::Error::other)?;
        write_new(&dir.join(segment_name(1)), text.as_bytes())?;
        files::sync_dir(&dir)?;
        files::sync_dir(&self.segments_dir())?;
        self.switch(generation)?;
        Ok(generation)
    }

    /// Cuts the version 1 journal's incomplete last line (a crash mid-append), durably;
    /// the bytes cut.
    ///
    /// # Errors
    /// I/O errors.
    pub fn cut_v1_tail(&self) -> io::Result<Option<u64>> {
        let mut file = open_append(&self.v1_journal())?;
        let torn = repair_tail(&mut file)?;
        file.sync_all()?;
        Ok(torn)
    }

    /// Points `CURRENT` at `generation` (one atomic, durable rename).
    fn switch(&self, generation: u64) -> io::Result<()> {
        files::write_atomic(
            &self.current_path(),
            format!("{generation}\n").as_bytes(),
            0o600,
        )?;
        files::sync_dir(&self.segments_dir())
    }

    /// Appends `text` (whole records) to the active segment of the live generation, or
    /// to a new one when it is full; cuts a torn tail first (returned). One write, one
    /// fsync; a failed write is cut off again.
    ///
    /// # Errors
    /// I/O errors.
    pub fn append(&self, generation: u64, text: &[u8]) -> io::Result<()> {
        let (path, created) = self.active(generation)?;
        let mut file = open_append(&path).map_err(|e| named(&path, e))?;
        let before = file.metadata()?.len();
        if let Err(e) = file.write_all(text).and_then(|()| file.sync_all()) {
            let _ = file.set_len(before);
            let _ = file.sync_all();
            return Err(named(&path, e));
        }
        if created {
            files::sync_dir(&self.gen_dir(generation))?;
        }
        super::changes::note(&self.dir);
        Ok(())
    }

    /// The segment appends go to (a new one once the last is full) and whether it is new.
    fn active(&self, generation: u64) -> io::Result<(PathBuf, bool)> {
        let list = self.segment_files(generation)?;
        match list.last() {
            Some((n, path)) if *n > 0 => {
                let len = fs::symlink_metadata(path)?.len();
                if len < SEGMENT_ROLL {
                    Ok((path.clone(), false))
                } else {
                    Ok((self.gen_dir(generation).join(segment_name(n + 1)), true))
                }
            }
            _ => Ok((self.gen_dir(generation).join(segment_name(1)), true)),
        }
    }

    /// Cuts the torn tail of the active segment; returns the bytes cut.
    ///
    /// # Errors
    /// I/O errors.
    pub fn repair(&self, generation: u64) -> io::Result<Option<u64>> {
        // The last segment, full or not: a torn tail is cut before a new one starts.
        let list = self.segment_files(generation)?;
        match list.last() {
            Some((n, path)) if *n > 0 => {
                repair_tail(&mut open_append(path).map_err(|e| named(path, e))?)
                    .map_err(|e| named(path, e))
            }
            _ => Ok(None),
        }
    }

    /// Where the history stands — the newest recorded time and the largest `seq` — read
    /// from the last records of the active segment (every append, migration and new
    /// generation ends with a record carrying both). `None` when they do not verify.
    pub fn tail_head(&self, generation: u64) -> Option<(String, u64)> {
        let list = self.segment_files(generation).ok()?;
        let (n, path) = list.last()?;
        if *n == 0 {
            return None;
        }
        // The last whole line that is a record tells, if it carries a `seq`.
        let last = rfind_line(path, true, |l| {
            (!l.is_empty()).then(|| journal::decode(l).ok())?
        });
        last.ok()?
            .and_then(|r| Some((r.at().to_string(), r.seq()?)))
    }

    /// The domain's newest snapshot that is not deleted — what the full read's
    /// [`Journal::newest_first`] gives — found from the end of the live generation, so a
    /// publish does not read the history to decide whether it folds. `None` when this
    /// cannot tell (a version 1 journal, a migrated version 1 history still in
    /// `000000.log`): the caller reads the whole journal then.
    ///
    /// In a live generation the line order of snapshot records is the order (at, seq,
    /// id): a generation is written in that order, and every append is stamped after
    /// the newest record. So, reading backwards, the first snapshot line that verifies
    /// and is not deleted is the newest. Lines that cannot change that answer — events
    /// and state changes other than `deleted`, damaged or not — are passed over by their
    /// prefix without being decoded; everything else is decoded as the full read
    /// decodes it.
    pub fn newest_snapshot(&self) -> Option<Option<SnapshotRecord>> {
        self.newest_snapshot_where(|_| true)
    }

    /// [`Layout::newest_snapshot`] among the snapshots `keep` accepts: with "recorded at
    /// or before a date", the snapshot `@DATE` names (the line order is the order, so the
    /// first that verifies from the end is the newest then); its cost is the lines after
    /// it. `None` when the end cannot tell.
    pub fn newest_snapshot_where(
        &self,
        keep: impl Fn(&SnapshotRecord) -> bool,
    ) -> Option<Option<SnapshotRecord>> {
        let generation = self.current().ok()??;
        let files = self.segment_files(generation).ok()?;
        let mut deleted = std::collections::HashSet::new();
        for (i, (n, path)) in files.iter().enumerate().rev() {
            if *n == 0 {
                return None;
            }
            // An incomplete last line of the active segment is not a record yet.
            let found = rfind_line(path, i + 1 == files.len(), |line| {
                if line.is_empty() || passes_over(line) {
                    return None;
                }
                match journal::decode(line) {
                    Ok(Record::Snapshot(s)) if !deleted.contains(&s.id) && keep(&s) => Some(s),
                    Ok(Record::State(st)) if st.state == State::Deleted => {
                        deleted.insert(st.id);
                        None
                    }
                    _ => None,
                }
            });
            if let Some(s) = found.ok()? {
                return Some(Some(s));
            }
        }
        Some(None)
    }

    /// [`Layout::newest_snapshot`], and whether it waits for the cluster — with, when it
    /// does, the snapshot the cluster holds (the newest whose latest cluster state is
    /// `applied`), found from the end the same way: state lines are decoded here, as
    /// they come after their snapshot's line. `None` when the end cannot tell.
    pub fn newest_queue(&self) -> Option<Queue> {
        let generation = self.current().ok()??;
        let files = self.segment_files(generation).ok()?;
        let mut scan = QueueScan::default();
        for (i, (n, path)) in files.iter().enumerate().rev() {
            if *n == 0 {
                return None;
            }
            let done = rfind_line(path, i + 1 == files.len(), |line| scan.line(line));
            if done.ok()?.is_some() {
                break;
            }
        }
        Some(scan.queue)
    }

    /// The first `snapshot` record of `id` in the live files (the one every reader
    /// takes), streaming: only lines that hold the id as clinv writes it are decoded,
    /// and every line when none does (a record another writer escaped differently).
    ///
    /// # Errors
    /// `(path, error)` of a file that cannot be read.
    pub fn find_snapshot(&self, id: &str) -> Result<Option<SnapshotRecord>, (PathBuf, io::Error)> {
        let quoted =
            serde_json::to_string(id).map_err(|e| (self.segments_dir(), io::Error::other(e)))?;
        let needle = format!("\"id\":{quoted}");
        for exact in [true, false] {
            for path in self.live_files().map_err(|e| (self.segments_dir(), e))? {
                let file = open_read(&path).map_err(|e| (path.clone(), e))?;
                let mut reader = io::BufReader::with_capacity(256 << 10, file);
                let mut line = Vec::new();
                loop {
                    line.clear();
                    let (n, complete) = journal::read_line(&mut reader, &mut line)
                        .map_err(|e| (path.clone(), e))?;
                    if n == 0 || !complete {
                        break;
                    }
                    if exact && !contains(&line, needle.as_bytes()) {
                        continue;
                    }
                    if let Ok(Record::Snapshot(s)) = journal::decode(&line)
                        && s.id == id
                    {
                        return Ok(Some(s));
                    }
                }
            }
        }
        Ok(None)
    }

    /// `"id":<id>` as clinv writes it into a line, and the live files (oldest first).
    fn needle_and_files(&self, id: &str) -> Result<(String, Vec<PathBuf>), (PathBuf, io::Error)> {
        let quoted =
            serde_json::to_string(id).map_err(|e| (self.segments_dir(), io::Error::other(e)))?;
        let files = self.live_files().map_err(|e| (self.segments_dir(), e))?;
        Ok((format!("\"id\":{quoted}"), files))
    }

    /// [`Layout::find_snapshot`] from the newest end of the live files, for an id
    /// recorded once (the caller knows: see [`super::scan::Listing::has_repeats`]): the
    /// cost of finding a recent snapshot — what a delivery looks for — is what lies
    /// after it. Only lines holding the id as clinv writes it are decoded; when none
    /// does (another writer's escaping), the forward search answers.
    ///
    /// # Errors
    /// `(path, error)` of a file that cannot be read.
    pub fn find_snapshot_from_end(
        &self,
        id: &str,
    ) -> Result<Option<SnapshotRecord>, (PathBuf, io::Error)> {
        let (needle, files) = self.needle_and_files(id)?;
        for (i, path) in files.iter().enumerate().rev() {
            let found = rfind_line(path, i + 1 == files.len(), |line| {
                if !holds(line, &needle) {
                    return None;
                }
                match journal::decode(line) {
                    Ok(Record::Snapshot(s)) if s.id == id => Some(s),
                    _ => None,
                }
            })
            .map_err(|e| (path.clone(), e))?;
            if found.is_some() {
                return Ok(found);
            }
        }
        self.find_snapshot(id)
    }

    /// The first `state` record of snapshot `id` to `state` at `at` in the newest live
    /// file that holds one, searched from the end (the change [`super::scan::Listing::last_change`]
    /// names: nearly always recent).
    ///
    /// # Errors
    /// `(path, error)` of a file that cannot be read.
    pub fn find_state_from_end(
        &self,
        id: &str,
        state: State,
        at: &str,
    ) -> Result<Option<StateRecord>, (PathBuf, io::Error)> {
        let (needle, files) = self.needle_and_files(id)?;
        for exact in [true, false] {
            for (i, path) in files.iter().enumerate().rev() {
                let mut found = None;
                // Backwards to the file's start: the last one met is the first.
                rfind_line(path, i + 1 == files.len(), |line| {
                    if exact && !holds(line, &needle) {
                        return None::<()>;
                    }
                    if let Ok(Record::State(st)) = journal::decode(line)
                        && st.id == id
                        && st.state == state
                        && st.at == at
                    {
                        found = Some(st);
                    }
                    None
                })
                .map_err(|e| (path.clone(), e))?;
                if found.is_some() {
                    return Ok(found);
                }
            }
        }
        Ok(None)
    }

    /// Writes a new generation from `lines` (whole encoded lines, the last one its
    /// `head`), rolling segments, and switches to it; then removes the old one. A crash
    /// at any point leaves either generation whole. Returns the new generation.
    ///
    /// # Errors
    /// I/O errors; the live generation is then unchanged.
    pub fn write_generation<I>(&self, lines: I) -> io::Result<u64>
    where
        I: IntoIterator<Item = io::Result<Vec<u8>>>,
    {
        let mut lines = lines.into_iter().peekable();
        let mut generation = self.new_generation(true)?;
        while let Some(line) = lines.next() {
            let line = line?;
            if lines.peek().is_none() {
                return generation.switch(&line);
            }
            generation.push(&line)?;
        }
        generation.switch(b"")
    }

    /// Starts a new generation (removing a half-written one a crash left). `ordered`:
    /// its snapshot lines are in the order (at, seq, id), so its tail tells the newest
    /// snapshot; otherwise its body goes into one `000000.log`, which
    /// [`Layout::newest_snapshot`] never reads from the end (as a migrated version 1
    /// journal).
    ///
    /// # Errors
    /// I/O errors.
    pub fn new_generation(&self, ordered: bool) -> io::Result<NewGeneration<'_>> {
        let old = self.current()?;
        create_private_dir(&self.segments_dir())?;
        let generation = old.unwrap_or(0) + 1;
        let dir = self.gen_dir(generation);
        let _ = fs::remove_dir_all(&dir);
        create_private_dir(&dir)?;
        Ok(NewGeneration {
            layout: self,
            generation,
            dir,
            segment: u64::from(ordered),
            file: None,
            buf: Vec::with_capacity(FLUSH + MAX_LINE_BYTES),
            written: 0,
            ordered,
        })
    }
}

/// Bytes a generation being written holds before writing them out.
const FLUSH: usize = 1 << 20;
/// Room for one more line past [`FLUSH`].
const MAX_LINE_BYTES: usize = journal::MAX_LINE + 1;

/// A generation being written: lines pushed in order go out in segments (rolled at
/// [`SEGMENT_ROLL`] when ordered); nothing is live until [`NewGeneration::switch`].
///
/// Memory stays at one buffer whatever the size of the history.
pub struct NewGeneration<'a> {
    layout: &'a Layout,
    generation: u64,
    dir: PathBuf,
    segment: u64,
    file: Option<File>,
    buf: Vec<u8>,
    /// Bytes of the open segment written out so far.
    written: u64,
    ordered: bool,
}

impl NewGeneration<'_> {
    /// Appends one whole line (with its newline).
    ///
    /// # Errors
    /// I/O errors.
    pub fn push(&mut self, line: &[u8]) -> io::Result<()> {
        self.buf.extend_from_slice(line);
        if self.buf.len() >= FLUSH {
            self.flush()?;
        }
        if self.ordered && self.written >= SEGMENT_ROLL {
            self.seal()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.file.is_none() {
            let path = self.dir.join(segment_name(self.segment));
            let file = open_private(&path, true)?;
            file.set_len(0)?;
            self.file = Some(file);
        }
        if let Some(file) = &mut self.file {
            file.write_all(&self.buf)?;
        }
        self.written += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }

    /// Writes out and fsyncs the open segment; the next line starts another.
    fn seal(&mut self) -> io::Result<()> {
        self.flush()?;
        if let Some(file) = self.file.take() {
            file.sync_all()?;
        }
        self.segment += 1;
        self.written = 0;
        Ok(())
    }

    /// Ends the generation with `head` (the line carrying the newest time and `seq`,
    /// in a segment of its own when the body is unordered), makes it durable and
    /// switches to it; then removes the old one.
    ///
    /// # Errors
    /// I/O errors; the live generation is then unchanged.
    pub fn switch(mut self, head: &[u8]) -> io::Result<u64> {
        let _critical = crate::util::signals::critical();
        if !self.ordered {
            self.seal()?;
        }
        self.buf.extend_from_slice(head);
        self.seal()?;
        files::sync_dir(&self.dir)?;
        files::sync_dir(&self.layout.segments_dir())?;
        self.layout.switch(self.generation)?;
        self.layout.clean_up();
        super::changes::note(&self.layout.dir);
        Ok(self.generation)
    }
}

/// Calls `f` with the non-empty lines of `path` (without newlines), last to first,
/// reading the file backwards in chunks, until it returns something: finding the
/// newest snapshot costs what lies after it, not the segment's size. `whole_only`
/// leaves an incomplete last line out.
///
/// # Errors
/// The file cannot be read.
fn rfind_line<T>(
    path: &Path,
    whole_only: bool,
    mut f: impl FnMut(&[u8]) -> Option<T>,
) -> io::Result<Option<T>> {
    const CHUNK: u64 = 64 << 10;
    let mut file = open_read(path)?;
    let mut end = file.metadata()?.len();
    // The start of a line cut by the previous (later) chunk's beginning.
    let mut pending: Vec<u8> = Vec::new();
    // Bytes up to the previous newline belong to a line that is not read: an incomplete
    // last line, or one over the line limit (damage, never a record): skipped, not held.
    let mut skipping = whole_only;
    while end > 0 {
        let start = end.saturating_sub(CHUNK);
        let mut data = vec![0u8; usize::try_from(end - start).unwrap_or(0)];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut data)?;
        end = start;
        if skipping {
            match data.iter().rposition(|b| *b == b'\n') {
                Some(p) => data.truncate(p + 1),
                None => continue,
            }
            skipping = false;
        }
        data.extend_from_slice(&pending);
        let cut = match (start, data.iter().position(|b| *b == b'\n')) {
            (0, _) => 0,
            (_, Some(p)) => p + 1,
            (_, None) => data.len(),
        };
        // A chunk without a newline holds no line start: all of it is carried.
        let lines = (start == 0 || cut < data.len()).then(|| data[cut..].split(|b| *b == b'\n'));
        for line in lines.into_iter().flatten().rev().filter(|l| !l.is_empty()) {
            if let Some(found) = f(line) {
                return Ok(Some(found));
            }
        }
        data.truncate(cut);
        if data.last() == Some(&b'\n') {
            data.pop();
        }
        pending = data;
        if pending.len() > journal::MAX_LINE {
            pending = Vec::new();
            skipping = true;
        }
    }
    Ok(None)
}

/// Removes the files of `dir` named as [`crate::util::files`] names its temporaries.
fn remove_temporaries(dir: &Path) {
    for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
        let is_file = entry.file_type().is_ok_and(|t| t.is_file());
        if is_file && entry.file_name().to_string_lossy().contains(".tmp.") {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// [`Layout::fingerprint`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fingerprint {
    files: Vec<PathBuf>,
    last: [i128; 4],
    head: Option<(String, u64)>,
}

#[cfg(unix)]
fn file_stamp(meta: &fs::Metadata) -> [i128; 4] {
    use std::os::unix::fs::MetadataExt;
    let ns = |s: i64, n: i64| i128::from(s) * 1_000_000_000 + i128::from(n);
    [
        i128::from(meta.len()),
        i128::from(meta.ino()),
        ns(meta.mtime(), meta.mtime_nsec()),
        ns(meta.ctime(), meta.ctime_nsec()),
    ]
}

#[cfg(not(unix))]
fn file_stamp(meta: &fs::Metadata) -> [i128; 4] {
    let modified = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(-1, |d| d.as_nanos() as i128);
    [i128::from(meta.len()), 0, modified, 0]
}

/// What [`Layout::newest_queue`] found.
#[derive(Debug, Default)]
pub struct Queue {
    /// The newest snapshot that is not deleted.
    pub newest: Option<SnapshotRecord>,
    /// It is for the cluster and not applied or superseded yet.
    pub pending: bool,
    /// When it is pending: the snapshot applied last, if any.
    pub applied: Option<SnapshotRecord>,
    /// Where the newest snapshot went besides the cluster.
    pub channels: Channels,
}

/// The Git and registry channels of one snapshot: its latest push (the reference with
/// its digest) and whether it was committed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Channels {
    pub pushed: Option<String>,
    pub committed: bool,
}

impl Channels {
    /// The channels of `history`'s changes (oldest first).
    pub fn of<'a>(history: impl IntoIterator<Item = &'a StateRecord>) -> Channels {
        let mut channels = Channels::default();
        for st in history {
            channels.take(st, true);
        }
        channels
    }

    /// Takes one change: a push replaces the one known when it is `later`.
    fn take(&mut self, st: &StateRecord, later: bool) {
        match st.state {
            State::Pushed if st.pushed.is_some() && (later || self.pushed.is_none()) => {
                self.pushed.clone_from(&st.pushed);
            }
            State::Committed => self.committed = true,
            _ => {}
        }
    }
}

/// The backward scan of [`Layout::newest_queue`]: each id's latest state seen so far
/// (lines come newest first).
#[derive(Default)]
struct QueueScan {
    /// Each id's state from the lines seen so far, and how many `supersede` records had
    /// been seen when its cluster change in force was (those came after it).
    latest: std::collections::HashMap<SnapshotId, (Fold, Option<usize>)>,
    /// The `supersede` records seen so far, newest line first.
    marks: Vec<super::record::SupersedeRecord>,
    /// Each id's registry and Git channels from the lines seen so far.
    channels: std::collections::HashMap<SnapshotId, Channels>,
    queue: Queue,
}

impl QueueScan {
    /// One line, newest first; `Some` when the answer is complete.
    fn line(&mut self, line: &[u8]) -> Option<()> {
        match journal::decode(line).ok()? {
            // By the store's rules; going newest first, the first cluster change seen is
            // the one in force.
            Record::State(st)
                if Fold::is_cluster_change(st.state) || st.state == State::Deleted =>
            {
                let marks = self.marks.len();
                let (fold, after) = self.latest.entry(st.id).or_default();
                let first = fold.cluster().is_none();
                if fold.take(st.state, first).in_force && first {
                    *after = Some(marks);
                }
                None
            }
            Record::State(st) if matches!(st.state, State::Pushed | State::Committed) => {
                if self.queue.newest.is_none() {
                    // Newest first: the first push seen is the latest.
                    self.channels
                        .entry(st.id.clone())
                        .or_default()
                        .take(&st, false);
                }
                None
            }
            Record::Snapshot(s) => self.snapshot(s),
            Record::Supersede(mark) => {
                self.marks.push(mark);
                None
            }
            _ => None,
        }
    }

    fn snapshot(&mut self, s: SnapshotRecord) -> Option<()> {
        let (seen, after) = self.latest.get(&s.id).copied().unwrap_or_default();
        if seen.deleted() {
            return None;
        }
        let mut state = seen.cluster();
        // Pending until its change in force, or from its line: a `supersede` record
        // after that and ordered after it supersedes it.
        let pending = s.cluster && matches!(state, None | Some(State::Pending));
        let later = &self.marks[..after.unwrap_or(self.marks.len())];
        if pending
            && let Some(seq) = s.seq
            && later.iter().any(|m| m.covers(&s.at, seq, &s.id))
        {
            state = Some(State::Superseded);
        }
        if self.queue.newest.is_none() {
            self.queue.pending = s.cluster && matches!(state, None | Some(State::Pending));
            self.queue.channels = self.channels.remove(&s.id).unwrap_or_default();
            self.channels.clear();
            self.queue.newest = Some(s);
            return (!self.queue.pending).then_some(());
        }
        if state == Some(State::Applied) {
            self.queue.applied = Some(s);
            return Some(());
        }
        None
    }
}

/// A line that cannot be the newest snapshot nor delete it: an event, or a state
/// change other than `deleted` — in clinv's layout (`kind` first, no second `kind`),
/// whether it verifies or not (damage is passed over by the full read too).
pub(super) fn passes_over(line: &[u8]) -> bool {
    let Some(json) = line.get(65..) else {
        return false;
    };
    let kind = b"{\"kind\":\"";
    let Some(rest) = json.strip_prefix(kind.as_slice()) else {
        return false;
    };
    let tail = if let Some(r) = rest.strip_prefix(b"event\",".as_slice()) {
        r
    } else if let Some(r) = rest.strip_prefix(b"state\",".as_slice()) {
        if contains(r, b"deleted") {
            return false;
        }
        r
    } else {
        return false;
    };
    !contains(tail, b"\"kind\"")
}

/// Whether the line holds `needle`, by the standard library's substring search (a
/// record is UTF-8; a line that is not is no record).
fn holds(line: &[u8], needle: &str) -> bool {
    std::str::from_utf8(line).is_ok_and(|l| l.contains(needle))
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

fn named(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

/// `000001.log`.
fn segment_name(n: u64) -> String {
    format!("{n:06}.log")
}

/// Creates and fsyncs a segment.
fn write_new(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = open_private(path, true)?;
    file.set_len(0)?;
    file.write_all(bytes)?;
    file.sync_all()
}

pub(super) fn open_read(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Non-blocking: a FIFO planted in the store must not hang the open.
        options.custom_flags(
            (rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK).bits() as i32,
        );
    }
    let file = options.open(path).map_err(files::link_refused)?;
    files::regular(&file)?;
    Ok(file)
}

fn open_append(path: &Path) -> io::Result<File> {
    let file = open_private(path, true)?;
    files::regular(&file)?;
    Ok(file)
}

/// Store folders are private: 0700.
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
    }
    #[cfg(not(unix))]
    {
        fs::create_dir_all(dir)
    }
}

/// Store files are private: 0600.
pub fn open_private(path: &Path, append: bool) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.create(true).read(true);
    if append {
        options.append(true);
    } else {
        options.write(true);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options
            .mode(0o600)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32);
    }
    options.open(path).map_err(files::link_refused)
}

/// Cuts an incomplete last line off (a crash mid-append) unless it is a complete record
/// missing only its newline, which gets its newline. Returns the bytes cut.
pub fn repair_tail(file: &mut File) -> io::Result<Option<u64>> {
    let len = file.metadata()?.len();
    // Find where the last line starts, reading backwards (a hostile tail may be long).
    let mut chunk = vec![0u8; 64 << 10];
    let mut end = len;
    let mut start = 0;
    while end > 0 {
        let from = end.saturating_sub(chunk.len() as u64);
        let part = &mut chunk[..(end - from) as usize];
        file.seek(SeekFrom::Start(from))?;
        file.read_exact(part)?;
        if end == len && part.last() == Some(&b'\n') {
            return Ok(None);
        }
        if let Some(i) = part.iter().rposition(|b| *b == b'\n') {
            start = from + i as u64 + 1;
            break;
        }
        end = from;
    }
    if len == start {
        return Ok(None);
    }
    if len - start <= journal::MAX_LINE as u64 {
        let mut last = Vec::new();
        file.seek(SeekFrom::Start(start))?;
        file.take(len - start).read_to_end(&mut last)?;
        if journal::decode(&last).is_ok() {
            file.write_all(b"\n")?;
            return Ok(None);
        }
    }
    file.set_len(start)?;
    file.seek(SeekFrom::End(0))?;
    Ok(Some(len - start))
}

/// Reads a journal of the domain: the snapshots in order, damage, the head.
///
/// # Errors
/// `(path, error)` of a file that cannot be read.
pub fn read_journal(layout: &Layout) -> Result<Journal, (PathBuf, io::Error)> {
    let mut builder = Builder::default();
    layout.read(&mut builder)?;
    Ok(builder.finish(&layout.segments_dir()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines read backwards in chunks are the file's lines, reversed: lines longer than a
    /// chunk, lines cut at chunk boundaries, an incomplete last line kept or left out.
    #[test]
    fn lines_read_backwards_are_the_lines_reversed() {
        let file = tempfile::NamedTempFile::new().unwrap();
        let path = file.path();
        for seed in 0..12u64 {
            let mut text = String::new();
            let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
            for n in 0..(20 + seed * 7) {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let len = match x % 6 {
                    0 => 0,
                    1 => 70_000,
                    2 => 65_535,
                    3 if n % 4 == 0 => {
                        text.push('\n'); // an empty line
                        0
                    }
                    _ => (x >> 40) as usize % 3000,
                };
                text.push_str(&format!("{n}:{}\n", "x".repeat(len)));
            }
            if seed % 2 == 1 {
                text.push_str("torn"); // no newline
            }
            if seed == 11 {
                // A torn tail over the line limit: skipped chunk by chunk, never held.
                text.push_str(&"z".repeat(journal::MAX_LINE + 200_000));
            }
            fs::write(path, &text).unwrap();
            for whole_only in [true, false] {
                let mut want: Vec<&str> = text.split('\n').collect();
                if whole_only && seed % 2 == 1 {
                    want.pop();
                }
                if !whole_only && seed == 11 {
                    // Over the limit: not a line (damage, never a record).
                    want.pop();
                }
                want.retain(|l| !l.is_empty());
                want.reverse();
                let mut got: Vec<String> = Vec::new();
                let none: Option<()> = rfind_line(path, whole_only, |l| {
                    got.push(String::from_utf8(l.to_vec()).unwrap());
                    None
                })
                .unwrap();
                assert!(none.is_none());
                let short = |v: &[&str]| {
                    v.iter()
                        .map(|l| format!("{}:{}", &l[..l.len().min(6)], l.len()))
                        .collect::<Vec<_>>()
                };
                let got: Vec<&str> = got.iter().map(String::as_str).collect();
                assert_eq!(
                    short(&got),
                    short(&want),
                    "seed {seed}, whole_only {whole_only}"
                );
            }
        }
    }
}
