//! The approvals of a running Warden: one store and its channels for the
//! whole process, shared by every session and kept across reloads.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use std::net::SocketAddr;

use anyhow::{Context, bail};
use warden_approval::channels::auto::AutoChannel;
use warden_approval::channels::socket::ControlSocket;
use warden_approval::channels::web::{LoginLinks, Peers, WebSettings};
use warden_approval::{Board, IntentBoard, MemoryStore, Service, ServiceSettings, Whitelist};
use warden_autoapprove::{Api, ApiKey, AutoApprover, Settings};
use warden_config::{ApprovalConfig, AutoApproverConfig, Config, ModelApi};
use warden_pipeline::{Approver, Audit};

mod dangling;

/// Approvals while Warden serves; the channels stop when it is dropped.
pub struct Running {
    service: Arc<Service>,
    /// What the dashboard and `warden status` show.
    board: Arc<Board>,
    /// The control socket (beside another Warden's, if that one holds the
    /// configured path).
    _socket: ControlSocket,
    /// The approval page, if configured (or, while another Warden serves
    /// it, the wait to take it over).
    _page: Option<AbortOnDrop>,
    /// The exchange directory, if configured.
    _files: Option<AbortOnDrop>,
}

/// Stops a task when dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Running {
    /// The approver for the pipeline.
    pub fn approver(&self) -> Arc<dyn Approver> {
        self.service.clone()
    }

    /// Where the process puts what its dashboard shows.
    pub fn board(&self) -> Arc<Board> {
        self.board.clone()
    }
}

/// The control socket's path for `config`.
pub fn socket_path(config: &Config) -> PathBuf {
    match config.approval.as_ref().and_then(|approval| approval.socket.as_deref()) {
        Some(path) => crate::hooks::expand_home(path),
        None => state_dir(config).join("approvals.sock"),
    }
}

fn state_dir(config: &Config) -> PathBuf {
    config.pins.state_dir.as_ref().map(PathBuf::from).unwrap_or_else(warden_pins::default_state_dir)
}

/// Starts the approvals `config` asks for (none without `approval:`).
pub async fn start(config: &Config, audit: Option<Arc<dyn Audit>>) -> anyhow::Result<Option<Running>> {
    let Some(settings) = &config.approval else {
        close_dangling(config, &audit).await;
        return Ok(None);
    };
    let store = Arc::new(MemoryStore::default());
    // IronCurtain's session writes the user's latest message into its
    // escalation directory, which the exchange directory is.
    let intents = Arc::new(match &settings.exchange_dir {
        Some(dir) => IntentBoard::with_exchange_dir(&crate::hooks::expand_home(dir)),
        None => IntentBoard::default(),
    });
    let whitelist = Arc::new(Whitelist::new(audit.clone()));
    let links = Arc::new(LoginLinks::default());
    let board = Arc::new(Board::default());
    let mut path = socket_path(config);
    let socket = match ControlSocket::bind(
        &path,
        store.clone(),
        whitelist.clone(),
        intents.clone(),
        links.clone(),
        board.clone(),
    )
    .await
    {
        Ok(socket) => socket,
        Err(err) if err.kind() == std::io::ErrorKind::AddrInUse => {
            // Another Warden on this config (one per client window is
            // common): this one listens beside it, where `warden approvals`
            // looks too, so one `list` shows both.
            path = sibling_socket(&path, std::process::id());
            ControlSocket::bind(&path, store.clone(), whitelist.clone(), intents.clone(), links.clone(), board.clone())
                .await
                .with_context(|| format!("cannot listen on {}", path.display()))?
        }
        Err(err) => return Err(err).with_context(|| format!("cannot listen on {}", path.display())),
    };
    tracing::info!("approvals: `warden approvals` reaches this Warden at {}", path.display());
    // Approvals left pending by a Warden that stopped are closed, unless
    // another Warden on this config is running (its pending calls are live).
    let primary = socket_path(config);
    let mut alone = path == primary;
    for sibling in sibling_sockets(&primary).iter().filter(|sibling| **sibling != path) {
        alone &= tokio::net::UnixStream::connect(sibling).await.is_err();
    }
    if alone {
        close_dangling(config, &audit).await;
    }
    let by_socket = format!("with `warden approvals approve {{id}}` (socket {})", path.display());
    let (page, hint) = match &settings.listen {
        Some(listen) => match start_page(
            listen,
            settings,
            store.clone(),
            whitelist.clone(),
            links.clone(),
            Peers { primary: primary.clone(), own: path.clone() },
            board.clone(),
        )
        .await
        {
            Ok((url, task)) => (Some(AbortOnDrop(task)), format!("at {url} or with `warden approvals approve {{id}}`")),
            // The page's port is taken (by another Warden on this config):
            // serve MCP anyway; the page's owner shows this Warden's calls,
            // and this one takes the page over when the owner exits.
            Err(err) if is_addr_in_use(&err) => {
                eprintln!(
                    "warden: the approval page's address {listen} is taken (another Warden?); its page shows this Warden's calls too, and this Warden takes the page over if that one exits; or decide {by_socket}"
                );
                let standby = Standby {
                    listen: listen.clone(),
                    settings: settings.clone(),
                    store: store.clone(),
                    whitelist: whitelist.clone(),
                    links: links.clone(),
                    peers: Peers { primary: primary.clone(), own: path.clone() },
                    board: board.clone(),
                };
                (Some(AbortOnDrop(tokio::spawn(standby.wait_and_take_over()))), by_socket)
            }
            Err(err) => return Err(err),
        },
        None => (None, by_socket),
    };
    let files = match &settings.exchange_dir {
        Some(dir) => {
            let dir = crate::hooks::expand_home(dir);
            let task = warden_approval::channels::files::serve(&dir, store.clone(), whitelist.clone())
                .with_context(|| format!("approval.exchangeDir {}", dir.display()))?;
            tracing::info!("approvals: request files in {}", dir.display());
            Some(AbortOnDrop(task))
        }
        None => None,
    };
    let auto = match &settings.auto_approver {
        Some(auto) => Some(AutoChannel::new(auto_approver(auto)?, intents.clone())),
        None => None,
    };
    let service = Service::new(
        store,
        whitelist,
        ServiceSettings {
            default_timeout: Duration::from_secs(settings.timeout_secs),
            hint,
            policy_version: policy_version(config),
            redact: config.audit.as_ref().is_none_or(|audit| audit.redact),
            elicitation: settings.elicitation,
            announce: true,
        },
        auto,
    );
    Ok(Some(Running { service: Arc::new(service), board, _socket: socket, _page: page, _files: files }))
}

/// What a Warden needs to take the approval page over when its owner, another
/// Warden on this config, exits.
struct Standby {
    listen: String,
    settings: ApprovalConfig,
    store: Arc<MemoryStore>,
    whitelist: Arc<Whitelist>,
    links: Arc<LoginLinks>,
    peers: Peers,
    board: Arc<Board>,
}

/// How often a Warden without the page tries for its address.
const TAKEOVER_INTERVAL: Duration = Duration::from_secs(1);

impl Standby {
    /// Tries for the page's address every [`TAKEOVER_INTERVAL`] (a bind
    /// that fails costs one system call); once free, serves the page here
    /// until this task is dropped. Of several Wardens waiting, the first to
    /// bind wins; the others keep waiting.
    async fn wait_and_take_over(self) {
        let Standby { listen, settings, store, whitelist, links, peers, board } = self;
        loop {
            tokio::time::sleep(TAKEOVER_INTERVAL).await;
            match start_page(
                &listen,
                &settings,
                store.clone(),
                whitelist.clone(),
                links.clone(),
                peers.clone(),
                board.clone(),
            )
            .await
            {
                Ok((url, task)) => {
                    tracing::info!("took over the approval page at {url}: the Warden that served it exited");
                    let _page = AbortOnDrop(task);
                    std::future::pending::<()>().await;
                }
                Err(err) if is_addr_in_use(&err) => {}
                Err(err) => {
                    tracing::warn!("cannot take over the approval page: {err:#}");
                    return;
                }
            }
        }
    }
}

/// Closes, in the audit log, the approvals a stopped Warden left pending.
async fn close_dangling(config: &Config, audit: &Option<Arc<dyn Audit>>) {
    if let (Some(audit), Some(section)) = (audit, &config.audit) {
        let open = dangling::dangling(&crate::hooks::expand_home(&section.path));
        dangling::close(audit, open).await;
    }
}

pub use warden_approval::channels::socket::{sibling_socket, sibling_sockets};

fn is_addr_in_use(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::AddrInUse)
    })
}

/// Binds the approval page and prints where it is, with its login token.
async fn start_page(
    listen: &str,
    settings: &ApprovalConfig,
    store: Arc<MemoryStore>,
    whitelist: Arc<Whitelist>,
    links: Arc<LoginLinks>,
    peers: Peers,
    board: Arc<Board>,
) -> anyhow::Result<(String, tokio::task::JoinHandle<()>)> {
    // A bare port means loopback, as for --http.
    let wanted: SocketAddr = match listen.parse::<u16>() {
        Ok(port) => SocketAddr::from(([127, 0, 0, 1], port)),
        Err(_) => listen.parse().with_context(|| format!("approval.listen {listen:?}: expected PORT or IP:PORT"))?,
    };
    for (name, token) in
        settings.token.iter().map(|t| ("token", t)).chain(settings.tokens.iter().map(|(n, t)| (n.as_str(), t)))
    {
        let bits = warden_approval::channels::web::token_bits(token);
        if bits < 128.0 {
            bail!(
                "approval.{}: a login token needs at least 128 bits; this one has about {bits:.0} (use 22 or more random letters and digits, e.g. `openssl rand -hex 16`)",
                if name == "token" { "token".to_owned() } else { format!("tokens.{name}") }
            );
        }
    }
    let (token, printed) = match &settings.token {
        Some(token) => (Some(token.clone()), false),
        None if !settings.tokens.is_empty() => (None, false),
        None => (Some(warden_approval::record::random_id()), true),
    };
    if !wanted.ip().is_loopback() && !printed && settings.allowed_hosts.is_empty() {
        tracing::warn!(
            "the approval page listens on {wanted}: set approval.allowedHosts to the names it is reached by"
        );
    }
    let listener = tokio::net::TcpListener::bind(wanted).await.with_context(|| format!("cannot listen on {wanted}"))?;
    let web = WebSettings {
        token: token.clone(),
        tokens: settings.tokens.iter().map(|(name, token)| (name.clone(), token.clone())).collect(),
        allowed_hosts: settings.allowed_hosts.clone(),
        peers: Some(peers),
        board,
    };
    let (bound, task) = warden_approval::channels::web::serve(listener, store, whitelist, web, links)?;
    let url = format!("http://{bound}/");
    if let (true, Some(token)) = (printed, &token) {
        eprintln!("warden: approvals at {url} (login token: {token})");
    } else {
        eprintln!("warden: approvals at {url}");
    }
    tracing::info!("approval page at {url}");
    Ok((url, task))
}

/// The auto-approver `config` describes, its key read from the environment.
fn auto_approver(config: &AutoApproverConfig) -> anyhow::Result<AutoApprover> {
    let (api, base, key_env) = match config.api {
        ModelApi::Anthropic => (Api::Anthropic, "https://api.anthropic.com", "ANTHROPIC_API_KEY"),
        ModelApi::Openai => (Api::OpenAi, "https://api.openai.com", "OPENAI_API_KEY"),
    };
    let key_env = config.api_key_env.as_deref().unwrap_or(key_env);
    let key = std::env::var(key_env).ok().filter(|key| !key.trim().is_empty()).with_context(|| {
        format!("approval.autoApprover: the environment variable {key_env} (its API key) is not set")
    })?;
    // Validation makes sure a model is named where there is no default.
    let model = config.model().context("approval.autoApprover: no model")?;
    let mut settings =
        Settings::new(api, config.base_url.as_deref().unwrap_or(base), model.to_owned(), ApiKey::new(key));
    if let Some(secs) = config.deadline_secs {
        settings.deadline = Duration::from_secs(secs);
    }
    if let Some(secs) = config.intent_max_age_secs {
        settings.intent_max_age = Duration::from_secs(secs);
    }
    AutoApprover::new(settings).context("approval.autoApprover")
}

/// The first 12 hex digits of the SHA-256 of the policy in force.
fn policy_version(config: &Config) -> String {
    let text = serde_json::to_string(&config.policy).unwrap_or_default();
    warden_audit::sha256_hex(text.as_bytes())[..12].to_owned()
}
