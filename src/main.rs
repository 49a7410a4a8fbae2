//! `oware`: train, pit and play Oware (Abapa) with self-play reinforcement learning.

mod cli;

use std::process::ExitCode;

/// mimalloc: burn's CPU backend allocates per call, and glibc malloc page-faults under it.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
