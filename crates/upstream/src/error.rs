//! Errors about an upstream server.

/// Why a request to an upstream got no answer.
#[derive(Debug, Clone, thiserror::Error)]
pub enum UpstreamError {
    /// The upstream is not running (starting, restarting, failed, stopped).
    #[error("upstream '{name}' is not available: {reason}")]
    Unavailable {
        /// The server's name.
        name: String,
        /// Why, with the tail of its stderr when there is one.
        reason: String,
    },
    /// The upstream went away before answering.
    #[error("upstream '{name}' went away before answering: {reason}")]
    Lost {
        /// The server's name.
        name: String,
        /// Why, with the tail of its stderr when there is one.
        reason: String,
    },
    /// The upstream's answer exceeded the size limit.
    #[error("upstream '{name}' sent a response of {bytes} bytes, over the limit of {limit} (limits.maxMessageBytes)")]
    TooLarge {
        /// The server's name.
        name: String,
        /// The response's size.
        bytes: usize,
        /// The limit.
        limit: usize,
    },
    /// The upstream did not answer in time.
    #[error("upstream '{name}' did not answer {what} within {seconds} s")]
    Timeout {
        /// The server's name.
        name: String,
        /// What was asked.
        what: String,
        /// How long Warden waited.
        seconds: u64,
    },
    /// The upstream's HTTP endpoint could not be reached or answered with an
    /// error status.
    #[error("upstream '{name}' failed over HTTP: {reason}")]
    Http {
        /// The server's name.
        name: String,
        /// What failed: the method, URL and status, or why the connection failed.
        reason: String,
    },
    /// A message for the upstream exceeded the size limit and was not sent.
    #[error("a message of {bytes} bytes for upstream '{name}' is over the limit of {limit} (limits.maxMessageBytes)")]
    RequestTooLarge {
        /// The server's name.
        name: String,
        /// The message's size.
        bytes: usize,
        /// The limit.
        limit: usize,
    },
}
