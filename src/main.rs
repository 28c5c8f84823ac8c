//! The `vkskin` binary: parses the command line and reports errors as one line.

use std::process::ExitCode;

fn main() -> ExitCode {
    // A bug must still end in one line and a non-zero exit, not a backtrace.
    std::panic::set_hook(Box::new(|info| {
        let location = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        eprintln!("vkskin: internal error{location}: {}", vkskin::text::escape(&message));
    }));
    let cli = vkskin::cli::parse_args();
    match vkskin::cli::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            // One line, whatever a file or a lower layer put in the message.
            eprintln!("vkskin: {}", vkskin::text::escape(&error.to_string()));
            ExitCode::FAILURE
        }
    }
}
