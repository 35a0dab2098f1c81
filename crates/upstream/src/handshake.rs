//! The MCP `initialize` exchange with an upstream.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::value::RawValue;

/// What an upstream said about itself in its `initialize` result.
#[derive(Debug, Clone)]
pub struct Handshake {
    /// The protocol revision the server chose.
    pub protocol_version: String,
    /// Its capabilities, by name, as JSON text.
    pub capabilities: HashMap<String, Box<RawValue>>,
    /// Its `serverInfo`, as JSON text.
    pub server_info: Option<Box<RawValue>>,
    /// Its `instructions`.
    pub instructions: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct InitializeResult {
    protocol_version: String,
    #[serde(default)]
    capabilities: HashMap<String, Box<RawValue>>,
    #[serde(default)]
    server_info: Option<Box<RawValue>>,
    #[serde(default)]
    instructions: Option<String>,
}

impl Handshake {
    /// Reads an `initialize` result.
    pub fn parse(result: &str) -> Result<Handshake, String> {
        let parsed: InitializeResult =
            serde_json::from_str(result).map_err(|err| format!("invalid initialize result: {err}"))?;
        Ok(Handshake {
            protocol_version: parsed.protocol_version,
            capabilities: parsed.capabilities,
            server_info: parsed.server_info,
            instructions: parsed.instructions,
        })
    }

    /// Reads a `server/discover` result (2026-07-28): the server must list
    /// the modern revision Warden speaks.
    pub fn from_discover(result: &str) -> Result<Handshake, String> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct DiscoverResult {
            #[serde(default)]
            supported_versions: Vec<String>,
            #[serde(default)]
            capabilities: HashMap<String, Box<RawValue>>,
            #[serde(default)]
            instructions: Option<String>,
            #[serde(default, rename = "_meta")]
            meta: Option<HashMap<String, Box<RawValue>>>,
        }
        let parsed: DiscoverResult =
            serde_json::from_str(result).map_err(|err| format!("invalid server/discover result: {err}"))?;
        if !parsed.supported_versions.iter().any(|version| version == crate::era::MODERN) {
            return Err(format!("it speaks {:?}, not {}", parsed.supported_versions, crate::era::MODERN));
        }
        let server_info = parsed.meta.and_then(|mut meta| meta.remove("io.modelcontextprotocol/serverInfo"));
        Ok(Handshake {
            protocol_version: crate::era::MODERN.to_owned(),
            capabilities: parsed.capabilities,
            server_info,
            instructions: parsed.instructions,
        })
    }

    /// Whether the server declared capability `name` (e.g. `tools`).
    pub fn has(&self, name: &str) -> bool {
        self.capabilities.get(name).is_some_and(|raw| raw.get() != "null" && raw.get() != "false")
    }

    /// Whether capability `name` has the member `member` at all (e.g.
    /// `tasks.list`, declared as an empty object).
    pub fn flag_present(&self, name: &str, member: &str) -> bool {
        self.capabilities
            .get(name)
            .and_then(|raw| serde_json::from_str::<HashMap<String, serde_json::Value>>(raw.get()).ok())
            .is_some_and(|map| map.get(member).is_some_and(|value| !value.is_null() && *value != false))
    }
}

#[cfg(test)]
mod tests {
    use super::Handshake;

    #[test]
    fn reads_capabilities() {
        let hs = Handshake::parse(
            r#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"resources":{"subscribe":true},"x":null},"serverInfo":{"name":"s","version":"1"}}"#,
        )
        .unwrap();
        assert!(hs.has("tools") && hs.has("resources") && !hs.has("prompts") && !hs.has("x"));
        assert!(hs.flag_present("resources", "subscribe") && !hs.flag_present("tools", "listChanged"));
        assert!(Handshake::parse("{}").is_err());
    }
}
