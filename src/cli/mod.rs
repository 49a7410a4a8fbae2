//! The command line: one module per subcommand. Each module has an `Args` struct (whose doc
//! comments are the help text) and a `run` function.

mod perft;
mod play;
mod replay;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Oware Zero: self-play reinforcement learning for Oware (Abapa rules).
#[derive(Parser, Debug)]
#[command(name = "oware", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Replay move lists read from stdin (one game per line) and print the states.
    Replay(replay::Args),
    /// Count the leaf positions of the game tree from the start position.
    Perft(perft::Args),
    /// Play against the AI (or another person) in the terminal.
    Play(play::Args),
}

/// Parses the command line and runs the chosen subcommand.
pub fn run() -> anyhow::Result<ExitCode> {
    let cli = Cli::parse();
    match cli.command {
        Command::Replay(args) => replay::run(args),
        Command::Perft(args) => perft::run(args),
        Command::Play(args) => play::run(args),
    }
}
