//! Python `re` patterns (as MCP Sentinel compiles them, `re.search` on a
//! `str`) rewritten for Rust's `regex` crate, which Warden uses.
//!
//! Most of the syntax means the same in both, and is written back escaped
//! the Rust way. What differs is translated only where the result provably
//! matches the same strings:
//!
//! - `\Z` (end of text) becomes `\z`; `\A`, `\b`, `\B` stay.
//! - Without `(?m)`, Python's `$` also matches just before a final newline.
//!   Where nothing can follow it (the end of the pattern, possibly closing
//!   groups or ending an alternative) it becomes `(?:\n?\z)`, which accepts
//!   the same strings; anywhere else it is refused.
//! - `\xhh`, `\uhhhh`, `\Uhhhhhhhh` and octal escapes become `\x{…}`;
//!   `\<`, `\>` and other escaped punctuation become plain literals (in Rust
//!   `\<` and `\>` are word boundaries); `{` that is not a quantifier is a
//!   literal, as in Python; `x{,n}` becomes `x{0,n}`.
//! - `(?P<name>…)` stays; `(?#…)` comments are dropped; inline flags `i`,
//!   `m`, `s` (and the default `u`) stay.
//!
//! Refused, with the reason: look-ahead and look-behind, backreferences
//! (`\1`, `(?P=name)`), atomic groups and possessive quantifiers, conditionals
//! (`(?(…)…)`), `\N{…}`, the `a`, `L` and `x` flags, and global flags after
//! the start. Whatever Python itself rejects is refused too. The caller
//! still compiles the result, which catches anything missed here.

use regex_syntax::escape_into;

/// `pattern` as a Rust regex with the same matches, or why it cannot be.
pub fn translate(pattern: &str) -> Result<String, String> {
    let mut parser = Parser { chars: pattern.chars().collect(), pos: 0, multiline: false, depth: 0 };
    let alternation = parser.alternation(true)?;
    if parser.pos < parser.chars.len() {
        return Err(format!("unbalanced ')' at position {}", parser.pos));
    }
    let mut out = String::with_capacity(pattern.len() + 8);
    render(&alternation, true, &mut out)?;
    Ok(out)
}

/// Alternatives, each a sequence of pieces.
type Alternation = Vec<Vec<Piece>>;

/// One atom and its quantifier (Rust syntax, empty when none).
struct Piece {
    atom: Atom,
    quantifier: String,
}

enum Atom {
    /// Rust pattern text that needs no further thought.
    Text(String),
    /// A `$` outside multi-line mode: translatable only at the end.
    Dollar,
    /// A group: its opening (`(`, `(?:`, `(?P<n>`, `(?i:`) and contents.
    Group(String, Alternation),
    /// Global flags (`(?i)`, only at the very start), or nothing where a
    /// `(?#…)` comment was.
    Flags(String),
}

impl Atom {
    /// Whether Python refuses to repeat it (anchors and flags).
    fn is_assertion(&self) -> bool {
        match self {
            Atom::Dollar | Atom::Flags(_) => true,
            Atom::Text(text) => matches!(text.as_str(), "^" | r"\A" | r"\z" | r"\b" | r"\B" | "$"),
            Atom::Group(..) => false,
        }
    }
}

/// Writes `alternation`; `tail` says that nothing can follow it.
fn render(alternation: &Alternation, tail: bool, out: &mut String) -> Result<(), String> {
    for (index, branch) in alternation.iter().enumerate() {
        if index > 0 {
            out.push('|');
        }
        for (position, piece) in branch.iter().enumerate() {
            let last = tail && position + 1 == branch.len() && piece.quantifier.is_empty();
            match &piece.atom {
                Atom::Text(text) | Atom::Flags(text) => out.push_str(text),
                Atom::Dollar if last => out.push_str(r"(?:\n?\z)"),
                Atom::Dollar => {
                    return Err("'$' is followed by more pattern: Python's '$' also matches before a final newline, which Rust's regex can express only at the end of the pattern (use \\Z for the end of the text)".into());
                }
                Atom::Group(open, inner) => {
                    out.push_str(open);
                    render(inner, last, out)?;
                    out.push(')');
                }
            }
            out.push_str(&piece.quantifier);
        }
    }
    Ok(())
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
    /// Whether `$` and `^` are in multi-line mode here.
    multiline: bool,
    /// Group nesting.
    depth: usize,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, offset: usize) -> Option<char> {
        self.chars.get(self.pos + offset).copied()
    }

    fn starts_with(&self, text: &str) -> bool {
        text.chars().enumerate().all(|(offset, c)| self.peek_at(offset) == Some(c))
    }

    /// Alternatives up to an unmatched `)` (not consumed) or the end.
    fn alternation(&mut self, top: bool) -> Result<Alternation, String> {
        let mut alternatives = vec![Vec::new()];
        while let Some(c) = self.peek() {
            match c {
                '|' => {
                    self.pos += 1;
                    alternatives.push(Vec::new());
                }
                ')' => break,
                _ => {
                    let at_start = top && alternatives.len() == 1 && self.only_flags(&alternatives[0]);
                    let start = self.pos;
                    let atom = self.atom(at_start)?;
                    let quantifier = self.quantifier()?;
                    if !quantifier.is_empty() && atom.is_assertion() {
                        return Err(format!("nothing to repeat at position {start}"));
                    }
                    if let Some(branch) = alternatives.last_mut() {
                        branch.push(Piece { atom, quantifier });
                    }
                }
            }
        }
        Ok(alternatives)
    }

    /// Whether `pieces` holds only global flags (and dropped comments).
    fn only_flags(&self, pieces: &[Piece]) -> bool {
        pieces.iter().all(|piece| matches!(piece.atom, Atom::Flags(_)))
    }

    fn atom(&mut self, at_start: bool) -> Result<Atom, String> {
        let start = self.pos;
        let Some(c) = self.peek() else { return Err("unexpected end of pattern".into()) };
        if c == '{' && self.counted().is_some() {
            return Err(format!("nothing to repeat at position {start}"));
        }
        self.pos += 1;
        Ok(match c {
            '(' => self.group(start, at_start)?,
            '[' => Atom::Text(self.class(start)?),
            '.' => Atom::Text(".".into()),
            '^' => Atom::Text("^".into()),
            '$' if self.multiline => Atom::Text("$".into()),
            '$' => Atom::Dollar,
            '\\' => Atom::Text(self.escape()?),
            '*' | '+' | '?' => return Err(format!("nothing to repeat at position {start}")),
            other => Atom::Text(literal(other)),
        })
    }

    /// A quantifier after an atom, in Rust syntax ("" when none).
    fn quantifier(&mut self) -> Result<String, String> {
        let start = self.pos;
        let mut quantifier = match self.peek() {
            Some(c @ ('*' | '+' | '?')) => {
                self.pos += 1;
                c.to_string()
            }
            Some('{') => match self.counted() {
                Some((text, len)) => {
                    self.pos += len;
                    text
                }
                None => return Ok(String::new()),
            },
            _ => return Ok(String::new()),
        };
        match self.peek() {
            Some('?') => {
                self.pos += 1;
                quantifier.push('?');
            }
            Some('+') => {
                return Err(format!(
                    "possessive quantifier at position {start} (Rust's regex has no possessive or atomic matching)"
                ));
            }
            _ => {}
        }
        if matches!(self.peek(), Some('*' | '+' | '?')) || (self.peek() == Some('{') && self.counted().is_some()) {
            return Err(format!("multiple repeat at position {}", self.pos));
        }
        Ok(quantifier)
    }

    /// A counted repetition at the cursor (`{m}`, `{m,}`, `{,n}`, `{m,n}`,
    /// `{,}`), as Python reads it: its Rust text and its length. Anything
    /// else starting with `{` is a literal brace.
    fn counted(&self) -> Option<(String, usize)> {
        let mut len = 1;
        let digits = |from: usize| {
            let mut end = from;
            while self.peek_at(end).is_some_and(|c| c.is_ascii_digit()) {
                end += 1;
            }
            end
        };
        let low_end = digits(len);
        let low: String = self.chars[self.pos + len..self.pos + low_end].iter().collect();
        len = low_end;
        let (high, comma) = if self.peek_at(len) == Some(',') {
            let high_end = digits(len + 1);
            let high: String = self.chars[self.pos + len + 1..self.pos + high_end].iter().collect();
            len = high_end;
            (high, true)
        } else {
            (low.clone(), false)
        };
        if self.peek_at(len) != Some('}') || (low.is_empty() && !comma) {
            return None;
        }
        let low = if low.is_empty() { "0".to_owned() } else { low };
        let text = match (comma, high.is_empty()) {
            (false, _) => format!("{{{low}}}"),
            (true, true) => format!("{{{low},}}"),
            (true, false) => format!("{{{low},{high}}}"),
        };
        Some((text, len + 1))
    }

    /// After `(`: a group, inline flags or a comment.
    fn group(&mut self, start: usize, at_start: bool) -> Result<Atom, String> {
        let refuse = |what: &str| {
            Err(format!("{what} at position {start} is not supported by Rust's regex (Warden matches in linear time)"))
        };
        let open = if self.peek() == Some('?') {
            self.pos += 1;
            if self.starts_with("P<") {
                let name_start = self.pos + 2;
                let Some(len) = self.chars[name_start..].iter().position(|&c| c == '>') else {
                    return Err(format!("unterminated group name at position {start}"));
                };
                let name: String = self.chars[name_start..name_start + len].iter().collect();
                if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
                    return Err(format!("bad group name {name:?} at position {start}"));
                }
                self.pos = name_start + len + 1;
                format!("(?P<{name}>")
            } else if self.starts_with("P=") {
                return refuse("the backreference (?P=...)");
            } else if self.starts_with("=") || self.starts_with("!") {
                return refuse("the look-ahead (?= / (?!");
            } else if self.starts_with("<=") || self.starts_with("<!") {
                return refuse("the look-behind (?<= / (?<!");
            } else if self.starts_with(">") {
                return refuse("the atomic group (?>");
            } else if self.starts_with("(") {
                return refuse("the conditional group (?(");
            } else if self.starts_with("#") {
                let Some(len) = self.chars[self.pos..].iter().position(|&c| c == ')') else {
                    return Err(format!("missing ) for the comment at position {start}"));
                };
                self.pos += len + 1;
                return Ok(Atom::Flags(String::new()));
            } else if self.starts_with(":") {
                self.pos += 1;
                "(?:".to_owned()
            } else {
                return self.flags(start, at_start);
            }
        } else {
            "(".to_owned()
        };
        self.enclosed(open, self.multiline)
    }

    /// The contents of a group and its `)`, in multi-line mode `multiline`.
    fn enclosed(&mut self, open: String, multiline: bool) -> Result<Atom, String> {
        let outer = std::mem::replace(&mut self.multiline, multiline);
        self.depth += 1;
        let inner = self.alternation(false)?;
        self.depth -= 1;
        self.multiline = outer;
        if self.peek() != Some(')') {
            return Err("missing ), unterminated group".into());
        }
        self.pos += 1;
        Ok(Atom::Group(open, inner))
    }

    /// `(?flags)` or `(?flags-flags:...)`, after `(?`.
    fn flags(&mut self, start: usize, at_start: bool) -> Result<Atom, String> {
        let (mut on, mut off, mut negative) = (String::new(), String::new(), false);
        loop {
            let Some(c) = self.peek() else { return Err(format!("missing ) after the flags at position {start}")) };
            self.pos += 1;
            match c {
                'i' | 'm' | 's' => (if negative { &mut off } else { &mut on }).push(c),
                'u' if !negative => {}
                'a' | 'L' | 'u' => return Err(format!("the flag '{c}' at position {start} has no Rust equivalent")),
                'x' => {
                    return Err(format!(
                        "the verbose flag 'x' at position {start} is not translated (rewrite the pattern without it)"
                    ));
                }
                '-' if !negative => negative = true,
                ')' if !negative => {
                    if !at_start || self.depth > 0 {
                        return Err(format!("global flags not at the start of the expression (position {start})"));
                    }
                    if on.contains('m') {
                        self.multiline = true;
                    }
                    return Ok(Atom::Flags(if on.is_empty() { String::new() } else { format!("(?{on})") }));
                }
                ':' => {
                    let multiline = if on.contains('m') {
                        true
                    } else if off.contains('m') {
                        false
                    } else {
                        self.multiline
                    };
                    let open = match (on.is_empty(), off.is_empty()) {
                        (true, true) => "(?:".to_owned(),
                        (false, true) => format!("(?{on}:"),
                        (_, false) => format!("(?{on}-{off}:"),
                    };
                    return self.enclosed(open, multiline);
                }
                other => return Err(format!("unknown extension '(?{other}' at position {start}")),
            }
        }
    }

    /// A character class, after `[`, in Rust syntax.
    fn class(&mut self, start: usize) -> Result<String, String> {
        let mut out = String::from("[");
        if self.peek() == Some('^') {
            self.pos += 1;
            out.push('^');
        }
        let mut first = true;
        loop {
            let Some(c) = self.peek() else { return Err(format!("unterminated character set at position {start}")) };
            if c == ']' && !first {
                self.pos += 1;
                out.push(']');
                return Ok(out);
            }
            first = false;
            let low = self.class_item()?;
            if self.peek() == Some('-') && self.peek_at(1).is_some_and(|next| next != ']') {
                self.pos += 1;
                let high = self.class_item()?;
                match (low, high) {
                    (ClassItem::Char(low), ClassItem::Char(high)) if low <= high => {
                        out.push_str(&literal(low));
                        out.push('-');
                        out.push_str(&literal(high));
                    }
                    _ => return Err(format!("bad character range in the set at position {start}")),
                }
            } else {
                match low {
                    ClassItem::Char(c) => out.push_str(&literal(c)),
                    ClassItem::Class(text) => out.push_str(&text),
                }
            }
        }
    }

    /// One character or class escape inside a set.
    fn class_item(&mut self) -> Result<ClassItem, String> {
        let Some(c) = self.peek() else { return Err("unterminated character set".into()) };
        self.pos += 1;
        if c != '\\' {
            return Ok(ClassItem::Char(c));
        }
        let escape_at = self.pos - 1;
        match self.peek() {
            Some(class @ ('d' | 'D' | 'w' | 'W' | 's' | 'S')) => {
                self.pos += 1;
                Ok(ClassItem::Class(format!("\\{class}")))
            }
            Some('b') => {
                self.pos += 1;
                Ok(ClassItem::Char('\u{8}'))
            }
            Some(_) => self.char_escape(escape_at).map(ClassItem::Char),
            None => Err("bad escape (end of pattern)".into()),
        }
    }

    /// After `\` outside a set.
    fn escape(&mut self) -> Result<String, String> {
        let escape_at = self.pos - 1;
        let Some(c) = self.peek() else { return Err("bad escape (end of pattern)".into()) };
        let text = match c {
            'd' | 'D' | 'w' | 'W' | 's' | 'S' | 'b' | 'B' | 'A' => format!("\\{c}"),
            'Z' | 'z' => r"\z".to_owned(),
            '1'..='9' if !self.octal_ahead() => {
                return Err(format!(
                    "the backreference \\{c} at position {escape_at} is not supported by Rust's regex (Warden matches in linear time)"
                ));
            }
            _ => return self.char_escape(escape_at).map(literal),
        };
        self.pos += 1;
        Ok(text)
    }

    /// Whether the digits after `\` form a three-digit octal escape.
    fn octal_ahead(&self) -> bool {
        let octal = |offset| self.peek_at(offset).is_some_and(|c: char| ('0'..='7').contains(&c));
        octal(0) && octal(1) && octal(2)
    }

    /// An escape that stands for one character, after `\`.
    fn char_escape(&mut self, escape_at: usize) -> Result<char, String> {
        let Some(c) = self.peek() else { return Err("bad escape (end of pattern)".into()) };
        self.pos += 1;
        let simple = match c {
            'n' => Some('\n'),
            't' => Some('\t'),
            'r' => Some('\r'),
            'f' => Some('\u{c}'),
            'v' => Some('\u{b}'),
            'a' => Some('\u{7}'),
            _ => None,
        };
        if let Some(simple) = simple {
            return Ok(simple);
        }
        let hex = |parser: &mut Parser, digits: usize| -> Result<char, String> {
            let text: String = parser.chars.iter().skip(parser.pos).take(digits).collect();
            if text.len() != digits || !text.chars().all(|c| c.is_ascii_hexdigit()) {
                return Err(format!("incomplete escape \\{c} at position {escape_at}"));
            }
            parser.pos += digits;
            let code = u32::from_str_radix(&text, 16).map_err(|err| err.to_string())?;
            char::from_u32(code)
                .ok_or_else(|| format!("the escape at position {escape_at} is not a Unicode scalar value"))
        };
        match c {
            'x' => hex(self, 2),
            'u' => hex(self, 4),
            'U' => hex(self, 8),
            '0'..='7' => {
                // Up to two more octal digits (outside sets, `\1`..`\7`
                // arrive here only with exactly two more).
                let mut code = c.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match self.peek().and_then(|d| d.to_digit(8)) {
                        Some(digit) => {
                            code = code * 8 + digit;
                            self.pos += 1;
                        }
                        None => break,
                    }
                }
                if code > 0o377 {
                    return Err(format!("octal escape value out of range at position {escape_at}"));
                }
                char::from_u32(code).ok_or_else(|| format!("bad octal escape at position {escape_at}"))
            }
            'N' => Err(format!("the named character escape \\N{{...}} at position {escape_at} is not translated")),
            c if c.is_ascii_alphanumeric() => Err(format!("bad escape \\{c} at position {escape_at}")),
            c => Ok(c),
        }
    }
}

/// An item of a character set.
enum ClassItem {
    Char(char),
    /// `\d`, `\w`, `\s` and their negations.
    Class(String),
}

/// `c` as a Rust regex literal (escaped where it is special; control
/// characters as `\x{…}`).
fn literal(c: char) -> String {
    if c.is_control() {
        return format!("\\x{{{:X}}}", u32::from(c));
    }
    let mut out = String::new();
    escape_into(c.encode_utf8(&mut [0; 4]), &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(pattern: &str) -> String {
        translate(pattern).unwrap_or_else(|err| panic!("{pattern:?}: {err}"))
    }

    fn err(pattern: &str) -> String {
        translate(pattern).err().unwrap_or_else(|| panic!("{pattern:?} was accepted"))
    }

    #[test]
    fn common_patterns_carry_over() {
        assert_eq!(ok(r"SELECT\s+\*\s+FROM"), r"SELECT\s+\*\s+FROM");
        assert_eq!(ok(r"(?P<table>\w+)\.(?:csv|tsv)"), r"(?P<table>\w+)\.(?:csv|tsv)");
        assert_eq!(ok(r"\ADROP\Z"), r"\ADROP\z");
        assert_eq!(ok(r"a{2,3}b{,4}c{5}d{1,}?"), r"a{2,3}b{0,4}c{5}d{1,}?");
        assert_eq!(ok(r"x{y}{}"), r"x\{y\}\{\}");
        assert_eq!(ok(r"\<tag\>#\ \-"), r"<tag>\# \-");
        assert_eq!(ok(r"[a-z\d_\-.\]&&~]"), r"[a-z\d_\-\.\]\&\&\~]");
        assert_eq!(ok(r"[]x][^]a-]"), r"[\]x][^\]a\-]");
        assert_eq!(ok(r"\x41\u00e9\101\0\n[\b\1]"), r"AéA\x{0}\x{A}[\x{8}\x{1}]");
        assert_eq!(ok(r"(?i)select(?#note)(?s:.)"), r"(?i)select(?s:.)");
        assert_eq!(ok(r"(?im)^a$"), r"(?im)^a$");
        assert_eq!(ok(r"(?m:x$)y"), r"(?m:x$)y");
    }

    #[test]
    fn dollar_only_at_the_end() {
        assert_eq!(ok(r"^SELECT .*;?$"), r"^SELECT .*;?(?:\n?\z)");
        assert_eq!(ok(r"(a$|b$)|c$"), r"(a(?:\n?\z)|b(?:\n?\z))|c(?:\n?\z)");
        assert!(err(r"a$b").contains("'$' is followed by more pattern"));
        assert!(err(r"(a$)b").contains("'$'"));
        assert!(err(r"(a$)*").contains("'$'"));
    }

    #[test]
    fn unsupported_features_are_named() {
        for (pattern, what) in [
            (r"SELECT(?!.*LIMIT)", "look-ahead"),
            (r"(?=x)", "look-ahead"),
            (r"(?<=a)b", "look-behind"),
            (r"(?<!a)b", "look-behind"),
            (r"(a)\1", "backreference \\1"),
            (r"(?P<q>a)(?P=q)", "backreference"),
            (r"(?>a+)b", "atomic group"),
            (r"a++", "possessive"),
            (r"(a)?(?(1)b|c)", "conditional"),
            (r"(?x) a b", "verbose"),
            (r"(?a)\w", "flag 'a'"),
            (r"a(?i)b", "global flags not at the start"),
            (r"\N{DASH}", "named character"),
        ] {
            assert!(err(pattern).contains(what), "{pattern}: {}", err(pattern));
        }
    }

    #[test]
    fn python_errors_stay_errors() {
        for pattern in [r"[invalid(", r"*a", r"a**", r"(a", r"a)", r"[b-a]", r"\q", r"\x4", "a\\", r"(?<n>a)", r"^*"] {
            assert!(translate(pattern).is_err(), "{pattern}");
        }
    }

    #[test]
    fn results_compile() {
        for pattern in [r"(?i)drop\s+table\s+\w+;?$", r"[\s\S]{0,10}", r"\d{3}-\d{2}-\d{4}", r"[^\W\d]+"] {
            regex::Regex::new(&ok(pattern)).unwrap();
        }
    }
}
