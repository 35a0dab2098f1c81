//! The default config path: `--config`, else `WARDEN_CONFIG`, else
//! `~/.config/warden/warden.yaml` (or `$XDG_CONFIG_HOME/warden/warden.yaml`).

mod support;

use std::process::{Command, Stdio};

use support::{scratch_dir, warden_bin};

fn validate(env: &[(&str, &str)]) -> (bool, String) {
    let output = Command::new(warden_bin())
        .arg("validate")
        .env_remove("WARDEN_CONFIG")
        .env_remove("XDG_CONFIG_HOME")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr),
    )
}

#[test]
fn validate_finds_the_config_without_being_told() {
    let home = scratch_dir("default-config");
    let home_text = home.to_str().unwrap();
    let (ok, text) = validate(&[("HOME", home_text)]);
    assert!(!ok && text.contains(".config/warden/warden.yaml"), "names the file it looked for: {text}");

    std::fs::create_dir_all(home.join(".config/warden")).unwrap();
    std::fs::write(home.join(".config/warden/warden.yaml"), "servers: {a: {transport: {kind: stdio, command: a}}}\n")
        .unwrap();
    let (ok, text) = validate(&[("HOME", home_text)]);
    assert!(ok && text.contains("(a)"), "{text}");

    let xdg = home.join("xdg");
    std::fs::create_dir_all(xdg.join("warden")).unwrap();
    std::fs::write(xdg.join("warden/warden.yaml"), "servers: {b: {transport: {kind: stdio, command: b}}}\n").unwrap();
    let (ok, text) = validate(&[("HOME", home_text), ("XDG_CONFIG_HOME", xdg.to_str().unwrap())]);
    assert!(ok && text.contains("(b)"), "{text}");

    let other = home.join("other.yaml");
    std::fs::write(&other, "servers: {c: {transport: {kind: stdio, command: c}}}\n").unwrap();
    let (ok, text) = validate(&[("HOME", home_text), ("WARDEN_CONFIG", other.to_str().unwrap())]);
    assert!(ok && text.contains("(c)"), "{text}");
}
