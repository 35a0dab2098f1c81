//! One-time login links (`warden approvals open`): the local CLI asks the
//! control socket (mode 0600, so only its owner can) for a link; the page
//! trades it, once and within a minute, for a session cookie.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long a link works.
pub const LINK_LIFETIME: Duration = Duration::from_secs(60);

/// Login links not yet used, and where the page is.
#[derive(Default)]
pub struct LoginLinks {
    codes: Mutex<HashMap<String, Instant>>,
    page: OnceLock<String>,
}

impl std::fmt::Debug for LoginLinks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoginLinks").field("page", &self.page.get()).finish_non_exhaustive()
    }
}

impl LoginLinks {
    /// Records the page's URL (`http://127.0.0.1:8211/`), once it listens.
    pub fn set_page(&self, url: String) {
        let _ = self.page.set(url);
    }

    /// A new one-time link, or `None` when this Warden has no page.
    pub fn mint(&self) -> Option<String> {
        let page = self.page.get()?;
        let code = crate::record::random_id();
        let mut codes = self.lock();
        let now = Instant::now();
        codes.retain(|_, ends| *ends > now);
        codes.insert(code.clone(), now + LINK_LIFETIME);
        Some(format!("{}login/{code}", page))
    }

    /// Uses up `code`: whether it was a live link.
    pub fn redeem(&self, code: &str) -> bool {
        let mut codes = self.lock();
        let found = codes
            .keys()
            .find(|known| warden_pipeline::access::constant_time_eq(known.as_bytes(), code.as_bytes()))
            .cloned();
        match found.and_then(|known| codes.remove(&known)) {
            Some(ends) => ends > Instant::now(),
            None => false,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Instant>> {
        warden_sync::lock(&self.codes)
    }
}
