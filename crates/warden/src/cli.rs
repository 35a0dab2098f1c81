//! Command-line arguments.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Warden: one MCP endpoint in front of many MCP servers.
#[derive(Debug, Parser)]
#[command(name = "warden", version, about, long_about = None)]
pub struct Cli {
    /// Logging options (logs never go to stdout).
    #[command(flatten)]
    pub log: LogArgs,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Where logs go.
#[derive(Debug, Args)]
pub struct LogArgs {
    /// Log filter, e.g. `info`, `warden=debug` (default: info; warn for inspection commands).
    #[arg(long, global = true, env = "WARDEN_LOG")]
    pub log_level: Option<String>,
    /// Append logs to this file instead of stderr.
    #[arg(long, global = true, env = "WARDEN_LOG_FILE")]
    pub log_file: Option<PathBuf>,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve MCP on stdin/stdout, in front of the servers of a config file.
    #[command(
        after_help = "Examples:\n  warden serve --config warden.yaml\n  warden serve --config warden.yaml --profile safe\n  claude mcp add warden -- warden serve --config /abs/warden.yaml\n\nThe config file is watched, and SIGHUP reloads it: profile changes apply at once."
    )]
    Serve(ServeArgs),
    /// Put Warden in front of one server given on the command line; tool names pass through unchanged.
    #[command(
        after_help = "Examples:\n  warden wrap -- npx -y @modelcontextprotocol/server-filesystem ~/src\n  claude mcp add fs -- warden wrap -- npx -y @modelcontextprotocol/server-filesystem ~/src\n  warden wrap --watch src --ext py -- python3 src/server.py   # restarts on every edit"
    )]
    Wrap(WrapArgs),
    /// Check a config file: exit 0 with a summary, or 1 with every problem found.
    #[command(
        after_help = "Examples:\n  warden validate --config warden.yaml\n  warden validate --config warden.yaml --connect"
    )]
    Validate(ValidateArgs),
    /// List the profiles of a config file with their descriptions.
    #[command(after_help = "Example:\n  warden profiles --config warden.yaml")]
    Profiles(ConfigArgs),
    /// Show what a profile lets the client see, and what it hides, by asking the servers.
    #[command(
        after_help = "Examples:\n  warden effective --config warden.yaml --profile safe\n  warden effective --config warden.yaml --profile safe --server files\n  warden effective --config warden.yaml --profile safe --offline"
    )]
    Effective(EffectiveArgs),
    /// Call a tool, get a prompt or read a resource through the same filtered hub the model sees.
    #[command(
        after_help = "Examples:\n  warden call --config warden.yaml --profile safe tool files__read_file --args '{\"path\":\"README.md\"}'\n  warden call --config warden.yaml prompt files__greeting --args '{\"name\":\"Ada\"}'\n  warden call --config warden.yaml resource file:///tmp/notes.txt"
    )]
    Call(CallArgs),
    /// Build a starter config from the live inventories of the servers named on the command line.
    #[command(
        after_help = "Example:\n  warden init -o warden.yaml 'files=npx -y @modelcontextprotocol/server-filesystem /home/me/src' 'git=uvx mcp-server-git'"
    )]
    Init(InitArgs),
    /// Convert another gateway's configuration into a Warden config.
    #[command(
        after_help = "Examples:\n  warden import mcp2 ~/.config/mcp2/config.yaml -o warden.yaml\n  warden import mcptools --merge -o warden.yaml git-tools.json\n  warden import mcpmon gateway.yaml\n  warden import mcptools inventory/filesystem-tools.json inventory/filesystem-prompts.json\n  warden import sentinel security_policy.yaml -o policy.yaml\n  warden import ironcurtain compiled-policy.json tool-annotations.json --lists dynamic-lists.json --sandbox ~/.ironcurtain/sandbox --protected-path ~/.ironcurtain --allowed-domains git=github.com,*.github.com\n  warden import ironcurtain-servers src/config/mcp-servers.json --sandbox-policy enforce"
    )]
    Import(ImportArgs),
    /// Test a policy against a table of calls, or explain one decision.
    #[command(subcommand)]
    Policy(PolicyCommand),
    /// Check or follow the audit log.
    #[command(subcommand)]
    Audit(AuditCommand),
    /// Show and accept changed tool definitions (pins).
    #[command(subcommand)]
    Pins(PinsCommand),
    /// List, approve, deny or watch the escalated calls waiting in a running Warden.
    #[command(subcommand)]
    Approvals(ApprovalsCommand),
    /// Tell a running Warden what you asked the agent to do (for the auto-approver).
    #[command(subcommand)]
    Context(ContextCommand),
    /// What a running Warden is doing: its servers, sessions, tools and refusals.
    #[command(
        after_help = "Examples:\n  warden status --config warden.yaml\n  warden status --url http://127.0.0.1:8211 --token $WARDEN_APPROVAL_TOKEN\n\nReaches the Warden through its approval socket (or page), so it needs an `approval:` section.\nThe same overview is on the approval page's /dashboard."
    )]
    Status(StatusArgs),
    /// Print the JSON Schema of the config file, for editors.
    #[command(after_help = "Example:\n  warden schema > warden.schema.json")]
    Schema,
    /// What this machine supports for sandboxing servers.
    #[command(subcommand)]
    Sandbox(SandboxCommand),
}

/// `warden sandbox ...`.
#[derive(Debug, Subcommand)]
pub enum SandboxCommand {
    /// Report bwrap and its version, user namespaces, the Landlock ABI and seccomp, and each server's sandbox.
    #[command(after_help = "Examples:\n  warden sandbox check\n  warden sandbox check --config warden.yaml")]
    Check {
        /// Also show the sandbox of each server of this config (and use its `sandbox.bwrap`).
        #[arg(long, short, env = "WARDEN_CONFIG")]
        config: Option<PathBuf>,
    },
}

/// `warden validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// The config file.
    #[command(flatten)]
    pub target: ConfigArgs,
    /// Also start the servers and report the tools, prompts and resources
    /// that two servers of a profile share, and which one the client gets.
    #[arg(long)]
    pub connect: bool,
}

/// A config file.
#[derive(Debug, Args)]
pub struct ConfigArgs {
    /// The configuration file (YAML, or JSON if it ends in .json); default
    /// `$WARDEN_CONFIG`, else `~/.config/warden/warden.yaml`.
    #[arg(long, short, env = "WARDEN_CONFIG", default_value_os_t = default_config())]
    pub config: PathBuf,
}

/// `$XDG_CONFIG_HOME/warden/warden.yaml`, else `~/.config/warden/warden.yaml`
/// (where `warden.yaml` is looked for when neither `--config` nor
/// `WARDEN_CONFIG` names a file).
pub fn default_config() -> PathBuf {
    let base = match std::env::var_os("XDG_CONFIG_HOME").filter(|dir| !dir.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".config"),
    };
    base.join("warden").join("warden.yaml")
}

/// A config file and a profile.
#[derive(Debug, Args)]
pub struct ProfileArgs {
    /// The configuration file (YAML, or JSON if it ends in .json); default
    /// `$WARDEN_CONFIG`, else `~/.config/warden/warden.yaml`.
    #[arg(long, short, env = "WARDEN_CONFIG", default_value_os_t = default_config())]
    pub config: PathBuf,
    /// The profile (default: the config's defaultProfile).
    #[arg(long, short, env = "WARDEN_PROFILE")]
    pub profile: Option<String>,
}

/// `warden serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The config file and profile.
    #[command(flatten)]
    pub target: ProfileArgs,
    /// Serve MCP over HTTP on this address instead of stdio: a port alone
    /// (8210) means 127.0.0.1; or IP:PORT (port 0 picks one). Streamable HTTP
    /// at /mcp, HTTP+SSE (2024-11-05) at /sse.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,
    /// Let --http bind a non-loopback address with no auth.tokens configured:
    /// anyone who can reach the address can then use every tool.
    #[arg(long, requires = "http")]
    pub insecure_no_auth: bool,
}

/// `warden wrap`.
#[derive(Debug, Args)]
pub struct WrapArgs {
    /// A configuration file for everything but servers (naming, limits, supervision, profiles).
    #[arg(long, short)]
    pub config: Option<PathBuf>,
    /// The profile (default: the config's defaultProfile); its rules for the server named by --name apply.
    #[arg(long, short)]
    pub profile: Option<String>,
    /// The server's name (default: the command's file name).
    #[arg(long)]
    pub name: Option<String>,
    /// Restart the server when files under PATH change (a file, a directory
    /// or a glob; repeatable). VCS, dependency, cache and build directories
    /// are ignored.
    #[arg(long, value_name = "PATH")]
    pub watch: Vec<String>,
    /// With --watch: only changes to files with these extensions count.
    #[arg(long, value_name = "EXT", value_delimiter = ',', requires = "watch")]
    pub ext: Vec<String>,
    /// Run the server in an OS sandbox: `--sandbox` alone is the restrictive
    /// default (or the config's `sandbox.default`); `--sandbox=FILE` reads the
    /// settings (the shape of a server's `sandbox:`) from a YAML or JSON file.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "default", value_name = "PROFILE")]
    pub sandbox: Option<String>,
    /// The server's command and its arguments, after `--`.
    #[arg(required = true, last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// `warden effective`.
#[derive(Debug, Args)]
pub struct EffectiveArgs {
    /// The config file and profile.
    #[command(flatten)]
    pub target: ProfileArgs,
    /// Only this server.
    #[arg(long, short)]
    pub server: Option<String>,
    /// Show the rules only, without starting the servers.
    #[arg(long)]
    pub offline: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `warden call`.
#[derive(Debug, Args)]
pub struct CallArgs {
    /// The configuration file (YAML, or JSON if it ends in .json).
    #[arg(long, short, env = "WARDEN_CONFIG", required_unless_present = "url", conflicts_with = "url")]
    pub config: Option<PathBuf>,
    /// The profile (default: the config's defaultProfile, or the token's default over --url).
    #[arg(long, short, env = "WARDEN_PROFILE")]
    pub profile: Option<String>,
    /// Talk to a running Warden over HTTP (e.g. http://127.0.0.1:8210/mcp) instead of starting the servers.
    #[arg(long)]
    pub url: Option<String>,
    /// The bearer token for --url (better given in the environment).
    #[arg(long, env = "WARDEN_TOKEN", hide_env_values = true, requires = "url")]
    pub token: Option<String>,
    /// What to call.
    #[command(subcommand)]
    pub what: CallTarget,
}

/// What `warden call` calls.
#[derive(Debug, Subcommand)]
pub enum CallTarget {
    /// Call a tool by the name the client sees (e.g. `files__read_file`).
    Tool {
        /// The tool's name.
        name: String,
        /// Its arguments, a JSON object.
        #[arg(long, default_value = "{}")]
        args: String,
    },
    /// Get a prompt by the name the client sees.
    Prompt {
        /// The prompt's name.
        name: String,
        /// Its arguments, a JSON object of strings.
        #[arg(long, default_value = "{}")]
        args: String,
    },
    /// Read a resource.
    Resource {
        /// The resource's URI.
        uri: String,
    },
}

/// `warden init`.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// Servers as `NAME=COMMAND ARGS...` (the command is split like a shell would).
    #[arg(required = true, value_name = "NAME=COMMAND")]
    pub servers: Vec<String>,
    /// Start from a shipped policy (repeatable): protect-secrets,
    /// sql-approval, shell-approval, fetch-approval.
    #[arg(long, value_name = "NAME")]
    pub preset: Vec<String>,
    /// Write the config here instead of stdout.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
}

/// The formats `warden import` reads.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ImportFormat {
    /// mcpmon's gateway YAML.
    Mcpmon,
    /// An mcp2 config (YAML or JSON).
    Mcp2,
    /// f/mcptools JSON inventories (`NAME=FILE` or files named `<server>-tools.json`).
    Mcptools,
    /// An MCP Sentinel policy YAML (its rule list).
    Sentinel,
    /// IronCurtain's compiled-policy.json (or its per-server ones) and tool-annotations.json, last (with or without sideEffects).
    Ironcurtain,
    /// IronCurtain's mcp-servers.json: its servers with their OS sandboxes.
    IroncurtainServers,
}

/// `warden import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The format of the input.
    #[arg(value_enum)]
    pub format: ImportFormat,
    /// The input files.
    #[arg(required = true)]
    pub files: Vec<String>,
    /// Write the config here instead of stdout.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    /// Add the import to an existing config (the `-o` file, else
    /// `$WARDEN_CONFIG`, else `~/.config/warden/warden.yaml`) instead of
    /// writing a new one; the old file is kept as `<file>.bak`.
    #[arg(long)]
    pub merge: bool,
    /// With --merge: where the import defines a server, profile entry,
    /// rule or setting differently from the config, take the import's (in
    /// place) instead of refusing.
    #[arg(long, requires = "merge")]
    pub replace: bool,
    /// ironcurtain: the sandbox directory.
    #[arg(long)]
    pub sandbox: Option<String>,
    /// ironcurtain: a protected path (repeatable).
    #[arg(long = "protected-path")]
    pub protected_paths: Vec<String>,
    /// ironcurtain: `SERVER=PATTERN,PATTERN` domains a server's URLs may reach (repeatable).
    #[arg(long = "allowed-domains")]
    pub allowed_domains: Vec<String>,
    /// ironcurtain: a trusted server (repeatable).
    #[arg(long = "trusted-server")]
    pub trusted_servers: Vec<String>,
    /// ironcurtain: the dynamic lists file.
    #[arg(long)]
    pub lists: Option<PathBuf>,
    /// ironcurtain-servers: IronCurtain's sandboxPolicy, `enforce` or `warn` (its default).
    #[arg(long, value_name = "enforce|warn")]
    pub sandbox_policy: Option<String>,
}

/// `warden pins ...`.
#[derive(Debug, Subcommand)]
pub enum PinsCommand {
    /// Pinned tools per server, and the changes waiting for a person, with their diffs.
    #[command(after_help = "Example:\n  warden pins list --config warden.yaml")]
    List(ConfigArgs),
    /// Accept changed definitions (all, a server's, or one tool's) after showing their diffs.
    #[command(
        after_help = "Examples:\n  warden pins accept --config warden.yaml files\n  warden pins accept --config warden.yaml files read_file"
    )]
    Accept {
        /// The config file (its `pins.stateDir`).
        #[command(flatten)]
        config: ConfigArgs,
        /// Only this server.
        server: Option<String>,
        /// Only this tool of the server.
        tool: Option<String>,
    },
}

/// `warden audit ...`.
#[derive(Debug, Subcommand)]
pub enum AuditCommand {
    /// Check the hash chain; exit 1 and name the first broken record if it was tampered with.
    #[command(after_help = "Example:\n  warden audit verify ~/.local/state/warden/audit.jsonl")]
    Verify {
        /// The audit log.
        file: PathBuf,
    },
    /// Print records, filtered, and with --follow keep printing new ones.
    #[command(
        after_help = "Examples:\n  warden audit tail audit.jsonl --decision deny\n  warden audit tail audit.jsonl --follow --server db --tool query"
    )]
    Tail {
        /// The audit log.
        file: PathBuf,
        /// Keep printing records as they are written.
        #[arg(long, short)]
        follow: bool,
        /// Only this verdict: allow, deny or escalate.
        #[arg(long)]
        decision: Option<String>,
        /// Only this server.
        #[arg(long)]
        server: Option<String>,
        /// Only this tool (or prompt, or resource).
        #[arg(long)]
        tool: Option<String>,
    },
    /// Search the log and its rotated files: a time range, a server, a tool, a decision, a rule, a client.
    #[command(
        after_help = "Examples:\n  warden audit query audit.jsonl --since 2h --decision deny\n  warden audit query audit.jsonl --since 2026-05-01 --until 2026-05-02 --server db --rule no-drop --json\n  warden audit query audit.jsonl --client claude-code --limit 20"
    )]
    Query {
        /// The audit log (its rotated files, FILE.1 ..., are read too).
        file: PathBuf,
        /// Records from this time on: RFC 3339 (2026-05-01T09:30:00Z, 2026-05-01) or a duration back (90m, 2h, 7d).
        #[arg(long)]
        since: Option<String>,
        /// Records before this time (same forms).
        #[arg(long)]
        until: Option<String>,
        /// Only this server.
        #[arg(long)]
        server: Option<String>,
        /// Only this tool (or prompt, or resource).
        #[arg(long)]
        tool: Option<String>,
        /// Only this verdict: allow, deny or escalate.
        #[arg(long)]
        decision: Option<String>,
        /// Only decisions by this rule.
        #[arg(long)]
        rule: Option<String>,
        /// Only this client: a part of the name it gave (claude-code), or the name of its token.
        #[arg(long)]
        client: Option<String>,
        /// The most recent N records only.
        #[arg(long, value_name = "N")]
        limit: Option<usize>,
        /// The records as they are in the log (JSON lines, redacted arguments and results included), not a table.
        #[arg(long)]
        json: bool,
    },
}

/// `warden policy ...`.
#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// Run a table of calls with expected decisions; exit 1 and list every mismatch.
    #[command(
        after_help = "Example:\n  warden policy test --config warden.yaml cases.yaml\n\ncases.yaml:\n  cases:\n    - {name: bounded select, server: db, tool: query, arguments: {sql: \"SELECT * FROM t LIMIT 5\"}, expect: allow}\n    - {server: db, tool: query, arguments: {sql: \"SELECT * FROM t\"}, expect: deny, rule: no-unbounded-select}\n\nIronCurtain test scenario files (scenarios: [...]) are read too."
    )]
    Test {
        /// The config file and profile (cases may name their own profile).
        #[command(flatten)]
        target: ProfileArgs,
        /// The cases file (YAML or JSON).
        cases: PathBuf,
    },
    /// Show which check or rule decides a call, and why.
    #[command(
        after_help = "Example:\n  warden policy explain --config warden.yaml db query --args '{\"sql\":\"DELETE FROM users\"}'"
    )]
    Explain {
        /// The config file and profile.
        #[command(flatten)]
        target: ProfileArgs,
        /// The server.
        server: String,
        /// The tool, as the server names it.
        tool: String,
        /// The arguments, a JSON object.
        #[arg(long, default_value = "{}")]
        args: String,
    },
}

/// How to reach a running Warden's control socket.
#[derive(Debug, Args, Clone)]
pub struct SocketArgs {
    /// The control socket (default: `approval.socket` of --config, else
    /// `approvals.sock` in the state directory).
    #[arg(long, env = "WARDEN_APPROVALS_SOCKET")]
    pub socket: Option<PathBuf>,
    /// The running Warden's config file, to find its socket.
    #[arg(long, short = 'c')]
    pub config: Option<PathBuf>,
    /// A remote Warden's approval page instead of the socket (`http://host:8211`).
    #[arg(long, conflicts_with = "socket")]
    pub url: Option<String>,
    /// The approval page's token, with --url.
    #[arg(long, env = "WARDEN_APPROVAL_TOKEN", requires = "url", hide_env_values = true)]
    pub token: Option<String>,
}

/// `warden status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Where the running Warden is.
    #[command(flatten)]
    pub socket: SocketArgs,
    /// Print the status as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `warden approvals ...`.
#[derive(Debug, Subcommand)]
pub enum ApprovalsCommand {
    /// The pending approvals (and, with --all, recent decisions).
    #[command(after_help = "Example:\n  warden approvals list --config warden.yaml")]
    List {
        /// Where the running Warden listens.
        #[command(flatten)]
        socket: SocketArgs,
        /// Recent decisions too.
        #[arg(long)]
        all: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Show secret-like spans instead of their markers.
        #[arg(long)]
        reveal: bool,
    },
    /// Approve one waiting call (its id, or the first 8 characters of it).
    #[command(
        after_help = "Examples:\n  warden approvals approve 3f2a9c1e\n  warden approvals approve 3f2a9c1e --remember   # and calls like it in that session\n  warden approvals approve 3f2a9c1e --remember --pattern 'sql=DROP TABLE tmp_*'"
    )]
    Approve {
        /// Where the running Warden listens.
        #[command(flatten)]
        socket: SocketArgs,
        /// The approval's id.
        id: String,
        /// Also approve calls like it for the rest of the session, until
        /// revoked: same tool and escalating rule, resources within what it
        /// names, other arguments exactly the same (`list` shows the scope).
        #[arg(long)]
        remember: bool,
        /// With --remember: widen string argument NAME to GLOB (`*` any
        /// text, `?` one character, `\\` escapes); the approved value must
        /// match it. Repeatable.
        #[arg(long = "pattern", value_name = "NAME=GLOB", requires = "remember", value_parser = name_and_glob)]
        patterns: Vec<(String, String)>,
    },
    /// End a session whitelist entry (ids are shown by `list`).
    #[command(after_help = "Example:\n  warden approvals revoke 7c1d2e3f")]
    Revoke {
        /// Where the running Warden listens.
        #[command(flatten)]
        socket: SocketArgs,
        /// The entry's id.
        grant: String,
    },
    /// Deny one waiting call.
    #[command(after_help = "Example:\n  warden approvals deny 3f2a9c1e --reason 'not on production'")]
    Deny {
        /// Where the running Warden listens.
        #[command(flatten)]
        socket: SocketArgs,
        /// The approval's id.
        id: String,
        /// Why, for the model.
        #[arg(long)]
        reason: Option<String>,
    },
    /// Open the approval page in the browser, already logged in (a one-time
    /// link, good for a minute, traded for the session cookie).
    #[command(
        after_help = "Examples:\n  warden approvals open\n  warden approvals open --print   # just print the link"
    )]
    Open {
        /// Where the running Warden listens.
        #[command(flatten)]
        socket: SocketArgs,
        /// Print the link instead of opening a browser.
        #[arg(long)]
        print: bool,
    },
    /// Show each waiting call as it arrives and ask y/N.
    #[command(after_help = "Example:\n  warden approvals watch --config warden.yaml")]
    Watch {
        /// Where the running Warden listens.
        #[command(flatten)]
        socket: SocketArgs,
    },
}

/// `warden context ...`.
#[derive(Debug, Subcommand)]
pub enum ContextCommand {
    /// Record the user's latest request; `-` reads it from stdin (a Claude Code
    /// UserPromptSubmit hook passes JSON with a `prompt` field there).
    #[command(
        after_help = "Examples:\n  warden context set \"drop the staging table\"\n  echo '{\"prompt\":\"...\"}' | warden context set - --source claude-code-hook"
    )]
    Set {
        /// Where the running Warden listens.
        #[command(flatten)]
        socket: SocketArgs,
        /// The request, or `-` for stdin.
        message: String,
        /// Who delivers it (recorded in the audit).
        #[arg(long, default_value = "cli")]
        source: String,
    },
}

/// `NAME=GLOB`, for `approve --pattern`.
fn name_and_glob(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((name, glob)) if !name.is_empty() => Ok((name.to_owned(), glob.to_owned())),
        _ => Err(format!("expected NAME=GLOB, e.g. 'sql=DROP TABLE tmp_*', not {text:?}")),
    }
}
