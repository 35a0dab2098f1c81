//! The seccomp layer: no new Unix, packet or raw sockets (so host sockets
//! stay unreachable whatever is visible), no new namespaces (`unshare`,
//! `setns`, `clone` with a new user namespace) or mounts; with
//! `deny_inet`, no IP sockets either (Landlock does not cover UDP).

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
};

/// Installs the filters on this thread (and what it starts).
pub(super) fn apply(deny_inet: bool) -> Result<(), String> {
    for program in [build(deny_inet), clone3_unsupported()] {
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

fn build(deny_inet: bool) -> Result<BpfProgram, seccompiler::BackendError> {
    let family = |value: i32| SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, value as u64);
    let mut socket_rules = vec![
        SeccompRule::new(vec![family(libc::AF_UNIX)?])?,
        SeccompRule::new(vec![family(libc::AF_PACKET)?])?,
        // SOCK_RAW, whatever flags are or'ed in.
        SeccompRule::new(vec![SeccompCondition::new(
            1,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::MaskedEq(0xf),
            libc::SOCK_RAW as u64,
        )?])?,
    ];
    if deny_inet {
        socket_rules.push(SeccompRule::new(vec![family(libc::AF_INET)?])?);
        socket_rules.push(SeccompRule::new(vec![family(libc::AF_INET6)?])?);
    }
    let mut rules = BTreeMap::new();
    rules.insert(libc::SYS_socket, socket_rules);
    // No new user namespace through clone(2) either (unshare(2) is refused below).
    let new_user = libc::CLONE_NEWUSER as u64;
    let clone_flags = SeccompCondition::new(0, SeccompCmpArgLen::Qword, SeccompCmpOp::MaskedEq(new_user), new_user)?;
    rules.insert(libc::SYS_clone, vec![SeccompRule::new(vec![clone_flags])?]);
    for call in [libc::SYS_unshare, libc::SYS_setns, libc::SYS_mount, libc::SYS_pivot_root, libc::SYS_umount2] {
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
