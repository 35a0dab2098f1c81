//! Small checks shared by everything that guards a door: the HTTP front and
//! the approval page (host names, loopback, secrets compared in constant time).

use std::net::IpAddr;

/// `host:port`, `[v6]:port` or `host` → the host part.
pub fn host_name(host: &str) -> &str {
    let host = host.split('/').next().unwrap_or(host);
    if let Some(rest) = host.strip_prefix('[') {
        // `[v6]` or `[v6]:port` only: anything after the bracket is no port,
        // so the whole text stays the name (and names no loopback).
        return match rest.split_once(']') {
            Some((inside, "")) => inside,
            Some((inside, port)) if port.strip_prefix(':').is_some_and(|p| p.bytes().all(|b| b.is_ascii_digit())) => {
                inside
            }
            _ => host,
        };
    }
    match host.rsplit_once(':') {
        Some((name, port)) if port.chars().all(|c| c.is_ascii_digit()) => name,
        _ => host,
    }
}

/// Whether `name` (a host without port) names this machine.
pub fn is_loopback_name(name: &str) -> bool {
    let dns_name = name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.'));
    name == "localhost"
        || (dns_name && name.ends_with(".localhost"))
        || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Compares secrets in time that depends only on their lengths.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_names_are_split_from_ports() {
        assert_eq!(host_name("localhost:8210"), "localhost");
        assert_eq!(host_name("[::1]:8210"), "::1");
        assert_eq!(host_name("127.0.0.1"), "127.0.0.1");
        assert_eq!(host_name("evil.example"), "evil.example");
        assert!(is_loopback_name("127.0.0.1") && is_loopback_name("::1") && is_loopback_name("app.localhost"));
        assert!(!is_loopback_name("localhost.evil.example") && !is_loopback_name("10.0.0.1"));
    }
}
