//! Entries of one allow/deny pair that can never change what is visible.
//!
//! A key is visible when no deny glob matches it and, if there are allow
//! globs, one of them does (see [`CompiledFilter`](crate::filter::CompiledFilter)).
//! The order of the globs only decides which one a reason names. So an entry
//! is dead weight when:
//!
//! - it is written twice in its list;
//! - another entry of the same list matches everything it matches (it is
//!   shadowed: the other one already allows, or denies, all of it);
//! - it is an allow entry and one deny entry matches everything it matches
//!   (it never lets anything through);
//! - it is a deny entry, there are allow entries, and none of them matches
//!   anything it matches (nothing it hides would have been visible).
//!
//! Each is only reported when it is decided (see [`crate::language`]).

use warden_config::Filter;

use crate::filter::Subject;
use crate::language::{Language, Search, covers, find};

/// One entry of a list, with its language when that is modelled.
struct Entry<'a> {
    list: &'static str,
    written: &'a str,
    language: Option<Language>,
}

/// Why entries of `filter` change nothing, one sentence each; `place` starts
/// each, such as `profile "safe", server "fs", tools`.
pub(crate) fn shadowed(place: &str, filter: &Filter, subject: Subject) -> Vec<String> {
    let allow = entries("allow", &filter.allow, subject);
    let deny = entries("deny", &filter.deny, subject);
    let mut warnings = Vec::new();
    for (index, entry) in allow.iter().enumerate() {
        if let Some(denier) = deny.iter().find(|denier| both_cover(denier, entry)) {
            warnings.push(format!(
                "{place}: allow {:?} never lets anything through: deny {:?} hides everything it matches",
                entry.written, denier.written
            ));
        } else if let Some(warning) = within_list(place, &allow, index) {
            warnings.push(warning);
        }
    }
    for (index, entry) in deny.iter().enumerate() {
        if let Some(warning) = within_list(place, &deny, index) {
            warnings.push(warning);
        } else if !allow.is_empty() && reaches_no_allow(entry, &allow) {
            let allowed: Vec<String> = allow.iter().map(|allowed| format!("{:?}", allowed.written)).collect();
            warnings.push(format!(
                "{place}: deny {:?} has no effect: no allow entry ({}) lets through anything it matches",
                entry.written,
                allowed.join(", ")
            ));
        }
    }
    warnings
}

fn entries<'a>(list: &'static str, patterns: &'a [String], subject: Subject) -> Vec<Entry<'a>> {
    patterns.iter().map(|pattern| Entry { list, written: pattern, language: Language::of(pattern, subject) }).collect()
}

/// Whether `outer` is decided to match everything `inner` matches.
fn both_cover(outer: &Entry<'_>, inner: &Entry<'_>) -> bool {
    match (&outer.language, &inner.language) {
        (Some(outer), Some(inner)) => covers(outer, inner) == Some(true),
        _ => outer.written == inner.written,
    }
}

/// Why entry `index` of `list` adds nothing to the others, if it does not.
fn within_list(place: &str, list: &[Entry<'_>], index: usize) -> Option<String> {
    let entry = &list[index];
    let kind = entry.list;
    if list[..index].iter().any(|earlier| earlier.written == entry.written) {
        return Some(format!("{place}: {kind} {:?} is listed twice", entry.written));
    }
    let shadow = list.iter().enumerate().find(|(other, broader)| {
        *other != index
            && broader.written != entry.written
            && both_cover(broader, entry)
            // Two globs that match the same names: only the later is reported.
            && (*other < index || !both_cover(entry, broader))
    })?;
    let (other, broader) = shadow;
    let order = if other < index { "an earlier" } else { "a later" };
    Some(format!(
        "{place}: {kind} {:?} is shadowed by {order} {kind} entry {:?}, which matches everything it matches",
        entry.written, broader.written
    ))
}

/// Whether deny `entry` is decided to share no key with any allow entry.
fn reaches_no_allow(entry: &Entry<'_>, allow: &[Entry<'_>]) -> bool {
    let Some(denied) = &entry.language else { return false };
    allow
        .iter()
        .all(|allowed| allowed.language.as_ref().is_some_and(|allowed| find(&[denied, allowed], &[]) == Search::None))
}

#[cfg(test)]
mod tests {
    use warden_config::Filter;

    use super::shadowed;
    use crate::filter::Subject;

    fn warnings(allow: &[&str], deny: &[&str], subject: Subject) -> Vec<String> {
        let filter = Filter {
            allow: allow.iter().map(|s| s.to_string()).collect(),
            deny: deny.iter().map(|s| s.to_string()).collect(),
        };
        shadowed("p", &filter, subject)
    }

    #[test]
    fn an_allow_covered_by_a_deny_never_lets_anything_through() {
        assert_eq!(
            warnings(&["read_*", "write_file"], &["write_*"], Subject::Name),
            ["p: allow \"write_file\" never lets anything through: deny \"write_*\" hides everything it matches"]
        );
        assert!(warnings(&["write_*"], &["write_file"], Subject::Name).is_empty(), "a narrower deny is fine");
    }

    #[test]
    fn duplicates_and_shadowed_entries_are_named_with_the_broader_one() {
        assert_eq!(warnings(&["echo", "echo"], &[], Subject::Name), ["p: allow \"echo\" is listed twice"]);
        assert_eq!(
            warnings(&["read_*", "read_file"], &[], Subject::Name),
            [
                "p: allow \"read_file\" is shadowed by an earlier allow entry \"read_*\", which matches everything it matches"
            ]
        );
        assert_eq!(
            warnings(&[], &["x_?", "x_*"], Subject::Name),
            ["p: deny \"x_?\" is shadowed by a later deny entry \"x_*\", which matches everything it matches"]
        );
        // Two spellings of one set: only the later is reported.
        assert_eq!(warnings(&["a*", "a**"], &[], Subject::Name).len(), 1);
    }

    #[test]
    fn a_deny_no_allow_reaches_has_no_effect() {
        assert_eq!(
            warnings(&["read_*"], &["write_*"], Subject::Name),
            ["p: deny \"write_*\" has no effect: no allow entry (\"read_*\") lets through anything it matches"]
        );
        assert!(warnings(&[], &["write_*"], Subject::Name).is_empty(), "no allow list: everything is allowed");
        assert!(warnings(&["*_file"], &["write_*"], Subject::Name).is_empty(), "write_file is reached");
    }

    #[test]
    fn undecided_globs_never_warn() {
        assert!(warnings(&["{read,list}_*", "read_file"], &["[wx]*"], Subject::Name).is_empty());
    }

    #[test]
    fn resources_compare_normalised_uris_by_segment() {
        assert_eq!(
            warnings(&["file://docs/**", "FILE://Docs/a/*"], &[], Subject::Uri),
            [
                "p: allow \"FILE://Docs/a/*\" is shadowed by an earlier allow entry \"file://docs/**\", which matches everything it matches"
            ]
        );
        assert!(warnings(&["file://docs/*"], &["file://docs/a/*"], Subject::Uri).len() == 1, "deny out of reach");
        assert!(warnings(&["file://docs/**"], &["file://docs/a/*"], Subject::Uri).is_empty());
    }
}
