//! Statement kinds, WHERE clauses and multiple statements.

use warden_sql::{Dialect, SqlFacts, StatementFacts, StatementKind, analyze};

use Dialect::{Generic, MsSql, MySql, Postgres, Snowflake};
use StatementKind::*;

/// A statement's expected facts: kind, unbounded SELECT, has WHERE.
fn st(kind: StatementKind, unbounded_select: bool, has_where: bool) -> StatementFacts {
    StatementFacts { kind, unbounded_select, has_where }
}

fn facts(sql: &str, dialect: Dialect) -> SqlFacts {
    match analyze(sql, dialect) {
        Ok(facts) => facts,
        Err(e) => panic!("{dialect}: {sql:?} did not parse: {e}"),
    }
}

fn check_single(cases: &[(Dialect, &str, StatementFacts)]) {
    for (dialect, sql, expected) in cases {
        let got = facts(sql, *dialect);
        assert_eq!(got.statements, vec![*expected], "{dialect}: {sql:?}");
    }
}

#[test]
fn each_kind() {
    check_single(&[
        (Generic, "SELECT * FROM t", st(Select, true, false)),
        (Generic, "INSERT INTO t (a) VALUES (1)", st(Insert, false, false)),
        (Generic, "INSERT INTO t SELECT * FROM u", st(Insert, false, false)),
        (MySql, "REPLACE INTO t VALUES (1)", st(Insert, false, false)),
        (Generic, "UPDATE t SET a = 1 WHERE id = 2", st(Update, false, true)),
        (Generic, "DELETE FROM t WHERE id = 1", st(Delete, false, true)),
        (
            Generic,
            "MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET a = s.a \
             WHEN NOT MATCHED THEN INSERT (id) VALUES (s.id)",
            st(Merge, false, false),
        ),
        (Generic, "DROP TABLE users", st(Drop, false, false)),
        (Postgres, "DROP VIEW IF EXISTS v CASCADE", st(Drop, false, false)),
        (Postgres, "DROP INDEX i", st(Drop, false, false)),
        (Postgres, "DROP SCHEMA s CASCADE", st(Drop, false, false)),
        (Postgres, "DROP FUNCTION f(integer)", st(Drop, false, false)),
        (Generic, "ALTER TABLE t ADD COLUMN c INT", st(Alter, false, false)),
        (Postgres, "ALTER INDEX i RENAME TO j", st(Alter, false, false)),
        (MySql, "RENAME TABLE a TO b", st(Alter, false, false)),
        (Generic, "CREATE TABLE t (id INT PRIMARY KEY)", st(Create, false, false)),
        (Generic, "CREATE VIEW v AS SELECT * FROM t", st(Create, false, false)),
        (Generic, "CREATE INDEX i ON t (a)", st(Create, false, false)),
        (Generic, "CREATE TABLE t2 AS SELECT * FROM t", st(Create, false, false)),
        (Postgres, "CREATE SCHEMA s", st(Create, false, false)),
        (MySql, "CREATE DATABASE d", st(Create, false, false)),
        (Generic, "TRUNCATE TABLE t", st(Truncate, false, false)),
        (Postgres, "TRUNCATE t", st(Truncate, false, false)),
        (Generic, "GRANT SELECT ON t TO alice", st(Grant, false, false)),
        (Generic, "REVOKE SELECT ON t FROM alice", st(Revoke, false, false)),
    ]);
}

#[test]
fn other_kinds() {
    check_single(&[
        (Generic, "EXPLAIN SELECT * FROM t", st(Other, false, false)),
        (Postgres, "EXPLAIN ANALYZE DELETE FROM t", st(Other, false, false)),
        (MySql, "SHOW TABLES", st(Other, false, false)),
        (MySql, "USE db", st(Other, false, false)),
        (Postgres, "SET search_path = public", st(Other, false, false)),
        (Generic, "BEGIN", st(Other, false, false)),
        (Generic, "START TRANSACTION", st(Other, false, false)),
        (Generic, "COMMIT", st(Other, false, false)),
        (Generic, "ROLLBACK", st(Other, false, false)),
        (Postgres, "COPY t TO STDOUT", st(Other, false, false)),
        (Postgres, "CALL p(1)", st(Other, false, false)),
    ]);
}

#[test]
fn with_clauses_take_the_kind_of_their_body() {
    check_single(&[
        (Generic, "WITH x AS (SELECT 1) SELECT * FROM x", st(Select, true, false)),
        (Postgres, "WITH x AS (SELECT * FROM t) SELECT * FROM x WHERE a > 1", st(Select, true, true)),
        (
            Postgres,
            "WITH old AS (SELECT id FROM t WHERE ts < now()) DELETE FROM t WHERE id IN (SELECT id FROM old)",
            st(Delete, false, true),
        ),
        (Postgres, "WITH old AS (SELECT id FROM t) DELETE FROM t", st(Delete, false, false)),
        (Postgres, "WITH x AS (SELECT 1 AS a) UPDATE t SET a = 1", st(Update, false, false)),
        (Postgres, "WITH x AS (SELECT 1 AS a) INSERT INTO t SELECT a FROM x", st(Insert, false, false)),
    ]);
}

#[test]
fn select_into_creates_a_table() {
    check_single(&[
        (Postgres, "SELECT * INTO new_t FROM t", st(Create, false, false)),
        (MsSql, "SELECT * INTO new_t FROM t", st(Create, false, false)),
        (Postgres, "SELECT a INTO TEMPORARY x FROM t UNION SELECT a FROM u", st(Create, false, false)),
        (Postgres, "WITH c AS (SELECT 1 AS a) SELECT a INTO x FROM c", st(Create, false, false)),
    ]);
}

#[test]
fn values_is_a_query() {
    check_single(&[
        (Generic, "VALUES (1), (2)", st(Select, true, false)),
        (Postgres, "VALUES (1), (2) LIMIT 1", st(Select, false, false)),
    ]);
}

#[test]
fn update_and_delete_where() {
    let cases = [
        (Generic, "UPDATE t SET a = 1", false),
        (Generic, "UPDATE t SET a = 1 WHERE id = 2", true),
        (Generic, "UPDATE t SET a = 1 WHERE 1=1", true),
        (Postgres, "UPDATE t SET a = 1 WHERE true", true),
        (Postgres, "UPDATE t SET a = u.a FROM u WHERE t.id = u.id", true),
        (Postgres, "UPDATE t SET a = u.a FROM u", false),
        (MySql, "UPDATE t JOIN u ON t.id = u.id SET t.a = u.a", false),
        (Generic, "DELETE FROM t", false),
        (Generic, "DELETE FROM t WHERE id = 1", true),
        (Generic, "DELETE FROM t WHERE 1=1", true),
        (Postgres, "DELETE FROM t USING u WHERE t.id = u.id", true),
        (Postgres, "DELETE FROM t USING u", false),
        (MySql, "DELETE FROM t LIMIT 10", false),
    ];
    for (dialect, sql, has_where) in cases {
        let got = facts(sql, dialect);
        assert_eq!(got.statements.len(), 1, "{sql:?}");
        assert_eq!(got.statements[0].has_where, has_where, "{dialect}: {sql:?}");
        let is_update = got.has_kind(Update);
        assert_eq!(got.update_without_where(), is_update && !has_where, "{sql:?}");
        assert_eq!(got.delete_without_where(), !is_update && !has_where, "{sql:?}");
        assert!(!got.select_without_limit(), "{sql:?}");
    }
}

#[test]
fn dialect_specific_syntax() {
    check_single(&[
        (Postgres, "DELETE FROM t WHERE id = 1 RETURNING *", st(Delete, false, true)),
        (Postgres, "DELETE FROM t RETURNING id", st(Delete, false, false)),
        (Postgres, "UPDATE t SET a = 1 RETURNING *", st(Update, false, false)),
        (Postgres, "INSERT INTO t (a) VALUES (1) RETURNING id", st(Insert, false, false)),
        (Postgres, "INSERT INTO t (a) VALUES (1) ON CONFLICT (a) DO NOTHING", st(Insert, false, false)),
        (Postgres, "SELECT $1::int, data->>'name' FROM t WHERE id = $2", st(Select, true, true)),
        (MySql, "SELECT `id`, `name` FROM `users` WHERE `id` = 1 LIMIT 5", st(Select, false, true)),
        (MySql, "DELETE FROM `users` WHERE `id` = 1", st(Delete, false, true)),
        (MySql, "INSERT INTO t (a) VALUES (1) ON DUPLICATE KEY UPDATE a = 2", st(Insert, false, false)),
        (MsSql, "SELECT [id] FROM [dbo].[users]", st(Select, true, false)),
        (Snowflake, "SELECT * FROM db.schema.t LIMIT 10", st(Select, false, false)),
        (Dialect::BigQuery, "SELECT * FROM `project.dataset.table` LIMIT 10", st(Select, false, false)),
        (Dialect::DuckDb, "FROM t", st(Select, true, false)),
        (Dialect::Sqlite, "INSERT OR REPLACE INTO t (a) VALUES (1)", st(Insert, false, false)),
    ]);
    // Backticks are MySQL (and BigQuery) syntax: PostgreSQL rejects them.
    assert!(analyze("SELECT `id` FROM users", Postgres).is_err());
}

#[test]
fn multiple_statements() {
    let cases: &[(&str, &[StatementKind])] = &[
        ("SELECT 1", &[Select]),
        ("SELECT 1;", &[Select]),
        ("SELECT 1; DROP TABLE x", &[Select, Drop]),
        ("SELECT 1;DROP TABLE x;", &[Select, Drop]),
        ("SELECT 1 -- \n; DROP TABLE users", &[Select, Drop]),
        ("SELECT 1 /* ; */ ; DELETE FROM t", &[Select, Delete]),
        ("SELECT 1; -- DROP TABLE x", &[Select]),
        ("SELECT 1 /* ; DROP TABLE x */", &[Select]),
        ("SELECT ';DROP TABLE x'", &[Select]),
        ("/* hi */ DELETE FROM t -- bye", &[Delete]),
        ("UPDATE t SET a = 1; UPDATE t SET b = 2 WHERE id = 1; COMMIT", &[Update, Update, Other]),
        ("BEGIN; DELETE FROM t; COMMIT;", &[Other, Delete, Other]),
    ];
    for (sql, kinds) in cases {
        let got = facts(sql, Generic);
        assert_eq!(got.kinds().collect::<Vec<_>>(), kinds.to_vec(), "{sql:?}");
        assert_eq!(got.multiple_statements(), kinds.len() > 1, "{sql:?}");
        for kind in StatementKind::ALL {
            assert_eq!(got.has_kind(kind), kinds.contains(&kind), "{sql:?} {kind}");
        }
    }
    let got = facts("UPDATE t SET a = 1; UPDATE t SET b = 2 WHERE id = 1", Generic);
    assert!(got.update_without_where());
    let got = facts("UPDATE t SET b = 2 WHERE id = 1; UPDATE t SET a = 1 WHERE id = 3", Generic);
    assert!(!got.update_without_where());
}

#[test]
fn case_and_whitespace_do_not_matter() {
    let variants = [
        "delete from t",
        "DELETE FROM t",
        "DeLeTe FrOm t",
        "  \n\t delete\n\tfrom\n t  \n",
        "delete from t;",
        "\r\ndelete\r\nfrom t\r\n",
        "-- comment\ndelete /* c */ from t",
    ];
    for sql in variants {
        assert_eq!(facts(sql, Generic).statements, vec![st(Delete, false, false)], "{sql:?}");
    }
    let variants = ["select * from t limit 5", "SELECT *\nFROM t\nLIMIT\n5", "SeLeCt * FrOm t LiMiT 5  ;  "];
    for sql in variants {
        assert_eq!(facts(sql, Postgres).statements, vec![st(Select, false, false)], "{sql:?}");
    }
}

#[test]
fn facts_helpers_on_empty_facts() {
    let empty = SqlFacts::default();
    assert_eq!(empty.kinds().count(), 0);
    assert!(!empty.has_kind(Select));
    assert!(!empty.select_without_limit());
    assert!(!empty.update_without_where());
    assert!(!empty.delete_without_where());
    assert!(!empty.multiple_statements());
}
