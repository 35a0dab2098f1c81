//! What [`analyze`](crate::analyze) reports about a SQL string.

use std::fmt;
use std::str::FromStr;

use crate::error::UnknownName;

/// The kind of a top-level statement, named in policy configs by [`as_str`](Self::as_str).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StatementKind {
    /// A query: `SELECT`, `WITH ... SELECT`, `VALUES`, `TABLE t`, set operations (`UNION`, ...).
    Select,
    /// `INSERT` (also `INSERT ... SELECT`, MySQL `REPLACE`, `WITH ... INSERT`).
    Insert,
    /// `UPDATE` (also `WITH ... UPDATE`).
    Update,
    /// `DELETE` (also `WITH ... DELETE`).
    Delete,
    /// `MERGE`.
    Merge,
    /// `DROP` of any object (table, view, function, ...).
    Drop,
    /// `ALTER` of any object, and MySQL `RENAME TABLE`.
    Alter,
    /// `CREATE` of any object (also `CREATE TABLE ... AS SELECT`), and `SELECT ... INTO`,
    /// which creates a table in PostgreSQL and SQL Server.
    Create,
    /// `TRUNCATE`.
    Truncate,
    /// `GRANT`.
    Grant,
    /// `REVOKE`.
    Revoke,
    /// Anything else: `EXPLAIN`, `SHOW`, `USE`, `SET`, `BEGIN`, `COMMIT`, `COPY`, `CALL`,
    /// `EXECUTE`, `DENY`, control flow (`IF`, `WHILE`, ...) whose bodies are not inspected.
    Other,
}

/// Accepted names, as listed in [`UnknownName`] errors.
const VALID: &str = "SELECT, INSERT, UPDATE, DELETE, MERGE, DROP, ALTER, CREATE, TRUNCATE, GRANT, REVOKE, OTHER";

impl StatementKind {
    /// Every kind, in declaration order.
    pub const ALL: [StatementKind; 12] = [
        StatementKind::Select,
        StatementKind::Insert,
        StatementKind::Update,
        StatementKind::Delete,
        StatementKind::Merge,
        StatementKind::Drop,
        StatementKind::Alter,
        StatementKind::Create,
        StatementKind::Truncate,
        StatementKind::Grant,
        StatementKind::Revoke,
        StatementKind::Other,
    ];

    /// The name in upper case, e.g. `"SELECT"`; [`FromStr`] accepts it in any case.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            StatementKind::Select => "SELECT",
            StatementKind::Insert => "INSERT",
            StatementKind::Update => "UPDATE",
            StatementKind::Delete => "DELETE",
            StatementKind::Merge => "MERGE",
            StatementKind::Drop => "DROP",
            StatementKind::Alter => "ALTER",
            StatementKind::Create => "CREATE",
            StatementKind::Truncate => "TRUNCATE",
            StatementKind::Grant => "GRANT",
            StatementKind::Revoke => "REVOKE",
            StatementKind::Other => "OTHER",
        }
    }
}

impl fmt::Display for StatementKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for StatementKind {
    type Err = UnknownName;

    /// Parses a kind name such as `select` or `DROP`, ignoring case and surrounding whitespace.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let name = s.trim();
        StatementKind::ALL
            .into_iter()
            .find(|kind| kind.as_str().eq_ignore_ascii_case(name))
            .ok_or_else(|| UnknownName { what: "statement kind", name: s.to_owned(), valid: VALID })
    }
}

/// Facts about one top-level statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StatementFacts {
    /// The statement's kind.
    pub kind: StatementKind,
    /// For [`StatementKind::Select`] only: the outermost query has no row limit, i.e. no
    /// `LIMIT n`, `FETCH FIRST`, `TOP n` (SQL Server) or final `|> LIMIT` (BigQuery pipe).
    ///
    /// A limit inside a subquery, a CTE or one branch of a `UNION` does not bound the outer
    /// query; a limit on the outer query bounds all of it, `UNION`s and CTEs included; a
    /// parenthesized query `(SELECT ... LIMIT 5)` is bounded by its own limit. The rule is
    /// syntactic and simple on purpose: `SELECT count(*) FROM t` and `SELECT 1` are
    /// unbounded too. Forms that do not cap the row count are
    /// unbounded: `OFFSET` alone, `LIMIT ALL`, `LIMIT NULL`, `LIMIT -1`, `LIMIT n BY x`
    /// (per group), `TOP n PERCENT`, `FETCH FIRST n PERCENT`. The value itself is not judged:
    /// `LIMIT 1000000000` or `LIMIT $1` bound the query; use a regex condition for a maximum.
    pub unbounded_select: bool,
    /// The statement has a `WHERE` clause: for `UPDATE` and `DELETE` their own, for
    /// `SELECT` the outermost plain `SELECT`'s (not one of a `UNION`); `false` for the
    /// other kinds. Any `WHERE` counts, even `WHERE 1=1` or `WHERE true`: rules that
    /// need more should add a regex condition.
    pub has_where: bool,
}

/// Facts about a SQL string: one entry per top-level statement, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct SqlFacts {
    /// The statements, in the order they appear.
    pub statements: Vec<StatementFacts>,
}

impl SqlFacts {
    /// The kind of each statement, in order (repeats included).
    pub fn kinds(&self) -> impl Iterator<Item = StatementKind> + '_ {
        self.statements.iter().map(|s| s.kind)
    }

    /// Some statement is of `kind`.
    #[must_use]
    pub fn has_kind(&self, kind: StatementKind) -> bool {
        self.kinds().any(|k| k == kind)
    }

    /// Some top-level `SELECT` is unbounded (see [`StatementFacts::unbounded_select`]).
    #[must_use]
    pub fn select_without_limit(&self) -> bool {
        self.statements.iter().any(|s| s.kind == StatementKind::Select && s.unbounded_select)
    }

    /// Some `UPDATE` has no `WHERE` clause.
    #[must_use]
    pub fn update_without_where(&self) -> bool {
        self.statements.iter().any(|s| s.kind == StatementKind::Update && !s.has_where)
    }

    /// Some `DELETE` has no `WHERE` clause.
    #[must_use]
    pub fn delete_without_where(&self) -> bool {
        self.statements.iter().any(|s| s.kind == StatementKind::Delete && !s.has_where)
    }

    /// There is more than one statement (e.g. `SELECT 1; DROP TABLE x`).
    #[must_use]
    pub fn multiple_statements(&self) -> bool {
        self.statements.len() > 1
    }
}
