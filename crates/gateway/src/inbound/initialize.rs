//! `initialize`: answered by Warden at once; its params go to every upstream.

use std::sync::Arc;

use serde::Deserialize;
use warden_jsonrpc::{ErrorCode, Frame, json_string, result_response};

use crate::parts::{ClientInit, SessionParts};

/// Revisions Warden speaks, oldest first.
pub(crate) const SUPPORTED_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// What Warden can route, whatever its upstreams turn out to offer: they start
/// in the background, so their own capabilities are not known yet. Tasks are
/// safe to declare: each tool says whether it supports them
/// (`execution.taskSupport`, forbidden by default), and that passes through.
const CAPABILITIES: &str = r#"{"tools":{"listChanged":true},"prompts":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},"completions":{},"logging":{},"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}}"#;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct InitializeParams {
    protocol_version: String,
    #[serde(default)]
    client_info: Option<ClientInfo>,
    #[serde(default)]
    capabilities: Option<ClientCapabilities>,
}

#[derive(Deserialize)]
struct ClientCapabilities {
    #[serde(default)]
    elicitation: Option<serde_json::Map<String, serde_json::Value>>,
}

/// `clientInfo`, as far as audit records name the client.
#[derive(Deserialize)]
struct ClientInfo {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    version: Option<String>,
}

impl ClientInfo {
    /// `name/version`, or the name alone.
    fn label(self) -> Option<String> {
        match (self.name, self.version) {
            (Some(name), Some(version)) => Some(format!("{name}/{version}")),
            (name, _) => name,
        }
    }
}

/// Answers `initialize` and hands its params, byte for byte, to the
/// upstreams' handshakes (so servers see the client's real capabilities).
pub(crate) fn initialize(session: &SessionParts, frame: &Frame) {
    let params = frame.params().unwrap_or("{}");
    let (requested, client, capabilities) = match serde_json::from_str::<InitializeParams>(params) {
        Ok(parsed) => (parsed.protocol_version, parsed.client_info, parsed.capabilities),
        Err(err) => {
            return session.link.fail(frame, ErrorCode::InvalidParams, &format!("invalid initialize params: {err}"));
        }
    };
    let version = if SUPPORTED_VERSIONS.contains(&requested.as_str()) {
        requested
    } else {
        SUPPORTED_VERSIONS[SUPPORTED_VERSIONS.len() - 1].to_owned()
    };
    let name = client.and_then(ClientInfo::label);
    // `elicitation: {}` is form mode (before 2025-11-25 the only one).
    let elicits_forms = capabilities
        .and_then(|capabilities| capabilities.elicitation)
        .is_some_and(|modes| modes.is_empty() || modes.contains_key("form"));
    if session.link.init.set(ClientInit { protocol_version: version.clone(), name, elicits_forms }).is_err() {
        return session.link.fail(frame, ErrorCode::InvalidRequest, "the session is already initialized");
    }
    let params: Arc<str> = Arc::from(params);
    if let Some(pool) = &session.upstreams.pool {
        pool.initialized(&params);
    }
    session.link.init_params.send_replace(Some(params));
    let result = format!(
        r#"{{"protocolVersion":{},"capabilities":{CAPABILITIES},"serverInfo":{{"name":"warden","title":"Warden MCP gateway","version":{}}}}}"#,
        json_string(&version),
        json_string(env!("CARGO_PKG_VERSION")),
    );
    session.link.respond(frame, result_response(frame.id().unwrap_or("null"), &result));
}
