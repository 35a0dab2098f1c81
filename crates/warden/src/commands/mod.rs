//! One module per subcommand. Each returns the process's exit code, or an
//! error that `main` prints.

pub mod approvals;
pub mod audit;
pub mod call;
pub mod effective;
pub mod import;
pub mod init;
pub mod pins;
pub mod policy;
pub mod profiles;
pub mod sandbox;
pub mod schema;
pub mod serve;
pub mod status;
pub mod validate;
pub mod wrap;
