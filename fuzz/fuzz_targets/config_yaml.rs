//! Configuration files (YAML, or JSON when the input starts with `{`), as a
//! sandboxed server that can write one would craft them: parsing,
//! `${VAR}` expansion, validation and compiling every profile's policy end in
//! a config or an error, never a crash or a hang.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use warden_policy::PolicyEngine;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let path = if text.trim_start().starts_with('{') { "warden.json" } else { "warden.yaml" };
    let lookup = |name: &str| (name.len() % 2 == 0).then(|| format!("v-{name}"));
    let _ = warden_config::expand(text, &lookup);
    let Ok(config) = warden_config::parse(Path::new(path), text, &lookup) else { return };
    for name in config.servers.keys() {
        let _ = config.sandbox_of(name);
    }
    let _ = PolicyEngine::compile(&config, None);
    for profile in config.profiles.keys() {
        let _ = PolicyEngine::compile(&config, Some(profile));
    }
});
