//! SQL arguments (the first byte picks the dialect): analysis ends in facts
//! or an error within its limits, never a crash, a stack overflow or a
//! parser panic; and the same text gives the same facts twice.
#![no_main]

use libfuzzer_sys::fuzz_target;
use warden_sql::{Dialect, analyze};

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else { return };
    let Ok(sql) = std::str::from_utf8(rest) else { return };
    let dialect = Dialect::ALL[usize::from(first) % Dialect::ALL.len()];
    let once = analyze(sql, dialect);
    if let Err(warden_sql::SqlError::Internal(why)) = &once {
        panic!("the SQL analysis failed inside ({why}) on {dialect:?} {sql:?}");
    }
    let twice = analyze(sql, dialect);
    assert_eq!(format!("{once:?}"), format!("{twice:?}"), "not deterministic on {sql:?}");
});
