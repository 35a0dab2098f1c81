//! The seccomp layer: no new Unix, packet or raw sockets (so host sockets
//! stay unreachable whatever is visible), no new namespaces or mounts; with
//! `deny_inet`, no IP sockets either (Landlock does not cover UDP).

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
};

/// Installs the filter on this thread (and what it starts).
pub(super) fn apply(deny_inet: bool) -> Result<(), String> {
    let program = build(deny_inet).map_err(|err| format!("seccomp: {err}"))?;
    seccompiler::apply_filter(&program).map_err(|err| format!("seccomp: {err}"))
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
    }
}
