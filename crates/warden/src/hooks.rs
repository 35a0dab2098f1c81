//! The pipeline hooks a config and a profile call for.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use anyhow::Context;
use warden_audit::{AuditLog, AuditSettings, Fsync};
use warden_config::{Config, PinMode};
use warden_limits::Limiter;
use warden_metrics::Metrics;
use warden_metrics::layers::{GuardKind, MeteredApprover, MeteredAudit, MeteredGuard, MeteredPins};
use warden_pipeline::{
    Approver, Audit, Call, Guard, Guards, Hooks, HooksSource, Observer, Observers, Outcome, Pins, Record, Unobserved,
    Verdict,
};
use warden_policy::PolicyEngine;
use warden_profiles::ProfileView;
use warden_sandbox::SandboxReport;
use warden_sandbox::annotate::Refusal;
use warden_sandbox::report::{Denial, Reporter};
use warden_traces::settings::Configured;
use warden_traces::{TraceSettings, Tracer};

/// Opens the audit log a config asks for. Opened once per process and kept
/// across reloads: two writers would break the hash chain.
pub fn open_audit(config: &Config) -> anyhow::Result<Option<Arc<dyn Audit>>> {
    let Some(audit) = &config.audit else { return Ok(None) };
    let settings = AuditSettings {
        path: expand_home(&audit.path),
        redact: audit.redact,
        fsync: match audit.fsync {
            warden_config::Fsync::Always => Fsync::Always,
            warden_config::Fsync::Never => Fsync::Never,
        },
        fail_open: audit.fail_open,
        rotate_bytes: audit.rotate_bytes,
        keep: audit.keep,
        results: audit.results,
        result_max_bytes: audit.result_max_bytes,
    };
    let log = AuditLog::open(settings).with_context(|| format!("cannot open the audit log {}", audit.path))?;
    Ok(Some(Arc::new(log)))
}

/// Opens the audit log and starts the approvals `config` asks for; the
/// approvals' channels run while the second value lives.
pub async fn open_process_hooks(config: &Config) -> anyhow::Result<(ProcessHooks, Option<crate::approvals::Running>)> {
    // Counted for `/metrics`, and for the dashboard and `warden status`,
    // which come with approvals.
    let counted = config.metrics.is_some() || config.approval.is_some();
    let metrics = counted.then(|| Arc::new(Metrics::new()));
    let mut audit = open_audit(config)?;
    if let Some(metrics) = &metrics {
        audit = audit.map(|log| Arc::new(MeteredAudit::new(log, metrics.clone())) as Arc<dyn Audit>);
    }
    let sandbox = report_sandbox_denials(audit.clone(), metrics.clone());
    let approvals = crate::approvals::start(config, audit.clone()).await?;
    let mut approver = approvals.as_ref().map(crate::approvals::Running::approver);
    if let Some(metrics) = &metrics {
        approver = approver.map(|inner| Arc::new(MeteredApprover::new(inner, metrics.clone())) as Arc<dyn Approver>);
    }
    let tracer = start_tracer(config)?;
    Ok((ProcessHooks { audit, approver, sandbox, metrics, tracer }, approvals))
}

/// Starts exporting traces when the config or the `OTEL_*` variables name
/// a collector.
fn start_tracer(config: &Config) -> anyhow::Result<Option<Arc<Tracer>>> {
    let section = &config.tracing;
    let configured = Configured {
        otlp: section.otlp.clone(),
        headers: section.headers.iter().map(|(name, value)| (name.clone(), value.clone())).collect(),
        sample_ratio: section.sample_ratio,
        service_name: section.service_name.clone(),
    };
    let settings = TraceSettings::resolve(&configured, &|name| std::env::var(name).ok())
        .map_err(|why| anyhow::anyhow!("tracing: {why}"))?;
    Ok(settings.map(|settings| {
        tracing::info!(url = %settings.destination.url, ratio = settings.ratio, "exporting traces (OTLP/HTTP)");
        Arc::new(Tracer::start(settings))
    }))
}

/// `~/x` → `$HOME/x`.
pub fn expand_home(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(path),
    }
}

/// The hooks that live as long as the process, whatever the reloads: two
/// audit writers would break the hash chain, and pending approvals must
/// outlive a configuration change.
#[derive(Clone, Default)]
pub struct ProcessHooks {
    /// The audit log, if any.
    pub audit: Option<Arc<dyn Audit>>,
    /// Where escalated calls wait, if approval is configured.
    pub approver: Option<Arc<dyn Approver>>,
    /// Where the servers' sandboxes report (refusals and unsandboxed starts
    /// to the audit log), and how each server was started.
    pub sandbox: SandboxReport,
    /// What Warden counts, when `metrics:` is configured.
    pub metrics: Option<Arc<Metrics>>,
    /// Where spans go, when tracing is on.
    pub tracer: Option<Arc<Tracer>>,
}

/// The hooks for `profile` (or the default profile) of `config`, recording
/// to `process_hooks.audit` and waiting for approvals at `process_hooks.approver`.
pub fn for_profile(config: &Config, profile: Option<&str>, process_hooks: ProcessHooks) -> anyhow::Result<Hooks> {
    let ProcessHooks { audit, approver, sandbox: _, metrics, tracer } = process_hooks;
    let metered = |guard: Arc<dyn Guard>, kind| -> Arc<dyn Guard> {
        match &metrics {
            Some(metrics) => Arc::new(MeteredGuard::new(guard, metrics.clone(), kind)),
            None => guard,
        }
    };
    let view = ProfileView::compile(config, profile).context("invalid profile")?;
    if let Some(name) = view.name() {
        tracing::info!(profile = name, "profile ready");
    }
    let mut guards: Vec<Arc<dyn Guard>> = Vec::new();
    // Always, also with no policy written: the built-in protected paths
    // (Warden's own files, credential stores) apply to every server. The
    // guard only decides; what is forwarded stays byte for byte the client's.
    let policy = PolicyEngine::compile(config, profile).context("invalid policy")?;
    guards.push(metered(Arc::new(policy), GuardKind::Policy));
    // After the policy: rate limits count only the calls it lets through.
    if !config.rate_limits.is_empty() || config.breaker.identical_calls > 0 {
        let limiter = Arc::new(Limiter::new(&config.rate_limits, &config.breaker)?);
        if let Some(metrics) = &metrics
            && config.breaker.identical_calls > 0
        {
            // Read at each scrape while this configuration's limiter lives.
            let limiter = Arc::downgrade(&limiter);
            metrics.count_breakers_with(Box::new(move || {
                limiter.upgrade().map(|limiter| limiter.open_breakers(std::time::Instant::now()))
            }));
        }
        guards.push(metered(limiter, GuardKind::Limits));
    }
    let mut pins: Option<Arc<dyn Pins>> = match config.pins.mode {
        PinMode::Off => None,
        PinMode::Warn | PinMode::Enforce => Some(Arc::new(crate::commands::pins::store(config))),
    };
    if let Some(metrics) = &metrics {
        pins = pins.map(|inner| Arc::new(MeteredPins::new(inner, metrics.clone())) as Arc<dyn Pins>);
    }
    let mut observers: Vec<Arc<dyn Observer>> = Vec::new();
    observers.extend(metrics.map(|metrics| metrics as Arc<dyn Observer>));
    observers.extend(tracer.map(|tracer| tracer as Arc<dyn Observer>));
    let observer: Arc<dyn Observer> = match observers.len() {
        0 => Arc::new(Unobserved),
        1 => observers.remove(0),
        _ => Arc::new(Observers(observers)),
    };
    Ok(Hooks { view: Arc::new(view), guard: Arc::new(Guards(guards)), audit, pins, approver, observer })
}

/// The hooks of each profile of the running configuration, built with the
/// configuration (before Warden serves, or on a reload's blocking thread:
/// not when a session starts, on the thread that serves requests) and
/// shared by every HTTP session that uses it (so rate limits and breakers
/// count across sessions, per profile).
pub struct ProfileHooks {
    built: Mutex<Built>,
}

/// Each profile's hooks, or why they could not be built, by name (`None`:
/// the configuration's default).
pub type Built = HashMap<Option<String>, Result<Hooks, String>>;

impl ProfileHooks {
    /// The hooks [`ProfileHooks::build_all`] built.
    pub fn new(built: Built) -> ProfileHooks {
        ProfileHooks { built: Mutex::new(built) }
    }

    /// Switches to the hooks [`ProfileHooks::build_all`] built for a
    /// reloaded configuration.
    pub fn replace(&self, built: Built) {
        *warden_sync::lock(&self.built) = built;
    }

    /// The hooks of the default profile, of every named one of `config` and
    /// of `chosen` (the command line's, which may name none of them), with
    /// `process_hooks`'s audit and approver; built where waiting holds up no
    /// request (before Warden serves, or on a reload's blocking thread):
    /// compiling a policy resolves the paths it names, on a mount that may
    /// not answer. A profile that fails keeps why, for the sessions that ask
    /// for it: it is not compiled again for each of them.
    pub fn build_all(config: &Config, chosen: Option<&str>, process_hooks: &ProcessHooks) -> Built {
        let mut names: Vec<Option<String>> =
            std::iter::once(None).chain(config.profiles.keys().cloned().map(Some)).collect();
        if let Some(chosen) = chosen.filter(|chosen| !config.profiles.contains_key(*chosen)) {
            names.push(Some(chosen.to_owned()));
        }
        names
            .into_iter()
            .map(|name| {
                let hooks =
                    for_profile(config, name.as_deref(), process_hooks.clone()).map_err(|err| format!("{err:#}"));
                (name, hooks)
            })
            .collect()
    }
}

impl HooksSource for ProfileHooks {
    fn hooks(&self, profile: Option<&str>) -> Result<Hooks, String> {
        match warden_sync::lock(&self.built).get(&profile.map(str::to_owned)) {
            Some(built) => built.clone(),
            // Every profile of the configuration in force was built with it.
            None => Err(format!("there is no profile {:?}", profile.unwrap_or_default())),
        }
    }
}

/// A sandbox report that sends the sandboxes' refused connections to
/// `audit` (and the log), as `sandbox/network` records denied by rule
/// `sandbox.network`, and servers started unsandboxed as
/// `sandbox/unsandboxed` records.
pub fn report_sandbox_denials(audit: Option<Arc<dyn Audit>>, metrics: Option<Arc<Metrics>>) -> SandboxReport {
    SandboxReport::new(Arc::new(SandboxDenials { audit, metrics }))
}

struct SandboxDenials {
    audit: Option<Arc<dyn Audit>>,
    metrics: Option<Arc<Metrics>>,
}

impl Reporter for SandboxDenials {
    fn denied(&self, denial: Denial) {
        if let Some(metrics) = &self.metrics {
            metrics.sandbox_refused(&denial.server, "network");
        }
        let target = format!("{}:{}", denial.host, denial.port);
        let verdict = Verdict::Deny { rule: "sandbox.network".into(), reason: denial.reason };
        self.record("sandbox/network", denial.server, target, None, verdict, Outcome::Refused);
    }

    fn blocked(&self, server: &str, refusal: Refusal) {
        // Its tool result, marked, is in the audit with the call; a refused
        // connection was counted when the egress proxy refused it.
        if let (Some(metrics), Refusal::Filesystem) = (&self.metrics, refusal) {
            metrics.sandbox_refused(server, "filesystem");
        }
    }

    fn unsandboxed(&self, server: &str, warning: &str) {
        // `mode: warn` let it start without its sandbox: loudly, in the audit too.
        let details = serde_json::json!({ "mode": "warn", "warning": warning }).to_string();
        self.record(
            "sandbox/unsandboxed",
            server.to_owned(),
            server.to_owned(),
            Some(details),
            Verdict::Allow,
            Outcome::Result,
        );
    }
}

impl SandboxDenials {
    /// Writes one record about server `server`'s sandbox, in a task of its
    /// own (the callers are the proxy's and the launcher's tasks).
    fn record(
        &self,
        method: &str,
        server: String,
        name: String,
        arguments: Option<String>,
        verdict: Verdict,
        outcome: Outcome,
    ) {
        let Some(audit) = self.audit.clone() else { return };
        let method = warden_jsonrpc::Method::Other(method.into());
        tokio::spawn(async move {
            let call = Call {
                session: "sandbox",
                server: &server,
                method: &method,
                name: &name,
                arguments: arguments.as_deref(),
            };
            let record = Record {
                call,
                client: None,
                principal: None,
                client_address: None,
                verdict: &verdict,
                outcome: &outcome,
                result: None,
                elapsed: Default::default(),
                approval: None,
            };
            if let Err(err) = audit.record(record).await {
                tracing::error!(server = %server, "cannot audit the sandbox's {}: {err}", method.as_str());
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    /// Every profile is built with the configuration, a failing one with
    /// why, and a session's ask is answered from what was built.
    #[test]
    fn every_profile_is_built_once_and_one_that_fails_keeps_why() {
        let yaml = "servers:\n  fx: {transport: {kind: stdio, command: \"true\", args: []}}\n\
                    defaultProfile: ro\nprofiles:\n  ro:\n    servers:\n      fx: {tools: {allow: [\"read*\"]}}\n";
        let config = warden_config::parse(Path::new("warden.yaml"), yaml, &|_| None).expect("a config");
        let process_hooks = ProcessHooks {
            audit: None,
            approver: None,
            sandbox: report_sandbox_denials(None, None),
            metrics: None,
            tracer: None,
        };
        let built = ProfileHooks::build_all(&config, Some("nope"), &process_hooks);
        let mut names: Vec<Option<&str>> = built.keys().map(Option::as_deref).collect();
        names.sort();
        assert_eq!(names, [None, Some("nope"), Some("ro")]);
        let source = ProfileHooks::new(built);
        assert!(source.hooks(Some("ro")).is_ok() && source.hooks(None).is_ok());
        // The command line's profile that the configuration lacks keeps the
        // words its compilation gave, as when it was compiled for each session.
        let chosen = source.hooks(Some("nope")).err().unwrap_or_default();
        assert!(chosen.contains("unknown profile \"nope\""), "{chosen}");
        let gone = source.hooks(Some("gone")).err().unwrap_or_default();
        assert_eq!(gone, "there is no profile \"gone\"");
    }
}
