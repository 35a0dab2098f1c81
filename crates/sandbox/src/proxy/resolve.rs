//! Resolving an allowed name, and refusing addresses a name must not lead to.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use super::allow::{Allowlist, Host};

/// Whether `ip` is an address an allowed *name* must not resolve to unless
/// the address itself is listed: one of this machine's own interfaces
/// (a listener on all interfaces answers there), or a special-purpose
/// address (RFC 6890 and its updates): loopback, private, link-local (cloud
/// metadata lives there), shared, unspecified, documentation, benchmarking,
/// reserved, multicast, broadcast, in any IPv6 form that embeds IPv4.
pub fn is_internal(ip: IpAddr) -> bool {
    is_special(ip) || super::interfaces::is_own(ip)
}

/// The special-purpose part of [`is_internal`], which needs no system call.
pub fn is_special(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(ip) => is_special_v4(ip),
        IpAddr::V6(ip) => match embedded_v4(ip) {
            Some(v4) => is_special_v4(v4),
            None => is_special_v6(ip),
        },
    }
}

fn is_special_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_multicast()
        || ip.is_broadcast()
        || a == 0
        // Shared address space (carrier-grade NAT).
        || (a == 100 && (64..128).contains(&b))
        // IETF protocol assignments, 6to4 relay anycast.
        || (a == 192 && b == 0 && c == 0)
        || (a == 192 && b == 88 && c == 99)
        // Documentation.
        || (a == 192 && b == 0 && c == 2)
        || (a == 198 && b == 51 && c == 100)
        || (a == 203 && b == 0 && c == 113)
        // Benchmarking.
        || (a == 198 && (b & 0xfe) == 18)
        // Reserved for future use (240/4).
        || a >= 240
}

/// The IPv4 address inside an IPv6 one that stands for it: mapped
/// (`::ffff:a.b.c.d`), compatible (`::a.b.c.d`), NAT64 (`64:ff9b::/96`,
/// `64:ff9b:1::/48`), 6to4 (`2002:AABB:CCDD::/16`); Teredo is refused whole.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let low = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    if let Some(v4) = ip.to_ipv4_mapped() {
        return Some(v4);
    }
    if s[..6] == [0; 6] && (s[6] != 0 || s[7] > 1) {
        return Some(low);
    }
    let nat64 = s[0] == 0x64 && s[1] == 0xff9b;
    if nat64 && (s[2..6] == [0; 4] || s[2] == 1) {
        return Some(low);
    }
    if s[0] == 0x2002 {
        return Some(Ipv4Addr::new((s[1] >> 8) as u8, s[1] as u8, (s[2] >> 8) as u8, s[2] as u8));
    }
    None
}

fn is_special_v6(ip: Ipv6Addr) -> bool {
    let s = ip.segments();
    ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        // Unique local, link-local, site-local (deprecated).
        || (s[0] & 0xfe00) == 0xfc00
        || (s[0] & 0xffc0) == 0xfe80
        || (s[0] & 0xffc0) == 0xfec0
        // Discard-only.
        || (s[0] == 0x100 && s[1..4] == [0; 3])
        // IETF protocol assignments (2001::/23): Teredo, benchmarking, ORCHID ...
        || (s[0] == 0x2001 && s[1] < 0x200)
        // Documentation (2001:db8::/32, 3fff::/20).
        || (s[0] == 0x2001 && s[1] == 0xdb8)
        || (s[0] & 0xfff0) == 0x3ff0
        // Segment routing SIDs (5f00::/16).
        || s[0] == 0x5f00
}

/// The address to dial for `host:port`, checked: an IP literal as it is
/// (the allowlist already listed it); a name through the fixed hosts, else
/// DNS, keeping the first address that is public or explicitly listed.
pub async fn resolve(list: &Allowlist, host: &Host, port: u16) -> Result<SocketAddr, String> {
    let name = match host {
        Host::Ip(ip) => return Ok(SocketAddr::new(*ip, port)),
        Host::Name(name) => name,
    };
    let addresses: Vec<IpAddr> = match list.hosts.iter().find(|(fixed, _)| fixed == name) {
        Some((_, ip)) => vec![*ip],
        None => tokio::net::lookup_host((name.as_str(), port))
            .await
            .map_err(|err| format!("{name} could not be resolved: {err}"))?
            .map(|address| address.ip())
            .collect(),
    };
    let mut refused = None;
    for ip in addresses {
        if !is_internal(ip) || list.address_listed(ip, port) {
            return Ok(SocketAddr::new(ip, port));
        }
        refused.get_or_insert(ip);
    }
    Err(match refused {
        Some(ip) => format!(
            "{name} resolves to {ip}, an address of this machine or a special-purpose one (loopback, private, link-local, documentation ...), which is refused unless that address is itself in the allowlist"
        ),
        None => format!("{name} has no address"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_purpose_addresses_in_every_form() {
        for special in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "100.127.255.254",
            "0.0.0.0",
            "0.1.2.3",
            "192.0.0.8",
            "192.0.2.1",
            "198.51.100.7",
            "203.0.113.9",
            "198.18.0.1",
            "198.19.255.255",
            "192.88.99.1",
            "224.0.0.1",
            "239.255.255.250",
            "240.0.0.1",
            "255.255.255.255",
            "::",
            "::1",
            "fd00:ec2::254",
            "fe80::1",
            "fec0::1",
            "ff02::1",
            "100::1",
            "2001:db8::1",
            "2001::1",
            "2001:2::1",
            "3fff::1",
            "::ffff:127.0.0.1",
            "::ffff:192.0.2.1",
            "::ffff:7f00:1",
            "::127.0.0.1",
            "::10.0.0.1",
            "64:ff9b::127.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "64:ff9b:1::10.0.0.1",
            "2002:7f00:1::1",
            "2002:c0a8:101::1",
        ] {
            assert!(is_special(special.parse().unwrap()), "{special}");
        }
        for public in [
            "1.1.1.1",
            "140.82.112.3",
            "100.128.0.1",
            "2606:4700::1111",
            "::ffff:1.1.1.1",
            "64:ff9b::1.1.1.1",
            "2002:101:101::1",
        ] {
            assert!(!is_special(public.parse().unwrap()), "{public}");
        }
    }
}
