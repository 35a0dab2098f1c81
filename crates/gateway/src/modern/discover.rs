//! `server/discover`: what Warden speaks and offers, before any other
//! request. Warden's capabilities do not depend on which upstreams happen to
//! be up (they start in the background), as with `initialize`.

use warden_jsonrpc::{json_string, result_response};

use super::{MODERN_VERSIONS, meta, results};

/// What Warden routes, in either era. Tasks are not offered to modern
/// clients: the 2025 tasks cannot be mapped onto the tasks extension.
const CAPABILITIES: &str = r#"{"tools":{"listChanged":true},"prompts":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},"completions":{},"logging":{}}"#;

/// The answer to `server/discover` with request id `id` (JSON text).
pub fn answer(id: &str) -> String {
    let versions: Vec<String> = MODERN_VERSIONS.iter().map(|version| json_string(version)).collect();
    let result = format!(
        r#"{{"resultType":"complete","supportedVersions":[{}],"capabilities":{CAPABILITIES},"ttlMs":0,"cacheScope":"private","_meta":{{{}:{}}}}}"#,
        versions.join(","),
        json_string(meta::SERVER_INFO),
        results::SERVER_INFO
    );
    result_response(id, &result)
}
