//! Warden's per-server OS sandbox, with no daemon.
//!
//! A stdio server's process is started through [`launch::prepare`]: with
//! user namespaces, `bwrap` builds a root filesystem from an allowlist
//! (never `/`), private PID, IPC, UTS and network namespaces, no
//! capabilities, a cleared environment; inside it Warden itself, re-executed
//! as `warden sandbox-init` ([`init`]), adds Landlock and a seccomp filter
//! and a loopback forwarder to the per-server egress [`proxy`], then runs
//! the server. Without user namespaces, Landlock and seccomp alone confine
//! the process (and only `network: []` can be honoured).

#![warn(missing_docs)]

pub mod annotate;
pub mod check;
mod error;
mod fd;
pub mod init;
pub mod launch;
pub mod limits;
mod paths;
pub mod plan;
pub mod proxy;
pub mod report;

pub use error::SandboxError;
pub use report::SandboxReport;
