//! Fair shares between tokens: what one token may hold at once (sessions,
//! their server processes, open event streams, requests being handled,
//! client connections), so that no token can take the whole front from the
//! others.
//!
//! Each share is counted when taken and given back when its [`Held`]
//! drops: with the session's reservation, or with the response body that
//! streams the answer. Connections are counted by their table instead
//! (see [`Connections::claim`](super::connections::Connections::claim)).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::http::StatusCode;
use warden_config::{Config, TokenLimits};

use super::reply::Refusal;

/// What a client refused for its token's share is told to wait, in seconds.
pub(super) const RETRY_AFTER_SECS: u64 = 2;

/// One kind of share.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Share {
    Sessions,
    Processes,
    Streams,
    Calls,
    Connections,
}

/// Every kind of share, in the order of [`Share`]'s discriminants.
const SHARES: [Share; 5] = [Share::Sessions, Share::Processes, Share::Streams, Share::Calls, Share::Connections];

impl Share {
    fn key(self) -> &'static str {
        match self {
            Share::Sessions => "sessions",
            Share::Processes => "processes",
            Share::Streams => "streams",
            Share::Calls => "calls",
            Share::Connections => "connections",
        }
    }
}

/// The limits and what each token holds.
pub(super) struct Tenants {
    limits: HashMap<Arc<str>, [usize; 5]>,
    held: Mutex<HashMap<(Arc<str>, usize), usize>>,
}

/// A share a token holds, given back when dropped.
pub(super) struct Held {
    tenants: Arc<Tenants>,
    name: Arc<str>,
    share: usize,
    amount: usize,
}

impl Tenants {
    /// The limits of every token of `config`, on a front that takes at most
    /// `max_connections` connections.
    pub fn new(config: &Config, max_connections: usize) -> Arc<Tenants> {
        let http = &config.http;
        // With one token (or none), that token is the whole front.
        let half = |total: usize| if config.auth.tokens.len() >= 2 { total.div_ceil(2).max(1) } else { total };
        let defaults = [
            half(http.max_sessions),
            half(http.process_budget),
            half(http.max_sessions),
            half(http.max_sessions),
            half(max_connections),
        ];
        let pick = |own: &TokenLimits| {
            let of = |limits: &TokenLimits| {
                [limits.sessions, limits.processes, limits.streams, limits.calls, limits.connections]
            };
            let (own, common) = (of(own), of(&http.token_limits));
            std::array::from_fn(|i| own[i].or(common[i]).unwrap_or(defaults[i]))
        };
        let limits =
            config.auth.tokens.iter().map(|token| (Arc::from(token.name.as_str()), pick(&token.limits))).collect();
        Arc::new(Tenants { limits, held: Mutex::default() })
    }

    /// Takes `amount` of `share` for the token `name` (none: an open front,
    /// where nothing is counted), or says why not.
    pub fn take(
        self: &Arc<Self>,
        name: Option<&Arc<str>>,
        share: Share,
        amount: usize,
    ) -> Result<Option<Held>, Refusal> {
        let Some(name) = name else { return Ok(None) };
        let index = share as usize;
        let limit = self.limits.get(name).map_or(usize::MAX, |limits| limits[index]);
        let mut held = self.lock();
        let now = held.entry((name.clone(), index)).or_insert(0);
        if *now + amount > limit {
            let message = format!(
                "token {name:?} holds {now} of its {limit} {} (auth.tokens[].limits.{}, http.tokenLimits): end some, or retry shortly",
                share.key(),
                share.key()
            );
            return Err(Refusal::new(StatusCode::TOO_MANY_REQUESTS, &message).retry_after(RETRY_AFTER_SECS));
        }
        *now += amount;
        Ok(Some(Held { tenants: self.clone(), name: name.clone(), share: index, amount }))
    }

    /// How much of `share` the token `name` may hold.
    pub fn limit(&self, name: &str, share: Share) -> usize {
        self.limits.get(name).map_or(usize::MAX, |limits| limits[share as usize])
    }

    /// How much of `share` the token `name` holds now.
    pub fn holds(&self, name: &str, share: Share) -> usize {
        self.lock().get(&(Arc::from(name), share as usize)).copied().unwrap_or(0)
    }

    /// What token `name` holds and may hold, for `/status`; it holds
    /// `connections` connections.
    pub fn report(&self, name: &str, connections: usize) -> serde_json::Value {
        let entries = SHARES
            .iter()
            .map(|share| {
                let held = if *share == Share::Connections { connections } else { self.holds(name, *share) };
                (share.key().to_owned(), serde_json::json!({"held": held, "limit": self.limit(name, *share)}))
            })
            .collect::<serde_json::Map<_, _>>();
        serde_json::Value::Object(entries)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(Arc<str>, usize), usize>> {
        warden_sync::lock(&self.held)
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut held = self.tenants.lock();
        if let Some(now) = held.get_mut(&(self.name.clone(), self.share)) {
            *now = now.saturating_sub(self.amount);
        }
    }
}

/// A response body that holds `held` until it is sent (or dropped).
pub(super) fn holding(response: axum::response::Response, held: Option<Held>) -> axum::response::Response {
    let Some(held) = held else { return response };
    response.map(|body| axum::body::Body::new(Holding { body, _held: held }))
}

/// A body and the share it holds.
struct Holding {
    body: axum::body::Body,
    _held: Held,
}

impl http_body::Body for Holding {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        std::pin::Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(tokens: usize, extra: &str) -> Config {
        let mut text = String::from("http: {maxSessions: 10, processBudget: 6}\nauth:\n  tokens:\n");
        for i in 0..tokens {
            text.push_str(&format!("    - {{name: t{i}, token: t{i}-secret-0123456789{extra}}}\n"));
        }
        warden_config::parse(std::path::Path::new("t.yaml"), &text, &|_| None).expect("config")
    }

    #[test]
    fn with_two_tokens_each_may_hold_half_and_gets_it_back() {
        let tenants = Tenants::new(&config(2, ""), 100);
        let name: Arc<str> = Arc::from("t0");
        let held: Vec<_> = (0..5).map(|_| tenants.take(Some(&name), Share::Sessions, 1).unwrap()).collect();
        assert!(tenants.take(Some(&name), Share::Sessions, 1).is_err(), "half of 10");
        assert!(tenants.take(Some(&Arc::from("t1")), Share::Sessions, 1).unwrap().is_some(), "the other's half");
        assert!(tenants.take(Some(&name), Share::Processes, 4).is_err(), "half of 6 processes");
        drop(held);
        assert_eq!(tenants.holds("t0", Share::Sessions), 0);
        assert!(tenants.take(Some(&name), Share::Sessions, 1).is_ok());
        assert!(tenants.take(None, Share::Calls, 1000).unwrap().is_none(), "an open front counts nothing");
    }

    #[test]
    fn one_token_alone_has_the_whole_front_and_limits_can_be_set_per_token() {
        let tenants = Tenants::new(&config(1, ""), 100);
        assert!(tenants.take(Some(&Arc::from("t0")), Share::Sessions, 10).is_ok());
        let tenants = Tenants::new(&config(2, ", limits: {calls: 1}"), 100);
        let name: Arc<str> = Arc::from("t1");
        let _one = tenants.take(Some(&name), Share::Calls, 1).unwrap();
        assert!(tenants.take(Some(&name), Share::Calls, 1).is_err());
    }
}
