//! What a record costs on the call path: parsing the arguments, redacting
//! them and serialising the record, as `AuditLog::record` does before it
//! hands the record to the writer thread; and, for comparison, the SHA-256
//! the writer computes per line.
//!
//! Run with `cargo run --release -p warden-audit --example record_cost`.
//! Prints p50 / p99 in microseconds over 100,000 records per case.

use std::hint::black_box;
use std::time::{Duration, Instant};

use serde_json::Value;
use warden_audit::{AuditRecord, redact_text, redact_value, sha256_hex};

const RECORDS: usize = 100_000;

/// A record as the writer receives it, before the call's own fields are
/// filled in (built from JSON, so that fields added later take their
/// defaults).
fn template() -> AuditRecord {
    serde_json::from_value(serde_json::json!({
        "time": "", "seq": 0, "session": "7", "server": "fixture", "method": "tools/call", "name": "",
        "arguments": null, "decision": {"verdict": "allow"}, "outcome": "result", "durationMs": 0.123,
        "prevHash": ""
    }))
    .expect("the template is a record")
}

/// The call-path work for one record: what `Entry::into_record` and
/// `Members::of` do.
fn serialise(template: &AuditRecord, arguments: &str, redact: bool) -> Vec<u8> {
    serialise_answered(template, arguments, None, redact)
}

/// The same with the tool's answer recorded (`audit.results`, the
/// default): parsed, digested in canonical form, redacted, measured
/// against the cut.
fn serialise_answered(template: &AuditRecord, arguments: &str, result: Option<&str>, redact: bool) -> Vec<u8> {
    let mut value: Value = serde_json::from_str(arguments).unwrap_or(Value::Null);
    if redact {
        redact_value(&mut value);
    }
    let text = |s: &str| if redact { redact_text(s).into_owned() } else { s.to_owned() };
    let mut record = template.clone();
    record.client = Some(text("claude-code/2.1.0"));
    record.name = text("echo");
    record.arguments = value;
    if let Some(result) = result {
        let answer = warden_audit::recorded_answer(result, redact, 16 * 1024);
        record.result_digest = Some(answer.digest);
        record.result_bytes = answer.sent_bytes;
        record.result = Some(answer.text);
    }
    serde_json::to_vec(&record).unwrap_or_default()
}

fn percentiles(mut samples: Vec<Duration>) -> (f64, f64) {
    samples.sort_unstable();
    let at = |p: usize| samples[(samples.len() * p / 100).min(samples.len() - 1)].as_nanos() as f64 / 1000.0;
    (at(50), at(99))
}

fn measure(label: &str, mut work: impl FnMut() -> usize) {
    let mut samples = Vec::with_capacity(RECORDS);
    let mut bytes = 0;
    for _ in 0..RECORDS {
        let started = Instant::now();
        bytes = black_box(work());
        samples.push(started.elapsed());
    }
    let (p50, p99) = percentiles(samples);
    println!("{label:<44} p50 {p50:>6.2} µs  p99 {p99:>6.2} µs  ({bytes} bytes)");
}

fn main() {
    let echo = r#"{"text":"hello"}"#;
    let long = format!(
        r#"{{"path":"/home/me/src/app/config.yaml","content":"{}","token":"ghp_0123456789abcdefghijABCDEFGHIJ012345","nested":{{"items":[1,2,3],"note":"call 555-12-3456"}}}}"#,
        "lorem ipsum dolor sit amet ".repeat(40)
    );
    let template = template();
    measure("echo arguments, redacted", || serialise(&template, echo, true).len());
    measure("echo arguments, not redacted", || serialise(&template, echo, false).len());
    let answer = r#"{"content":[{"type":"text","text":"hello"}]}"#;
    measure("echo arguments and answer, redacted", || serialise_answered(&template, echo, Some(answer), true).len());
    measure("1.3 KB arguments with secrets, redacted", || serialise(&template, &long, true).len());
    measure("1.3 KB arguments with secrets, not redacted", || serialise(&template, &long, false).len());
    let line = serialise(&template, &long, true);
    measure("writer: SHA-256 of a 1.5 KB line, twice", || sha256_hex(&line).len() + sha256_hex(&line).len());
}
