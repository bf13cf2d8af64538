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
//! the store's size.

#![allow(clippy::disallowed_methods)] // the store: the one owner of its files

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

fn open_append(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(path)
}

/// What a [`Tail`] read.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Changed {
    /// Domain names written since the last read (repeats removed, in first-seen order).
    pub domains: Vec<String>,
    /// Lines may have been missed: read every domain again.
    pub resync: bool,
}

/// A reader of the change file from where it last stopped.
pub struct Tail {
    root: PathBuf,
    file: Option<(File, u64)>,
    partial: Vec<u8>,
}

impl Tail {
    /// Starts at the end of what is there now: the caller has just read every domain.
    pub fn at_end(root: &Path) -> Tail {
        let mut tail = Tail {
            root: root.to_path_buf(),
            file: None,
            partial: Vec::new(),
        };
        if let Ok(mut f) = File::open(root.join(NAME))
            && let Ok(meta) = f.metadata()
            && f.seek(SeekFrom::End(0)).is_ok()
        {
            tail.file = Some((f, meta.ino()));
        }
        tail
    }

    /// The domains written since the last read.
    pub fn read(&mut self) -> Changed {
        let mut out = Changed::default();
        let mut bytes = Vec::new();
        let now = fs::metadata(self.root.join(NAME)).ok().map(|m| m.ino());
        match (&mut self.file, now) {
            (Some((f, ino)), Some(now)) if *ino == now => {
                let _ = f.read_to_end(&mut bytes);
            }
            (held, now) => {
                // Rolled (or created): finish the old file, check it is the rolled one,
                // then read the new one from its start.
                if let Some((f, ino)) = held {
                    let _ = f.read_to_end(&mut bytes);
                    let rolled = fs::metadata(self.root.join(ROLLED)).ok().map(|m| m.ino());
                    out.resync |= rolled != Some(*ino);
                }
                self.file = None;
                if now.is_some()
                    && let Ok(mut f) = File::open(self.root.join(NAME))
                    && let Ok(meta) = f.metadata()
                {
                    let _ = f.read_to_end(&mut bytes);
                    self.file = Some((f, meta.ino()));
                }
            }
        }
        self.lines(&bytes, &mut out.domains);
        out
    }

    fn lines(&mut self, bytes: &[u8], out: &mut Vec<String>) {
        self.partial.extend_from_slice(bytes);
        let Some(end) = self.partial.iter().rposition(|b| *b == b'\n') else {
            return;
        };
        let whole: Vec<u8> = self.partial.drain(..=end).collect();
        for line in whole.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            if let Ok(name) = std::str::from_utf8(line)
                && !out.iter().any(|d| d == name)
            {
                out.push(name.to_string());
            }
        }
    }
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

    #[test]
    fn a_reader_started_before_the_file_exists_reads_it_from_the_start() {
        let root = tempfile::tempdir().unwrap();
        let mut tail = Tail::at_end(root.path());
        note(&root.path().join("a.example"));
        assert_eq!(tail.read().domains, ["a.example"]);
    }
}
