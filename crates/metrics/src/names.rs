//! Label values that stay bounded.
//!
//! Server names come from the config, tool and prompt names from the
//! servers' own lists, rule names from the policy: none from a client. Even
//! so, a server can list thousands of tools, and a time series per value
//! costs the scraper memory for as long as it keeps it. So each kind of
//! name is interned up to a cap, and every later new value is counted as
//! `other` (as MCPJungle and Envoy do).

use std::sync::{Arc, RwLock};

use rustc_hash::FxHashSet;
use warden_sync::{read, write};

/// What a value past the cap is counted as.
pub const OTHER: &str = "other";

/// The longest value kept as it is; a longer one is cut (at a character
/// boundary), as a label is for reading, not for identifying.
const MAX_LEN: usize = 128;

/// Interned label values of one kind, at most `cap` of them.
#[derive(Debug)]
pub(crate) struct Names {
    known: RwLock<FxHashSet<Arc<str>>>,
    other: Arc<str>,
    cap: usize,
}

impl Names {
    /// Room for `cap` distinct values.
    pub(crate) fn new(cap: usize) -> Names {
        Names { known: RwLock::new(FxHashSet::default()), other: Arc::from(OTHER), cap }
    }

    /// `name` as a label value: shared with every earlier use, or `other`
    /// once the cap is reached. Allocates only the first time a name is seen.
    pub(crate) fn get(&self, name: &str) -> Arc<str> {
        let name = cut(name);
        if let Some(known) = read(&self.known).get(name) {
            return known.clone();
        }
        let mut known = write(&self.known);
        if let Some(known) = known.get(name) {
            return known.clone();
        }
        if known.len() >= self.cap {
            return self.other.clone();
        }
        let interned: Arc<str> = Arc::from(name);
        known.insert(interned.clone());
        interned
    }
}

/// `name` cut to [`MAX_LEN`] bytes at a character boundary.
pub(crate) fn cut(name: &str) -> &str {
    if name.len() <= MAX_LEN {
        return name;
    }
    let mut end = MAX_LEN;
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    &name[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_past_the_cap_count_as_other() {
        let names = Names::new(2);
        let first = names.get("a");
        assert!(Arc::ptr_eq(&first, &names.get("a")), "a name is interned once");
        assert_eq!(&*names.get("b"), "b");
        assert_eq!(&*names.get("c"), OTHER);
        assert_eq!(&*names.get("a"), "a", "known names stay");
    }

    #[test]
    fn long_names_are_cut_at_a_character_boundary() {
        let names = Names::new(4);
        let long = "é".repeat(100);
        let got = names.get(&long);
        assert!(got.len() <= MAX_LEN && long.starts_with(&*got));
    }
}
