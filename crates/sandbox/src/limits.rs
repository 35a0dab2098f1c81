//! Resource limits of one sandboxed server: a cgroup of its own holding
//! its processes and memory when Warden can create one (cgroup v2, else
//! the v1 `pids` and `memory` hierarchies), and rlimits in any case.
//!
//! The server's launcher joins the cgroup through a descriptor of its
//! `cgroup.procs` that Warden opened (inside bwrap no cgroup file system is
//! visible), before anything of the server runs.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use warden_config::SandboxLimits;

const MIB: u64 = 1024 * 1024;

/// The rlimits `sandbox-init` sets before starting the server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rlimits {
    /// RLIMIT_NPROC (not enforced for root: the cgroup is what holds then).
    pub processes: u64,
    /// RLIMIT_DATA, in bytes, when no cgroup holds the memory.
    pub data: Option<u64>,
    /// RLIMIT_FSIZE, in bytes.
    pub file_size: u64,
    /// RLIMIT_NOFILE.
    pub open_files: u64,
}

/// A cgroup made for one server's processes, removed when dropped (once
/// they are gone).
#[derive(Debug)]
pub struct Cgroup {
    dirs: Vec<PathBuf>,
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        let mut dirs = std::mem::take(&mut self.dirs);
        dirs.retain(|dir| std::fs::remove_dir(dir).is_err() && dir.exists());
        if dirs.is_empty() {
            return;
        }
        // The processes may still be exiting: retry for a while, aside (and
        // if Warden exits first, its next start removes them).
        let _ = std::thread::Builder::new().name("cgroup-cleanup".into()).spawn(move || {
            for _ in 0..600 {
                if dirs.iter().all(|dir| std::fs::remove_dir(dir).is_ok() || !dir.exists()) {
                    return;
                }
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
        });
    }
}

/// What holds a server: the cgroup if one could be made (with the
/// `cgroup.procs` descriptors its launcher writes to), the rlimits, and a
/// description for `warden sandbox check` and `/status`.
#[derive(Debug)]
pub struct Applied {
    /// The cgroup, kept as long as the server runs.
    pub cgroup: Option<Cgroup>,
    /// Descriptors of the cgroup's `cgroup.procs`, opened for writing.
    pub join: Vec<OwnedFd>,
    /// The rlimits.
    pub rlimits: Rlimits,
    /// In one line.
    pub description: String,
}

/// Sets `limits` up for server `server`: a cgroup if possible, rlimits always.
pub fn apply(server: &str, limits: &SandboxLimits) -> Applied {
    let made = make_cgroup(server, limits);
    let rlimits = Rlimits {
        processes: limits.processes,
        data: if made.is_ok() { None } else { Some(limits.memory_mb.saturating_mul(MIB)) },
        file_size: limits.file_mb.saturating_mul(MIB),
        open_files: limits.open_files,
    };
    let common =
        format!("files up to {} MiB, {} open files, /tmp {} MiB", limits.file_mb, limits.open_files, limits.tmp_mb);
    match made {
        Ok((cgroup, join, kind)) => Applied {
            description: format!(
                "limits: {} processes and {} MiB of memory ({kind} cgroup), {common}",
                limits.processes, limits.memory_mb
            ),
            cgroup: Some(cgroup),
            join,
            rlimits,
        },
        Err(why) => Applied {
            description: format!(
                "limits: {} processes and {} MiB of data per process (rlimits; no cgroup: {why}; processes are not limited for root), {common}",
                limits.processes, limits.memory_mb
            ),
            cgroup: None,
            join: Vec::new(),
            rlimits,
        },
    }
}

/// How limits would be enforced on this machine, for `warden sandbox
/// check`: which cgroup Warden could create its servers' cgroups in (the
/// directory is writable), else rlimits only.
pub fn enforcement() -> String {
    let Ok(own) = std::fs::read_to_string("/proc/self/cgroup") else {
        return "rlimits only (no /proc/self/cgroup)".into();
    };
    let root = Path::new("/sys/fs/cgroup");
    let writable = |dir: &Path| {
        use std::os::unix::ffi::OsStrExt;
        let Ok(path) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else { return false };
        // SAFETY: access reads the NUL-terminated path it is given.
        unsafe { libc::access(path.as_ptr(), libc::W_OK) == 0 }
    };
    if root.join("cgroup.controllers").exists() {
        let parent =
            own.lines().find_map(|line| line.strip_prefix("0::")).map(|path| root.join(path.trim_start_matches('/')));
        return match parent {
            Some(dir) if writable(&dir) => {
                format!("cgroup v2 under {} (processes, memory), and rlimits", dir.display())
            }
            _ => "rlimits only (cgroup v2, but Warden's own cgroup is not writable: run it with Delegate=yes)".into(),
        };
    }
    let v1 = ["pids", "memory"].iter().all(|controller| writable(&root.join(controller)));
    if v1 {
        "cgroup v1 pids and memory hierarchies (processes, memory), and rlimits".into()
    } else {
        "rlimits only (no writable cgroup): processes are not limited for root, memory per process".into()
    }
}

/// A unique cgroup name for `server`.
fn name(server: &str) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let short: String = server.chars().filter(char::is_ascii_alphanumeric).take(24).collect();
    format!("warden-sandbox-{short}-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed))
}

fn make_cgroup(server: &str, limits: &SandboxLimits) -> Result<(Cgroup, Vec<OwnedFd>, &'static str), String> {
    if !cfg!(target_os = "linux") {
        return Err("not Linux".into());
    }
    let own = std::fs::read_to_string("/proc/self/cgroup").map_err(|err| format!("/proc/self/cgroup: {err}"))?;
    let root = Path::new("/sys/fs/cgroup");
    let name = name(server);
    let memory = limits.memory_mb.saturating_mul(MIB).to_string();
    let processes = limits.processes.to_string();
    if root.join("cgroup.controllers").exists() {
        let path = own.lines().find_map(|line| line.strip_prefix("0::")).ok_or("no cgroup v2 entry")?;
        let parent = root.join(path.trim_start_matches('/'));
        // Controllers must be enabled for children; refused while Warden's
        // own cgroup holds processes, except at the root.
        let _ = std::fs::write(parent.join("cgroup.subtree_control"), "+pids +memory");
        remove_stale(&parent);
        let dir = parent.join(&name);
        std::fs::create_dir(&dir).map_err(|err| format!("cannot create {}: {err}", dir.display()))?;
        let cgroup = Cgroup { dirs: vec![dir.clone()] };
        write(&dir.join("pids.max"), &processes)?;
        write(&dir.join("memory.max"), &memory)?;
        let _ = std::fs::write(dir.join("memory.swap.max"), "0");
        return Ok((cgroup, vec![open_procs(&dir)?], "v2"));
    }
    let mut cgroup = Cgroup { dirs: Vec::new() };
    let mut join = Vec::new();
    for (controller, files) in
        [("pids", vec![("pids.max", processes.as_str())]), ("memory", vec![("memory.limit_in_bytes", memory.as_str())])]
    {
        let path = own
            .lines()
            .find_map(|line| {
                let mut parts = line.splitn(3, ':');
                let (_, list, path) = (parts.next()?, parts.next()?, parts.next()?);
                list.split(',').any(|item| item == controller).then_some(path)
            })
            .ok_or_else(|| format!("no cgroup v1 {controller} hierarchy"))?;
        let mount = root.join(controller);
        let nested = mount.join(path.trim_start_matches('/'));
        let parent = if nested.is_dir() { nested } else { mount };
        remove_stale(&parent);
        let dir = parent.join(&name);
        std::fs::create_dir(&dir).map_err(|err| format!("cannot create {}: {err}", dir.display()))?;
        cgroup.dirs.push(dir.clone());
        for (file, value) in files {
            write(&dir.join(file), value)?;
        }
        join.push(open_procs(&dir)?);
    }
    Ok((cgroup, join, "v1"))
}

/// Removes the empty cgroups a Warden that is gone left in `parent` (it
/// exited before its servers' cgroups could be removed). A live Warden's
/// are left alone, whatever state they are in.
fn remove_stale(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str().filter(|name| name.starts_with("warden-sandbox-")) else { continue };
        let Some(pid) = name.rsplit('-').nth(1).and_then(|pid| pid.parse::<libc::pid_t>().ok()) else { continue };
        // SAFETY: kill with signal 0 only checks that the process exists.
        let gone =
            unsafe { libc::kill(pid, 0) } != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        if gone {
            // Fails (and is left) while a process is still inside.
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}

fn write(path: &Path, value: &str) -> Result<(), String> {
    std::fs::write(path, value).map_err(|err| format!("cannot write {}: {err}", path.display()))
}

fn open_procs(dir: &Path) -> Result<OwnedFd, String> {
    let path = dir.join("cgroup.procs");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .map(OwnedFd::from)
        .map_err(|err| format!("cannot open {}: {err}", path.display()))
}

/// Joins the cgroups (writes `0`, this process, to each descriptor) and
/// closes them; then sets `rlimits`. Called by `sandbox-init` first thing.
#[cfg(target_os = "linux")]
pub(crate) fn enter(join: &[i32], rlimits: &Rlimits) -> Result<(), String> {
    use std::io::Write;
    use std::os::fd::FromRawFd;
    for &fd in join {
        // SAFETY: the launcher was handed this descriptor (and nothing else
        // owns it): it is taken over and closed here.
        let mut file = unsafe { std::fs::File::from_raw_fd(fd) };
        file.write_all(b"0").map_err(|err| format!("cannot join the server's cgroup: {err}"))?;
    }
    // Only ever lowered: a limit above the current hard one would fail.
    let set = |resource, value: u64| {
        let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: getrlimit fills the struct it is given.
        if unsafe { libc::getrlimit(resource, &mut limit) } != 0 {
            return Err(format!("cannot read a resource limit: {}", std::io::Error::last_os_error()));
        }
        let value = value.min(limit.rlim_max);
        let limit = libc::rlimit { rlim_cur: value, rlim_max: value };
        // SAFETY: setrlimit reads the struct it is given.
        if unsafe { libc::setrlimit(resource, &limit) } != 0 {
            return Err(format!("cannot set a resource limit: {}", std::io::Error::last_os_error()));
        }
        Ok(())
    };
    set(libc::RLIMIT_NPROC, rlimits.processes)?;
    set(libc::RLIMIT_FSIZE, rlimits.file_size)?;
    set(libc::RLIMIT_NOFILE, rlimits.open_files)?;
    set(libc::RLIMIT_CORE, 0)?;
    if let Some(data) = rlimits.data {
        set(libc::RLIMIT_DATA, data)?;
    }
    Ok(())
}
