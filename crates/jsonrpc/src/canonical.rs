//! One canonical text of a JSON value, so that two parties hashing the same
//! arguments or definition agree byte for byte: the approval's digest, the
//! audit's `argumentsDigest` and the pins' fingerprints all use it.

use serde_json::Value;

/// Compact JSON with keys sorted, whatever map type serde_json was built with.
pub fn canonical_text(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let members: Vec<String> = keys
                .into_iter()
                .map(|key| format!("{}:{}", Value::String(key.clone()), canonical_text(&map[key])))
                .collect();
            format!("{{{}}}", members.join(","))
        }
        Value::Array(items) => format!("[{}]", items.iter().map(canonical_text).collect::<Vec<_>>().join(",")),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::canonical_text;

    #[test]
    fn keys_are_sorted_at_every_depth_and_nothing_else_changes() {
        let value = serde_json::json!({"b": [{"z": 1, "a": "x"}], "a": null});
        assert_eq!(canonical_text(&value), r#"{"a":null,"b":[{"a":"x","z":1}]}"#);
    }
}
