//! One log level for a server shared by many sessions, each of which may
//! ask for its own (`logging/setLevel`): the server is set to the most
//! verbose level any of them asked for, and each session is passed only the
//! log messages at or above its own level. So no tenant's level takes
//! messages from another, or hands another more than it asked for.

use serde::Deserialize;

use super::Pool;
use warden_sync::lock;

/// RFC 5424 severities, most verbose first, as MCP names them.
const LEVELS: [&str; 8] = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];

/// How verbose `level` (JSON text, e.g. `"info"`) is: 0 for `debug`.
fn rank(level: &str) -> Option<usize> {
    let name: String = serde_json::from_str(level).ok()?;
    LEVELS.iter().position(|known| *known == name)
}

impl Pool {
    /// The level shared server `name` should log at: the most verbose that
    /// a session using it asked for (JSON text), if any asked.
    pub(crate) fn most_verbose_level(&self, name: &str) -> Option<String> {
        let shared = lock(&self.shared);
        let common = shared.get(name)?;
        let sessions = lock(&common.fanout.sessions);
        sessions
            .iter()
            .filter_map(|(session, _)| session.upgrade())
            .filter_map(|session| session.log_level())
            .filter_map(|level| rank(&level).map(|rank| (rank, level)))
            .min_by_key(|(rank, _)| *rank)
            .map(|(_, level)| level)
    }
}

#[derive(Deserialize)]
struct MessageParams<'a> {
    #[serde(borrow)]
    level: &'a serde_json::value::RawValue,
}

/// Whether a `notifications/message` with `params` from a shared server is
/// for a session that asked for level `own` (JSON text): at or above it
/// (all of them when it asked for none).
pub(crate) fn wants_log(own: Option<&str>, params: Option<&str>) -> bool {
    let Some(own) = own.and_then(rank) else {
        return true;
    };
    let level = params.and_then(|params| serde_json::from_str::<MessageParams>(params).ok());
    level.and_then(|params| rank(params.level.get())).is_none_or(|rank| rank >= own)
}

#[cfg(test)]
mod tests {
    use super::rank;

    #[test]
    fn levels_rank_from_debug_to_emergency() {
        assert_eq!(rank("\"debug\""), Some(0));
        assert_eq!(rank("\"error\""), Some(4));
        assert_eq!(rank("\"emergency\""), Some(7));
        assert_eq!(rank("\"loud\""), None);
        assert_eq!(rank("4"), None);
    }
}
