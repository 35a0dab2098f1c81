//! Cancelling a request to a modern (2026-07-28) server over HTTP: not a
//! `notifications/cancelled` (none are defined over HTTP) but the end of the
//! request's own stream.

use serde::Deserialize;
use serde_json::value::RawValue;
use warden_jsonrpc::Text;

/// What an outgoing message means for the streams of a modern link.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// A request, with its id (JSON text): its stream may be closed later.
    Request(String),
    /// A cancellation of request id (JSON text): close its stream.
    Cancel(String),
}

/// Read for every message to a modern server: nothing is copied, and the
/// params are only looked into for a cancellation.
#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<Text<'a>>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Params<'a> {
    #[serde(borrow, rename = "requestId")]
    request_id: Option<&'a RawValue>,
}

/// Reads what `text` (a message Warden sends) means for the streams.
pub(crate) fn target(text: &str) -> Option<Target> {
    let message: Message = serde_json::from_str(text).ok()?;
    match (message.method.as_deref(), message.id) {
        (Some("notifications/cancelled"), None) => {
            let params: Params = serde_json::from_str(message.params?.get()).ok()?;
            Some(Target::Cancel(params.request_id?.get().to_owned()))
        }
        (Some(_), Some(id)) => Some(Target::Request(id.get().to_owned())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::{Target, target};

    #[test]
    fn requests_and_their_cancellations_are_told_apart() {
        assert_eq!(target(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call"}"#), Some(Target::Request("7".into())));
        assert_eq!(
            target(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}"#),
            Some(Target::Cancel("7".into()))
        );
        assert_eq!(target(r#"{"jsonrpc":"2.0","id":7,"result":{}}"#), None);
        // An escaped method name is still the same name.
        assert_eq!(
            target(r#"{"jsonrpc":"2.0","method":"notifications\/cancelled","params":{"reason":"x","requestId":"a"}}"#),
            Some(Target::Cancel(r#""a""#.into()))
        );
        assert_eq!(target(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}"#), None);
    }
}
