//! `oware perft`: leaf counts from the start position, and the speed.

use oware_engine::{Position, perft, perft_divide};
use std::process::ExitCode;
use std::time::Instant;

/// Arguments of `oware perft`.
#[derive(clap::Args, Debug)]
pub(super) struct Args {
    /// Depth in plies.
    #[arg(long, short, value_parser = clap::value_parser!(u32).range(0..=20))]
    depth: u32,
    /// Also print the count below each first move.
    #[arg(long)]
    divide: bool,
}

/// Runs `oware perft`.
pub(super) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let start = Position::start();
    if args.divide {
        for (m, n) in perft_divide(&start, args.depth) {
            println!("{m}: {n}");
        }
    }
    let t = Instant::now();
    let nodes = perft(&start, args.depth);
    let secs = t.elapsed().as_secs_f64();
    println!("perft {} = {nodes}", args.depth);
    let rate = if secs > 0.0 {
        nodes as f64 / secs
    } else {
        f64::INFINITY
    };
    println!("time {secs:.3} s, {:.1} M nodes/s", rate / 1e6);
    Ok(ExitCode::SUCCESS)
}
