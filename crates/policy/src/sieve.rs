//! Which rules of one of the index's lists may apply, found from what the
//! call's arguments are rather than rule by rule.
//!
//! Every rule filed under one name pattern (see [`crate::index`]) that has a
//! [`Trigger`] is filed again here under each fact of its trigger, by
//! argument: under the argument's presence, under a needle of a compiled
//! group, or under a needle tested alone. For a call, each argument the
//! list's triggers read is looked up once; an absent one admits nothing; a
//! present one admits the rules filed under its presence, and those under
//! the needles its strings have (a group's automaton answers whether any of
//! its needles occurs in one search, and only then which). What is admitted
//! is exactly the rules whose trigger holds, so a policy's fifty rules on
//! `text` that a call's text has no needle of cost one lookup and one
//! search, not fifty rules' walks.

use serde_json::Value;
use smallvec::SmallVec;

use crate::condition::ArgPath;
use crate::fold::{Place, has};
use crate::scan::Memo;
use crate::trigger::{Clause, Trigger};

/// Rule indices admitted by sieves (unsorted, maybe repeated).
pub(crate) type Admitted = SmallVec<[u32; 16]>;

/// A list's rules that have triggers, filed by fact.
#[derive(Debug, Default)]
pub(crate) struct Sieve {
    /// Per argument the triggers read.
    arguments: Vec<ByArgument>,
}

/// The rules filed under the facts of one argument.
#[derive(Debug)]
struct ByArgument {
    arg: ArgPath,
    /// Rules one of whose facts is the argument's presence.
    present: Vec<u32>,
    /// Per compiled group on the argument: (needle's index, rule).
    groups: Vec<(u32, Vec<(u32, u32)>)>,
    /// Needles tested alone, with their rules.
    alone: Vec<(String, Vec<u32>)>,
}

impl Sieve {
    /// Files `rule` under each fact of `trigger`.
    pub(crate) fn file(&mut self, rule: u32, trigger: &Trigger) {
        for clause in trigger.clauses() {
            let arg = clause.arg();
            let at = match self.arguments.iter().position(|by| by.arg.slot == arg.slot) {
                Some(at) => at,
                None => {
                    self.arguments.push(ByArgument {
                        arg: arg.clone(),
                        present: Vec::new(),
                        groups: Vec::new(),
                        alone: Vec::new(),
                    });
                    self.arguments.len() - 1
                }
            };
            let Some(by) = self.arguments.get_mut(at) else { continue };
            match clause {
                Clause::Present(_) => by.present.push(rule),
                Clause::Needle(_, member) => match by.groups.iter_mut().find(|(group, _)| *group == member.group) {
                    Some((_, filed)) => filed.push((member.index, rule)),
                    None => by.groups.push((member.group, vec![(member.index, rule)])),
                },
                Clause::Alone(_, needle) => match by.alone.iter_mut().find(|(known, _)| known == needle) {
                    Some((_, filed)) => filed.push(rule),
                    None => by.alone.push((needle.clone(), vec![rule])),
                },
            }
        }
    }

    /// Adds to `admitted` the filed rules whose trigger holds for `args`.
    pub(crate) fn admit<'v>(&self, args: &'v Value, memo: &mut Memo<'v, '_>, admitted: &mut Admitted) {
        for by in &self.arguments {
            let Some(value) = memo.argument(&by.arg, args) else { continue };
            admitted.extend_from_slice(&by.present);
            let texts: SmallVec<[&'v str; 4]> = strings(value).collect();
            for (group, filed) in &by.groups {
                let scans = memo.scans();
                if !texts.iter().any(|text| scans.any(*group, text)) {
                    continue;
                }
                // Which of the group's needles some string has, each string
                // scanned once (and remembered for the conditions after).
                let mut found: SmallVec<[bool; 64]> = SmallVec::new();
                for text in &texts {
                    let Some(bits) = memo.hits(*group, text) else {
                        // Not compiled: no answer, so every rule is admitted.
                        admitted.extend(filed.iter().map(|&(_, rule)| rule));
                        found.clear();
                        break;
                    };
                    found.resize(found.len().max(bits.len()), false);
                    for (seen, hit) in found.iter_mut().zip(bits) {
                        *seen |= *hit;
                    }
                }
                admitted.extend(
                    filed.iter().filter(|&&(index, _)| found.get(index as usize) == Some(&true)).map(|&(_, rule)| rule),
                );
            }
            for (needle, filed) in &by.alone {
                if texts.iter().any(|text| has(text, needle, false, Place::Anywhere)) {
                    admitted.extend_from_slice(filed);
                }
            }
        }
    }
}

/// The strings a `contains` test may look at in `value`: the value itself,
/// or an array's string items (with `some` or `each`).
fn strings(value: &Value) -> impl Iterator<Item = &str> {
    let (one, items) = match value {
        Value::String(text) => (Some(text.as_str()), None),
        Value::Array(items) => (None, Some(items.iter().filter_map(Value::as_str))),
        _ => (None, None),
    };
    one.into_iter().chain(items.into_iter().flatten())
}
