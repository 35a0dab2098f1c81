//! The digest that binds an approval to the exact arguments of its call.

/// Hex SHA-256 of the canonical form of `arguments` (JSON text): object
/// keys sorted, no whitespace (as pins canonicalise tool definitions).
/// Arguments that are not JSON are hashed as they are; none hash as `null`.
/// The same digest as the audit records' `argumentsDigest`.
pub fn args_digest(arguments: Option<&str>) -> String {
    warden_audit::arguments_digest(arguments)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_order_and_whitespace_do_not_change_the_digest_but_values_do() {
        let a = args_digest(Some(r#"{"b": 1, "a": {"y": [1, 2], "x": "s"}}"#));
        let b = args_digest(Some(r#"{"a":{"x":"s","y":[1,2]},"b":1}"#));
        assert_eq!(a, b);
        assert_ne!(a, args_digest(Some(r#"{"a":{"x":"s","y":[2,1]},"b":1}"#)));
        assert_ne!(a, args_digest(None));
        assert_eq!(a.len(), 64);
    }
}
