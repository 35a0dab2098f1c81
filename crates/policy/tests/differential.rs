//! Differential: Warden's URL and git-remote checks are never looser than
//! IronCurtain's.
//!
//! IronCurtain's semantics are modelled here from its source (c0aeff9d,
//! `src/trusted-process/domain-utils.ts`): a `fetch-url`'s domain is
//! `new URL(value).hostname` (the value itself when it does not parse; the
//! `url` crate is a WHATWG URL parser, as Node's is); a `git-remote-url`'s
//! is `extractGitDomain` (scp form by its regular expression, else the URL's
//! hostname and repository path); `domainMatchesAllowlist` matches it.
//! Thousands of URLs and remotes are built from fragments (schemes, user
//! parts, hosts in odd forms, ports, paths); for each, whenever Warden lets
//! the call through the server's allowlist or a rule's `domains`, the model
//! must admit it too.

mod common;

use common::{engine, js};
use warden_policy::Decision;

/// IronCurtain's `isIpAddress`.
fn is_ip(domain: &str) -> bool {
    let dotted = domain.split('.').count() == 4
        && domain.split('.').all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()));
    dotted || domain.contains(':')
}

/// IronCurtain's `domainMatchesAllowlist`.
fn matches_allowlist(domain: &str, allowed: &[&str]) -> bool {
    let hostname = domain.split('/').next().unwrap_or(domain);
    allowed.iter().any(|pattern| {
        if *pattern == "*" {
            return !is_ip(hostname);
        }
        if let Some(suffix) = pattern.strip_prefix("*.") {
            return hostname == suffix || hostname.ends_with(&pattern[1..]);
        }
        if pattern.contains('/') {
            return domain == *pattern;
        }
        hostname == *pattern
    })
}

/// IronCurtain's `extractDomain` (for `fetch-url`).
fn web_domain(value: &str) -> String {
    match url::Url::parse(value) {
        Ok(url) => url.host_str().unwrap_or_default().to_owned(),
        Err(_) => value.to_owned(),
    }
}

/// IronCurtain's `normalizeGitRepoPath`.
fn repo_path(path: &str) -> String {
    let mut s = path;
    s = s.strip_prefix('/').unwrap_or(s);
    s = s.strip_suffix('/').unwrap_or(s);
    s = s.strip_suffix(".git").unwrap_or(s);
    s = s.strip_suffix('/').unwrap_or(s);
    s.to_owned()
}

/// IronCurtain's `extractGitDomain`: `^(?:[\w.+-]+@)?([^:]+):(.*)` unless `://`.
fn git_domain(value: &str) -> String {
    if !value.contains("://") {
        let word = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '+' | '-');
        let rest = match value.find('@') {
            Some(at) if at > 0 && value[..at].chars().all(word) => &value[at + 1..],
            _ => value,
        };
        // The optional group may also match nothing: the regex then takes the
        // whole value. Try with the user part first, as the regex does.
        for candidate in [rest, value] {
            if let Some(colon) = candidate.find(':')
                && colon > 0
            {
                let host = &candidate[..colon];
                let path = repo_path(&candidate[colon + 1..]);
                return if path.is_empty() { host.to_owned() } else { format!("{host}/{path}") };
            }
        }
    }
    match url::Url::parse(value) {
        Ok(url) => {
            let host = url.host_str().unwrap_or_default();
            let path = repo_path(url.path());
            if path.is_empty() { host.to_owned() } else { format!("{host}/{path}") }
        }
        Err(_) => value.to_owned(),
    }
}

/// URLs and remotes from fragments.
fn variants() -> Vec<String> {
    let schemes = ["https://", "http://", "HTTPS://", "//", "ssh://", "git://", "git+ssh://", "file://", "https:", ""];
    let users = ["", "git@", "user:pw@", "github.com@", "a@b@"];
    let hosts = [
        "github.com",
        "GitHub.com",
        "github.com.",
        "api.github.com",
        "evil.com",
        "github.com.evil.com",
        "evilgithub.com",
        "127.0.0.1",
        "2130706433",
        "[::1]",
        "xn--github-xyz.com",
        "github.com%2e",
        "github.com\\",
        "*.github.com",
    ];
    let ports = ["", ":443", ":99999", ":", ":0x1"];
    let paths =
        ["/provos/ironcurtain.git", "/provos/ironcurtain", "/other/repo", "/", "", "?x", ":provos/ironcurtain.git"];
    let mut out = Vec::new();
    for scheme in schemes {
        for user in users {
            for host in hosts {
                for port in ports {
                    for path in paths {
                        out.push(format!("{scheme}{user}{host}{port}{path}"));
                    }
                }
            }
        }
    }
    out
}

const ALLOWED: [&str; 2] = ["github.com", "*.github.com"];

#[test]
fn allowlists_and_domain_rules_are_never_looser_than_ironcurtain() {
    let engine = engine(
        r#"
policy:
  allowedDomains:
    web: ["github.com", "*.github.com"]
    git: ["github.com", "*.github.com"]
  annotations:
    web: {fetch: {args: {url: [fetch-url]}}}
    git: {push: {args: {remote: [git-remote-url]}}}
    repo: {clone: {args: {url: [git-remote-url]}}}
  default: deny
  rules:
    - name: one-repo
      if: {server: [repo], roles: [git-remote-url], domains: {allowed: ["github.com/provos/ironcurtain"]}}
      then: allow
    - name: web-and-git
      if: {server: [web, git]}
      then: allow
"#,
    );
    let mut looser = Vec::new();
    let mut checked = 0;
    for value in variants() {
        let args = |arg: &str| format!(r#"{{"{arg}": {}}}"#, js(&value));
        for (server, tool, arg, domain) in
            [("web", "fetch", "url", web_domain(&value)), ("git", "push", "remote", git_domain(&value))]
        {
            let evaluation = engine.evaluate(server, tool, Some(&args(arg)));
            checked += 1;
            if evaluation.action == Decision::Allow && !matches_allowlist(&domain, &ALLOWED) {
                looser.push(format!("{server} {value:?}: Warden allows, IronCurtain's domain {domain:?} is outside"));
            }
        }
        let evaluation = engine.evaluate("repo", "clone", Some(&args("url")));
        let domain = git_domain(&value);
        if evaluation.action == Decision::Allow && !matches_allowlist(&domain, &["github.com/provos/ironcurtain"]) {
            looser.push(format!("repo {value:?}: Warden allows, IronCurtain's domain {domain:?} does not match"));
        }
    }
    assert!(checked > 10_000, "{checked}");
    assert!(looser.is_empty(), "{} looser of {checked}:\n{}", looser.len(), looser.join("\n"));
}
