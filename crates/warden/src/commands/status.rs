//! `warden status`: what a running Warden is doing, in the terminal: the
//! dashboard's overview, asked over the control socket (or the page).

use std::process::ExitCode;

use serde_json::Value;
use warden_approval::channels::socket::Request;

use crate::cli::StatusArgs;
use crate::table::table;

/// Asks the running Warden and prints its answer.
pub async fn run(args: StatusArgs) -> anyhow::Result<ExitCode> {
    let answer = super::approvals::ask(&args.socket, &Request::Status).await?;
    let status = &answer["status"];
    if args.json {
        println!("{status}");
    } else {
        print!("{}", render(status));
    }
    Ok(ExitCode::SUCCESS)
}

/// The status as text: a summary line, then servers, clients, the tools
/// of the last 5 minutes and the refusals since start.
pub fn render(status: &Value) -> String {
    let text = |value: &Value| match value {
        Value::String(text) => text.clone(),
        Value::Null => "-".to_owned(),
        other => other.to_string(),
    };
    let count = |value: &Value| value.as_u64().unwrap_or(0);
    let clients = status["clients"].as_array().map_or(&[][..], Vec::as_slice);
    let servers = status["servers"].as_array().map_or(&[][..], Vec::as_slice);
    let rates = &status["rates"];
    let mut out = format!(
        "Warden up {} · {} · {} requests/s, {} tool calls/s (last {} s) · {}\n",
        duration(count(&status["uptimeSecs"])),
        plural(clients.len() as u64, "session"),
        rates["requestsPerSecond"].as_f64().unwrap_or(0.0),
        rates["callsPerSecond"].as_f64().unwrap_or(0.0),
        count(&rates["spanSecs"]),
        plural(count(&status["approvalsPending"]), "approval pending"),
    );

    out.push('\n');
    let rows: Vec<[String; 5]> = servers
        .iter()
        .map(|server| {
            [
                text(&server["name"]),
                text(&server["state"]),
                count(&server["connections"]).to_string(),
                count(&server["restarts"]).to_string(),
                text(&server["sandbox"]),
            ]
        })
        .collect();
    out.push_str(&table(["SERVER", "STATE", "CONNECTIONS", "RESTARTS", "SANDBOX"], &rows));
    for server in servers {
        if let Some(reason) = server["reason"].as_str() {
            out.push_str(&format!(
                "\n{} is {}: {}\n",
                text(&server["name"]),
                text(&server["state"]),
                reason.trim_end()
            ));
        }
    }

    if !clients.is_empty() {
        out.push('\n');
        let rows: Vec<[String; 4]> = clients
            .iter()
            .map(|client| {
                [
                    text(&client["client"]),
                    text(&client["front"]),
                    text(&client["protocolVersion"]),
                    text(&client["principal"]),
                ]
            })
            .collect();
        out.push_str(&table(["CLIENT", "FRONT", "PROTOCOL", "TOKEN"], &rows));
    }

    let window = &status["tools"]["5m"];
    let tools = window["tools"].as_array().map_or(&[][..], Vec::as_slice);
    out.push_str(&format!("\nTools, last {}:\n", duration(count(&window["spanSecs"]))));
    if tools.is_empty() {
        out.push_str("no tool calls\n");
    } else {
        let rows: Vec<[String; 7]> = tools
            .iter()
            .map(|tool| {
                let ms = |key: &str| format!("{:.1} ms", tool[key].as_f64().unwrap_or(0.0));
                [
                    text(&tool["server"]),
                    text(&tool["tool"]),
                    count(&tool["calls"]).to_string(),
                    format!("{:.1}%", tool["errorRate"].as_f64().unwrap_or(0.0) * 100.0),
                    ms("p50Ms"),
                    ms("p95Ms"),
                    ms("p99Ms"),
                ]
            })
            .collect();
        out.push_str(&table(["SERVER", "TOOL", "CALLS", "ERRORS", "P50", "P95", "P99"], &rows));
    }

    let security = &status["security"];
    let mut rows: Vec<[String; 3]> = Vec::new();
    for (key, what) in [("policy", "decision"), ("limits", "decision")] {
        for row in security[key].as_array().into_iter().flatten() {
            rows.push([text(&row[what]), text(&row["rule"]), count(&row["count"]).to_string()]);
        }
    }
    for row in security["sandbox"].as_array().into_iter().flatten() {
        let rule = format!("sandbox.{} ({})", text(&row["kind"]), text(&row["server"]));
        rows.push(["deny".to_owned(), rule, count(&row["count"]).to_string()]);
    }
    for row in security["pinDrift"].as_array().into_iter().flatten() {
        rows.push(["drift".to_owned(), format!("pins ({})", text(&row["server"])), count(&row["count"]).to_string()]);
    }
    out.push_str("\nRefused, escalated or drifted since start:\n");
    if rows.is_empty() {
        out.push_str("nothing\n");
    } else {
        out.push_str(&table(["DECISION", "RULE", "COUNT"], &rows));
    }
    out
}

/// `3 sessions`, `1 session`.
fn plural(count: u64, what: &str) -> String {
    match count {
        1 => format!("1 {what}"),
        _ => match what.split_once(' ') {
            Some((noun, rest)) => format!("{count} {noun}s {rest}"),
            None => format!("{count} {what}s"),
        },
    }
}

/// `45 s`, `12 min`, `3 h 05 min`.
fn duration(seconds: u64) -> String {
    match seconds {
        0..60 => format!("{seconds} s"),
        60..3600 => format!("{} min", seconds / 60),
        _ => format!("{} h {:02} min", seconds / 3600, seconds % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_overview_reads_as_text() {
        let status = json!({
            "uptimeSecs": 3725,
            "servers": [
                {"name": "fx", "state": "ready", "connections": 1, "restarts": 0, "sandbox": "sandboxed: bwrap"},
                {"name": "db", "state": "down", "connections": 1, "restarts": 2, "reason": "exited with 1; its stderr ends with:\nboom"},
            ],
            "clients": [{"front": "stdio", "client": "claude-code/2.1.0", "protocolVersion": "2025-06-18"}],
            "rates": {"spanSecs": 60, "requestsPerSecond": 2.5, "callsPerSecond": 1.0},
            "tools": {"5m": {"spanSecs": 300, "tools": [
                {"server": "fx", "tool": "echo", "calls": 12, "errors": 1, "errorRate": 0.083, "p50Ms": 0.75, "p95Ms": 2.4, "p99Ms": 9.0},
            ]}},
            "security": {"policy": [{"decision": "deny", "rule": "no-drop", "count": 3}], "limits": [], "sandbox": [{"server": "db", "kind": "network", "count": 1}], "pinDrift": []},
            "approvalsPending": 1,
        });
        let text = render(&status);
        assert!(
            text.starts_with(
                "Warden up 1 h 02 min · 1 session · 2.5 requests/s, 1 tool calls/s (last 60 s) · 1 approval pending\n"
            ),
            "{text}"
        );
        assert!(text.contains("fx      ready  1            0         sandboxed: bwrap"), "{text}");
        assert!(text.contains("db is down: exited with 1; its stderr ends with:\nboom"), "{text}");
        assert!(text.contains("claude-code/2.1.0"), "{text}");
        assert!(text.contains("Tools, last 5 min:"), "{text}");
        assert!(text.contains("echo  12     8.3%    0.8 ms  2.4 ms  9.0 ms"), "{text}");
        assert!(text.contains("deny      no-drop               3"), "{text}");
        assert!(text.contains("sandbox.network (db)"), "{text}");
    }
}
