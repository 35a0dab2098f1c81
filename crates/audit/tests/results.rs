//! What tools answered, in the log: redacted like the arguments, cut to a
//! size with the digest of the whole, or not recorded at all.

mod common;

use common::{Req, TempDir, json, lines, record};
use serde_json::Value;
use warden_audit::{AuditLog, AuditSettings, arguments_digest, verify};
use warden_pipeline::Outcome;

const KEY: &str = "sk-ant-api03-abcDEF123-ghiJKL456_mnoPQR789-stuVWX012yz";

async fn recorded(settings: AuditSettings, reqs: &[Req<'_>]) -> Vec<Value> {
    let path = settings.path.clone();
    let log = AuditLog::open(settings).expect("open");
    for req in reqs {
        record(&log, req).await.expect("record");
    }
    drop(log);
    assert!(verify(&path).expect("verify").first_broken.is_none(), "the chain covers the results");
    lines(&path).iter().map(|line| json(line)).collect()
}

fn answered<'a>(result: &'a str) -> Req<'a> {
    Req { result: Some(result), ..Req::allow("files", "read", Some(r#"{"path":"/srv/a"}"#)) }
}

#[tokio::test]
async fn a_result_is_recorded_redacted_with_the_digest_of_what_was_sent() {
    let dir = TempDir::new("results-redacted");
    let result = format!(r#"{{"content":[{{"type":"text","text":"token {KEY}"}}],"isError":false}}"#);
    let error = r#"{"code":-32000,"message":"disk on fire"}"#;
    let mut failed = answered(error);
    failed.outcome = Outcome::Error;
    let records = recorded(AuditSettings::new(dir.join("audit.jsonl")), &[answered(&result), failed]).await;

    let text = records[0].to_string();
    assert!(!text.contains(KEY), "{text}");
    assert_eq!(records[0]["result"]["content"][0]["text"], "token [REDACTED:api-key]");
    assert_eq!(records[0]["result"]["isError"], false);
    // The digest is of the answer before redaction, canonical as arguments'.
    assert_eq!(records[0]["resultDigest"], arguments_digest(Some(&result)));
    assert!(records[0].get("resultBytes").is_none(), "not cut: {text}");
    assert_eq!(records[1]["result"], serde_json::json!({"code": -32000, "message": "disk on fire"}));
    assert_eq!(records[1]["outcome"], "error");
}

#[tokio::test]
async fn a_long_result_is_cut_at_a_character_boundary_after_redaction() {
    let dir = TempDir::new("results-cut");
    // A secret placed across the cut is masked whole before cutting, and
    // multi-byte text is cut between characters.
    let long = format!(r#"{{"content":[{{"type":"text","text":"{} {KEY} {}"}}]}}"#, "é".repeat(20), "x".repeat(400));
    let settings = AuditSettings { result_max_bytes: 64, ..AuditSettings::new(dir.join("audit.jsonl")) };
    let records = recorded(settings, &[answered(&long)]).await;

    let cut = records[0]["result"].as_str().expect("a cut result is the start of its text");
    assert!(cut.len() <= 64 && cut.starts_with(r#"{"content":[{"text":"éé"#), "{cut}");
    assert!(!cut.contains("sk-ant"), "no part of the key is left: {cut}");
    assert_eq!(records[0]["resultBytes"], long.len() as u64);
    assert_eq!(records[0]["resultDigest"], arguments_digest(Some(&long)));
}

#[tokio::test]
async fn results_can_be_left_out_and_other_answers_never_carry_one() {
    let dir = TempDir::new("results-off");
    let settings = AuditSettings { results: false, ..AuditSettings::new(dir.join("audit.jsonl")) };
    let records = recorded(settings, &[answered(r#"{"content":[]}"#)]).await;
    assert!(records[0].get("result").is_none() && records[0].get("resultDigest").is_none(), "{}", records[0]);

    let dir = TempDir::new("results-none");
    let records = recorded(AuditSettings::new(dir.join("audit.jsonl")), &[Req::allow("files", "read", None)]).await;
    assert!(records[0].get("result").is_none(), "{}", records[0]);
}

#[tokio::test]
async fn a_result_that_is_not_json_is_kept_as_redacted_text() {
    let dir = TempDir::new("results-text");
    let raw = format!("not json {KEY}");
    let records = recorded(AuditSettings::new(dir.join("audit.jsonl")), &[answered(&raw)]).await;
    assert_eq!(records[0]["result"], "not json [REDACTED:api-key]");
    assert_eq!(records[0]["resultDigest"], warden_audit::sha256_hex(raw.as_bytes()));
}
