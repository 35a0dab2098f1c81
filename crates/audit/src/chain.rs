//! The hash chain: how a line is sealed, and how a file is verified.
//!
//! # Definitions
//!
//! A line is the compact `serde_json` serialisation of an
//! [`AuditRecord`](crate::AuditRecord), its fields in declaration order,
//! followed by `\n`. The newline is not part of any hash.
//!
//! * **content**: the line as serialised with `hash` absent, so it ends with
//!   `…,"prevHash":"<hex>"}`.
//! * **`hash`** = lowercase hex SHA-256 of the content's bytes.
//! * The line written is the content with its closing `}` replaced by
//!   `,"hash":"<hash>"}`: `hash` is always the last member, and removing
//!   that suffix and putting back `}` gives the content again, byte for byte.
//!   Verification works on those bytes and never re-serialises, so it does
//!   not depend on how a JSON library formats numbers or orders keys.
//! * **`prevHash`** = lowercase hex SHA-256 of the previous line's exact
//!   bytes (its whole text, `hash` included, without the newline). The first
//!   record of a chain has 64 zeros ([`GENESIS`]). After rotation the first
//!   record of the new file carries the hash of the last line of the rotated
//!   file, so the chain runs on across files.
//!
//! An edited field breaks that line's `hash`; an edited `hash` (or a line
//! re-sealed after an edit) breaks the next line's `prevHash`; a deleted or
//! moved line breaks the `prevHash` of the line now after the gap. Lines cut
//! off the end of a file leave no trace in the file itself: that needs the
//! last hash kept elsewhere (each rotated file's last hash is kept in the
//! next file's first `prevHash`).

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::AuditError;

/// The `prevHash` of the first record of a chain: 64 zeros.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// What [`verify`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyReport {
    /// How many lines the file holds, broken ones included.
    pub records: u64,
    /// The first line that does not verify, if any.
    pub first_broken: Option<Broken>,
}

/// The first line that failed verification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broken {
    /// Its line number in the file, from 1.
    pub line: u64,
    /// Its `seq`, when it could be read.
    pub seq: Option<u64>,
    /// What is wrong with it.
    pub reason: String,
}

/// Where a chain stands: what the next record continues from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ChainState {
    /// The `seq` of the last record (0 before the first).
    pub(crate) seq: u64,
    /// The hash of the last line's bytes ([`GENESIS`] before the first).
    pub(crate) last_hash: String,
}

impl ChainState {
    /// The start of a new chain.
    pub(crate) fn genesis() -> Self {
        ChainState { seq: 0, last_hash: GENESIS.to_owned() }
    }
}

/// The members of a line that the chain is made of.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Links {
    pub(crate) seq: u64,
    pub(crate) prev_hash: String,
    pub(crate) hash: String,
}

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut hex = String::with_capacity(64);
    for byte in Sha256::digest(bytes) {
        hex.push(char::from(DIGITS[usize::from(byte >> 4)]));
        hex.push(char::from(DIGITS[usize::from(byte & 0xf)]));
    }
    hex
}

/// A record's own members, serialised: the JSON text of an object without
/// its braces and without the members the chain adds (`time`, `seq`,
/// `prevHash`, `hash`), which the writer fills in, in file order.
///
/// This is all the writer needs of a record, so a new kind of record is any
/// `Serialize` type that leaves those four members out (an
/// [`AuditRecord`](crate::AuditRecord) does while they are empty).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Members(Vec<u8>);

impl Members {
    /// Serialises `record`, which must serialise as a JSON object.
    pub(crate) fn of(record: &impl Serialize) -> Result<Members, AuditError> {
        let text = serde_json::to_vec(record)?;
        match text.strip_prefix(b"{").and_then(|text| text.strip_suffix(b"}")) {
            Some(inner) => Ok(Members(inner.to_vec())),
            None => Err(AuditError::NotAnObject),
        }
    }
}

/// The line for `members` as record `seq` of its chain, written at `time`
/// after the line whose hash is `prev_hash`: `{"time":…,"seq":…,<members>,
/// "prevHash":…,"hash":…}`, without the newline.
pub(crate) fn seal(members: &Members, time: &str, seq: u64, prev_hash: &str) -> Vec<u8> {
    let mut line = Vec::with_capacity(members.0.len() + 256);
    line.extend_from_slice(b"{\"time\":\"");
    line.extend_from_slice(time.as_bytes());
    line.extend_from_slice(b"\",\"seq\":");
    line.extend_from_slice(seq.to_string().as_bytes());
    if !members.0.is_empty() {
        line.push(b',');
        line.extend_from_slice(&members.0);
    }
    line.extend_from_slice(b",\"prevHash\":\"");
    line.extend_from_slice(prev_hash.as_bytes());
    line.extend_from_slice(b"\"}");
    // `time` and `prev_hash` are the writer's own (a timestamp and hex), so
    // no escaping is needed, and the content is exactly what serde_json
    // would write for the whole record.
    let hash = sha256_hex(&line);
    line.pop(); // the closing brace
    line.extend_from_slice(b",\"hash\":\"");
    line.extend_from_slice(hash.as_bytes());
    line.extend_from_slice(b"\"}");
    line
}

fn is_hex64(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Checks one line (without its newline) on its own: that it is a record
/// and that its `hash` matches its content.
pub(crate) fn check_line(line: &[u8]) -> Result<Links, String> {
    let links: Links = serde_json::from_slice(line).map_err(|err| format!("not a valid record: {err}"))?;
    if !is_hex64(&links.hash) {
        return Err("hash is not 64 lowercase hex digits".into());
    }
    if !is_hex64(&links.prev_hash) {
        return Err("prevHash is not 64 lowercase hex digits".into());
    }
    let suffix = format!(",\"hash\":\"{}\"}}", links.hash);
    let Some(content) = line.strip_suffix(suffix.as_bytes()) else {
        return Err("hash is not the last member of the line".into());
    };
    let mut hasher = Sha256::new();
    hasher.update(content);
    hasher.update(b"}");
    let actual: String = hasher.finalize().iter().map(|byte| format!("{byte:02x}")).collect();
    if actual != links.hash {
        return Err("hash mismatch: the record was changed after it was written".into());
    }
    Ok(links)
}

/// The `seq` of a line that does not parse, if its text still shows it.
fn salvage_seq(line: &[u8]) -> Option<u64> {
    if let Ok(value) = serde_json::from_slice::<serde_json::Value>(line) {
        return value.get("seq")?.as_u64();
    }
    let key = b"\"seq\":";
    let at = line.windows(key.len()).position(|window| window == key)? + key.len();
    let digits: &[u8] = &line[at..];
    let end = digits.iter().position(|b| !b.is_ascii_digit()).unwrap_or(digits.len());
    std::str::from_utf8(&digits[..end]).ok()?.parse().ok()
}

/// Verifies the chain of one file: every line's `hash`, and every
/// `prevHash` against the line before it. The first line's `prevHash` is
/// taken as given (64 zeros, or the last hash of the rotated file before
/// it). Reports the first broken line: an edited field, a deleted, moved or
/// inserted line, a line that is not a record, or a torn last line (one
/// without its newline, left by an interrupted write).
pub fn verify(path: &Path) -> Result<VerifyReport, AuditError> {
    let file = File::open(path).map_err(|err| AuditError::io(path, "open", err))?;
    let mut reader = BufReader::new(file);
    let mut buf = Vec::new();
    let mut records = 0u64;
    let mut first_broken = None;
    // The seq and the line hash of the previous line.
    let mut previous: Option<(u64, String)> = None;
    loop {
        buf.clear();
        let read = reader.read_until(b'\n', &mut buf).map_err(|err| AuditError::io(path, "read", err))?;
        if read == 0 {
            break;
        }
        records += 1;
        if first_broken.is_some() {
            continue;
        }
        let line_number = records;
        let broken = |seq: Option<u64>, reason: String| Some(Broken { line: line_number, seq, reason });
        let Some(line) = buf.strip_suffix(b"\n") else {
            first_broken =
                broken(salvage_seq(&buf), "torn last line: it ends without a newline (an interrupted write)".into());
            continue;
        };
        if line.is_empty() {
            first_broken = broken(None, "empty line".into());
            continue;
        }
        let links = match check_line(line) {
            Ok(links) => links,
            Err(reason) => {
                first_broken = broken(salvage_seq(line), reason);
                continue;
            }
        };
        if let Some((previous_seq, previous_hash)) = &previous {
            let expected_seq = previous_seq.saturating_add(1);
            if links.prev_hash != *previous_hash {
                let reason = if links.seq != expected_seq {
                    format!(
                        "prevHash does not match line {}: seq {} follows seq {previous_seq} (records missing or out of order)",
                        line_number - 1,
                        links.seq
                    )
                } else {
                    format!("prevHash does not match line {}: that line was changed or replaced", line_number - 1)
                };
                first_broken = broken(Some(links.seq), reason);
                continue;
            }
            if links.seq != expected_seq {
                first_broken = broken(Some(links.seq), format!("seq {} does not follow seq {previous_seq}", links.seq));
                continue;
            }
        }
        previous = Some((links.seq, sha256_hex(line)));
    }
    Ok(VerifyReport { records, first_broken })
}

#[cfg(test)]
mod tests {
    #[test]
    fn sha256_hex_is_the_lowercase_digest() {
        // FIPS 180-2, appendix B.1.
        let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert_eq!(super::sha256_hex(b"abc"), abc);
    }
}
