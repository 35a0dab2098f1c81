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
mod committer;
mod error;
mod journal;
mod query;
mod record;
mod redact;
mod tail;
mod writer;

use std::path::{Path, PathBuf};

use warden_pipeline::{Audit, AuditFuture, Record};

pub use chain::{Broken, GENESIS, VerifyReport, sha256_hex, verify};
pub use error::AuditError;
pub use query::{Query, query, query_time, recent};
pub use record::arguments_digest;
pub use record::{ApprovalRecord, AuditRecord, AutoApproverRecord, Decision, JsonText, OutcomeKind, VerdictKind};
#[doc(hidden)]
pub use record::{RecordedAnswer, recorded_answer};
pub use redact::{
    SECRET, SECRET_VALUE_MAX_CHARS, SecretSpan, is_secret_key, redact_text, redact_value, secret_spans,
    value_secret_spans,
};
pub use tail::{TailFilter, tail};

use chain::Members;
use committer::Committer;
use record::Entry;
use writer::Writer;

/// When the file is synced to disk.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Fsync {
    /// Before `record` returns (the default): each batch of records written
    /// together is made durable by one `fdatasync`.
    #[default]
    Always,
    /// Never explicitly: the line is handed to the operating system, which
    /// writes it when it likes. A machine crash or power loss can lose
    /// acknowledged records (a crash of Warden alone cannot).
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
    /// Record what each tool call was answered with, redacted like the
    /// arguments, with the digest of the whole answer (default `true`).
    pub results: bool,
    /// A result whose JSON text is longer is recorded cut to this many
    /// bytes (default [`RESULT_MAX_BYTES`]); its digest covers all of it.
    pub result_max_bytes: usize,
}

/// The default [`AuditSettings::result_max_bytes`]: 16 KiB, enough for the
/// text of most tool answers, not for a file or a page read whole.
pub const RESULT_MAX_BYTES: usize = 16 * 1024;

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
            results: true,
            result_max_bytes: RESULT_MAX_BYTES,
        }
    }
}

/// The audit log. Cheap to share behind an `Arc`; one thread writes it.
pub struct AuditLog {
    committer: Committer,
    path: PathBuf,
    redact: bool,
    fail_open: bool,
    results: bool,
    result_max_bytes: usize,
}

impl std::fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditLog")
            .field("path", &self.path)
            .field("redact", &self.redact)
            .field("fail_open", &self.fail_open)
            .field("results", &self.results)
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
    /// the error is logged and every batch tries to open it again.
    /// Does blocking I/O: call it at startup or from a blocking context.
    /// Starts the writer thread; dropping the log ends it, once what is
    /// queued is written.
    pub fn open(settings: AuditSettings) -> Result<AuditLog, AuditError> {
        let mut writer = Writer::new(&settings);
        let mut journal = None;
        match writer.ensure_open() {
            Ok(()) if settings.fsync == Fsync::Always => journal = open_journal(&mut writer, &settings.path)?,
            Ok(()) => {}
            Err(err) if !settings.fail_open => return Err(err),
            Err(err) => tracing::error!(error = %err, "audit log unavailable; continuing without it (fail_open)"),
        }
        Ok(AuditLog {
            committer: Committer::start(writer, journal, settings.fsync == Fsync::Never)?,
            path: settings.path,
            redact: settings.redact,
            fail_open: settings.fail_open,
            results: settings.results,
            result_max_bytes: settings.result_max_bytes,
        })
    }

    /// The log file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Redacts and serialises `entry` here, on the caller's task (a few
    /// microseconds: see `examples/record_cost.rs`), and hands it to the
    /// writer; returns its `seq` once it is written.
    async fn write(&self, entry: Entry) -> Result<u64, AuditError> {
        let members = Members::of(&entry.into_record(self.redact, self.result_max_bytes))?;
        self.committer.append(members).await
    }
}

/// Opens the sync journal beside the log at `path` (see [`journal`]),
/// first putting back into the log what a crash took from it after the
/// journal had it. Without a journal (it cannot be created, e.g. no room
/// for it), each batch is synced with `fdatasync`, which is only slower.
fn open_journal(writer: &mut Writer, path: &Path) -> Result<Option<journal::Journal>, AuditError> {
    let journal_path = journal::path_of(path);
    let (mut journal, lines) = match journal::Journal::open(&journal_path) {
        Ok(opened) => opened,
        Err(err) if err.kind() == std::io::ErrorKind::WouldBlock => {
            tracing::info!(path = %journal_path.display(), "another Warden process owns the audit sync journal; this one syncs each batch with fdatasync");
            return Ok(None);
        }
        Err(err) => {
            tracing::warn!(path = %journal_path.display(), error = %err, "no audit sync journal; each batch is synced with fdatasync");
            return Ok(None);
        }
    };
    writer.restore_rotated(&lines)?;
    let (recovered, chain) = journal::recover(lines, &writer.chain());
    if recovered.is_empty() {
        // What the log holds must be durable before the journal starts over.
        writer.sync_log()?;
    } else {
        tracing::warn!(
            path = %path.display(),
            records = recovered.len(),
            "the audit log lacked acknowledged records after a crash; they are restored from the sync journal"
        );
        writer.restore(&recovered, chain)?;
    }
    journal.restart().map_err(|err| AuditError::io(&journal_path, "start", err))?;
    writer.set_journalled();
    Ok(Some(journal))
}

impl Audit for AuditLog {
    fn record<'a>(&'a self, record: Record<'a>) -> AuditFuture<'a> {
        let entry = Entry::new(&record, self.results);
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
