//! Headers the HTTP front reads by itself: `Host` and `Origin` (DNS
//! rebinding protection). Whatever `host_name` takes as a loopback name from
//! a `Host` header, a browser and the `url` crate read as loopback too; the
//! bearer-token comparison is equality.
#![no_main]

use std::net::IpAddr;

use libfuzzer_sys::fuzz_target;
use url::Url;
use warden_gateway::front::{constant_time_eq, host_name, is_loopback_name};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let lower = text.to_ascii_lowercase();
    let name = host_name(&lower);
    assert!(lower.contains(name), "host_name({lower:?}) = {name:?}");
    if is_loopback_name(name) {
        // The browser's reading of the same Host header.
        if let Ok(parsed) = Url::parse(&format!("http://{lower}/")) {
            let loopback = match parsed.host() {
                Some(url::Host::Domain(domain)) => domain == "localhost" || domain.ends_with(".localhost"),
                Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip).is_loopback(),
                Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip).is_loopback(),
                None => false,
            };
            assert!(loopback, "Warden takes {lower:?} as loopback ({name:?}), url reads {:?}", parsed.host());
        }
    }
    if let Some((a, b)) = text.split_once('\u{0}') {
        assert_eq!(constant_time_eq(a.as_bytes(), b.as_bytes()), a == b);
    }
});
