//! The host policies read in URL arguments against the `url` crate (WHATWG):
//! where Warden sees a DNS name in an `http(s)://` URL, `url` must see that
//! same name (else an allowlist would admit one host while the server
//! fetches another); where Warden sees an IP address, `url` must too, the
//! same one for IPv6. A URL Warden finds no host in is refused, so that
//! direction needs no agreement.
#![no_main]

use libfuzzer_sys::fuzz_target;
use url::{Host, Url};
use warden_policy::url_host;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let ours = url_host(text);
    let Ok((host, is_ip)) = ours else { return };
    assert!(!host.is_empty(), "an empty host from {text:?}");
    // Only web URLs with an authority: what `url` and fetching servers read alike.
    let lower = text.trim().to_ascii_lowercase();
    if !(lower.starts_with("http://") || lower.starts_with("https://")) {
        return;
    }
    let Ok(parsed) = Url::parse(text.trim()) else { return };
    match (parsed.host(), is_ip) {
        (Some(Host::Domain(domain)), false) => {
            // `a.com.` and `a.com` are one DNS name (policies drop one dot).
            let domain = domain.strip_suffix('.').unwrap_or(domain);
            assert_eq!(domain, host, "Warden reads host {host:?}, url reads {domain:?} in {text:?}")
        }
        (Some(Host::Ipv4(_)), true) => {}
        (Some(Host::Ipv6(address)), true) => {
            let ours = host.split('%').next().unwrap_or(&host);
            assert_eq!(ours.parse::<std::net::Ipv6Addr>().ok(), Some(address), "IPv6 of {text:?}")
        }
        (theirs, _) => panic!("Warden reads {host:?} (ip: {is_ip}), url reads {theirs:?} in {text:?}"),
    }
});
