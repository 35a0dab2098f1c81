//! This machine's own addresses: a name that resolves to one of them leads
//! back here (a service listening on all interfaces answers there), so the
//! proxy refuses it like loopback.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Whether `ip` is an address of one of this machine's interfaces, asked
/// each time (interfaces come and go). If they cannot be listed, every
/// address counts as this machine's: the proxy fails closed.
pub fn is_own(ip: IpAddr) -> bool {
    match own_addresses() {
        Ok(own) => own.contains(&normalize(ip)),
        Err(_) => true,
    }
}

/// An IPv4-mapped IPv6 address as the IPv4 address it stands for.
fn normalize(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        IpAddr::V4(_) => ip,
    }
}

/// Every address of every interface, up or not.
pub fn own_addresses() -> std::io::Result<Vec<IpAddr>> {
    let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `list` with a linked list freed below.
    if unsafe { libc::getifaddrs(&mut list) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let mut out = Vec::new();
    let mut cursor = list;
    while !cursor.is_null() {
        // SAFETY: `cursor` is a node of the list getifaddrs returned, not yet freed.
        let entry = unsafe { &*cursor };
        if !entry.ifa_addr.is_null() {
            // SAFETY: ifa_addr points to a sockaddr whose family says its real type.
            let family = i32::from(unsafe { (*entry.ifa_addr).sa_family });
            if family == libc::AF_INET {
                // SAFETY: an AF_INET address is a sockaddr_in.
                let addr = unsafe { &*(entry.ifa_addr as *const libc::sockaddr_in) };
                out.push(IpAddr::V4(Ipv4Addr::from(u32::from_be(addr.sin_addr.s_addr))));
            } else if family == libc::AF_INET6 {
                // SAFETY: an AF_INET6 address is a sockaddr_in6.
                let addr = unsafe { &*(entry.ifa_addr as *const libc::sockaddr_in6) };
                out.push(IpAddr::V6(Ipv6Addr::from(addr.sin6_addr.s6_addr)));
            }
        }
        cursor = entry.ifa_next;
    }
    // SAFETY: `list` came from getifaddrs and is freed once.
    unsafe { libc::freeifaddrs(list) };
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_is_one_of_this_machines_addresses() {
        let own = own_addresses().unwrap();
        assert!(own.contains(&IpAddr::V4(Ipv4Addr::LOCALHOST)), "{own:?}");
        assert!(is_own("127.0.0.1".parse().unwrap()));
        assert!(is_own("::ffff:127.0.0.1".parse().unwrap()));
        assert!(!is_own("1.1.1.1".parse().unwrap()));
    }
}
