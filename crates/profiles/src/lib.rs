//! Warden's profiles: named views of the upstream servers.
//!
//! A profile lists, per server, allow and deny globs for tool names, prompt
//! names and resource URIs (which also apply to resource templates). An empty
//! allow list allows everything; deny wins over allow; a server the profile
//! does not list is hidden entirely. With no profiles configured, everything
//! is visible.
//!
//! Tool and prompt globs match names as the upstream knows them, `*` matching
//! any characters. Resource globs match normalised URIs ([`normalize_uri`]),
//! where `*` stops at `/` and `**` crosses it; the patterns are normalised the
//! same way, so `file://docs/**` never admits `file://docs/../secret`. A URI
//! that cannot be normalised is never visible.
//!
//! [`ProfileView`] is the compiled profile; it implements the gateway's
//! [`View`](warden_pipeline::View).

#![warn(missing_docs)]

mod collide;
mod error;
mod filter;
mod language;
mod lint;
mod live;
mod normalize;
mod shadow;
mod view;

pub use error::{PatternError, ProfileError};
pub use lint::warnings;
pub use live::live_collisions;
pub use normalize::{MAX_DECODE_ROUNDS, normalize_uri};
pub use view::{Decision, ProfileView};
