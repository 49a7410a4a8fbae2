//! The command line: one module per subcommand. Each module has an `Args` struct (whose doc
//! comments are the help text) and a `run` function.

mod bench;
mod book;
mod broker_tls;
pub(crate) mod device;
mod egtb;
mod engine;
mod judge;
mod ladder;
mod matches;
mod perft;
mod pit;
mod play;
mod replay;
mod report;
mod selfplay;
mod serve;
mod train;
mod tune_eval;
mod worker;

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
    /// Train a network by self-play (from scratch, or --resume a run).
    Train(train::Args),
    /// Self-play only: play games with a network and write their records.
    Selfplay(selfplay::Args),
    /// Replay move lists read from stdin (one game per line) and print the states.
    Replay(replay::Args),
    /// Count the leaf positions of the game tree from the start position.
    Perft(perft::Args),
    /// Play against the AI (or another person) in the terminal.
    Play(play::Args),
    /// Play many games between two players and report the score and Elo difference.
    ///
    /// Games run in parallel on --threads threads. A network player with a simulation budget
    /// (mcts:model=...[,sims=N]) is played batched, as self-play plays: each thread keeps up to
    /// 128 games in flight and evaluates the leaves of all those where the network is to move
    /// in one network call per pass, while the other player's moves are chosen in parallel; the
    /// games are those one game at a time gives (--unbatched). A timed network player (ms=N)
    /// keeps its own clock per move and plays one game at a time per thread, as alpha-beta,
    /// random and rollout players do.
    Pit(pit::Args),
    /// Answer the line protocol (newgame, position, go, isready, quit) on stdin/stdout.
    Engine(engine::Args),
    /// Plot a run's evaluation curve (score against each opponent over time) to a PNG.
    Report(report::Args),
    /// Rate many players: matches between them, then Bradley-Terry ratings with 95% intervals.
    Ladder(ladder::Args),
    /// Endgame tables: build them, look positions up, list them.
    Egtb(egtb::Args),
    /// Judge a player's moves on positions from real games with the endgame tables.
    Judge(judge::Args),
    /// Serve the board in a browser: vs AI, two on one device, friend rooms with a code.
    Serve(serve::Args),
    /// Measure the network on a device: inference service and direct evaluations/s, learner steps/s.
    Bench(bench::Args),
    /// Opening books for the alpha-beta player: build one from a network's analysis.
    Book(book::Args),
    /// Fit the alpha-beta evaluation's weights to the results of recorded games (Texel).
    TuneEval(tune_eval::Args),
    /// Self-play for a learner started with `oware train --broker URL`, sending games through
    /// Redis (run on any number of machines).
    Worker(worker::Args),
}

/// Parses the command line and runs the chosen subcommand.
pub(crate) fn run() -> anyhow::Result<ExitCode> {
    let cli = Cli::parse();
    match cli.command {
        Command::Train(args) => train::run(args),
        Command::Selfplay(args) => selfplay::run(args),
        Command::Replay(args) => replay::run(args),
        Command::Perft(args) => perft::run(args),
        Command::Play(args) => play::run(args),
        Command::Pit(args) => pit::run(args),
        Command::Engine(args) => engine::run(args),
        Command::Report(args) => report::run(args),
        Command::Ladder(args) => ladder::run(args),
        Command::Egtb(args) => egtb::run(args),
        Command::Judge(args) => judge::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Worker(args) => worker::run(args),
        Command::TuneEval(args) => tune_eval::run(args),
        Command::Book(args) => book::run(args),
    }
}
