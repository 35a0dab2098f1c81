//! Configuration errors.

use std::path::PathBuf;

/// Why a configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not valid YAML or JSON, or does not fit the schema.
    #[error("{path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong and where (line and column).
        message: String,
    },
    /// The file parsed but breaks rules the schema cannot express.
    #[error("{path}: {}", problems.join("; "))]
    Invalid {
        /// The file.
        path: PathBuf,
        /// Every problem found, one sentence each.
        problems: Vec<String>,
    },
}
