//! Resolving an allowed name, and refusing addresses a name must not lead to.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use super::allow::{Allowlist, Host};

/// Whether `ip` is an address an allowed *name* must not resolve to unless
/// the address itself is listed: loopback, private, link-local (cloud
/// metadata lives there), shared, unspecified, multicast, broadcast.
pub fn is_internal(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(ip) => is_internal_v4(ip),
        IpAddr::V6(ip) => match ip.to_ipv4_mapped() {
            Some(v4) => is_internal_v4(v4),
            None => is_internal_v6(ip),
        },
    }
}

fn is_internal_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_multicast()
        || ip.is_broadcast()
        || a == 0
        || (a == 100 && (64..128).contains(&b))
        || (a == 192 && b == 0 && ip.octets()[2] == 0)
}

fn is_internal_v6(ip: Ipv6Addr) -> bool {
    let first = ip.segments()[0];
    ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        || (first & 0xfe00) == 0xfc00
        || (first & 0xffc0) == 0xfe80
        || ip.to_ipv4().is_some_and(|v4| ip.segments()[..6] == [0; 6] && is_internal_v4(v4))
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
            "{name} resolves to {ip}, a loopback, private or link-local address, which is refused unless that address is itself in the allowlist"
        ),
        None => format!("{name} has no address"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_addresses() {
        for internal in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fd00:ec2::254",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::127.0.0.1",
        ] {
            assert!(is_internal(internal.parse().unwrap()), "{internal}");
        }
        for public in ["1.1.1.1", "140.82.112.3", "2606:4700::1111", "::ffff:1.1.1.1"] {
            assert!(!is_internal(public.parse().unwrap()), "{public}");
        }
    }
}
