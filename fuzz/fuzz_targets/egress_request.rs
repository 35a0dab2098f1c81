//! The egress proxy's request heads, as a sandboxed server sends them:
//! `CONNECT host:port` and absolute `http://` URIs. A parsed target's host
//! is the one the `url` crate reads in the same authority (a name the same
//! name, an address the same address), its port is never 0, and the head
//! sent on is in origin form with every header line as it came. Allowlist
//! entries parse and judge without crashing.
#![no_main]

use std::net::IpAddr;

use indexmap::IndexMap;
use libfuzzer_sys::fuzz_target;
use url::Url;
use warden_sandbox::proxy::{Allowlist, Host, parse_request};

/// Whether `url` reads this name as an IPv4 address (a numeric last label).
fn ip_like(name: &str) -> bool {
    let last = name.rsplit('.').next().unwrap_or(name);
    !last.is_empty() && (last.bytes().all(|b| b.is_ascii_digit()) || last.starts_with("0x"))
}

fuzz_target!(|data: &[u8]| {
    if let Ok(target) = parse_request(data) {
        assert_ne!(target.port, 0, "port 0 from {data:?}");
        let text = std::str::from_utf8(data).expect("a parsed head is UTF-8");
        let (line, rest) = text.split_once("\r\n").expect("a request line");
        let mut parts = line.split(' ');
        let (method, uri) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
        let authority = match &target.forward {
            None => uri.to_owned(),
            Some(forward) => {
                let forward = std::str::from_utf8(forward).expect("UTF-8");
                let (sent_line, sent_rest) = forward.split_once("\r\n").expect("a request line");
                assert_eq!(sent_rest, rest, "headers changed in {text:?}");
                let origin = sent_line.split(' ').nth(1).unwrap_or("");
                assert!(origin.starts_with('/'), "not origin form: {sent_line:?} from {line:?}");
                assert!(sent_line.starts_with(method), "method changed: {sent_line:?}");
                let after = uri.strip_prefix("http://").expect("absolute form");
                after[..after.find(['/', '?']).unwrap_or(after.len())].to_owned()
            }
        };
        // `url`'s reading of the same authority.
        if let Ok(parsed) = Url::parse(&format!("http://{authority}/")) {
            match (&target.host, parsed.host()) {
                (Host::Name(name), Some(url::Host::Domain(domain))) => {
                    // `e.` and `e` are one DNS name (the proxy drops the dot).
                    let domain = domain.trim_end_matches('.');
                    assert_eq!(name, domain, "proxy reads {name:?}, url reads {domain:?} in {authority:?}")
                }
                (Host::Name(name), Some(theirs)) if ip_like(name) => {
                    // `0x7f.1`: a name to the proxy, resolved and checked as an address.
                    let _ = theirs;
                }
                (Host::Ip(IpAddr::V4(ip)), Some(url::Host::Ipv4(theirs))) => assert_eq!(*ip, theirs),
                (Host::Ip(IpAddr::V6(ip)), Some(url::Host::Ipv6(theirs))) => assert_eq!(*ip, theirs),
                (ours, theirs) => panic!("proxy reads {ours:?}, url reads {theirs:?} in {authority:?}"),
            }
            if let Some(port) = parsed.port() {
                assert_eq!(port, target.port, "port of {authority:?}");
            }
        }
    }
    // Allowlist entries: `allow \n deny \n name=address` lines.
    if let Ok(text) = std::str::from_utf8(data) {
        let mut lines = text.lines();
        let allow: Vec<String> = lines.next().unwrap_or("").split(',').map(str::to_owned).collect();
        let deny: Vec<String> =
            lines.next().unwrap_or("").split(',').filter(|s| !s.is_empty()).map(str::to_owned).collect();
        let hosts: IndexMap<String, String> = lines
            .filter_map(|line| line.split_once('='))
            .map(|(name, address)| (name.to_owned(), address.to_owned()))
            .collect();
        if let Ok(list) = Allowlist::parse(&allow, &deny, &hosts) {
            for entry in &allow {
                if let Some(host) = Host::parse(entry) {
                    let _ = list.refusal(&host, 443);
                }
            }
            let _ = list.describe();
        }
    }
});
