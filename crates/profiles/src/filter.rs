//! One compiled allow/deny pair: the globs of a profile for one kind of
//! component on one server.

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};
use warden_config::Filter;

use crate::normalize::normalize_pattern;

/// What the globs are matched against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Subject {
    /// Tool and prompt names: `*` matches any characters.
    Name,
    /// Resource URIs and templates, normalised: `*` stops at `/`, `**` does not.
    Uri,
}

/// A pattern that could not be compiled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BadPattern {
    /// `"allow"` or `"deny"`.
    pub(crate) list: &'static str,
    /// The pattern as written.
    pub(crate) pattern: String,
    /// What is wrong with it.
    pub(crate) reason: String,
}

/// How a key fared against a filter, naming the pattern that decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict<'a> {
    /// A deny pattern matched (deny wins over allow).
    Denied(&'a str),
    /// An allow pattern matched.
    Allowed(&'a str),
    /// There are allow patterns and none matched.
    NotAllowed,
    /// There are no allow patterns, and no deny pattern matched.
    AllowedByDefault,
}

impl Verdict<'_> {
    /// Whether the key is visible.
    pub(crate) fn visible(self) -> bool {
        matches!(self, Verdict::Allowed(_) | Verdict::AllowedByDefault)
    }
}

/// One list of globs, compiled, with the patterns as written for reasons.
#[derive(Debug)]
struct Globs {
    written: Vec<String>,
    set: GlobSet,
}

impl Globs {
    fn compile(list: &'static str, patterns: &[String], subject: Subject, bad: &mut Vec<BadPattern>) -> Globs {
        let mut builder = GlobSetBuilder::new();
        let mut written = Vec::with_capacity(patterns.len());
        let mut failed = false;
        for pattern in patterns {
            match glob(pattern, subject) {
                Ok(glob) => {
                    builder.add(glob);
                    written.push(pattern.clone());
                }
                Err(reason) => {
                    failed = true;
                    bad.push(BadPattern { list, pattern: pattern.clone(), reason });
                }
            }
        }
        let set = match builder.build() {
            Ok(set) => set,
            Err(err) => {
                // Only limits (such as the regex size) fail here; name the whole list.
                if !failed {
                    bad.push(BadPattern { list, pattern: patterns.join(", "), reason: err.to_string() });
                }
                GlobSet::empty()
            }
        };
        Globs { written, set }
    }

    /// The first pattern (as written) that matches `key`.
    fn first_match(&self, key: &str) -> Option<&str> {
        let index = self.set.matches(key).into_iter().min()?;
        self.written.get(index).map(String::as_str)
    }
}

/// Compiles one glob for `subject`.
fn glob(pattern: &str, subject: Subject) -> Result<Glob, String> {
    match subject {
        Subject::Name => GlobBuilder::new(pattern).literal_separator(false).backslash_escape(true).build(),
        Subject::Uri => {
            let normal = normalize_pattern(pattern).ok_or_else(|| {
                "cannot be normalised as a URI (a \"..\" above its start, a NUL byte or invalid percent-encoding)"
                    .to_owned()
            })?;
            // Normalisation turned backslashes into '/', so none is an escape.
            GlobBuilder::new(&normal).literal_separator(true).backslash_escape(false).build()
        }
    }
    .map_err(|err| err.kind().to_string())
}

/// A compiled [`Filter`]: allow and deny globs.
#[derive(Debug)]
pub(crate) struct CompiledFilter {
    allow: Globs,
    deny: Globs,
}

impl CompiledFilter {
    /// Compiles `filter`, or returns every pattern that is not valid.
    pub(crate) fn compile(filter: &Filter, subject: Subject) -> Result<CompiledFilter, Vec<BadPattern>> {
        let mut bad = Vec::new();
        let allow = Globs::compile("allow", &filter.allow, subject, &mut bad);
        let deny = Globs::compile("deny", &filter.deny, subject, &mut bad);
        if bad.is_empty() { Ok(CompiledFilter { allow, deny }) } else { Err(bad) }
    }

    /// Whether `key` (already normalised, for URIs) passes.
    pub(crate) fn passes(&self, key: &str) -> bool {
        !self.deny.set.is_match(key) && (self.allow.written.is_empty() || self.allow.set.is_match(key))
    }

    /// How `key` (already normalised, for URIs) fares, with the deciding pattern.
    pub(crate) fn judge(&self, key: &str) -> Verdict<'_> {
        if let Some(pattern) = self.deny.first_match(key) {
            return Verdict::Denied(pattern);
        }
        if self.allow.written.is_empty() {
            return Verdict::AllowedByDefault;
        }
        match self.allow.first_match(key) {
            Some(pattern) => Verdict::Allowed(pattern),
            None => Verdict::NotAllowed,
        }
    }
}

#[cfg(test)]
mod tests {
    use warden_config::Filter;

    use super::{CompiledFilter, Subject, Verdict};

    fn filter(allow: &[&str], deny: &[&str], subject: Subject) -> CompiledFilter {
        let filter = Filter {
            allow: allow.iter().map(|s| s.to_string()).collect(),
            deny: deny.iter().map(|s| s.to_string()).collect(),
        };
        CompiledFilter::compile(&filter, subject).expect("valid filter")
    }

    #[test]
    fn names_match_across_any_character() {
        let names = filter(&["read_*", "a/*"], &[], Subject::Name);
        assert!(names.passes("read_file"));
        assert!(names.passes("a/b/c"));
        assert!(!names.passes("write_file"));
    }

    #[test]
    fn uri_star_stops_at_slash_and_double_star_does_not() {
        let uris = filter(&["file://docs/*"], &[], Subject::Uri);
        assert!(uris.passes("file://docs/a.md"));
        assert!(!uris.passes("file://docs/a/b.md"));
        let deep = filter(&["file://docs/**"], &[], Subject::Uri);
        assert!(deep.passes("file://docs/a/b.md"));
        assert!(!deep.passes("file://docsx/a.md"));
    }

    #[test]
    fn judge_names_the_deciding_pattern() {
        let names = filter(&["x*", "read_*"], &["*_secret"], Subject::Name);
        assert_eq!(names.judge("read_file"), Verdict::Allowed("read_*"));
        assert_eq!(names.judge("read_secret"), Verdict::Denied("*_secret"));
        assert_eq!(names.judge("write"), Verdict::NotAllowed);
        assert_eq!(filter(&[], &[], Subject::Name).judge("any"), Verdict::AllowedByDefault);
    }

    #[test]
    fn decoded_metacharacters_match_literally() {
        let uris = filter(&["file://a%2Ab", "file://%5Bx%5D"], &[], Subject::Uri);
        assert!(uris.passes("file://a*b"));
        assert!(!uris.passes("file://axb"));
        assert!(uris.passes("file://[x]"));
    }

    #[test]
    fn reports_every_bad_pattern() {
        let filter = Filter { allow: vec!["[a".into(), "ok".into()], deny: vec!["{b".into()] };
        let bad = CompiledFilter::compile(&filter, Subject::Name).expect_err("invalid");
        let found: Vec<_> = bad.iter().map(|b| (b.list, b.pattern.as_str())).collect();
        assert_eq!(found, [("allow", "[a"), ("deny", "{b")]);
    }
}
