//! The Landlock layer: only the listed paths, and with no network namespace,
//! no TCP; abstract Unix sockets and signals scoped to the sandbox.

use std::path::PathBuf;

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr, RulesetCreatedAttr, Scope,
    path_beneath_rules,
};

/// The newest ABI asked for; older kernels get what they support (keep
/// [`super::LANDLOCK_ABI_WANTED`] in step).
const ABI_WANTED: ABI = ABI::V6;

/// Restricts this thread (and what it starts) to `read` and `write`; with
/// `deny_tcp`, no TCP bind or connect at all.
pub(super) fn apply(read: &[PathBuf], write: &[PathBuf], deny_tcp: bool) -> Result<(), String> {
    let fail = |err: landlock::RulesetError| format!("Landlock: {err}");
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(ABI_WANTED))
        .map_err(fail)?
        .scope(Scope::from_all(ABI_WANTED))
        .map_err(fail)?;
    if deny_tcp {
        ruleset = ruleset.handle_access(AccessNet::from_all(ABI_WANTED)).map_err(fail)?;
    }
    let status = ruleset
        .create()
        .map_err(fail)?
        .add_rules(path_beneath_rules(read, AccessFs::from_read(ABI_WANTED)))
        .map_err(fail)?
        .add_rules(path_beneath_rules(write, AccessFs::from_all(ABI_WANTED)))
        .map_err(fail)?
        .restrict_self()
        .map_err(fail)?;
    if status.ruleset == landlock::RulesetStatus::NotEnforced && deny_tcp {
        return Err("Landlock is not enforced by this kernel, and it is the only confinement here".into());
    }
    Ok(())
}
