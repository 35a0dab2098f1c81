//! `requestState` as a client echoes it back: anything a client sends
//! that Warden did not seal is refused; what Warden sealed opens to the
//! same state; a sealed state with any byte changed is refused. The request
//! digest reads any arguments.
#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use warden_gateway::modern::Sealer;
use warden_gateway::modern::seal::{RequestState, expiry, request_digest};

static SEALER: LazyLock<Sealer> = LazyLock::new(Sealer::new);

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    // Forged: without the key nothing opens, however it is built.
    assert!(SEALER.open(&text).is_err(), "opened a state Warden did not seal: {text:?}");
    let forged = format!("w1.{text}");
    assert!(SEALER.open(&forged).is_err(), "opened a forged state: {forged:?}");
    // Sealed: opens to itself; one byte changed, refused.
    let mut parts = text.splitn(4, '\u{0}');
    let state = RequestState {
        lane: parts.next().unwrap_or_default().to_owned(),
        exchange: parts.next().unwrap_or_default().to_owned(),
        request: parts.next().unwrap_or_default().to_owned(),
        round: data.len() as u64,
        expires: expiry(std::time::Duration::from_secs(600)),
    };
    let sealed = SEALER.seal(&state);
    assert_eq!(SEALER.open(&sealed).ok().as_ref(), Some(&state), "a sealed state did not open: {sealed:?}");
    if let Some(&first) = data.first() {
        let mut tampered = sealed.clone().into_bytes();
        let at = usize::from(first) * 7 % tampered.len();
        tampered[at] = if tampered[at] == b'A' { b'B' } else { b'A' };
        let tampered = String::from_utf8(tampered).expect("ASCII");
        if tampered != sealed {
            assert!(SEALER.open(&tampered).is_err(), "a tampered state opened: {tampered:?}");
        }
    }
    let another = Sealer::new();
    assert!(another.open(&sealed).is_err(), "another key opened a state");
    // The digest of any arguments, and the same for the same value.
    let arguments = parts.next().unwrap_or(&text);
    let digest = request_digest("tools/call", Some(&state.lane), Some(arguments));
    assert_eq!(digest.len(), 64);
    // Floats included: serde_json reads them exactly (`float_roundtrip`),
    // so a re-serialised float is the same number.
    if let Ok(value) = serde_json::from_str::<serde_json::Value>(arguments) {
        let again = request_digest("tools/call", Some(&state.lane), Some(&value.to_string()));
        assert_eq!(digest, again, "re-serialised arguments change the digest: {arguments:?}");
    }
});
