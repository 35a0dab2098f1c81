//! What the user said they want, for the auto-approver: set with
//! `warden context set`, or written by IronCurtain's session into
//! `user-context.json` in the exchange directory.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use serde::Deserialize;

pub use warden_autoapprove::Intent;

/// The name IronCurtain gives the file in its escalation directory.
pub const USER_CONTEXT_FILE: &str = "user-context.json";

/// The most of `user-context.json` that is read: far more than the
/// auto-approver shows the model (`MAX_INTENT_CHARS`).
const MAX_CONTEXT_BYTES: u64 = 64 * 1024;

/// Holds the latest intent (`warden context set "..."`); a newer one
/// replaces it. With a context file, the file's intent counts too, read
/// afresh at each question, and the newer of the two is the latest.
#[derive(Debug, Default)]
pub struct IntentBoard {
    latest: Mutex<Option<Intent>>,
    context_file: Option<PathBuf>,
}

impl IntentBoard {
    /// A board that also reads IronCurtain's `user-context.json` in
    /// `exchange_dir`. The directory is one of Warden's own files (no
    /// server may name it, and the sandbox hides it), so any `source` the
    /// file gives is taken as the user's.
    pub fn with_exchange_dir(exchange_dir: &Path) -> IntentBoard {
        IntentBoard { latest: Mutex::default(), context_file: Some(exchange_dir.join(USER_CONTEXT_FILE)) }
    }

    /// Records `message` from `source`, now.
    pub fn set(&self, message: String, source: String) {
        let intent = Intent { message, source, at: SystemTime::now() };
        *warden_sync::lock(&self.latest) = Some(intent);
    }

    /// The latest intent, if any: the newer of the one set and the one in
    /// the context file.
    pub fn latest(&self) -> Option<Intent> {
        let set = warden_sync::lock(&self.latest).clone();
        let written = self.context_file.as_deref().and_then(read_user_context);
        match (set, written) {
            (Some(set), Some(written)) => Some(if written.at > set.at { written } else { set }),
            (set, written) => set.or(written),
        }
    }
}

/// IronCurtain's `user-context.json`: `{userMessage, source?, timestamp?}`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct UserContext {
    user_message: String,
    #[serde(default)]
    source: Option<String>,
    #[serde(default)]
    timestamp: Option<String>,
}

/// The intent in the file at `path`; `None` if it is missing, unreadable,
/// malformed or empty (as IronCurtain's `readUserContext`: the call then
/// goes to a person). Dated by its `timestamp` (RFC 3339, as IronCurtain
/// writes it), else by when the file was last written.
fn read_user_context(path: &Path) -> Option<Intent> {
    let file = std::fs::File::open(path).ok()?;
    let modified = file.metadata().and_then(|meta| meta.modified()).ok()?;
    let mut text = String::new();
    file.take(MAX_CONTEXT_BYTES).read_to_string(&mut text).ok()?;
    let context: UserContext = serde_json::from_str(&text).ok()?;
    if context.user_message.trim().is_empty() {
        return None;
    }
    let at = context
        .timestamp
        .as_deref()
        .and_then(|stamp| humantime::parse_rfc3339_weak(stamp.trim_end_matches('Z')).ok())
        .unwrap_or(modified);
    let source = context.source.unwrap_or_else(|| USER_CONTEXT_FILE.to_owned());
    Some(Intent { message: context.user_message, source, at })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn board(name: &str, contents: Option<&str>) -> (IntentBoard, PathBuf) {
        let dir = std::env::temp_dir().join(format!("warden-intent-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("dir");
        if let Some(contents) = contents {
            std::fs::write(dir.join(USER_CONTEXT_FILE), contents).expect("write");
        }
        (IntentBoard::with_exchange_dir(&dir), dir)
    }

    #[test]
    fn the_file_is_read_as_ironcurtain_writes_it() {
        let (board, dir) = board(
            "ironcurtain",
            Some(
                r#"{"userMessage":"read notes.txt","timestamp":"2026-11-27T18:35:57.123Z","source":"mux-trusted-input"}"#,
            ),
        );
        let intent = board.latest().expect("an intent");
        assert_eq!(intent.message, "read notes.txt");
        assert_eq!(intent.source, "mux-trusted-input");
        assert_eq!(intent.at, humantime::parse_rfc3339("2026-11-27T18:35:57.123Z").expect("time"));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn without_a_timestamp_the_file_is_dated_by_its_writing() {
        let (board, dir) = board("mtime", Some(r#"{"userMessage":"read notes.txt"}"#));
        let intent = board.latest().expect("an intent");
        assert_eq!(intent.source, USER_CONTEXT_FILE);
        assert!(SystemTime::now().duration_since(intent.at).expect("past") < Duration::from_secs(60));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn missing_empty_or_malformed_files_give_no_intent() {
        for (name, contents) in [
            ("missing", None),
            ("empty", Some(r#"{"userMessage":"   "}"#)),
            ("malformed", Some("{userMessage")),
            ("wrong-type", Some(r#"{"userMessage":7}"#)),
        ] {
            let (board, dir) = board(name, contents);
            assert!(board.latest().is_none(), "{name}");
            let _ = std::fs::remove_dir_all(dir);
        }
    }

    #[test]
    fn the_newer_of_the_file_and_context_set_wins() {
        let (board, dir) =
            board("newer", Some(r#"{"userMessage":"from the file","timestamp":"2020-01-01T00:00:00Z"}"#));
        board.set("from context set".into(), "cli".into());
        assert_eq!(board.latest().expect("intent").message, "from context set");
        let far = humantime::format_rfc3339(SystemTime::now() + Duration::from_secs(5));
        std::fs::write(
            dir.join(USER_CONTEXT_FILE),
            format!(r#"{{"userMessage":"newer in the file","timestamp":"{far}"}}"#),
        )
        .expect("write");
        assert_eq!(board.latest().expect("intent").message, "newer in the file");
        let _ = std::fs::remove_dir_all(dir);
    }
}
