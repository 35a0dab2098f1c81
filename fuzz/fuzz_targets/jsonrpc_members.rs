//! `Members` (an object's members kept as text) against serde_json: the same
//! keys in the same order with the same values, and a render that reads back
//! the same. `guess_id` (the id of a message too large to parse) only ever
//! answers with a JSON string or number.
#![no_main]

use libfuzzer_sys::fuzz_target;
use warden_fuzz::{is_json, members, value};
use warden_jsonrpc::{Members, guess_id};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let ours = Members::parse(text);
    let theirs = members(text);
    match (&ours, &theirs) {
        (Ok(ours), Some(theirs)) => {
            let keys: Vec<&str> = ours.keys().collect();
            let expected: Vec<&str> = theirs.iter().map(|(key, _)| key.as_str()).collect();
            assert_eq!(keys, expected, "keys differ in {text:?}");
            for (key, raw) in theirs {
                let first = theirs.iter().find(|(name, _)| name == key).map(|(_, raw)| raw.get());
                assert_eq!(ours.get(key), first, "value of {key:?} in {text:?}");
                assert!(is_json(raw.get()));
            }
            let rendered = ours.render(&[("x-added", "1")], &[]);
            let again = Members::parse(&rendered).unwrap_or_else(|err| panic!("render {rendered:?}: {err}"));
            assert_eq!(again.len(), ours.len() + usize::from(!ours.contains("x-added")));
            for key in ours.keys() {
                assert_eq!(
                    again.get(key).and_then(value),
                    ours.get(key).and_then(value),
                    "render changed {key:?} of {text:?}"
                );
            }
        }
        (Err(_), None) => {}
        (Ok(_), None) => panic!("Members accepted what serde_json refuses: {text:?}"),
        (Err(err), Some(_)) => panic!("Members refused an object serde_json reads ({err}): {text:?}"),
    }
    // The head and tail of an oversized message: any split of the input.
    let cut = data.first().map_or(0, |&b| usize::from(b)) % (text.len() + 1);
    let (head, tail) = match (text.get(..cut), text.get(cut..)) {
        (Some(head), Some(tail)) => (head, tail),
        _ => (text, ""),
    };
    // Checked as JSON syntax, not as a `Value`: an id is echoed as its text,
    // so a number beyond f64's range (400 digits) is as good an id here as
    // on a message of ordinary size.
    if let Some(id) = guess_id(head, tail) {
        assert!(
            is_json(&id) && id.starts_with(['"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9']),
            "guess_id answered {id:?}, not a JSON string or number, for {head:?} … {tail:?}"
        );
    }
});
