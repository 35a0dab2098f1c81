//! Warden's name globs (globset syntax: `*`, `?`, `[…]`, `[!…]`, `{a,b}`)
//! written from exact names and from Python's `fnmatch` patterns.

/// A glob matching exactly `name`: glob characters are put in brackets
/// (`[*]`), which reads the same whether or not backslash escapes are on.
pub(crate) fn literal(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        push_literal(c, &mut out);
    }
    out
}

fn push_literal(c: char, out: &mut String) {
    match c {
        '*' | '?' | '[' | ']' | '{' | '}' | '\\' => {
            out.push('[');
            out.push(c);
            out.push(']');
        }
        _ => out.push(c),
    }
}

/// The glob for a Python `fnmatch` pattern (as `fnmatch.fnmatch` reads it on
/// POSIX: case-sensitive, the whole name). `*` and `?` carry over; a set
/// `[…]` or `[!…]` carries over unless it needs Python-only readings (a
/// leading `^` as a literal, a backslash, an empty range), which are refused;
/// `{`, `}` and an unclosed `[` are literals in Python and escaped here.
pub(crate) fn from_fnmatch(pattern: &str) -> Result<String, String> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::with_capacity(pattern.len() + 4);
    let mut i = 0;
    // `**` is the same as `*` in fnmatch; globset gives it a meaning of its
    // own next to `/`, so runs of stars are written as one.
    let mut after_star = false;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        let star = c == '*';
        match c {
            '*' if after_star => {}
            '*' | '?' => out.push(c),
            '[' => {
                // Python's scan for the end of the set.
                let mut j = i;
                if chars.get(j) == Some(&'!') {
                    j += 1;
                }
                if chars.get(j) == Some(&']') {
                    j += 1;
                }
                while j < chars.len() && chars[j] != ']' {
                    j += 1;
                }
                if j >= chars.len() {
                    push_literal('[', &mut out);
                } else {
                    out.push_str(&set(&chars[i..j])?);
                    i = j + 1;
                }
            }
            _ => push_literal(c, &mut out),
        }
        after_star = star;
    }
    Ok(out)
}

/// The glob for the fnmatch set with contents `body` (between the brackets).
fn set(body: &[char]) -> Result<String, String> {
    let text: String = body.iter().collect();
    let (negated, rest) = match body.split_first() {
        Some(('!', rest)) => (true, rest),
        _ => (false, body),
    };
    if rest.contains(&'\\') {
        return Err(format!(
            "the set [{text}] holds a backslash, which fnmatch reads literally and globs as an escape"
        ));
    }
    if !negated && rest == ['^'] {
        return Ok("^".into());
    }
    if !negated && rest.first() == Some(&'^') {
        return Err(format!(
            "the set [{text}] starts with '^', a literal for fnmatch but a negation for Warden's globs"
        ));
    }
    for k in 1..rest.len().saturating_sub(1) {
        if rest[k] == '-' && rest[k - 1] > rest[k + 1] {
            return Err(format!("the set [{text}] has the empty range {}-{}", rest[k - 1], rest[k + 1]));
        }
    }
    let mut out = String::from("[");
    if negated {
        out.push('!');
    }
    out.extend(rest);
    out.push(']');
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_are_bracketed() {
        assert_eq!(literal("read_file"), "read_file");
        assert_eq!(literal("a*b?[c]{d}\\"), "a[*]b[?][[]c[]][{]d[}][\\]");
    }

    #[test]
    fn fnmatch_patterns() {
        assert_eq!(from_fnmatch("*_database").unwrap(), "*_database");
        assert_eq!(from_fnmatch("query_*").unwrap(), "query_*");
        assert_eq!(from_fnmatch("a**b?").unwrap(), "a*b?");
        assert_eq!(from_fnmatch("[!a-c]x[]y]").unwrap(), "[!a-c]x[]y]");
        assert_eq!(from_fnmatch("{a,b}[x").unwrap(), "[{]a,b[}][[]x");
        assert_eq!(from_fnmatch("[^]").unwrap(), "^");
        assert!(from_fnmatch("[^a]").unwrap_err().contains("negation"));
        assert!(from_fnmatch("[z-a]").unwrap_err().contains("empty range z-a"));
        assert!(from_fnmatch("[\\]").unwrap_err().contains("backslash"));
    }
}
