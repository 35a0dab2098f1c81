//! What of an identifier counts: a path as given, a URL's host.

use crate::request::Identifier;

impl Identifier {
    /// What the model is shown and the user's words must name: a path as
    /// given; for a URL, its host in lower case. A git remote in scp form
    /// (`git@github.com:owner/repo`) counts as its host too; a URL without a
    /// host (`mailto:`, `file:///…`) or one that does not parse is taken
    /// whole.
    pub fn subject(&self) -> String {
        match self {
            Identifier::Path(path) => path.clone(),
            Identifier::Url(url) => host_of(url).unwrap_or_else(|| url.clone()),
        }
    }

    /// Whether this is a URL (checked as a host, case-insensitively).
    pub(crate) fn is_url(&self) -> bool {
        matches!(self, Identifier::Url(_))
    }

    /// What [`Identifier::subject`] is: `path` or `host`.
    pub(crate) fn kind(&self) -> &'static str {
        if self.is_url() { "host" } else { "path" }
    }
}

fn host_of(url: &str) -> Option<String> {
    let parsed = match reqwest::Url::parse(url) {
        Ok(parsed) => parsed,
        // Not absolute: perhaps `[user@]host:path`, git's scp-like form.
        Err(_) if !url.contains("://") => reqwest::Url::parse(&format!("ssh://{}", url.replacen(':', "/", 1))).ok()?,
        Err(_) => return None,
    };
    let host = parsed.host_str()?.trim_start_matches('[').trim_end_matches(']');
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(url: &str) -> String {
        Identifier::Url(url.into()).subject()
    }

    #[test]
    fn urls_are_reduced_to_their_host() {
        assert_eq!(host("https://GitHub.com/provos/ironcurtain?x=1#y"), "github.com");
        assert_eq!(host("http://user:pw@example.org:8080/path"), "example.org");
        assert_eq!(host("https://[::1]:3000/"), "::1");
        assert_eq!(host("git@github.com:owner/repo.git"), "github.com");
        assert_eq!(host("mailto:someone@example.org"), "mailto:someone@example.org");
        assert_eq!(host("file:///etc/passwd"), "file:///etc/passwd");
        assert_eq!(host("not a url"), "not a url");
    }

    #[test]
    fn paths_are_taken_as_given() {
        assert_eq!(Identifier::Path("~/Documents/Notes.txt".into()).subject(), "~/Documents/Notes.txt");
    }
}
