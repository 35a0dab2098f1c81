//! Globs that let the same tool or prompt name through on two servers whose
//! names are not prefixed (`naming.prefix: never`, or mcp2's
//! `hub.prefixServerIDs: false`).
//!
//! Which tools a server has is only known once it runs, so this finds what
//! the configuration alone decides: two servers of a profile whose filters
//! both let through some name (allowed by an entry of each, denied by
//! neither). Should both servers have a tool of that name, the client sees
//! only the one of the server written first in the file; the other's is
//! hidden (and the collision is logged). Literal names on both sides are
//! already an error of the configuration (tools) and are not repeated.

use warden_config::{Config, Filter, PrefixMode, ServerFilters};

use crate::filter::Subject;
use crate::language::{Language, Search, covers, find};

/// One server's filter for one kind, as languages.
struct Side<'a> {
    server: &'a str,
    /// Each allow entry (`None`: no allow list, everything) and its language.
    allow: Vec<(Option<&'a str>, Language)>,
    deny: Vec<Language>,
}

/// Warnings about names two unprefixed servers of a profile both let
/// through, one sentence each. Empty when names are prefixed.
pub(crate) fn collisions(config: &Config) -> Vec<String> {
    // `multiple` prefixes as soon as there are two servers, so only `never` collides.
    if config.naming.prefix != PrefixMode::Never {
        return Vec::new();
    }
    let mut warnings = Vec::new();
    for (profile_name, profile) in &config.profiles {
        // The first server in the file wins a name: compare in file order.
        let servers: Vec<(&str, &ServerFilters)> = config
            .servers
            .keys()
            .filter_map(|server| profile.servers.get(server).map(|filters| (server.as_str(), filters)))
            .collect();
        for (at, (first, first_filters)) in servers.iter().enumerate() {
            for (second, second_filters) in &servers[at + 1..] {
                for (kind, pick) in [("tool", tools as Pick), ("prompt", prompts)] {
                    let (Some(a), Some(b)) = (side(first, pick(first_filters)), side(second, pick(second_filters)))
                    else {
                        continue;
                    };
                    warnings.extend(overlaps(profile_name, kind, &a, &b));
                }
            }
        }
    }
    warnings
}

type Pick = fn(&ServerFilters) -> &Filter;

fn tools(filters: &ServerFilters) -> &Filter {
    &filters.tools
}

fn prompts(filters: &ServerFilters) -> &Filter {
    &filters.prompts
}

/// The languages of `filter`, or `None` when a deny glob is not modelled (it
/// might hide the overlap, so nothing is decided).
fn side<'a>(server: &'a str, filter: &'a Filter) -> Option<Side<'a>> {
    let deny = filter.deny.iter().map(|pattern| Language::of(pattern, Subject::Name)).collect::<Option<_>>()?;
    let allow = if filter.allow.is_empty() {
        vec![(None, Language::of("*", Subject::Name)?)]
    } else {
        filter
            .allow
            .iter()
            .filter_map(|pattern| {
                Language::of(pattern, Subject::Name).map(|language| (Some(pattern.as_str()), language))
            })
            .collect()
    };
    Some(Side { server, allow: broadest(allow), deny })
}

/// Leaves out the entries another entry covers (they add no name, and are
/// warned about on their own), keeping the first of equal ones.
fn broadest(entries: Vec<(Option<&str>, Language)>) -> Vec<(Option<&str>, Language)> {
    let covered = |index: usize| {
        let (_, inner) = &entries[index];
        entries.iter().enumerate().any(|(other, (_, outer))| {
            other != index
                && covers(outer, inner) == Some(true)
                && (other < index || covers(inner, outer) != Some(true))
        })
    };
    let keep: Vec<bool> = (0..entries.len()).map(|index| !covered(index)).collect();
    entries.into_iter().zip(keep).filter_map(|(entry, keep)| keep.then_some(entry)).collect()
}

/// One warning per pair of allow entries that let a common name through.
fn overlaps(profile: &str, kind: &str, first: &Side<'_>, second: &Side<'_>) -> Vec<String> {
    let denied: Vec<&Language> = first.deny.iter().chain(&second.deny).collect();
    // Names are never empty: the example should not be either.
    let Some(named) = Language::of("?*", Subject::Name) else { return Vec::new() };
    let mut warnings = Vec::new();
    for (first_pattern, first_language) in &first.allow {
        for (second_pattern, second_language) in &second.allow {
            // Two literals: the configuration already refuses that for tools.
            if kind == "tool" && first_language.is_literal() && second_language.is_literal() {
                continue;
            }
            let Search::Found(example) = find(&[first_language, second_language, &named], &denied) else { continue };
            warnings.push(format!(
                "profile {profile:?}: {kind} names are not prefixed, and {first:?} ({}) and {second:?} ({}) both let through {kind}s such as {example:?}: if both servers have one, the client sees {first:?}'s (first in the file) and {second:?}'s is hidden",
                entry(first_pattern),
                entry(second_pattern),
                first = first.server,
                second = second.server,
            ));
        }
    }
    warnings
}

fn entry(pattern: &Option<&str>) -> String {
    pattern.map_or("no allow list".to_owned(), |pattern| format!("allow {pattern:?}"))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::collisions;

    fn config(naming: &str, profile: &str) -> warden_config::Config {
        let text = format!(
            "servers:\n  a: {{transport: {{kind: stdio, command: a}}}}\n  b: {{transport: {{kind: stdio, command: b}}}}\n{naming}\ndefaultProfile: p\nprofiles:\n  p:\n    servers:\n{profile}"
        );
        warden_config::parse(Path::new("w.yaml"), &text, &|_| None).expect("valid")
    }

    #[test]
    fn overlapping_globs_of_unprefixed_servers_are_named_with_the_winner() {
        let config = config(
            "naming: {prefix: never}",
            "      b: {tools: {allow: ['*']}, prompts: {deny: ['*']}}\n      a: {tools: {allow: ['read_*', 'list_dir']}}\n",
        );
        let found = collisions(&config);
        assert_eq!(found.len(), 2, "{found:#?}");
        assert_eq!(
            found[0],
            "profile \"p\": tool names are not prefixed, and \"a\" (allow \"read_*\") and \"b\" (allow \"*\") both let through tools such as \"read_\": if both servers have one, the client sees \"a\"'s (first in the file) and \"b\"'s is hidden"
        );
        assert!(found[1].contains("(allow \"list_dir\")") && found[1].contains("such as \"list_dir\""), "{found:?}");
    }

    #[test]
    fn an_empty_allow_list_is_everything_and_denies_are_subtracted() {
        let everything = config("hub: {prefixServerIDs: false}", "      a: {}\n      b: {tools: {allow: ['x_*']}}\n");
        let found = collisions(&everything);
        assert_eq!(found.len(), 2, "tools and prompts: {found:#?}");
        assert!(found[0].contains("\"a\" (no allow list) and \"b\" (allow \"x_*\")"), "{found:?}");
        assert!(found[1].starts_with("profile \"p\": prompt names"), "{found:?}");
        let apart = config(
            "naming: {prefix: never}",
            "      a: {tools: {deny: ['x_*']}, prompts: {deny: ['*']}}\n      b: {tools: {allow: ['x_*']}}\n",
        );
        assert!(collisions(&apart).is_empty(), "{:#?}", collisions(&apart));
    }

    #[test]
    fn prefixed_names_never_collide() {
        for naming in ["", "naming: {prefix: multiple}", "hub: {prefixServerIDs: true}"] {
            let config = config(naming, "      a: {}\n      b: {}\n");
            assert!(collisions(&config).is_empty(), "{naming}");
        }
    }

    #[test]
    fn disjoint_or_undecided_globs_do_not_warn() {
        let config = config(
            "naming: {prefix: never}",
            "      a: {tools: {allow: ['read_*']}, prompts: {deny: ['*']}}\n      b: {tools: {allow: ['write_*', '{read,x}_*']}, prompts: {deny: ['*']}}\n",
        );
        assert!(collisions(&config).is_empty(), "{:#?}", collisions(&config));
    }
}
