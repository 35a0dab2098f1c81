//! Finding where a key sits in a config file, to point errors at a line.

/// The line and column (1-based) of the last key of `path`, found by looking
/// for each key in turn after the previous one. Works for YAML and JSON as
/// people write them (one key per line); `None` when a key is not found.
pub fn locate(text: &str, path: &[&str]) -> Option<(usize, usize)> {
    let mut from_line = 0;
    let mut found = None;
    for key in path {
        let (line, column) = text
            .lines()
            .enumerate()
            .skip(from_line)
            .find_map(|(index, line)| key_column(line, key).map(|column| (index, column)))?;
        from_line = line + 1;
        found = Some((line + 1, column + 1));
    }
    found
}

/// The column where `key` starts as a key on `line` (`key:`, `"key":`, `'key':`).
fn key_column(line: &str, key: &str) -> Option<usize> {
    for quote in ["", "\"", "'"] {
        let needle = format!("{quote}{key}{quote}");
        let mut start = 0;
        while let Some(at) = line[start..].find(&needle) {
            let column = start + at;
            let before = line[..column].trim_end();
            let after = line[column + needle.len()..].trim_start();
            let starts_key = before.is_empty() || before.ends_with(['{', ',', '-']);
            if starts_key && after.starts_with(':') {
                return Some(column);
            }
            start = column + needle.len();
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::locate;

    #[test]
    fn finds_nested_keys_in_yaml_and_json() {
        let yaml = "servers:\n  fs:\n    transport: {kind: stdio}\nprofiles:\n  safe:\n    servers:\n      fs: {}\n      gh: {}\n";
        assert_eq!(locate(yaml, &["profiles", "safe", "servers", "gh"]), Some((8, 7)));
        assert_eq!(locate(yaml, &["servers", "fs", "transport"]), Some((3, 5)));
        let json = "{\n  \"profiles\": {\n    \"dev\": {\"servers\": {\"x\": {}}}\n  }\n}";
        assert_eq!(locate(json, &["profiles", "dev"]), Some((3, 5)));
        assert_eq!(locate(yaml, &["profiles", "nope"]), None);
    }
}
