//! Why an auto-approver cannot be set up. None of these ever contains the key.

/// Settings the auto-approver cannot work with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The base URL does not parse, is not `http`/`https`, or carries what a
    /// base URL must not (credentials, a query, a fragment).
    #[error("auto-approver base URL {url}: {reason}")]
    BaseUrl {
        /// The URL as configured, or a placeholder when it carries credentials.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// No model was named.
    #[error("auto-approver: the model name is empty")]
    EmptyModel,
    /// The key has a byte no HTTP header may carry (a newline, say).
    #[error(
        "auto-approver: the API key cannot be sent in an HTTP header (it contains a control or non-ASCII character)"
    )]
    KeyNotHeaderSafe,
    /// A limit that must be positive is zero.
    #[error("auto-approver: {0} must be greater than zero")]
    Zero(&'static str),
    /// The HTTP client could not be built.
    #[error("auto-approver: cannot set up the HTTP client: {0}")]
    Client(String),
}
