//! `oware`: train, pit and play Oware (Abapa) with self-play reinforcement learning.

mod cli;
mod players;

use std::process::ExitCode;

fn main() -> ExitCode {
    match cli::run() {
        Ok(code) => code,
        Err(err) => {
            // The whole chain of causes on one line.
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
