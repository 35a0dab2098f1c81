//! What posting needs to know about a message Warden sends upstream.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::dispatch::Dispatch;
use crate::error::UpstreamError;

/// What posting needs to know about an outgoing message.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Outbound {
    /// The id of a request (JSON text); `None` for notifications and responses.
    pub request: Option<String>,
    /// It is `initialize`.
    pub initialize: bool,
    /// It is `notifications/initialized`.
    pub initialized: bool,
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
}

impl Outbound {
    /// Reads the envelope of a message Warden sends (only `id` and `method`).
    pub fn read(text: &str) -> Outbound {
        let Ok(envelope) = serde_json::from_str::<Envelope>(text) else { return Outbound::default() };
        let method = envelope.method.as_deref();
        Outbound {
            request: envelope.id.filter(|_| method.is_some()).map(|id| id.get().to_owned()),
            initialize: method == Some("initialize"),
            initialized: method == Some("notifications/initialized"),
        }
    }

    /// Fails the request with `error`; a notification or response that
    /// could not be delivered is logged.
    pub fn fail(&self, dispatch: &Dispatch, error: UpstreamError) {
        match self.request.as_deref().and_then(|id| id.parse::<u64>().ok()) {
            Some(id) => dispatch.fail(id, error),
            None => {
                tracing::warn!(server = %dispatch.connection().name(), "a message to upstream was not delivered: {error}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Outbound;

    #[test]
    fn reads_what_posting_needs() {
        let init = Outbound::read(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"a":[1]}}"#);
        assert_eq!(init, Outbound { request: Some("1".into()), initialize: true, initialized: false });
        let done = Outbound::read(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        assert_eq!(done, Outbound { request: None, initialize: false, initialized: true });
        let answer = Outbound::read(r#"{"jsonrpc":"2.0","id":"u-1","result":{"method":"x"}}"#);
        assert_eq!(answer, Outbound::default());
        let escaped = Outbound::read(r#"{"jsonrpc":"2.0","id":7,"method":"tools\/call"}"#);
        assert_eq!(escaped.request.as_deref(), Some("7"));
    }
}
