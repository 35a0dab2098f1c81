//! The errors of the audit log.

use std::path::PathBuf;

/// Why the audit log could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// Reading, writing, syncing or renaming a file failed.
    #[error("audit log {}: {what}: {source}", path.display())]
    Io {
        /// The file or directory involved.
        path: PathBuf,
        /// What was being done, e.g. "write" or "rotate".
        what: &'static str,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A record could not be turned into JSON.
    #[error("audit record could not be serialised: {0}")]
    Serialize(#[from] serde_json::Error),
    /// The blocking writer task could not finish (panicked or was cancelled).
    #[error("audit writer failed: {0}")]
    Writer(String),
}

impl AuditError {
    /// Wraps an I/O error with the path and the operation it came from.
    pub(crate) fn io(path: impl Into<PathBuf>, what: &'static str, source: std::io::Error) -> Self {
        AuditError::Io { path: path.into(), what, source }
    }
}
