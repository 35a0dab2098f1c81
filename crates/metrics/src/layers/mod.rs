//! The pipeline's stages, wrapped to be counted.
//!
//! Each layer holds the stage it wraps and the process's [`Metrics`](crate::Metrics), does
//! exactly what the stage does, and counts what the stage returned: the
//! stage stays unaware of metrics, and a pipeline without metrics has no
//! layer at all.

mod approver;
mod audit;
mod guard;
mod pins;

pub use approver::MeteredApprover;
pub use audit::MeteredAudit;
pub use guard::{GuardKind, MeteredGuard};
pub use pins::MeteredPins;
