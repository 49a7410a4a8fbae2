//! `oware play`: play against the AI (or another person) in the terminal.

mod board;
mod command;
mod record;
mod session;
mod thinking;

use anyhow::Context;
use oware_engine::{Game, Side};
use session::{HintSource, Session, Terminal};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `oware play`.
#[derive(clap::Args, Debug)]
pub(super) struct Args {
    /// The opponent, as a player spec (`random`, `alphabeta:depth=8`,
    /// `mcts:model=runs/NAME,sims=400`, ...), or `none` for two people on one keyboard.
    /// Default: MCTS with the newest checkpoint under `runs/`, else the shipped network
    /// (`models/oware-default`), else `alphabeta:ms=1000`.
    #[arg(long, value_name = "PLAYER")]
    ai: Option<String>,

    /// The side you play. South moves first, so as North you let the AI open.
    #[arg(long, default_value = "south", value_name = "south|north")]
    side: Side,

    /// Start from a game record (moves separated by spaces on one line, as `oware replay`
    /// reads; anything after a tab or `#` is ignored).
    #[arg(long, value_name = "FILE")]
    load: Option<PathBuf>,

    /// Seed for players that use randomness (default: from the clock).
    #[arg(long)]
    seed: Option<u64>,
}

/// Whether a spec means "no AI": two people share the keyboard.
fn is_no_ai(spec: &str) -> bool {
    matches!(spec.trim().to_ascii_lowercase().as_str(), "none" | "human")
}

/// Whether the `NO_COLOR` convention asks for plain output (set and not empty).
fn no_color_requested() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

/// Runs `oware play`.
pub(super) fn run(args: Args) -> anyhow::Result<ExitCode> {
    // Without --seed every session differs (a clock before 1970 gives seed 0).
    let seed = args.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
    });
    let default_spec = oware_players::default_ai_spec(Path::new("runs"));
    let spec = args.ai.unwrap_or_else(|| default_spec.clone());
    let (ai, hints) = if is_no_ai(&spec) {
        let hints = HintSource {
            spec: default_spec,
            seed,
            build: oware_players::build_player_from_str,
        };
        (None, Some(hints))
    } else {
        let player = oware_players::build_player_from_str(&spec, seed)
            .with_context(|| format!("cannot build the AI player '{spec}'"))?;
        (Some(player), None)
    };

    let (game, last) = match &args.load {
        Some(path) => record::load(path, None)?,
        None => (Game::new(), None),
    };

    let stdin = std::io::stdin();
    let interactive = stdin.is_terminal();
    let term = Terminal {
        colour: interactive && std::io::stdout().is_terminal() && !no_color_requested(),
        spinner: std::io::stderr().is_terminal(),
        interactive,
    };
    let stdout = std::io::stdout();
    let mut session = Session::new(game, last, args.side, ai, hints, term, stdout.lock());
    session.run(stdin.lock())?;
    Ok(ExitCode::SUCCESS)
}
