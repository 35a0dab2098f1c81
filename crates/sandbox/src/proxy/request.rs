//! The head of a request to the proxy: `CONNECT host:port` or an absolute URI.

use super::allow::Host;

/// What a client asked the proxy for.
#[derive(Debug, PartialEq, Eq)]
pub struct Target {
    /// The host.
    pub host: Host,
    /// The port.
    pub port: u16,
    /// For plain HTTP: the head to send on, with the request line in origin
    /// form. `None` for `CONNECT` (a tunnel).
    pub forward: Option<Vec<u8>>,
}

/// Parses a request head (up to and including the blank line).
pub fn parse(head: &[u8]) -> Result<Target, String> {
    let text = std::str::from_utf8(head).map_err(|_| "the request head is not UTF-8".to_owned())?;
    let (line, rest) = text.split_once("\r\n").ok_or("no request line")?;
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version), None) = (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(format!("malformed request line {line:?}"));
    };
    if method == "CONNECT" {
        let (host, port) = split_authority(target, None)?;
        return Ok(Target { host, port, forward: None });
    }
    let Some(after) = target.strip_prefix("http://") else {
        return Err(format!(
            "{method} {target}: the proxy takes CONNECT host:port, or plain http:// URLs in absolute form"
        ));
    };
    let (authority, path) = match after.find(['/', '?']) {
        Some(at) => (&after[..at], &after[at..]),
        None => (after, "/"),
    };
    let path = if path.starts_with('?') { format!("/{path}") } else { path.to_owned() };
    let (host, port) = split_authority(authority, Some(80))?;
    let mut forward = format!("{method} {path} {version}\r\n").into_bytes();
    forward.extend_from_slice(rest.as_bytes());
    Ok(Target { host, port, forward: Some(forward) })
}

fn split_authority(authority: &str, default_port: Option<u16>) -> Result<(Host, u16), String> {
    if authority.contains('@') {
        return Err("credentials in the URL are not forwarded".into());
    }
    let (host, port) = match authority.rfind(':') {
        Some(at) if !authority[at..].contains(']') => (&authority[..at], Some(&authority[at + 1..])),
        _ => (authority, None),
    };
    let port = match (port, default_port) {
        (Some(port), _) => {
            port.parse().ok().filter(|port| *port != 0).ok_or_else(|| format!("bad port in {authority:?}"))?
        }
        (None, Some(port)) => port,
        (None, None) => return Err(format!("CONNECT needs host:port, not {authority:?}")),
    };
    let host = Host::parse(host).ok_or_else(|| format!("bad host in {authority:?}"))?;
    Ok((host, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connect_and_absolute_forms() {
        let target = parse(b"CONNECT api.github.com:443 HTTP/1.1\r\nHost: api.github.com:443\r\n\r\n").unwrap();
        assert_eq!((target.host, target.port, target.forward), (Host::Name("api.github.com".into()), 443, None));
        let target = parse(b"GET http://allowed.test:8080/a?b HTTP/1.1\r\nHost: allowed.test\r\n\r\n").unwrap();
        assert_eq!(target.port, 8080);
        assert_eq!(target.forward.unwrap(), b"GET /a?b HTTP/1.1\r\nHost: allowed.test\r\n\r\n");
        let target = parse(b"GET http://[::1] HTTP/1.1\r\n\r\n").unwrap();
        assert_eq!((target.host, target.port), (Host::Ip("::1".parse().unwrap()), 80));
        assert!(parse(b"GET /relative HTTP/1.1\r\n\r\n").is_err());
        assert!(parse(b"CONNECT host HTTP/1.1\r\n\r\n").is_err());
        assert!(parse(b"GET http://user:pw@host/ HTTP/1.1\r\n\r\n").is_err());
    }
}
