//! End to end: profiles hide components at list time and block them at call
//! time, reload live, and the inspection commands show the same view.

mod support;

use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};
use support::{Client, fixture_bin, run_warden as warden, scratch_dir, warden_bin};

/// Two fixture servers; `safe` shows a few of `fx`'s things and nothing of
/// `other`; `dev` shows everything.
fn config(safe_tools: &str) -> String {
    let fixture = fixture_bin();
    format!(
        r#"defaultProfile: safe
servers:
  fx:
    displayName: Fixture
    transport: {{kind: stdio, command: "{fixture}"}}
  other:
    transport: {{kind: stdio, command: "{fixture}"}}
profiles:
  safe:
    description: Read-only view
    servers:
      fx:
        tools: {safe_tools}
        resources: {{allow: ["fixture://readme", "fixture://items/**"]}}
        prompts: {{deny: [plain]}}
  dev:
    description: Everything
    servers:
      fx: {{}}
      other: {{}}
"#
    )
}

const SAFE_TOOLS: &str = "{allow: [echo, pid, whoami, 'l*'], deny: [whoami]}";

fn write_config(text: &str) -> std::path::PathBuf {
    let path = scratch_dir("profiles").join("warden.yaml");
    std::fs::write(&path, text).unwrap();
    path
}

fn serve(path: &std::path::Path, profile: Option<&str>) -> Client {
    let mut args = vec!["serve", "--config", path.to_str().unwrap()];
    if let Some(profile) = profile {
        args.extend(["--profile", profile]);
    }
    let mut client = Client::start(&args, &[]);
    client.initialize();
    client
}

fn names(list: &support::Message, field: &str, key: &str) -> Vec<String> {
    list["result"][field].as_array().unwrap().iter().filter_map(|item| item[key].as_str().map(str::to_owned)).collect()
}

#[test]
fn a_profile_hides_at_list_time_and_blocks_at_call_time() {
    let path = write_config(&config(SAFE_TOOLS));
    let mut client = serve(&path, None);
    client.wait_for_tool("fx__echo");
    let mut tools = client.tool_names();
    tools.sort();
    assert_eq!(
        tools,
        ["fx__echo", "fx__large", "fx__log", "fx__pid"],
        "allow globs, deny wins, unlisted server hidden"
    );
    for hidden in ["fx__whoami", "fx__crash", "other__echo"] {
        let answer = client.request("tools/call", json!({"name": hidden, "arguments": {}}));
        assert_eq!(answer["error"]["message"], format!("Unknown tool: {hidden}"), "{}", answer.raw);
    }
    let prompts = client.request("prompts/list", json!({}));
    assert_eq!(names(&prompts, "prompts", "name"), ["fx__greeting"]);
    let plain = client.request("prompts/get", json!({"name": "fx__plain"}));
    assert_eq!(plain["error"]["message"], "Unknown prompt: fx__plain");
    let completion = client.request(
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "fx__plain"}, "argument": {"name": "x", "value": ""}}),
    );
    assert!(completion.value.get("error").is_some(), "completion for a hidden prompt: {}", completion.raw);

    let resources = client.request("resources/list", json!({}));
    assert_eq!(names(&resources, "resources", "uri"), ["fixture://readme"]);
    let data = client.request("resources/read", json!({"uri": "fixture://data.json"}));
    assert_eq!(data["error"]["code"], -32002, "{}", data.raw);
    let item = client.request("resources/read", json!({"uri": "fixture://items/7"}));
    assert_eq!(item["result"]["contents"][0]["text"], "item 7");
    // Traversal out of an allowed prefix, plain and encoded, is not let through.
    for sneaky in [
        "fixture://items/../data.json",
        "fixture://items/%2e%2e/data.json",
        "fixture://items/%252e%252e/data.json",
        "fixture://items\\..\\data.json",
    ] {
        let answer = client.request("resources/read", json!({"uri": sneaky}));
        assert_eq!(answer["error"]["code"], -32002, "{sneaky}: {}", answer.raw);
    }
    let subscribe = client.request("resources/subscribe", json!({"uri": "fixture://data.json"}));
    assert_eq!(subscribe["error"]["code"], -32002);
}

#[test]
fn the_profile_flag_overrides_the_default() {
    let path = write_config(&config(SAFE_TOOLS));
    let mut client = serve(&path, Some("dev"));
    client.wait_for_tool("other__echo");
    assert_eq!(client.call_text("other__echo", json!({"text": "dev sees all"})), "dev sees all");
    let unknown = Command::new(warden_bin())
        .args(["serve", "--config", path.to_str().unwrap(), "--profile", "nope"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(!unknown.status.success());
    let stderr = String::from_utf8_lossy(&unknown.stderr);
    assert!(stderr.contains("nope") && stderr.contains("safe") && stderr.contains("dev"), "{stderr}");
}

#[test]
fn a_reload_hides_a_tool_mid_session_and_a_broken_one_keeps_the_last_good_config() {
    let path = write_config(&config(SAFE_TOOLS));
    let mut client = serve(&path, None);
    client.wait_for_tool("fx__pid");
    client.drain(Duration::from_millis(200));

    std::fs::write(&path, config("{allow: [echo, 'l*']}")).unwrap();
    client.wait_method("notifications/tools/list_changed");
    client.wait_stderr("configuration reloaded");
    let mut tools = client.tool_names();
    tools.sort();
    assert_eq!(tools, ["fx__echo", "fx__large", "fx__log"]);
    let pid = client.request("tools/call", json!({"name": "fx__pid", "arguments": {}}));
    assert_eq!(pid["error"]["message"], "Unknown tool: fx__pid", "hidden after reload: {}", pid.raw);

    std::fs::write(&path, "defaultProfile: safe\nprofiles: {safe: {servers: {ghost: {}}}}\nservers: {}\n").unwrap();
    client.wait_stderr("reload rejected");
    assert_eq!(client.call_text("fx__echo", json!({"text": "old config stands"})), "old config stands");
    assert_eq!(client.tool_names().len(), 3);

    // SIGHUP reloads too (here: back to the first config).
    std::fs::write(&path, config(SAFE_TOOLS)).unwrap();
    let status = Command::new("kill").args(["-HUP", &client.pid().to_string()]).status().unwrap();
    assert!(status.success());
    client.wait_for_tool("fx__pid");
}

#[test]
fn validate_reports_a_summary_or_every_problem_with_positions() {
    let path = write_config(&config(SAFE_TOOLS));
    let (ok, stdout, stderr) = warden(&["validate", "--config", path.to_str().unwrap()]);
    assert!(ok, "{stderr}");
    assert!(
        stdout.contains("valid") && stdout.contains("servers:  2 (fx, other)") && stdout.contains("default: safe"),
        "{stdout}"
    );

    let bad = write_config(
        "defaultProfile: missing\nservers:\n  fx:\n    transport: {kind: stdio}\n  web:\n    transport: {kind: http}\nprofiles:\n  safe:\n    servers:\n      ghost: {}\n",
    );
    let (ok, _, stderr) = warden(&["validate", "--config", bad.to_str().unwrap()]);
    assert!(!ok);
    assert!(stderr.contains("line 4") && stderr.contains("command"), "{stderr}");

    let bad = write_config("defaultProfile: safe\nservers: {}\nprofiles:\n  safe:\n    servers:\n      ghost: {}\n");
    let (ok, _, stderr) = warden(&["validate", "--config", bad.to_str().unwrap()]);
    assert!(!ok);
    assert!(stderr.contains("line 6, column 7") && stderr.contains("ghost"), "{stderr}");

    let globs = write_config(&config("{allow: ['[unclosed']}"));
    let (ok, _, stderr) = warden(&["validate", "--config", globs.to_str().unwrap()]);
    assert!(!ok);
    assert!(stderr.contains("[unclosed"), "{stderr}");
}

#[test]
fn profiles_effective_and_schema_describe_the_config() {
    let path = write_config(&config(SAFE_TOOLS));
    let path = path.to_str().unwrap();
    let (ok, stdout, _) = warden(&["profiles", "--config", path]);
    assert!(ok);
    assert!(stdout.contains("* safe") && stdout.contains("Read-only view") && stdout.contains("  dev"), "{stdout}");

    let (ok, stdout, stderr) = warden(&["effective", "--config", path, "--profile", "safe", "--json"]);
    assert!(ok, "{stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    let items = report["items"].as_array().unwrap();
    let find = |server: &str, name: &str| {
        items.iter().find(|i| i["server"] == server && i["name"] == name && i["kind"] == "tools").cloned().unwrap()
    };
    assert_eq!(find("fx", "echo")["visible"], true);
    assert_eq!(find("fx", "echo")["exposedAs"], "fx__echo");
    assert_eq!(find("fx", "whoami")["visible"], false);
    assert_eq!(find("other", "echo")["visible"], false);
    assert!(find("fx", "whoami")["reason"].as_str().unwrap().contains("whoami"), "names the deny rule");

    let (ok, stdout, _) = warden(&["effective", "--config", path, "--server", "fx"]);
    assert!(ok);
    assert!(stdout.contains("+ fx__echo") && stdout.contains("- crash"), "{stdout}");
    let (ok, stdout, _) = warden(&["effective", "--config", path, "--offline"]);
    assert!(ok);
    assert!(stdout.contains("other: hidden entirely"), "{stdout}");

    let (ok, stdout, _) = warden(&["schema"]);
    assert!(ok);
    let schema: Value = serde_json::from_str(&stdout).unwrap();
    assert!(schema["properties"]["servers"].is_object() && schema["properties"]["profiles"].is_object(), "{stdout}");
}

/// A config of two fixture servers, `fx` and `other`, whose names are not
/// prefixed, with the profile `safe` (default) filtering them as
/// `servers` says (the YAML under `profiles.safe.servers`, indented by six).
fn two_unprefixed_servers(servers: &str) -> std::path::PathBuf {
    let fixture = fixture_bin();
    write_config(&format!(
        "defaultProfile: safe\nnaming: {{prefix: never}}\nservers:\n  fx:\n    transport: {{kind: stdio, command: \"{fixture}\"}}\n  other:\n    transport: {{kind: stdio, command: \"{fixture}\", args: [--name, other]}}\nprofiles:\n  safe:\n    servers:\n{servers}"
    ))
}

#[test]
fn validate_warns_about_shadowed_entries_and_unprefixed_globs_that_collide() {
    let path = two_unprefixed_servers(
        r#"      fx:
        tools: {allow: ['e*', echo, pid], deny: ['p*']}
        prompts: {deny: ['*']}
      other:
        tools: {allow: ['ech?'], deny: [crash]}
        prompts: {deny: ['*']}
"#,
    );
    let (ok, stdout, stderr) = warden(&["validate", "--config", path.to_str().unwrap()]);
    assert!(ok, "warnings do not fail validation: {stderr}");
    assert!(stdout.contains("valid"), "{stdout}");
    let warnings: Vec<&str> = stderr.lines().filter(|line| line.starts_with("warning: ")).collect();
    let expected = [
        r#"profile "safe", server "fx", tools: allow "echo" is shadowed by an earlier allow entry "e*", which matches everything it matches"#,
        r#"profile "safe", server "fx", tools: allow "pid" never lets anything through: deny "p*" hides everything it matches"#,
        r#"profile "safe", server "other", tools: deny "crash" has no effect: no allow entry ("ech?") lets through anything it matches"#,
        r#"profile "safe": tool names are not prefixed, and "fx" (allow "e*") and "other" (allow "ech?") both let through tools such as "echa": if both servers have one, the client sees "fx"'s (first in the file) and "other"'s is hidden"#,
    ];
    for warning in expected {
        assert!(warnings.iter().any(|line| line.ends_with(warning)), "missing {warning:?} in {stderr}");
    }
    assert_eq!(warnings.len(), expected.len(), "{stderr}");
}

#[test]
fn validate_connect_names_the_collisions_of_what_the_servers_offer() {
    let path = two_unprefixed_servers(
        r#"      fx:
        tools: {deny: [echo]}
        prompts: {deny: ['*']}
      other:
        tools: {allow: [echo, pid]}
        prompts: {deny: ['*']}
        resources: {deny: ['**']}
"#,
    );
    let path = path.to_str().unwrap();
    let warnings = |stderr: &str| -> Vec<String> {
        stderr.lines().filter_map(|line| line.strip_prefix("warning: ")).map(str::to_owned).collect()
    };
    let (ok, _, stderr) = warden(&["validate", "--config", path]);
    assert!(ok, "{stderr}");
    let offline = warnings(&stderr);
    assert_eq!(offline.len(), 1, "only the overlap the globs decide: {stderr}");
    assert!(offline[0].contains("both let through tools such as \"pid\""), "{stderr}");

    let (ok, _, stderr) = warden(&["validate", "--config", path, "--connect"]);
    assert!(ok, "{stderr}");
    let live = warnings(&stderr);
    let expected = [
        r#"profile "safe": tool "pid" is offered by "fx" and "other": the client sees "fx"'s (first in the file), "other"'s is hidden"#,
    ];
    for warning in expected {
        assert!(live.iter().any(|line| line == warning), "missing {warning:?} in {stderr}");
    }
    assert_eq!(live.len(), offline.len() + expected.len(), "{stderr}");

    // What the client gets agrees: fx's echo is hidden, so the name is
    // other's (a hidden item takes no name), and pid is fx's.
    let (ok, stdout, stderr) =
        warden(&["call", "--config", path, "tool", "echo", "--args", r#"{"text":"answered by other"}"#]);
    assert!(ok && stdout.contains("answered by other"), "other's echo answers: {stdout}{stderr}");

    // And `effective` shows the same: other's pid lost to fx's, its echo won.
    let (ok, stdout, stderr) = warden(&["effective", "--config", path, "--json"]);
    assert!(ok, "{stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    let row = |server: &str, name: &str| {
        report["items"].as_array().unwrap().iter().find(|i| i["server"] == server && i["name"] == name).cloned()
    };
    let lost = row("other", "pid").expect("other's pid");
    assert_eq!(lost["visible"], false, "{lost}");
    assert!(lost["reason"].as_str().unwrap().contains("name collision"), "{lost}");
    assert_eq!(row("other", "echo").expect("other's echo")["visible"], true);
    assert_eq!(row("fx", "pid").expect("fx's pid")["visible"], true);
}

#[test]
fn profiles_and_effective_show_display_names() {
    let path = write_config(&config(SAFE_TOOLS));
    let path = path.to_str().unwrap();
    let (ok, stdout, _) = warden(&["profiles", "--config", path]);
    assert!(ok);
    assert!(stdout.contains("[servers: fx \"Fixture\", other]"), "{stdout}");

    let (ok, stdout, stderr) = warden(&["effective", "--config", path, "--profile", "dev", "--json"]);
    assert!(ok, "{stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    let items = report["items"].as_array().unwrap();
    assert!(items.iter().filter(|i| i["server"] == "fx").all(|i| i["displayName"] == "Fixture"), "{stdout}");
    assert!(items.iter().filter(|i| i["server"] == "other").all(|i| i.get("displayName").is_none()), "{stdout}");

    let (ok, stdout, _) = warden(&["effective", "--config", path]);
    assert!(ok);
    assert!(stdout.contains("\nfx \"Fixture\" (ready)") && stdout.contains("\nother (ready)"), "{stdout}");
    let (ok, stdout, _) = warden(&["effective", "--config", path, "--offline"]);
    assert!(ok);
    assert!(stdout.contains("\nfx \"Fixture\":") && stdout.contains("\nother: hidden entirely"), "{stdout}");
}

#[test]
fn call_goes_through_the_filtered_hub() {
    let path = write_config(&config(SAFE_TOOLS));
    let path = path.to_str().unwrap();
    let (ok, stdout, stderr) =
        warden(&["call", "--config", path, "tool", "fx__echo", "--args", r#"{"text":"via cli"}"#]);
    assert!(ok, "{stderr}");
    let result: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(result["content"][0]["text"], "via cli");

    let (ok, _, stderr) = warden(&["call", "--config", path, "tool", "fx__whoami"]);
    assert!(!ok, "hidden tools fail");
    assert!(stderr.contains("Unknown tool: fx__whoami"), "{stderr}");
    let (ok, _, _) = warden(&["call", "--config", path, "--profile", "dev", "tool", "fx__whoami"]);
    assert!(ok);

    let (ok, stdout, _) = warden(&["call", "--config", path, "prompt", "fx__greeting", "--args", r#"{"name":"Ada"}"#]);
    assert!(ok);
    assert!(stdout.contains("Hello, Ada!"));
    let (ok, stdout, _) = warden(&["call", "--config", path, "resource", "fixture://readme"]);
    assert!(ok);
    assert!(stdout.contains("Fixture readme"));
    let (ok, _, stderr) = warden(&["call", "--config", path, "tool", "fx__echo", "--args", "not json"]);
    assert!(!ok && stderr.contains("--args"), "{stderr}");
}
