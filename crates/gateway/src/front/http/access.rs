//! Who may talk to the HTTP front: `Host` and `Origin` checks against DNS
//! rebinding, bearer tokens, and the profile each token may use.

use std::borrow::Cow;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::http::{HeaderValue, StatusCode};
use warden_config::Config;

use super::reply::Refusal;
use super::request_headers::RequestHeaders;
pub use warden_pipeline::access::{constant_time_eq, host_name, is_loopback_name};

/// The front's access rules.
pub(super) struct Access {
    tokens: Vec<Holder>,
    allowed_hosts: Vec<String>,
    allowed_origins: Vec<String>,
    bound: SocketAddr,
    /// The `Host` a client of the bound address sends (`127.0.0.1:8210`),
    /// allowed at a glance: most requests carry it, and the general check
    /// parses an address. `None` when that text would not name the bound
    /// address (a scoped IPv6 address).
    bound_host: Option<String>,
    /// Every profile the configuration defines.
    profiles: Vec<String>,
    /// The profile used when a caller picks none (`--profile`, else `defaultProfile`).
    default_profile: Option<String>,
}

struct Holder {
    name: Arc<str>,
    secret: Vec<u8>,
    profiles: Vec<String>,
}

/// Who is calling, once checked.
#[derive(Debug, Clone)]
pub(super) struct Caller {
    /// The token holder's name; `None` when the front has no tokens.
    pub name: Option<Arc<str>>,
    profiles: Option<Vec<String>>,
}

impl Access {
    /// The rules of `config` for a front bound to `bound`.
    pub fn new(config: &Config, bound: SocketAddr, default_profile: Option<String>) -> Access {
        Access {
            tokens: config
                .auth
                .tokens
                .iter()
                .map(|token| Holder {
                    name: Arc::from(token.name.as_str()),
                    secret: token.token.as_bytes().to_vec(),
                    profiles: token.profiles.clone(),
                })
                .collect(),
            allowed_hosts: config.http.allowed_hosts.iter().map(|host| host.to_ascii_lowercase()).collect(),
            allowed_origins: config.http.allowed_origins.iter().map(|origin| origin.to_ascii_lowercase()).collect(),
            bound,
            bound_host: Some(bound.to_string())
                .filter(|text| host_name(text).parse::<IpAddr>().is_ok_and(|ip| ip == bound.ip())),
            profiles: config.profiles.keys().cloned().collect(),
            default_profile: default_profile.or_else(|| config.default_profile.clone()),
        }
    }

    /// Checks a request's `Host`, `Origin` and token.
    pub fn check(&self, headers: &RequestHeaders<'_>) -> Result<Caller, Refusal> {
        self.check_origin_and_host(headers)?;
        self.authenticate(headers)
    }

    /// Checks a request's `Host` and `Origin` only (DNS rebinding).
    pub fn check_origin_and_host(&self, headers: &RequestHeaders<'_>) -> Result<(), Refusal> {
        self.check_host(headers)?;
        self.check_origin(headers)
    }

    fn check_host(&self, headers: &RequestHeaders<'_>) -> Result<(), Refusal> {
        let Some(host) = headers.host().and_then(|value| value.to_str().ok()) else {
            return Err(Refusal::new(StatusCode::BAD_REQUEST, "the request has no Host header"));
        };
        if self.bound_host.as_deref() == Some(host) {
            return Ok(());
        }
        // Copied only when it has capitals: asked of every request.
        let host = if host.bytes().any(|byte| byte.is_ascii_uppercase()) {
            Cow::Owned(host.to_ascii_lowercase())
        } else {
            Cow::Borrowed(host)
        };
        let name = host_name(&host);
        let allowed = self.allowed_hosts.iter().any(|allowed| *allowed == host || allowed == name)
            || (self.bound.ip().is_loopback() && is_loopback_name(name))
            || name.parse::<IpAddr>().is_ok_and(|ip| ip == self.bound.ip())
            // Bound to every interface with no list: the name cannot be known,
            // and such a front requires a token (or an explicit override).
            || (self.bound.ip().is_unspecified() && self.allowed_hosts.is_empty());
        if allowed {
            Ok(())
        } else {
            Err(Refusal::new(
                StatusCode::FORBIDDEN,
                &format!("Host {host:?} is not allowed (DNS rebinding protection; see http.allowedHosts)"),
            ))
        }
    }

    fn check_origin(&self, headers: &RequestHeaders<'_>) -> Result<(), Refusal> {
        let Some(origin) = headers.origin() else { return Ok(()) };
        let origin = origin.to_str().unwrap_or("").to_ascii_lowercase();
        let loopback = origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"))
            .is_some_and(|rest| is_loopback_name(host_name(rest)));
        if loopback || self.allowed_origins.contains(&origin) {
            Ok(())
        } else {
            Err(Refusal::new(
                StatusCode::FORBIDDEN,
                &format!("Origin {origin:?} is not allowed (DNS rebinding protection; see http.allowedOrigins)"),
            ))
        }
    }

    /// Who presents a request's bearer token (anyone, on a front without tokens).
    pub fn authenticate(&self, headers: &RequestHeaders<'_>) -> Result<Caller, Refusal> {
        self.authenticate_by(|| headers.authorization())
    }

    /// [`authenticate`](Access::authenticate), given how to find the
    /// `Authorization` header: looked for only when the front has tokens.
    pub fn authenticate_by<'h>(
        &self,
        authorization: impl FnOnce() -> Option<&'h HeaderValue>,
    ) -> Result<Caller, Refusal> {
        if self.tokens.is_empty() {
            return Ok(Caller { name: None, profiles: None });
        }
        let presented = authorization().and_then(|value| value.to_str().ok()).and_then(bearer_credentials);
        let Some(presented) = presented else {
            return Err(Refusal::unauthorized("this Warden needs a bearer token (Authorization: Bearer <token>)"));
        };
        // Every token is compared, in constant time, so timing tells nothing.
        let mut found = None;
        for holder in &self.tokens {
            if constant_time_eq(presented.as_bytes(), &holder.secret) {
                found = Some(holder);
            }
        }
        match found {
            Some(holder) => Ok(Caller { name: Some(holder.name.clone()), profiles: Some(holder.profiles.clone()) }),
            None => Err(Refusal::unauthorized("the bearer token is not valid")),
        }
    }

    /// The profile a caller gets: the one named in the `Warden-Profile`
    /// header if the caller may use it, else the caller's default.
    pub fn profile(&self, caller: &Caller, headers: &RequestHeaders<'_>) -> Result<Option<String>, Refusal> {
        let asked = headers.profile().and_then(|value| value.to_str().ok()).map(str::trim);
        let allowed: &[String] = match &caller.profiles {
            Some(profiles) if !profiles.is_empty() => profiles,
            // A token without a list, or an open front: the default profile,
            // or (open front only) any profile by header.
            _ => &[],
        };
        let default = allowed.first().cloned().or_else(|| self.default_profile.clone());
        let Some(asked) = asked.filter(|asked| !asked.is_empty()) else { return Ok(default) };
        let may = if caller.profiles.is_none() {
            self.profiles.iter().any(|profile| profile == asked)
        } else if allowed.is_empty() {
            default.as_deref() == Some(asked)
        } else {
            allowed.iter().any(|profile| profile == asked)
        };
        if may {
            Ok(Some(asked.to_owned()))
        } else if caller.profiles.is_none() {
            Err(Refusal::new(StatusCode::BAD_REQUEST, &format!("there is no profile {asked:?}")))
        } else {
            Err(Refusal::new(StatusCode::FORBIDDEN, &format!("this token may not use profile {asked:?}")))
        }
    }
}

/// The credentials of an `Authorization` value in the Bearer scheme, whose
/// name is case-insensitive (RFC 9110 §11.1): `Bearer`, `bearer`, `BEARER`.
fn bearer_credentials(value: &str) -> Option<&str> {
    let value = value.trim_start();
    let (scheme, rest) = value.split_once([' ', '\t'])?;
    scheme.eq_ignore_ascii_case("bearer").then(|| rest.trim()).filter(|token| !token.is_empty())
}

#[cfg(test)]
mod tests {
    use axum::http::{HeaderMap, header};

    use super::*;

    #[test]
    fn the_bearer_scheme_is_matched_in_any_case() {
        for value in ["Bearer abc", "bearer abc", "BEARER abc", "bEaReR  abc "] {
            assert_eq!(bearer_credentials(value), Some("abc"), "{value}");
        }
        assert_eq!(bearer_credentials("Basic abc"), None);
        assert_eq!(bearer_credentials("Bearerabc"), None);
        assert_eq!(bearer_credentials("Bearer "), None);
    }

    #[test]
    fn only_hosts_that_are_loopback_to_a_url_parser_are_loopback() {
        // Found by the http_headers fuzz target (differential with the `url`
        // crate, which reads these hosts as `t-`, `evil.example`).
        assert!(!is_loopback_name(host_name("[::1]:c@t-")));
        assert!(!is_loopback_name(host_name("[::1]x")));
        assert!(!is_loopback_name(host_name("evil.example?.localhost")));
        assert!(!is_loopback_name(host_name("evil.example#.localhost")));
        assert!(!is_loopback_name(host_name("a@b.localhost:80")));
        assert!(is_loopback_name(host_name("[::1]")) && is_loopback_name(host_name("app.localhost:8210")));
    }

    /// The `Host` allowed at a glance is one the general check allows too,
    /// and only that exact text takes the shortcut.
    #[test]
    fn the_bound_address_as_host_is_allowed_as_the_general_check_would() {
        let host = |text: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(header::HOST, axum::http::HeaderValue::from_str(text).expect("a header value"));
            headers
        };
        for bound in ["127.0.0.1:8210", "0.0.0.0:80", "[::1]:8210", "10.1.2.3:443", "[::]:9"] {
            let bound: SocketAddr = bound.parse().expect("an address");
            let mut access = Access::new(&Config::default(), bound, None);
            assert_eq!(access.bound_host.as_deref(), Some(bound.to_string().as_str()));
            let headers = host(&bound.to_string());
            assert!(access.check_host(&RequestHeaders::of(&headers)).is_ok(), "{bound}");
            access.bound_host = None;
            assert!(access.check_host(&RequestHeaders::of(&headers)).is_ok(), "{bound}, the general check");
        }
        let scoped: SocketAddr = "[fe80::1%2]:8210".parse().expect("an address");
        assert_eq!(Access::new(&Config::default(), scoped, None).bound_host, None);
        let mut access = Access::new(&Config::default(), "10.1.2.3:443".parse().expect("an address"), None);
        let hosts = ["10.1.2.3:443", "10.1.2.3:4430", "10.1.2.30:443", "evil.example", "LOCALHOST:443", "[::1]:443"];
        let allowed = |access: &Access, text: &str| access.check_host(&RequestHeaders::of(&host(text))).is_ok();
        let fast: Vec<bool> = hosts.iter().map(|text| allowed(&access, text)).collect();
        access.bound_host = None;
        let general: Vec<bool> = hosts.iter().map(|text| allowed(&access, text)).collect();
        assert_eq!(fast, general);
        assert_eq!(fast, [true, true, false, false, false, false]);
    }

    #[test]
    fn tokens_compare_whole() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd") && !constant_time_eq(b"abc", b"abcd"));
    }
}
