//! The headers the front reads of a request, found in one pass over its
//! map. A lookup by name hashes the name and probes the map (about 200
//! instructions, more for a name that is not a standard one), and a POST
//! read nine of them, two twice; one pass over the few headers a client
//! sends costs less than two lookups.

use axum::http::{HeaderMap, HeaderValue};

/// A request's headers, with those the front reads found once.
pub(super) struct RequestHeaders<'a> {
    map: &'a HeaderMap,
    host: Option<&'a HeaderValue>,
    origin: Option<&'a HeaderValue>,
    authorization: Option<&'a HeaderValue>,
    content_type: Option<&'a HeaderValue>,
    accept: Accept<'a>,
    session: Option<&'a HeaderValue>,
    version: Option<&'a HeaderValue>,
    profile: Option<&'a HeaderValue>,
    method: Option<&'a HeaderValue>,
    name: Option<&'a HeaderValue>,
    last_event_id: Option<&'a HeaderValue>,
}

/// The `Accept` values: none, one, or several (read from the map again).
#[derive(Clone, Copy)]
pub(super) enum Accept<'a> {
    /// No `Accept` header.
    None,
    /// Exactly one.
    One(&'a HeaderValue),
    /// More than one: [`HeaderMap::get_all`] lists them.
    Several,
}

impl<'a> RequestHeaders<'a> {
    /// Reads `map` once. Where a header is repeated, the first value counts,
    /// as [`HeaderMap::get`] has it (the map yields a name's values in order).
    pub fn of(map: &'a HeaderMap) -> RequestHeaders<'a> {
        let mut read = RequestHeaders {
            map,
            host: None,
            origin: None,
            authorization: None,
            content_type: None,
            accept: Accept::None,
            session: None,
            version: None,
            profile: None,
            method: None,
            name: None,
            last_event_id: None,
        };
        for (name, value) in map {
            let slot = match name.as_str() {
                "host" => &mut read.host,
                "origin" => &mut read.origin,
                "authorization" => &mut read.authorization,
                "content-type" => &mut read.content_type,
                "mcp-session-id" => &mut read.session,
                "mcp-protocol-version" => &mut read.version,
                "warden-profile" => &mut read.profile,
                "mcp-method" => &mut read.method,
                "mcp-name" => &mut read.name,
                "last-event-id" => &mut read.last_event_id,
                "accept" => {
                    read.accept = match read.accept {
                        Accept::None => Accept::One(value),
                        _ => Accept::Several,
                    };
                    continue;
                }
                _ => continue,
            };
            slot.get_or_insert(value);
        }
        read
    }

    /// The whole map, for headers read rarely (`Mcp-Param-*`).
    pub fn map(&self) -> &'a HeaderMap {
        self.map
    }

    /// `Host`.
    pub fn host(&self) -> Option<&'a HeaderValue> {
        self.host
    }

    /// `Origin`.
    pub fn origin(&self) -> Option<&'a HeaderValue> {
        self.origin
    }

    /// `Authorization`.
    pub fn authorization(&self) -> Option<&'a HeaderValue> {
        self.authorization
    }

    /// `Content-Type`.
    pub fn content_type(&self) -> Option<&'a HeaderValue> {
        self.content_type
    }

    /// The `Accept` values.
    pub fn accept(&self) -> Accept<'a> {
        self.accept
    }

    /// `Mcp-Session-Id`.
    pub fn session(&self) -> Option<&'a HeaderValue> {
        self.session
    }

    /// `MCP-Protocol-Version`.
    pub fn version(&self) -> Option<&'a HeaderValue> {
        self.version
    }

    /// `Warden-Profile`.
    pub fn profile(&self) -> Option<&'a HeaderValue> {
        self.profile
    }

    /// `Mcp-Method` (2026-07-28).
    pub fn method(&self) -> Option<&'a HeaderValue> {
        self.method
    }

    /// `Mcp-Name` (2026-07-28).
    pub fn name(&self) -> Option<&'a HeaderValue> {
        self.name
    }

    /// `Last-Event-ID`.
    pub fn last_event_id(&self) -> Option<&'a HeaderValue> {
        self.last_event_id
    }
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderName;
    use axum::http::header;

    use super::*;

    /// Every header found in the pass is the one a lookup by name finds,
    /// in any case and order, repeated or not.
    #[test]
    fn one_pass_finds_what_lookups_by_name_find() {
        let mut map = HeaderMap::new();
        let mut add = |name: &str, value: &str| {
            let name = HeaderName::from_bytes(name.as_bytes()).expect("a header name");
            map.append(name, HeaderValue::from_str(value).expect("a header value"));
        };
        add("Content-Length", "12");
        add("HOST", "127.0.0.1:8210");
        add("mcp-session-id", "first");
        add("Accept", "application/json");
        add("User-Agent", "node");
        add("Mcp-Session-Id", "second");
        add("mcp-protocol-version", "2025-11-25");
        add("Origin", "http://localhost");
        add("Mcp-Method", "tools/call");
        add("mcp-name", "echo");
        add("last-event-id", "3-1");
        add("warden-profile", "ro");
        add("content-type", "application/json");
        let read = RequestHeaders::of(&map);
        let pairs: [(Option<&HeaderValue>, &str); 10] = [
            (read.host(), "host"),
            (read.origin(), "origin"),
            (read.authorization(), "authorization"),
            (read.content_type(), "content-type"),
            (read.session(), "mcp-session-id"),
            (read.version(), "mcp-protocol-version"),
            (read.profile(), "warden-profile"),
            (read.method(), "mcp-method"),
            (read.name(), "mcp-name"),
            (read.last_event_id(), "last-event-id"),
        ];
        for (found, name) in pairs {
            assert_eq!(found, map.get(name), "{name}");
        }
        assert_eq!(read.session().map(HeaderValue::as_bytes), Some(&b"first"[..]));
        assert!(matches!(read.accept(), Accept::One(value) if value == "application/json"));
        map.append(header::ACCEPT, HeaderValue::from_static("text/event-stream"));
        assert!(matches!(RequestHeaders::of(&map).accept(), Accept::Several));
        assert!(matches!(RequestHeaders::of(&HeaderMap::new()).accept(), Accept::None));
    }
}
