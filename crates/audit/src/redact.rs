//! Masking secrets and personal data before they reach the log.
//!
//! [`redact_text`] rewrites the secrets it recognises inside a string and
//! [`redact_value`] applies it to every string of a JSON value, nested
//! objects and arrays included. Numbers, booleans and null are never
//! touched, even when their digits look like a card or a social security
//! number: only text is rewritten.
//!
//! What is masked, and with what:
//!
//! | what | form | replacement |
//! | --- | --- | --- |
//! | PEM private keys | `-----BEGIN … PRIVATE KEY-----` through the END line (or the end of the text) | `[REDACTED:private-key]` |
//! | JWTs | `eyJ…` `.` `…` `.` `…` (base64url) | `[REDACTED:jwt]` |
//! | API keys | `sk-ant-…` (hyphens inside), `sk-…`/`sk-proj-…` (with a digit), `ghp_`/`gho_`/`ghs_`/`ghu_`/`ghr_` + 36 alphanumerics, `github_pat_…`, `xoxb-`/`xoxp-`/`xoxa-`/`xoxr-…`, `AKIA`/`ASIA` + 16 | `[REDACTED:api-key]` |
//! | bearer tokens | `Bearer <token>`, the word kept | `Bearer [REDACTED:bearer]` |
//! | URL passwords | `scheme://user:password@` | `scheme://user:[REDACTED:password]@` |
//! | `key: value` / `key=value` in text | key ending in password, passwd, passphrase, secret, token, api_key, authorization | `key=[REDACTED:secret]` |
//! | card numbers | 13 to 19 digits, single spaces or dashes between them, **only when the Luhn check passes** | `[REDACTED:card]` |
//! | US social security numbers | **only** the written form `ddd-dd-dddd`, not area 000, 666 or 900-999, group 00, serial 0000 | `[REDACTED:ssn]` |
//!
//! In objects, a string value whose key names a secret (see
//! [`is_secret_key`]) is replaced whole by `[REDACTED:secret]`.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::{Captures, Regex, RegexSet};
use serde_json::Value;

/// What replaces a string value whose key names a secret.
pub const SECRET: &str = "[REDACTED:secret]";

/// One pattern and how a match is rewritten. `replace` returns `None` to keep
/// the match as it was (a candidate that failed validation).
struct Rule {
    regex: Regex,
    replace: fn(&Captures<'_>) -> Option<String>,
}

fn rule(pattern: &str, replace: fn(&Captures<'_>) -> Option<String>) -> Rule {
    // The patterns are constants checked by the tests; an invalid one is a
    // bug in this file, not bad input.
    let regex = Regex::new(pattern).expect("redaction pattern compiles");
    Rule { regex, replace }
}

/// The rules, in the order they run. Earlier rules leave `[REDACTED:…]`
/// markers that later rules do not match again.
static RULES: LazyLock<Rules> = LazyLock::new(|| {
    Rules::new(vec![
        rule(r"(?s)-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\z)", |_| {
            Some("[REDACTED:private-key]".into())
        }),
        rule(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*", |_| Some("[REDACTED:jwt]".into())),
        rule(
            r"\b(?:sk-ant-[A-Za-z0-9_-]{16,}|sk-[A-Za-z0-9_-]{20,}|gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,}|xox[bpar]-[A-Za-z0-9-]{10,}|(?:AKIA|ASIA)[A-Z0-9]{16}\b)",
            api_key,
        ),
        rule(r"(?i)\b(bearer)[ \t]+[A-Za-z0-9._~+/-]{8,}=*", |caps| Some(format!("{} [REDACTED:bearer]", &caps[1]))),
        rule(r"(?i)\b([a-z][a-z0-9+.-]*://[^/\s:@]+:)[^/\s@]+@", |caps| {
            Some(format!("{}[REDACTED:password]@", &caps[1]))
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

    /// The rules that match somewhere in `text`, in order. A rule that does
    /// not match the original cannot match after earlier rewrites either:
    /// those only put in `[REDACTED:…]` markers, which no rule matches.
    fn matching(&self, text: &str) -> impl Iterator<Item = &Rule> {
        let matched = self.any.matches(text);
        self.rules.iter().enumerate().filter(move |(index, _)| matched.matched(*index)).map(|(_, rule)| rule)
    }
}

/// Rewrites the secrets recognised in `text` (see the module docs). Returns
/// the text unchanged and borrowed when nothing was found.
pub fn redact_text(text: &str) -> Cow<'_, str> {
    let mut out = Cow::Borrowed(text);
    for rule in RULES.matching(text) {
        let mut changed = false;
        let rewritten = rule.regex.replace_all(&out, |caps: &Captures<'_>| match (rule.replace)(caps) {
            Some(replacement) => {
                changed = true;
                replacement
            }
            None => caps[0].to_owned(),
        });
        if changed && let Cow::Owned(rewritten) = rewritten {
            out = Cow::Owned(rewritten);
        }
    }
    out
}

/// Redacts every string in `value`, walking nested objects and arrays.
/// Numbers, booleans and null are left as they are. A non-empty string value
/// whose key names a secret ([`is_secret_key`]) becomes [`SECRET`].
pub fn redact_value(value: &mut Value) {
    match value {
        Value::String(text) => {
            if let Cow::Owned(rewritten) = redact_text(text) {
                *text = rewritten;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact_value),
        Value::Object(map) => {
            for (key, item) in map.iter_mut() {
                match item {
                    Value::String(text) if is_secret_key(key) => {
                        if !text.is_empty() {
                            *text = SECRET.to_owned();
                        }
                    }
                    _ => redact_value(item),
                }
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
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

fn api_key(caps: &Captures<'_>) -> Option<String> {
    let key = &caps[0];
    // A bare `sk-` word is only a key if it looks random: real keys always
    // carry digits, hyphenated prose (`sk-learn-…`) does not.
    if key.starts_with("sk-") && !key.starts_with("sk-ant-") && !key.bytes().any(|b| b.is_ascii_digit()) {
        return None;
    }
    Some("[REDACTED:api-key]".into())
}

fn key_value(caps: &Captures<'_>) -> Option<String> {
    let (key, sep) = (&caps["key"], &caps["sep"]);
    let quoted = caps.name("dq").map(|m| ('"', m.as_str())).or_else(|| caps.name("sq").map(|m| ('\'', m.as_str())));
    if let Some((quote, value)) = quoted {
        if value.is_empty() || value.starts_with("[REDACTED") {
            return None;
        }
        return Some(format!("{key}{sep}{quote}{SECRET}{quote}"));
    }
    let bare = caps.name("bare")?.as_str();
    match caps.name("scheme") {
        Some(scheme) => Some(format!("{key}{sep}{}{SECRET}", scheme.as_str())),
        // `Authorization: Bearer [REDACTED:bearer]`: the scheme word alone is
        // no secret, and what follows it was already masked.
        None if matches!(bare.to_ascii_lowercase().as_str(), "bearer" | "basic" | "token" | "digest") => None,
        None => Some(format!("{key}{sep}{SECRET}")),
    }
}

/// Masks the Luhn-valid card numbers in a run of digit groups. The run may
/// hold more than a card (`qty 2 4111 1111 1111 1111`), so every span of
/// whole groups is tried, leftmost and longest first.
fn card(caps: &Captures<'_>) -> Option<String> {
    let run = &caps[0];
    let groups: Vec<&str> = run.split([' ', '-']).collect();
    let separators: Vec<char> = run.chars().filter(|c| matches!(c, ' ' | '-')).collect();
    let mut out = String::with_capacity(run.len());
    let mut changed = false;
    let mut start = 0;
    while start < groups.len() {
        let found = (start + 1..=groups.len()).rev().find(|&end| {
            let digits: Vec<u8> = groups[start..end].iter().flat_map(|g| g.bytes()).map(|b| b - b'0').collect();
            (13..=19).contains(&digits.len()) && luhn(&digits)
        });
        let end = match found {
            Some(end) => {
                out.push_str("[REDACTED:card]");
                changed = true;
                end
            }
            None => {
                out.push_str(groups[start]);
                start + 1
            }
        };
        if let Some(separator) = separators.get(end - 1).filter(|_| end < groups.len()) {
            out.push(*separator);
        }
        start = end;
    }
    changed.then_some(out)
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
fn ssn(caps: &Captures<'_>) -> Option<String> {
    let (area, group, serial) = (&caps[1], &caps[2], &caps[3]);
    let never_issued = area == "000" || area == "666" || area.starts_with('9') || group == "00" || serial == "0000";
    (!never_issued).then(|| "[REDACTED:ssn]".into())
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
