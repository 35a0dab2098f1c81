//! The seccomp layer. Socket families are allowlisted: IPv4 and IPv6 under
//! bwrap (the sandbox's own network namespace, whose only way out is the
//! proxy's forwarder), netlink route queries, and nothing else (no Unix,
//! packet, vsock, Bluetooth, ... sockets, so host sockets stay unreachable
//! whatever is visible); no raw sockets. Refused too: io_uring (its
//! `IORING_OP_SOCKET` and friends run system calls this filter never
//! sees), new namespaces and mounts, tracing other processes, kernel
//! keyrings, BPF, perf events, userfaultfd, and terminal input injection.
//! Without namespaces (`no_namespaces`), no IP sockets either (Landlock
//! does not cover UDP) and no System V IPC (the host's would be shared).
//!
//! The filter checks the architecture: a system call made through another
//! ABI (32-bit `int 0x80`, with its multiplexed `socketcall` and `ipc`)
//! kills the process, so none of this can be walked around that way.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
};

/// The filters in force, for `warden sandbox check` and the docs.
pub const SUMMARY: &str = "socket families allowed: AF_INET, AF_INET6 (bwrap only), AF_NETLINK (route); \
no raw sockets; refused: io_uring_setup/enter/register, unshare, setns, clone(CLONE_NEWUSER), clone3, mount, \
umount2, pivot_root, ptrace, process_vm_readv/writev, bpf, perf_event_open, userfaultfd, keyctl, add_key, \
request_key, ioctl(TIOCSTI, TIOCLINUX), and without namespaces System V IPC; other architectures' ABIs kill";

/// Installs the filters on this thread (and what it starts).
pub(super) fn apply(no_namespaces: bool) -> Result<(), String> {
    for program in [build(no_namespaces), clone3_unsupported()] {
        let program = program.map_err(|err| format!("seccomp: {err}"))?;
        seccompiler::apply_filter(&program).map_err(|err| format!("seccomp: {err}"))?;
    }
    Ok(())
}

/// `clone3` answers ENOSYS: its flags are behind a pointer, which a filter
/// cannot read, and on ENOSYS the C library falls back to `clone`, whose
/// flags the main filter checks.
fn clone3_unsupported() -> Result<BpfProgram, seccompiler::BackendError> {
    let rules = BTreeMap::from([(libc::SYS_clone3, Vec::new())]);
    let arch = std::env::consts::ARCH.try_into()?;
    let filter = SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(libc::ENOSYS as u32), arch)?;
    filter.try_into()
}

/// The socket families a sandboxed server may create.
fn allowed_families(no_namespaces: bool) -> Vec<i32> {
    if no_namespaces { vec![libc::AF_NETLINK] } else { vec![libc::AF_INET, libc::AF_INET6, libc::AF_NETLINK] }
}

fn build(no_namespaces: bool) -> Result<BpfProgram, seccompiler::BackendError> {
    let arg =
        |index: u8, op: SeccompCmpOp, value: u64| SeccompCondition::new(index, SeccompCmpArgLen::Dword, op, value);
    // A rule matches (and is refused) when every condition holds: a family
    // that is none of the allowed ones.
    let not_allowed: Vec<SeccompCondition> = allowed_families(no_namespaces)
        .into_iter()
        .map(|family| arg(0, SeccompCmpOp::Ne, family as u64))
        .collect::<Result<_, _>>()?;
    let socket_rules = vec![
        SeccompRule::new(not_allowed)?,
        // Netlink other than route (audit, kobject, sock_diag ...).
        SeccompRule::new(vec![
            arg(0, SeccompCmpOp::Eq, libc::AF_NETLINK as u64)?,
            arg(2, SeccompCmpOp::Ne, libc::NETLINK_ROUTE as u64)?,
        ])?,
        // SOCK_RAW, whatever flags are or'ed in.
        SeccompRule::new(vec![arg(1, SeccompCmpOp::MaskedEq(0xf), libc::SOCK_RAW as u64)?])?,
        // SOCK_PACKET (10), the obsolete packet interface.
        SeccompRule::new(vec![arg(1, SeccompCmpOp::MaskedEq(0xf), 10)?])?,
    ];
    let mut rules = BTreeMap::new();
    rules.insert(libc::SYS_socket, socket_rules);
    // No new user namespace through clone(2) either (unshare(2) is refused below).
    let new_user = libc::CLONE_NEWUSER as u64;
    let clone_flags = SeccompCondition::new(0, SeccompCmpArgLen::Qword, SeccompCmpOp::MaskedEq(new_user), new_user)?;
    rules.insert(libc::SYS_clone, vec![SeccompRule::new(vec![clone_flags])?]);
    // Typing into the controlling terminal, or into a console.
    let request = |value: u64| SeccompRule::new(vec![arg(1, SeccompCmpOp::Eq, value)?]);
    // The request's type differs between C libraries.
    #[allow(clippy::unnecessary_cast)]
    rules.insert(libc::SYS_ioctl, vec![request(libc::TIOCSTI as u64)?, request(libc::TIOCLINUX as u64)?]);
    let mut refused = vec![
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_unshare,
        libc::SYS_setns,
        libc::SYS_mount,
        libc::SYS_pivot_root,
        libc::SYS_umount2,
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_userfaultfd,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_open_tree,
        libc::SYS_move_mount,
        libc::SYS_fsopen,
        libc::SYS_fsmount,
    ];
    if no_namespaces {
        refused.extend([
            libc::SYS_shmget,
            libc::SYS_shmat,
            libc::SYS_shmctl,
            libc::SYS_msgget,
            libc::SYS_msgsnd,
            libc::SYS_msgrcv,
            libc::SYS_msgctl,
            libc::SYS_semget,
            libc::SYS_semop,
            libc::SYS_semtimedop,
            libc::SYS_semctl,
            libc::SYS_mq_open,
        ]);
    }
    for call in refused {
        rules.insert(call, Vec::new());
    }
    let arch = std::env::consts::ARCH.try_into()?;
    let filter = SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(libc::EPERM as u32), arch)?;
    filter.try_into()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_filter_compiles_for_this_architecture() {
        assert!(!super::build(false).unwrap().is_empty());
        assert!(super::build(true).unwrap().len() > super::build(false).unwrap().len());
        assert!(!super::clone3_unsupported().unwrap().is_empty());
    }
}
