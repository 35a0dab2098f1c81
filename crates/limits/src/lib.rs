//! Rate limits and the breaker against loops, as a pipeline guard.
//!
//! A rate limit allows at most `calls` calls in any window of `perSeconds`
//! for the calls its server and tool globs match (counted per server and
//! tool). The breaker refuses the same tool called with the same arguments
//! more than `identicalCalls` times within `withinSeconds`: an agent stuck in
//! a loop. Each refusal names the limit and says when to retry. Only
//! `tools/call` is counted.

#![warn(missing_docs)]

mod window;

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use globset::{Glob, GlobMatcher};
use sha2::{Digest, Sha256};
use warden_config::{Breaker, LimitScope, RateLimit};
use warden_jsonrpc::Method;
use warden_pipeline::{Call, Guard, Verdict};

pub use window::Window;

/// A glob in a rate limit that does not compile.
#[derive(Debug, thiserror::Error)]
#[error("rateLimits[{index}]: invalid glob {pattern:?}: {reason}")]
pub struct LimitError {
    /// The limit's position in the list.
    pub index: usize,
    /// The glob.
    pub pattern: String,
    /// Why.
    pub reason: String,
}

struct Limit {
    server: GlobMatcher,
    tool: GlobMatcher,
    calls: u32,
    span: Duration,
    per_server: bool,
    label: String,
}

/// The rate limits and the breaker, with their counters.
pub struct Limiter {
    limits: Vec<Limit>,
    breaker: Option<(u32, Duration)>,
    windows: Mutex<HashMap<(usize, String, String), Window>>,
    /// Per identical call (its fingerprint): its server, and its window.
    identical: Mutex<HashMap<[u8; 32], (String, Window)>>,
}

impl Limiter {
    /// Compiles the limits of a configuration.
    pub fn new(limits: &[RateLimit], breaker: &Breaker) -> Result<Limiter, LimitError> {
        let glob = |index: usize, pattern: &str| {
            Glob::new(pattern).map(|glob| glob.compile_matcher()).map_err(|err| LimitError {
                index,
                pattern: pattern.to_owned(),
                reason: err.kind().to_string(),
            })
        };
        let limits = limits
            .iter()
            .enumerate()
            .map(|(index, limit)| {
                Ok(Limit {
                    server: glob(index, &limit.server)?,
                    tool: glob(index, &limit.tool)?,
                    calls: limit.calls,
                    span: Duration::from_secs(limit.per_seconds),
                    per_server: limit.scope == LimitScope::Server,
                    label: format!(
                        "{} calls per {} s for {}/{}{}",
                        limit.calls,
                        limit.per_seconds,
                        limit.server,
                        limit.tool,
                        if limit.scope == LimitScope::Server { " together" } else { "" }
                    ),
                })
            })
            .collect::<Result<_, LimitError>>()?;
        let breaker = (breaker.identical_calls > 0)
            .then(|| (breaker.identical_calls, Duration::from_secs(breaker.within_seconds)));
        Ok(Limiter { limits, breaker, windows: Mutex::default(), identical: Mutex::default() })
    }

    /// Decides `call` at time `now` (separate from [`Guard::decide`] so tests
    /// control the clock).
    pub fn decide_at(&self, call: &Call<'_>, now: Instant) -> Verdict {
        if *call.method != Method::ToolsCall {
            return Verdict::Allow;
        }
        if let Some((limit, span)) = self.breaker {
            let key = fingerprint(call);
            let mut identical = warden_sync::lock(&self.identical);
            // Forget loops that went quiet, so the map does not grow forever.
            if identical.len() > 10_000 {
                identical.retain(|_, (_, window)| !window.is_idle(now, span));
            }
            let (_, window) = identical.entry(key).or_insert_with(|| (call.server.to_owned(), Window::default()));
            if let Err(wait) = window.admit(now, limit, span) {
                return Verdict::Deny {
                    rule: "breaker".into(),
                    reason: format!(
                        "the same call to '{}' with the same arguments was made {limit} times within {} s, which looks like a loop; retry in {} s or change the arguments",
                        call.name,
                        span.as_secs(),
                        seconds(wait)
                    ),
                };
            }
        }
        let mut windows = warden_sync::lock(&self.windows);
        for (index, limit) in self.limits.iter().enumerate() {
            if !(limit.server.is_match(call.server) && limit.tool.is_match(call.name)) {
                continue;
            }
            let tool = if limit.per_server { String::new() } else { call.name.to_owned() };
            let key = (index, call.server.to_owned(), tool);
            if let Err(wait) = windows.entry(key).or_default().admit(now, limit.calls, limit.span) {
                return Verdict::Deny {
                    rule: format!("rate-limit:{index}"),
                    reason: format!("rate limit of {} reached; retry in {} s", limit.label, seconds(wait)),
                };
            }
        }
        Verdict::Allow
    }
}

impl Limiter {
    /// The breaker's state at `now`: per server, how many distinct calls
    /// (tool and arguments) it is refusing, that is, made `identicalCalls`
    /// times within `withinSeconds`. Servers with none are not listed.
    pub fn open_breakers(&self, now: Instant) -> Vec<(String, usize)> {
        let Some((limit, span)) = self.breaker else { return Vec::new() };
        let identical = warden_sync::lock(&self.identical);
        let mut open: Vec<(String, usize)> = Vec::new();
        for (server, window) in identical.values() {
            if !window.is_full(now, limit, span) {
                continue;
            }
            match open.iter_mut().find(|(name, _)| name == server) {
                Some((_, count)) => *count += 1,
                None => open.push((server.clone(), 1)),
            }
        }
        open
    }
}

impl Guard for Limiter {
    fn decide(&self, call: &Call<'_>) -> Verdict {
        self.decide_at(call, Instant::now())
    }
}

/// Server, tool and arguments, hashed (arguments as the client sent them).
fn fingerprint(call: &Call<'_>) -> [u8; 32] {
    let mut hash = Sha256::new();
    for part in [call.server, call.name, call.arguments.unwrap_or("")] {
        hash.update((part.len() as u64).to_le_bytes());
        hash.update(part.as_bytes());
    }
    hash.finalize().into()
}

/// Whole seconds, rounded up, so "retry in 0 s" is never said.
fn seconds(wait: Duration) -> u64 {
    wait.as_secs() + u64::from(wait.subsec_nanos() > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call<'a>(server: &'a str, name: &'a str, arguments: &'a str) -> Call<'a> {
        static METHOD: Method = Method::ToolsCall;
        Call { session: "s", server, method: &METHOD, name, arguments: Some(arguments) }
    }

    fn limit(server: &str, tool: &str, calls: u32, per_seconds: u64) -> RateLimit {
        RateLimit { server: server.into(), tool: tool.into(), calls, per_seconds, scope: LimitScope::Tool }
    }

    #[test]
    fn a_server_scope_counts_its_tools_together() {
        let shared = RateLimit { scope: LimitScope::Server, ..limit("db", "*", 2, 60) };
        let limiter = Limiter::new(&[shared], &Breaker::default()).unwrap();
        let now = Instant::now();
        assert_eq!(limiter.decide_at(&call("db", "a", "{}"), now), Verdict::Allow);
        assert_eq!(limiter.decide_at(&call("db", "b", "{}"), now), Verdict::Allow);
        let third = limiter.decide_at(&call("db", "c", "{}"), now);
        assert!(matches!(&third, Verdict::Deny { reason, .. } if reason.contains("db/* together")), "{third:?}");
        assert_eq!(limiter.decide_at(&call("fs", "a", "{}"), now), Verdict::Allow);
    }

    #[test]
    fn rate_limits_count_per_tool_and_say_when_to_retry() {
        let limiter =
            Limiter::new(&[limit("db", "query*", 2, 60)], &Breaker { identical_calls: 0, within_seconds: 60 }).unwrap();
        let now = Instant::now();
        assert_eq!(limiter.decide_at(&call("db", "query", "{\"n\":1}"), now), Verdict::Allow);
        assert_eq!(limiter.decide_at(&call("db", "query", "{\"n\":2}"), now), Verdict::Allow);
        let Verdict::Deny { rule, reason } =
            limiter.decide_at(&call("db", "query", "{\"n\":3}"), now + Duration::from_millis(1500))
        else {
            panic!("third call allowed")
        };
        assert_eq!(rule, "rate-limit:0");
        assert!(reason.contains("2 calls per 60 s for db/query*") && reason.contains("retry in 59 s"), "{reason}");
        assert_eq!(limiter.decide_at(&call("db", "query_other", "{}"), now), Verdict::Allow, "counted per tool");
        assert_eq!(limiter.decide_at(&call("fs", "query", "{}"), now), Verdict::Allow, "other servers untouched");
        assert_eq!(limiter.decide_at(&call("db", "query", "{}"), now + Duration::from_secs(61)), Verdict::Allow);
    }

    #[test]
    fn the_breaker_trips_on_identical_calls_only() {
        let limiter = Limiter::new(&[], &Breaker { identical_calls: 3, within_seconds: 60 }).unwrap();
        let now = Instant::now();
        for _ in 0..3 {
            assert_eq!(limiter.decide_at(&call("fs", "read", "{\"p\":\"a\"}"), now), Verdict::Allow);
        }
        let tripped = limiter.decide_at(&call("fs", "read", "{\"p\":\"a\"}"), now);
        assert!(
            matches!(&tripped, Verdict::Deny { rule, reason } if rule == "breaker" && reason.contains("loop")),
            "{tripped:?}"
        );
        assert_eq!(limiter.decide_at(&call("fs", "read", "{\"p\":\"b\"}"), now), Verdict::Allow, "other arguments");
        assert_eq!(
            limiter.decide_at(&call("fs", "read", "{\"p\":\"a\"}"), now + Duration::from_secs(60)),
            Verdict::Allow
        );
    }

    #[test]
    fn the_breakers_state_is_the_calls_it_refuses_now() {
        let breaker = Breaker { identical_calls: 2, within_seconds: 60 };
        let limiter = Limiter::new(&[], &breaker).unwrap();
        let now = Instant::now();
        assert!(limiter.open_breakers(now).is_empty());
        for arguments in ["{\"p\":\"a\"}", "{\"p\":\"a\"}", "{\"p\":\"b\"}", "{\"p\":\"c\"}", "{\"p\":\"c\"}"] {
            limiter.decide_at(&call("fs", "read", arguments), now);
        }
        limiter.decide_at(&call("db", "q", "{}"), now);
        limiter.decide_at(&call("db", "q", "{}"), now);
        let mut open = limiter.open_breakers(now);
        open.sort();
        assert_eq!(open, [("db".to_owned(), 1), ("fs".to_owned(), 2)], "b was called once");
        assert!(limiter.open_breakers(now + Duration::from_secs(60)).is_empty(), "closed once the window passed");
    }

    #[test]
    fn only_tool_calls_count_and_bad_globs_are_errors() {
        let limiter = Limiter::new(&[limit("*", "*", 1, 60)], &Breaker::default()).unwrap();
        static GET: Method = Method::PromptsGet;
        let prompt = Call { session: "s", server: "a", method: &GET, name: "p", arguments: None };
        for _ in 0..5 {
            assert_eq!(limiter.decide_at(&prompt, Instant::now()), Verdict::Allow);
        }
        let err = Limiter::new(&[limit("[", "*", 1, 1)], &Breaker::default()).err().unwrap();
        assert!(err.to_string().starts_with("rateLimits[0]: invalid glob \"[\""), "{err}");
    }
}
