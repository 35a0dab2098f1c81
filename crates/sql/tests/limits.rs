//! Which SELECTs are unbounded.

use warden_sql::{Dialect, StatementKind, analyze};

use Dialect::{BigQuery, Generic, MsSql, MySql, Postgres, Snowflake, Sqlite};

/// `(dialect, sql, unbounded)`: each `sql` is one query statement.
const CASES: &[(Dialect, &str, bool)] = &[
    // No limit at all.
    (Generic, "SELECT * FROM t", true),
    (Generic, "SELECT * FROM t WHERE a = 1 ORDER BY b", true),
    (Generic, "SELECT 1", true),
    (Generic, "SELECT count(*) FROM t", true),
    (Generic, "SELECT a, count(*) FROM t GROUP BY a", true),
    (Postgres, "SELECT * FROM t FOR UPDATE", true),
    // LIMIT.
    (Generic, "SELECT * FROM t LIMIT 10", false),
    (Generic, "SELECT * FROM t ORDER BY a LIMIT 10", false),
    (Generic, "SELECT * FROM t LIMIT 10 OFFSET 5", false),
    (Postgres, "SELECT * FROM t OFFSET 5 LIMIT 10", false),
    (Postgres, "SELECT * FROM t LIMIT $1", false),
    (Postgres, "SELECT * FROM t LIMIT 1000000000", false),
    (Postgres, "SELECT * FROM t LIMIT (SELECT 5)", false),
    (MySql, "SELECT * FROM t LIMIT 5, 10", false),
    (Sqlite, "SELECT * FROM t LIMIT 10 OFFSET 20", false),
    // Forms that do not cap rows.
    (Generic, "SELECT * FROM t OFFSET 5", true),
    (Postgres, "SELECT * FROM t OFFSET 5 ROWS", true),
    (Postgres, "SELECT * FROM t LIMIT ALL", true),
    (Postgres, "SELECT * FROM t LIMIT ALL OFFSET 5", true),
    (Postgres, "SELECT * FROM t LIMIT NULL", true),
    (Postgres, "SELECT * FROM t LIMIT (NULL)", true),
    (Sqlite, "SELECT * FROM t LIMIT -1", true),
    (Sqlite, "SELECT * FROM t LIMIT -1 OFFSET 5", true),
    (Generic, "SELECT * FROM t LIMIT 5 BY a", true),
    // FETCH FIRST.
    (Postgres, "SELECT * FROM t FETCH FIRST 10 ROWS ONLY", false),
    (Postgres, "SELECT * FROM t FETCH FIRST ROW ONLY", false),
    (Postgres, "SELECT * FROM t ORDER BY a FETCH NEXT 3 ROWS WITH TIES", false),
    (MsSql, "SELECT * FROM t ORDER BY a OFFSET 10 ROWS FETCH NEXT 5 ROWS ONLY", false),
    (MsSql, "SELECT * FROM t ORDER BY a OFFSET 10 ROWS", true),
    (Generic, "SELECT * FROM t FETCH FIRST 50 PERCENT ROWS ONLY", true),
    // TOP.
    (MsSql, "SELECT TOP 10 * FROM t", false),
    (MsSql, "SELECT TOP (5) * FROM t", false),
    (MsSql, "SELECT TOP 5 WITH TIES * FROM t ORDER BY a", false),
    (MsSql, "SELECT TOP 10 PERCENT * FROM t", true),
    (MsSql, "SELECT * FROM (SELECT TOP 5 * FROM t) s", true),
    (MsSql, "SELECT TOP 5 a FROM t UNION SELECT a FROM u", true),
    (Snowflake, "SELECT TOP 10 * FROM t", false),
    // Subqueries do not bound the outer query.
    (Generic, "SELECT * FROM (SELECT * FROM t LIMIT 5) s", true),
    (Generic, "SELECT * FROM t WHERE id IN (SELECT id FROM u LIMIT 5)", true),
    (Generic, "SELECT (SELECT a FROM u LIMIT 1) FROM t", true),
    (Generic, "SELECT * FROM (SELECT * FROM t) s LIMIT 5", false),
    (Generic, "SELECT * FROM (SELECT * FROM t LIMIT 50) s LIMIT 5", false),
    // A parenthesized query is the query itself.
    (Generic, "(SELECT * FROM t LIMIT 5)", false),
    (Generic, "((SELECT * FROM t LIMIT 5))", false),
    (Generic, "(SELECT * FROM t) LIMIT 5", false),
    (Generic, "(SELECT * FROM t LIMIT 5) ORDER BY a", false),
    (Generic, "(SELECT * FROM t)", true),
    // Set operations: only a limit on the whole counts.
    (Generic, "SELECT a FROM t UNION SELECT a FROM u", true),
    (Generic, "SELECT a FROM t UNION ALL SELECT a FROM u LIMIT 10", false),
    (Generic, "SELECT a FROM t UNION (SELECT a FROM u LIMIT 10)", true),
    (Generic, "(SELECT a FROM t LIMIT 10) UNION (SELECT a FROM u LIMIT 10)", true),
    (Generic, "(SELECT a FROM t LIMIT 10) UNION (SELECT a FROM u LIMIT 10) LIMIT 20", false),
    (Postgres, "SELECT a FROM t EXCEPT SELECT a FROM u", true),
    (Postgres, "SELECT a FROM t INTERSECT SELECT a FROM u LIMIT 3", false),
    // CTEs: a limit inside does not count, one outside does.
    (Generic, "WITH x AS (SELECT * FROM t LIMIT 5) SELECT * FROM x", true),
    (Generic, "WITH x AS (SELECT * FROM t) SELECT * FROM x LIMIT 5", false),
    (Postgres, "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n FROM r", true),
    (Postgres, "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n FROM r LIMIT 100", false),
    (Generic, "WITH x AS (SELECT 1) SELECT * FROM x UNION SELECT * FROM x LIMIT 2", false),
    // BigQuery pipe syntax: bounded when the last operator is LIMIT.
    (BigQuery, "FROM t |> WHERE a > 1 |> LIMIT 10", false),
    (BigQuery, "FROM t |> WHERE a > 1", true),
    (BigQuery, "FROM t |> LIMIT 10 |> WHERE a > 1", true),
];

#[test]
fn unbounded_selects() {
    for (dialect, sql, unbounded) in CASES {
        let facts = match analyze(sql, *dialect) {
            Ok(facts) => facts,
            Err(e) => panic!("{dialect}: {sql:?} did not parse: {e}"),
        };
        assert_eq!(facts.statements.len(), 1, "{sql:?}");
        let statement = facts.statements[0];
        assert_eq!(statement.kind, StatementKind::Select, "{dialect}: {sql:?}");
        assert_eq!(statement.unbounded_select, *unbounded, "{dialect}: {sql:?}");
        assert_eq!(facts.select_without_limit(), *unbounded, "{dialect}: {sql:?}");
    }
}

#[test]
fn only_selects_are_unbounded() {
    for sql in [
        "INSERT INTO t SELECT * FROM u",
        "CREATE TABLE t2 AS SELECT * FROM t",
        "CREATE VIEW v AS SELECT * FROM t",
        "EXPLAIN SELECT * FROM t",
        "DELETE FROM t WHERE id IN (SELECT id FROM u)",
    ] {
        let facts = analyze(sql, Generic).map_err(|e| format!("{sql:?}: {e}"));
        assert_eq!(facts.map(|f| f.select_without_limit()), Ok(false), "{sql:?}");
    }
}

#[test]
fn any_unbounded_statement_counts() {
    let facts = analyze("SELECT * FROM t LIMIT 1; SELECT * FROM u", Generic).map_err(|e| e.to_string());
    assert_eq!(facts.map(|f| f.select_without_limit()), Ok(true));
    let facts = analyze("SELECT * FROM t LIMIT 1; SELECT * FROM u LIMIT 2", Generic).map_err(|e| e.to_string());
    assert_eq!(facts.map(|f| f.select_without_limit()), Ok(false));
}

#[test]
fn select_where_is_the_outer_one() {
    let cases = [
        ("SELECT * FROM t WHERE a = 1", true),
        ("SELECT * FROM t", false),
        ("SELECT * FROM (SELECT * FROM t WHERE a = 1) s", false),
        ("(SELECT * FROM t WHERE a = 1)", true),
        ("SELECT a FROM t WHERE a = 1 UNION SELECT a FROM u WHERE a = 2", false),
    ];
    for (sql, has_where) in cases {
        let facts = analyze(sql, Generic).map_err(|e| format!("{sql:?}: {e}"));
        assert_eq!(facts.map(|f| f.statements[0].has_where), Ok(has_where), "{sql:?}");
    }
}
