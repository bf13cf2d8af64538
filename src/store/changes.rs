//! Which domains were written, for a reader that runs beside the writers (the delivery
//! loop): `<store>/.changes`, one domain name per line, appended after every journal
//! write.
//!
//! It is a hint, never the record: the journal is. A writer appends its domain's name
//! once its write is durable (one `O_APPEND` write of a short line, atomic on a local
//! file system; no fsync: a line lost to a crash only delays a reader until it next
//! reads the whole store). Past [`ROLL`] bytes a writer renames it to `.changes.1`; the
//! reader, which keeps the file it reads open, finishes the old one first, and when it
//! cannot tell that it saw every line (two rolls between two reads) it says so, so the
//! caller reads every domain again. Reading the tail costs what was appended since, not
//! the store's size, and at most [`ROLL`] bytes a read. Neither side follows a link or
//! opens anything but a regular file there ([`Tail`]).

#![allow(clippy::disallowed_methods)] // the store: the one owner of its files

use std::collections::HashSet;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The file is rolled past this size.
pub const ROLL: u64 = 1 << 20;
const NAME: &str = ".changes";
const ROLLED: &str = ".changes.1";

/// Notes that the domain whose folder is `domain_dir` was written (best effort: a
/// failure only costs a reader its hint).
pub fn note(domain_dir: &Path) {
    let (Some(root), Some(name)) = (domain_dir.parent(), domain_dir.file_name()) else {
        return;
    };
    let Some(name) = name.to_str() else { return };
    let _ = append(root, name);
}

fn append(root: &Path, name: &str) -> io::Result<()> {
    let path = root.join(NAME);
    let mut file = open_append(&path)?;
    if file.metadata()?.len() >= ROLL {
        fs::rename(&path, root.join(ROLLED))?;
        file = open_append(&path)?;
    }
    let mut line = Vec::with_capacity(name.len() + 1);
    line.extend_from_slice(name.as_bytes());
    line.push(b'\n');
    file.write_all(&line)
}

/// Opens the change file to append to it: never through a link, and never a FIFO or a
/// device (whose open or write could block every writer of the store).
fn open_append(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
    let file = OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .custom_flags(flags.bits() as i32)
        .open(path)?;
    crate::util::files::regular(&file)?;
    Ok(file)
}

/// What a [`Tail`] read.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Changed {
    /// Domain names written since the last read (repeats removed, in first-seen order).
    pub domains: Vec<String>,
    /// Lines may have been missed: read every domain again.
    pub resync: bool,
}

/// The most a [`Tail::read`] reads: a file's worth ([`ROLL`]); the rest waits for the next.
const MAX_READ: usize = ROLL as usize;
/// One `read` call's buffer.
const CHUNK: usize = 64 << 10;
/// The longest line kept (a domain name is at most 253 bytes): a longer one is dropped.
const MAX_LINE: usize = 4 << 10;

/// A reader of the change file from where it last stopped.
///
/// Anyone who can write the store can put anything at `.changes`: a link is not followed,
/// anything but a regular file (a FIFO, a device) is not read, a read takes at most
/// [`MAX_READ`] bytes and a line longer than [`MAX_LINE`] is dropped (the caller is then
/// asked to read every domain), so memory and time stay bounded (issue #48).
pub struct Tail {
    root: PathBuf,
    file: Option<(File, u64)>,
    partial: Vec<u8>,
    /// Inside a line too long to keep: drop bytes up to its end.
    skipping: bool,
}

impl Tail {
    /// Starts at the end of what is there now: the caller has just read every domain.
    pub fn at_end(root: &Path) -> Tail {
        let mut tail = Tail {
            root: root.to_path_buf(),
            file: None,
            partial: Vec::new(),
            skipping: false,
        };
        if let Some((mut f, ino)) = open(&root.join(NAME))
            && f.seek(SeekFrom::End(0)).is_ok()
        {
            tail.file = Some((f, ino));
        }
        tail
    }

    /// The domains written since the last read.
    pub fn read(&mut self) -> Changed {
        let mut out = Changed::default();
        let mut seen = HashSet::new();
        let mut budget = MAX_READ;
        // The link itself, never what it points at.
        let now = fs::symlink_metadata(self.root.join(NAME))
            .ok()
            .map(|m| m.ino());
        let mut held = self.file.take();
        if let Some((f, ino)) = &mut held
            && Some(*ino) == now
        {
            // Truncated under the reader (logrotate's copytruncate): what is appended
            // now starts before where it stopped.
            let at = f.stream_position().unwrap_or(0);
            if f.metadata().is_ok_and(|m| m.len() < at) && f.rewind().is_ok() {
                self.partial.clear();
                out.resync = true;
            }
            self.read_from(f, &mut budget, &mut out, &mut seen);
            self.file = held;
            return out;
        }
        // Rolled (or created, or replaced): finish the old file, check it is the rolled
        // one, then read the new one from its start.
        if let Some((mut f, ino)) = held {
            let finished = self.read_from(&mut f, &mut budget, &mut out, &mut seen);
            let rolled = fs::symlink_metadata(self.root.join(ROLLED))
                .ok()
                .map(|m| m.ino());
            out.resync |= !finished || rolled != Some(ino);
        }
        if now.is_some()
            && let Some((mut f, ino)) = open(&self.root.join(NAME))
        {
            self.read_from(&mut f, &mut budget, &mut out, &mut seen);
            self.file = Some((f, ino));
        }
        out
    }

    /// Reads `file` on from where it is, at most `budget` bytes; whether its end was
    /// reached.
    fn read_from(
        &mut self,
        file: &mut File,
        budget: &mut usize,
        out: &mut Changed,
        seen: &mut HashSet<String>,
    ) -> bool {
        let mut buf = vec![0; CHUNK];
        while *budget > 0 {
            let want = (*budget).min(CHUNK);
            match file.read(&mut buf[..want]) {
                Ok(0) => return true,
                Ok(n) => {
                    *budget -= n;
                    self.lines(&buf[..n], out, seen);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // A hint only: what cannot be read now is read by the next resync.
                Err(_) => return false,
            }
        }
        false
    }

    /// Takes the whole lines of `bytes` (after what an earlier read left of a line).
    fn lines(&mut self, bytes: &[u8], out: &mut Changed, seen: &mut HashSet<String>) {
        for piece in bytes.split_inclusive(|b| *b == b'\n') {
            let (line, whole) = match piece.strip_suffix(b"\n") {
                Some(line) => (line, true),
                None => (piece, false),
            };
            if self.skipping || self.partial.len() + line.len() > MAX_LINE {
                // A name may have been lost in it: the caller reads every domain.
                out.resync = true;
                self.partial.clear();
                self.skipping = !whole;
                continue;
            }
            self.partial.extend_from_slice(line);
            if !whole {
                continue;
            }
            if let Ok(name) = std::str::from_utf8(&self.partial)
                && !name.is_empty()
                && seen.insert(name.to_string())
            {
                out.domains.push(name.to_string());
            }
            self.partial.clear();
        }
    }
}

/// The change file at `path` open for reading and its inode, when it is a regular file:
/// never through a link, never blocking on a FIFO.
fn open(path: &Path) -> Option<(File, u64)> {
    use std::os::unix::fs::OpenOptionsExt;
    let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(flags.bits() as i32)
        .open(path)
        .ok()?;
    let meta = file.metadata().ok()?;
    meta.is_file().then(|| (file, meta.ino()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reader_sees_each_write_once_across_a_roll() {
        let root = tempfile::tempdir().unwrap();
        let dir = |n: &str| root.path().join(n);
        note(&dir("a.example"));
        let mut tail = Tail::at_end(root.path());
        assert_eq!(
            tail.read(),
            Changed::default(),
            "what was there is not news"
        );
        note(&dir("b.example"));
        note(&dir("c.example"));
        note(&dir("b.example"));
        let got = tail.read();
        assert_eq!(got.domains, ["b.example", "c.example"]);
        assert!(!got.resync);
        // A roll between two reads: the old file is finished, the new one read.
        fs::write(dir(NAME), vec![b'\n'; ROLL as usize]).unwrap_or(());
        let mut tail = Tail::at_end(root.path());
        note(&dir("d.example"));
        note(&dir("e.example"));
        let got = tail.read();
        assert_eq!(got.domains, ["d.example", "e.example"]);
        assert!(!got.resync, "one roll loses nothing");
        assert_eq!(tail.read(), Changed::default());
    }

    /// Issue 48, finding 10: logrotate's `copytruncate` empties the file under the
    /// reader; what is appended after it is read from the start, and the lines that
    /// may have been lost ask for a resync.
    #[test]
    fn a_truncated_file_is_read_from_its_start_and_asks_for_a_resync() {
        let root = tempfile::tempdir().unwrap();
        let dir = |n: &str| root.path().join(n);
        note(&dir("a.example"));
        note(&dir("b.example"));
        let mut tail = Tail::at_end(root.path());
        fs::OpenOptions::new()
            .write(true)
            .open(dir(NAME))
            .unwrap()
            .set_len(0)
            .unwrap();
        note(&dir("c.example"));
        let got = tail.read();
        assert_eq!(got.domains, ["c.example"]);
        assert!(got.resync);
        note(&dir("d.example"));
        assert_eq!(
            tail.read(),
            Changed {
                domains: vec!["d.example".into()],
                resync: false
            }
        );
    }

    #[test]
    fn two_rolls_between_reads_ask_for_a_resync() {
        let root = tempfile::tempdir().unwrap();
        let dir = |n: &str| root.path().join(n);
        note(&dir("a.example"));
        let mut tail = Tail::at_end(root.path());
        for _ in 0..2 {
            fs::write(dir(NAME), vec![b'\n'; ROLL as usize]).unwrap();
            note(&dir("b.example"));
        }
        assert!(tail.read().resync);
    }

    /// `f` on a thread of its own: its result, or a failure when it has not returned
    /// within 5 s (the thread is left behind: only a reader that blocks takes that long).
    fn promptly<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(f());
        });
        rx.recv_timeout(std::time::Duration::from_secs(5))
            .expect("the reader did not return within 5 s")
    }

    #[test]
    fn a_link_to_an_endless_device_is_not_followed() {
        // Issue #48, finding 9: a link to /dev/zero grew the loop by 500 MB/s.
        let root = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("/dev/zero", root.path().join(NAME)).unwrap();
        let at = root.path().to_path_buf();
        let (first, second, held) = promptly(move || {
            let mut tail = Tail::at_end(&at);
            let first = tail.read();
            let second = tail.read();
            (first, second, tail.partial.capacity())
        });
        assert_eq!(first, Changed::default());
        assert_eq!(second, Changed::default());
        assert!(held <= 2 * MAX_LINE, "{held} bytes held");
    }

    #[test]
    fn a_fifo_never_blocks_the_reader() {
        let root = tempfile::tempdir().unwrap();
        let fifo = root.path().join(NAME);
        let mkfifo = |path: &Path| {
            let made = std::process::Command::new("mkfifo").arg(path).status();
            assert!(made.unwrap().success());
        };
        mkfifo(&fifo);
        let at = root.path().to_path_buf();
        let got = promptly(move || Tail::at_end(&at).read());
        assert_eq!(got, Changed::default());
        // A regular file replaced by a FIFO between two reads.
        fs::remove_file(&fifo).unwrap();
        note(&root.path().join("a.example"));
        let mut tail = Tail::at_end(root.path());
        fs::remove_file(&fifo).unwrap();
        mkfifo(&fifo);
        let got = promptly(move || tail.read());
        assert!(got.domains.is_empty(), "{got:?}");
        assert!(got.resync, "the file it held was not the one rolled");
    }

    #[test]
    fn a_writer_never_blocks_on_a_fifo_or_writes_through_a_link() {
        let root = tempfile::tempdir().unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(root.path().join(NAME))
            .status();
        assert!(made.unwrap().success());
        let at = root.path().join("a.example");
        promptly(move || note(&at));
        // A link is not written through, nor rolled onto the rolled file's name.
        let other = tempfile::tempdir().unwrap();
        let target = other.path().join("elsewhere");
        fs::write(&target, "").unwrap();
        fs::remove_file(root.path().join(NAME)).unwrap();
        std::os::unix::fs::symlink(&target, root.path().join(NAME)).unwrap();
        note(&root.path().join("b.example"));
        assert_eq!(fs::read(&target).unwrap(), b"");
    }

    #[test]
    fn a_line_without_end_is_dropped_and_a_resync_asked_for() {
        // Issue #48, finding 9: 1 GB without a newline was held for good.
        let root = tempfile::tempdir().unwrap();
        let mut tail = Tail::at_end(root.path());
        let path = root.path().join(NAME);
        fs::write(&path, vec![b'a'; 10 << 20]).unwrap();
        let got = tail.read();
        assert!(got.domains.is_empty());
        assert!(got.resync, "a dropped line may have held a name");
        assert!(
            tail.partial.capacity() <= 2 * MAX_LINE,
            "{}",
            tail.partial.capacity()
        );
        // The rest of that line is dropped too; the lines after it are read.
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"the-end-of-it\nb.example\n").unwrap();
        let mut got = tail.read();
        for _ in 0..20 {
            if got.domains.is_empty() {
                got = tail.read();
            }
        }
        assert_eq!(got.domains, ["b.example"]);
        note(&root.path().join("c.example"));
        assert_eq!(
            tail.read(),
            Changed {
                domains: vec!["c.example".into()],
                resync: false
            }
        );
    }

    #[test]
    fn a_reader_started_before_the_file_exists_reads_it_from_the_start() {
        let root = tempfile::tempdir().unwrap();
        let mut tail = Tail::at_end(root.path());
        note(&root.path().join("a.example"));
        assert_eq!(tail.read().domains, ["a.example"]);
    }
}
