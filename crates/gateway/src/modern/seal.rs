//! `requestState` that only Warden can have written: the state a modern
//! client echoes back is attacker-controlled, so Warden's is a JSON payload
//! with an HMAC-SHA256 tag under a key that never leaves the process.
//!
//! The payload binds what the MRTR pattern asks a server to bind: the
//! principal, an expiry, and the request it belongs to (method, name and a
//! digest of the arguments). An upstream's own `requestState` rides inside,
//! so the upstream gets back exactly what it sent.

use std::io::Read;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Seals and opens request states with one secret key.
pub struct Sealer {
    key: [u8; 32],
}

/// What a sealed state says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestState {
    /// The lane (principal and endpoint) that issued it.
    #[serde(rename = "l")]
    pub lane: String,
    /// The parked exchange it resumes.
    #[serde(rename = "x")]
    pub exchange: String,
    /// The request it belongs to: sha256 of method, name and arguments.
    #[serde(rename = "r")]
    pub request: String,
    /// The round it ends: a state is good for the next round only, so an
    /// old one replayed is refused.
    #[serde(rename = "n")]
    pub round: u64,
    /// Seconds since the epoch after which it is refused.
    #[serde(rename = "e")]
    pub expires: u64,
}

/// Why a state is refused. One answer for all reasons: a client learns
/// nothing from it.
#[derive(Debug, thiserror::Error)]
#[error("invalid or expired requestState")]
pub struct Refused;

impl Default for Sealer {
    fn default() -> Sealer {
        Sealer::new()
    }
}

impl Sealer {
    /// A sealer with a fresh random key, from the kernel (or, should
    /// `/dev/urandom` be unreadable, from the randomly keyed hashers the
    /// standard library seeds from the operating system).
    pub fn new() -> Sealer {
        let mut key = [0u8; 32];
        if std::fs::File::open("/dev/urandom").and_then(|mut file| file.read_exact(&mut key)).is_err() {
            use std::hash::{BuildHasher, Hasher};
            for (index, chunk) in key.chunks_mut(8).enumerate() {
                let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
                hasher.write_usize(index);
                chunk.copy_from_slice(&hasher.finish().to_ne_bytes());
            }
        }
        Sealer { key }
    }

    /// The state as an opaque string.
    pub fn seal(&self, state: &RequestState) -> String {
        // Serialising plain strings and numbers cannot fail.
        let payload = URL_SAFE_NO_PAD.encode(serde_json::to_vec(state).unwrap_or_default());
        let tag = URL_SAFE_NO_PAD.encode(self.mac(payload.as_bytes()).finalize().into_bytes());
        format!("w1.{payload}.{tag}")
    }

    /// The state inside `sealed`, if Warden wrote it and it has not expired.
    pub fn open(&self, sealed: &str) -> Result<RequestState, Refused> {
        let rest = sealed.strip_prefix("w1.").ok_or(Refused)?;
        let (payload, tag) = rest.split_once('.').ok_or(Refused)?;
        let tag = URL_SAFE_NO_PAD.decode(tag).map_err(|_| Refused)?;
        self.mac(payload.as_bytes()).verify_slice(&tag).map_err(|_| Refused)?;
        let payload = URL_SAFE_NO_PAD.decode(payload).map_err(|_| Refused)?;
        let state: RequestState = serde_json::from_slice(&payload).map_err(|_| Refused)?;
        if state.expires < now() {
            return Err(Refused);
        }
        Ok(state)
    }

    fn mac(&self, data: &[u8]) -> Hmac<Sha256> {
        // HMAC takes keys of any length.
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.key).expect("HMAC accepts any key length");
        mac.update(data);
        mac
    }
}

/// Seconds since the epoch, `ttl` from now.
pub fn expiry(ttl: Duration) -> u64 {
    now() + ttl.as_secs().max(1)
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |elapsed| elapsed.as_secs())
}

/// What a state binds a request by: its method, its name (or URI) and its
/// arguments, the arguments in a canonical form (keys sorted) so that a
/// client re-serialising them differently is still the same request.
pub fn request_digest(method: &str, name: Option<&str>, arguments: Option<&str>) -> String {
    let canonical = arguments
        .and_then(|text| serde_json::from_str::<serde_json::Value>(text).ok())
        .map(|value| value.to_string())
        .unwrap_or_default();
    let mut hasher = Sha256::new();
    for part in [method, name.unwrap_or(""), &canonical] {
        hasher.update((part.len() as u64).to_be_bytes());
        hasher.update(part.as_bytes());
    }
    hasher.finalize().iter().map(|byte| format!("{byte:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> RequestState {
        RequestState {
            lane: "l".into(),
            exchange: "\"wm1\"".into(),
            request: request_digest("tools/call", Some("t"), Some(r#"{"b":1,"a":2}"#)),
            round: 0,
            expires: expiry(Duration::from_secs(60)),
        }
    }

    /// Found by the `request_state` fuzz target: a long integer or an
    /// exponent becomes a float, and a client that re-serialises it must
    /// get the same digest (serde_json's `float_roundtrip`: without it,
    /// floats were read within one ULP and some came back different).
    #[test]
    fn re_serialised_floats_digest_the_same() {
        for arguments in [
            r#"{"n":77777777777777777777777777777777777777777}"#,
            r#"{"n":0.07e074}"#,
            r#"{"n":[1.7976931348623157e308,5e-324,0.1,2.2250738585072014e-308]}"#,
        ] {
            let value: serde_json::Value = serde_json::from_str(arguments).expect("JSON");
            let again = value.to_string();
            assert_eq!(
                request_digest("tools/call", Some("t"), Some(arguments)),
                request_digest("tools/call", Some("t"), Some(&again)),
                "{arguments} re-serialised as {again}"
            );
        }
    }

    #[test]
    fn opens_only_its_own_untampered_states() {
        let sealer = Sealer::new();
        let sealed = sealer.seal(&state());
        assert_eq!(sealer.open(&sealed).unwrap(), state());
        assert!(Sealer::new().open(&sealed).is_err(), "another key");
        let mut tampered = sealed.clone().into_bytes();
        let at = tampered.len() / 2;
        tampered[at] = if tampered[at] == b'A' { b'B' } else { b'A' };
        assert!(sealer.open(&String::from_utf8(tampered).unwrap()).is_err());
        let expired = RequestState { expires: 1, ..state() };
        assert!(sealer.open(&sealer.seal(&expired)).is_err());
        assert!(sealer.open("{\"round\":1}").is_err());
    }

    #[test]
    fn digests_ignore_key_order_but_not_values() {
        let a = request_digest("tools/call", Some("t"), Some(r#"{"b":1,"a":2}"#));
        assert_eq!(a, request_digest("tools/call", Some("t"), Some(r#"{ "a":2, "b":1 }"#)));
        assert_ne!(a, request_digest("tools/call", Some("t"), Some(r#"{"a":3,"b":1}"#)));
        assert_ne!(a, request_digest("prompts/get", Some("t"), Some(r#"{"a":2,"b":1}"#)));
    }
}
