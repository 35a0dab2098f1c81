//! The SQL dialects Warden can parse, and their names in policy configs.

use std::fmt;
use std::str::FromStr;

use sqlparser::dialect as sp;

use crate::error::UnknownName;

/// A SQL dialect: decides which syntax the parser accepts.
///
/// Names for configs ([`FromStr`], case-insensitive): `generic`, `postgres`
/// (`postgresql`, `pg`), `mysql`, `sqlite`, `mssql` (`sqlserver`, `tsql`),
/// `snowflake`, `bigquery`, `duckdb`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Dialect {
    /// Permissive mix of common syntax; the default.
    #[default]
    Generic,
    /// PostgreSQL.
    Postgres,
    /// MySQL (and MariaDB for common syntax).
    MySql,
    /// SQLite.
    Sqlite,
    /// Microsoft SQL Server (T-SQL).
    MsSql,
    /// Snowflake.
    Snowflake,
    /// Google BigQuery.
    BigQuery,
    /// DuckDB.
    DuckDb,
}

/// Accepted names, as listed in [`UnknownName`] errors.
const VALID: &str =
    "generic, postgres (postgresql, pg), mysql, sqlite, mssql (sqlserver, tsql), snowflake, bigquery, duckdb";

impl Dialect {
    /// Every dialect, in declaration order.
    pub const ALL: [Dialect; 8] = [
        Dialect::Generic,
        Dialect::Postgres,
        Dialect::MySql,
        Dialect::Sqlite,
        Dialect::MsSql,
        Dialect::Snowflake,
        Dialect::BigQuery,
        Dialect::DuckDb,
    ];

    /// The canonical config name, lower case (e.g. `"postgres"`).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::Generic => "generic",
            Dialect::Postgres => "postgres",
            Dialect::MySql => "mysql",
            Dialect::Sqlite => "sqlite",
            Dialect::MsSql => "mssql",
            Dialect::Snowflake => "snowflake",
            Dialect::BigQuery => "bigquery",
            Dialect::DuckDb => "duckdb",
        }
    }

    /// The sqlparser dialect that implements this one.
    pub(crate) fn parser_dialect(self) -> &'static dyn sp::Dialect {
        match self {
            Dialect::Generic => &sp::GenericDialect,
            Dialect::Postgres => &sp::PostgreSqlDialect {},
            Dialect::MySql => &sp::MySqlDialect {},
            Dialect::Sqlite => &sp::SQLiteDialect {},
            Dialect::MsSql => &sp::MsSqlDialect {},
            Dialect::Snowflake => &sp::SnowflakeDialect,
            Dialect::BigQuery => &sp::BigQueryDialect,
            Dialect::DuckDb => &sp::DuckDbDialect,
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Dialect {
    type Err = UnknownName;

    /// Parses a dialect name, ignoring case and surrounding whitespace.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let dialect = match s.trim().to_ascii_lowercase().as_str() {
            "generic" => Dialect::Generic,
            "postgres" | "postgresql" | "pg" => Dialect::Postgres,
            "mysql" => Dialect::MySql,
            "sqlite" => Dialect::Sqlite,
            "mssql" | "sqlserver" | "tsql" => Dialect::MsSql,
            "snowflake" => Dialect::Snowflake,
            "bigquery" => Dialect::BigQuery,
            "duckdb" => Dialect::DuckDb,
            _ => return Err(UnknownName { what: "dialect", name: s.to_owned(), valid: VALID }),
        };
        Ok(dialect)
    }
}
