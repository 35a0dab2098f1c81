//! Substring tests, case-insensitive ones without a lower-cased copy.
//!
//! A test with `ignoreCase` has its needle lower-cased when compiled and
//! the value lower-cased when tested. For ASCII text `to_lowercase` is
//! `to_ascii_lowercase`, so ASCII values are compared byte by byte, folding
//! as they go; other text is lower-cased into a copy as before.

/// Where the needle must be.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Place {
    Anywhere,
    Start,
    End,
}

impl Place {
    fn find(self, text: &str, needle: &str) -> bool {
        match self {
            Place::Anywhere => text.contains(needle),
            Place::Start => text.starts_with(needle),
            Place::End => text.ends_with(needle),
        }
    }
}

/// Whether `text`, lower-cased first when `ignore_case`, has `needle` (already
/// lower-cased when `ignore_case`) at `place`.
pub(crate) fn has(text: &str, needle: &str, ignore_case: bool, place: Place) -> bool {
    if !ignore_case {
        return place.find(text, needle);
    }
    if !text.is_ascii() {
        return place.find(&text.to_lowercase(), needle);
    }
    let (text, needle) = (text.as_bytes(), needle.as_bytes());
    if needle.is_empty() {
        return true;
    }
    // `needle` is lower case, so folding it too changes nothing; a non-ASCII
    // byte of it never equals an ASCII one, as with the lower-cased copy.
    let at = |start: usize| text.get(start..start + needle.len()).is_some_and(|w| w.eq_ignore_ascii_case(needle));
    match place {
        Place::Anywhere => text.windows(needle.len()).any(|w| w.eq_ignore_ascii_case(needle)),
        Place::Start => at(0),
        Place::End => text.len().checked_sub(needle.len()).is_some_and(at),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folding_as_it_goes_is_lower_casing_a_copy() {
        let texts =
            ["", "a", "Secret13", "SHOW ME THE SECRET13 NOW", "sEcReT", "ÉCOLE secret", "İstanbul", "ß", "x-Y_z"];
        let needles = ["", "a", "secret13", "secret", "now", "é", "i̇", "ss", "x-y", "école secret", "z"];
        for text in texts {
            for needle in needles {
                for place in [Place::Anywhere, Place::Start, Place::End] {
                    for ignore_case in [false, true] {
                        let needle = if ignore_case { needle.to_lowercase() } else { needle.to_owned() };
                        let copy = if ignore_case { text.to_lowercase() } else { text.to_owned() };
                        assert_eq!(
                            has(text, &needle, ignore_case, place),
                            place.find(&copy, &needle),
                            "{text:?} {needle:?} {place:?} {ignore_case}"
                        );
                    }
                }
            }
        }
    }
}
