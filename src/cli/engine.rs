//! `oware engine [PLAYER]`: the line protocol of DESIGN §3 on stdin/stdout. The protocol itself
//! is [`oware_engine::protocol`], shared with the tests and the fuzz targets.

use anyhow::Context;
use oware_engine::protocol::Engine;
use oware_engine::spec::PlayerSpec;
use oware_players::build_player;
use std::process::ExitCode;

/// The player used when none is given.
pub const DEFAULT_PLAYER: &str = "alphabeta:ms=1000";

/// Arguments of `oware engine`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The player that answers `go` (any player spec). `go sims N` takes N up to 1000000,
    /// `go depth N` up to 120, `go ms N` up to 86400000 (one day).
    #[arg(default_value = DEFAULT_PLAYER)]
    player: PlayerSpec,
}

/// Runs `oware engine`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let player = build_player(&args.player, 1).context("engine player")?;
    let mut engine = Engine::new(player);
    engine
        .serve(std::io::stdin().lock(), std::io::stdout().lock())
        .context("engine protocol on stdin/stdout")?;
    Ok(ExitCode::SUCCESS)
}
