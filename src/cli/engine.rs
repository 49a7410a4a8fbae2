//! `oware engine [PLAYER]`: the line protocol of `docs/engine-protocol.md` on stdin/stdout. The protocol itself
//! is [`oware_players::protocol`], shared with the tests and the fuzz targets.

use anyhow::Context;
use oware_players::protocol::Engine;
use oware_players::spec::PlayerSpec;
use oware_players::{build_player, default_ai_spec};
use std::path::Path;
use std::process::ExitCode;

/// Arguments of `oware engine`.
#[derive(clap::Args, Debug)]
pub(super) struct Args {
    /// The player that answers `go` (any player spec). `go sims N` takes N up to 1000000,
    /// `go depth N` up to 120, `go ms N` up to 86400000 (one day). Default: as for `oware
    /// play`, MCTS with the newest checkpoint under `runs/`, else the shipped network
    /// (`models/oware-default`), else `alphabeta:ms=1000`.
    player: Option<PlayerSpec>,
}

/// Runs `oware engine`.
pub(super) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let spec = match args.player {
        Some(spec) => spec,
        None => {
            let text = default_ai_spec(Path::new("runs"));
            text.parse::<PlayerSpec>()
                .map_err(|e| anyhow::anyhow!("the default player '{text}': {e}"))?
        }
    };
    let player = build_player(&spec, 1).context("engine player")?;
    let mut engine = Engine::new(player);
    engine
        .serve(std::io::stdin().lock(), std::io::stdout().lock())
        .context("engine protocol on stdin/stdout")?;
    Ok(ExitCode::SUCCESS)
}
