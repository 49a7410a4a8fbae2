//! `oware ladder`: ratings of many players. Every pair of players (or, with `--gauntlet`, the
//! first against each other one) plays a match on the shared match runner (the one `oware pit`
//! uses: paired openings, colours swapped, games in parallel); then the games give maximum
//! likelihood Bradley–Terry ratings with draws and 95% intervals
//! ([`oware_arena::ratings`]), anchored at one player, printed as a table (or one JSON
//! object) and drawn as a PNG. With `--record DIR` every finished game is kept (see
//! [`record`]) and a ladder that was cut short resumes, playing only the missing games.

mod record;

use super::matches::MatchArgs;
use anyhow::{Context, bail};
use oware_arena::elo::MatchScore;
use oware_arena::ratings::{Pairing, RatingError, Ratings, fit};
use oware_arena::{mix, play_contest};
use oware_engine::DEFAULT_MAX_PLIES;
use oware_engine::atomic::write_atomic;
use oware_players::spec::PlayerSpec;
use oware_players::{PlayerBuilder, contestant};
use oware_report::ladder::{Bar, draw};
use oware_report::status::MatchStatus;
use record::{PairingLog, PairingSpecs, Recorded, Settings};
use serde_json::json;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// The most games one pairing may have.
pub const MAX_GAMES: u32 = 100_000;

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

/// The pairs of players that meet: `(A, B)` indices, A the earlier in the list.
pub fn pairings(players: usize, gauntlet: bool) -> Vec<(usize, usize)> {
    if gauntlet {
        (1..players).map(|b| (0, b)).collect()
    } else {
        (0..players)
            .flat_map(|a| (a + 1..players).map(move |b| (a, b)))
            .collect()
    }
}

/// The seed of the match between players `a` and `b`: the same for the same pair whatever
/// else the ladder holds.
fn pairing_seed(seed: u64, a: usize, b: usize) -> u64 {
    mix(seed ^ mix(((a as u64) << 32) | b as u64))
}

/// One finished pairing.
struct Played {
    a: usize,
    b: usize,
    games: BTreeMap<u32, Recorded>,
    from_record: usize,
}

impl Played {
    /// A's wins, draws and losses.
    fn score(&self) -> MatchScore {
        let mut s = MatchScore::default();
        for g in self.games.values() {
            s.add(g.a_points);
        }
        s
    }
}

/// Runs `oware ladder`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    let specs: Vec<String> = args.players.iter().map(ToString::to_string).collect();
    for (i, s) in specs.iter().enumerate() {
        if specs[..i].contains(s) {
            bail!("player {s} is listed twice");
        }
    }
    let anchor = match &args.anchor {
        None => 0,
        Some(a) => {
            let a = a.to_string();
            specs.iter().position(|s| *s == a).with_context(|| {
                format!(
                    "--anchor {a} is not one of the players ({})",
                    specs.join(", ")
                )
            })?
        }
    };
    if args.record.is_some()
        && let Some(s) = specs.iter().find(|s| s.contains(char::is_whitespace))
    {
        bail!("player {s} has a space in its spec, which a game record cannot hold");
    }
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
    let settings = Settings {
        players: specs.clone(),
        gauntlet: args.gauntlet,
        games: args.games,
        seed: args.matches.seed,
        opening_plies: args.matches.opening_plies,
        max_plies: DEFAULT_MAX_PLIES,
    };
    if let Some(dir) = &args.record {
        record::open(dir, &settings)?;
    }

    // What the record holds already.
    let pairs = pairings(specs.len(), args.gauntlet);
    let mut recorded = Vec::with_capacity(pairs.len());
    for &(a, b) in &pairs {
        let games = match &args.record {
            Some(dir) => record::read_pairing(
                &record::pairing_file(dir, a, b),
                &PairingSpecs {
                    a: &specs[a],
                    b: &specs[b],
                    games: args.games,
                    max_plies: DEFAULT_MAX_PLIES,
                },
            )?,
            None => BTreeMap::new(),
        };
        recorded.push(games);
    }
    let missing: u64 = recorded
        .iter()
        .map(|r| u64::from(args.games) - r.len() as u64)
        .sum();

    let status = MatchStatus::new(missing, args.quiet);
    let mut played = Vec::with_capacity(pairs.len());
    for (k, (&(a, b), old)) in pairs.iter().zip(recorded).enumerate() {
        let todo: Vec<u32> = (0..args.games).filter(|i| !old.contains_key(i)).collect();
        let from_record = old.len();
        let path = args
            .record
            .as_deref()
            .map(|d| record::pairing_file(d, a, b));
        let log = PairingLog::new(path, old);
        let what = format!(
            "pairing {}/{} {} vs {}",
            k + 1,
            pairs.len(),
            specs[a],
            specs[b]
        );
        if !todo.is_empty() {
            status.start(&format!("{what}: "));
            let options = args
                .matches
                .options(args.games, pairing_seed(args.matches.seed, a, b));
            let make_a = |seed: u64| builders[a].build(seed).map_err(|e| format!("{e:#}"));
            let make_b = |seed: u64| builders[b].build(seed).map_err(|e| format!("{e:#}"));
            let net_a = builders[a].network_side()?;
            let net_b = builders[b].network_side()?;
            let (side_a, side_b) = (contestant(&net_a, &make_a), contestant(&net_b, &make_b));
            play_contest(&side_a, &side_b, &options, &todo, &|g| {
                status.game_done(g.a_points());
                let line = record::line_with_index(&g.record_line(&specs[a], &specs[b]), g.index);
                log.add(
                    g.index,
                    Recorded {
                        line,
                        a_points: g.a_points(),
                    },
                );
            })
            .map_err(|e| anyhow::anyhow!("{what}: {e}"))?;
        }
        let p = Played {
            a,
            b,
            games: log.finish().with_context(|| format!("recording {what}"))?,
            from_record,
        };
        let s = p.score();
        status.line().note(&format!(
            "{what}: +{} ={} -{} ({:.1}%){}",
            s.wins,
            s.draws,
            s.losses,
            100.0 * s.score(),
            if from_record > 0 {
                format!(", {from_record} of {} games from the record", args.games)
            } else {
                String::new()
            }
        ));
        played.push(p);
    }
    status.line().finish();

    let results: Vec<Pairing> = played
        .iter()
        .map(|p| Pairing {
            a: p.a,
            b: p.b,
            score: p.score(),
        })
        .collect();
    let ratings = fit(specs.len(), &results, anchor).map_err(|e| match e {
        RatingError::NotConnected(who) => anyhow::anyhow!(
            "players {} have no games linking them to the anchor",
            who.iter()
                .map(|&p| specs[p].as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => anyhow::anyhow!(other),
    })?;
    let from_record: usize = played.iter().map(|p| p.from_record).sum();
    let total = ratings.games as usize;

    let png = args
        .out
        .clone()
        .or_else(|| args.record.as_ref().map(|d| d.join("ladder.png")));
    if let Some(path) = &png {
        draw_chart(path, &specs, &ratings, &args)?;
    }
    let seconds = started.elapsed().as_secs_f64();
    if args.json {
        println!(
            "{}",
            json_summary(
                &specs,
                &ratings,
                &played,
                &args,
                total - from_record,
                from_record,
                png.as_deref(),
                seconds
            )
        );
    } else {
        print!(
            "{}",
            table(&specs, &ratings, &args, total - from_record, from_record)
        );
        if let Some(path) = &png {
            println!("wrote {}", path.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The first line of the table and the chart's title.
fn headline(specs: &[String], args: &Args) -> String {
    format!(
        "Ladder of {} players, {}, {} game{} a pairing",
        specs.len(),
        record::mode(args.gauntlet),
        args.games,
        if args.games == 1 { "" } else { "s" }
    )
}

/// How the ratings were made, in one sentence.
fn method(specs: &[String], r: &Ratings) -> String {
    format!(
        "Bradley-Terry ratings with draws (Davidson's model; draw parameter {:.3}, i.e. {:.1}% \
         draws between equals) by maximum likelihood; ±95% is 1.96 standard errors from the \
         inverse Fisher information, relative to the anchor {} = 0.",
        r.draw_nu,
        100.0 * r.equal_draw_rate(),
        specs[r.anchor]
    )
}

/// The printed table: rank, player, rating, ±95%, games, score; from the highest rating down.
fn table(specs: &[String], r: &Ratings, args: &Args, played: usize, from_record: usize) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {} games ({} drawn), {played} played now, {from_record} from the record",
        headline(specs, args),
        r.games,
        r.draws
    );
    let width = specs.iter().map(String::len).max().unwrap_or(6).max(6);
    let _ = writeln!(
        out,
        "{:>4}  {:<width$}  {:>7}  {:>6}  {:>6}  {:>6}",
        "rank", "player", "rating", "±95%", "games", "score"
    );
    for (rank, &p) in r.ranking().iter().enumerate() {
        let x = &r.players[p];
        let (rating, ci) = if p == r.anchor {
            ("0".to_string(), "anchor".to_string())
        } else {
            (format!("{:+.0}", x.rating), format!("±{:.0}", x.ci95))
        };
        let _ = writeln!(
            out,
            "{:>4}  {:<width$}  {:>7}  {:>6}  {:>6}  {:>5.1}%",
            rank + 1,
            specs[p],
            rating,
            ci,
            x.record.games(),
            100.0 * x.record.score()
        );
    }
    let _ = writeln!(out, "{}", method(specs, r));
    out
}

/// The one JSON object of `--json`.
#[allow(clippy::too_many_arguments)]
fn json_summary(
    specs: &[String],
    r: &Ratings,
    played: &[Played],
    args: &Args,
    played_now: usize,
    from_record: usize,
    png: Option<&Path>,
    seconds: f64,
) -> serde_json::Value {
    let ranks = r.ranking();
    let players: Vec<serde_json::Value> = r
        .players
        .iter()
        .enumerate()
        .map(|(p, x)| {
            let rank = ranks.iter().position(|&q| q == p).map_or(0, |i| i + 1);
            json!({
                "player": specs[p],
                "rank": rank,
                "rating": x.rating,
                "ci95": [x.rating - x.ci95, x.rating + x.ci95],
                "interval": x.ci95,
                "games": x.record.games(),
                "wins": x.record.wins,
                "draws": x.record.draws,
                "losses": x.record.losses,
                "score": x.record.score(),
            })
        })
        .collect();
    let pairings: Vec<serde_json::Value> = played
        .iter()
        .map(|p| {
            let s = p.score();
            json!({
                "a": specs[p.a],
                "b": specs[p.b],
                "games": s.games(),
                "wins": s.wins,
                "draws": s.draws,
                "losses": s.losses,
                "score": s.score(),
            })
        })
        .collect();
    json!({
        "players": players,
        "anchor": specs[r.anchor],
        "mode": record::mode(args.gauntlet),
        "games_per_pairing": args.games,
        "model": "bradley-terry-davidson",
        "draw_nu": r.draw_nu,
        "games": r.games,
        "draws": r.draws,
        "played": played_now,
        "from_record": from_record,
        "pairings": pairings,
        "png": png.map(|p| p.display().to_string()),
        "seconds": seconds,
    })
}

/// Draws the ratings chart to `path` (atomically).
fn draw_chart(path: &Path, specs: &[String], r: &Ratings, args: &Args) -> anyhow::Result<()> {
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
    let subtitle = format!(
        "Bradley-Terry ratings with draws, 95% intervals; {} = 0; {} games, {} drawn",
        specs[r.anchor], r.games, r.draws
    );
    let png = draw(&headline(specs, args), &subtitle, &bars)?.encode_png()?;
    write_atomic(path, &png).with_context(|| format!("the ladder chart {}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairings_cover_every_pair_or_the_first_against_all() {
        assert_eq!(pairings(3, false), vec![(0, 1), (0, 2), (1, 2)]);
        assert_eq!(pairings(4, true), vec![(0, 1), (0, 2), (0, 3)]);
        assert_eq!(pairings(2, true), pairings(2, false));
        assert_eq!(pairings(6, false).len(), 15);
    }

    #[test]
    fn pairing_seeds_differ() {
        let seeds: std::collections::HashSet<u64> = pairings(5, false)
            .iter()
            .map(|&(a, b)| pairing_seed(1, a, b))
            .collect();
        assert_eq!(seeds.len(), 10);
        assert_ne!(pairing_seed(1, 0, 1), pairing_seed(2, 0, 1));
    }
}
