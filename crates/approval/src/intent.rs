//! What the user said they want, for the auto-approver.

use std::sync::Mutex;
use std::time::SystemTime;

pub use warden_autoapprove::Intent;

/// Holds the latest intent (`warden context set "..."`); a newer one
/// replaces it.
#[derive(Debug, Default)]
pub struct IntentBoard {
    latest: Mutex<Option<Intent>>,
}

impl IntentBoard {
    /// Records `message` from `source`, now.
    pub fn set(&self, message: String, source: String) {
        let intent = Intent { message, source, at: SystemTime::now() };
        *self.latest.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(intent);
    }

    /// The latest intent, if any.
    pub fn latest(&self) -> Option<Intent> {
        self.latest.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
    }
}
