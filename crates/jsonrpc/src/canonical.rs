//! The canonical JSON text of a value: object keys sorted at every depth,
//! no whitespace, nothing else changed. Digests (audit records, approvals,
//! pins) are taken over it, so equal values hash equally however they were
//! written.

use std::sync::OnceLock;

use serde_json::Value;

/// `value` as canonical JSON text (see the module docs).
pub fn canonical_text(value: &Value) -> String {
    // serde_json keeps object members sorted by key unless its
    // `preserve_order` feature is on somewhere in the build; then its plain
    // text is canonical already, written in one pass.
    if maps_are_sorted() {
        return value.to_string();
    }
    let mut out = String::new();
    write_sorted(value, &mut out);
    out
}

/// Whether serde_json's maps iterate in key order in this build.
fn maps_are_sorted() -> bool {
    static SORTED: OnceLock<bool> = OnceLock::new();
    *SORTED.get_or_init(|| {
        let mut map = serde_json::Map::new();
        map.insert("b".to_owned(), Value::Null);
        map.insert("a".to_owned(), Value::Null);
        map.keys().map(String::as_str).eq(["a", "b"])
    })
}

/// Writes `value` with its object keys sorted, at every depth.
fn write_sorted(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                if let Some(item) = map.get(key) {
                    write_sorted(item, out);
                }
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_sorted(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::{canonical_text, write_sorted};

    #[test]
    fn keys_are_sorted_at_every_depth_and_nothing_else_changes() {
        let value = serde_json::json!({"b": [{"z": 1, "a": "x"}], "a": null, "é": "\u{1F600}\n", "A": 1.5e300});
        let expected = "{\"A\":1.5e+300,\"a\":null,\"b\":[{\"a\":\"x\",\"z\":1}],\"é\":\"\u{1F600}\\n\"}";
        assert_eq!(canonical_text(&value), expected);
        // The one-pass text and the member-by-member one agree.
        let mut sorted = String::new();
        write_sorted(&value, &mut sorted);
        assert_eq!(sorted, expected);
    }
}
