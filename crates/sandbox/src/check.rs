//! What this machine supports: `bwrap`, user namespaces, Landlock, seccomp.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};

/// A probe's result for one `bwrap` setting.
type Probed = (Option<PathBuf>, Support);

/// What was found.
#[derive(Debug, Clone)]
pub struct Support {
    /// The `bwrap` program and its version, or why there is none.
    pub bwrap: Result<(PathBuf, String), String>,
    /// Whether `bwrap` could create user and network namespaces, or why not.
    pub user_namespaces: Result<(), String>,
    /// The kernel's Landlock ABI (0: none).
    pub landlock_abi: i64,
    /// Whether seccomp filters are available.
    pub seccomp: bool,
}

impl Support {
    /// Probes the machine (runs `bwrap` twice).
    pub fn detect(bwrap: Option<&Path>) -> Support {
        let bwrap = find_bwrap(bwrap);
        let user_namespaces = match &bwrap {
            Ok((path, _)) => probe_namespaces(path),
            Err(why) => Err(why.clone()),
        };
        Support { bwrap, user_namespaces, landlock_abi: landlock_abi(), seccomp: seccomp_available() }
    }

    /// The same, probed once per process and `bwrap` setting.
    pub fn cached(bwrap: Option<&Path>) -> Support {
        static PROBED: OnceLock<Mutex<Vec<Probed>>> = OnceLock::new();
        let mut probed = warden_sync::lock(PROBED.get_or_init(Default::default));
        if let Some((_, support)) = probed.iter().find(|(path, _)| path.as_deref() == bwrap) {
            return support.clone();
        }
        let support = Support::detect(bwrap);
        probed.push((bwrap.map(Path::to_path_buf), support.clone()));
        support
    }

    /// A report, one line per mechanism.
    pub fn report(&self) -> String {
        let mut out = String::new();
        match &self.bwrap {
            Ok((path, version)) => out.push_str(&format!("bwrap: {} ({version})\n", path.display())),
            Err(why) => out.push_str(&format!("bwrap: missing ({why})\n")),
        }
        match &self.user_namespaces {
            Ok(()) => out.push_str("user namespaces: yes (bwrap can create user and network namespaces)\n"),
            Err(why) => out.push_str(&format!("user namespaces: no ({why})\n")),
        }
        match self.landlock_abi {
            abi if abi > 0 => out.push_str(&format!(
                "landlock: ABI {abi} (Warden asks for ABI {}: in force ABI {})\n",
                crate::init::LANDLOCK_ABI_WANTED,
                abi.min(crate::init::LANDLOCK_ABI_WANTED)
            )),
            _ => out.push_str("landlock: unavailable\n"),
        }
        out.push_str(&format!("seccomp: {}\n", if self.seccomp { "yes" } else { "no" }));
        if self.seccomp {
            out.push_str(&format!("seccomp filter: {}\n", crate::init::SECCOMP_SUMMARY));
        }
        out.push_str(&format!("limits: {}\n", crate::limits::enforcement()));
        let mode = if self.user_namespaces.is_ok() {
            "full (bwrap namespaces, with Landlock and seccomp inside); network allowlists through the proxy"
        } else if self.landlock_abi > 0 && self.seccomp {
            "Landlock and seccomp only: filesystem confinement and network: [] (no allowlists)"
        } else {
            "none: servers with mode enforce will not start"
        };
        out.push_str(&format!("sandbox: {mode}\n"));
        out
    }
}

fn find_bwrap(configured: Option<&Path>) -> Result<(PathBuf, String), String> {
    let path = match configured {
        Some(path) => path.to_path_buf(),
        None => which("bwrap").ok_or("not found in PATH; install the bubblewrap package")?,
    };
    let output = Command::new(&path)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .map_err(|err| format!("cannot run {}: {err}", path.display()))?;
    if !output.status.success() {
        return Err(format!("{} --version failed ({})", path.display(), output.status));
    }
    Ok((path, String::from_utf8_lossy(&output.stdout).trim().to_owned()))
}

/// Looks `program` up in `PATH` (or takes it as a path if it has a slash).
pub(crate) fn which(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        let path = PathBuf::from(program);
        return path.is_file().then_some(path);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(program)).find(|candidate| {
        use std::os::unix::fs::PermissionsExt;
        candidate.metadata().is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
    })
}

fn probe_namespaces(bwrap: &Path) -> Result<(), String> {
    let output = Command::new(bwrap)
        .args(["--unshare-user", "--unshare-net", "--unshare-pid"])
        .args(crate::launch::system_binds())
        .args(["--", "true"])
        .stdin(Stdio::null())
        .output()
        .map_err(|err| format!("cannot run bwrap: {err}"))?;
    if output.status.success() { Ok(()) } else { Err(String::from_utf8_lossy(&output.stderr).trim().to_owned()) }
}

/// The kernel's Landlock ABI version, 0 when unsupported.
#[cfg(not(target_os = "linux"))]
pub fn landlock_abi() -> i64 {
    0
}

#[cfg(not(target_os = "linux"))]
fn seccomp_available() -> bool {
    false
}

/// The kernel's Landlock ABI version, 0 when unsupported.
#[cfg(target_os = "linux")]
pub fn landlock_abi() -> i64 {
    // SAFETY: landlock_create_ruleset with a null attribute, size 0 and the
    // VERSION flag only returns the ABI version; it touches no memory.
    let abi = unsafe { libc::syscall(libc::SYS_landlock_create_ruleset, std::ptr::null::<u8>(), 0usize, 1u32) };
    abi.max(0)
}

#[cfg(target_os = "linux")]
fn seccomp_available() -> bool {
    // SAFETY: prctl(PR_GET_SECCOMP) only reads the calling thread's mode.
    unsafe { libc::prctl(libc::PR_GET_SECCOMP) >= 0 }
}
