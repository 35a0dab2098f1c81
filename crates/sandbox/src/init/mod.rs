//! The in-sandbox side: Warden re-executed as `warden sandbox-init`. It
//! starts the loopback forwarder to the proxy, drops what it can, applies
//! Landlock and seccomp to itself, then starts the server (which inherits
//! all of it) and waits for it. Confinement happens here, before the
//! server's `exec`, so nothing runs between `fork` and `exec`.

mod forward;
#[cfg(target_os = "linux")]
mod landlock;
#[cfg(target_os = "linux")]
mod seccomp;

/// What the seccomp filter refuses, for `warden sandbox check`.
#[cfg(target_os = "linux")]
pub use seccomp::SUMMARY as SECCOMP_SUMMARY;
/// What the seccomp filter refuses: none off Linux.
#[cfg(not(target_os = "linux"))]
pub const SECCOMP_SUMMARY: &str = "none (not Linux)";
/// The newest Landlock ABI Warden uses (older kernels get what they have).
pub const LANDLOCK_ABI_WANTED: i64 = 6;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// What the launcher tells `sandbox-init` to apply (paths as seen inside).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InitPlan {
    /// Readable (and executable) paths.
    pub read: Vec<PathBuf>,
    /// Writable paths.
    pub write: Vec<PathBuf>,
    /// Listen on this loopback port and forward to this Unix socket.
    pub forward: Option<(u16, PathBuf)>,
    /// Refuse new IPv4 and IPv6 sockets too (no network namespace).
    pub deny_inet: bool,
    /// Empty the capability bounding set (no user namespace did it).
    pub drop_capabilities: bool,
    /// Descriptors of `cgroup.procs` files to join, first thing.
    #[serde(default)]
    pub join: Vec<i32>,
    /// Resource limits for the server.
    #[serde(default)]
    pub rlimits: crate::limits::Rlimits,
}

impl InitPlan {
    /// As JSON, for the descriptor `sandbox-init --plan-fd` reads (a carved
    /// plan can be far longer than exec allows one argument to be).
    pub fn encode(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// From [`InitPlan::encode`]'s output.
    pub fn decode(text: &[u8]) -> Result<InitPlan, String> {
        serde_json::from_slice(text).map_err(|err| format!("bad sandbox plan: {err}"))
    }
}

const USAGE: &str = "usage: warden sandbox-init --plan-fd FD -- PROGRAM [ARGS...]";

/// Runs `sandbox-init`: `args` are `--plan-fd FD -- PROGRAM ARGS...`, the
/// plan being [`InitPlan::encode`]'s output in descriptor `FD`.
/// Returns the exit code to leave with; never returns while the server runs.
pub fn run(args: &[String]) -> i32 {
    match run_inner(args) {
        Ok(code) => code,
        Err(why) => {
            eprintln!("[SANDBOX BLOCKED] warden sandbox-init: {why}");
            126
        }
    }
}

fn run_inner(args: &[String]) -> Result<i32, String> {
    let [flag, fd, dashes, program, rest @ ..] = args else {
        return Err(USAGE.into());
    };
    if flag != "--plan-fd" || dashes != "--" {
        return Err(USAGE.into());
    }
    // Nothing of Warden's inside may be read by the server: not dumpable
    // means no ptrace attach and no /proc/PID/{mem,environ,fd} for a
    // process without CAP_SYS_PTRACE (and the sandbox has none).
    #[cfg(target_os = "linux")]
    set_not_dumpable()?;
    // Read and closed before anything starts: the server never inherits it.
    let plan = InitPlan::decode(&crate::fd::read_inherited(fd).map_err(|err| format!("cannot read the plan: {err}"))?)?;
    // In the server's cgroup and under its limits before anything else
    // starts (the forwarder's threads count too).
    #[cfg(target_os = "linux")]
    crate::limits::enter(&plan.join, &plan.rlimits)?;
    // The forwarder's threads start before the restrictions below, which
    // apply to this thread and what it starts: they keep their Unix socket.
    if let Some((port, socket)) = &plan.forward {
        forward::start(*port, socket.clone()).map_err(|err| format!("cannot start the proxy forwarder: {err}"))?;
    }
    confine(&plan)?;
    let status = std::process::Command::new(program)
        .args(rest)
        .status()
        .map_err(|err| format!("cannot start {program}: {err}"))?;
    use std::os::unix::process::ExitStatusExt;
    Ok(status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0)))
}

/// Applies the plan to this thread: no_new_privs, capabilities, Landlock, seccomp.
#[cfg(target_os = "linux")]
fn confine(plan: &InitPlan) -> Result<(), String> {
    set_no_new_privs()?;
    if plan.drop_capabilities {
        drop_bounding_set();
    }
    landlock::apply(&plan.read, &plan.write, plan.deny_inet)?;
    seccomp::apply(plan.deny_inet)
}

#[cfg(not(target_os = "linux"))]
fn confine(_plan: &InitPlan) -> Result<(), String> {
    Err("sandboxes are only supported on Linux".into())
}

#[cfg(target_os = "linux")]
fn set_not_dumpable() -> Result<(), String> {
    // SAFETY: prctl(PR_SET_DUMPABLE, 0) takes no pointers.
    if unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) } != 0 {
        return Err(format!("cannot make the launcher undumpable: {}", std::io::Error::last_os_error()));
    }
    Ok(())
}

#[cfg(target_os = "linux")]
fn set_no_new_privs() -> Result<(), String> {
    // SAFETY: prctl(PR_SET_NO_NEW_PRIVS, 1) takes no pointers.
    if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
        return Err(format!("cannot set no_new_privs: {}", std::io::Error::last_os_error()));
    }
    Ok(())
}

/// Clears the ambient capabilities and drops every capability from the
/// bounding set, so that a root server regains none when it executes a program.
#[cfg(target_os = "linux")]
fn drop_bounding_set() {
    // SAFETY: PR_CAP_AMBIENT_CLEAR_ALL takes no pointers.
    unsafe {
        libc::prctl(libc::PR_CAP_AMBIENT, libc::PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    }
    for capability in 0..64 {
        // SAFETY: PR_CAPBSET_DROP takes a capability number; unknown numbers
        // fail with EINVAL, which is ignored.
        unsafe {
            libc::prctl(libc::PR_CAPBSET_DROP, capability, 0, 0, 0);
        }
    }
}
