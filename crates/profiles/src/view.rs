//! The view a profile gives of the servers.

use std::collections::HashMap;

use warden_config::{Config, Profile, ServerFilters};
use warden_pipeline::ItemKind;
use warden_pipeline::View;

use crate::error::{PatternError, ProfileError};
use crate::filter::{CompiledFilter, Subject, Verdict};
use crate::normalize::normalize_uri;

/// Whether one component is visible, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// Whether the component is visible.
    pub visible: bool,
    /// A short reason for people, such as `denied by "write_*"`.
    pub reason: String,
}

/// One profile, compiled: which tools, prompts, resources and templates of
/// which servers a client may see. Implements the gateway's [`View`].
#[derive(Debug)]
pub struct ProfileView {
    scope: Scope,
}

#[derive(Debug)]
enum Scope {
    /// No profiles are configured: everything is visible.
    Everything,
    /// A profile is in force.
    Profile {
        /// Its name.
        name: String,
        /// Its servers; any other server is hidden entirely.
        servers: HashMap<String, ServerView>,
    },
}

/// The compiled filters of one server.
#[derive(Debug)]
struct ServerView {
    tools: CompiledFilter,
    prompts: CompiledFilter,
    resources: CompiledFilter,
}

/// How a lookup ended, before it is put in words.
enum Outcome<'a> {
    Everything,
    ServerNotInProfile(&'a str),
    Unnormalisable,
    Filtered { verdict: Verdict<'a>, normal: Option<String> },
}

impl ProfileView {
    /// Compiles `profile` of `config`, or `config.default_profile` when
    /// `profile` is `None`. A config without profiles, when none is asked for,
    /// shows everything. Every invalid glob is reported, not just the first.
    pub fn compile(config: &Config, profile: Option<&str>) -> Result<ProfileView, ProfileError> {
        let available = || config.profiles.keys().cloned().collect::<Vec<_>>();
        let Some(name) = profile.or(config.default_profile.as_deref()) else {
            if config.profiles.is_empty() {
                return Ok(ProfileView { scope: Scope::Everything });
            }
            return Err(ProfileError::NoneChosen { available: available() });
        };
        let Some((name, chosen)) = config.profiles.get_key_value(name) else {
            return Err(ProfileError::Unknown { name: name.to_owned(), available: available() });
        };
        let servers = compile_profile(name, chosen)?;
        Ok(ProfileView { scope: Scope::Profile { name: name.clone(), servers } })
    }

    /// The profile in force, or `None` when no profiles are configured and
    /// everything is visible.
    pub fn name(&self) -> Option<&str> {
        match &self.scope {
            Scope::Everything => None,
            Scope::Profile { name, .. } => Some(name),
        }
    }

    /// Whether `key` of `kind` on `server` is visible, with a short reason
    /// (for `warden effective`). Agrees with [`View::shows`].
    pub fn explain(&self, server: &str, kind: ItemKind, key: &str) -> Decision {
        let outcome = self.decide(server, kind, key);
        let visible = outcome.visible();
        let reason = match outcome {
            Outcome::Everything => "no profiles: everything visible".to_owned(),
            Outcome::ServerNotInProfile(profile) => format!("server {server:?} is not in profile {profile:?}"),
            Outcome::Unnormalisable => {
                "URI cannot be normalised (\"..\" above its start, NUL byte or bad encoding)".to_owned()
            }
            Outcome::Filtered { verdict, normal } => {
                let mut reason = match verdict {
                    Verdict::Denied(pattern) => format!("denied by {pattern:?}"),
                    Verdict::Allowed(pattern) => format!("allowed by {pattern:?}"),
                    Verdict::NotAllowed => "not in allow list".to_owned(),
                    Verdict::AllowedByDefault => "no allow list: everything allowed".to_owned(),
                };
                if let Some(normal) = normal.filter(|normal| normal != key) {
                    reason.push_str(&format!(" (as {normal:?})"));
                }
                reason
            }
        };
        Decision { visible, reason }
    }

    fn decide(&self, server: &str, kind: ItemKind, key: &str) -> Outcome<'_> {
        let (profile, servers) = match &self.scope {
            Scope::Everything => return Outcome::Everything,
            Scope::Profile { name, servers } => (name, servers),
        };
        let Some(filters) = servers.get(server) else {
            return Outcome::ServerNotInProfile(profile);
        };
        match kind {
            ItemKind::Tool => Outcome::Filtered { verdict: filters.tools.judge(key), normal: None },
            ItemKind::Prompt => Outcome::Filtered { verdict: filters.prompts.judge(key), normal: None },
            ItemKind::Resource | ItemKind::Template => match normalize_uri(key) {
                None => Outcome::Unnormalisable,
                Some(normal) => Outcome::Filtered { verdict: filters.resources.judge(&normal), normal: Some(normal) },
            },
        }
    }
}

impl Outcome<'_> {
    fn visible(&self) -> bool {
        match self {
            Outcome::Everything => true,
            Outcome::ServerNotInProfile(_) | Outcome::Unnormalisable => false,
            Outcome::Filtered { verdict, .. } => verdict.visible(),
        }
    }
}

impl View for ProfileView {
    fn shows(&self, server: &str, kind: ItemKind, key: &str) -> bool {
        let servers = match &self.scope {
            Scope::Everything => return true,
            Scope::Profile { servers, .. } => servers,
        };
        let Some(filters) = servers.get(server) else {
            return false;
        };
        match kind {
            ItemKind::Tool => filters.tools.passes(key),
            ItemKind::Prompt => filters.prompts.passes(key),
            ItemKind::Resource | ItemKind::Template => {
                normalize_uri(key).is_some_and(|normal| filters.resources.passes(&normal))
            }
        }
    }

    fn shows_server(&self, server: &str) -> bool {
        match &self.scope {
            Scope::Everything => true,
            Scope::Profile { servers, .. } => servers.contains_key(server),
        }
    }
}

/// Compiles every server's filters of profile `name`, collecting every bad glob.
fn compile_profile(name: &str, profile: &Profile) -> Result<HashMap<String, ServerView>, ProfileError> {
    let mut servers = HashMap::with_capacity(profile.servers.len());
    let mut problems = Vec::new();
    for (server, filters) in &profile.servers {
        if let Some(view) = compile_server(name, server, filters, &mut problems) {
            servers.insert(server.clone(), view);
        }
    }
    if problems.is_empty() { Ok(servers) } else { Err(ProfileError::InvalidPatterns(problems)) }
}

fn compile_server(
    profile: &str,
    server: &str,
    filters: &ServerFilters,
    problems: &mut Vec<PatternError>,
) -> Option<ServerView> {
    let mut compile = |kind: &'static str, filter, subject| {
        CompiledFilter::compile(filter, subject)
            .map_err(|bad| {
                problems.extend(bad.into_iter().map(|bad| PatternError {
                    profile: profile.to_owned(),
                    server: server.to_owned(),
                    kind,
                    list: bad.list,
                    pattern: bad.pattern,
                    reason: bad.reason,
                }));
            })
            .ok()
    };
    let tools = compile("tools", &filters.tools, Subject::Name);
    let prompts = compile("prompts", &filters.prompts, Subject::Name);
    let resources = compile("resources", &filters.resources, Subject::Uri);
    Some(ServerView { tools: tools?, prompts: prompts?, resources: resources? })
}

#[cfg(test)]
mod tests;
