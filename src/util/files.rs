//! File primitives: bounded reads and the one atomic, durable write.
//!
//! Every file clinv writes goes through [`write_atomic`]: a temporary file in the same
//! directory, written and fsynced, renamed over the target, then the directory fsynced.
//! A crash leaves either the old file or the new one, never a torn one.
#![allow(clippy::disallowed_methods)] // the writer of local files: atomic, durable

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// Reads a whole file, refusing files larger than `limit` bytes without reading them.
/// A named pipe without a writer reads as empty instead of blocking forever.
///
/// # Errors
/// I/O errors, or `InvalidData` when the file is larger than `limit`.
pub fn read_bounded(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    read_limited(open_read(path, false)?, limit)
}

/// Like [`read_bounded`], but a symbolic link is refused instead of followed: for files
/// inside the snapshot store, which never holds links (one could point anywhere).
///
/// # Errors
/// As [`read_bounded`]; a link is an `InvalidInput` error saying so.
pub fn read_bounded_nofollow(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let file = open_read(path, true)?;
    regular(&file)?;
    read_limited(file, limit)
}

/// Refuses a FIFO, socket or device where clinv keeps its own regular files.
///
/// # Errors
/// `InvalidInput` naming the problem, or the `fstat` failure.
pub fn regular(file: &File) -> io::Result<()> {
    let meta = file.metadata()?;
    if meta.is_file() {
        return Ok(());
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        if meta.is_dir() {
            "is a directory"
        } else {
            "not a regular file (a FIFO, socket or device)"
        },
    ))
}

fn read_limited(file: File, limit: u64) -> io::Result<Vec<u8>> {
    let meta = file.metadata()?;
    if meta.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "is a directory",
        ));
    }
    if meta.len() > limit {
        return Err(too_large(meta.len(), limit));
    }
    // Special files report length 0; read one byte past the limit to catch them too.
    let mut buf = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(limit + 1).read_to_end(&mut buf)?;
    if buf.len() as u64 > limit {
        return Err(too_large(buf.len() as u64, limit));
    }
    Ok(buf)
}

/// Opens for reading without blocking on a FIFO that has no writer (then clears
/// `O_NONBLOCK` so a pipe with a writer is read normally); `nofollow` refuses a link.
#[cfg(unix)]
fn open_read(path: &Path, nofollow: bool) -> io::Result<File> {
    use rustix::fs::OFlags;
    use std::os::unix::fs::OpenOptionsExt;
    let mut flags = OFlags::NONBLOCK;
    if nofollow {
        flags |= OFlags::NOFOLLOW;
    }
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(flags.bits() as i32)
        .open(path)
        .map_err(|e| if nofollow { link_refused(e) } else { e })?;
    let fl = rustix::fs::fcntl_getfl(&file)?;
    rustix::fs::fcntl_setfl(&file, fl - OFlags::NONBLOCK)?;
    Ok(file)
}

#[cfg(not(unix))]
fn open_read(path: &Path, _nofollow: bool) -> io::Result<File> {
    File::open(path)
}

/// `O_NOFOLLOW` on a link fails with `ELOOP`, whose text ("too many levels of symbolic
/// links") misleads; say what happened instead.
#[cfg(unix)]
pub fn link_refused(e: io::Error) -> io::Error {
    if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "is a symbolic link; clinv does not follow links inside its store",
        )
    } else {
        e
    }
}

/// The error for a file over its size limit.
pub fn too_large(len: u64, limit: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        if limit >= 1 << 20 {
            format!("file too large: {len} bytes (limit {} MiB)", limit >> 20)
        } else {
            format!("file too large: {len} bytes (limit {limit} bytes)")
        },
    )
}

/// Writes `bytes` to `path` atomically and durably, creating missing parent directories.
/// The file gets `mode` (Unix permission bits) before it becomes visible.
///
/// # Errors
/// Any I/O error; the target is then left as it was and the temporary file removed.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    let staged = stage(path, bytes, mode)?;
    staged.commit()
}

/// [`write_atomic`] with the temporary file in `staging` (same filesystem) instead of
/// next to `path`: for a folder too large to list for what a dead writer left, such as
/// the store's objects, one per distinct inventory.
///
/// # Errors
/// Any I/O error; the target is then left as it was and the temporary file removed.
pub(crate) fn write_atomic_staged_in(
    staging: &Path,
    path: &Path,
    bytes: &[u8],
    mode: u32,
) -> io::Result<()> {
    stage_in(staging, path, bytes, mode)?.commit()
}

/// Replaces `path` atomically but without fsync: for informational files whose loss in
/// a crash costs nothing (a lock's holder note), where two fsyncs per command would be
/// most of its run time.
///
/// # Errors
/// Any I/O error; the target is then left as it was.
pub(crate) fn write_replace(path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    let dir = parent_of(path);
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(path.file_name().unwrap_or_default());
    tmp_name.push(format!(".tmp.{}.{}", std::process::id(), unique()));
    let tmp = dir.join(tmp_name);
    let _critical = super::signals::critical();
    let result = open_new(&tmp, mode)
        .and_then(|mut f| f.write_all(bytes))
        .and_then(|()| fs::rename(&tmp, path));
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// A fully written, fsynced temporary file waiting to be renamed into place. Staging
/// several files first lets a command publish all of them or none.
#[must_use = "a staged file is removed unless committed"]
pub(crate) struct Staged {
    tmp: PathBuf,
    target: PathBuf,
    done: bool,
    /// A signal waits until the file is committed or removed (from the start for a
    /// small file, from [`Staged::commit_file`] for one written as it streams).
    critical: Option<super::signals::Critical>,
}

/// Writes `bytes` to a temporary sibling of `path` and fsyncs it.
///
/// # Errors
/// Any I/O error (the temporary file is removed).
pub(crate) fn stage(path: &Path, bytes: &[u8], mode: u32) -> io::Result<Staged> {
    stage_in(parent_of(path), path, bytes, mode)
}

/// An empty temporary sibling of `path`, open for writing: for a file too large to
/// hold, written as it streams, then [`Staged::commit_file`]d.
///
/// # Errors
/// Any I/O error.
pub(crate) fn stage_file(path: &Path, mode: u32) -> io::Result<(Staged, File)> {
    let mut staged = staged(parent_of(path), path)?;
    staged.critical = None;
    let file = open_new(&staged.tmp, mode)?;
    Ok((staged, file))
}

fn staged(dir: &Path, path: &Path) -> io::Result<Staged> {
    fs::create_dir_all(parent_of(path))?;
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "target has no file name"))?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".tmp.{}.{}", std::process::id(), unique()));
    Ok(Staged {
        tmp: dir.join(tmp_name),
        target: path.to_path_buf(),
        done: false,
        critical: Some(super::signals::critical()),
    })
}

/// [`stage`] with the temporary file in `dir`.
fn stage_in(dir: &Path, path: &Path, bytes: &[u8], mode: u32) -> io::Result<Staged> {
    let staged = staged(dir, path)?;
    let mut file = open_new(&staged.tmp, mode)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    Ok(staged)
}

/// [`stage`] without its fsync, for the many files [`commit_all`] commits together: it
/// fsyncs them several at a time.
///
/// # Errors
/// Any I/O error (the temporary file is removed).
pub(crate) fn stage_deferred(path: &Path, bytes: &[u8], mode: u32) -> io::Result<Staged> {
    let staged = staged(parent_of(path), path)?;
    open_new(&staged.tmp, mode)?.write_all(bytes)?;
    Ok(staged)
}

/// Commits many staged files as one step: fsyncs each (up to 16 at once, so their waits
/// overlap) before any is renamed, renames each over its target, then fsyncs once each
/// directory they are in and `created`, the folder their new directories were made in.
/// A crash before the renames leaves every target as it was.
///
/// # Errors
/// The first sync or rename that failed (the staged files not yet renamed are removed).
pub(crate) fn commit_all(staged: Vec<Staged>, created: &Path) -> io::Result<()> {
    let tmps: Vec<&Path> = staged.iter().map(|s| s.tmp.as_path()).collect();
    let synced = super::pool::ordered(&tmps, 16, |tmp| File::open(tmp)?.sync_all());
    synced.into_iter().collect::<io::Result<()>>()?;
    let mut dirs: Vec<PathBuf> = vec![created.to_path_buf()];
    for mut s in staged {
        fs::rename(&s.tmp, &s.target)?;
        s.done = true;
        dirs.push(parent_of(&s.target).to_path_buf());
    }
    dirs.sort();
    dirs.dedup();
    let synced = super::pool::ordered(&dirs, 16, |dir| sync_dir(dir));
    synced.into_iter().collect()
}

impl Staged {
    /// The staged file opened again for reading (a spill file read back before it is
    /// dropped).
    ///
    /// # Errors
    /// The file cannot be opened.
    pub fn read_back(&self) -> io::Result<File> {
        File::open(&self.tmp)
    }

    /// Fsyncs `file` (written into this staged file), then [`Staged::commit`]s it.
    ///
    /// # Errors
    /// Sync, rename or directory sync failures.
    pub fn commit_file(mut self, file: File) -> io::Result<()> {
        file.sync_all()?;
        drop(file);
        self.critical = Some(super::signals::critical());
        self.commit()
    }

    /// Renames the staged file over its target and fsyncs the directory.
    ///
    /// # Errors
    /// Rename or directory sync failures.
    pub fn commit(mut self) -> io::Result<()> {
        fs::rename(&self.tmp, &self.target)?;
        self.done = true;
        sync_dir(parent_of(&self.target))
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.done {
            let _ = fs::remove_file(&self.tmp);
        }
    }
}

fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    (u64::from(nanos) << 16) ^ COUNTER.fetch_add(1, Ordering::Relaxed)
}

#[cfg(unix)]
fn open_new(path: &Path, mode: u32) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)
}

#[cfg(not(unix))]
fn open_new(path: &Path, _mode: u32) -> io::Result<File> {
    OpenOptions::new().write(true).create_new(true).open(path)
}

/// Fsyncs a directory so a rename inside it survives a crash.
///
/// # Errors
/// The directory cannot be opened or synced.
pub(crate) fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        File::open(dir)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_and_leaves_no_temporary_files() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("sub/out.yaml");
        write_atomic(&target, b"one", 0o644).unwrap();
        write_atomic(&target, b"two", 0o644).unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"two");
        let names: Vec<_> = fs::read_dir(target.parent().unwrap()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn commit_all_renames_every_staged_file_and_a_failure_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let staged: Vec<Staged> = (0..40)
            .map(|i| {
                let path = dir.path().join(format!("d{}/f{i}", i % 7));
                stage_deferred(&path, format!("{i}").as_bytes(), 0o644).unwrap()
            })
            .collect();
        commit_all(staged, dir.path()).unwrap();
        for i in 0..40 {
            let path = dir.path().join(format!("d{}/f{i}", i % 7));
            assert_eq!(fs::read_to_string(path).unwrap(), format!("{i}"));
        }
        let leftovers = |d: &Path| {
            fs::read_dir(d)
                .unwrap()
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().contains(".tmp."))
                .count()
        };
        assert_eq!(
            (0..7)
                .map(|i| leftovers(&dir.path().join(format!("d{i}"))))
                .sum::<usize>(),
            0
        );
        // A target that is a directory: the rename fails, nothing staged is left behind.
        fs::create_dir(dir.path().join("taken")).unwrap();
        fs::write(dir.path().join("taken/keep"), b"k").unwrap();
        let staged = vec![
            stage_deferred(&dir.path().join("z/a"), b"a", 0o644).unwrap(),
            stage_deferred(&dir.path().join("taken"), b"b", 0o644).unwrap(),
            stage_deferred(&dir.path().join("z/c"), b"c", 0o644).unwrap(),
        ];
        assert!(commit_all(staged, dir.path()).is_err());
        assert_eq!(leftovers(dir.path()) + leftovers(&dir.path().join("z")), 0);
    }

    #[test]
    fn an_uncommitted_stage_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("x");
        drop(stage(&target, b"x", 0o600).unwrap());
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn bounded_read_refuses_large_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big");
        fs::write(&path, vec![b'a'; 2048]).unwrap();
        assert!(read_bounded(&path, 1024).is_err());
        assert_eq!(read_bounded(&path, 4096).unwrap().len(), 2048);
    }
}
