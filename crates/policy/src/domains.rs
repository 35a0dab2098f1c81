//! Hosts of URL arguments and domain patterns.
//!
//! [`host_of`] reads the host of a URL (`scheme://[user@]host[:port]/...`,
//! also `//host/...`) or of a git remote in scp form (`[user@]host:path`);
//! [`web_host_of`] only of a URL (for roles fetched over HTTP, such as
//! IronCurtain's `fetch-url`).
//! Hosts are normalised (lower case, one trailing dot removed, userinfo and
//! port dropped, IPv6 brackets removed). Anything ambiguous (a backslash in
//! the authority, percent-encoding or non-ASCII in the host, `http:host`
//! without slashes) has no host, so no allowlist admits it.
//!
//! A host whose last label is numeric (`127.0.0.1`, `127.1`, `2130706433`,
//! `0x7f.0.0.1`) is an IP address, as URL parsers read it; so is anything in
//! brackets. Patterns: `example.com` (exactly), `*.example.com` (its
//! subdomains, not itself), `*` (any DNS name, never an IP address).

use std::fmt;
use std::net::Ipv6Addr;

/// A URL's host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Host {
    /// A DNS name, lower case, without trailing dot.
    Name(String),
    /// An IP address (or something URL parsers read as one), as written,
    /// lower case, without brackets.
    Ip(String),
}

impl Host {
    /// The host's text.
    pub(crate) fn as_str(&self) -> &str {
        match self {
            Host::Name(name) | Host::Ip(name) => name,
        }
    }
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Host::Name(name) => f.write_str(name),
            Host::Ip(ip) if ip.contains(':') => write!(f, "[{ip}]"),
            Host::Ip(ip) => f.write_str(ip),
        }
    }
}

/// The host of `url` read as a web address: with a scheme or `//`; git's
/// scp form (`host:path`) is no web address, so it has no host.
pub(crate) fn web_host_of(url: &str) -> Result<Host, &'static str> {
    let text = url.trim();
    if !text.contains("://") && !text.starts_with("//") {
        return Err("not a web address (no scheme)");
    }
    host_of(text)
}

/// Schemes URL parsers accept without `//` (`http:example.com`).
const SPECIAL_SCHEMES: [&str; 6] = ["http", "https", "ws", "wss", "ftp", "file"];

/// The host of `url`, or why it has none.
pub(crate) fn host_of(url: &str) -> Result<Host, &'static str> {
    let text = url.trim();
    if text.is_empty() {
        return Err("the URL is empty");
    }
    if text.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err("the URL contains whitespace or control characters");
    }
    if let Some(at) = text.find("://") {
        let scheme = &text[..at];
        if !is_scheme(scheme) {
            return Err("the URL's scheme is invalid");
        }
        if scheme.eq_ignore_ascii_case("file") {
            // A local file, whatever host it names (git reads it locally).
            return Err("a file: URL names no remote host");
        }
        // WHATWG parsers (IronCurtain's `new URL`) lower-case the host of
        // special schemes only; `ssh://GitHub.com` keeps its case.
        let special = SPECIAL_SCHEMES.iter().any(|s| scheme.eq_ignore_ascii_case(s));
        return host_of_authority(authority(&text[at + 3..])?, special);
    }
    if text.starts_with("//") {
        // Whether it is fetched, and how, depends on a base nobody knows.
        return Err("a scheme-relative URL (//host) is ambiguous");
    }
    scp_host(text)
}

/// The authority at the start of `rest` (up to `/`, `?` or `#`).
fn authority(rest: &str) -> Result<&str, &'static str> {
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    if authority.contains('\\') {
        // WHATWG parsers end the authority at `\`, others do not.
        return Err("the URL's authority contains a backslash");
    }
    Ok(authority)
}

/// `[user@]host:path`, git's scp-like remote syntax.
fn scp_host(text: &str) -> Result<Host, &'static str> {
    let slash = text.find(['/', '\\']).unwrap_or(text.len());
    let head = &text[..slash];
    let end = if let Some(open) = head.find('[') {
        match head[open..].find("]:") {
            Some(close) => open + close + 1,
            None => return Err("not a URL or git remote"),
        }
    } else {
        match head.find(':') {
            Some(colon) => colon,
            None => return Err("not a URL or git remote"),
        }
    };
    let user_host = &text[..end];
    if user_host.len() < 2 {
        // `c:\...`: a drive letter, not a host.
        return Err("not a URL or git remote");
    }
    if SPECIAL_SCHEMES.iter().any(|s| user_host.eq_ignore_ascii_case(s)) {
        return Err("a URL without // after its scheme is ambiguous");
    }
    if !user_host.contains('@') && is_scheme(user_host) && !user_host.contains('.') && !text[end..].starts_with(":/") {
        // `mailto:x`, `data:...`: a scheme, not a host (git would need a dot or user to be sure).
        return Err("not a URL or git remote");
    }
    if user_host.matches('@').count() > 1 {
        // `a@b@host:path`: tools disagree on where the user part ends.
        return Err("a git remote with more than one '@' is ambiguous");
    }
    // git keeps an scp-form host as written (and so does IronCurtain): no case folding.
    let host = match user_host.rfind('@') {
        Some(at) => &user_host[at + 1..],
        None => user_host,
    };
    if host.starts_with('[') {
        return host_of_authority(user_host, true);
    }
    classify_name(host, false)
}

fn is_scheme(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// The host of `[userinfo@]host[:port]`, lower case when `lower`.
fn host_of_authority(authority: &str, lower: bool) -> Result<Host, &'static str> {
    let host_port = match authority.rfind('@') {
        Some(at) => &authority[at + 1..],
        None => authority,
    };
    if let Some(inner) = host_port.strip_prefix('[') {
        let Some(close) = inner.find(']') else {
            return Err("the URL's IPv6 address has no closing bracket");
        };
        let after = &inner[close + 1..];
        if !(after.is_empty() || after.strip_prefix(':').is_some_and(is_port)) {
            return Err("the URL's port is invalid");
        }
        let ip = &inner[..close];
        let address = ip.split('%').next().unwrap_or(ip);
        if address.parse::<Ipv6Addr>().is_err() {
            return Err("the URL's IPv6 address is invalid");
        }
        return Ok(Host::Ip(ip.to_ascii_lowercase()));
    }
    let host = match host_port.rfind(':') {
        Some(colon) if is_port(&host_port[colon + 1..]) => &host_port[..colon],
        Some(_) => return Err("the URL's port is invalid"),
        None => host_port,
    };
    if host.contains(':') {
        return Err("the URL's host contains ':'");
    }
    classify_name(host, lower)
}

/// A port: digits within 0..=65535 (or none, the scheme's default).
fn is_port(text: &str) -> bool {
    text.bytes().all(|b| b.is_ascii_digit()) && (text.is_empty() || text.parse::<u32>().is_ok_and(|port| port <= 65535))
}

/// A URL's host name, lower case and classified; errors for a trailing dot
/// (`example.com.` is another name to an allowlist, so it matches none),
/// empty labels and characters outside ASCII letters, digits, `-`, `_`, `.`.
fn normalize_name(host: &str) -> Result<Host, &'static str> {
    classify_name(host, true)
}

/// [`normalize_name`], lower-casing only when `lower`.
fn classify_name(host: &str, lower: bool) -> Result<Host, &'static str> {
    if host.ends_with('.') && host.len() > 1 {
        return Err("the URL's host ends with a dot");
    }
    if host.is_empty() {
        return Err("the URL has no host");
    }
    if !host.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.')) {
        return Err("the URL's host has characters other than letters, digits, '-', '_' and '.'");
    }
    if host.split('.').any(str::is_empty) {
        return Err("the URL's host has an empty label");
    }
    let host = if lower { host.to_ascii_lowercase() } else { host.to_owned() };
    if is_ip_like(&host) { Ok(Host::Ip(host)) } else { Ok(Host::Name(host)) }
}

/// Whether URL parsers read `host` as an IPv4 address (in any of its forms):
/// its last label is decimal digits or `0x` hex.
fn is_ip_like(host: &str) -> bool {
    let last = host.rsplit('.').next().unwrap_or(host);
    let hex = last.strip_prefix("0x").is_some_and(|h| h.bytes().all(|b| b.is_ascii_hexdigit()));
    hex || (!last.is_empty() && last.bytes().all(|b| b.is_ascii_digit()))
}

/// One domain pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Pattern {
    /// Any DNS name (never an IP address).
    Any,
    /// Subdomains: the suffix, with its leading dot.
    Subdomains(String),
    /// Exactly this host.
    Exact(String),
    /// One repository of a host (`github.com/owner/repo`): a git remote
    /// whose host is `host` and whose path, without a leading `/`, a
    /// trailing `/` or `.git`, is exactly `path` (IronCurtain's repo-level
    /// patterns). Never a URL of a web-only role.
    Repo { host: String, path: String },
}

/// A compiled list of domain patterns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct DomainSet {
    patterns: Vec<Pattern>,
}

impl DomainSet {
    /// Compiles `patterns`; every invalid one is reported.
    pub(crate) fn compile(patterns: &[String]) -> Result<DomainSet, Vec<String>> {
        let mut compiled = Vec::new();
        let mut problems = Vec::new();
        for raw in patterns {
            match compile_pattern(raw) {
                Ok(pattern) => compiled.push(pattern),
                Err(why) => problems.push(format!("domain pattern {raw:?}: {why}")),
            }
        }
        if problems.is_empty() { Ok(DomainSet { patterns: compiled }) } else { Err(problems) }
    }

    /// Whether `host` matches one of the patterns (a repository pattern
    /// never matches a host alone).
    #[cfg(test)]
    pub(crate) fn allows(&self, host: &Host) -> bool {
        self.allows_remote(host, None)
    }

    /// Whether the URL `text`, whose host is `host`, matches one of the
    /// patterns; repository patterns are tried when `remote` (the URL is a
    /// git remote, not a web address).
    pub(crate) fn allows_url(&self, host: &Host, text: &str, remote: bool) -> bool {
        let repo = if remote && self.patterns.iter().any(|p| matches!(p, Pattern::Repo { .. })) {
            repo_path_of(text)
        } else {
            None
        };
        self.allows_remote(host, repo.as_deref())
    }

    fn allows_remote(&self, host: &Host, repo: Option<&str>) -> bool {
        self.patterns.iter().any(|pattern| match (pattern, host) {
            (Pattern::Any, Host::Name(_)) => true,
            (Pattern::Subdomains(suffix), Host::Name(name)) => name.len() > suffix.len() && name.ends_with(suffix),
            (Pattern::Exact(exact), host) => exact == host.as_str(),
            (Pattern::Repo { host: wanted, path }, host) => {
                wanted == host.as_str() && repo.is_some_and(|repo| repo == path)
            }
            _ => false,
        })
    }
}

/// The repository path of a git remote (`owner/repo` of
/// `https://github.com/owner/repo.git` or `git@github.com:owner/repo.git`):
/// its path without query or fragment, a leading `/`, a trailing `/`, a
/// `.git` suffix and a `/` before it, as IronCurtain reads it; `None` when
/// that leaves nothing.
pub(crate) fn repo_path_of(text: &str) -> Option<String> {
    let text = text.trim();
    let path = if let Some(at) = text.find("://") {
        let rest = text.get(at + 3..)?;
        let path = rest.get(rest.find(['/', '?', '#'])?..)?;
        path.split(['?', '#']).next().unwrap_or_default()
    } else {
        // scp form: everything after the first ':' after the host (after
        // `]:` for a bracketed address), as git splits it.
        let start = text.find('@').map_or(0, |at| at + 1);
        let rest = text.get(start..)?;
        let colon = if rest.starts_with('[') { rest.find("]:")? + 1 } else { rest.find(':')? };
        rest.get(colon + 1..)?
    };
    let path = path.strip_prefix('/').unwrap_or(path);
    let path = path.strip_suffix('/').unwrap_or(path);
    let path = path.strip_suffix(".git").unwrap_or(path);
    let path = path.strip_suffix('/').unwrap_or(path);
    (!path.is_empty()).then(|| path.to_owned())
}

fn compile_pattern(raw: &str) -> Result<Pattern, &'static str> {
    let text = raw.trim();
    if let Some((host, path)) = text.split_once('/') {
        if path.is_empty() || path.contains('*') || host.contains('*') {
            return Err("a repository pattern is host/owner/repo, without '*'");
        }
        return match normalize_name(host) {
            Ok(host) => Ok(Pattern::Repo { host: host.as_str().to_owned(), path: path.to_owned() }),
            Err(_) => Err("not a domain: use example.com, *.example.com, * or host/owner/repo"),
        };
    }
    if text == "*" {
        return Ok(Pattern::Any);
    }
    // A pattern's trailing dot is dropped (a URL's is refused).
    let undotted = |name: &'_ str| name.strip_suffix('.').filter(|n| !n.is_empty()).unwrap_or(name).to_owned();
    if let Some(suffix) = text.strip_prefix("*.") {
        return match normalize_name(&undotted(suffix)) {
            Ok(Host::Name(name)) => Ok(Pattern::Subdomains(format!(".{name}"))),
            Ok(Host::Ip(_)) => Err("'*.' cannot precede an IP address"),
            Err(_) => Err("not a domain: use example.com, *.example.com or *"),
        };
    }
    if text.contains('*') {
        return Err("'*' is allowed only alone or as a leading '*.'");
    }
    if let Some(inner) = text.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
        return match inner.parse::<Ipv6Addr>() {
            Ok(_) => Ok(Pattern::Exact(inner.to_ascii_lowercase())),
            Err(_) => Err("not an IPv6 address"),
        };
    }
    match normalize_name(&undotted(text)) {
        Ok(host) => Ok(Pattern::Exact(host.as_str().to_owned())),
        Err(_) => Err("not a domain: use example.com, *.example.com or *"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(h: &str) -> Result<Host, &'static str> {
        Ok(Host::Name(h.into()))
    }

    fn ip(h: &str) -> Result<Host, &'static str> {
        Ok(Host::Ip(h.into()))
    }

    #[test]
    fn urls_of_every_common_form() {
        assert_eq!(host_of("https://Example.COM/a?b#c"), name("example.com"));
        assert_eq!(host_of("http://user:pw@api.example.com:8443/x"), name("api.example.com"));
        assert_eq!(host_of("ftp://files.example.org"), name("files.example.org"));
        assert_eq!(host_of("ws://chat.example.net:80"), name("chat.example.net"));
        assert_eq!(host_of("http://good.com@evil.com/"), name("evil.com"));
        assert_eq!(host_of("http://a@b@evil.com/"), name("evil.com"));
        assert_eq!(host_of("  https://example.com  "), name("example.com"));
    }

    #[test]
    fn web_addresses_need_a_scheme() {
        assert_eq!(web_host_of("https://github.com/o/r.git"), name("github.com"));
        assert!(web_host_of("//cdn.example.com/x").is_err());
        assert!(web_host_of("git@github.com:o/r.git").is_err());
        assert!(web_host_of("github.com:443").is_err());
        assert!(web_host_of("example.com/page").is_err());
    }

    #[test]
    fn git_remotes_of_every_form() {
        assert_eq!(host_of("https://github.com/o/r.git"), name("github.com"));
        assert_eq!(host_of("ssh://git@GitHub.com:22/o/r"), name("GitHub.com"), "not a special scheme: as written");
        assert_eq!(host_of("git@github.com:o/r.git"), name("github.com"));
        assert_eq!(host_of("github.com:o/r.git"), name("github.com"));
        assert_eq!(host_of("git://git.kernel.org/pub/scm/git.git"), name("git.kernel.org"));
        assert_eq!(host_of("git+ssh://git@gitlab.com/o/r"), name("gitlab.com"));
        assert_eq!(host_of("git@[::1]:o/r"), ip("::1"));
        assert_eq!(host_of("git@10.0.0.1:o/r"), ip("10.0.0.1"));
    }

    #[test]
    fn ip_forms_are_ips() {
        for url in [
            "http://127.0.0.1/",
            "http://127.1/",
            "http://2130706433/",
            "http://0x7f.0.0.1/",
            "http://0x7f000001/",
            "http://0177.0.0.1/",
            "http://foo.123/",
        ] {
            assert!(matches!(host_of(url), Ok(Host::Ip(_))), "{url}");
        }
        assert_eq!(host_of("http://[::1]:8080/"), ip("::1"));
        assert_eq!(host_of("http://[FE80::1%25eth0]/"), ip("fe80::1%25eth0"));
        assert!(matches!(host_of("http://1.2.3.example/"), Ok(Host::Name(_))));
    }

    #[test]
    fn ambiguous_or_broken_urls_have_no_host() {
        for url in [
            "",
            "   ",
            "http://",
            "http://evil.com\\@good.com/",
            "http://exa mple.com/",
            "http://ex%61mple.com/",
            "http://exämple.com/",
            "http://[::1/",
            "http://[nope]/",
            "http://example.com:80:80/",
            "http://example.com:http/",
            "http:example.com",
            "https:/example.com",
            "c:\\windows",
            "relative/path",
            "/abs/path",
            "mailto:someone",
            "http://a..b/",
            "http://.example.com/",
            "1http://x.com/",
            "http://x.com\n.evil.com/",
            // Looser than IronCurtain if read: a trailing dot, a port out of
            // range, no scheme.
            "https://nytimes.com./",
            "git@github.com.:o/r",
            "https://github.com:99999/",
            "https://github.com:65536/",
            "//nytimes.com/x",
            "file://github.com/o/r",
        ] {
            assert!(host_of(url).is_err(), "{url:?} -> {:?}", host_of(url));
        }
    }

    fn set(patterns: &[&str]) -> DomainSet {
        DomainSet::compile(&patterns.iter().map(|p| p.to_string()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn patterns() {
        let any = set(&["*"]);
        assert!(any.allows(&Host::Name("example.com".into())));
        for url in ["http://127.0.0.1/", "http://[::1]/", "http://2130706433/", "http://0x7f.0.0.1/"] {
            assert!(!any.allows(&host_of(url).unwrap()), "{url}");
        }
        let sub = set(&["*.Example.com."]);
        assert!(sub.allows(&host_of("https://api.example.com").unwrap()));
        assert!(sub.allows(&host_of("https://a.b.example.com").unwrap()));
        assert!(!sub.allows(&host_of("https://example.com").unwrap()));
        assert!(!sub.allows(&host_of("https://evilexample.com").unwrap()));
        let exact = set(&["example.com", "10.0.0.1", "[::1]"]);
        assert!(exact.allows(&host_of("https://EXAMPLE.com").unwrap()));
        assert!(exact.allows(&host_of("https://example.com:65535/").unwrap()));
        // An scp-form host keeps its case, as git and IronCurtain keep it.
        assert!(!exact.allows(&host_of("git@EXAMPLE.com:o/r").unwrap()));
        assert!(!exact.allows(&host_of("https://www.example.com").unwrap()));
        assert!(exact.allows(&host_of("http://10.0.0.1:80").unwrap()));
        assert!(exact.allows(&host_of("http://[::1]:80").unwrap()));
        assert!(!exact.allows(&host_of("http://10.1/").unwrap()));
    }

    #[test]
    fn repository_patterns_match_one_repository_of_git_remotes() {
        let repo = set(&["github.com/provos/ironcurtain"]);
        let remote = |url: &str| repo.allows_url(&host_of(url).unwrap(), url, true);
        for url in [
            "https://github.com/provos/ironcurtain.git",
            "https://github.com/provos/ironcurtain",
            "https://github.com/provos/ironcurtain/",
            "git@github.com:provos/ironcurtain.git",
            "ssh://git@github.com/provos/ironcurtain.git",
        ] {
            assert!(remote(url), "{url}");
        }
        for url in [
            "https://github.com/provos/other.git",
            "https://github.com/provos/ironcurtain-evil.git",
            "https://github.com/provos/ironcurtain/../evil",
            "https://gitlab.com/provos/ironcurtain.git",
            "https://github.com/",
            "git@GitHub.com:provos/ironcurtain.git",
        ] {
            assert!(!remote(url), "{url}");
        }
        // Never for a web-only role, never by host alone.
        let url = "https://github.com/provos/ironcurtain";
        assert!(!repo.allows_url(&host_of(url).unwrap(), url, false));
        assert!(!repo.allows(&host_of(url).unwrap()));
        // A host pattern admits every repository of the host.
        let host = set(&["github.com"]);
        assert!(host.allows_url(&host_of(url).unwrap(), url, true));
        assert_eq!(repo_path_of("git@github.com:o/r.git"), Some("o/r".into()));
        assert_eq!(repo_path_of("https://github.com/.git"), None);
        assert!(DomainSet::compile(&["github.com/*".into()]).is_err());
    }

    /// IronCurtain's `domainMatchesAllowlist` cases (test/policy-engine.test.ts
    /// at c0aeff9d), a git remote standing for its `host/owner/repo` domains.
    #[test]
    fn ironcurtain_domain_matching_cases() {
        let remote = |patterns: &[&str], url: &str| {
            let set = DomainSet::compile(&patterns.iter().map(|p| p.to_string()).collect::<Vec<_>>()).unwrap();
            host_of(url).is_ok_and(|host| set.allows_url(&host, url, true))
        };
        let cases: [(&[&str], &str, bool); 17] = [
            (&["github.com"], "https://github.com", true),
            (&["github.com"], "https://gitlab.com", false),
            (&["*"], "https://anything.example.com", true),
            (&["*.github.com"], "https://api.github.com", true),
            // IronCurtain: `*.github.com` admits github.com itself; Warden
            // only its subdomains (stricter).
            (&["*.github.com"], "https://github.com", false),
            (&["*.github.com"], "https://gitlab.com", false),
            (&[], "https://github.com", false),
            (&["*"], "http://192.168.1.1", false),
            (&["*"], "http://[::1]", false),
            (&["192.168.1.100"], "http://192.168.1.100", true),
            (&["10.0.0.1"], "http://10.0.0.1", true),
            (&["192.168.1.100"], "http://10.0.0.1", false),
            (&["github.com"], "https://github.com/provos/ironcurtain", true),
            (&["github.com/provos/ironcurtain"], "https://github.com/provos/ironcurtain", true),
            (&["github.com/other/repo"], "https://github.com/provos/ironcurtain", false),
            (&["*"], "https://192.168.1.1/provos/repo", false),
            (&["*.github.com"], "https://api.github.com/provos/repo", true),
        ];
        for (patterns, url, expected) in cases {
            assert_eq!(remote(patterns, url), expected, "{patterns:?} {url}");
        }
        assert!(remote(&["*"], "https://github.com/provos/ironcurtain"));
        assert!(!remote(&["github.com"], "https://gitlab.com/provos/ironcurtain"));
    }

    #[test]
    fn invalid_patterns_are_reported() {
        let err =
            DomainSet::compile(&["ex*.com".into(), "*.".into(), "".into(), "a b".into(), "ok.com".into()]).unwrap_err();
        assert_eq!(err.len(), 4, "{err:?}");
    }

    #[test]
    fn no_combination_of_url_fragments_panics() {
        const PARTS: [&str; 16] =
            ["http", "://", "@", "[", "]", ":", "/", "\\", "é", "0x", ".", "1", "git", "%", " ", "::1"];
        let mut count = 0;
        for a in PARTS {
            for b in PARTS {
                for c in PARTS {
                    for d in PARTS {
                        let url = format!("{a}{b}{c}{d}");
                        if let Ok(host) = host_of(&url) {
                            assert!(!host.as_str().is_empty(), "{url:?}");
                            count += 1;
                        }
                    }
                }
            }
        }
        assert!(count > 0);
    }
}
