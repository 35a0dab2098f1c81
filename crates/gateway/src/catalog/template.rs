//! Matching resource URIs against RFC 6570 URI templates.

use regex::Regex;

/// A URI template compiled to an anchored regular expression.
#[derive(Debug, Clone)]
pub struct UriTemplate {
    text: String,
    matcher: Regex,
}

impl UriTemplate {
    /// Compiles `template`. Returns `None` for a template that is not valid
    /// (unbalanced braces); such a template never matches anything.
    pub fn new(template: &str) -> Option<UriTemplate> {
        let mut pattern = String::from("^");
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            pattern.push_str(&regex::escape(&rest[..open]));
            let close = rest[open..].find('}')? + open;
            pattern.push_str(expression(&rest[open + 1..close]));
            rest = &rest[close + 1..];
        }
        if rest.contains('}') {
            return None;
        }
        pattern.push_str(&regex::escape(rest));
        pattern.push('$');
        let matcher = Regex::new(&pattern).ok()?;
        Some(UriTemplate { text: template.to_owned(), matcher })
    }

    /// The template as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether `uri` is an expansion of this template.
    pub fn matches(&self, uri: &str) -> bool {
        self.matcher.is_match(uri)
    }
}

/// `template` with each expression replaced by its variables' values
/// (`value_of`; an unknown one is empty), unencoded: the URI at its most
/// literal, for judging what a server could take it to name (a server that
/// decodes `{path}` reads `a%2Fb` as `a/b`). Not for sending.
pub fn expand_literally<'v>(template: &str, value_of: impl Fn(&str) -> Option<&'v str>) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}').map(|close| close + open) else { break };
        out.push_str(&rest[..open]);
        let body = &rest[open + 1..close];
        let (prefix, names) = match body.chars().next() {
            Some(operator @ ('/' | '.' | '#' | ';' | '?' | '&')) => (operator.to_string(), &body[1..]),
            Some('+') => (String::new(), &body[1..]),
            _ => (String::new(), body),
        };
        let values: Vec<&str> = names
            .split(',')
            .filter_map(|name| value_of(name.trim_end_matches('*').split(':').next().unwrap_or(name)))
            .collect();
        if !values.is_empty() {
            out.push_str(&prefix);
            out.push_str(&values.join(","));
        }
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

/// The pattern for one `{...}` expression, by its operator.
fn expression(body: &str) -> &'static str {
    match body.chars().next() {
        // Reserved expansion and fragments may contain '/', '?' and '#'.
        Some('+') => ".*",
        Some('#') => "(?:#.*)?",
        Some('/') => "(?:/[^/?#]*)*",
        Some('.') => r"(?:\.[^/?#.]*)*",
        Some(';') => "(?:;[^/?#]*)*",
        Some('?') | Some('&') => "(?:[?&][^#]*)?",
        // Simple expansion: one or more values without reserved characters.
        _ => "[^/?#]*",
    }
}

#[cfg(test)]
mod tests {
    use super::UriTemplate;

    #[test]
    fn matches_rfc6570_forms() {
        let simple = UriTemplate::new("fixture://items/{id}").unwrap();
        assert!(simple.matches("fixture://items/42"));
        assert!(!simple.matches("fixture://items/42/more"));
        assert!(!simple.matches("fixture://other/42"));
        let reserved = UriTemplate::new("file:///{+path}").unwrap();
        assert!(reserved.matches("file:///home/u/a.txt"));
        let query = UriTemplate::new("https://api.example.com/search{?q,limit}").unwrap();
        assert!(query.matches("https://api.example.com/search?q=x&limit=3"));
        assert!(query.matches("https://api.example.com/search"));
        let path = UriTemplate::new("repo://{owner}{/path}").unwrap();
        assert!(path.matches("repo://me/a/b"));
        let dots = UriTemplate::new("x://a.b/{id}").unwrap();
        assert!(!dots.matches("x://aXb/1"), "literal dots are escaped");
        assert!(UriTemplate::new("x://{unclosed").is_none());
    }

    #[test]
    fn expands_literally_for_judging() {
        use super::expand_literally;
        let value = |name: &str| match name {
            "path" => Some("home/u/.ssh/id"),
            "owner" => Some("me"),
            _ => None,
        };
        assert_eq!(expand_literally("file:///{path}", value), "file:///home/u/.ssh/id");
        assert_eq!(expand_literally("file:///{+path}", value), "file:///home/u/.ssh/id");
        assert_eq!(expand_literally("repo://{owner}{/path}", value), "repo://me/home/u/.ssh/id");
        assert_eq!(expand_literally("x://{owner}{?q,limit}", value), "x://me");
        assert_eq!(expand_literally("x://{path:3}/{unknown}", value), "x://home/u/.ssh/id/");
        assert_eq!(expand_literally("x://{unclosed", value), "x://{unclosed");
    }
}
