use globset::GlobBuilder;

use super::{Language, Search, covers, find};
use crate::filter::Subject;
use crate::normalize::normalize_pattern;

fn name(pattern: &str) -> Language {
    Language::of(pattern, Subject::Name).expect("modelled")
}

fn uri(pattern: &str) -> Language {
    Language::of(pattern, Subject::Uri).expect("modelled")
}

#[test]
fn a_broader_glob_covers_a_narrower_one() {
    assert_eq!(covers(&name("*"), &name("read_*")), Some(true));
    assert_eq!(covers(&name("read_*"), &name("read_file")), Some(true));
    assert_eq!(covers(&name("read_*"), &name("read_?ile")), Some(true));
    assert_eq!(covers(&name("*_file"), &name("read_*")), Some(false));
    assert_eq!(covers(&name("read_file"), &name("read_*")), Some(false));
    assert_eq!(covers(&name("a*b*c"), &name("a*bc")), Some(true));
    assert_eq!(covers(&name("a*bc"), &name("a*b*c")), Some(false));
    assert_eq!(covers(&name("??"), &name("a?")), Some(true));
    assert_eq!(covers(&name("a?"), &name("a*")), Some(false));
}

#[test]
fn escapes_and_one_character_classes_are_literals() {
    assert_eq!(covers(&name("a\\*"), &name("a*")), Some(false));
    assert_eq!(covers(&name("a*"), &name("a\\*")), Some(true));
    assert_eq!(covers(&name("a[*]"), &name("a\\*")), Some(true));
    assert!(Language::of("a[bc]", Subject::Name).is_none(), "classes are not modelled");
    assert!(Language::of("{a,b}", Subject::Name).is_none(), "alternatives are not modelled");
    assert!(Language::of("a/**/b", Subject::Name).is_none());
}

#[test]
fn uri_stars_stay_in_their_segment() {
    assert_eq!(covers(&uri("file://docs/**"), &uri("file://docs/*")), Some(true));
    assert_eq!(covers(&uri("file://docs/*"), &uri("file://docs/**")), Some(false));
    assert_eq!(covers(&uri("file://docs/**"), &uri("file://docs/a/*.md")), Some(true));
    assert_eq!(covers(&uri("file://*"), &uri("file://docs/a")), Some(false));
    assert_eq!(covers(&uri("FILE://Docs/**"), &uri("file://docs/x")), Some(true), "compared normalised");
    assert!(Language::of("file://**/x", Subject::Uri).is_none());
}

#[test]
fn finds_a_name_in_some_globs_and_outside_others() {
    assert_eq!(find(&[&name("read_*"), &name("*_file")], &[]), Search::Found("read_file".into()));
    assert_eq!(find(&[&name("read_*"), &name("write_*")], &[]), Search::None);
    assert_eq!(find(&[&name("read_*"), &name("*")], &[&name("read_secret*")]), Search::Found("read_".into()));
    assert_eq!(find(&[&name("read_*")], &[&name("*")]), Search::None);
}

/// A tiny deterministic generator, so the check below needs no crate.
struct Dice(u64);

impl Dice {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }

    fn text(&mut self, alphabet: &[&str], most: usize) -> String {
        (0..self.below(most + 1)).map(|_| alphabet[self.below(alphabet.len())]).collect()
    }
}

/// The model agrees with globset: whenever it says one glob covers
/// another, no string matched by the narrower escapes the broader, and
/// whenever it finds a name in both, globset matches it with both.
#[test]
fn agrees_with_globset_on_random_globs() {
    let mut dice = Dice(0x5eed);
    for (subject, pieces, letters) in [
        (Subject::Name, &["a", "b", "_", "*", "?", "**", "/", "\\*"][..], &["a", "b", "_", "/", "*"][..]),
        (Subject::Uri, &["f://", "a", "b", "/", "*", "?", "/**"][..], &["f://", "a", "b", "/"][..]),
    ] {
        let compile = |pattern: &str| {
            let text = match subject {
                Subject::Name => pattern.to_owned(),
                Subject::Uri => normalize_pattern(pattern)?,
            };
            let literal = subject == Subject::Uri;
            Some(
                GlobBuilder::new(&text)
                    .literal_separator(literal)
                    .backslash_escape(!literal)
                    .build()
                    .ok()?
                    .compile_matcher(),
            )
        };
        let mut compared = 0;
        for _ in 0..3000 {
            let (a, b) = (dice.text(pieces, 4), dice.text(pieces, 4));
            let (Some(la), Some(lb), Some(ga), Some(gb)) =
                (Language::of(&a, subject), Language::of(&b, subject), compile(&a), compile(&b))
            else {
                continue;
            };
            compared += 1;
            if let Search::Found(both) = find(&[&la, &lb], &[]) {
                assert!(ga.is_match(&both) && gb.is_match(&both), "{subject:?} {a:?} {b:?}: {both:?}");
            }
            if covers(&la, &lb) == Some(true) {
                for _ in 0..200 {
                    let candidate = dice.text(letters, 6);
                    assert!(
                        !gb.is_match(&candidate) || ga.is_match(&candidate),
                        "{subject:?} {a:?} ⊇ {b:?}: {candidate:?}"
                    );
                }
            }
        }
        assert!(compared > 500, "{subject:?}: only {compared} pairs compared");
    }
}
