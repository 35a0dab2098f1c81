//! Errors: why a SQL string was not analyzed, and unknown dialect or kind names.

/// Why [`analyze`](crate::analyze) could not produce facts for a SQL string.
///
/// Every variant means "not understood". A policy must treat it as suspicious,
/// never as safe: SQL that Warden cannot parse may still run on the database.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SqlError {
    /// The input holds no statement: it is empty, blank, only comments or only `;`.
    #[error("no SQL statement (the input is empty or only whitespace, comments or ';')")]
    Empty,
    /// The input is longer than [`MAX_INPUT_BYTES`](crate::MAX_INPUT_BYTES).
    #[error("SQL input is {len} bytes, more than the limit of {max}")]
    TooLarge {
        /// Length of the input in bytes.
        len: usize,
        /// The limit in bytes.
        max: usize,
    },
    /// The statement nests deeper than [`MAX_RECURSION_DEPTH`](crate::MAX_RECURSION_DEPTH)
    /// (parentheses, subqueries, expressions).
    #[error("SQL nests too deeply (limit {limit})")]
    TooDeep {
        /// The nesting limit.
        limit: usize,
    },
    /// An operator or set-operation chain is longer than [`MAX_CHAIN`](crate::MAX_CHAIN)
    /// (e.g. `a OR b OR c ...` or `SELECT ... UNION SELECT ... UNION ...`).
    #[error("SQL expression or UNION chain is too long (limit {limit} operators)")]
    TooComplex {
        /// The chain limit.
        limit: usize,
    },
    /// The input holds more than [`MAX_STATEMENTS`](crate::MAX_STATEMENTS) statements.
    #[error("SQL input has more than {limit} statements")]
    TooManyStatements {
        /// The statement limit.
        limit: usize,
    },
    /// The input could not be split into tokens (e.g. an unterminated string or quoted name).
    #[error("SQL could not be tokenized: {0}")]
    Tokenize(String),
    /// The tokens do not form valid SQL for the dialect.
    #[error("SQL could not be parsed: {0}")]
    Parse(String),
    /// The parser failed in an unexpected way (it panicked, or its thread could not start).
    #[error("SQL analysis failed: {0}")]
    Internal(String),
}

/// A name that is not a known [`Dialect`](crate::Dialect) or [`StatementKind`](crate::StatementKind).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown SQL {what} {name:?}; valid names: {valid}")]
pub struct UnknownName {
    /// What was looked up: `"dialect"` or `"statement kind"`.
    pub what: &'static str,
    /// The name as given.
    pub name: String,
    /// The accepted names, comma-separated.
    pub valid: &'static str,
}
