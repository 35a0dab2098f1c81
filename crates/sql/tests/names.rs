//! Dialect and statement kind names, as used in policy configs.

use warden_sql::{Dialect, StatementKind, UnknownName};

#[test]
fn dialect_names() {
    let cases = [
        ("generic", Dialect::Generic),
        ("postgres", Dialect::Postgres),
        ("PostgreSQL", Dialect::Postgres),
        ("pg", Dialect::Postgres),
        ("mysql", Dialect::MySql),
        ("MySQL", Dialect::MySql),
        ("sqlite", Dialect::Sqlite),
        ("mssql", Dialect::MsSql),
        ("SqlServer", Dialect::MsSql),
        ("tsql", Dialect::MsSql),
        ("snowflake", Dialect::Snowflake),
        ("BigQuery", Dialect::BigQuery),
        ("duckdb", Dialect::DuckDb),
        ("  postgres \n", Dialect::Postgres),
    ];
    for (name, dialect) in cases {
        assert_eq!(name.parse::<Dialect>(), Ok(dialect), "{name:?}");
    }
    for dialect in Dialect::ALL {
        assert_eq!(dialect.as_str().parse::<Dialect>(), Ok(dialect));
        assert_eq!(dialect.to_string(), dialect.as_str());
    }
    assert_eq!(Dialect::default(), Dialect::Generic);
}

#[test]
fn unknown_dialect_lists_the_valid_names() {
    for name in ["", "oracle", "postgres9", "my sql"] {
        let err = name.parse::<Dialect>().err();
        let Some(UnknownName { what, name: got, valid }) = err.clone() else { panic!("{name:?} parsed") };
        assert_eq!((what, got.as_str()), ("dialect", name));
        for dialect in Dialect::ALL {
            assert!(valid.contains(dialect.as_str()), "{valid}");
        }
        let message = err.map(|e| e.to_string()).unwrap_or_default();
        assert!(message.contains("unknown SQL dialect") && message.contains("mssql (sqlserver, tsql)"), "{message}");
    }
}

#[test]
fn statement_kind_names() {
    for kind in StatementKind::ALL {
        let name = kind.as_str();
        assert_eq!(name, name.to_ascii_uppercase());
        assert_eq!(kind.to_string(), name);
        assert_eq!(name.parse::<StatementKind>(), Ok(kind));
        assert_eq!(name.to_ascii_lowercase().parse::<StatementKind>(), Ok(kind));
        assert_eq!(format!(" {name} ").parse::<StatementKind>(), Ok(kind));
    }
    assert_eq!("Select".parse::<StatementKind>(), Ok(StatementKind::Select));
    assert_eq!(StatementKind::Truncate.as_str(), "TRUNCATE");
}

#[test]
fn unknown_statement_kind_lists_the_valid_names() {
    let err = "upsert".parse::<StatementKind>().err();
    let message = err.as_ref().map(ToString::to_string).unwrap_or_default();
    assert_eq!(err.map(|e| (e.what, e.name)), Some(("statement kind", "upsert".to_owned())));
    assert!(message.contains("SELECT, INSERT, UPDATE") && message.contains("OTHER"), "{message}");
    assert!("".parse::<StatementKind>().is_err());
    assert!("SELECT;".parse::<StatementKind>().is_err());
}
