//! SQL conditions (Sentinel's database rules, made SQL-aware).

mod common;

use common::{engine, expect, js};
use warden_policy::{Decision, PolicyEngine};

fn database() -> PolicyEngine {
    engine(
        r#"
policy:
  rules:
    - name: block-unbounded-select
      description: Block SELECT * without LIMIT (Sentinel's example)
      if: {tool: ["*query*"], args: {arg: sql, sql: {selectWithoutLimit: true, dialect: postgres}}}
      then: deny
    - name: destructive-needs-approval
      if:
        tool: ["*query*"]
        args: {arg: sql, sql: {kinds: [drop, TRUNCATE], deleteWithoutWhere: true, updateWithoutWhere: true, dialect: postgres}}
      then: escalate
      reason: destructive statement
    - name: one-statement-at-a-time
      if: {tool: ["*query*"], args: {arg: sql, sql: {multipleStatements: true}}}
      then: deny
"#,
    )
}

fn sql(text: &str) -> String {
    format!(r#"{{"sql": {}}}"#, js(text))
}

#[test]
fn select_without_limit_is_blocked() {
    let engine = database();
    let evaluation =
        expect(&engine, "db", "run_query", &sql("SELECT * FROM users"), Decision::Deny, "block-unbounded-select");
    assert_eq!(evaluation.reason, "Block SELECT * without LIMIT (Sentinel's example)");
    expect(
        &engine,
        "db",
        "run_query",
        &sql("select id from users where x = 1"),
        Decision::Deny,
        "block-unbounded-select",
    );
    // A LIMIT hidden in a comment or a string does not count, unlike a text match.
    expect(&engine, "db", "run_query", &sql("SELECT * FROM t -- LIMIT 5"), Decision::Deny, "block-unbounded-select");
    expect(&engine, "db", "run_query", &sql("SELECT 'LIMIT 5' FROM t"), Decision::Deny, "block-unbounded-select");
    expect(&engine, "db", "run_query", &sql("SELECT * FROM users LIMIT 10"), Decision::Allow, "default");
    // Other tools are not concerned.
    expect(&engine, "db", "describe", &sql("SELECT * FROM users"), Decision::Allow, "default");
}

#[test]
fn destructive_statements_escalate() {
    let engine = database();
    expect(&engine, "db", "query", &sql("DELETE FROM logs"), Decision::Escalate, "destructive-needs-approval");
    expect(
        &engine,
        "db",
        "query",
        &sql("UPDATE users SET admin = true"),
        Decision::Escalate,
        "destructive-needs-approval",
    );
    expect(&engine, "db", "query", &sql("DROP TABLE users"), Decision::Escalate, "destructive-needs-approval");
    expect(&engine, "db", "query", &sql("truncate logs"), Decision::Escalate, "destructive-needs-approval");
    expect(&engine, "db", "query", &sql("DELETE FROM logs WHERE id = 1"), Decision::Allow, "default");
    expect(&engine, "db", "query", &sql("UPDATE users SET a = 1 WHERE id = 2"), Decision::Allow, "default");
    expect(&engine, "db", "query", &sql("INSERT INTO t VALUES (1)"), Decision::Allow, "default");
}

#[test]
fn several_statements_are_judged_together() {
    let engine = database();
    // The first deciding rule in order wins: the DROP escalates before the count denies.
    expect(
        &engine,
        "db",
        "query",
        &sql("SELECT 1 LIMIT 1; DROP TABLE users"),
        Decision::Escalate,
        "destructive-needs-approval",
    );
    expect(
        &engine,
        "db",
        "query",
        &sql("SELECT 1 LIMIT 1; SELECT 2 LIMIT 1"),
        Decision::Deny,
        "one-statement-at-a-time",
    );
}

#[test]
fn what_does_not_parse_is_suspicious() {
    let engine = database();
    for text in ["SELEC * FROM users", "", "   ", "DROP TABLE 'unterminated", ";;"] {
        expect(&engine, "db", "query", &sql(text), Decision::Deny, "block-unbounded-select");
    }
    // A value that is not a string cannot be analysed either.
    expect(&engine, "db", "query", r#"{"sql": ["DROP TABLE users"]}"#, Decision::Deny, "block-unbounded-select");
    expect(&engine, "db", "query", r#"{"sql": 5}"#, Decision::Deny, "block-unbounded-select");
    // An absent argument is not SQL.
    expect(&engine, "db", "query", "{}", Decision::Allow, "default");
    expect(&engine, "db", "query", r#"{"sql": null}"#, Decision::Allow, "default");
}

#[test]
fn an_sql_role_can_be_combined_with_role_rules() {
    let engine = engine(
        r#"
policy:
  default: deny
  annotations:
    db: {query: {sideEffects: true, args: {sql: [sql]}}}
  rules:
    - name: bounded-reads
      if: {roles: [sql], args: {not: {arg: sql, sql: {selectWithoutLimit: true, kinds: [INSERT, UPDATE, DELETE, DROP, ALTER, CREATE, TRUNCATE, GRANT, REVOKE, MERGE, OTHER]}}}}
      then: allow
"#,
    );
    expect(&engine, "db", "query", &sql("SELECT a FROM t LIMIT 3"), Decision::Allow, "bounded-reads");
    expect(&engine, "db", "query", &sql("SELECT a FROM t"), Decision::Deny, "default");
    expect(&engine, "db", "query", &sql("nonsense"), Decision::Deny, "default");
    expect(&engine, "db", "query", &sql("GRANT ALL ON t TO bob"), Decision::Deny, "default");
}
