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
    // One thread: a stdio gateway's work per message is a few microseconds, and
    // on a loaded machine cross-thread wake-ups cost more than they save
    // (measured: +30 µs instead of +145 µs per call at p50, bench/run.sh).
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
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
