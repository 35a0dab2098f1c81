//! SQL facts for Warden's policy rules.
//!
//! [`analyze`] parses a SQL string (for example a tool call's `query` argument) with
//! [sqlparser](https://docs.rs/sqlparser) and reports, per top-level statement, its
//! [`StatementKind`], whether a `SELECT` is unbounded (no `LIMIT`/`FETCH FIRST`/`TOP`
//! on the outermost query) and whether it has a `WHERE` clause. Rules such as "block
//! `SELECT` without `LIMIT`" or "block `DELETE` without `WHERE`" are decided on these
//! [`SqlFacts`].
//!
//! Anything that does not parse, including empty input, is a [`SqlError`]: a policy
//! must treat it as suspicious, never as safe.
//!
//! ```
//! use warden_sql::{Dialect, StatementKind, analyze};
//!
//! let facts = analyze("SELECT * FROM users; DELETE FROM logs", Dialect::Postgres)?;
//! assert!(facts.multiple_statements());
//! assert!(facts.select_without_limit());
//! assert!(facts.delete_without_where());
//! assert!(facts.has_kind(StatementKind::Delete));
//! assert!(analyze("SELEC 1", Dialect::Postgres).is_err());
//! # Ok::<(), warden_sql::SqlError>(())
//! ```

#![warn(missing_docs)]

mod analyze;
mod dialect;
mod error;
mod facts;

pub use analyze::{MAX_CHAIN, MAX_INPUT_BYTES, MAX_RECURSION_DEPTH, MAX_STATEMENTS, analyze};
pub use dialect::Dialect;
pub use error::{SqlError, UnknownName};
pub use facts::{SqlFacts, StatementFacts, StatementKind};
