//! What the person running Warden sees of it: each server connection and
//! each client session, for the dashboard and `warden status`. Unlike a
//! client's `/status`, nothing is hidden by profile.

/// One connection to a server: one session's own, or a shared one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerView {
    /// The server's name in the configuration.
    pub name: String,
    /// `starting`, `restarting` (starting again after it ran), `ready`,
    /// `down`, `stopped` or `refused`.
    pub state: &'static str,
    /// Why it is down or refused, with the tail of its stderr.
    pub reason: Option<String>,
    /// Times it was started again after its first start.
    pub restarts: u64,
    /// How its sandbox last started it (`sandboxed: …`, `UNSANDBOXED: …`);
    /// `None` when it has no sandbox or has not started.
    pub sandbox: Option<String>,
    /// Shared by every session (`share: true`), so listed once.
    pub shared: bool,
}

/// One client session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientView {
    /// `stdio` or `http`.
    pub front: &'static str,
    /// `clientInfo` as `name/version`, once it initialized.
    pub client: Option<String>,
    /// The protocol revision agreed with it.
    pub protocol_version: Option<String>,
    /// The name of the token it came with (HTTP, with named tokens).
    pub principal: Option<String>,
}

/// Every server connection and client session of a front, and the
/// servers its configuration names now.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overview {
    /// The servers of the configuration in force, in its order (a server
    /// no session has started yet has no connection).
    pub configured: Vec<String>,
    /// Server connections, a shared one once, in configuration order per
    /// session.
    pub servers: Vec<ServerView>,
    /// Client sessions.
    pub clients: Vec<ClientView>,
}

impl Overview {
    /// The overview of `sessions`, each given as its client and its server
    /// connections, under the configuration naming `configured`; a shared
    /// server is listed once.
    pub fn of(configured: Vec<String>, sessions: impl IntoIterator<Item = (ClientView, Vec<ServerView>)>) -> Overview {
        let mut overview = Overview { configured, ..Overview::default() };
        let mut shared_seen = std::collections::HashSet::new();
        for (client, servers) in sessions {
            overview.clients.push(client);
            for server in servers {
                if !server.shared || shared_seen.insert(server.name.clone()) {
                    overview.servers.push(server);
                }
            }
        }
        overview
    }
}
