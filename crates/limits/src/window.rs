//! A sliding window: at most `limit` events in any span of `span`.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// The times of the last events, at most `limit` of them.
#[derive(Debug, Default)]
pub struct Window {
    events: VecDeque<Instant>,
}

impl Window {
    /// Records an event at `now` if fewer than `limit` happened within `span`
    /// before it; otherwise returns how long until one more is allowed.
    pub fn admit(&mut self, now: Instant, limit: u32, span: Duration) -> Result<(), Duration> {
        while self.events.front().is_some_and(|first| now.duration_since(*first) >= span) {
            self.events.pop_front();
        }
        if self.events.len() >= limit as usize {
            let oldest = self.events.front().copied().unwrap_or(now);
            return Err(span.saturating_sub(now.duration_since(oldest)));
        }
        self.events.push_back(now);
        Ok(())
    }

    /// Whether `limit` events happened within `span` before `now`: the next
    /// one would be refused.
    pub fn is_full(&self, now: Instant, limit: u32, span: Duration) -> bool {
        self.events.iter().filter(|at| now.duration_since(**at) < span).count() >= limit as usize
    }

    /// Whether nothing within `span` before `now` is remembered.
    pub fn is_idle(&self, now: Instant, span: Duration) -> bool {
        self.events.back().is_none_or(|last| now.duration_since(*last) >= span)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admits_up_to_the_limit_then_says_when() {
        let start = Instant::now();
        let span = Duration::from_secs(60);
        let mut window = Window::default();
        for second in 0..3 {
            assert!(window.admit(start + Duration::from_secs(second), 3, span).is_ok());
        }
        let wait = window.admit(start + Duration::from_secs(10), 3, span).unwrap_err();
        assert_eq!(wait, Duration::from_secs(50));
        assert!(window.admit(start + Duration::from_secs(60), 3, span).is_ok(), "the first event left the window");
        assert!(!window.is_idle(start + Duration::from_secs(61), span));
        assert!(window.is_idle(start + Duration::from_secs(200), span));
    }
}
