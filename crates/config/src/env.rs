//! `${VAR}` expansion.

/// Expands `${VAR}` and `${VAR:-default}` in `text` with `lookup`; `$$` stands for
/// a literal `$`. A `$` not followed by `{` or `$` is kept as it is.
///
/// Returns the name of the first variable that is unset and has no default.
pub fn expand(text: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix('$') {
            out.push('$');
            rest = tail;
        } else if let Some(body) = after.strip_prefix('{') {
            let Some(end) = body.find('}') else {
                return Err(format!("unterminated ${{ in {text:?}"));
            };
            let (name, default) = match body[..end].split_once(":-") {
                Some((name, default)) => (name, Some(default)),
                None => (&body[..end], None),
            };
            match lookup(name).filter(|value| !value.is_empty() || default.is_none()) {
                Some(value) => out.push_str(&value),
                None => match default {
                    Some(default) => out.push_str(default),
                    None => return Err(format!("environment variable {name} is not set")),
                },
            }
            rest = &body[end + 1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::expand;

    fn env(name: &str) -> Option<String> {
        match name {
            "HOME" => Some("/home/u".into()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    #[test]
    fn expands_variables_defaults_and_escapes() {
        assert_eq!(expand("${HOME}/src", &env).unwrap(), "/home/u/src");
        assert_eq!(expand("${MISSING:-x}-$$-$5", &env).unwrap(), "x-$-$5");
        assert_eq!(expand("${EMPTY:-fallback}", &env).unwrap(), "fallback");
        assert_eq!(expand("${EMPTY}", &env).unwrap(), "");
        assert_eq!(expand("${MISSING}", &env).unwrap_err(), "environment variable MISSING is not set");
        assert!(expand("${HOME", &env).is_err());
    }
}
