//! The gateway's events, counted.

use std::time::Duration;

use warden_pipeline::{Front, Observer, Operation, Target};

use crate::Metrics;
use crate::labels::{ErrorLabel, Labels, OperationKey, OperationLabels, TargetKind, Value};
use crate::names;

impl Metrics {
    /// The labels of `operation`, by borrowed names (no interning).
    fn operation_key<'a>(operation: &Operation<'a>) -> OperationKey<'a> {
        OperationKey {
            method: operation.method.known_name().unwrap_or(crate::OTHER),
            target: operation.target.map(|target| match target {
                Target::Tool(name) => (TargetKind::Tool, names::cut(name)),
                Target::Prompt(name) => (TargetKind::Prompt, names::cut(name)),
            }),
            server: operation.server.map(names::cut),
            error: operation.error.map(ErrorLabel),
        }
    }

    fn operation_labels(&self, operation: &Operation<'_>) -> OperationLabels {
        OperationLabels {
            // Other methods are named by whoever sends them: not a label.
            method: operation.method.known_name().unwrap_or(crate::OTHER),
            target: operation.target.map(|target| match target {
                Target::Tool(name) => (TargetKind::Tool, self.tools.get(name)),
                Target::Prompt(name) => (TargetKind::Prompt, self.tools.get(name)),
            }),
            server: operation.server.map(|name| self.servers.get(name)),
            error: operation.error.map(ErrorLabel),
        }
    }
}

fn nanos(elapsed: Duration) -> u64 {
    u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX)
}

fn front(front: Front) -> Labels<1> {
    Labels([("front", Some(Value::Word(front.as_str())))])
}

impl Observer for Metrics {
    fn served(&self, operation: &Operation<'_>) {
        let key = Metrics::operation_key(operation);
        self.served.observe(&key, nanos(operation.elapsed), || self.operation_labels(operation));
    }

    fn called(&self, operation: &Operation<'_>) {
        let key = Metrics::operation_key(operation);
        self.called.observe(&key, nanos(operation.elapsed), || self.operation_labels(operation));
    }

    fn round(&self, server: &str) {
        self.rounds.get_or_create(&Labels([("server", Some(self.server(server)))])).inc();
    }

    fn upstream_down(&self, server: &str) {
        self.upstream_down.get_or_create(&Labels([("server", Some(self.server(server)))])).inc();
    }

    fn session_opened(&self, at: Front) {
        self.sessions.get_or_create(&front(at)).inc();
    }

    fn session_closed(&self, at: Front, lasted: Duration) {
        let labels = front(at);
        self.sessions.get_or_create(&labels).dec();
        self.session_duration.get_or_create(&labels).observe(lasted.as_secs_f64());
    }
}
