//! What an assessment is asked about: the call and the user's intent.

use std::time::{Duration, SystemTime};

use crate::prompt::strip_controls;

/// How far in the future an intent's time may lie (clocks of the writer and
/// of Warden may differ a little); beyond that it is not trusted.
pub const INTENT_CLOCK_SKEW: Duration = Duration::from_secs(5);

/// The user's latest stated intent, e.g. the prompt they just typed, as set
/// with `warden context set`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Intent {
    /// The user's words.
    pub message: String,
    /// Where they came from (for the audit), e.g. `cli` or `claude-code-hook`.
    pub source: String,
    /// When they were set.
    pub at: SystemTime,
}

/// One resource-identifier argument value of the call: what the model may
/// see of the arguments, and what the user's words must name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Identifier {
    /// A value with a path role, shown and checked as given.
    Path(String),
    /// A value with a URL role, shown and checked as its host only.
    Url(String),
}

/// The escalated call to assess. Free-text arguments, tool descriptions and
/// results have no place here on purpose: they never reach the model.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The server's name.
    pub server: &'a str,
    /// The tool's name.
    pub tool: &'a str,
    /// Why the policy escalated the call.
    pub reason: &'a str,
    /// The call's resource-identifier argument values.
    pub identifiers: &'a [Identifier],
    /// The user's latest intent, if any was set.
    pub intent: Option<&'a Intent>,
}

/// Why `intent` cannot be trusted at `now`, or `None` when it can: missing,
/// blank, older than `max_age`, or dated in the future beyond the skew.
pub(crate) fn untrusted_intent(intent: Option<&Intent>, now: SystemTime, max_age: Duration) -> Option<String> {
    let Some(intent) = intent else {
        return Some("no user intent was set".into());
    };
    if strip_controls(&intent.message, false).trim().is_empty() {
        return Some("the user intent is empty".into());
    }
    match now.duration_since(intent.at) {
        Ok(age) if age > max_age => {
            Some(format!("the user intent is stale ({} s old, the limit is {} s)", age.as_secs(), max_age.as_secs()))
        }
        Ok(_) => None,
        Err(ahead) if ahead.duration() > INTENT_CLOCK_SKEW => {
            Some(format!("the user intent is dated {} s in the future", ahead.duration().as_secs()))
        }
        Err(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn intent(message: &str, at: SystemTime) -> Intent {
        Intent { message: message.into(), source: "test".into(), at }
    }

    #[test]
    fn fresh_intent_is_trusted_and_everything_else_is_not() {
        let now = SystemTime::now();
        let max = Duration::from_secs(120);
        assert_eq!(untrusted_intent(Some(&intent("read a.txt", now)), now, max), None);
        assert_eq!(untrusted_intent(Some(&intent("read a.txt", now - Duration::from_secs(119))), now, max), None);
        assert_eq!(untrusted_intent(Some(&intent("read a.txt", now + Duration::from_secs(2))), now, max), None);

        let missing = untrusted_intent(None, now, max).unwrap();
        assert!(missing.contains("no user intent"), "{missing}");
        let blank = untrusted_intent(Some(&intent(" \n\t\u{7}", now)), now, max).unwrap();
        assert!(blank.contains("empty"), "{blank}");
        let stale = untrusted_intent(Some(&intent("read a.txt", now - Duration::from_secs(121))), now, max).unwrap();
        assert!(stale.contains("stale (121 s old, the limit is 120 s)"), "{stale}");
        let future = untrusted_intent(Some(&intent("read a.txt", now + Duration::from_secs(60))), now, max).unwrap();
        assert!(future.contains("60 s in the future"), "{future}");
    }
}
