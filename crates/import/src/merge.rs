//! Adding an import to an existing config (`warden import ... --merge`)
//! instead of writing a new one.
//!
//! Nothing of the user's is dropped silently:
//!
//! - servers are added after the existing ones (the first in the file wins
//!   an unprefixed name, so the user's keep winning); a server name that is
//!   already defined differently is a clash;
//! - profiles of the same name are merged server by server (a server whose
//!   filters differ is a clash); new profiles are added. When the config had
//!   no profiles and the import brings some, the user's servers are put in
//!   each new profile without filters, so they stay fully visible;
//! - policy rules are appended after the existing ones (a rule name already
//!   used differently is a clash); lists, annotations, roles and allowed
//!   domains are merged by key, protected paths and the like are united;
//! - any other setting the import makes is taken when the config leaves it
//!   unset, and is a clash when the config sets it differently. The naming
//!   and `defaultProfile` are the exception: the user's stay, because the
//!   import's would rename or re-filter the user's own servers (a note says
//!   so);
//! - with `replace`, a clash takes the import's side, in place.
//!
//! Every change is described in [`Merged::notes`].

use std::hash::Hash;
use std::path::Path;

use indexmap::IndexMap;
use serde::Serialize;
use warden_config::{Config, Policy, ServerFilters};

use crate::error::ImportError;
use crate::yaml;

/// The config with the import added, and what changed.
#[derive(Debug, Clone)]
pub struct Merged {
    /// The merged config.
    pub config: Config,
    /// What was added, replaced or kept, one sentence each.
    pub notes: Vec<String>,
}

/// Where the merge keeps its findings.
struct Merger {
    replace: bool,
    notes: Vec<String>,
    clashes: Vec<String>,
}

/// Adds `theirs` (an import) to `mine` (the user's config). Every clash is
/// reported at once unless `replace` settles it for the import.
pub fn merge(mut mine: Config, theirs: Config, replace: bool) -> Result<Merged, ImportError> {
    let mut merger = Merger { replace, notes: Vec::new(), clashes: Vec::new() };
    let own_servers: Vec<String> = mine.servers.keys().cloned().collect();
    let had_profiles = !mine.profiles.is_empty();
    let added = merger.servers(&mut mine, theirs.servers);
    merger.profiles(&mut mine, theirs.profiles, &own_servers, &added, had_profiles);
    if mine.default_profile.is_none() {
        merger.section("defaultProfile", &mut mine.default_profile, theirs.default_profile);
    } else {
        merger.kept_unless_replaced("defaultProfile", &mut mine.default_profile, theirs.default_profile);
    }
    if own_servers.is_empty() {
        merger.section("naming", &mut mine.naming, theirs.naming);
        merger.section("hub", &mut mine.hub, theirs.hub);
    } else {
        merger.kept_unless_replaced("naming", &mut mine.naming, theirs.naming);
        merger.kept_unless_replaced("hub", &mut mine.hub, theirs.hub);
    }
    merger.policy(&mut mine.policy, theirs.policy);
    merger.section("limits", &mut mine.limits, theirs.limits);
    merger.section("supervision", &mut mine.supervision, theirs.supervision);
    merger.section("exposePerServer", &mut mine.expose_per_server, theirs.expose_per_server);
    merger.united("rateLimits", &mut mine.rate_limits, theirs.rate_limits);
    merger.section("breaker", &mut mine.breaker, theirs.breaker);
    merger.section("audit", &mut mine.audit, theirs.audit);
    merger.section("pins", &mut mine.pins, theirs.pins);
    merger.section("approval", &mut mine.approval, theirs.approval);
    merger.section("http", &mut mine.http, theirs.http);
    merger.section("auth", &mut mine.auth, theirs.auth);
    merger.section("sandbox", &mut mine.sandbox, theirs.sandbox);
    if !merger.clashes.is_empty() {
        return Err(ImportError::Clash { clashes: merger.clashes });
    }
    yaml::check(&mine, "the merged config")?;
    Ok(Merged { config: mine, notes: merger.notes })
}

/// Reads the user's config as written: `${VAR}` references are kept, to be
/// written back unexpanded. `path` chooses the format (`.json` is JSON,
/// anything else YAML) and names the file in errors.
pub fn read_config(path: &Path, text: &str) -> Result<Config, ImportError> {
    let parse_error = |message: String| ImportError::Parse { path: path.to_owned(), message };
    if path.extension().is_some_and(|ext| ext.eq_ignore_ascii_case("json")) {
        serde_json::from_str(text).map_err(|err| parse_error(err.to_string()))
    } else {
        serde_saphyr::from_str(text).map_err(|err| parse_error(err.to_string()))
    }
}

impl Merger {
    /// Adds the import's servers; returns the names added.
    fn servers(&mut self, mine: &mut Config, theirs: IndexMap<String, warden_config::ServerConfig>) -> Vec<String> {
        let mut added = Vec::new();
        for (name, server) in theirs {
            if self.entry(&format!("server {name:?}"), &mut mine.servers, name.clone(), server) {
                added.push(name);
            }
        }
        if !added.is_empty() {
            self.notes.push(format!("added server(s) {}", quoted(&added)));
        }
        added
    }

    fn profiles(
        &mut self,
        mine: &mut Config,
        theirs: IndexMap<String, warden_config::Profile>,
        own_servers: &[String],
        added: &[String],
        had_profiles: bool,
    ) {
        let brings_profiles = !theirs.is_empty();
        let their_names: Vec<String> = theirs.keys().cloned().collect();
        for (name, mut profile) in theirs {
            if !had_profiles && !own_servers.is_empty() {
                // The config showed everything: its servers stay fully visible.
                let mut servers: IndexMap<String, ServerFilters> =
                    own_servers.iter().map(|server| (server.clone(), ServerFilters::default())).collect();
                servers.extend(profile.servers);
                profile.servers = servers;
            }
            let Some(existing) = mine.profiles.get_mut(&name) else {
                self.notes.push(format!("added profile {name:?}"));
                mine.profiles.insert(name, profile);
                continue;
            };
            if existing.description.is_empty() {
                existing.description = profile.description;
            }
            self.section(&format!("profile {name:?} policy"), &mut existing.policy, profile.policy);
            for (server, filters) in profile.servers {
                let what = format!("profile {name:?}, server {server:?}");
                if self.entry(&what, &mut existing.servers, server.clone(), filters) {
                    self.notes.push(format!("profile {name:?} now lists server {server:?}"));
                }
            }
        }
        if !had_profiles && brings_profiles && !own_servers.is_empty() {
            self.notes.push(format!(
                "the config had no profiles: its server(s) {} are in each imported profile without filters, so they stay fully visible",
                quoted(own_servers)
            ));
        }
        if added.is_empty() {
            return;
        }
        for (name, profile) in &mine.profiles {
            let hidden: Vec<String> =
                added.iter().filter(|server| !profile.servers.contains_key(*server)).cloned().collect();
            if !hidden.is_empty() && !their_names.contains(name) {
                self.notes.push(format!(
                    "profile {name:?} does not list {}, so it hides them: add them under profiles.{name}.servers to show them",
                    quoted(&hidden)
                ));
            }
        }
    }

    fn policy(&mut self, mine: &mut Policy, theirs: Policy) {
        for rule in theirs.rules {
            match mine.rules.iter_mut().find(|existing| existing.name == rule.name) {
                None => {
                    self.notes.push(format!("appended policy rule {:?}", rule.name));
                    mine.rules.push(rule);
                }
                Some(existing) if *existing == rule => {}
                Some(existing) => {
                    let what = format!("policy rule {:?}", rule.name);
                    self.clash_or_replace(&what, existing, rule);
                }
            }
        }
        self.section("policy.default", &mut mine.default, theirs.default);
        self.section("policy.strict", &mut mine.strict, theirs.strict);
        self.section("policy.sandbox", &mut mine.sandbox, theirs.sandbox);
        self.section("policy.decideAbsentRoles", &mut mine.decide_absent_roles, theirs.decide_absent_roles);
        self.united("policy.include", &mut mine.include, theirs.include);
        self.united("policy.protectedPaths", &mut mine.protected_paths, theirs.protected_paths);
        self.united("policy.unprotectDefaults", &mut mine.unprotect_defaults, theirs.unprotect_defaults);
        self.united("policy.trustedServers", &mut mine.trusted_servers, theirs.trusted_servers);
        self.keyed("policy.allowedDomains", &mut mine.allowed_domains, theirs.allowed_domains);
        self.keyed("policy.lists", &mut mine.lists, theirs.lists);
        self.keyed("policy.roles", &mut mine.roles, theirs.roles);
        for (server, tools) in theirs.annotations {
            let mine_tools = mine.annotations.entry(server.clone()).or_default();
            self.keyed(&format!("policy.annotations.{server}"), mine_tools, tools);
        }
    }

    /// Adds `key` to `map`, or settles a different existing value. Returns
    /// whether it was added.
    fn entry<K, V>(&mut self, what: &str, map: &mut IndexMap<K, V>, key: K, value: V) -> bool
    where
        K: Hash + Eq,
        V: PartialEq,
    {
        match map.get_mut(&key) {
            None => {
                map.insert(key, value);
                true
            }
            Some(existing) if *existing == value => false,
            Some(existing) => {
                self.clash_or_replace(what, existing, value);
                false
            }
        }
    }

    /// Merges a map key by key.
    fn keyed<V: PartialEq>(&mut self, what: &str, mine: &mut IndexMap<String, V>, theirs: IndexMap<String, V>) {
        for (key, value) in theirs {
            if self.entry(&format!("{what}.{key}"), mine, key.clone(), value) {
                self.notes.push(format!("added {what}.{key}"));
            }
        }
    }

    /// Appends the import's entries the config does not have.
    fn united<T: PartialEq>(&mut self, what: &str, mine: &mut Vec<T>, theirs: Vec<T>) {
        let before = mine.len();
        for item in theirs {
            if !mine.contains(&item) {
                mine.push(item);
            }
        }
        if mine.len() > before {
            self.notes.push(format!("added {} entr(ies) to {what}", mine.len() - before));
        }
    }

    /// A setting: taken from the import when the config leaves it unset.
    fn section<T: PartialEq + Default>(&mut self, what: &str, mine: &mut T, theirs: T) {
        if theirs == T::default() || *mine == theirs {
            return;
        }
        if *mine == T::default() {
            *mine = theirs;
            self.notes.push(format!("took {what} from the import"));
        } else {
            self.clash_or_replace(what, mine, theirs);
        }
    }

    /// A setting that changes how the user's own servers are seen: the
    /// user's stays unless `replace`.
    fn kept_unless_replaced<T: PartialEq + Default + Serialize>(&mut self, what: &str, mine: &mut T, theirs: T) {
        if theirs == T::default() || *mine == theirs {
            return;
        }
        if self.replace {
            self.notes.push(format!("replaced {what} with the import's"));
            *mine = theirs;
        } else {
            let shown = serde_json::to_string(&theirs).unwrap_or_default();
            self.notes
                .push(format!("kept the config's {what}; the import's ({shown}) was left out (--replace takes it)"));
        }
    }

    fn clash_or_replace<T>(&mut self, what: &str, mine: &mut T, theirs: T) {
        if self.replace {
            *mine = theirs;
            self.notes.push(format!("replaced {what} with the import's"));
        } else {
            self.clashes.push(format!("{what} is already defined differently"));
        }
    }
}

fn quoted(names: &[String]) -> String {
    names.iter().map(|name| format!("{name:?}")).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests;
