//! Input that must be rejected, and input crafted to break the parser: every call
//! must return `Ok` or `Err`, never panic or overflow the stack.

use std::time::{Duration, Instant};

use warden_sql::{Dialect, MAX_CHAIN, MAX_INPUT_BYTES, MAX_RECURSION_DEPTH, MAX_STATEMENTS, SqlError, analyze};

fn err(sql: &str, dialect: Dialect) -> SqlError {
    match analyze(sql, dialect) {
        Ok(facts) => panic!("{dialect}: {:?} parsed: {facts:?}", preview(sql)),
        Err(e) => e,
    }
}

fn preview(sql: &str) -> String {
    sql.chars().take(80).collect()
}

#[test]
fn empty_input_and_only_comments_are_errors() {
    for sql in
        ["", " ", "\n\t\r\n", "-- just a comment", "/* block */", "-- a\n/* b */\n  ", ";", " ; ;\n;", "/* a */ ; -- b"]
    {
        for dialect in Dialect::ALL {
            assert_eq!(err(sql, dialect), SqlError::Empty, "{dialect}: {sql:?}");
        }
    }
}

#[test]
fn unparseable_input_is_an_error() {
    let cases = [
        "SELEC 1",
        "SELECT",
        "DROP",
        "SELECT * FROM",
        "SELECT 1 +",
        "hello world",
        "DELETE t WHERE",
        "SELECT 1; garbage",
        "SELECT (1",
        "SELECT 1)",
        "SELECT 'unterminated",
        "SELECT \"unterminated",
        "SELECT 1 /* unterminated comment",
        "\u{0}\u{1}\u{2}",
        "🙂",
        "{\"query\": \"SELECT 1\"}",
    ];
    for sql in cases {
        let e = err(sql, Dialect::Generic);
        assert!(matches!(e, SqlError::Parse(_) | SqlError::Tokenize(_)), "{sql:?}: {e:?}");
        assert!(!e.to_string().is_empty());
    }
}

#[test]
fn input_size_is_capped() {
    let huge = format!("SELECT 1{}", " ".repeat(2 * 1024 * 1024));
    assert_eq!(err(&huge, Dialect::Generic), SqlError::TooLarge { len: huge.len(), max: MAX_INPUT_BYTES });
    let at_limit = format!("SELECT 1 LIMIT 1{}", " ".repeat(MAX_INPUT_BYTES - 16));
    assert_eq!(at_limit.len(), MAX_INPUT_BYTES);
    assert!(analyze(&at_limit, Dialect::Generic).is_ok_and(|f| !f.select_without_limit()));
    let over = format!("{at_limit} ");
    assert!(matches!(err(&over, Dialect::Generic), SqlError::TooLarge { .. }));
}

#[test]
fn deep_parentheses_are_an_error() {
    let n = 10_000;
    let open = "(".repeat(n);
    assert_eq!(err(&open, Dialect::Generic), SqlError::TooDeep { limit: MAX_RECURSION_DEPTH });
    let balanced = format!("SELECT {open}1{}", ")".repeat(n));
    for dialect in Dialect::ALL {
        assert_eq!(err(&balanced, dialect), SqlError::TooDeep { limit: MAX_RECURSION_DEPTH }, "{dialect}");
    }
}

#[test]
fn moderate_nesting_parses() {
    let parens = format!("SELECT {}1{} FROM t LIMIT 1", "(".repeat(20), ")".repeat(20));
    assert!(analyze(&parens, Dialect::Generic).is_ok());
    let subqueries = format!("SELECT * FROM {}t{}", "(SELECT * FROM ".repeat(5), ") s".repeat(5));
    assert!(analyze(&subqueries, Dialect::Postgres).is_ok_and(|f| f.select_without_limit()));
    let realistic = "WITH recent AS (SELECT * FROM orders WHERE created_at > now() - interval '7 days') \
        SELECT c.region, sum(CASE WHEN r.status = 'paid' THEN r.amount ELSE 0 END) AS paid \
        FROM recent r JOIN customers c ON c.id = r.customer_id \
        WHERE EXISTS (SELECT 1 FROM flags f WHERE f.customer_id = c.id AND f.kind IN \
          (SELECT kind FROM kinds WHERE active AND (weight > 1 OR (weight = 1 AND NOT legacy)))) \
        GROUP BY c.region HAVING count(*) > 10 ORDER BY paid DESC LIMIT 20";
    assert!(analyze(realistic, Dialect::Postgres).is_ok_and(|f| !f.select_without_limit()));
}

/// Patterns that recurse in the parser, repeated `n` times.
fn nested(n: usize) -> Vec<String> {
    vec![
        format!("SELECT {}1{}", "(".repeat(n), ")".repeat(n)),
        format!("SELECT * FROM {}t{}", "(".repeat(n), ")".repeat(n)),
        format!("SELECT * FROM t WHERE a IN {}1{}", "(SELECT * FROM t WHERE a IN (".repeat(n), "))".repeat(n)),
        format!("SELECT {}1{}", "CASE WHEN ".repeat(n), " THEN 1 END".repeat(n)),
        format!("SELECT {}1", "NOT ".repeat(n)),
        format!("SELECT {}1", "- ".repeat(n)),
        format!("SELECT {}1{}", "EXISTS (SELECT ".repeat(n), ")".repeat(n)),
        format!("SELECT {}1{}", "f(".repeat(n), ")".repeat(n)),
        format!("SELECT {}1{}", "ARRAY[".repeat(n), "]".repeat(n)),
        format!("SELECT {}1{}", "CAST(".repeat(n), " AS INT)".repeat(n)),
        format!("SELECT CAST(1 AS {}INT{})", "ARRAY<".repeat(n), ">".repeat(n)),
        format!("{}SELECT 1{}", "WITH a AS (".repeat(n), ")".repeat(n)),
        format!("SELECT * FROM {}t{}", "(t JOIN ".repeat(n), " ON 1=1)".repeat(n)),
        format!("SELECT {}1{}", "1 IN (".repeat(n), ")".repeat(n)),
        format!("SELECT {}1", "INTERVAL ".repeat(n)),
        format!("{}SELECT 1", "INSERT INTO t ".repeat(n)),
        format!("SELECT 1{}", " = ANY(SELECT 1".repeat(n)),
        format!("SELECT {}1", "x -> ".repeat(n)),
        format!("SELECT {}", "(SELECT ".repeat(n)),
        format!("SELECT {}", "[".repeat(n)),
        format!("SELECT {}", "{".repeat(n)),
        format!("SELECT {}1", "~".repeat(n)),
        format!("SELECT {}", "CASE ".repeat(n)),
        "/*".repeat(n),
        format!("SELECT 1 {}", "/* ".repeat(n)),
    ]
}

/// Patterns the parser builds in a loop into a tree as deep as the chain.
fn chains(n: usize) -> Vec<String> {
    vec![
        format!("SELECT 1{}", "+1".repeat(n)),
        format!("SELECT * FROM t WHERE {}", vec!["a=1"; n].join(" AND ")),
        format!("SELECT * FROM t WHERE {}", vec!["a=1"; n].join(" OR ")),
        vec!["SELECT 1"; n].join(" UNION "),
        vec!["SELECT 1, 2"; n].join(" UNION ALL "),
        vec!["(SELECT 1, 2)"; n].join(" EXCEPT "),
        format!("SELECT 1{}", " IS NULL".repeat(n)),
        format!("SELECT 1{}", "::int".repeat(n)),
        format!("SELECT a{}", "[1]".repeat(n)),
        format!("SELECT a{}", ".b".repeat(n)),
        format!("SELECT a{}", "->'b'".repeat(n)),
        format!("SELECT 'a'{}", " || 'a'".repeat(n)),
        format!("SELECT a{}", " COLLATE x".repeat(n)),
        format!("SELECT 1 FROM t{}", " JOIN t ON 1=1".repeat(n)),
        format!("SELECT 1{}", ", 1".repeat(n)),
        format!("INSERT INTO t VALUES {}", vec!["(1, -2, 'x')"; n].join(", ")),
        format!("SELECT 1{}", ";SELECT 1".repeat(n)),
    ]
}

fn run_all(inputs: &[String], dialects: &[Dialect]) {
    for sql in inputs {
        for &dialect in dialects {
            let started = Instant::now();
            let result = analyze(sql, dialect);
            let took = started.elapsed();
            // Generous: this is a debug build on a shared machine.
            assert!(took < Duration::from_secs(20), "{dialect}: {:?} took {took:?}", preview(sql));
            if let Err(e) = &result {
                assert!(!e.to_string().is_empty());
            }
        }
    }
}

#[test]
fn deep_nesting_never_overflows_the_stack() {
    for n in [MAX_RECURSION_DEPTH - 1, MAX_RECURSION_DEPTH, MAX_RECURSION_DEPTH + 1, 1_000] {
        run_all(&nested(n), &Dialect::ALL);
    }
    for sql in nested(10_000) {
        let e = err(&sql, Dialect::Generic);
        let expected = matches!(e, SqlError::TooDeep { .. } | SqlError::TooComplex { .. })
            || matches!(e, SqlError::Parse(_) | SqlError::Tokenize(_));
        assert!(expected, "{:?}: {e:?}", preview(&sql));
    }
    run_all(&nested(50_000), &[Dialect::Generic, Dialect::MsSql]);
}

#[test]
fn long_chains_are_capped() {
    run_all(&chains(MAX_CHAIN / 4), &[Dialect::Generic, Dialect::Postgres, Dialect::MySql]);
    run_all(&chains(100_000), &[Dialect::Generic, Dialect::Postgres]);
    for sql in chains(20_000).iter().take(13) {
        assert_eq!(err(sql, Dialect::Generic), SqlError::TooComplex { limit: MAX_CHAIN }, "{:?}", preview(sql));
    }
    // Long lists are not chains.
    let list = format!("SELECT 1{} LIMIT 1", ", 1".repeat(100_000));
    assert!(analyze(&list, Dialect::Generic).is_ok_and(|f| !f.select_without_limit()));
    let rows = format!("INSERT INTO t VALUES {}", vec!["(1, -2, 'x', NULL)"; 20_000].join(", "));
    assert!(analyze(&rows, Dialect::Postgres).is_ok());
    let in_list = format!("DELETE FROM t WHERE id IN ({})", vec!["42"; 50_000].join(","));
    assert!(analyze(&in_list, Dialect::Generic).is_ok_and(|f| !f.delete_without_where()));
    // Chains below the cap parse.
    let ors = format!("SELECT * FROM t WHERE {} LIMIT 5", vec!["id = 1"; 1_000].join(" OR "));
    assert!(analyze(&ors, Dialect::Generic).is_ok_and(|f| !f.select_without_limit()));
}

#[test]
fn statement_count_is_capped() {
    let at_limit = vec!["SELECT 1"; MAX_STATEMENTS].join(";");
    assert!(analyze(&at_limit, Dialect::Generic).is_ok_and(|f| f.statements.len() == MAX_STATEMENTS));
    let with_empty_ones = format!("{at_limit};;; ;\n-- done\n;");
    assert!(analyze(&with_empty_ones, Dialect::Generic).is_ok_and(|f| f.statements.len() == MAX_STATEMENTS));
    let over = format!("{at_limit}; DROP TABLE users");
    assert_eq!(err(&over, Dialect::Generic), SqlError::TooManyStatements { limit: MAX_STATEMENTS });
    let many = "SELECT 1;".repeat(100_000);
    assert_eq!(err(&many, Dialect::Generic), SqlError::TooManyStatements { limit: MAX_STATEMENTS });
}

/// A small deterministic generator (xorshift), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn random_token_soup_never_panics() {
    const PIECES: &[&str] = &[
        "SELECT", "FROM", "WHERE", "LIMIT", "UNION", "WITH", "AS", "DELETE", "UPDATE", "SET", "INSERT", "INTO",
        "VALUES", "DROP", "TABLE", "CASE", "WHEN", "THEN", "END", "NOT", "AND", "OR", "IN", "EXISTS", "JOIN", "ON",
        "TOP", "FETCH", "FIRST", "ROWS", "ONLY", "OFFSET", "ALL", "NULL", "(", ")", "[", "]", "{", "}", ",", ";", ".",
        "*", "+", "-", "=", "<", ">", "::", "->", "||", "'s'", "\"q\"", "`b`", "$1", "?", ":x", "@v", "1", "2.5", "t",
        "a", "--c\n", "/*c*/", "/*", "'", "\"", "`", "$$", "\\", "é", "\u{0}", "\n", " ",
    ];
    let mut rng = Rng(0x5eed_cafe_f00d_1234);
    for round in 0..3_000 {
        let len = 1 + rng.below(if round % 100 == 0 { 3_000 } else { 40 });
        let mut sql = String::new();
        for _ in 0..len {
            sql.push_str(PIECES[rng.below(PIECES.len())]);
            if rng.below(3) > 0 {
                sql.push(' ');
            }
        }
        let dialect = Dialect::ALL[rng.below(Dialect::ALL.len())];
        let _ = analyze(&sql, dialect);
    }
}

#[test]
fn random_characters_never_panic() {
    let mut rng = Rng(0x0123_4567_89ab_cdef);
    for _ in 0..2_000 {
        let len = rng.below(64);
        let sql: String = (0..len)
            .map(|_| match rng.below(4) {
                0 => char::from_u32(rng.below(0x80) as u32).unwrap_or(' '),
                1 => ['(', ')', '\'', '"', '`', ';', '-', '/', '*', '$', '[', ']'][rng.below(12)],
                2 => char::from_u32(rng.below(0x11_0000) as u32).unwrap_or('x'),
                _ => ['S', 'E', 'L', 'C', 'T', ' ', '1', 'a'][rng.below(8)],
            })
            .collect();
        let _ = analyze(&sql, Dialect::ALL[rng.below(Dialect::ALL.len())]);
    }
}

/// In optimized builds the parse runs on the caller's thread: hostile input must fit
/// in the documented ~1 MiB of stack. (`cargo test --release -p warden-sql`.)
#[cfg(not(debug_assertions))]
#[test]
fn optimized_builds_fit_in_one_mebibyte_of_stack() {
    let worker = std::thread::Builder::new().stack_size(1024 * 1024).spawn(|| {
        for n in [MAX_RECURSION_DEPTH, 10_000] {
            run_all(&nested(n), &Dialect::ALL);
        }
        run_all(&chains(MAX_CHAIN), &Dialect::ALL);
        run_all(&chains(100_000), &[Dialect::Generic]);
    });
    assert!(worker.is_ok_and(|w| w.join().is_ok()));
}
