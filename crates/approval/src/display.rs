//! What a person is shown of a call's arguments: every byte that will run,
//! with secret-like spans marked (never hidden) and text made safe for a
//! terminal.
//!
//! The page and the CLI get the exact arguments and, beside them, the
//! [`Masked`] strings: each split into plain text and secrets, so a
//! secret is drawn as a marker that says its kind and length (the page
//! has a control to reveal it) and the parts always add up to the string
//! that runs. The spans come from the audit log's bounded rules
//! ([`warden_audit::value_secret_spans`]): no mask reaches past a secret.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One string of the arguments that holds a secret-like span.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Masked {
    /// Where the string is in the arguments (a JSON pointer, RFC 6901).
    pub pointer: String,
    /// The string, in order: plain text and secrets. Joined, they are the
    /// string exactly.
    pub parts: Vec<Part>,
}

/// A piece of a [`Masked`] string.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Part {
    /// A secret-like span: shown as a marker until revealed.
    Secret {
        /// The span's text.
        secret: String,
        /// What it looks like (`private-key`, `api-key`, `secret`, ...).
        kind: String,
    },
    /// Text shown as it is.
    Text {
        /// The text.
        text: String,
    },
}

/// The strings of `arguments` that hold secret-like spans.
pub fn masks(arguments: &Value) -> Vec<Masked> {
    let mut found = Vec::new();
    walk(arguments, None, &mut String::new(), &mut found);
    found
}

fn walk(value: &Value, key: Option<&str>, pointer: &mut String, found: &mut Vec<Masked>) {
    match value {
        Value::String(text) => {
            let spans = warden_audit::value_secret_spans(key, text);
            if spans.is_empty() {
                return;
            }
            let mut parts = Vec::new();
            let mut at = 0;
            for span in spans {
                if at < span.start {
                    parts.push(Part::Text { text: text[at..span.start].to_owned() });
                }
                parts.push(Part::Secret { secret: text[span.start..span.end].to_owned(), kind: span.kind.to_owned() });
                at = span.end;
            }
            if at < text.len() {
                parts.push(Part::Text { text: text[at..].to_owned() });
            }
            found.push(Masked { pointer: pointer.clone(), parts });
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                let len = pointer.len();
                pointer.push('/');
                pointer.push_str(&index.to_string());
                walk(item, None, pointer, found);
                pointer.truncate(len);
            }
        }
        Value::Object(map) => {
            for (name, item) in map {
                let len = pointer.len();
                pointer.push('/');
                pointer.push_str(&name.replace('~', "~0").replace('/', "~1"));
                walk(item, Some(name), pointer, found);
                pointer.truncate(len);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// How a secret is drawn where it cannot be revealed (the terminal, the
/// elicitation message): `⟦secret api-key, 41 chars⟧`. Client text that
/// contains `⟦` or `⟧` has them escaped by [`terminal_safe`], so no string
/// can pass itself off as a marker.
pub fn marker(kind: &str, secret: &str) -> String {
    format!("⟦secret {kind}, {} chars⟧", secret.chars().count())
}

/// `arguments` for a terminal: each masked span replaced by its
/// [`marker`], every other string and every key made [`terminal_safe`].
pub fn for_terminal(arguments: &Value, masked: &[Masked]) -> Value {
    let by_pointer: std::collections::HashMap<&str, &Masked> = masked.iter().map(|m| (m.pointer.as_str(), m)).collect();
    shown(arguments, &mut String::new(), &by_pointer)
}

fn shown(value: &Value, pointer: &mut String, masked: &std::collections::HashMap<&str, &Masked>) -> Value {
    match value {
        Value::String(text) => Value::String(match masked.get(pointer.as_str()) {
            Some(m) => m
                .parts
                .iter()
                .map(|part| match part {
                    Part::Text { text } => terminal_safe(text, true),
                    Part::Secret { secret, kind } => marker(&terminal_safe(kind, false), secret),
                })
                .collect(),
            None => terminal_safe(text, true),
        }),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(index, item)| {
                    let len = pointer.len();
                    pointer.push_str(&format!("/{index}"));
                    let item = shown(item, pointer, masked);
                    pointer.truncate(len);
                    item
                })
                .collect(),
        ),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(name, item)| {
                    let len = pointer.len();
                    pointer.push('/');
                    pointer.push_str(&name.replace('~', "~0").replace('/', "~1"));
                    let item = shown(item, pointer, masked);
                    pointer.truncate(len);
                    (terminal_safe(name, false), item)
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// `text` safe to print on a terminal: control characters (C0 but the
/// line breaks and tabs a caller keeps with `keep_lines`, DEL, C1),
/// direction overrides and isolates, and zero-width characters are shown
/// as `\u{…}` escapes; so are the marker brackets `⟦` `⟧`. Nothing a client
/// sends can move the cursor, clear the screen, recolour or reorder text.
pub fn terminal_safe(text: &str, keep_lines: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let keep = keep_lines && matches!(c, '\n' | '\t');
        if !keep && is_unsafe(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// Characters that change how the text around them looks.
fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}' | '\u{061c}' | '⟦' | '⟧')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parts_add_up_to_the_string_and_markers_say_kind_and_length() {
        let arguments = json!({"q": {"a/b": ["x", "DROP; -- -----BEGIN PRIVATE KEY-----\nDROP DATABASE production;"]}, "password": "hunter2"});
        let masked = masks(&arguments);
        assert_eq!(masked.len(), 2, "{masked:?}");
        for m in &masked {
            let joined: String = m
                .parts
                .iter()
                .map(|p| match p {
                    Part::Text { text } => text.as_str(),
                    Part::Secret { secret, .. } => secret.as_str(),
                })
                .collect();
            assert_eq!(Some(&Value::String(joined)), arguments.pointer(&m.pointer));
        }
        let shown = for_terminal(&arguments, &masked);
        assert_eq!(shown["password"], "⟦secret secret, 7 chars⟧");
        assert_eq!(shown["q"]["a/b"][1], "DROP; -- ⟦secret private-key, 27 chars⟧\nDROP DATABASE production;");
    }

    #[test]
    fn terminal_escapes_and_text_that_hides_text_are_shown_as_escapes() {
        let name = "evil\x1b[2J\x1b[H\x1b[32mTrusted IDE\x1b[0m\u{202e}txt.exe\u{200b}\u{9b}⟦secret⟧";
        let safe = terminal_safe(name, false);
        assert!(!safe.chars().any(is_unsafe), "{safe}");
        assert_eq!(
            safe,
            "evil\\u{1b}[2J\\u{1b}[H\\u{1b}[32mTrusted IDE\\u{1b}[0m\\u{202e}txt.exe\\u{200b}\\u{9b}\\u{27e6}secret\\u{27e7}"
        );
        assert_eq!(terminal_safe("a\nb\tc\r", true), "a\nb\tc\\u{d}");
    }
}
