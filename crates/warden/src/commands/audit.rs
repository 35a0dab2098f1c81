//! `warden audit`: verify the hash chain, tail the log, or search it.

use std::io::Write;
use std::process::ExitCode;

use anyhow::anyhow;
use serde_json::Value;
use warden_audit::{Query, TailFilter, query_time};

use crate::cli::AuditCommand;

/// Verifies or tails.
pub fn run(command: AuditCommand) -> anyhow::Result<ExitCode> {
    match command {
        AuditCommand::Verify { file } => {
            let report = warden_audit::verify(&file)?;
            match report.first_broken {
                None => {
                    println!("{}: {} records, chain intact", file.display(), report.records);
                    Ok(ExitCode::SUCCESS)
                }
                Some(broken) => {
                    let seq = broken.seq.map(|seq| format!(" (seq {seq})")).unwrap_or_default();
                    println!("{}: broken at line {}{seq}: {}", file.display(), broken.line, broken.reason);
                    Ok(ExitCode::FAILURE)
                }
            }
        }
        AuditCommand::Tail { file, follow, decision, server, tool } => {
            let filter = TailFilter { decision, server, tool };
            let mut stdout = std::io::stdout().lock();
            // Stop quietly when the reader goes away (`| head`).
            warden_audit::tail(&file, &filter, follow, &mut |line| writeln!(stdout, "{line}").is_ok())?;
            Ok(ExitCode::SUCCESS)
        }
        AuditCommand::Query { file, since, until, server, tool, decision, rule, client, limit, json } => {
            let time =
                |text: Option<String>| text.map(|text| query_time(&text).map_err(|why| anyhow!(why))).transpose();
            let query = Query { since: time(since)?, until: time(until)?, server, tool, decision, rule, client };
            let found = warden_audit::recent(&file, &query, limit)?;
            let mut stdout = std::io::stdout().lock();
            if json {
                for (line, _) in &found {
                    if writeln!(stdout, "{line}").is_err() {
                        break;
                    }
                }
            } else {
                let _ = stdout.write_all(table(found.iter().map(|(_, record)| record)).as_bytes());
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The records as a table: time, server, name, verdict, rule, outcome,
/// client; then how many.
fn table<'a>(records: impl Iterator<Item = &'a Value>) -> String {
    const HEADER: [&str; 7] = ["TIME", "SERVER", "NAME", "DECISION", "RULE", "OUTCOME", "CLIENT"];
    let text = |record: &Value, path: &[&str]| {
        let mut value = record;
        for key in path {
            value = &value[*key];
        }
        match value {
            Value::String(text) => text.clone(),
            Value::Null => "-".to_owned(),
            other => other.to_string(),
        }
    };
    let rows: Vec<[String; 7]> = records
        .map(|record| {
            let client = match (text(record, &["principal"]), text(record, &["client"])) {
                (principal, client) if principal == "-" => client,
                (principal, client) if client == "-" => principal,
                (principal, client) => format!("{principal} ({client})"),
            };
            [
                text(record, &["time"]),
                text(record, &["server"]),
                text(record, &["name"]),
                text(record, &["decision", "verdict"]),
                text(record, &["decision", "rule"]),
                text(record, &["outcome"]),
                client,
            ]
        })
        .collect();
    let mut out = crate::table::table(HEADER, &rows);
    out.push_str(&format!("{} record{}\n", rows.len(), if rows.len() == 1 { "" } else { "s" }));
    out
}
