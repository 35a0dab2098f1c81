//! The pipeline hooks a config and a profile call for.

use std::sync::Arc;

use anyhow::Context;
use warden_config::{Config, PinMode};
use warden_gateway::pipeline::{Guard, Guards, Hooks, Pins};
use warden_limits::Limiter;
use warden_profiles::ProfileView;

/// The hooks for `profile` (or the default profile) of `config`.
pub fn for_profile(config: &Config, profile: Option<&str>) -> anyhow::Result<Hooks> {
    let view = ProfileView::compile(config, profile).context("invalid profile")?;
    if let Some(name) = view.name() {
        tracing::info!(profile = name, "profile in force");
    }
    let limiter = Limiter::new(&config.rate_limits, &config.breaker)?;
    let guards: Vec<Arc<dyn Guard>> = vec![Arc::new(limiter)];
    let pins: Option<Arc<dyn Pins>> = match config.pins.mode {
        PinMode::Off => None,
        PinMode::Warn | PinMode::Enforce => Some(Arc::new(crate::commands::pins::store(config))),
    };
    Ok(Hooks { view: Arc::new(view), guard: Arc::new(Guards(guards)), pins, ..Hooks::default() })
}
