//! The `warden` command.

mod allocator;
mod approvals;
mod cli;
mod commands;
mod dashboard;
mod hooks;
mod local;
mod logging;
mod metrics;
mod output;
mod reload;
mod table;

use clap::Parser;
use cli::Command;

#[global_allocator]
static ALLOCATOR: allocator::Allocator = allocator::Allocator;

fn main() -> std::process::ExitCode {
    // Inside a sandbox, before anything else (no runtime, no logging): the
    // launcher confines itself, then runs the server. Hidden from --help.
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("sandbox-init") {
        let code = warden_sandbox::init::run(&args[2..]);
        return std::process::ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    let cli = Cli::parse();
    // Serving logs what happens; inspection commands print results and only warn.
    let quiet = !matches!(cli.command, Command::Serve(_) | Command::Wrap(_));
    if let Err(err) = logging::init(&cli.log, if quiet { "warn" } else { "info" }) {
        eprintln!("warden: {err:#}");
        return std::process::ExitCode::from(2);
    }
    // One thread: a stdio gateway's work per message is a few microseconds, and
    // on a loaded machine cross-thread wake-ups cost more than they save
    // (measured: +30 µs instead of +145 µs per call at p50, bench/run.sh).
    // Over HTTP, many clients at once: a worker per core but one (see
    // `http_workers`); just one is this same thread, with no hand-off
    // between a thread that blocks on the runtime and its worker.
    let workers = match &cli.command {
        Command::Serve(args) if args.http.is_some() => http_workers(),
        _ => 1,
    };
    let mut builder = if workers > 1 {
        let mut builder = tokio::runtime::Builder::new_multi_thread();
        builder.worker_threads(workers);
        builder
    } else {
        tokio::runtime::Builder::new_current_thread()
    };
    let runtime = match builder.enable_all().build() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("warden: cannot start the async runtime: {err}");
            return std::process::ExitCode::from(2);
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Serve(args) => commands::serve::run(args).await,
            Command::Wrap(args) => commands::wrap::run(args).await,
            Command::Validate(args) => commands::validate::run(args).await,
            Command::Profiles(args) => commands::profiles::run(args),
            Command::Effective(args) => commands::effective::run(args).await,
            Command::Call(args) => commands::call::run(args).await,
            Command::Init(args) => commands::init::run(args).await,
            Command::Import(args) => commands::import::run(args),
            Command::Policy(command) => commands::policy::run(command),
            Command::Audit(command) => commands::audit::run(command),
            Command::Pins(command) => commands::pins::run(command),
            Command::Approvals(command) => commands::approvals::run(command).await,
            Command::Context(command) => commands::approvals::context(command).await,
            Command::Status(args) => commands::status::run(args).await,
            Command::Schema => commands::schema::run(),
            Command::Sandbox(command) => commands::sandbox::run(command),
        }
    });
    // Upstreams are stopped by now; blocked stdin reads must not keep the process alive.
    runtime.shutdown_background();
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("warden: {err:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

use cli::Cli;

/// The HTTP front's worker threads: one per core but one, at least one;
/// `TOKIO_WORKER_THREADS` overrides. The core left over is the servers':
/// over stdio they run on the same machine, and each call wakes one. On the
/// benchmark's 2-core VM one worker served 23% more calls per second than
/// two with 16 in flight on one session (4% more on sixteen sessions), for
/// 10% less CPU per sequential call and 33% less with 16 in flight: a second
/// worker spent it on wake-ups across cores and on searching for work to
/// steal.
fn http_workers() -> usize {
    let asked = std::env::var("TOKIO_WORKER_THREADS").ok().and_then(|text| text.trim().parse::<usize>().ok());
    asked
        .filter(|&workers| workers > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |cores| cores.get().saturating_sub(1).max(1)))
}
