//! The sync journal: how `fsync: always` makes a batch durable without an
//! `fdatasync` of the growing log.
//!
//! An `fdatasync` of an appended file must also commit its new size, which
//! on ext4 and XFS is a journal commit of the file system: up to twice a
//! plain write of the device (1.5 to 1.9 times on the VM this was measured
//! on), and one at a time, however many threads ask.
//! So the log itself is appended without a sync, and each batch's lines are
//! also written, durably, to this journal: a file of fixed size, filled with
//! zeros once, whose blocks are overwritten in place (`O_DIRECT | O_DSYNC`
//! where the file system has it). Such a write changes no metadata, costs
//! one device write, and several run at once.
//!
//! The journal is `.<log name>.sync` beside the log: 8 MiB, whatever the
//! log's size. Layout: block 0 is the header (`WDNJ`, then the
//! generation); each batch is a frame starting on a block boundary
//! (`WDNF`, the generation, the payload's length, then the lines). When the journal is full, the log is
//! synced (which makes every journalled line durable in the log itself) and
//! the journal starts again from block 1 under the next generation.
//!
//! Recovery needs no offsets or checksums beyond the generation: every
//! line carries its `seq`, its `prevHash` and its own `hash` (see
//! [`crate::chain`]). At open, the lines of the current generation that
//! continue the log's chain are appended to it, in `seq` order, up to the
//! first gap; a torn frame's lines fail their own hash, and a stale frame's
//! do not continue the chain.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::chain::{ChainState, check_line, sha256_hex};

/// The unit of writes: frames start on a block boundary, and direct I/O
/// needs buffers, offsets and lengths aligned to it.
pub(crate) const BLOCK: usize = 4096;

/// The journal's size: 2,047 frames of up to one block before a wrap.
pub(crate) const CAPACITY: u64 = 8 * 1024 * 1024;

const HEADER_MAGIC: &[u8; 4] = b"WDNJ";
const FRAME_MAGIC: &[u8; 4] = b"WDNF";
/// Magic, generation (u64) and payload length (u32).
const FRAME_HEAD: usize = 16;

/// The journal file beside a log: `.audit.jsonl.sync` (hidden, so that a
/// glob such as `audit.jsonl*` still matches only the log's own files).
pub(crate) fn path_of(log: &Path) -> PathBuf {
    let mut name = std::ffi::OsString::from(".");
    name.push(log.file_name().unwrap_or(log.as_os_str()));
    name.push(".sync");
    log.with_file_name(name)
}

/// An open journal: frames are placed under the log's lock and written
/// outside it, through a shared [`File`].
#[derive(Debug)]
pub(crate) struct Journal {
    /// Held open for its exclusive lock: one process per journal.
    _lock: File,
    path: PathBuf,
    file: std::sync::Arc<File>,
    /// Opened with `O_DIRECT | O_DSYNC`: a write is durable when it returns.
    /// Otherwise each write is followed by an `fdatasync`.
    direct: bool,
    generation: u64,
    /// Where the next frame goes.
    next: u64,
}

/// A frame ready to be written: its bytes, padded to whole blocks and
/// aligned in memory for direct I/O.
#[derive(Debug)]
pub(crate) struct Frame {
    buffer: Vec<u8>,
    start: usize,
    len: usize,
    /// Where it goes in the journal.
    pub(crate) offset: u64,
}

impl Frame {
    fn bytes(&self) -> &[u8] {
        &self.buffer[self.start..self.start + self.len]
    }
}

/// What the writer threads need to write frames outside the lock.
#[derive(Debug, Clone)]
pub(crate) struct Device {
    path: PathBuf,
    file: std::sync::Arc<File>,
    direct: bool,
}

impl Device {
    /// Writes `frame` durably.
    pub(crate) fn write(&self, frame: &Frame) -> io::Result<()> {
        self.file.write_all_at(frame.bytes(), frame.offset)?;
        if !self.direct {
            self.file.sync_data()?;
        }
        Ok(())
    }

    /// The journal file.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

impl Journal {
    /// Opens the journal at `path`, creating and zero-filling it if needed,
    /// and returns it with the lines of its current generation, in the
    /// order they were written (for [`recover`]). Does not start a new
    /// generation: call [`Journal::restart`] once the lines are safe.
    ///
    /// Fails with [`io::ErrorKind::WouldBlock`] while another process holds
    /// it: several Warden processes may share one log (each client starting
    /// its own `warden serve`), but only one may own the journal, or they
    /// would overwrite each other's frames.
    pub(crate) fn open(path: &Path) -> io::Result<(Journal, Vec<Vec<u8>>)> {
        let mut file = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path)?;
        lock_exclusively(&file)?;
        let len = file.metadata()?.len();
        let mut lines = Vec::new();
        let mut generation = 0;
        if len < CAPACITY {
            if let Err(err) = preallocate(&mut file, len) {
                // No room for it: leave none of it behind to crowd the log.
                drop(file);
                let _ = std::fs::remove_file(path);
                return Err(err);
            }
            if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
                File::open(dir)?.sync_all()?;
            }
        } else {
            let mut content = Vec::with_capacity(CAPACITY as usize);
            (&file).take(CAPACITY).read_to_end(&mut content)?;
            if let Some(found) = header_generation(&content) {
                generation = found;
                lines = frames_of(&content, generation);
            }
        }
        let (writes, direct) = open_for_writes(path)?;
        let journal = Journal {
            _lock: file,
            path: path.to_owned(),
            file: std::sync::Arc::new(writes),
            direct,
            generation,
            next: 0,
        };
        Ok((journal, lines))
    }

    /// Starts the next generation: everything journalled so far must be
    /// durable in the log already. Frames go from block 1 again.
    pub(crate) fn restart(&mut self) -> io::Result<()> {
        let generation = self.generation.wrapping_add(1);
        let mut header = vec![0; 12];
        header[..4].copy_from_slice(HEADER_MAGIC);
        header[4..12].copy_from_slice(&generation.to_le_bytes());
        let frame = aligned(&header, 0);
        self.device().write(&frame)?;
        self.generation = generation;
        self.next = BLOCK as u64;
        Ok(())
    }

    /// The frame for `lines`, placed after the last one; `None` when the
    /// journal has no room left for it (or was never started).
    pub(crate) fn place(&mut self, lines: &[u8]) -> Option<Frame> {
        let size = round_up(FRAME_HEAD + lines.len()) as u64;
        if self.next == 0 || self.next + size > CAPACITY {
            return None;
        }
        let mut head = Vec::with_capacity(FRAME_HEAD + lines.len());
        head.extend_from_slice(FRAME_MAGIC);
        head.extend_from_slice(&self.generation.to_le_bytes());
        head.extend_from_slice(&u32::try_from(lines.len()).ok()?.to_le_bytes());
        head.extend_from_slice(lines);
        let frame = aligned(&head, self.next);
        self.next += size;
        Some(frame)
    }

    /// What the writer threads write frames with.
    pub(crate) fn device(&self) -> Device {
        Device { path: self.path.clone(), file: self.file.clone(), direct: self.direct }
    }
}

/// The lines among `lines` that continue `chain`, in `seq` order up to the
/// first gap: what a crash took from the log after the journal had it.
/// Returns them (each without its newline) and the chain after them.
pub(crate) fn recover(lines: Vec<Vec<u8>>, chain: &ChainState) -> (Vec<Vec<u8>>, ChainState) {
    let mut candidates: Vec<(u64, String, Vec<u8>)> = lines
        .into_iter()
        .filter_map(|line| check_line(&line).ok().map(|links| (links.seq, links.prev_hash, line)))
        .filter(|(seq, _, _)| *seq > chain.seq)
        .collect();
    candidates.sort_by_key(|(seq, _, _)| *seq);
    let mut state = chain.clone();
    let mut found = Vec::new();
    for (seq, prev_hash, line) in candidates {
        if seq != state.seq + 1 || prev_hash != state.last_hash {
            if seq == state.seq {
                continue; // the same record twice (a frame written again)
            }
            break;
        }
        state = ChainState { seq, last_hash: sha256_hex(&line) };
        found.push(line);
    }
    (found, state)
}

/// Takes `file`'s exclusive lock, without waiting; it lasts while the file
/// stays open, and ends with the process however that ends.
fn lock_exclusively(file: &File) -> io::Result<()> {
    file.try_lock().map_err(|err| match err {
        std::fs::TryLockError::WouldBlock => io::Error::new(io::ErrorKind::WouldBlock, "in use by another process"),
        std::fs::TryLockError::Error(err) => err,
    })
}

/// Opens for the frames' writes: direct and synchronous where the file
/// system allows (tmpfs, for one, has no direct I/O).
fn open_for_writes(path: &Path) -> io::Result<(File, bool)> {
    let direct = OpenOptions::new().write(true).custom_flags(libc::O_DIRECT | libc::O_DSYNC).open(path);
    match direct {
        Ok(file) => Ok((file, true)),
        Err(_) => Ok((OpenOptions::new().write(true).open(path)?, false)),
    }
}

/// Fills the file with real zeros up to [`CAPACITY`] (not a sparse hole:
/// writing into a hole would allocate blocks, metadata again), durably.
fn preallocate(file: &mut File, from: u64) -> io::Result<()> {
    let zeros = vec![0; 1024 * 1024];
    let mut at = from;
    while at < CAPACITY {
        let chunk = usize::try_from((CAPACITY - at).min(zeros.len() as u64)).map_err(io::Error::other)?;
        file.write_all_at(&zeros[..chunk], at)?;
        at += chunk as u64;
    }
    file.sync_all()
}

fn header_generation(content: &[u8]) -> Option<u64> {
    if content.get(..4)? != HEADER_MAGIC {
        return None;
    }
    Some(u64::from_le_bytes(content.get(4..12)?.try_into().ok()?))
}

/// The lines of the frames of `generation`, in journal order, from block 1
/// up to the first block that is not such a frame.
fn frames_of(content: &[u8], generation: u64) -> Vec<Vec<u8>> {
    let mut lines = Vec::new();
    let mut at = BLOCK;
    while let Some(head) = content.get(at..at + FRAME_HEAD) {
        if &head[..4] != FRAME_MAGIC || head[4..12] != generation.to_le_bytes() {
            break;
        }
        let Ok(len) = <[u8; 4]>::try_from(&head[12..16]).map(u32::from_le_bytes) else { break };
        let Some(payload) = content.get(at + FRAME_HEAD..at + FRAME_HEAD + len as usize) else { break };
        lines.extend(payload.split(|&b| b == b'\n').filter(|line| !line.is_empty()).map(<[u8]>::to_vec));
        at += round_up(FRAME_HEAD + len as usize);
    }
    lines
}

fn round_up(len: usize) -> usize {
    len.div_ceil(BLOCK) * BLOCK
}

/// `bytes` padded with zeros to whole blocks, in a buffer aligned to a
/// block in memory (direct I/O needs it): allocated a block larger, and
/// used from its first aligned byte, so no unsafe code is needed.
fn aligned(bytes: &[u8], offset: u64) -> Frame {
    let len = round_up(bytes.len().max(1));
    let mut buffer = vec![0; len + BLOCK];
    let start = buffer.as_ptr().align_offset(BLOCK).min(BLOCK);
    buffer[start..start + bytes.len()].copy_from_slice(bytes);
    Frame { buffer, start, len, offset }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::{GENESIS, Members, seal};
    use crate::writer::joined;

    fn lines(count: u64, chain: &mut ChainState) -> Vec<Vec<u8>> {
        (0..count)
            .map(|_| {
                let members = Members::of(&serde_json::json!({"tool": "echo"})).expect("members");
                let seq = chain.seq + 1;
                let line = seal(&members, "2026-11-26T00:00:00Z", seq, &chain.last_hash);
                *chain = ChainState { seq, last_hash: sha256_hex(&line) };
                line
            })
            .collect()
    }

    /// An empty directory of its own for one test.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("warden-journal-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("dir");
        dir
    }

    #[test]
    fn frames_of_the_current_generation_come_back_and_continue_the_chain() {
        let dir = scratch("frames");
        let path = path_of(&dir.join("audit.jsonl"));
        let mut chain = ChainState::genesis();
        let written = lines(5, &mut chain);
        {
            let (mut journal, found) = Journal::open(&path).expect("open");
            assert!(found.is_empty());
            assert!(journal.place(b"x\n").is_none(), "no frames before the first generation");
            journal.restart().expect("restart");
            let device = journal.device();
            for part in [&written[..2], &written[2..]] {
                device.write(&journal.place(&joined(part)).expect("room")).expect("write");
            }
        }
        let (mut journal, found) = Journal::open(&path).expect("reopen");
        assert_eq!(found, written);

        // The log kept the first two lines: the other three are recovered.
        let mut kept = ChainState::genesis();
        let _ = lines(2, &mut kept);
        let (recovered, after) = recover(found.clone(), &kept);
        assert_eq!(recovered, written[2..].to_vec());
        assert_eq!(after, chain);
        // A log that has them all gets nothing; one from another chain neither.
        assert!(recover(found.clone(), &chain).0.is_empty());
        let other = ChainState { seq: 2, last_hash: GENESIS.replace('0', "1") };
        assert!(recover(found, &other).0.is_empty());

        // A new generation hides the old frames.
        journal.restart().expect("restart");
        drop(journal);
        assert!(Journal::open(&path).expect("reopen").1.is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn one_process_at_a_time_owns_a_journal() {
        let dir = scratch("lock");
        let path = path_of(&dir.join("audit.jsonl"));
        let first = Journal::open(&path).expect("open");
        let second = Journal::open(&path).map(|_| ()).expect_err("held by the first");
        assert_eq!(second.kind(), io::ErrorKind::WouldBlock);
        drop(first);
        assert!(Journal::open(&path).is_ok(), "free again once the first is closed");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_gap_or_a_torn_line_ends_what_is_recovered() {
        let mut chain = ChainState::genesis();
        let mut written = lines(4, &mut chain);
        let mut torn = written[2].clone();
        torn.truncate(torn.len() / 2);
        written[2] = torn;
        let (recovered, after) = recover(written.clone(), &ChainState::genesis());
        assert_eq!(recovered, written[..2].to_vec());
        assert_eq!(after.seq, 2);
    }

    #[test]
    fn frames_are_whole_blocks_aligned_in_memory() {
        let frame = aligned(&[7; 5000], 4096);
        assert_eq!(frame.bytes().len(), 2 * BLOCK);
        assert_eq!(frame.bytes().as_ptr() as usize % BLOCK, 0);
    }
}
