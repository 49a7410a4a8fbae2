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
use oware_players::{PlayerBuilder, TrainingTime, contestant, training_time};
use oware_report::ladder::{Bar, draw};
use oware_report::plot::{draw_with_axis, elo_axis};
use oware_report::run_report::{Point, Series};
use oware_report::status::MatchStatus;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// Arguments of `oware ladder`.
#[derive(clap::Args, Debug)]
pub(super) struct Args {
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
    /// What the chart shows: `bars` (every player's rating), `time` (the rating of each
    /// network checkpoint against its run's training wall time, one curve per run: how runs
    /// are compared), or `auto` (`time` for a gauntlet whose other players are all
    /// checkpoints that record their training time, else `bars`).
    #[arg(long, value_enum, default_value_t = Chart::Auto)]
    chart: Chart,
    /// Print the result as one JSON object on stdout (progress stays on stderr).
    #[arg(long)]
    json: bool,
    /// Plain log lines instead of a live status line.
    #[arg(long, short)]
    quiet: bool,
}

/// The kind of chart `oware ladder` draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum Chart {
    /// `time` for a gauntlet of checkpoints, else `bars`.
    Auto,
    /// Every player's rating, strongest first.
    Bars,
    /// Elo against training wall time, one curve per run.
    Time,
}

/// The Elo-against-time curves: for every player but the anchor that is a checkpoint with a
/// training time, its rating at its run's minutes, one curve per run.
fn time_series(times: &[Option<TrainingTime>], r: &oware_arena::ratings::Ratings) -> Vec<Series> {
    let mut out: Vec<Series> = Vec::new();
    for (p, t) in times.iter().enumerate() {
        let Some(t) = t.as_ref().filter(|_| p != r.anchor) else {
            continue;
        };
        let x = &r.players[p];
        let point = Point {
            minutes: t.minutes,
            score: x.rating,
            low: x.rating - x.ci95,
            high: x.rating + x.ci95,
        };
        match out.iter_mut().find(|s| s.opponent == t.run) {
            Some(s) => s.points.push(point),
            None => out.push(Series {
                opponent: t.run.clone(),
                points: vec![point],
            }),
        }
    }
    for s in &mut out {
        s.points.sort_by(|a, b| a.minutes.total_cmp(&b.minutes));
    }
    out
}

/// Runs `oware ladder`.
pub(super) fn run(args: Args) -> anyhow::Result<ExitCode> {
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
    let times = args
        .players
        .iter()
        .map(training_time)
        .collect::<anyhow::Result<Vec<_>>>()?;
    let checkpoints_only = (0..times.len())
        .filter(|&p| p != ladder.anchor)
        .all(|p| times[p].is_some());
    let time_chart = match args.chart {
        Chart::Bars => false,
        Chart::Time => true,
        Chart::Auto => args.gauntlet && checkpoints_only,
    };
    if let Some(path) = png.as_ref().filter(|_| time_chart) {
        let r = &standings.ratings;
        let series = time_series(&times, r);
        if series.is_empty() {
            anyhow::bail!(
                "--chart time: no player but the anchor is a checkpoint that records its training time"
            );
        }
        let subtitle = format!(
            "Elo against {} (0) over training wall time, Bradley-Terry ratings with 95% intervals",
            specs[r.anchor]
        );
        let axis = elo_axis(&series);
        let png = draw_with_axis(&ladder.headline(), &subtitle, &series, &axis)?
            .0
            .encode_png()?;
        write_atomic(path, &png).with_context(|| format!("the ladder chart {}", path.display()))?;
    } else if let Some(path) = &png {
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
