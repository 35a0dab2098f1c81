//! Redaction: what is masked, and what is left alone.

use serde_json::json;
use warden_audit::{is_secret_key, redact_text, redact_value};

const ANTHROPIC: &str =
    "sk-ant-api03-Xy9_AbC-dEf12GhIjKl-MnOpQrStUvWx-yz0123456789AbCdEfGhIjKlMnOpQrStUvWxYz0123-456789abcdAA";
const OPENAI: &str = "sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78St90";
const OPENAI_LEGACY: &str = "sk-AbCdEfGhIjKlMnOpQrSt1234567890UvWxYzAbCdEfGh";
const GITHUB: &str = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
const GITHUB_PAT: &str = "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUV";
const SLACK: &str = "xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx";
const AWS: &str = "AKIAIOSFODNN7EXAMPLE";
const JWT: &str = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c";

fn redacted(mut value: serde_json::Value) -> serde_json::Value {
    redact_value(&mut value);
    value
}

#[test]
fn anthropic_key_with_hyphens_is_masked_whole() {
    let text = format!("use {ANTHROPIC} now");
    assert_eq!(redact_text(&text), "use [REDACTED:api-key] now");
}

#[test]
fn every_key_type_is_masked_in_nested_objects_and_arrays() {
    let value = json!({
        "config": {
            "providers": [
                {"anthropic": format!("key={ANTHROPIC}")},
                {"openai": [OPENAI, format!("legacy {OPENAI_LEGACY}")]},
            ],
            "github": {"classic": GITHUB, "fine": format!("pat: {GITHUB_PAT}.")},
            "slack": [[format!("({SLACK})")]],
            "aws": {"deep": {"deeper": format!("id {AWS} region us-east-1")}},
        },
        "headers": ["Bearer abcdef0123456789ghijkl", format!("jwt {JWT}")],
    });
    let out = redacted(value);
    let text = out.to_string();
    for secret in [ANTHROPIC, OPENAI, OPENAI_LEGACY, GITHUB, GITHUB_PAT, SLACK, AWS, JWT, "abcdef0123456789ghijkl"] {
        assert!(!text.contains(secret), "{secret} leaked in {text}");
    }
    assert_eq!(out["config"]["providers"][0]["anthropic"], "key=[REDACTED:api-key]");
    assert_eq!(out["config"]["providers"][1]["openai"][0], "[REDACTED:api-key]");
    assert_eq!(out["config"]["providers"][1]["openai"][1], "legacy [REDACTED:api-key]");
    assert_eq!(out["config"]["github"]["classic"], "[REDACTED:api-key]");
    assert_eq!(out["config"]["github"]["fine"], "pat: [REDACTED:api-key].");
    assert_eq!(out["config"]["slack"][0][0], "([REDACTED:api-key])");
    assert_eq!(out["config"]["aws"]["deep"]["deeper"], "id [REDACTED:api-key] region us-east-1");
    assert_eq!(out["headers"][0], "Bearer [REDACTED:bearer]");
    assert_eq!(out["headers"][1], "jwt [REDACTED:jwt]");
}

#[test]
fn bearer_keeps_the_word_and_any_case() {
    assert_eq!(redact_text("Authorization: Bearer tok_9f8e7d6c5b4a"), "Authorization: Bearer [REDACTED:bearer]");
    assert_eq!(redact_text("bearer abc.def-ghi_jkl~mno+p/q=="), "bearer [REDACTED:bearer]");
    assert_eq!(redact_text(&format!("Bearer {JWT}")), "Bearer [REDACTED:jwt]");
}

#[test]
fn numbers_bools_and_null_are_untouched() {
    let value = json!({
        "card": 4111111111111111u64,
        "ssn": 123456789,
        "big": 4_012_888_888_881_881u64,
        "ok": true,
        "none": null,
        "list": [4111111111111111u64, 1.5, false],
        "password": 1234,
    });
    assert_eq!(redacted(value.clone()), value);
}

#[test]
fn cards_only_when_luhn_passes() {
    assert_eq!(redact_text("card 4111111111111111 ok"), "card [REDACTED:card] ok");
    assert_eq!(redact_text("card 4111 1111 1111 1111 ok"), "card [REDACTED:card] ok");
    assert_eq!(redact_text("card 4111-1111-1111-1111 ok"), "card [REDACTED:card] ok");
    assert_eq!(redact_text("amex 3782 822463 10005"), "amex [REDACTED:card]");
    assert_eq!(redact_text("19 digits 6011000990139424000"), "19 digits 6011000990139424000"); // Luhn fails
    // Luhn-invalid 16 digits stay, whatever the separators.
    for text in ["card 4111111111111112 ok", "card 4111 1111 1111 1112 ok", "order 1234-5678-9012-3456"] {
        assert_eq!(redact_text(text), text);
    }
    // Too short or too long to be a card.
    assert_eq!(redact_text("id 411111111111"), "id 411111111111");
    assert_eq!(redact_text("n 41111111111111111111111"), "n 41111111111111111111111");
    // A card after another number in the same run of digit groups.
    assert_eq!(redact_text("qty 2 4111 1111 1111 1111"), "qty 2 [REDACTED:card]");
    // In JSON strings too.
    assert_eq!(redacted(json!({"pay": ["4111 1111 1111 1111"]})), json!({"pay": ["[REDACTED:card]"]}));
}

#[test]
fn ssn_only_in_written_form_and_valid_ranges() {
    assert_eq!(redact_text("ssn 123-45-6789."), "ssn [REDACTED:ssn].");
    assert_eq!(redact_text("078-05-1120"), "[REDACTED:ssn]");
    // Not any nine-digit number.
    for text in ["id 123456789", "zip+4 12345-6789", "phone 555-123-4567", "123 45 6789"] {
        assert_eq!(redact_text(text), text, "{text}");
    }
    // Never-issued ranges.
    for text in ["000-12-3456", "666-12-3456", "900-12-3456", "999-12-3456", "123-00-4567", "123-45-0000"] {
        assert_eq!(redact_text(text), text, "{text}");
    }
}

#[test]
fn pem_private_keys_are_masked_across_lines() {
    let text =
        "before\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\nabc+/=\n-----END RSA PRIVATE KEY-----\nafter";
    assert_eq!(redact_text(text), "before\n[REDACTED:private-key]\nafter");
    let plain = "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----";
    assert_eq!(redact_text(plain), "[REDACTED:private-key]");
    let openssh = "k: -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----";
    assert_eq!(redact_text(openssh), "k: [REDACTED:private-key]");
    // Cut off before its END line: the header alone is masked, the rest shows.
    assert_eq!(redact_text("x -----BEGIN EC PRIVATE KEY-----\nMHcCAQEE"), "x [REDACTED:private-key]\nMHcCAQEE");
    // A public key or certificate is not a secret.
    let public = "-----BEGIN PUBLIC KEY-----\nMIIBIjAN\n-----END PUBLIC KEY-----";
    assert_eq!(redact_text(public), public);
    // Nested.
    let value = redacted(json!({"files": [{"content": plain}]}));
    assert_eq!(value["files"][0]["content"], "[REDACTED:private-key]");
}

#[test]
fn values_under_secret_key_names_are_masked() {
    let value = json!({
        "user": "alice",
        "password": "hunter2",
        "Passwd": "x",
        "nested": {"client_secret": "abc", "apiKey": "plain", "API_KEY": "plain2", "x-api-key": "k"},
        "list": [{"Authorization": "Basic dXNlcjpwYXNz"}, {"access_token": "t"}, {"TOKEN": "t2"}],
        "token": {"inner": "not a secret by itself"},
        "max_tokens": "100",
        "tokenizer": "cl100k",
        "secret": "",
    });
    let out = redacted(value);
    assert_eq!(out["user"], "alice");
    assert_eq!(out["password"], "[REDACTED:secret]");
    assert_eq!(out["Passwd"], "[REDACTED:secret]");
    assert_eq!(out["nested"]["client_secret"], "[REDACTED:secret]");
    assert_eq!(out["nested"]["apiKey"], "[REDACTED:secret]");
    assert_eq!(out["nested"]["API_KEY"], "[REDACTED:secret]");
    assert_eq!(out["nested"]["x-api-key"], "[REDACTED:secret]");
    assert_eq!(out["list"][0]["Authorization"], "[REDACTED:secret]");
    assert_eq!(out["list"][1]["access_token"], "[REDACTED:secret]");
    assert_eq!(out["list"][2]["TOKEN"], "[REDACTED:secret]");
    // Non-string values are walked, not replaced.
    assert_eq!(out["token"]["inner"], "not a secret by itself");
    assert_eq!(out["max_tokens"], "100");
    assert_eq!(out["tokenizer"], "cl100k");
    assert_eq!(out["secret"], "");
    assert!(is_secret_key("DB_PASSWORD") && !is_secret_key("username"));
}

#[test]
fn key_value_pairs_and_url_passwords_in_text() {
    assert_eq!(redact_text("password=hunter2&user=bob"), "password=[REDACTED:secret]&user=bob");
    assert_eq!(redact_text("GET /x?access_token=abc123 HTTP/1.1"), "GET /x?access_token=[REDACTED:secret] HTTP/1.1");
    assert_eq!(
        redact_text(r#"{"password": "two words", "user": "bob""#),
        r#"{"password": "[REDACTED:secret]", "user": "bob""#
    );
    assert_eq!(redact_text("Authorization: Basic dXNlcjpwYXNz"), "Authorization: Basic [REDACTED:secret]");
    assert_eq!(redact_text("postgres://app:s3cr3t@db:5432/x"), "postgres://app:[REDACTED:password]@db:5432/x");
    assert_eq!(redact_text("https://host:8443/path@v2"), "https://host:8443/path@v2");
}

#[test]
fn ordinary_text_is_left_alone() {
    for text in [
        "Summarise the report for 2024-05-01 at 10:30",
        "install sk-learn-preprocessing-helpers today",
        "the risk-assessment-framework-version-two",
        "a basic understanding of tokens",
        "call 555-0100 or order #123456",
        "ghp_short",
    ] {
        assert_eq!(redact_text(text), text);
    }
}

/// The report of issue 28: a fake key header hid a payload from the
/// approver and the audit. A mask never reaches past the secret's own span.
#[test]
fn a_mask_never_reaches_past_the_secret_it_hides() {
    let payload = "DROP TABLE tmp_import; -- -----BEGIN PRIVATE KEY-----\nDROP DATABASE production;";
    assert_eq!(redact_text(payload), "DROP TABLE tmp_import; -- [REDACTED:private-key]\nDROP DATABASE production;");
    // A header and an END line around text that is no key body: the header
    // alone is masked.
    let wrapped = "-----BEGIN PRIVATE KEY-----\nDROP DATABASE production;\n-----END PRIVATE KEY-----";
    assert!(redact_text(wrapped).contains("DROP DATABASE production;"), "{}", redact_text(wrapped));
    // Base64-looking lines that are no DER structure stay visible too.
    let fake = "-----BEGIN PRIVATE KEY-----\n/sbin/reboot\n-----END PRIVATE KEY-----";
    assert!(redact_text(fake).contains("/sbin/reboot"), "{}", redact_text(fake));
    // A quoted password is one line at most.
    let quoted = "password: \"x\nDROP DATABASE production\"";
    assert!(redact_text(quoted).contains("DROP DATABASE production"), "{}", redact_text(quoted));
    // A value under a secret-named key is masked whole only when it could be one.
    let long = format!("hunter2 {}; DROP DATABASE production", "x".repeat(300));
    let out = {
        let mut value = json!({"password": "line one\nDROP DATABASE production", "token": long});
        redact_value(&mut value);
        value
    };
    assert_eq!(out["password"], "line one\nDROP DATABASE production");
    assert!(out["token"].as_str().unwrap().ends_with("DROP DATABASE production"));
    // Spans are bounded and ordered; overlapping rules make one span.
    let text = format!("token={JWT} then {GITHUB}");
    let spans = warden_audit::secret_spans(&text);
    assert_eq!(spans.len(), 2, "{spans:?}");
    assert_eq!(&text[spans[0].start..spans[0].end], JWT);
    assert_eq!(&text[spans[1].start..spans[1].end], GITHUB);
}

#[test]
fn every_record_keeps_the_digest_of_the_complete_arguments() {
    // The digest is of the canonical form: key order and spaces do not matter.
    let a = warden_audit::arguments_digest(Some(r#"{"b": 1, "a": "sk-ant-api03-abcdefghijklmnopqrstuvwxyz"}"#));
    let b = warden_audit::arguments_digest(Some(r#"{"a":"sk-ant-api03-abcdefghijklmnopqrstuvwxyz","b":1}"#));
    assert_eq!(a, b);
    assert_ne!(a, warden_audit::arguments_digest(Some(r#"{"a":"[REDACTED:api-key]","b":1}"#)));
}
