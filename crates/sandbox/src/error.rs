//! What can go wrong setting up a sandbox.

/// Why a sandbox could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// The policy asks for something this machine or mode cannot enforce.
    #[error("{0}")]
    Unsupported(String),
    /// The policy itself is wrong (a bad allowlist entry, say).
    #[error("invalid sandbox policy: {0}")]
    Invalid(String),
    /// Creating a directory, a socket or resolving the program failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The error.
        source: std::io::Error,
    },
}

impl SandboxError {
    /// An I/O error while doing `context`.
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> SandboxError {
        SandboxError::Io { context: context.into(), source }
    }
}
