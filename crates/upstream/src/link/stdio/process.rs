//! Starting an upstream's process in its own process group.

use std::os::fd::{AsRawFd, RawFd};
use std::process::Stdio;

use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};

/// The pipes of a freshly started process.
pub(crate) struct Pipes {
    pub stdin: ChildStdin,
    pub stdout: ChildStdout,
    pub stderr: ChildStderr,
}

/// A running upstream process.
///
/// The process leads its own process group, so that stopping it also stops the
/// helpers it started (`npx` starts `node`, shells start their commands).
/// Dropping a `Process` kills the whole group.
pub(crate) struct Process {
    pub child: Child,
    group: Option<i32>,
}

impl Process {
    /// Starts `command`.
    pub fn spawn(command: &super::Prepared) -> std::io::Result<(Process, Pipes)> {
        let mut cmd = Command::new(&command.program);
        if command.clear_env {
            cmd.env_clear();
        }
        cmd.args(&command.args)
            .envs(command.env.iter().map(|(key, value)| (key, value)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        if let Some(dir) = &command.cwd {
            cmd.current_dir(dir);
        }
        // The descriptors its arguments name (the sandbox's options and
        // plan) cross exec into this child only: they stay close-on-exec in
        // Warden, so no other process started meanwhile gets them.
        let fds: Vec<RawFd> = command.fds.iter().map(AsRawFd::as_raw_fd).collect();
        // SAFETY: the closure runs between fork and exec and only calls
        // fcntl and lseek (through `inherit`), which are async-signal-safe,
        // and allocates nothing (`fds` was collected before the fork).
        unsafe {
            cmd.pre_exec(move || {
                for fd in &fds {
                    warden_sandbox::launch::inherit(*fd)?;
                }
                Ok(())
            });
        }
        // If Warden dies without stopping it (SIGKILL, a crash), the kernel
        // kills the server too, so no orphan lingers.
        #[cfg(target_os = "linux")]
        // SAFETY: the closure runs between fork and exec and only calls
        // prctl, which is async-signal-safe and allocates nothing.
        unsafe {
            cmd.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) == -1 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let mut child = cmd.spawn()?;
        let missing = || std::io::Error::other("child pipe missing");
        let stdin = child.stdin.take().ok_or_else(missing)?;
        let stdout = child.stdout.take().ok_or_else(missing)?;
        let stderr = child.stderr.take().ok_or_else(missing)?;
        let group = child.id().and_then(|pid| i32::try_from(pid).ok());
        Ok((Process { child, group }, Pipes { stdin, stdout, stderr }))
    }

    /// Sends `signal` to every process of the group.
    pub fn signal_group(&self, signal: i32) {
        if let Some(group) = self.group {
            // SAFETY: killpg has no memory-safety preconditions; the group id is
            // the one this process was started with, and only its group is signalled.
            unsafe {
                libc::killpg(group, signal);
            }
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.signal_group(libc::SIGKILL);
    }
}
