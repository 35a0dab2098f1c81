//! Collisions among what the servers actually offer (`warden validate
//! --connect`): names (or URIs) that two servers of a profile share, and what
//! the client is left with.
//!
//! The gateway gives a shared name to the first server in the file whose
//! item the profile shows (an item the profile hides takes no name): the
//! later server's item is hidden. Resources and templates are never
//! prefixed, so they collide in every naming mode; tools and prompts only
//! when names are not prefixed.

use warden_pipeline::View;
use warden_pipeline::{InventoryItem, ItemKind};

use crate::view::ProfileView;

/// Warnings about the items of `inventory` (every server's, in file order)
/// that collide under `view`, one sentence each: a later server's item that
/// the profile shows, hidden by an earlier server's shown item of that name.
pub fn live_collisions(view: &ProfileView, inventory: &[InventoryItem]) -> Vec<String> {
    let profile = view.name().map_or_else(|| "no profile".to_owned(), |name| format!("profile {name:?}"));
    let shown: Vec<&InventoryItem> = inventory
        .iter()
        .filter(|item| view.shows_server(&item.server) && view.shows(&item.server, item.kind, &item.key))
        .collect();
    let mut warnings = Vec::new();
    for (at, item) in shown.iter().enumerate() {
        let Some(first) = shown[..at].iter().find(|earlier| {
            earlier.kind == item.kind && earlier.exposed == item.exposed && earlier.server != item.server
        }) else {
            continue;
        };
        let (what, name, winner, loser) = (noun(item.kind), &item.exposed, &first.server, &item.server);
        warnings.push(format!(
            "{profile}: {what} {name:?} is offered by {winner:?} and {loser:?}: the client sees {winner:?}'s (first in the file), {loser:?}'s is hidden"
        ));
    }
    warnings
}

fn noun(kind: ItemKind) -> &'static str {
    match kind {
        ItemKind::Tool => "tool",
        ItemKind::Prompt => "prompt",
        ItemKind::Resource => "resource",
        ItemKind::Template => "resource template",
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use warden_pipeline::{InventoryItem, ItemKind};

    use super::live_collisions;
    use crate::ProfileView;

    fn item(server: &str, kind: ItemKind, key: &str) -> InventoryItem {
        InventoryItem {
            server: server.into(),
            kind,
            key: key.into(),
            exposed: key.into(),
            description: None,
            read_only: false,
        }
    }

    #[test]
    fn a_later_servers_shown_item_loses_to_the_first_shown_one() {
        let text = "servers:\n  a: {transport: {kind: stdio, command: a}}\n  b: {transport: {kind: stdio, command: b}}\n  c: {transport: {kind: stdio, command: c}}\nnaming: {prefix: never}\ndefaultProfile: p\nprofiles:\n  p:\n    servers:\n      a: {tools: {deny: [hidden_on_a]}}\n      b: {tools: {deny: [hidden_on_b]}}\n";
        let config = warden_config::parse(Path::new("w.yaml"), text, &|_| None).expect("valid");
        let view = ProfileView::compile(&config, None).expect("compiles");
        let inventory = [
            item("a", ItemKind::Tool, "read"),
            item("a", ItemKind::Tool, "hidden_on_a"),
            item("a", ItemKind::Tool, "hidden_on_b"),
            item("a", ItemKind::Resource, "file://x"),
            item("b", ItemKind::Tool, "read"),
            item("b", ItemKind::Tool, "hidden_on_a"),
            item("b", ItemKind::Tool, "hidden_on_b"),
            item("b", ItemKind::Prompt, "read"),
            item("b", ItemKind::Resource, "file://x"),
            // Not in the profile: never started, so it collides with nothing.
            item("c", ItemKind::Tool, "read"),
        ];
        assert_eq!(
            live_collisions(&view, &inventory),
            [
                "profile \"p\": tool \"read\" is offered by \"a\" and \"b\": the client sees \"a\"'s (first in the file), \"b\"'s is hidden",
                "profile \"p\": resource \"file://x\" is offered by \"a\" and \"b\": the client sees \"a\"'s (first in the file), \"b\"'s is hidden",
            ]
        );
    }
}
