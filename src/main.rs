//! `oware`: train, pit and play Oware (Abapa) with self-play reinforcement learning.

mod cli;

use std::process::ExitCode;

/// mimalloc: burn's CPU backend allocates per call, and glibc malloc page-faults under it.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // Before any thread starts: may restart this process with XDG_RUNTIME_DIR set.
    #[cfg(all(feature = "wgpu", target_os = "linux"))]
    if let Some(note) = cli::device::quiet_vulkan_loader() {
        eprintln!("{note}");
    }
    match cli::run() {
        Ok(code) => code,
        Err(err) => {
            // The whole chain of causes on one line.
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
