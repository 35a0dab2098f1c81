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
    /// A record did not serialise as a JSON object.
    #[error("audit record is not a JSON object")]
    NotAnObject,
    /// The writer thread stopped (it panicked, or the log was closed).
    #[error("audit writer failed: {0}")]
    Writer(String),
}

impl AuditError {
    /// Wraps an I/O error with the path and the operation it came from.
    pub(crate) fn io(path: impl Into<PathBuf>, what: &'static str, source: std::io::Error) -> Self {
        AuditError::Io { path: path.into(), what, source }
    }

    /// The same error again, for each record of a batch that failed
    /// together (an `io::Error` cannot be cloned; its kind and text are kept).
    pub(crate) fn again(&self) -> Self {
        match self {
            AuditError::Io { path, what, source } => {
                AuditError::io(path.clone(), what, std::io::Error::new(source.kind(), source.to_string()))
            }
            AuditError::Serialize(err) => AuditError::Writer(err.to_string()),
            AuditError::NotAnObject => AuditError::NotAnObject,
            AuditError::Writer(why) => AuditError::Writer(why.clone()),
        }
    }
}
