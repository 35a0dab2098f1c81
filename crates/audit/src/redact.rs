//! Masking secrets and personal data before they reach the log, and finding
//! them for the approval page.
//!
//! [`secret_spans`] finds the secrets inside a string, each as a bounded
//! span with its kind; [`redact_text`] rewrites those spans as
//! `[REDACTED:kind]` and [`redact_value`] applies it to every string of a
//! JSON value, nested objects and arrays included. Numbers, booleans and
//! null are never touched, even when their digits look like a card or a
//! social security number: only text is rewritten.
//!
//! **A mask never extends past the secret's own span.** Every pattern is
//! bounded by the shape of the secret itself, so text placed after (or
//! inside) something that merely starts like a secret stays visible: a PEM
//! header without a well-formed body and END line masks the header line
//! only, a quoted `password: "…"` masks at most one line of 256 characters,
//! and a value under a secret-named key is masked whole only when it is one
//! line of at most 256 characters (else its text is searched like any other).
//!
//! What is masked, and with what:
//!
//! | what | form | replacement |
//! | --- | --- | --- |
//! | PEM private keys | `-----BEGIN … PRIVATE KEY-----`, base64 lines of a DER or OpenSSH key, the END line; a header without that body and END: the header alone | `[REDACTED:private-key]` |
//! | JWTs | `eyJ…` `.` `…` `.` `…` (base64url) | `[REDACTED:jwt]` |
//! | API keys | `sk-ant-…` (hyphens inside), `sk-…`/`sk-proj-…` (with a digit), `ghp_`/`gho_`/`ghs_`/`ghu_`/`ghr_` + 36 alphanumerics, `github_pat_…`, `xoxb-`/`xoxp-`/`xoxa-`/`xoxr-…`, `AKIA`/`ASIA` + 16 | `[REDACTED:api-key]` |
//! | bearer tokens | `Bearer <token>`, the word kept | `Bearer [REDACTED:bearer]` |
//! | URL passwords | `scheme://user:password@` | `scheme://user:[REDACTED:password]@` |
//! | `key: value` / `key=value` in text | key ending in password, passwd, passphrase, secret, token, api_key, authorization; a quoted value on one line of at most 256 characters | `key=[REDACTED:secret]` |
//! | card numbers | 13 to 19 digits, single spaces or dashes between them, **only when the Luhn check passes** | `[REDACTED:card]` |
//! | US social security numbers | **only** the written form `ddd-dd-dddd`, not area 000, 666 or 900-999, group 00, serial 0000 | `[REDACTED:ssn]` |
//!
//! In objects, a one-line string value of at most 256 characters whose key
//! names a secret (see [`is_secret_key`]) is replaced whole by
//! `[REDACTED:secret]`.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::LazyLock;

use regex::{Captures, Regex, RegexSet};
use serde_json::Value;

/// What replaces a string value whose key names a secret.
pub const SECRET: &str = "[REDACTED:secret]";

/// The longest value masked whole as a secret (under a secret-named key, or
/// quoted after `password:` in text), in characters. Longer text is no
/// password: it is shown, so nothing can hide behind a secret's name.
pub const SECRET_VALUE_MAX_CHARS: usize = 256;

/// One secret inside a text: its byte range and its kind (`private-key`,
/// `jwt`, `api-key`, `bearer`, `password`, `secret`, `card`, `ssn`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SecretSpan {
    /// Where it starts, in bytes.
    pub start: usize,
    /// Where it ends (exclusive), in bytes.
    pub end: usize,
    /// What it is.
    pub kind: &'static str,
}

/// What a rule found in one match: the secret's byte ranges and kind.
type Found = Vec<(Range<usize>, &'static str)>;

/// One pattern and where in a match the secret is. `find` returns nothing
/// to keep the match as it was (a candidate that failed validation).
struct Rule {
    regex: Regex,
    find: fn(&Captures<'_>) -> Found,
}

fn rule(pattern: &str, find: fn(&Captures<'_>) -> Found) -> Rule {
    // The patterns are constants checked by the tests; an invalid one is a
    // bug in this file, not bad input.
    let regex = Regex::new(pattern).expect("redaction pattern compiles");
    Rule { regex, find }
}

/// The whole match, as `kind`.
fn whole(caps: &Captures<'_>, kind: &'static str) -> Found {
    caps.get(0).map(|m| vec![(m.range(), kind)]).unwrap_or_default()
}

/// The rules, in order of precedence where their spans overlap.
static RULES: LazyLock<Rules> = LazyLock::new(|| {
    Rules::new(vec![
        rule(
            r"(?P<header>-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----)(?:(?P<body>\r?\n(?:[A-Za-z-]+: [A-Za-z0-9,-]+\r?\n)*(?:\r?\n)?(?:[A-Za-z0-9+/=]{1,80}\r?\n)+)-----END [A-Z0-9 ]*PRIVATE KEY-----)?",
            private_key,
        ),
        rule(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*", |caps| whole(caps, "jwt")),
        rule(
            r"\b(?:sk-ant-[A-Za-z0-9_-]{16,}|sk-[A-Za-z0-9_-]{20,}|gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,}|xox[bpar]-[A-Za-z0-9-]{10,}|(?:AKIA|ASIA)[A-Z0-9]{16}\b)",
            api_key,
        ),
        rule(r"(?i)\bbearer[ \t]+(?P<token>[A-Za-z0-9._~+/-]{8,}=*)", |caps| group(caps, "token", "bearer")),
        rule(r"(?i)\b[a-z][a-z0-9+.-]*://[^/\s:@]+:(?P<password>[^/\s@]+)@", |caps| {
            group(caps, "password", "password")
        }),
        rule(
            r#"(?i)\b(?P<key>[a-z0-9_.-]*(?:password|passwd|passphrase|secret|token|api[_-]?key|authorization))(?P<sep>["']?[ \t]*[:=][ \t]*)(?:"(?P<dq>(?:[^"\\\n]|\\.)*)"|'(?P<sq>[^'\n]*)'|(?P<scheme>(?:bearer|basic|token|digest)[ \t]+)?(?P<bare>[^\s"',;&\[\]{}<>()]+))"#,
            key_value,
        ),
        rule(r"\b[0-9](?:[ -]?[0-9]){12,18}\b", card),
        rule(r"\b([0-9]{3})-([0-9]{2})-([0-9]{4})\b", ssn),
    ])
});

/// The rules and one set of all their patterns, which tells in a single
/// pass which rules can match a text: most strings match none, and running
/// eight searches over each of them was most of a record's cost.
struct Rules {
    rules: Vec<Rule>,
    any: RegexSet,
}

impl Rules {
    fn new(rules: Vec<Rule>) -> Rules {
        let any = RegexSet::new(rules.iter().map(|rule| rule.regex.as_str())).expect("redaction patterns compile");
        Rules { rules, any }
    }

    /// The rules that match somewhere in `text`, in order.
    fn matching(&self, text: &str) -> impl Iterator<Item = &Rule> {
        let matched = self.any.matches(text);
        self.rules.iter().enumerate().filter(move |(index, _)| matched.matched(*index)).map(|(_, rule)| rule)
    }
}

/// The secrets recognised in `text` (see the module docs), in order, none
/// overlapping: where two rules' spans overlap they become one span, of
/// the wider one's kind (the earlier rule's on a tie). Each span lies
/// within what one rule recognised, so none reaches past a secret.
pub fn secret_spans(text: &str) -> Vec<SecretSpan> {
    // (start, end, rule order, kind)
    let mut found: Vec<(usize, usize, usize, &'static str)> = Vec::new();
    for (order, rule) in RULES.matching(text).enumerate() {
        for caps in rule.regex.captures_iter(text) {
            for (range, kind) in (rule.find)(&caps) {
                if range.start < range.end {
                    found.push((range.start, range.end, order, kind));
                }
            }
        }
    }
    found.sort_by_key(|&(start, end, order, _)| (start, std::cmp::Reverse(end), order));
    let mut spans: Vec<SecretSpan> = Vec::with_capacity(found.len());
    let mut widest = 0;
    for (start, end, _, kind) in found {
        match spans.last_mut() {
            Some(last) if start < last.end => {
                if end > last.end {
                    if end - start > widest {
                        last.kind = kind;
                        widest = end - start;
                    }
                    last.end = end;
                }
            }
            _ => {
                spans.push(SecretSpan { start, end, kind });
                widest = end - start;
            }
        }
    }
    spans
}

/// The secrets in a string value found under `key` (the member's name, if
/// it is one): a one-line value of at most [`SECRET_VALUE_MAX_CHARS`] under
/// a secret-named key is one `secret` span; anything else is searched by
/// [`secret_spans`].
pub fn value_secret_spans(key: Option<&str>, text: &str) -> Vec<SecretSpan> {
    if key.is_some_and(is_secret_key) && !text.is_empty() && fits_a_secret(text) {
        return vec![SecretSpan { start: 0, end: text.len(), kind: "secret" }];
    }
    secret_spans(text)
}

/// Whether `text` is short enough, and on one line, to be a secret value.
fn fits_a_secret(text: &str) -> bool {
    !text.contains(['\n', '\r']) && text.chars().nth(SECRET_VALUE_MAX_CHARS).is_none()
}

/// `text` with `spans` rewritten as `[REDACTED:kind]`; borrowed when there
/// are none.
fn masked<'a>(text: &'a str, spans: &[SecretSpan]) -> Cow<'a, str> {
    if spans.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for span in spans {
        out.push_str(&text[at..span.start]);
        out.push_str("[REDACTED:");
        out.push_str(span.kind);
        out.push(']');
        at = span.end;
    }
    out.push_str(&text[at..]);
    Cow::Owned(out)
}

/// Rewrites the secrets recognised in `text` (see the module docs). Returns
/// the text unchanged and borrowed when nothing was found.
pub fn redact_text(text: &str) -> Cow<'_, str> {
    masked(text, &secret_spans(text))
}

/// Redacts every string in `value`, walking nested objects and arrays.
/// Numbers, booleans and null are left as they are. A one-line string value
/// of at most [`SECRET_VALUE_MAX_CHARS`] whose key names a secret
/// ([`is_secret_key`]) becomes [`SECRET`]. Returns whether anything was
/// rewritten.
pub fn redact_value(value: &mut Value) -> bool {
    redact_member(None, value)
}

fn redact_member(key: Option<&str>, value: &mut Value) -> bool {
    match value {
        Value::String(text) => match masked(text, &value_secret_spans(key, text)) {
            Cow::Owned(rewritten) => {
                *text = rewritten;
                true
            }
            Cow::Borrowed(_) => false,
        },
        // Every member is visited (no short cut on the first change).
        Value::Array(items) => items.iter_mut().fold(false, |changed, item| redact_member(None, item) | changed),
        Value::Object(map) => {
            map.iter_mut().fold(false, |changed, (key, item)| redact_member(Some(key), item) | changed)
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => false,
    }
}

/// Whether an object key names a secret: ignoring case and the separators
/// `_`, `-`, `.` and space, it ends with `password`, `passwd`, `passphrase`,
/// `secret`, `token`, `apikey`, `authorization`, `privatekey` or `cookie`.
/// So `password`, `client_secret`, `apiKey`, `X-Api-Key`, `access_token` and
/// `Authorization` name secrets; `max_tokens` and `tokenizer` do not.
pub fn is_secret_key(key: &str) -> bool {
    const SUFFIXES: [&str; 9] =
        ["password", "passwd", "passphrase", "secret", "token", "apikey", "authorization", "privatekey", "cookie"];
    let normal: String =
        key.chars().filter(|c| !matches!(c, '_' | '-' | '.' | ' ')).map(|c| c.to_ascii_lowercase()).collect();
    SUFFIXES.iter().any(|suffix| normal.ends_with(suffix))
}

/// The named group `name`, as `kind`.
fn group(caps: &Captures<'_>, name: &str, kind: &'static str) -> Found {
    caps.name(name).map(|m| vec![(m.range(), kind)]).unwrap_or_default()
}

/// A whole PEM key when its body is base64 lines of a DER structure
/// (`MI…`, `MH…`: a SEQUENCE) or an OpenSSH key, ending in its END line;
/// otherwise the header line alone, so nothing after a fake header hides.
fn private_key(caps: &Captures<'_>) -> Found {
    let real = caps.name("body").is_some_and(|body| {
        let base64: String = body
            .as_str()
            .lines()
            .filter(|line| !line.contains(':'))
            .flat_map(|line| line.trim_end_matches('\r').chars())
            .collect();
        let bytes = base64.as_bytes();
        base64.starts_with("b3BlbnNzaC1rZXktdjE")
            || (bytes.first() == Some(&b'M') && bytes.get(1).is_some_and(|b| (b'A'..=b'P').contains(b)))
    });
    if real { whole(caps, "private-key") } else { group(caps, "header", "private-key") }
}

fn api_key(caps: &Captures<'_>) -> Found {
    let key = &caps[0];
    // A bare `sk-` word is only a key if it looks random: real keys always
    // carry digits, hyphenated prose (`sk-learn-…`) does not.
    if key.starts_with("sk-") && !key.starts_with("sk-ant-") && !key.bytes().any(|b| b.is_ascii_digit()) {
        return Vec::new();
    }
    whole(caps, "api-key")
}

fn key_value(caps: &Captures<'_>) -> Found {
    if let Some(value) = caps.name("dq").or_else(|| caps.name("sq")) {
        let text = value.as_str();
        if text.is_empty() || text.starts_with("[REDACTED") || !fits_a_secret(text) {
            return Vec::new();
        }
        return vec![(value.range(), "secret")];
    }
    let Some(bare) = caps.name("bare") else { return Vec::new() };
    // `Authorization: Bearer xyz` is the bearer rule's; the scheme word
    // alone is no secret.
    if caps.name("scheme").is_none()
        && matches!(bare.as_str().to_ascii_lowercase().as_str(), "bearer" | "basic" | "token" | "digest")
    {
        return Vec::new();
    }
    if bare.as_str().starts_with("[REDACTED") {
        return Vec::new();
    }
    vec![(bare.range(), "secret")]
}

/// Masks the Luhn-valid card numbers in a run of digit groups. The run may
/// hold more than a card (`qty 2 4111 1111 1111 1111`), so every span of
/// whole groups is tried, leftmost and longest first.
fn card(caps: &Captures<'_>) -> Found {
    let Some(run) = caps.get(0) else { return Vec::new() };
    let base = run.start();
    // Each group's byte range within the text.
    let mut groups: Vec<Range<usize>> = Vec::new();
    let mut at = 0;
    for piece in run.as_str().split([' ', '-']) {
        groups.push(base + at..base + at + piece.len());
        at += piece.len() + 1;
    }
    let text = run.as_str();
    let digits_of = |range: &Range<usize>| text[range.start - base..range.end - base].bytes().map(|b| b - b'0');
    let mut found = Vec::new();
    let mut start = 0;
    while start < groups.len() {
        let end = (start + 1..=groups.len()).rev().find(|&end| {
            let digits: Vec<u8> = groups[start..end].iter().flat_map(digits_of).collect();
            (13..=19).contains(&digits.len()) && luhn(&digits)
        });
        match end {
            Some(end) => {
                found.push((groups[start].start..groups[end - 1].end, "card"));
                start = end;
            }
            None => start += 1,
        }
    }
    found
}

/// The Luhn (mod 10) check over decimal digits.
fn luhn(digits: &[u8]) -> bool {
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| {
            let d = u32::from(d);
            if i % 2 == 1 {
                let doubled = d * 2;
                if doubled > 9 { doubled - 9 } else { doubled }
            } else {
                d
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

/// Masks `ddd-dd-dddd` unless it falls in a range never issued.
fn ssn(caps: &Captures<'_>) -> Found {
    let (area, group, serial) = (&caps[1], &caps[2], &caps[3]);
    let never_issued = area == "000" || area == "666" || area.starts_with('9') || group == "00" || serial == "0000";
    if never_issued { Vec::new() } else { whole(caps, "ssn") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_compile() {
        assert_eq!(RULES.rules.len(), 8);
    }

    #[test]
    fn luhn_known_numbers() {
        let digits = |s: &str| s.bytes().map(|b| b - b'0').collect::<Vec<_>>();
        assert!(luhn(&digits("4111111111111111")));
        assert!(luhn(&digits("378282246310005")));
        assert!(!luhn(&digits("4111111111111112")));
    }

    #[test]
    fn untouched_text_stays_borrowed() {
        assert!(matches!(redact_text("list the files in /tmp"), Cow::Borrowed(_)));
        // A validated candidate that is kept does not allocate a copy either.
        assert!(matches!(redact_text("order 4111111111111112"), Cow::Borrowed(_)));
    }
}
