//! `warden approvals` and `warden context`: talk to a running Warden over
//! its control socket.

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use warden_approval::channels::socket::Request;
use warden_approval::{Approval, Grant};

use crate::cli::{ApprovalsCommand, ContextCommand, SocketArgs};

/// Runs `warden approvals ...`.
pub async fn run(command: ApprovalsCommand) -> anyhow::Result<ExitCode> {
    match command {
        ApprovalsCommand::List { socket, all, json, reveal } => {
            let answer = ask(&socket, &Request::List).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&answer)?);
                return Ok(ExitCode::SUCCESS);
            }
            let pending: Vec<Approval> = serde_json::from_value(answer["pending"].clone())?;
            if pending.is_empty() {
                println!("no pending approvals");
            }
            for approval in &pending {
                print!("{}", describe(approval, reveal));
            }
            let grants: Vec<Grant> = serde_json::from_value(answer["grants"].clone()).unwrap_or_default();
            for grant in &grants {
                println!("whitelist {}: {} (by {})", safe(&grant.id), safe(&grant.scope()), safe(&grant.by));
            }
            if all {
                let recent: Vec<Approval> = serde_json::from_value(answer["recent"].clone())?;
                for approval in &recent {
                    println!("{}", decided_line(approval));
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        ApprovalsCommand::Approve { socket, id, remember, patterns } => {
            let patterns = patterns.into_iter().collect();
            decide(&socket, Request::Approve { id, by: Some(user()), remember, patterns }).await
        }
        ApprovalsCommand::Revoke { socket, grant } => {
            let answer = ask(&socket, &Request::Revoke { grant, by: Some(user()) }).await?;
            let grant: Grant = serde_json::from_value(answer["grant"].clone())?;
            println!("revoked {}: {}", grant.id, grant.scope());
            Ok(ExitCode::SUCCESS)
        }
        ApprovalsCommand::Deny { socket, id, reason } => {
            decide(&socket, Request::Deny { id, reason, by: Some(user()) }).await
        }
        ApprovalsCommand::Watch { socket } => watch(&socket).await,
        ApprovalsCommand::Open { socket, print } => {
            let answer = ask(&socket, &Request::Open).await?;
            let url = answer["url"].as_str().context("the answer carries no link")?.to_owned();
            if print || !open_in_browser(&url) {
                println!("{url}");
                eprintln!(
                    "open this link within {} s; it logs in once",
                    warden_approval::channels::web::LINK_LIFETIME.as_secs()
                );
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Opens `url` in the desktop's browser (`$BROWSER`, `xdg-open` or
/// `open`); whether one started.
fn open_in_browser(url: &str) -> bool {
    let browser = std::env::var("BROWSER").ok().filter(|b| !b.trim().is_empty());
    let candidates = browser.into_iter().chain(["xdg-open".to_owned(), "open".to_owned()]);
    for program in candidates {
        let started = std::process::Command::new(&program)
            .arg(url)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
        if started.is_ok() {
            return true;
        }
    }
    false
}

/// Runs `warden context set`.
pub async fn context(command: ContextCommand) -> anyhow::Result<ExitCode> {
    let ContextCommand::Set { socket, message, source } = command;
    let message = if message == "-" { read_prompt()? } else { message };
    ask(&socket, &Request::Context { message, source: Some(source) }).await?;
    Ok(ExitCode::SUCCESS)
}

/// The user's message from stdin: a hook's JSON `prompt`, or the text itself.
fn read_prompt() -> anyhow::Result<String> {
    let mut text = String::new();
    std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)?;
    Ok(match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(hook)) => hook.get("prompt").and_then(Value::as_str).unwrap_or_default().to_owned(),
        _ => text.trim().to_owned(),
    })
}

async fn decide(socket: &SocketArgs, request: Request) -> anyhow::Result<ExitCode> {
    let answer = ask(socket, &request).await?;
    let approval: Approval = serde_json::from_value(answer["approval"].clone())?;
    println!("{}", decided_line(&approval));
    Ok(ExitCode::SUCCESS)
}

/// The socket `args` point to.
fn socket_path(args: &SocketArgs) -> anyhow::Result<PathBuf> {
    if let Some(path) = &args.socket {
        return Ok(path.clone());
    }
    let config = match &args.config {
        Some(path) => warden_config::load(path)?,
        None => warden_config::Config::default(),
    };
    Ok(crate::approvals::socket_path(&config))
}

async fn connect(args: &SocketArgs) -> anyhow::Result<UnixStream> {
    let path = socket_path(args)?;
    UnixStream::connect(&path).await.with_context(|| {
        format!("cannot reach a running Warden at {} (is it serving with an `approval:` section?)", path.display())
    })
}

/// Sends one request and returns its answer, or the error it carries.
///
/// Locally, every Warden on the socket's path is asked: the one holding it
/// and those beside it (`approvals-<pid>.sock`, from Wardens started while
/// it was taken). A list merges their answers; a decision or revocation
/// goes to the one that has the approval or entry.
pub(crate) async fn ask(args: &SocketArgs, request: &Request) -> anyhow::Result<Value> {
    if let Some(url) = &args.url {
        return ask_page(url, args.token.as_deref(), request).await;
    }
    let primary = socket_path(args)?;
    let siblings = crate::approvals::sibling_sockets(&primary);
    if siblings.is_empty() {
        return ask_socket(&primary, request).await;
    }
    if let Request::Status = request {
        // The Warden that holds the socket (and the page) speaks for itself.
        return ask_socket(&primary, request).await;
    }
    if let Request::Context { .. } = request {
        // Each Warden's auto-approver reads its own copy of the intent.
        let mut last = None;
        for path in std::iter::once(&primary).chain(&siblings) {
            last = Some(ask_socket(path, request).await);
        }
        return last.unwrap_or_else(|| Err(anyhow::anyhow!("no Warden answered")));
    }
    let mut answers = Vec::new();
    let mut first_error = None;
    for path in std::iter::once(&primary).chain(&siblings) {
        match ask_socket(path, &Request::List).await {
            Ok(answer) => answers.push((path.clone(), answer)),
            Err(err) => first_error = first_error.or(Some(err)),
        }
    }
    if answers.is_empty() {
        return Err(first_error.unwrap_or_else(|| anyhow::anyhow!("no Warden answered")));
    }
    let holds = |answer: &Value, key: &str, id: &str| {
        answer[key].as_array().into_iter().flatten().any(|item| {
            item["id"].as_str().is_some_and(|candidate| candidate == id || (id.len() >= 8 && candidate.starts_with(id)))
        })
    };
    let target = match request {
        Request::List => {
            let mut merged = serde_json::json!({"ok": true, "pending": [], "recent": [], "grants": []});
            for (_, answer) in &answers {
                for key in ["pending", "recent", "grants"] {
                    if let (Some(into), Some(from)) = (merged[key].as_array_mut(), answer[key].as_array()) {
                        into.extend(from.iter().cloned());
                    }
                }
            }
            return Ok(merged);
        }
        Request::Approve { id, .. } | Request::Deny { id, .. } => {
            answers.iter().find(|(_, answer)| holds(answer, "pending", id) || holds(answer, "recent", id))
        }
        Request::Revoke { grant, .. } => answers.iter().find(|(_, answer)| holds(answer, "grants", grant)),
        Request::Watch | Request::Context { .. } | Request::Open | Request::Status => None,
    };
    let path = target.map(|(path, _)| path.clone()).unwrap_or(primary);
    ask_socket(&path, request).await
}

/// Sends one request to the Warden at `path`.
async fn ask_socket(path: &std::path::Path, request: &Request) -> anyhow::Result<Value> {
    let mut stream = UnixStream::connect(path).await.with_context(|| {
        format!("cannot reach a running Warden at {} (is it serving with an `approval:` section?)", path.display())
    })?;
    let mut line = serde_json::to_string(request)?;
    line.push('\n');
    stream.write_all(line.as_bytes()).await?;
    let mut answer = String::new();
    BufReader::new(stream).read_line(&mut answer).await?;
    let answer: Value = serde_json::from_str(&answer).context("the control socket's answer is not JSON")?;
    if answer["ok"] != true {
        bail!("{}", answer["error"].as_str().unwrap_or("the request failed"));
    }
    Ok(answer)
}

/// The same request to a remote Warden's approval page, with its token.
async fn ask_page(url: &str, token: Option<&str>, request: &Request) -> anyhow::Result<Value> {
    let token = token.context("--url needs the page's token (--token or WARDEN_APPROVAL_TOKEN)")?;
    let base = url.trim_end_matches('/');
    let (path, body) = match request {
        Request::List => (None, Value::Null),
        Request::Status => (Some("/api/status".to_owned()), Value::Null),
        Request::Approve { id, remember, patterns, .. } => {
            let action = if *remember { "approve-session" } else { "approve" };
            let (id, digest) = shown_digest(url, token, id).await?;
            let body = serde_json::json!({"digest": digest, "patterns": patterns});
            (Some(format!("/api/approvals/{id}/{action}")), body)
        }
        Request::Deny { id, reason, .. } => {
            let (id, digest) = shown_digest(url, token, id).await?;
            (Some(format!("/api/approvals/{id}/deny")), serde_json::json!({"reason": reason, "digest": digest}))
        }
        Request::Revoke { grant, .. } => (Some(format!("/api/grants/{grant}/revoke")), Value::Null),
        Request::Watch | Request::Context { .. } | Request::Open => {
            bail!("this needs the local socket of the Warden (not --url)")
        }
    };
    static PROVIDER: std::sync::Once = std::sync::Once::new();
    // Another part of the program may have installed one already: fine.
    PROVIDER.call_once(|| drop(rustls::crypto::ring::default_provider().install_default()));
    let client = reqwest::Client::builder().build().context("cannot set up an HTTP client")?;
    let sent = match path {
        None => client.get(format!("{base}/api/approvals")),
        Some(path) if matches!(request, Request::Status) => client.get(format!("{base}{path}")),
        Some(path) if body.is_null() => client.post(format!("{base}{path}")),
        Some(path) => client.post(format!("{base}{path}")).body(body.to_string()),
    };
    let response = sent.bearer_auth(token).send().await.with_context(|| format!("cannot reach {base}"))?;
    let status = response.status();
    let text = response.text().await.unwrap_or_default();
    let answer: Value = serde_json::from_str(&text).with_context(|| format!("{base} answered {status}: {text}"))?;
    if !status.is_success() {
        bail!("{}", answer["error"].as_str().unwrap_or("the request failed"));
    }
    if let Request::Status = request {
        // As the socket answers.
        return Ok(serde_json::json!({"ok": true, "status": answer}));
    }
    Ok(answer)
}

/// The full id and arguments digest of the pending approval `id` (or its
/// prefix) on the page: a decision carries the digest of what was listed.
async fn shown_digest(url: &str, token: &str, id: &str) -> anyhow::Result<(String, String)> {
    let listed = Box::pin(ask_page(url, Some(token), &Request::List)).await?;
    let pending: Vec<Approval> = serde_json::from_value(listed["pending"].clone())?;
    let mut found = pending.iter().filter(|approval| approval.id.starts_with(id) && id.len() >= 8);
    match (found.next(), found.next()) {
        (Some(approval), None) => Ok((approval.id.clone(), approval.args_digest.clone())),
        (Some(_), Some(_)) => bail!("{id} names more than one pending approval: give more of it"),
        (None, _) => bail!("no pending approval {id} at {url}"),
    }
}

/// Shows each new pending approval and asks y/N on the terminal.
async fn watch(args: &SocketArgs) -> anyhow::Result<ExitCode> {
    // Every Warden on the socket's path and beside it, followed as they
    // come and go; at least one must be running now.
    let primary = socket_path(args)?;
    let (events_tx, mut events) = tokio::sync::mpsc::unbounded_channel::<String>();
    let mut followed = Followed::default();
    if followed.scan(&primary, &events_tx).await == 0 {
        connect(args).await?;
    }
    tokio::spawn(async move {
        while !events_tx.is_closed() {
            tokio::time::sleep(SIBLING_SCAN).await;
            followed.scan(&primary, &events_tx).await;
        }
    });
    let (answers_tx, mut answers) = tokio::sync::mpsc::unbounded_channel::<String>();
    // Stdin is read on its own thread: a blocked read must not stop events.
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if answers_tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut seen = std::collections::HashSet::new();
    println!("watching for approvals (Ctrl-C to stop)");
    while let Some(line) = events.recv().await {
        let event: Value = serde_json::from_str(&line)?;
        let approval: Approval = serde_json::from_value(event["approval"].clone())?;
        if !approval.state.is_pending() {
            if seen.remove(&approval.id) {
                println!("{}", decided_line(&approval));
            }
            continue;
        }
        if !seen.insert(approval.id.clone()) {
            continue;
        }
        print!("{}", describe(&approval, false));
        print!("approve {}? [y/N] ", safe(approval.short_id()));
        std::io::stdout().flush()?;
        let Some(answer) = answers.recv().await else { break };
        let approve = matches!(answer.trim(), "y" | "Y" | "yes");
        let request = if approve {
            Request::Approve {
                id: approval.id.clone(),
                by: Some(user()),
                remember: false,
                patterns: Default::default(),
            }
        } else {
            Request::Deny {
                id: approval.id.clone(),
                reason: Some("denied in `warden approvals watch`".into()),
                by: Some(user()),
            }
        };
        match ask(args, &request).await {
            Ok(_) => {}
            Err(err) => println!("{err}"),
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// How often `watch` looks for Wardens started (or gone) since.
const SIBLING_SCAN: Duration = Duration::from_secs(2);

/// The Wardens `watch` follows: by socket path, the task passing their
/// events on.
#[derive(Default)]
struct Followed(std::collections::HashMap<PathBuf, tokio::task::JoinHandle<()>>);

impl Followed {
    /// Follows every Warden at `primary` or beside it that is not followed
    /// yet (or whose follower ended: a new Warden may have its path now).
    /// Returns how many are followed.
    async fn scan(&mut self, primary: &std::path::Path, events: &tokio::sync::mpsc::UnboundedSender<String>) -> usize {
        self.0.retain(|_, follower| !follower.is_finished());
        let mut paths = vec![primary.to_owned()];
        paths.extend(crate::approvals::sibling_sockets(primary));
        for path in paths {
            if self.0.contains_key(&path) {
                continue;
            }
            if let Ok(stream) = UnixStream::connect(&path).await {
                self.0.insert(path, tokio::spawn(follow(stream, events.clone())));
            }
        }
        self.0.len()
    }
}

/// Passes the events of one Warden's `watch` on to `events` until that
/// Warden exits.
async fn follow(mut stream: UnixStream, events: tokio::sync::mpsc::UnboundedSender<String>) {
    if stream.write_all(b"{\"op\":\"watch\"}\n").await.is_err() {
        return;
    }
    let mut lines = BufReader::new(stream).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        if events.send(line).is_err() {
            return;
        }
    }
}

/// `text` (from a client, a server or a person) safe to print: no escape
/// sequence or control character reaches the terminal.
fn safe(text: &str) -> String {
    warden_approval::display::terminal_safe(text, false)
}

/// A pending approval, for a person to decide on: every string made safe
/// for the terminal, secret-like spans as `⟦secret kind, N chars⟧` markers
/// (shown with `reveal`), and a line that says so when any are masked.
fn describe(approval: &Approval, reveal: bool) -> String {
    let masked = if reveal { &[][..] } else { &approval.masked[..] };
    let shown = warden_approval::display::for_terminal(&approval.arguments, masked);
    let arguments = serde_json::to_string_pretty(&shown).unwrap_or_default();
    let mut client = approval.client.as_deref().unwrap_or("unknown client").to_owned();
    if let Some(principal) = &approval.principal {
        client.push_str(&format!(", token {principal}"));
    }
    let arguments = arguments.lines().map(|line| format!("    {line}\n")).collect::<String>();
    let secrets: usize = masked
        .iter()
        .map(|m| m.parts.iter().filter(|p| matches!(p, warden_approval::display::Part::Secret { .. })).count())
        .sum();
    let notice = match secrets {
        0 => String::new(),
        n => format!(
            "  MASKED: {n} secret-like span{s} shown as ⟦secret …⟧; everything else is exactly what will run (--reveal shows {them})\n",
            s = if n == 1 { "" } else { "s" },
            them = if n == 1 { "it" } else { "them" },
        ),
    };
    let scope = warden_approval::Whitelist::prepare(approval, "").scope();
    let editable: Vec<String> =
        warden_approval::Whitelist::editable(approval).into_iter().map(|(name, _)| safe(&name)).collect();
    let widen = if editable.is_empty() {
        String::new()
    } else {
        format!(" (--pattern NAME=GLOB widens {})", editable.join(", "))
    };
    format!(
        "{short}  {server}/{tool}  ({left} s left)\n  rule {rule}: {reason}\n  session {session}, {client}\n  id {id}, arguments (sha256 {digest}):\n{notice}{arguments}  approve --remember also approves {scope}, until revoked{widen}\n",
        short = safe(approval.short_id()),
        server = safe(&approval.server),
        tool = safe(&approval.tool),
        left = approval.time_left().as_secs(),
        rule = safe(&approval.rule),
        reason = safe(&approval.reason),
        session = safe(&approval.session),
        client = safe(&client),
        id = safe(&approval.id),
        digest = safe(&approval.args_digest[..16.min(approval.args_digest.len())]),
        scope = safe(&scope),
    )
}

/// One line for a decided approval.
fn decided_line(approval: &Approval) -> String {
    let by = approval
        .decided
        .as_ref()
        .map(|d| {
            format!(
                " by {} via {}{}",
                safe(&d.by),
                safe(&d.channel),
                d.note.as_ref().map(|n| format!(": {}", safe(n))).unwrap_or_default()
            )
        })
        .unwrap_or_default();
    format!(
        "{} {} {}/{}{by}",
        safe(approval.short_id()),
        approval.state.as_str(),
        safe(&approval.server),
        safe(&approval.tool)
    )
}

/// Who is deciding: the login name.
fn user() -> String {
    std::env::var("USER")
        .ok()
        .filter(|user| !user.is_empty())
        .map(|user| format!("cli:{user}"))
        .unwrap_or_else(|| "cli".into())
}
