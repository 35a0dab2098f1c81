//! Turning a server's command into a sandboxed one: the `bwrap` argv, or the
//! Landlock-only launcher, the environment, and the server's egress proxy.
//!
//! Denied paths inside allowed ones: bwrap binds the allowed directory whole
//! and masks each denied path over it (a mode-000 tmpfs, `/dev/null`), a
//! few arguments whatever the directory holds (bwrap also stops at 9,000
//! arguments). Landlock can only allow, so its rules are carved instead
//! ([`crate::paths::carve`]): one rule per sibling of a denied path. That
//! stays, in both mechanisms: without bwrap it is the only filesystem
//! confinement, and under bwrap it also hides a denied path created after
//! the launch (masks cover what existed then). The rules are system calls
//! made inside, and the carved plan reaches `sandbox-init` through a sealed
//! memory file, as do bwrap's options (`--args`), so no directory's size
//! can make exec fail with E2BIG.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use warden_config::{SandboxMechanism, SandboxMode};

use crate::SandboxError;
use crate::check::{Support, which};
use crate::init::InitPlan;
use crate::plan::{ETC_SECRETS, Plan, SYSTEM_READ};
use crate::proxy::Proxy;
use crate::report::SandboxReport;

pub use crate::fd::inherit;

/// The loopback port the in-sandbox forwarder listens on.
pub const PROXY_PORT: u16 = 3128;
/// Where the proxy's socket appears inside a `bwrap` sandbox.
pub const PROXY_SOCKET: &str = "/run/warden/proxy.sock";

/// The command as configured.
#[derive(Debug, Clone)]
pub struct Command<'a> {
    /// The program (looked up in `PATH`).
    pub program: &'a str,
    /// Its arguments.
    pub args: &'a [String],
    /// The transport's `env` (secrets for this server only).
    pub env: Vec<(String, String)>,
    /// Its working directory.
    pub cwd: Option<&'a Path>,
}

/// What to start instead: a program, its arguments, the complete
/// environment (nothing is inherited) and what must live as long as it.
#[derive(Debug)]
pub struct Prepared {
    /// The program to run.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// Its whole environment.
    pub env: Vec<(String, String)>,
    /// Its working directory.
    pub cwd: Option<PathBuf>,
    /// Descriptors `args` name, read at startup (bwrap's options, the
    /// sandbox plan). They are close-on-exec: the spawner passes exactly
    /// these on by calling [`inherit`] for each between fork and exec, and
    /// drops them once the process has started.
    pub fds: Vec<OwnedFd>,
    /// What must live as long as the server: its egress proxy (stopped
    /// when dropped) and its cgroup (removed).
    pub held: Held,
    /// How it is confined, for logs and status.
    pub confinement: String,
    /// Set when it is confined less than asked (`mechanism: auto` fell back
    /// to Landlock only): to be logged as a warning and shown in `/status`.
    pub warning: Option<String>,
}

/// What a sandboxed server's process needs while it runs.
#[derive(Debug, Default)]
pub struct Held {
    /// Its egress proxy.
    pub proxy: Option<Proxy>,
    /// Its cgroup.
    pub cgroup: Option<crate::limits::Cgroup>,
}

/// How a server ends up being started.
#[derive(Debug)]
pub enum Launch {
    /// Sandboxed.
    Sandboxed(Prepared),
    /// Not sandboxed, because the sandbox could not be set up and the mode
    /// is `warn`: start it as configured, and say so.
    Unsandboxed {
        /// Why.
        warning: String,
    },
}

/// Prepares `command` to run under `plan`, with `init` (Warden's own binary)
/// as the in-sandbox launcher; its egress proxy's refusals go to `report`.
/// In `enforce` mode any failure is an error; in `warn` mode it becomes
/// [`Launch::Unsandboxed`].
pub fn prepare(plan: &Plan, command: Command<'_>, init: &Path, report: &SandboxReport) -> Result<Launch, SandboxError> {
    match try_prepare(plan, command, init, report) {
        Ok(prepared) => Ok(Launch::Sandboxed(prepared)),
        Err(err) if plan.mode == SandboxMode::Warn => Ok(Launch::Unsandboxed {
            warning: format!("server '{}' runs WITHOUT its sandbox (mode: warn): {err}", plan.server),
        }),
        Err(err) => Err(SandboxError::Unsupported(format!(
            "server '{}' was not started because its sandbox cannot be set up (mode: enforce): {err}",
            plan.server
        ))),
    }
}

/// What Landlock and seccomp alone contain, and what they cannot hide
/// without namespaces: said in the log, `/status`, `warden effective` and
/// `warden sandbox check` whenever a server runs that way.
pub const LANDLOCK_ONLY: &str = "landlock+seccomp (no user namespaces): no network; contained: files (Landlock), sockets of every family (seccomp), /dev/shm and System V IPC (refused); NOT contained: every host process and its command line is visible in /proc, the host's hostname and network interfaces are visible, and the server shares Warden's PID, mount and network namespaces";

/// Which mechanism this machine and the settings allow.
enum Mechanism {
    /// `bwrap`, and whether it knows `--disable-userns` (0.8.0 and later).
    Bwrap(PathBuf, bool),
    /// Landlock and seccomp; with why bwrap was not used when `auto` fell back.
    LandlockOnly(Option<String>),
}

/// How `plan` would be started on this machine, in one line, naming a
/// fallback loudly (for `warden sandbox check` and `warden effective`).
pub fn expected(plan: &Plan) -> String {
    match choose(plan) {
        Ok(Mechanism::Bwrap(..)) => "bwrap+landlock+seccomp".into(),
        Ok(Mechanism::LandlockOnly(None)) => LANDLOCK_ONLY.into(),
        Ok(Mechanism::LandlockOnly(Some(why))) => fallback_warning(&why),
        Err(err) if plan.mode == SandboxMode::Warn => format!("UNSANDBOXED (mode: warn): {err}"),
        Err(err) => format!("WILL NOT START (mode: enforce): {err}"),
    }
}

fn fallback_warning(why: &str) -> String {
    format!("WARNING: mechanism auto FELL BACK to Landlock and seccomp only because {why}: {LANDLOCK_ONLY}")
}

fn choose(plan: &Plan) -> Result<Mechanism, SandboxError> {
    if !cfg!(target_os = "linux") {
        return Err(SandboxError::Unsupported(
            "OS sandboxes are only supported on Linux (bubblewrap, Landlock, seccomp)".into(),
        ));
    }
    let support = Support::cached(plan.bwrap.as_deref());
    let landlock_only = || {
        if plan.network.is_some() {
            return Err(SandboxError::Unsupported(
                "a network allowlist needs user namespaces (bwrap) to be enforced; with Landlock alone only `network: {allow: []}` (no network) is possible".into(),
            ));
        }
        if support.landlock_abi == 0 || !support.seccomp {
            return Err(SandboxError::Unsupported("Landlock and seccomp are not available on this kernel".into()));
        }
        Ok(Mechanism::LandlockOnly(None))
    };
    let bwrap = || match (&support.bwrap, &support.user_namespaces) {
        (Ok((path, version)), Ok(())) => Ok(Mechanism::Bwrap(path.clone(), disables_userns(version))),
        (Err(why), _) => Err(SandboxError::Unsupported(format!("bwrap is unavailable: {why}"))),
        (_, Err(why)) => Err(SandboxError::Unsupported(format!("bwrap cannot create user namespaces: {why}"))),
    };
    match plan.mechanism {
        SandboxMechanism::Bwrap => bwrap(),
        SandboxMechanism::Landlock => landlock_only(),
        SandboxMechanism::Auto => bwrap().or_else(|bwrap_err| match landlock_only() {
            Ok(_) => Ok(Mechanism::LandlockOnly(Some(bwrap_err.to_string()))),
            Err(err) => Err(SandboxError::Unsupported(format!("{bwrap_err}; and {err}"))),
        }),
    }
}

/// `plan` with every path as it really is (links resolved), and the readable
/// and writable ones that really lie in a denied place left out. A server
/// that may write a directory could have replaced a configured path inside
/// it with a link (`out -> ~/.ssh`): neither bwrap's binds nor Landlock's
/// rules may follow it at the next start.
fn without_links(plan: &Plan) -> Plan {
    let real = |path: &PathBuf| path.canonicalize().unwrap_or_else(|_| path.clone());
    let mut resolved = plan.clone();
    resolved.deny = plan.deny.iter().flat_map(|path| [path.clone(), real(path)]).collect();
    resolved.deny.dedup();
    let allowed = |path: &PathBuf| !resolved.deny.iter().any(|denied| path.starts_with(denied));
    resolved.read = plan.read.iter().map(real).filter(allowed).collect();
    resolved.write = plan.write.iter().map(real).filter(allowed).collect();
    resolved.state_dir = real(&plan.state_dir);
    resolved
}

/// Makes `dir` a real directory Warden's user owns: a link (or file) the
/// server planted there is removed, never followed.
fn real_dir(dir: &Path) -> Result<(), SandboxError> {
    let failed = |err| SandboxError::io(format!("cannot create {}", dir.display()), err);
    match std::fs::symlink_metadata(dir) {
        Ok(meta) if meta.is_dir() => return Ok(()),
        Ok(_) => std::fs::remove_file(dir).map_err(failed)?,
        Err(_) => {}
    }
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent).map_err(failed)?;
    }
    std::fs::create_dir(dir).map_err(failed)
}

fn try_prepare(
    plan: &Plan,
    command: Command<'_>,
    init: &Path,
    report: &SandboxReport,
) -> Result<Prepared, SandboxError> {
    let mechanism = choose(plan)?;
    real_dir(&plan.state_dir)?;
    let plan = &without_links(plan);
    let mut deny_extra: Vec<PathBuf> = Vec::new();
    let found = which(command.program)
        .ok_or_else(|| SandboxError::Unsupported(format!("program '{}' not found in PATH", command.program)))?;
    // A relative program (`./server`) must not depend on the cwd inside.
    let found = std::path::absolute(&found).unwrap_or(found);
    let program = found.canonicalize().unwrap_or_else(|_| found.clone());
    let bwrap = matches!(mechanism, Mechanism::Bwrap(..));
    if !bwrap {
        // What namespaces would hide and Landlock alone cannot: shared memory.
        deny_extra.extend(["/dev/shm", "/dev/mqueue"].map(PathBuf::from));
    }
    let tmp = if bwrap { PathBuf::from("/tmp") } else { plan.state_dir.join("tmp") };
    if !bwrap {
        real_dir(&tmp)?;
    }
    // As unsandboxed: the configured cwd, else Warden's own when the
    // sandbox shows it (relative paths in arguments keep working), else the
    // state directory.
    let visible = |dir: &Path| {
        plan.read.iter().chain(&plan.write).any(|shown| dir.starts_with(shown))
            && !plan.deny.iter().any(|denied| dir.starts_with(denied))
    };
    let own_dir = std::env::current_dir().ok().filter(|dir| shareable(dir));
    let cwd = match command.cwd {
        // Where it really is: the sandbox shows paths there (links resolved).
        Some(cwd) => cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf()),
        None => std::env::current_dir()
            .ok()
            .filter(|dir| visible(dir) || own_dir.as_ref() == Some(dir))
            .unwrap_or_else(|| plan.state_dir.clone()),
    };
    let env = environment(plan, command.env, &tmp);

    // What the server may read, besides the system: its program (or its
    // runtime's prefix), Warden's launcher, the policy's paths, its cwd.
    // Both where PATH found it and what that links to: `npx` is a link
    // into npm's package, and node sits beside the link.
    let mut read = vec![runtime_prefix(&found), runtime_prefix(&program), init.to_path_buf()];
    read.dedup();
    read.extend(plan.read.iter().cloned());
    if command.cwd.is_some() {
        read.push(cwd.clone());
    }
    // The command's own files, read-only: Warden's working directory (unless
    // it is the home directory or above it), and every argument naming a
    // file, with its directory on the same terms (`python server.py`
    // imports its neighbours).
    read.extend(own_dir.clone());
    for arg in command.args {
        let named = cwd.join(arg);
        if let Ok(file) = named.canonicalize()
            && file.is_file()
        {
            read.extend(file.parent().filter(|dir| shareable(dir)).map(Path::to_path_buf));
            read.push(file);
        }
    }
    read.retain(|path| !plan.deny.iter().any(|denied| path.starts_with(denied)));
    let mut landlock_read: Vec<PathBuf> = SYSTEM_READ.iter().chain(&["/dev", "/proc"]).map(PathBuf::from).collect();
    landlock_read.extend(read.iter().cloned());
    let mut landlock_write = plan.write.clone();
    landlock_write.push(PathBuf::from("/dev/null"));
    if !bwrap {
        landlock_write.push(tmp.clone());
    }
    let mut deny = plan.deny.clone();
    deny.extend(ETC_SECRETS.iter().map(PathBuf::from));
    deny.extend(deny_extra);
    let mut write_rules = crate::paths::carve(&landlock_write, &deny);
    if bwrap {
        // A private tmpfs: of the denied paths under the host's /tmp, only
        // those bound into the sandbox are there.
        let shown: Vec<&PathBuf> = read.iter().chain(&plan.write).collect();
        let bound: Vec<PathBuf> =
            deny.iter().filter(|denied| shown.iter().any(|path| denied.starts_with(path))).cloned().collect();
        write_rules.extend(crate::paths::carve(std::slice::from_ref(&tmp), &bound));
    }

    let applied = crate::limits::apply(&plan.server, &plan.limits);
    use std::os::fd::AsRawFd as _;
    let join: Vec<i32> = applied.join.iter().map(|fd| fd.as_raw_fd()).collect();
    let init_plan = InitPlan {
        read: crate::paths::carve(&landlock_read, &deny),
        write: write_rules,
        forward: plan.network.as_ref().map(|_| (PROXY_PORT, PathBuf::from(PROXY_SOCKET))),
        deny_inet: !bwrap,
        drop_capabilities: !bwrap,
        join,
        rlimits: applied.rlimits,
    };
    let mut fds = applied.join;
    let cgroup = applied.cgroup;
    let limits_text = applied.description;
    let plan_fd = crate::fd::sealed("warden-sandbox-plan", init_plan.encode().as_bytes())
        .map_err(|err| SandboxError::io("cannot hand the sandbox plan over", err))?;
    let mut init_args =
        vec!["sandbox-init".to_owned(), "--plan-fd".to_owned(), plan_fd.as_raw_fd().to_string(), "--".to_owned()];
    init_args.push(found.display().to_string());
    init_args.extend(command.args.iter().cloned());

    match mechanism {
        Mechanism::LandlockOnly(fallback) => Ok(Prepared {
            program: init.to_path_buf(),
            args: init_args,
            env,
            cwd: Some(cwd),
            fds: {
                fds.push(plan_fd);
                fds
            },
            held: Held { proxy: None, cgroup },
            confinement: format!("{LANDLOCK_ONLY}; {limits_text}"),
            warning: fallback.map(|why| fallback_warning(&why)),
        }),
        Mechanism::Bwrap(bwrap_path, disable_userns) => {
            let proxy = match &plan.network {
                Some(list) => {
                    let limits = crate::proxy::Limits {
                        header_timeout: std::time::Duration::from_secs(plan.limits.proxy_header_timeout_secs.max(1)),
                        idle_timeout: std::time::Duration::from_secs(plan.limits.proxy_idle_timeout_secs.max(1)),
                        max_connections: plan.limits.proxy_connections.max(1),
                    };
                    let socket = socket_path(&plan.server)?;
                    Some(Proxy::start_with(&plan.server, list.clone(), &socket, limits, report.clone())?)
                }
                None => None,
            };
            let mut args = bwrap_args(plan, &read, &cwd, proxy.as_ref().map(Proxy::socket));
            if !disable_userns {
                // Older bwrap cannot forbid nested user namespaces; seccomp
                // still refuses unshare(2) (clone(2) with CLONE_NEWUSER is not filtered).
                args.retain(|arg| arg != "--disable-userns");
                // Nor size a tmpfs (`--size` came with 0.8.0 too, as far as
                // Warden assumes): /tmp is then unlimited, like the state.
                if let Some(at) = args.iter().position(|arg| arg == "--size") {
                    args.drain(at..at + 2);
                }
            }
            for (key, value) in &env {
                args.extend(["--setenv".into(), key.clone(), value.clone()]);
            }
            // The options go through a descriptor (`--args`); the command
            // stays in argv, where bwrap expects it after `--`.
            let options = crate::fd::sealed("warden-bwrap-args", &nul_separated(&args)?)
                .map_err(|err| SandboxError::io("cannot hand bwrap its options", err))?;
            let mut args = vec!["--args".to_owned(), options.as_raw_fd().to_string(), "--".to_owned()];
            args.push(init.display().to_string());
            args.extend(init_args);
            let confinement = match &plan.network {
                Some(list) => {
                    format!(
                        "bwrap+landlock+seccomp; network through Warden's proxy: {}; {limits_text}",
                        list.describe()
                    )
                }
                None => format!("bwrap+landlock+seccomp; no network; {limits_text}"),
            };
            fds.extend([options, plan_fd]);
            let held = Held { proxy, cgroup };
            Ok(Prepared {
                program: bwrap_path,
                args,
                env: Vec::new(),
                cwd: None,
                fds,
                held,
                confinement,
                warning: None,
            })
        }
    }
}

/// `args` as bwrap's `--args` reads them: each followed by a NUL. An
/// argument holding a NUL would split into two, the second one an option
/// of its own choosing, so it is refused.
fn nul_separated(args: &[String]) -> Result<Vec<u8>, SandboxError> {
    let mut out = Vec::with_capacity(args.iter().map(|arg| arg.len() + 1).sum());
    for arg in args {
        if arg.contains('\0') {
            return Err(SandboxError::Invalid(format!("a NUL character in {arg:?}")));
        }
        out.extend_from_slice(arg.as_bytes());
        out.push(0);
    }
    Ok(out)
}

/// Whether `bwrap --version`'s `version` (`bubblewrap 0.8.0`) is 0.8.0 or
/// later, which added `--disable-userns`.
fn disables_userns(version: &str) -> bool {
    let numbers: Vec<u32> =
        version.rsplit(' ').next().unwrap_or_default().split('.').map_while(|part| part.parse().ok()).collect();
    matches!(numbers.as_slice(), [major, ..] if *major > 0)
        || matches!(numbers.as_slice(), [0, minor, ..] if *minor >= 8)
}

/// Whether directory `dir` may be shown to a server because its command
/// lives there: not `/`, not the home directory or one above it (that would
/// show the whole home).
fn shareable(dir: &Path) -> bool {
    let home = crate::paths::home();
    dir != Path::new("/") && !home.is_some_and(|home| home.starts_with(dir))
}

/// The environment: nothing of Warden's but `PATH` and what `env.pass`
/// names, then the transport's `env`, then `env.set`, then the proxy's.
fn environment(plan: &Plan, transport: Vec<(String, String)>, tmp: &Path) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = Vec::new();
    let mut set = |key: &str, value: String| {
        env.retain(|(existing, _)| existing != key);
        env.push((key.to_owned(), value));
    };
    set("PATH", std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".into()));
    set("HOME", plan.state_dir.display().to_string());
    set("TMPDIR", tmp.display().to_string());
    set("WARDEN_SANDBOX", "1".into());
    for name in &plan.env_pass {
        if let Ok(value) = std::env::var(name) {
            set(name, value);
        }
    }
    for (key, value) in transport.into_iter().chain(plan.env_set.iter().cloned()) {
        set(&key, value);
    }
    if plan.network.is_some() {
        let proxy = format!("http://127.0.0.1:{PROXY_PORT}");
        for key in ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"] {
            set(key, proxy.clone());
        }
        for key in ["NO_PROXY", "no_proxy"] {
            set(key, "localhost,127.0.0.1,::1".into());
        }
        // Node's fetch ignores the proxy variables without it.
        set("NODE_USE_ENV_PROXY", "1".into());
    }
    env
}

/// What must be visible for `program` to run: its runtime's prefix when it
/// lives in a `bin` directory (node, python, a venv), else the file itself.
fn runtime_prefix(program: &Path) -> PathBuf {
    let home = crate::paths::home();
    match program.parent() {
        Some(bin) if bin.file_name().is_some_and(|name| name == "bin") => match bin.parent() {
            Some(prefix) if prefix != Path::new("/") && Some(prefix) != home.as_deref() => prefix.to_path_buf(),
            _ => program.to_path_buf(),
        },
        _ => program.to_path_buf(),
    }
}

/// A fresh socket path for `server`'s proxy, in a directory only Warden's
/// user can enter.
fn socket_path(server: &str) -> Result<PathBuf, SandboxError> {
    use std::os::unix::fs::PermissionsExt;
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    let dir = std::env::temp_dir().join(format!("warden-sandbox-{uid}"));
    std::fs::create_dir_all(&dir).map_err(|err| SandboxError::io(format!("cannot create {}", dir.display()), err))?;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))
        .map_err(|err| SandboxError::io(format!("cannot restrict {}", dir.display()), err))?;
    let short: String = server.chars().filter(char::is_ascii_alphanumeric).take(24).collect();
    Ok(dir.join(format!("{short}-{}-{}.sock", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed))))
}

/// The system directories, read-only, as this machine has them (`/bin` a
/// link into `/usr` on merged systems, a directory elsewhere).
pub(crate) fn system_binds() -> Vec<String> {
    let mut args = Vec::new();
    for dir in SYSTEM_READ {
        let path = Path::new(dir);
        match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                if let Ok(target) = std::fs::read_link(path) {
                    args.extend(["--symlink".to_owned(), target.display().to_string(), (*dir).to_owned()]);
                }
            }
            Ok(_) => args.extend(["--ro-bind", dir, dir].map(String::from)),
            Err(_) => {}
        }
    }
    args
}

/// The `bwrap` options (before `--`): namespaces, the root built from an
/// allowlist, masks, the proxy socket.
fn bwrap_args(plan: &Plan, read: &[PathBuf], cwd: &Path, proxy: Option<&Path>) -> Vec<String> {
    let mut args: Vec<String> = [
        "--new-session",
        "--die-with-parent",
        "--unshare-user",
        "--disable-userns",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-net",
        "--unshare-cgroup-try",
        "--cap-drop",
        "ALL",
        "--clearenv",
        "--hostname",
        "sandbox",
    ]
    .map(String::from)
    .to_vec();
    args.extend(system_binds());
    let mut push = |items: &[&str]| args.extend(items.iter().map(|item| (*item).to_owned()));
    let tmp_size = plan.limits.tmp_mb.saturating_mul(1024 * 1024).max(1024 * 1024).to_string();
    push(&["--proc", "/proc", "--dev", "/dev", "--size", &tmp_size, "--tmpfs", "/tmp", "--tmpfs", "/run"]);
    for path in read {
        let path = path.display().to_string();
        push(&["--ro-bind-try", &path, &path]);
    }
    for path in &plan.write {
        let path = path.display().to_string();
        push(&["--bind-try", &path, &path]);
    }
    // Masks go last, over whatever bind exposed them.
    let visible: Vec<&PathBuf> = read.iter().chain(&plan.write).collect();
    let secrets = ETC_SECRETS.iter().map(PathBuf::from);
    for denied in plan.deny.iter().cloned().chain(secrets) {
        let exposed = denied.starts_with("/etc") || visible.iter().any(|shown| denied.starts_with(shown));
        let text = denied.display().to_string();
        match std::fs::metadata(&denied) {
            Ok(meta) if exposed && meta.is_dir() => push(&["--perms", "0", "--tmpfs", &text, "--remount-ro", &text]),
            Ok(_) if exposed => push(&["--ro-bind", "/dev/null", &text]),
            _ => {}
        }
    }
    if let Some(socket) = proxy {
        push(&["--bind", &socket.display().to_string(), PROXY_SOCKET]);
    }
    push(&["--chdir", &cwd.display().to_string()]);
    args
}

#[cfg(test)]
mod tests {
    use warden_config::{SandboxDefaults, SandboxPolicy, ServerSandbox};

    use super::*;

    #[test]
    fn the_root_is_built_from_an_allowlist_with_every_namespace_private() {
        let sandbox = ServerSandbox {
            policy: SandboxPolicy::default(),
            defaults: SandboxDefaults::default(),
            identity: String::new(),
        };
        let plan = Plan::resolve("fs", &sandbox).unwrap();
        let args = bwrap_args(&plan, &[PathBuf::from("/opt/project")], Path::new("/opt/project"), None);
        for pair in args.windows(3) {
            assert!(!(pair[0].contains("bind") && pair[1] == "/" && pair[2] == "/"), "binds / : {args:?}");
        }
        for flag in [
            "--unshare-user",
            "--unshare-net",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--clearenv",
            "--new-session",
            "--die-with-parent",
            "--disable-userns",
        ] {
            assert!(args.iter().any(|arg| arg == flag), "{flag} missing: {args:?}");
        }
        assert!(args.windows(2).any(|pair| pair[0] == "--cap-drop" && pair[1] == "ALL"));
        assert!(args.windows(3).any(|pair| pair[0] == "--ro-bind-try" && pair[1] == "/opt/project"));
        assert!(!args.iter().any(|arg| arg == "/home" || arg == "/run/user"));
    }

    /// Carving a directory of thousands of entries once put every one of
    /// them in argv, and exec failed with E2BIG: now argv stays small, the
    /// plan (carved) and bwrap's options (not carved) go through descriptors.
    #[test]
    fn a_crowded_allowed_directory_keeps_argv_small() {
        use std::io::Read;

        let dir = std::env::temp_dir().join(format!("warden-crowded-{}", std::process::id()));
        std::fs::create_dir_all(dir.join(".ssh")).unwrap();
        for index in 0..5_000 {
            std::fs::write(dir.join(format!("entry-{index:04}")), "").unwrap();
        }
        for mechanism in [SandboxMechanism::Landlock, SandboxMechanism::Bwrap] {
            let mut policy = SandboxPolicy::default();
            policy.filesystem.read = vec![dir.display().to_string()];
            policy.filesystem.deny = vec![dir.join(".ssh").display().to_string()];
            let defaults = SandboxDefaults {
                mechanism,
                state_dir: Some(dir.join("state").display().to_string()),
                ..SandboxDefaults::default()
            };
            let plan = Plan::resolve("crowded", &ServerSandbox { policy, defaults, identity: String::new() }).unwrap();
            let command = Command { program: "true", args: &[], env: Vec::new(), cwd: None };
            // Machines without this mechanism have nothing to check.
            let report = SandboxReport::default();
            let Ok(Launch::Sandboxed(prepared)) = prepare(&plan, command, Path::new("/usr/bin/env"), &report) else {
                continue;
            };
            let argv: usize = prepared.args.iter().map(|arg| arg.len() + 1).sum();
            assert!(argv < 4096, "{mechanism:?}: argv of {argv} bytes: {:?}", prepared.args);
            let mut contents = Vec::new();
            // The last two: bwrap's options (bwrap only) and the plan;
            // before them, the cgroup's (write-only) descriptors.
            let skip = prepared.fds.len().saturating_sub(if mechanism == SandboxMechanism::Bwrap { 2 } else { 1 });
            for fd in prepared.fds.into_iter().skip(skip) {
                let mut text = Vec::new();
                std::fs::File::from(fd).read_to_end(&mut text).unwrap();
                contents.push(text);
            }
            let init = crate::init::InitPlan::decode(contents.last().unwrap()).unwrap();
            assert!(init.read.contains(&dir.join("entry-4999")), "{mechanism:?}: the plan is carved");
            assert!(!init.read.iter().any(|path| path.starts_with(dir.join(".ssh")) || path == &dir));
            if mechanism == SandboxMechanism::Bwrap {
                let options = String::from_utf8(contents[0].clone()).unwrap();
                let options: Vec<&str> = options.split_terminator('\0').collect();
                let shown = dir.display().to_string();
                assert!(options.windows(3).any(|three| three == ["--ro-bind-try", &shown, &shown]), "{options:?}");
                assert!(!options.iter().any(|option| option.contains("entry-")), "bwrap binds the directory whole");
                assert!(options.len() < 500, "{} options", options.len());
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn bwrap_options_are_nul_separated_and_refuse_a_nul() {
        let args = ["--setenv".to_owned(), "KEY".to_owned(), "a value".to_owned()];
        assert_eq!(nul_separated(&args).unwrap(), b"--setenv\0KEY\0a value\0");
        let injected = ["--setenv".to_owned(), "KEY".to_owned(), "x\0--bind\0/\0/".to_owned()];
        assert!(matches!(nul_separated(&injected), Err(SandboxError::Invalid(_))));
    }

    #[test]
    fn disable_userns_needs_bwrap_0_8() {
        assert!(disables_userns("bubblewrap 0.8.0"));
        assert!(disables_userns("bubblewrap 0.11.1"));
        assert!(disables_userns("bubblewrap 1.0"));
        assert!(!disables_userns("bubblewrap 0.6.1"));
        assert!(!disables_userns("something else"));
    }

    #[test]
    fn the_environment_is_cleared_except_what_is_passed() {
        let mut policy = SandboxPolicy::default();
        policy.env.pass = vec!["PATH".into()];
        policy.env.set.insert("MODE".into(), "test".into());
        policy.network.allow = vec!["api.github.com:443".into()];
        let plan = Plan::resolve(
            "gh",
            &ServerSandbox { policy, defaults: SandboxDefaults::default(), identity: String::new() },
        )
        .unwrap();
        let env = environment(&plan, vec![("TOKEN".into(), "t".into())], Path::new("/tmp"));
        let keys: Vec<&str> = env.iter().map(|(key, _)| key.as_str()).collect();
        for key in ["PATH", "HOME", "TOKEN", "MODE", "HTTPS_PROXY", "https_proxy", "NO_PROXY", "NODE_USE_ENV_PROXY"] {
            assert!(keys.contains(&key), "{key} missing: {keys:?}");
        }
        assert!(!keys.contains(&"USER") && !keys.contains(&"SSH_AUTH_SOCK"), "{keys:?}");
    }
}
