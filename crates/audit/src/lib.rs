//! Warden's audit log: one JSON line per decision, redacted, hash-chained.
//!
//! [`AuditLog`] implements the gateway's [`Audit`] seam. Each decision
//! becomes one line of JSON ([`AuditRecord`]) appended to a file; `record`
//! returns only once the line is written (and synced, by default), so a call
//! whose answer reached the client always has its record on disk. If the
//! line cannot be written the call fails (fail closed) unless
//! [`AuditSettings::fail_open`] is set.
//!
//! * [`redact`](redact_value): secrets and personal data are masked before
//!   anything is written (on by default).
//! * [`chain`]: every line carries the hash of the line before it and a
//!   hash of itself, so edits, deletions and reordering are found by
//!   [`verify`]. The module docs define both hashes.
//! * [`tail`]: filtered reading, optionally following the file.
//! * Rotation by size keeps `keep` older files, `audit.jsonl.1` the newest,
//!   and the chain continues across them.

#![warn(missing_docs)]

pub mod chain;
mod error;
mod record;
mod redact;
mod tail;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use warden_gateway::pipeline::{Audit, AuditFuture, Record};

pub use chain::{Broken, GENESIS, VerifyReport, sha256_hex, verify};
pub use error::AuditError;
pub use record::{ApprovalRecord, AuditRecord, AutoApproverRecord, Decision, OutcomeKind, VerdictKind};
pub use redact::{SECRET, is_secret_key, redact_text, redact_value};
pub use tail::{TailFilter, tail};

use record::Entry;
use writer::Writer;

/// When the file is synced to disk.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Fsync {
    /// After every record, before `record` returns (the default).
    #[default]
    Always,
    /// Never explicitly: the line is handed to the operating system, which
    /// writes it when it likes. A machine crash can lose acknowledged records.
    Never,
}

/// How the audit log is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditSettings {
    /// The log file, e.g. `audit.jsonl`. Missing directories are created.
    pub path: PathBuf,
    /// Mask secrets and personal data (default `true`).
    pub redact: bool,
    /// When to sync (default [`Fsync::Always`]).
    pub fsync: Fsync,
    /// On a write error, log it and let the call through instead of failing
    /// the call (default `false`: fail closed).
    pub fail_open: bool,
    /// Rotate before a write would make the file larger than this many bytes
    /// (default `None`: never). A single record larger than the limit still
    /// gets written, alone in its file.
    pub rotate_bytes: Option<u64>,
    /// How many rotated files to keep, `.1` the newest (default 5). With 0,
    /// rotation deletes the full file.
    pub keep: usize,
}

impl AuditSettings {
    /// The defaults for a log at `path`.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        AuditSettings {
            path: path.into(),
            redact: true,
            fsync: Fsync::Always,
            fail_open: false,
            rotate_bytes: None,
            keep: 5,
        }
    }
}

/// The audit log. Cheap to share behind an `Arc`; writes are serialised.
pub struct AuditLog {
    writer: Arc<Mutex<Writer>>,
    path: PathBuf,
    redact: bool,
    fail_open: bool,
}

impl std::fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditLog")
            .field("path", &self.path)
            .field("redact", &self.redact)
            .field("fail_open", &self.fail_open)
            .finish_non_exhaustive()
    }
}

impl AuditLog {
    /// Opens (or creates) the log and finds where its chain continues: after
    /// the last valid record of the file (a torn last line left by a crash
    /// is removed with a warning; it was never acknowledged), or, for an
    /// empty file, after the last record of the rotated `.1` file.
    ///
    /// Fails if the file cannot be opened, unless `fail_open` is set: then
    /// the error is logged and every `record` tries to open it again.
    /// Does blocking I/O: call it at startup or from a blocking context.
    pub fn open(settings: AuditSettings) -> Result<AuditLog, AuditError> {
        let mut writer = Writer::new(&settings);
        if let Err(err) = writer.ensure_open() {
            if !settings.fail_open {
                return Err(err);
            }
            tracing::error!(error = %err, "audit log unavailable; continuing without it (fail_open)");
        }
        Ok(AuditLog {
            writer: Arc::new(Mutex::new(writer)),
            path: settings.path,
            redact: settings.redact,
            fail_open: settings.fail_open,
        })
    }

    /// The log file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes `record` on a blocking thread and returns its `seq`.
    async fn write(&self, entry: Entry) -> Result<u64, AuditError> {
        let writer = Arc::clone(&self.writer);
        let redact = self.redact;
        tokio::task::spawn_blocking(move || {
            let record = entry.into_record(redact);
            lock(&writer).append(record)
        })
        .await
        .map_err(|err| AuditError::Writer(err.to_string()))?
    }
}

/// Locks the writer. After a panic while it was held, the writer reopens
/// and rechecks the file before its next write.
fn lock(writer: &Mutex<Writer>) -> MutexGuard<'_, Writer> {
    match writer.lock() {
        Ok(guard) => guard,
        Err(poisoned) => {
            writer.clear_poison();
            let mut guard = poisoned.into_inner();
            guard.reset();
            guard
        }
    }
}

impl Audit for AuditLog {
    fn record<'a>(&'a self, record: Record<'a>) -> AuditFuture<'a> {
        let entry = Entry::new(&record);
        Box::pin(async move {
            match self.write(entry).await {
                Ok(_) => Ok(()),
                Err(err) if self.fail_open => {
                    tracing::error!(error = %err, "audit record not written; the call goes ahead (fail_open)");
                    Ok(())
                }
                Err(err) => {
                    tracing::error!(error = %err, "audit record not written; the call is refused");
                    Err(format!("the audit record could not be written: {err}"))
                }
            }
        })
    }
}
