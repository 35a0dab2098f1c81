//! Python `re` patterns from MCP Sentinel configs, translated on import:
//! the translation ends in a pattern or a reason, never a crash; its
//! output is bounded, and translating never makes a pattern that the
//! `regex` crate (with size limits) cannot at least try to compile safely.
//! Where a pattern is plain literal text, the translation matches exactly
//! that text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use regex::RegexBuilder;
use warden_import::translate_python_regex;

fuzz_target!(|data: &[u8]| {
    let Ok(pattern) = std::str::from_utf8(data) else { return };
    let Ok(translated) = translate_python_regex(pattern) else { return };
    assert!(translated.len() <= 16 * pattern.len() + 16, "{pattern:?} grew to {translated:?}");
    let compiled = RegexBuilder::new(&translated).size_limit(1 << 20).dfa_size_limit(1 << 20).build();
    // Plain text (no metacharacter at all) must match itself and only as a substring.
    let plain = !pattern.chars().any(|c| "\\.^$*+?{}[]()|#".contains(c) || c.is_whitespace());
    if plain && !pattern.is_empty() {
        let regex = compiled.unwrap_or_else(|err| panic!("plain {pattern:?} -> {translated:?}: {err}"));
        assert!(regex.is_match(pattern), "{pattern:?} -> {translated:?} does not match itself");
        let other: String = pattern.chars().rev().collect::<String>() + "\u{1}";
        if !other.contains(pattern) {
            assert!(!regex.is_match(&other) || pattern.chars().count() < 2, "{pattern:?} matched {other:?}");
        }
    }
});
