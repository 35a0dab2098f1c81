//! Warden's approvals: an escalated call waits until a person (or the
//! auto-approver) decides, or its time runs out.
//!
//! * [`Approval`] ([`record`]): the record bound to one call (an unguessable
//!   id, the digest of its canonical arguments, the rule, the session), and
//!   its [`ApprovalState`] machine ([`state`]), which is pure and decides what may
//!   follow what.
//! * [`Approvals`] ([`store`]): where pending approvals live; first decision
//!   wins, each exactly once. [`MemoryStore`] keeps them in this process; a
//!   replica set would implement the trait on a shared store.
//! * [`Service`] ([`service`]): the gateway's [`Approver`](warden_pipeline::Approver):
//!   opens an approval per escalated call, starts the channels that ask for
//!   it, and expires it when its time is up.
//! * [`channels`]: the ways a decision arrives, each behind
//!   [`Approvals::decide`]: the control socket of `warden approvals` and
//!   `warden context set`.
//! * [`Board`]: where the running process puts its [`Dashboard`], which
//!   the page's `/dashboard` and `warden status` read.

#![warn(missing_docs)]

mod board;
pub mod channels;
mod digest;
pub mod display;
mod intent;
pub mod record;
mod service;
pub mod state;
pub mod store;
pub mod whitelist;

pub use board::{Board, Dashboard};
pub use digest::args_digest;
pub use intent::{Intent, IntentBoard, USER_CONTEXT_FILE};
pub use record::{Approval, Decided};
pub use service::{Service, ServiceSettings};
pub use state::{ApprovalState, Event, Transition};
pub use store::{Approvals, Change, DecideError, MemoryStore};
pub use whitelist::{Grant, Whitelist};
