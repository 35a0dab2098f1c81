//! Who may use the approval page: `Host` and `Origin` checks, the login
//! token, session cookies and their CSRF tokens.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use warden_pipeline::access::{constant_time_eq, host_name, is_loopback_name};

use super::refuse;

/// A refused request: its status and why.
pub(super) struct Refusal(StatusCode, String);

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        refuse(self.0, &self.1)
    }
}

/// The session cookie's name.
const COOKIE: &str = "warden_approvals";

/// Clears the session cookie.
pub(super) const EXPIRED_COOKIE: &str = "warden_approvals=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0";

/// How long a login lasts (the cookie's `Max-Age`, and the session's life
/// on the server).
pub(super) const SESSION_LIFETIME: Duration = Duration::from_secs(12 * 3600);

/// Wrong tokens an address may send before it has to wait.
const FREE_FAILURES: u32 = 5;
/// The first wait after those; each further failure doubles it.
const FIRST_WAIT: Duration = Duration::from_secs(1);
/// The longest wait.
const LONGEST_WAIT: Duration = Duration::from_secs(300);

/// Wrong login tokens per client address, and how long each must wait
/// before trying again: 5 free, then 1 s, 2 s, 4 s, ... up to 5 minutes.
/// While an address waits its attempts are refused unread, the right token
/// included. A right token clears its count.
#[derive(Default)]
pub(super) struct Throttle {
    failures: Mutex<HashMap<IpAddr, (u32, Instant)>>,
}

impl Throttle {
    /// How long `ip` must still wait, if it must.
    pub fn waiting(&self, ip: IpAddr) -> Option<Duration> {
        let failures = self.lock();
        let (_, until) = failures.get(&ip)?;
        until.checked_duration_since(Instant::now()).filter(|left| !left.is_zero())
    }

    fn failed(&self, ip: IpAddr) {
        let mut failures = self.lock();
        if failures.len() > 10_000 {
            // Bounded: forget the addresses whose wait is over.
            let now = Instant::now();
            failures.retain(|_, (_, until)| *until > now);
        }
        let (count, until) = failures.entry(ip).or_insert((0, Instant::now()));
        *count += 1;
        if *count > FREE_FAILURES {
            let doublings = (*count - FREE_FAILURES - 1).min(16);
            let wait = FIRST_WAIT.saturating_mul(1 << doublings).min(LONGEST_WAIT);
            *until = Instant::now() + wait;
        }
    }

    fn succeeded(&self, ip: IpAddr) {
        self.lock().remove(&ip);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<IpAddr, (u32, Instant)>> {
        warden_sync::lock(&self.failures)
    }
}

/// A live session: its CSRF token, when it ends, and whose token opened it.
pub(super) struct Session {
    csrf: String,
    ends: Instant,
    name: Option<String>,
}

/// Who made a state-changing request.
pub(super) enum Who {
    /// A logged-in browser session: its id, and the name of the token it
    /// logged in with (`None` for the unnamed token).
    Session(String, Option<String>),
    /// A script with a bearer token (its name, if it has one).
    Token(Option<String>),
}

impl Who {
    /// How decisions name them: `web:alice` for a named token's session,
    /// `web:alice (token)` for its script; `web:<session prefix>` or
    /// `web:token` with the unnamed token.
    pub fn name(&self) -> String {
        match self {
            Who::Session(_, Some(name)) => format!("web:{name}"),
            Who::Session(session, None) => format!("web:{}", &session[..8.min(session.len())]),
            Who::Token(Some(name)) => format!("web:{name} (token)"),
            Who::Token(None) => "web:token".to_owned(),
        }
    }
}

/// The page's access rules and sessions.
pub(super) struct Guard {
    /// The unnamed login token.
    pub token: Option<String>,
    /// Named login tokens (name, token).
    pub tokens: Vec<(String, String)>,
    pub allowed_hosts: Vec<String>,
    pub bound: SocketAddr,
    /// Session id → its CSRF token and end.
    pub sessions: Mutex<HashMap<String, Session>>,
    /// Wrong tokens per address.
    pub throttle: Throttle,
}

fn random() -> String {
    crate::record::random_id()
}

impl Guard {
    /// The `Host` must name this page.
    pub fn host(&self, headers: &HeaderMap) -> Result<(), Refusal> {
        let host = headers.get(header::HOST).and_then(|v| v.to_str().ok()).unwrap_or("").to_ascii_lowercase();
        let name = host_name(&host);
        let allowed = (!host.is_empty())
            && ((self.bound.ip().is_loopback() && is_loopback_name(name))
                || name.parse::<IpAddr>().is_ok_and(|ip| ip == self.bound.ip())
                || self
                    .allowed_hosts
                    .iter()
                    .any(|allowed| allowed.eq_ignore_ascii_case(&host) || allowed.eq_ignore_ascii_case(name)));
        if allowed { Ok(()) } else { Err(Refusal(StatusCode::FORBIDDEN, format!("Host {host:?} is not this page"))) }
    }

    /// A browser's POST must come from this page: its `Origin` is
    /// `http://<Host>`.
    pub fn origin(&self, headers: &HeaderMap) -> Result<(), Refusal> {
        let host = headers.get(header::HOST).and_then(|v| v.to_str().ok()).unwrap_or("");
        let origin = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()).unwrap_or("");
        if !host.is_empty() && origin.eq_ignore_ascii_case(&format!("http://{host}")) {
            Ok(())
        } else {
            Err(Refusal(StatusCode::FORBIDDEN, format!("Origin {origin:?} is not this page")))
        }
    }

    /// Whose token `presented` is: `Some(None)` for the unnamed one,
    /// `Some(Some(name))` for a named one. Every token is compared, in
    /// constant time.
    fn token_owner(&self, presented: &str) -> Option<Option<String>> {
        let presented = presented.trim().as_bytes();
        let mut owner = None;
        if self.token.as_ref().is_some_and(|token| constant_time_eq(presented, token.as_bytes())) {
            owner = Some(None);
        }
        for (name, token) in &self.tokens {
            if constant_time_eq(presented, token.as_bytes()) {
                owner = Some(Some(name.clone()));
            }
        }
        owner
    }

    /// A new session for a valid token from `ip`: its `Set-Cookie` value.
    /// A wrong token counts against `ip` (see [`Throttle`]).
    pub fn login(&self, token: &str, ip: IpAddr) -> Option<String> {
        let Some(name) = self.token_owner(token) else {
            self.throttle.failed(ip);
            return None;
        };
        self.throttle.succeeded(ip);
        Some(self.open_session(name))
    }

    /// A new session for the holder of token `name` (`None`: the unnamed
    /// token, or a one-time link): its `Set-Cookie` value.
    pub fn open_session(&self, name: Option<String>) -> String {
        let session = format!("{}{}", random(), random());
        let mut sessions = self.lock();
        let now = Instant::now();
        sessions.retain(|_, session| session.ends > now);
        sessions.insert(session.clone(), Session { csrf: random(), ends: now + SESSION_LIFETIME, name });
        format!("{COOKIE}={session}; HttpOnly; SameSite=Strict; Path=/; Max-Age={}", SESSION_LIFETIME.as_secs())
    }

    /// Ends the request's session.
    pub fn logout(&self, headers: &HeaderMap) {
        if let Some((session, _)) = self.session(headers) {
            self.lock().remove(&session);
        }
    }

    /// The request's session and its CSRF token, if it has a valid one.
    pub fn session(&self, headers: &HeaderMap) -> Option<(String, String)> {
        self.session_of(headers).map(|(session, csrf, _)| (session, csrf))
    }

    /// The request's session, its CSRF token and its token's name.
    fn session_of(&self, headers: &HeaderMap) -> Option<(String, String, Option<String>)> {
        let presented = headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(';'))
            .filter_map(|pair| pair.trim().strip_prefix(COOKIE).and_then(|rest| rest.strip_prefix('=')))
            .next()?;
        let sessions = self.lock();
        // Compared one by one in constant time: the map's lookup would
        // compare the secret byte by byte.
        let now = Instant::now();
        sessions
            .iter()
            .find(|(session, _)| constant_time_eq(session.as_bytes(), presented.as_bytes()))
            .filter(|(_, session)| session.ends > now)
            .map(|(session, live)| (session.clone(), live.csrf.clone(), live.name.clone()))
    }

    /// Whose bearer token the request carries, if it carries a valid one.
    fn bearer(&self, headers: &HeaderMap) -> Option<Option<String>> {
        headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .and_then(|token| self.token_owner(token))
    }

    /// A read: right host, and a session or the bearer token.
    pub fn read(&self, headers: &HeaderMap) -> Result<(), Refusal> {
        self.host(headers)?;
        if self.bearer(headers).is_some() || self.session(headers).is_some() {
            Ok(())
        } else {
            Err(Refusal(StatusCode::UNAUTHORIZED, "log in first".into()))
        }
    }

    /// A change: right host; the bearer token, or a session with its CSRF
    /// token (in `form` or the `X-CSRF-Token` header) from this page's origin.
    pub fn post(&self, headers: &HeaderMap, form: Option<&str>) -> Result<Who, Refusal> {
        self.host(headers)?;
        if let Some(name) = self.bearer(headers) {
            return Ok(Who::Token(name));
        }
        self.origin(headers)?;
        let Some((session, csrf, name)) = self.session_of(headers) else {
            return Err(Refusal(StatusCode::UNAUTHORIZED, "log in first".into()));
        };
        let presented = form.or_else(|| headers.get("x-csrf-token").and_then(|v| v.to_str().ok())).unwrap_or("");
        if constant_time_eq(presented.as_bytes(), csrf.as_bytes()) {
            Ok(Who::Session(session, name))
        } else {
            Err(Refusal(StatusCode::FORBIDDEN, "the CSRF token is missing or wrong".into()))
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Session>> {
        warden_sync::lock(&self.sessions)
    }
}

/// Roughly how many bits a token carries: its length times the bits of the
/// smallest alphabet its characters come from (digits, hex, letters and
/// digits, or all printable). A configured token needs 128.
pub fn token_bits(token: &str) -> f64 {
    let alphabet: f64 = if token.chars().all(|c| c.is_ascii_digit()) {
        10.0
    } else if token.chars().all(|c| c.is_ascii_hexdigit()) {
        16.0
    } else if token.chars().all(|c| c.is_ascii_alphanumeric()) {
        62.0
    } else if token.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        64.0
    } else {
        95.0
    };
    token.chars().count() as f64 * alphabet.log2()
}
