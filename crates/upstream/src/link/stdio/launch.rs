//! What process to start for a stdio upstream: the configured command, or
//! the same command inside its sandbox (see the `warden-sandbox` crate).

use std::os::fd::OwnedFd;
use std::path::PathBuf;

use warden_config::ServerSandbox;
use warden_sandbox::SandboxReport;
use warden_sandbox::launch::{self, Launch};
use warden_sandbox::plan::Plan;

/// A command ready to start.
pub(crate) struct Prepared {
    /// The program.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// Environment variables set on top of Warden's, or (`clear_env`) its whole environment.
    pub env: Vec<(String, String)>,
    /// Start from an empty environment.
    pub clear_env: bool,
    /// Its working directory.
    pub cwd: Option<PathBuf>,
    /// Descriptors `args` name, passed on to the process alone (see
    /// [`warden_sandbox::launch::Prepared::fds`]).
    pub fds: Vec<OwnedFd>,
    /// Sandboxed: its errors caused by the sandbox are marked, and reported
    /// here.
    pub sandboxed: Option<SandboxReport>,
    /// The sandbox's egress proxy and cgroup, kept as long as the process runs.
    pub proxy: Option<launch::Held>,
}

/// Prepares `command` with `args`, `env` and `cwd`, sandboxed by `sandbox`
/// if given; how it is started, and what its sandbox refuses, goes to
/// `report`. Fails when a sandbox in `enforce` mode cannot be set up.
pub(crate) fn prepare(
    name: &str,
    sandbox: Option<&ServerSandbox>,
    report: &SandboxReport,
    command: &str,
    args: &[String],
    env: Vec<(String, String)>,
    cwd: Option<&std::path::Path>,
) -> Result<Prepared, String> {
    let plain = |env| Prepared {
        program: command.into(),
        args: args.to_vec(),
        env,
        clear_env: false,
        cwd: cwd.map(Into::into),
        fds: Vec::new(),
        sandboxed: None,
        proxy: None,
    };
    let Some(sandbox) = sandbox else { return Ok(plain(env)) };
    let plan = Plan::resolve(name, sandbox).map_err(|err| format!("server '{name}': {err}"))?;
    // Warden itself, re-executed inside the sandbox as its launcher.
    let init = std::env::current_exe().map_err(|err| format!("cannot find Warden's own program: {err}"))?;
    let command = launch::Command { program: command, args, env: env.clone(), cwd };
    match launch::prepare(&plan, command, &init, report).map_err(|err| err.to_string())? {
        Launch::Sandboxed(prepared) => {
            match &prepared.warning {
                None => {
                    tracing::info!(server = name, "sandboxed: {}", prepared.confinement);
                    report.launched(name, format!("sandboxed: {}", prepared.confinement));
                }
                Some(warning) => {
                    tracing::warn!(server = name, "sandboxed, but {warning}");
                    report.launched(name, format!("sandboxed, but {warning}"));
                }
            }
            Ok(Prepared {
                program: prepared.program,
                args: prepared.args,
                env: prepared.env,
                clear_env: true,
                cwd: prepared.cwd,
                fds: prepared.fds,
                sandboxed: Some(report.clone()),
                proxy: Some(prepared.held),
            })
        }
        Launch::Unsandboxed { warning } => {
            tracing::warn!(server = name, "{warning}");
            report.launched(name, format!("UNSANDBOXED: {warning}"));
            report.unsandboxed(name, &warning);
            Ok(plain(env))
        }
    }
}
