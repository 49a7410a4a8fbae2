//! `oware ladder`: ratings of many players. Every pair of players (or, with `--gauntlet`, the
//! first against each other one) plays a match on the shared match runner (the one `oware pit`
//! uses: paired openings, colours swapped, games in parallel); then the games give maximum
//! likelihood Bradley–Terry ratings with draws and 95% intervals
//! ([`oware_arena::ratings`]), anchored at one player, printed as a table (or one JSON
//! object) and drawn as a PNG. With `--record DIR` every finished game is kept (see
//! [`oware_arena::ladder::record`]) and a ladder that was cut short resumes, playing only the missing games.

use super::matches::MatchArgs;
use anyhow::Context;
use oware_arena::ladder::{Ladder, MAX_GAMES, missing_games, play_ladder, recorded_games};
use oware_engine::atomic_file::write_atomic;
use oware_players::spec::PlayerSpec;
use oware_players::{PlayerBuilder, contestant};
use oware_report::ladder::{Bar, draw};
use oware_report::status::MatchStatus;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// Arguments of `oware ladder`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The players, two or more (e.g. `random alphabeta:depth=4 mcts:model=runs/x,sims=400`).
    #[arg(required = true, num_args = 2..)]
    players: Vec<PlayerSpec>,
    /// Games per pairing (at most 100000): each opening twice with colours swapped (an odd
    /// count plays the last opening once).
    #[arg(long, default_value_t = 40, value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_GAMES)))]
    games: u32,
    /// The player whose rating is 0 [default: the first].
    #[arg(long, value_name = "PLAYER")]
    anchor: Option<PlayerSpec>,
    /// Only the first player against each of the others, instead of every pair.
    #[arg(long)]
    gauntlet: bool,
    /// Keep every finished game in DIR (and the chart, DIR/ladder.png); a ladder that was cut
    /// short resumes from it and plays only the missing games.
    #[arg(long, value_name = "DIR")]
    record: Option<PathBuf>,
    /// Draw the ratings chart to FILE [default: DIR/ladder.png with --record, else none].
    #[arg(long, value_name = "FILE.png")]
    out: Option<PathBuf>,
    #[command(flatten)]
    matches: MatchArgs,
    /// Print the result as one JSON object on stdout (progress stays on stderr).
    #[arg(long)]
    json: bool,
    /// Plain log lines instead of a live status line.
    #[arg(long, short)]
    quiet: bool,
}

/// Runs `oware ladder`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    let specs: Vec<String> = args.players.iter().map(ToString::to_string).collect();
    let anchor = args.anchor.as_ref().map(ToString::to_string);
    let ladder = Ladder::new(
        specs.clone(),
        anchor.as_deref(),
        args.gauntlet,
        args.record.clone(),
        args.matches.options(args.games, args.matches.seed),
    )?;
    // Fail on unbuildable players (and load their networks once) before any game starts.
    let builders = args
        .players
        .iter()
        .enumerate()
        .map(|(i, spec)| {
            let b = PlayerBuilder::new(spec, args.matches.device)
                .with_context(|| format!("player {} ({spec})", i + 1))?;
            b.build(0)
                .with_context(|| format!("player {} ({spec})", i + 1))?;
            Ok(b)
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let networks = builders
        .iter()
        .map(PlayerBuilder::network_side)
        .collect::<anyhow::Result<Vec<_>>>()?;
    let factories: Vec<_> = builders
        .iter()
        .map(|b| move |seed: u64| b.build(seed).map_err(|e| format!("{e:#}")))
        .collect();
    let sides: Vec<_> = networks
        .iter()
        .zip(&factories)
        .map(|(n, f)| contestant(n, f))
        .collect();
    let recorded = recorded_games(&ladder)?;
    let status = MatchStatus::new(missing_games(&ladder, &recorded), args.quiet);
    let standings = play_ladder(&ladder, &sides, recorded, &status)?;
    status.line().finish();

    let png = args
        .out
        .clone()
        .or_else(|| args.record.as_ref().map(|d| d.join("ladder.png")));
    if let Some(path) = &png {
        let r = &standings.ratings;
        let bars: Vec<Bar> = r
            .players
            .iter()
            .enumerate()
            .map(|(p, x)| Bar {
                label: specs[p].clone(),
                rating: x.rating,
                ci95: x.ci95,
                anchor: p == r.anchor,
            })
            .collect();
        let png = draw(&ladder.headline(), &ladder.chart_subtitle(r), &bars)?.encode_png()?;
        write_atomic(path, &png).with_context(|| format!("the ladder chart {}", path.display()))?;
    }
    let seconds = started.elapsed().as_secs_f64();
    if args.json {
        println!("{}", ladder.json(&standings, png.as_deref(), seconds));
    } else {
        print!("{}", ladder.table(&standings));
        if let Some(path) = &png {
            println!("wrote {}", path.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}
