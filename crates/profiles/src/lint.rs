//! Warnings about profiles that are valid but probably not what was meant.

use warden_config::Config;

use crate::collide::collisions;
use crate::filter::Subject;
use crate::shadow::shadowed;

/// Every warning about the profiles of `config`, one sentence each: filter
/// entries that change nothing (see the `shadow` module) and globs that let
/// one name through on two servers whose names are not prefixed (see the
/// `collide` module). Only what the configuration alone decides is
/// reported; an undecided comparison never warns.
pub fn warnings(config: &Config) -> Vec<String> {
    let mut warnings = Vec::new();
    for (profile, filters_of) in &config.profiles {
        for (server, filters) in &filters_of.servers {
            for (kind, filter, subject) in [
                ("tools", &filters.tools, Subject::Name),
                ("prompts", &filters.prompts, Subject::Name),
                ("resources", &filters.resources, Subject::Uri),
            ] {
                let place = format!("profile {profile:?}, server {server:?}, {kind}");
                warnings.extend(shadowed(&place, filter, subject));
            }
        }
    }
    warnings.extend(collisions(config));
    warnings
}
