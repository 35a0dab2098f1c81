//! What globs match, compared without a list of names: whether one glob's
//! matches are all matched by another, or whether some name is matched by
//! some globs and by none of others. Used to warn about filters that shadow
//! each other and about globs that let the same name through on two servers.
//!
//! Only the syntax whose meaning is modelled exactly is compared: literal
//! characters (backslash escapes in names, one-character classes such as
//! `[*]`), `?`, `*`, and `**` alone or as a trailing `/**`. Anything else
//! (classes, alternatives, `**/` and `/**/`) is left undecided, and
//! undecided never warns.

use std::collections::{BTreeSet, HashSet, VecDeque};

use crate::filter::Subject;
use crate::normalize::normalize_pattern;

/// The most states a comparison may visit before it gives up (undecided).
const MAX_STATES: usize = 20_000;

/// One piece of a glob.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    /// Exactly this character.
    Literal(char),
    /// `?`: one character (not `/` in a URI).
    One,
    /// `*`: any run of characters (none of them `/` in a URI).
    Star,
    /// `**` in a URI: any run of characters, `/` included.
    Deep,
}

/// A glob whose matches can be compared with another's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Language {
    tokens: Vec<Token>,
    subject: Subject,
}

/// The outcome of a search for a name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Search {
    /// A name with the asked-for properties, shortest first.
    Found(String),
    /// There is no such name.
    None,
    /// Too large to decide.
    Undecided,
}

impl Language {
    /// The language of `pattern` as written in a profile, or `None` when it
    /// uses syntax not modelled here (or is not a valid pattern).
    pub(crate) fn of(pattern: &str, subject: Subject) -> Option<Language> {
        let tokens = match subject {
            Subject::Name => tokens(pattern, Subject::Name)?,
            Subject::Uri => tokens(&normalize_pattern(pattern)?, Subject::Uri)?,
        };
        Some(Language { tokens, subject })
    }

    /// Whether the glob has no wildcard: it matches exactly one name.
    pub(crate) fn is_literal(&self) -> bool {
        self.tokens.iter().all(|token| matches!(token, Token::Literal(_)))
    }

    fn takes(&self, token: Token, c: char) -> bool {
        let crosses = self.subject == Subject::Name || c != '/';
        match token {
            Token::Literal(literal) => literal == c,
            Token::One | Token::Star => crosses,
            Token::Deep => true,
        }
    }

    /// The positions reachable from `states` without reading anything.
    fn closure(&self, states: impl IntoIterator<Item = usize>) -> BTreeSet<usize> {
        let mut closed = BTreeSet::new();
        for mut at in states {
            while closed.insert(at) && matches!(self.tokens.get(at), Some(Token::Star | Token::Deep)) {
                at += 1;
            }
        }
        closed
    }

    fn step(&self, states: &BTreeSet<usize>, c: char) -> BTreeSet<usize> {
        let next = states.iter().filter_map(|&at| {
            let token = *self.tokens.get(at)?;
            if !self.takes(token, c) {
                return None;
            }
            Some(if matches!(token, Token::Star | Token::Deep) { at } else { at + 1 })
        });
        self.closure(next.collect::<Vec<_>>())
    }

    fn accepts(&self, states: &BTreeSet<usize>) -> bool {
        states.contains(&self.tokens.len())
    }

    fn literals(&self) -> impl Iterator<Item = char> + '_ {
        self.tokens.iter().filter_map(|token| match token {
            Token::Literal(c) => Some(*c),
            _ => None,
        })
    }
}

/// Whether every name `inner` matches is matched by `outer`; `None` when
/// undecided.
pub(crate) fn covers(outer: &Language, inner: &Language) -> Option<bool> {
    match find(&[inner], &[outer]) {
        Search::Found(_) => Some(false),
        Search::None => Some(true),
        Search::Undecided => None,
    }
}

/// The shortest name every glob of `all` matches and no glob of `none` does.
pub(crate) fn find(all: &[&Language], none: &[&Language]) -> Search {
    let globs: Vec<&Language> = all.iter().chain(none).copied().collect();
    let Some(first) = globs.first() else { return Search::Undecided };
    // Characters are told apart only by the literals, and by '/' in URIs: one
    // of each, and one other, stand for every character.
    let mut alphabet: BTreeSet<char> = globs.iter().flat_map(|glob| glob.literals()).collect();
    if first.subject == Subject::Uri {
        alphabet.insert('/');
    }
    if let Some(other) = ('a'..='z').chain('0'..='9').find(|c| !alphabet.contains(c)) {
        alphabet.insert(other);
    }
    let start: Vec<BTreeSet<usize>> = globs.iter().map(|glob| glob.closure([0])).collect();
    let wanted = |states: &[BTreeSet<usize>]| {
        globs.iter().zip(states).enumerate().all(|(index, (glob, at))| glob.accepts(at) == (index < all.len()))
    };
    let mut seen: HashSet<Vec<BTreeSet<usize>>> = HashSet::from([start.clone()]);
    let mut queue = VecDeque::from([(start, String::new())]);
    while let Some((states, name)) = queue.pop_front() {
        if wanted(&states) {
            return Search::Found(name);
        }
        // A glob of `all` that can match nothing more ends this path.
        if globs.iter().zip(&states).take(all.len()).any(|(_, at)| at.is_empty()) {
            continue;
        }
        for &c in &alphabet {
            let next: Vec<BTreeSet<usize>> = globs.iter().zip(&states).map(|(glob, at)| glob.step(at, c)).collect();
            if seen.len() >= MAX_STATES {
                return Search::Undecided;
            }
            if seen.insert(next.clone()) {
                let mut longer = name.clone();
                longer.push(c);
                queue.push_back((next, longer));
            }
        }
    }
    Search::None
}

/// The tokens of `pattern`, or `None` for syntax not modelled. `**` follows
/// globset: the whole glob or a trailing `/**` matches across `/`; `**/` at
/// the start or `/**/` inside (zero or more segments) are not modelled;
/// elsewhere it is two `*`.
fn tokens(pattern: &str, subject: Subject) -> Option<Vec<Token>> {
    let deep = if subject == Subject::Uri { Token::Deep } else { Token::Star };
    let mut tokens = Vec::new();
    let mut prev = None;
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        let token = match c {
            '\\' if subject == Subject::Name => Token::Literal(chars.next()?),
            '?' => Token::One,
            '*' => {
                let mut run = 1;
                while chars.next_if_eq(&'*').is_some() {
                    run += 1;
                }
                match (run, prev, chars.peek()) {
                    (1, _, _) => Token::Star,
                    (2, None, None) | (2, Some('/'), None) => deep,
                    (2, Some('/'), Some('/')) | (2, None, Some('/')) => return None,
                    (2, _, _) => Token::Star,
                    _ => return None,
                }
            }
            '[' => {
                // Only a class of one plain character, which is that character.
                let inner = chars.next()?;
                if chars.next()? != ']' || matches!(inner, '!' | '^' | ']' | '\\' | '/' | '-') {
                    return None;
                }
                Token::Literal(inner)
            }
            '{' | '}' | ']' => return None,
            _ => Token::Literal(c),
        };
        // As globset sees it: an escaped character is the one before `**`.
        prev = Some(match token {
            Token::Literal(literal) => literal,
            _ => c,
        });
        tokens.push(token);
    }
    Some(tokens)
}

#[cfg(test)]
mod tests;
