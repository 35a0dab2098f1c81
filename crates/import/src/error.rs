//! Import errors. Each one names the file it concerns and says what is wrong.

use std::path::PathBuf;

/// Why a configuration could not be imported.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// No file was given.
    #[error("nothing to import: give the {format} file(s) to convert")]
    NoFiles {
        /// The format asked for (`mcpmon`, `mcp2`, `mcptools`).
        format: &'static str,
    },
    /// The format reads exactly one file, and several were given.
    #[error("{format} keeps its whole configuration in one file; got {count} files")]
    OneFile {
        /// The format asked for.
        format: &'static str,
        /// How many files were given.
        count: usize,
    },
    /// The file is not valid YAML or JSON.
    #[error("{path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong and where.
        message: String,
    },
    /// The file parsed but does not have the shape its format requires.
    #[error("{path}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong, with the key path and, when found, the line.
        message: String,
    },
    /// A command-line setting of the import is unusable.
    #[error("{option}: {message}")]
    BadOption {
        /// The option (`--allowed-domains`, ...).
        option: &'static str,
        /// What is wrong.
        message: String,
    },
    /// The converted configuration breaks one of Warden's rules (for example
    /// a profile naming a server that does not exist).
    #[error("{origin}: the converted config is not valid for Warden: {}", problems.join("; "))]
    Rejected {
        /// The file or files it was converted from.
        origin: String,
        /// Every problem found, one sentence each.
        problems: Vec<String>,
    },
    /// `--merge`: the import defines things the config already defines
    /// differently.
    #[error(
        "the import clashes with the config: {}; nothing was written (--replace puts the import's in their place)",
        clashes.join("; ")
    )]
    Clash {
        /// Each clash, one sentence each.
        clashes: Vec<String>,
    },
    /// The configuration could not be written as YAML.
    #[error("cannot write the config as YAML: {message}")]
    Write {
        /// The serializer's message.
        message: String,
    },
}
