//! The line format and the hash chain: verify finds each kind of tampering.

mod common;

use std::fs;
use std::path::Path;

use common::{TempDir, json, lines, write_n};
use sha2::{Digest, Sha256};
use warden_audit::{GENESIS, sha256_hex, verify};

fn hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

fn write_lines(path: &Path, lines: &[String]) {
    let mut text = lines.join("\n");
    text.push('\n');
    fs::write(path, text).expect("write");
}

#[tokio::test]
async fn lines_have_the_documented_format_and_chain() {
    let dir = TempDir::new("format");
    let path = dir.join("audit.jsonl");
    write_n(&path, 3).await;
    let lines = lines(&path);
    assert_eq!(lines.len(), 3);

    let first = json(&lines[0]);
    let keys: Vec<&str> = first.as_object().expect("object").keys().map(String::as_str).collect();
    // serde_json's map sorts keys; check the on-disk order from the text.
    let mut on_disk: Vec<(usize, &str)> =
        keys.iter().map(|k| (lines[0].find(&format!("\"{k}\":")).expect("key"), *k)).collect();
    on_disk.sort();
    let order: Vec<&str> = on_disk.into_iter().map(|(_, k)| k).collect();
    assert_eq!(
        order,
        [
            "time",
            "seq",
            "session",
            "client",
            "principal",
            "clientAddress",
            "server",
            "method",
            "name",
            "arguments",
            "argumentsDigest",
            "decision",
            "outcome",
            "durationMs",
            "prevHash",
            "hash"
        ]
    );
    let time = first["time"].as_str().expect("time");
    assert_eq!(time.len(), 24, "{time}");
    assert!(time.ends_with('Z') && time.as_bytes()[19] == b'.', "{time}");
    assert_eq!(first["seq"], 1);
    assert_eq!(first["method"], "tools/call");
    assert_eq!(first["decision"], serde_json::json!({"verdict": "allow"}));
    assert_eq!(first["outcome"], "result");
    assert_eq!(first["durationMs"], 1.234);
    assert_eq!(first["prevHash"], GENESIS);

    for (i, line) in lines.iter().enumerate() {
        let value = json(line);
        // hash = sha256 of the line with its final `,"hash":"…"` member removed.
        let hash = value["hash"].as_str().expect("hash");
        let suffix = format!(",\"hash\":\"{hash}\"}}");
        let content = format!("{}}}", line.strip_suffix(&suffix).expect("hash last"));
        assert_eq!(hex(content.as_bytes()), hash);
        if i > 0 {
            assert_eq!(value["prevHash"], hex(lines[i - 1].as_bytes()));
            assert_eq!(value["prevHash"], sha256_hex(lines[i - 1].as_bytes()));
        }
        assert_eq!(value["seq"], i as u64 + 1);
    }
    let report = verify(&path).expect("verify");
    assert_eq!(report.records, 3);
    assert_eq!(report.first_broken, None);
}

#[tokio::test]
async fn an_edited_field_breaks_its_own_line() {
    let dir = TempDir::new("edit");
    let path = dir.join("audit.jsonl");
    write_n(&path, 5).await;
    let mut lines = lines(&path);
    lines[2] = lines[2].replace("\"server\":\"github\"", "\"server\":\"gitlab\"");
    write_lines(&path, &lines);
    let broken = verify(&path).expect("verify").first_broken.expect("broken");
    assert_eq!((broken.line, broken.seq), (3, Some(3)));
    assert!(broken.reason.contains("hash mismatch"), "{}", broken.reason);
}

#[tokio::test]
async fn a_resealed_edit_breaks_the_next_line() {
    let dir = TempDir::new("reseal");
    let path = dir.join("audit.jsonl");
    write_n(&path, 5).await;
    let mut lines = lines(&path);
    // Edit line 2 and recompute its own hash: the line verifies on its own,
    // but line 3 still points at the original.
    let value = json(&lines[1]);
    let hash = value["hash"].as_str().expect("hash").to_owned();
    let content = lines[1].replace("\"name\":\"tool1\"", "\"name\":\"tool9\"");
    let content = format!("{}}}", content.strip_suffix(&format!(",\"hash\":\"{hash}\"}}")).expect("suffix"));
    let new_hash = hex(content.as_bytes());
    lines[1] = format!("{},\"hash\":\"{new_hash}\"}}", &content[..content.len() - 1]);
    write_lines(&path, &lines);
    let report = verify(&path).expect("verify");
    let broken = report.first_broken.expect("broken");
    assert_eq!((broken.line, broken.seq), (3, Some(3)));
    assert!(broken.reason.contains("prevHash"), "{}", broken.reason);
}

#[tokio::test]
async fn a_deleted_line_is_found_where_the_gap_is() {
    let dir = TempDir::new("delete");
    let path = dir.join("audit.jsonl");
    write_n(&path, 5).await;
    let mut lines = lines(&path);
    lines.remove(2);
    write_lines(&path, &lines);
    let report = verify(&path).expect("verify");
    assert_eq!(report.records, 4);
    let broken = report.first_broken.expect("broken");
    assert_eq!((broken.line, broken.seq), (3, Some(4)));
    assert!(broken.reason.contains("missing or out of order"), "{}", broken.reason);
}

#[tokio::test]
async fn swapped_lines_are_found() {
    let dir = TempDir::new("swap");
    let path = dir.join("audit.jsonl");
    write_n(&path, 5).await;
    let mut lines = lines(&path);
    lines.swap(1, 2);
    write_lines(&path, &lines);
    let broken = verify(&path).expect("verify").first_broken.expect("broken");
    assert_eq!((broken.line, broken.seq), (2, Some(3)));
}

#[tokio::test]
async fn a_torn_last_line_is_reported() {
    let dir = TempDir::new("torn");
    let path = dir.join("audit.jsonl");
    write_n(&path, 4).await;
    let bytes = fs::read(&path).expect("read");
    fs::write(&path, &bytes[..bytes.len() - 20]).expect("truncate");
    let report = verify(&path).expect("verify");
    assert_eq!(report.records, 4);
    let broken = report.first_broken.expect("broken");
    assert_eq!((broken.line, broken.seq), (4, Some(4)));
    assert!(broken.reason.contains("torn"), "{}", broken.reason);
}

#[tokio::test]
async fn garbage_and_empty_lines_are_reported() {
    let dir = TempDir::new("garbage");
    let path = dir.join("audit.jsonl");
    write_n(&path, 3).await;
    let mut lines = lines(&path);
    lines.insert(1, "not json".into());
    write_lines(&path, &lines);
    let broken = verify(&path).expect("verify").first_broken.expect("broken");
    assert_eq!((broken.line, broken.seq), (2, None));
    assert!(broken.reason.contains("not a valid record"), "{}", broken.reason);

    let mut lines = common::lines(&path);
    lines.remove(1);
    lines.insert(2, String::new());
    write_lines(&path, &lines);
    let broken = verify(&path).expect("verify").first_broken.expect("broken");
    assert_eq!(broken.line, 3);
    assert!(broken.reason.contains("empty"), "{}", broken.reason);
}

#[test]
fn verify_of_a_missing_file_is_an_error() {
    let dir = TempDir::new("missing");
    assert!(verify(&dir.join("nope.jsonl")).is_err());
}
