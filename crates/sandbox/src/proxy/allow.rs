//! The allowlist: which hosts and ports a server may connect to.

use std::net::IpAddr;

use indexmap::IndexMap;

use crate::SandboxError;

/// One entry: a host pattern and an optional port.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    host: HostPattern,
    /// `None`: any port.
    port: Option<u16>,
    text: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum HostPattern {
    /// Exactly this name (lowercase, no trailing dot).
    Name(String),
    /// A name ending in `.suffix` (written `*.suffix`; `suffix` itself does not match).
    Below(String),
    /// This address.
    Ip(IpAddr),
}

/// Where a connection goes, as the client asked for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Host {
    /// A DNS name (lowercase, no trailing dot).
    Name(String),
    /// An IP literal.
    Ip(IpAddr),
}

impl Host {
    /// Parses a host as written in a request (`[::1]` for IPv6). One
    /// trailing dot (the DNS root) is dropped; more are empty labels, and
    /// such a host is refused rather than read as the name or address
    /// before them.
    pub fn parse(text: &str) -> Option<Host> {
        let text = text.trim();
        let text = text.strip_suffix('.').unwrap_or(text);
        if let Some(inner) = text.strip_prefix('[').and_then(|rest| rest.strip_suffix(']')) {
            return inner.parse().ok().map(Host::Ip);
        }
        if let Ok(ip) = text.parse() {
            return Some(Host::Ip(ip));
        }
        let valid = !text.is_empty()
            && text.len() <= 253
            && text.split('.').all(|label| {
                !label.is_empty() && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            });
        valid.then(|| Host::Name(text.to_ascii_lowercase()))
    }
}

impl std::fmt::Display for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Host::Name(name) => f.write_str(name),
            Host::Ip(IpAddr::V6(ip)) => write!(f, "[{ip}]"),
            Host::Ip(ip) => write!(f, "{ip}"),
        }
    }
}

/// The allowed and denied hosts of one server, and its fixed addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allowlist {
    allow: Vec<Entry>,
    deny: Vec<Entry>,
    /// Fixed addresses consulted before DNS.
    pub(crate) hosts: Vec<(String, IpAddr)>,
}

impl Allowlist {
    /// Parses `allow` and `deny` entries (`host`, `host:port`, `*.domain`,
    /// IP literals, `[v6]:port`); `hosts` maps names to fixed addresses.
    pub fn parse(
        allow: &[String],
        deny: &[String],
        hosts: &IndexMap<String, String>,
    ) -> Result<Allowlist, SandboxError> {
        let entries = |list: &[String]| list.iter().map(|text| parse_entry(text)).collect::<Result<Vec<_>, _>>();
        let mut fixed = Vec::new();
        for (name, address) in hosts {
            let ip = address.parse().map_err(|_| {
                SandboxError::Invalid(format!("sandbox.hosts: {address:?} (for {name}) is not an IP address"))
            })?;
            fixed.push((name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase(), ip));
        }
        Ok(Allowlist { allow: entries(allow)?, deny: entries(deny)?, hosts: fixed })
    }

    /// Why a connection to `host:port` is refused, or `None` when the name
    /// (or literal) may be tried. Addresses are checked by [`Allowlist::address_listed`].
    pub fn refusal(&self, host: &Host, port: u16) -> Option<String> {
        if let Some(entry) = self.deny.iter().find(|entry| entry.matches(host, port)) {
            return Some(format!("{host}:{port} is denied by the sandbox's network.deny entry {:?}", entry.text));
        }
        if self.allow.iter().any(|entry| entry.matches(host, port)) {
            return None;
        }
        Some(format!("{host}:{port} is not in the sandbox's network allowlist"))
    }

    /// Whether `ip` (and `port`) is listed as an IP literal, which lets an
    /// allowed name resolve to a loopback, private or link-local address.
    pub fn address_listed(&self, ip: IpAddr, port: u16) -> bool {
        self.allow.iter().any(|entry| entry.host == HostPattern::Ip(ip) && entry.port.is_none_or(|p| p == port))
    }

    /// The entries, for messages.
    pub fn describe(&self) -> String {
        let list: Vec<&str> = self.allow.iter().map(|entry| entry.text.as_str()).collect();
        format!("allow [{}]", list.join(", "))
    }
}

impl Entry {
    fn matches(&self, host: &Host, port: u16) -> bool {
        if self.port.is_some_and(|p| p != port) {
            return false;
        }
        match (&self.host, host) {
            (HostPattern::Name(pattern), Host::Name(name)) => pattern == name,
            (HostPattern::Below(suffix), Host::Name(name)) => {
                name.len() > suffix.len() + 1
                    && name.ends_with(suffix.as_str())
                    && name[..name.len() - suffix.len()].ends_with('.')
            }
            (HostPattern::Ip(pattern), Host::Ip(ip)) => pattern == ip,
            _ => false,
        }
    }
}

fn parse_entry(text: &str) -> Result<Entry, SandboxError> {
    let bad = |why: &str| SandboxError::Invalid(format!("network entry {text:?}: {why}"));
    let trimmed = text.trim();
    let (host, port) = split_port(trimmed).ok_or_else(|| bad("the port must be a number from 1 to 65535"))?;
    let host = if let Some(suffix) = host.strip_prefix("*.") {
        if suffix.contains('*') {
            return Err(bad("'*' may only start a pattern, as in *.example.com"));
        }
        let Some(Host::Name(suffix)) = Host::parse(suffix) else { return Err(bad("not a domain")) };
        if !suffix.contains('.') {
            return Err(bad("a wildcard must keep at least two labels (*.example.com, not *.com)"));
        }
        HostPattern::Below(suffix)
    } else if host.contains('*') {
        return Err(bad("'*' alone or inside a name is not allowed; write *.example.com"));
    } else {
        match Host::parse(host) {
            Some(Host::Name(name)) => HostPattern::Name(name),
            Some(Host::Ip(ip)) => HostPattern::Ip(ip),
            None => return Err(bad("not a host name or IP address")),
        }
    };
    Ok(Entry { host, port, text: trimmed.to_owned() })
}

/// `host:port` → (`host`, port); a bare IPv6 address has no port.
fn split_port(text: &str) -> Option<(&str, Option<u16>)> {
    if text.starts_with('[') {
        let end = text.find(']')?;
        let rest = &text[end + 1..];
        return match rest.strip_prefix(':') {
            Some(port) => Some((&text[..=end], Some(parse_port(port)?))),
            None if rest.is_empty() => Some((text, None)),
            None => None,
        };
    }
    match text.rsplit_once(':') {
        Some((host, _)) if host.contains(':') => Some((text, None)),
        Some((host, port)) => Some((host, Some(parse_port(port)?))),
        None => Some((text, None)),
    }
}

fn parse_port(text: &str) -> Option<u16> {
    text.parse().ok().filter(|port| *port != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(allow: &[&str], deny: &[&str]) -> Allowlist {
        let own = |items: &[&str]| items.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        Allowlist::parse(&own(allow), &own(deny), &IndexMap::new()).unwrap()
    }

    fn allowed(list: &Allowlist, host: &str, port: u16) -> bool {
        list.refusal(&Host::parse(host).unwrap(), port).is_none()
    }

    #[test]
    fn names_wildcards_ports_and_literals() {
        let list = list(&["api.github.com:443", "*.githubusercontent.com", "10.0.0.5", "[::1]:8080"], &[]);
        assert!(allowed(&list, "api.github.com", 443));
        assert!(allowed(&list, "API.GitHub.com.", 443));
        assert!(!allowed(&list, "api.github.com", 80));
        assert!(!allowed(&list, "github.com", 443));
        assert!(allowed(&list, "raw.githubusercontent.com", 443));
        assert!(allowed(&list, "a.b.githubusercontent.com", 22));
        assert!(!allowed(&list, "githubusercontent.com", 443));
        assert!(!allowed(&list, "evilgithubusercontent.com", 443));
        assert!(allowed(&list, "10.0.0.5", 1));
        assert!(!allowed(&list, "10.0.0.6", 1));
        assert!(allowed(&list, "[::1]", 8080));
        assert!(!allowed(&list, "[::1]", 8081));
        assert!(list.address_listed("10.0.0.5".parse().unwrap(), 9));
        assert!(!list.address_listed("127.0.0.1".parse().unwrap(), 9));
    }

    #[test]
    fn deny_comes_first() {
        let list = list(&["*.example.com"], &["secret.example.com"]);
        assert!(allowed(&list, "www.example.com", 443));
        let refusal = list.refusal(&Host::parse("secret.example.com").unwrap(), 443).unwrap();
        assert!(refusal.contains("network.deny"), "{refusal}");
    }

    #[test]
    fn bad_entries_are_refused() {
        for bad in ["*", "*.com", "foo.*.com", "ex*ample.com", "host:0", "host:99999", "host:x", "", "a b"] {
            let result = Allowlist::parse(&[bad.to_string()], &[], &IndexMap::new());
            assert!(result.is_err(), "{bad:?} was accepted");
        }
    }

    /// Found by the `egress_request` fuzz target: `10.0.0.0....` was read
    /// as the address 10.0.0.0 (every trailing dot dropped), where a URL
    /// parser reads a name with empty labels. Only the root's one dot goes.
    #[test]
    fn one_trailing_dot_is_the_root_and_more_are_refused() {
        assert_eq!(Host::parse("example.com."), Some(Host::Name("example.com".into())));
        assert_eq!(Host::parse("10.0.0.1."), Some(Host::Ip("10.0.0.1".parse().unwrap())));
        for bad in ["10.0.0.0....", "example.com..", "\r10.0.0.0....", ".", ".."] {
            assert_eq!(Host::parse(bad), None, "{bad:?}");
        }
    }
}
