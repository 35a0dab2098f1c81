//! The file: appending, syncing, recovering after a crash, rotating.
//!
//! Several Warden processes may share one log (Claude Code and Claude
//! Desktop start one `warden` per window, all on one configuration). Their
//! records form one chain: each batch is appended under an exclusive lock
//! on a file beside the log (`.<log name>.lock`), and a writer that finds
//! the log grown or rotated by another process since its last batch reads
//! the tail again to learn where the chain stands before it seals its own.

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use crate::chain::{ChainState, Members, check_line, seal, sha256_hex};
use crate::error::AuditError;
use crate::record::timestamp;
use crate::{AuditSettings, Fsync};

/// The largest tail read when looking for the last valid record.
const MAX_SCAN: u64 = 64 * 1024 * 1024;

/// Appends records to one file. Owned by the log's one writer thread
/// (see [`crate::committer`]), so writes are serialised.
#[derive(Debug)]
pub(crate) struct Writer {
    path: PathBuf,
    fsync: Fsync,
    rotate_bytes: Option<u64>,
    keep: usize,
    /// The open file, or `None` before the first open and after an error
    /// (the next append reopens it and checks its tail again).
    file: Option<OpenFile>,
    /// Where the chain stands, once known.
    chain: Option<ChainState>,
    /// With `fsync: always`, whether a sync journal makes batches durable
    /// (see [`crate::journal`]): then the log is appended without a sync,
    /// and synced (directory included) only by [`Writer::sync_log`].
    journalled: bool,
    /// A directory entry was created or renamed since the last sync.
    directory_changed: bool,
    /// Journalled: the files rotated since the last sync, whose last lines
    /// may not be durable in them yet (the journal holds them until it
    /// starts over, which syncs them first).
    rotated_unsynced: Vec<File>,
    /// The lock file shared with other processes writing this log, once
    /// opened.
    lock: Option<Arc<File>>,
}

#[derive(Debug)]
struct OpenFile {
    file: File,
    /// The length of the file as this writer left it.
    len: u64,
}

impl OpenFile {
    /// Whether it is still the file at `path`, as this writer left it: not
    /// rotated away, and not appended to by another process.
    fn is_current(&self, path: &Path) -> bool {
        use std::os::unix::fs::MetadataExt;
        let (Ok(open), Ok(named)) = (self.file.metadata(), fs::metadata(path)) else { return false };
        open.dev() == named.dev() && open.ino() == named.ino() && open.len() == self.len
    }
}

/// The lock on a log's lock file, released when dropped.
struct LockGuard(Arc<File>);

impl Drop for LockGuard {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

/// The lock file beside a log: `.audit.jsonl.lock` (hidden, like the sync
/// journal, so that `audit.jsonl*` matches only the log's own files).
pub(crate) fn lock_path_of(log: &Path) -> PathBuf {
    let mut name = std::ffi::OsString::from(".");
    name.push(log.file_name().unwrap_or(log.as_os_str()));
    name.push(".lock");
    log.with_file_name(name)
}

/// What the end of an existing file holds.
#[derive(Debug, Default)]
struct TailScan {
    /// The file's length up to and including its last newline.
    complete_len: u64,
    /// Bytes after the last newline: a torn line.
    torn: u64,
    /// The last line that is a valid record, as a chain state.
    last: Option<ChainState>,
    /// Complete lines after that one which are not valid records.
    invalid_after: usize,
}

impl Writer {
    /// A writer for `settings`; nothing is opened yet.
    pub(crate) fn new(settings: &AuditSettings) -> Self {
        Writer {
            path: settings.path.clone(),
            fsync: settings.fsync,
            rotate_bytes: settings.rotate_bytes,
            keep: settings.keep,
            file: None,
            chain: None,
            journalled: false,
            directory_changed: false,
            rotated_unsynced: Vec::new(),
            lock: None,
        }
    }

    /// Takes the lock that serialises the batches of every process writing
    /// this log (released when the guard drops), and makes sure this
    /// writer continues the chain where the file ends: if another process
    /// appended or rotated since this writer's last batch, the file is
    /// opened again and its tail read.
    fn lock_shared(&mut self) -> Result<LockGuard, AuditError> {
        if self.lock.is_none() {
            let path = lock_path_of(&self.path);
            if let Some(parent) = parent(&path) {
                fs::create_dir_all(parent).map_err(|err| AuditError::io(parent, "create directory", err))?;
            }
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .map_err(|err| AuditError::io(&path, "open", err))?;
            self.lock = Some(Arc::new(file));
        }
        let Some(lock) = self.lock.clone() else { unreachable!("opened above") };
        lock.lock().map_err(|err| AuditError::io(lock_path_of(&self.path), "lock", err))?;
        let guard = LockGuard(lock);
        if self.file.as_ref().is_some_and(|open| !open.is_current(&self.path)) {
            // Another process wrote since: what this writer knew of the
            // chain is stale.
            if self.journalled {
                // Lines this writer appended to a file another process
                // rotated may not be durable in it yet (see `rotate`).
                self.rotated_unsynced.extend(self.file.take().map(|open| open.file));
            }
            self.file = None;
            self.chain = None;
        }
        Ok(guard)
    }

    /// From now on a sync journal makes batches durable: appends are not
    /// synced, nor are a rotation's renames and its full file, until
    /// [`Writer::sync_log`] (before the journal starts over).
    pub(crate) fn set_journalled(&mut self) {
        self.journalled = true;
    }

    /// Makes everything appended so far durable: the open file, the file
    /// rotated last, and the directory entries created or renamed since
    /// the last sync.
    pub(crate) fn sync_log(&mut self) -> Result<(), AuditError> {
        for rotated in &self.rotated_unsynced {
            rotated.sync_data().map_err(|err| AuditError::io(numbered(&self.path, 1), "fdatasync", err))?;
        }
        self.rotated_unsynced.clear();
        if let Some(open) = &self.file {
            open.file.sync_data().map_err(|err| AuditError::io(&self.path, "fdatasync", err))?;
        }
        if self.directory_changed {
            sync_parent(&self.path)?;
            self.directory_changed = false;
        }
        Ok(())
    }

    /// Where the chain stands (after [`Writer::ensure_open`]).
    pub(crate) fn chain(&self) -> ChainState {
        self.chain.clone().unwrap_or_else(ChainState::genesis)
    }

    /// After a crash, rotated files may lack lines that the sync journal
    /// has: a rotation does not wait for the full file's sync. Wherever the
    /// next file starts after a gap in the chain, the journal's lines that
    /// fill it are appended to the older file, and synced.
    pub(crate) fn restore_rotated(&mut self, journal: &[Vec<u8>]) -> Result<(), AuditError> {
        for index in 1..=self.keep {
            let newer = if index == 1 { self.path.clone() } else { numbered(&self.path, index - 1) };
            if let Some(first) = first_seq(&newer)? {
                fill_gap(&numbered(&self.path, index), first, journal)?;
            }
        }
        Ok(())
    }

    /// Appends `lines` (each a whole record, without its newline) that
    /// continue the chain, recovered from the sync journal, and syncs them.
    pub(crate) fn restore(&mut self, lines: &[Vec<u8>], chain: ChainState) -> Result<(), AuditError> {
        let _shared = self.lock_shared()?;
        self.ensure_open()?;
        if self.chain.as_ref().map(|state| state.seq) != chain.seq.checked_sub(lines.len() as u64) {
            // Another process appended since the journal was read: its
            // lines no longer continue the chain, and stay in the journal.
            tracing::warn!(path = %self.path.display(), "audit records from the sync journal no longer continue the log (another Warden wrote to it); they are not restored");
            return Ok(());
        }
        self.write(&joined(lines))?;
        self.chain = Some(chain);
        self.sync_log()
    }

    /// Drops the open file, so the next append reopens and rechecks it.
    pub(crate) fn reset(&mut self) {
        self.file = None;
    }

    /// Opens the file if it is not open: creates missing directories,
    /// removes a torn last line, and finds where the chain continues: the
    /// last valid record of the file, else the chain this writer already
    /// had, else the last valid record of the rotated `.1` file, else a new
    /// chain.
    pub(crate) fn ensure_open(&mut self) -> Result<(), AuditError> {
        if self.file.is_some() {
            return Ok(());
        }
        let path = self.path.clone();
        if let Some(parent) = parent(&path) {
            fs::create_dir_all(parent).map_err(|err| AuditError::io(parent, "create directory", err))?;
        }
        let existed = path.try_exists().unwrap_or(true);
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(&path)
            .map_err(|err| AuditError::io(&path, "open", err))?;
        let scan = scan_tail(&mut file).map_err(|err| AuditError::io(&path, "read", err))?;
        if scan.torn > 0 {
            tracing::warn!(
                path = %path.display(),
                bytes = scan.torn,
                "audit log ends with a torn line (an interrupted write); it is removed and the chain continues from the last complete record"
            );
            file.set_len(scan.complete_len).map_err(|err| AuditError::io(&path, "truncate torn line", err))?;
            self.sync(&file)?;
        }
        if scan.invalid_after > 0 {
            tracing::warn!(
                path = %path.display(),
                lines = scan.invalid_after,
                "audit log ends with lines that are not valid records; the chain continues from the last valid record and verify will report them"
            );
        }
        let chain = match (scan.last, self.chain.take()) {
            (Some(last), _) | (None, Some(last)) => last,
            (None, None) => self.rotated_chain().unwrap_or_else(ChainState::genesis),
        };
        if !existed && self.fsync == Fsync::Always {
            if self.journalled {
                self.directory_changed = true;
            } else {
                sync_parent(&path)?;
            }
        }
        self.chain = Some(chain);
        self.file = Some(OpenFile { file, len: scan.complete_len });
        Ok(())
    }

    /// The chain state at the end of the newest rotated file, if there is one.
    fn rotated_chain(&self) -> Option<ChainState> {
        let rotated = numbered(&self.path, 1);
        let mut file = File::open(&rotated).ok()?;
        match scan_tail(&mut file) {
            Ok(scan) => scan.last,
            Err(err) => {
                tracing::warn!(path = %rotated.display(), error = %err, "could not read the rotated audit log; starting a new chain");
                None
            }
        }
    }

    /// Appends `batch` in order, each record sealed with its `time`, `seq`
    /// and `prevHash`, with one write per file (all of them, or, when the
    /// batch crosses a rotation, the records before it and then those
    /// after), each followed by an fdatasync with [`Fsync::Always`] unless
    /// journalled. Puts each record's `seq`, or why it was not written, in
    /// `results`, in order; a record is `Ok` once its line is written (and
    /// synced, when this writer syncs). The bytes of the lines written go
    /// to `written`, for the journal. On an error nothing of the failed
    /// lines is left in the file (as far as the file system allows) and the
    /// chain does not move past them.
    pub(crate) fn append(
        &mut self,
        batch: &[Members],
        results: &mut Vec<Result<u64, AuditError>>,
        written: &mut Vec<u8>,
    ) {
        let before = results.len();
        if let Err(err) = self.append_all(batch, results, written) {
            // Every record not reported written failed with it.
            let failed = batch.len() - (results.len() - before);
            results.extend(std::iter::repeat_with(|| Err(err.again())).take(failed));
            self.reset();
        }
    }

    /// [`Writer::append`] until the first error, which is returned; the
    /// records in `results` by then are written.
    fn append_all(
        &mut self,
        batch: &[Members],
        results: &mut Vec<Result<u64, AuditError>>,
        written: &mut Vec<u8>,
    ) -> Result<(), AuditError> {
        let _shared = self.lock_shared()?;
        self.ensure_open()?;
        let time = timestamp(SystemTime::now());
        let mut chain = self.chain.clone().unwrap_or_else(ChainState::genesis);
        let mut staged = Vec::new();
        for members in batch {
            let seq = chain.seq.saturating_add(1);
            let mut line = seal(members, &time, seq, &chain.last_hash);
            let line_hash = sha256_hex(&line);
            line.push(b'\n');
            let len = self.file.as_ref().map_or(0, |open| open.len) + staged.len() as u64;
            let must_rotate =
                self.rotate_bytes.is_some_and(|limit| len > 0 && len.saturating_add(line.len() as u64) > limit);
            if must_rotate {
                self.commit(&staged, &chain, results, written)?;
                staged.clear();
                self.rotate()?;
            }
            staged.extend_from_slice(&line);
            chain = ChainState { seq, last_hash: line_hash };
        }
        self.commit(&staged, &chain, results, written)
    }

    /// Writes and syncs `staged`, the lines of the records after the
    /// current chain up to `chain`, then moves the chain there and reports
    /// them written.
    fn commit(
        &mut self,
        staged: &[u8],
        chain: &ChainState,
        results: &mut Vec<Result<u64, AuditError>>,
        written: &mut Vec<u8>,
    ) -> Result<(), AuditError> {
        if staged.is_empty() {
            return Ok(());
        }
        self.write(staged)?;
        written.extend_from_slice(staged);
        let first = self.chain.as_ref().map_or(0, |old| old.seq).saturating_add(1);
        results.extend((first..=chain.seq).map(Ok));
        self.chain = Some(chain.clone());
        Ok(())
    }

    fn write(&mut self, lines: &[u8]) -> Result<(), AuditError> {
        let (fsync, journalled) = (self.fsync, self.journalled);
        let Some(open) = self.file.as_mut() else {
            return Err(AuditError::io(&self.path, "write", io::Error::other("the file is not open")));
        };
        if let Err(err) = open.file.write_all(lines) {
            // Cut off whatever part of the lines made it, so the next record
            // does not chain onto a fragment.
            let _ = open.file.set_len(open.len);
            return Err(AuditError::io(&self.path, "write", err));
        }
        // fdatasync is enough for an append-only file: it also writes the
        // size change that makes the new lines readable, only timestamps wait.
        if fsync == Fsync::Always
            && !journalled
            && let Err(err) = open.file.sync_data()
        {
            let _ = open.file.set_len(open.len);
            return Err(AuditError::io(&self.path, "fdatasync", err));
        }
        open.len += lines.len() as u64;
        Ok(())
    }

    /// Renames `path` to `path.1`, shifting `.1` to `.2` and so on up to
    /// `keep` (the oldest is removed), and opens a new empty file. The chain
    /// carries on: the next record's `prevHash` is the last line's hash.
    fn rotate(&mut self) -> Result<(), AuditError> {
        if self.journalled {
            // No sync on the callers' path: the full file's last lines stay
            // in the journal until its next start, which syncs the file
            // first, and recovery puts back what a crash took (see
            // `restore_rotated`).
            self.rotated_unsynced.extend(self.file.take().map(|open| open.file));
            self.directory_changed = true;
        }
        self.file = None;
        let rotate_error = |path: &Path, err| AuditError::io(path, "rotate", err);
        if self.keep == 0 {
            ignore_missing(fs::remove_file(&self.path)).map_err(|err| rotate_error(&self.path, err))?;
        } else {
            let oldest = numbered(&self.path, self.keep);
            ignore_missing(fs::remove_file(&oldest)).map_err(|err| rotate_error(&oldest, err))?;
            for index in (1..self.keep).rev() {
                let from = numbered(&self.path, index);
                ignore_missing(fs::rename(&from, numbered(&self.path, index + 1)))
                    .map_err(|err| rotate_error(&from, err))?;
            }
            fs::rename(&self.path, numbered(&self.path, 1)).map_err(|err| rotate_error(&self.path, err))?;
        }
        // Opening the new file syncs the directory once, which makes the
        // renames durable too: one directory sync per rotation.
        self.ensure_open()?;
        tracing::info!(path = %self.path.display(), keep = self.keep, "audit log rotated");
        Ok(())
    }

    fn sync(&self, file: &File) -> Result<(), AuditError> {
        if self.fsync == Fsync::Always {
            file.sync_all().map_err(|err| AuditError::io(&self.path, "fsync", err))?;
        }
        Ok(())
    }
}

/// The `seq` of the first record of the file at `path`, if it has one.
fn first_seq(path: &Path) -> Result<Option<u64>, AuditError> {
    let Ok(file) = File::open(path) else { return Ok(None) };
    let mut first = Vec::new();
    io::BufReader::new(file).read_until(b'\n', &mut first).map_err(|err| AuditError::io(path, "read", err))?;
    Ok(check_line(first.strip_suffix(b"\n").unwrap_or(&first)).ok().map(|links| links.seq))
}

/// Appends to the file at `path` the lines of `journal` that continue its
/// chain up to record `next` (which starts the next file), and syncs them.
fn fill_gap(path: &Path, next: u64, journal: &[Vec<u8>]) -> Result<(), AuditError> {
    let Ok(mut file) = OpenOptions::new().read(true).append(true).open(path) else { return Ok(()) };
    let scan = scan_tail(&mut file).map_err(|err| AuditError::io(path, "read", err))?;
    let Some(last) = scan.last else { return Ok(()) };
    let Some(missing) = next.checked_sub(last.seq + 1).filter(|missing| *missing > 0) else { return Ok(()) };
    let (lines, _) = crate::journal::recover(journal.to_vec(), &last);
    let lines: Vec<Vec<u8>> = lines.into_iter().take(usize::try_from(missing).unwrap_or(usize::MAX)).collect();
    if lines.is_empty() {
        return Ok(());
    }
    tracing::warn!(
        path = %path.display(),
        records = lines.len(),
        "the rotated audit log lacked acknowledged records after a crash; they are restored from the sync journal"
    );
    let io = |what, err| AuditError::io(path, what, err);
    file.set_len(scan.complete_len).map_err(|err| io("truncate torn line", err))?;
    file.write_all(&joined(&lines)).map_err(|err| io("write", err))?;
    file.sync_data().map_err(|err| io("fdatasync", err))
}

/// `lines`, each followed by a newline.
pub(crate) fn joined(lines: &[Vec<u8>]) -> Vec<u8> {
    lines.iter().flat_map(|line| line.iter().copied().chain([b'\n'])).collect()
}

/// `path` with `.index` appended: `audit.jsonl.1`.
pub(crate) fn numbered(path: &Path, index: usize) -> PathBuf {
    let mut name = OsString::from(path.as_os_str());
    name.push(format!(".{index}"));
    PathBuf::from(name)
}

fn parent(path: &Path) -> Option<&Path> {
    path.parent().filter(|parent| !parent.as_os_str().is_empty())
}

fn ignore_missing(result: io::Result<()>) -> io::Result<()> {
    match result {
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

/// Makes a new or renamed directory entry durable.
fn sync_parent(path: &Path) -> Result<(), AuditError> {
    #[cfg(unix)]
    {
        let dir = parent(path).unwrap_or(Path::new("."));
        File::open(dir).and_then(|dir| dir.sync_all()).map_err(|err| AuditError::io(dir, "fsync directory", err))?;
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

/// Reads the end of `file`, growing the window until it holds the last
/// valid record (or the whole file, or [`MAX_SCAN`] bytes).
fn scan_tail(file: &mut File) -> io::Result<TailScan> {
    let len = file.metadata()?.len();
    let mut window: u64 = 64 * 1024;
    loop {
        let start = len.saturating_sub(window);
        let mut buf = vec![0; usize::try_from(len - start).map_err(io::Error::other)?];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut buf)?;
        let whole = start == 0 || window >= MAX_SCAN;
        let Some(newline) = buf.iter().rposition(|&b| b == b'\n') else {
            if start == 0 {
                // One torn line and nothing before it.
                return Ok(TailScan { complete_len: 0, torn: len, ..TailScan::default() });
            }
            if whole {
                return Err(io::Error::other("the last 64 MiB of the audit log hold no line break"));
            }
            window = window.saturating_mul(4);
            continue;
        };
        let torn = (buf.len() - newline - 1) as u64;
        let mut scan = TailScan { complete_len: len - torn, torn, ..TailScan::default() };
        // The first piece may be the cut-off end of a longer line.
        let lines: Vec<&[u8]> = buf[..newline].split(|&b| b == b'\n').collect();
        for (index, line) in lines.iter().enumerate().rev() {
            if index == 0 && start > 0 {
                break;
            }
            if let Ok(links) = check_line(line) {
                scan.last = Some(ChainState { seq: links.seq, last_hash: sha256_hex(line) });
                return Ok(scan);
            }
            scan.invalid_after += 1;
        }
        if whole {
            return Ok(scan);
        }
        window = window.saturating_mul(4);
    }
}
