//! The record of one approval, bound to one call.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::state::ApprovalState;

/// One approval: what was asked, by whom, and what became of it. This is
/// what every channel shows a person: the exact arguments, with the
/// secret-like spans in them listed in `masked` for display as markers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Approval {
    /// Unguessable (128 random bits, 32 hex digits; see [`random_id`]).
    pub id: String,
    /// The upstream server.
    pub server: String,
    /// The tool, as the server names it.
    pub tool: String,
    /// The call's arguments, exactly as they will run (never redacted: a
    /// person must see every byte that reaches the server).
    pub arguments: Value,
    /// The strings of `arguments` with secret-like spans, which a page or
    /// terminal draws as markers (kind and length) until revealed. Empty
    /// when redaction is off.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub masked: Vec<crate::display::Masked>,
    /// Hex SHA-256 of the canonical arguments: what was shown is what runs.
    pub args_digest: String,
    /// The resources the call names (its path and URL role values).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub identifiers: Vec<warden_pipeline::Identifier>,
    /// The rule that escalated.
    pub rule: String,
    /// Why.
    pub reason: String,
    /// Hex SHA-256 of the policy in force (short), to tell policies apart.
    pub policy_version: String,
    /// The client session.
    pub session: String,
    /// The client, as it named itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// Who the front let in (an HTTP token's name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub principal: Option<String>,
    /// When it was opened, in milliseconds since the Unix epoch.
    pub created_ms: u64,
    /// When it expires, in milliseconds since the Unix epoch.
    pub expires_ms: u64,
    /// Where it stands.
    pub state: ApprovalState,
    /// The decision, once taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided: Option<Decided>,
}

/// Who decided, how and when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Decided {
    /// The channel: `web`, `cli`, `elicitation`, `files`, `auto-approver`,
    /// `whitelist`, `timeout`, `client`.
    pub channel: String,
    /// Who, as the channel knows them.
    pub by: String,
    /// Their reason, if given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// When, in milliseconds since the Unix epoch.
    pub at_ms: u64,
}

impl Decided {
    /// A decision taken now.
    pub fn now(channel: &str, by: &str, note: Option<String>) -> Decided {
        Decided { channel: channel.to_owned(), by: by.to_owned(), note, at_ms: millis(SystemTime::now()) }
    }
}

impl Approval {
    /// The first eight characters of the id, as people quote it.
    pub fn short_id(&self) -> &str {
        warden_pipeline::short_id(&self.id)
    }

    /// How long until it expires (zero once past).
    pub fn time_left(&self) -> Duration {
        Duration::from_millis(self.expires_ms.saturating_sub(millis(SystemTime::now())))
    }
}

/// `time` in milliseconds since the Unix epoch.
pub fn millis(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

/// 128 random bits as 32 hex digits, from the system's generator. (A UUID
/// v4 has 122: its version and variant bits are fixed. Two of them, one
/// turned by 64 bits, cover each other's fixed bits.)
pub fn random_id() -> String {
    let a = uuid::Uuid::new_v4().as_u128();
    let b = uuid::Uuid::new_v4().as_u128();
    format!("{:032x}", a ^ b.rotate_left(64))
}
