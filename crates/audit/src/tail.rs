//! Reading the log as it grows, with a filter.

use std::fs::{self, File, Metadata};
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::error::AuditError;

/// How often a followed file is checked for new lines.
const POLL: Duration = Duration::from_millis(200);

/// Which records [`tail`] prints. Unset fields match everything; set fields
/// must all match (exactly; the verdict ignoring case).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TailFilter {
    /// `allow`, `deny` or `escalate`: the record's `decision.verdict`.
    pub decision: Option<String>,
    /// The record's `server`.
    pub server: Option<String>,
    /// The tool (or prompt, or resource URI): the record's `name`.
    pub tool: Option<String>,
}

impl TailFilter {
    /// Whether nothing is filtered.
    pub fn is_empty(&self) -> bool {
        self.decision.is_none() && self.server.is_none() && self.tool.is_none()
    }

    /// Whether `line` passes. With no filter set every line passes, even one
    /// that is not a record; otherwise a line that is not a JSON record
    /// never does.
    pub fn matches(&self, line: &str) -> bool {
        if self.is_empty() {
            return true;
        }
        let Ok(record) = serde_json::from_str::<Value>(line) else {
            return false;
        };
        let field = |value: Option<&Value>| value.and_then(Value::as_str).map(str::to_owned);
        let verdict = field(record.get("decision").and_then(|decision| decision.get("verdict")));
        let server = field(record.get("server"));
        let name = field(record.get("name"));
        let decision_ok =
            self.decision.as_ref().is_none_or(|want| verdict.is_some_and(|v| v.eq_ignore_ascii_case(want)));
        let server_ok = self.server.as_ref().is_none_or(|want| server.as_deref() == Some(want.as_str()));
        let tool_ok = self.tool.as_ref().is_none_or(|want| name.as_deref() == Some(want.as_str()));
        decision_ok && server_ok && tool_ok
    }
}

/// Passes each complete line of `path` that matches `filter` to `out`
/// (without its newline), from the start of the file, and stops when `out`
/// returns `false`. Without `follow` it returns at the end of the file (a
/// torn last line is not passed on). With `follow` it keeps polling every
/// 200 ms for appended lines, follows the path to a new file when the log
/// is rotated, and returns only when `out` returns `false` or on an error.
/// Blocks the calling thread.
pub fn tail(
    path: &Path,
    filter: &TailFilter,
    follow: bool,
    out: &mut dyn FnMut(&str) -> bool,
) -> Result<(), AuditError> {
    let open = |path: &Path| File::open(path).map_err(|err| AuditError::io(path, "open", err));
    let mut reader = BufReader::new(open(path)?);
    let mut pending = Vec::new();
    let mut position = 0u64;
    loop {
        if !drain(path, &mut reader, &mut pending, &mut position, filter, out)? {
            return Ok(());
        }
        if !follow {
            return Ok(());
        }
        if replaced(path, reader.get_ref(), position) {
            // Lines written before the rename are still in the old file.
            if !drain(path, &mut reader, &mut pending, &mut position, filter, out)? {
                return Ok(());
            }
            if let Ok(file) = File::open(path) {
                reader = BufReader::new(file);
                reader.seek(SeekFrom::Start(0)).map_err(|err| AuditError::io(path, "seek", err))?;
                pending.clear();
                position = 0;
                continue;
            }
        }
        std::thread::sleep(POLL);
    }
}

/// Reads the complete lines available now. `false` when `out` asked to stop.
fn drain(
    path: &Path,
    reader: &mut BufReader<File>,
    pending: &mut Vec<u8>,
    position: &mut u64,
    filter: &TailFilter,
    out: &mut dyn FnMut(&str) -> bool,
) -> Result<bool, AuditError> {
    loop {
        let read = reader.read_until(b'\n', pending).map_err(|err| AuditError::io(path, "read", err))?;
        if read == 0 {
            // At the end; a partial line stays pending until the rest comes.
            return Ok(true);
        }
        *position += read as u64;
        let Some(line) = pending.strip_suffix(b"\n") else {
            continue;
        };
        let line = String::from_utf8_lossy(line);
        if filter.matches(&line) && !out(&line) {
            return Ok(false);
        }
        pending.clear();
    }
}

/// Whether `path` now names another file than `current` (rotation), or the
/// file was cut shorter than what was read.
fn replaced(path: &Path, current: &File, position: u64) -> bool {
    let (Ok(now), Ok(open)) = (fs::metadata(path), current.metadata()) else {
        return false;
    };
    !same_file(&now, &open) || now.len() < position
}

#[cfg(unix)]
fn same_file(a: &Metadata, b: &Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(_: &Metadata, _: &Metadata) -> bool {
    // No file identity here: only a file cut shorter is noticed.
    true
}
