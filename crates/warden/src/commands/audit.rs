//! `warden audit`: verify the hash chain, or tail the log.

use std::io::Write;
use std::process::ExitCode;

use warden_audit::TailFilter;

use crate::cli::AuditCommand;

/// Verifies or tails.
pub fn run(command: AuditCommand) -> anyhow::Result<ExitCode> {
    match command {
        AuditCommand::Verify { file } => {
            let report = warden_audit::verify(&file)?;
            match report.first_broken {
                None => {
                    println!("{}: {} records, chain intact", file.display(), report.records);
                    Ok(ExitCode::SUCCESS)
                }
                Some(broken) => {
                    let seq = broken.seq.map(|seq| format!(" (seq {seq})")).unwrap_or_default();
                    println!("{}: broken at line {}{seq}: {}", file.display(), broken.line, broken.reason);
                    Ok(ExitCode::FAILURE)
                }
            }
        }
        AuditCommand::Tail { file, follow, decision, server, tool } => {
            let filter = TailFilter { decision, server, tool };
            let mut stdout = std::io::stdout().lock();
            // Stop quietly when the reader goes away (`| head`).
            warden_audit::tail(&file, &filter, follow, &mut |line| writeln!(stdout, "{line}").is_ok())?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
