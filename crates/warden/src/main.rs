//! The `warden` command.

mod cli;
mod logging;
mod serve;
mod wrap;

use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = cli::Cli::parse();
    if let Err(err) = logging::init(&cli.log) {
        eprintln!("warden: {err:#}");
        return std::process::ExitCode::from(2);
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("warden: cannot start the async runtime: {err}");
            return std::process::ExitCode::from(2);
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            cli::Command::Serve(args) => serve::run(args).await,
            cli::Command::Wrap(args) => wrap::run(args).await,
        }
    });
    // Upstreams are stopped by now; blocked stdin reads must not keep the process alive.
    runtime.shutdown_background();
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            tracing::error!("{err:#}");
            eprintln!("warden: {err:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
