//! Where the client's messages enter and leave Warden.

mod stdio;

pub use stdio::serve_stdio;
