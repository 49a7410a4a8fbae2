//! A ladder: ratings of many players. Every pair of players (or, in a gauntlet, the first
//! against each other one) plays a match on the shared match runner (paired openings, colours
//! swapped, games in parallel); then the games give maximum likelihood Bradley–Terry ratings
//! with draws and 95% intervals ([`crate::ratings`]), anchored at one player. With a record
//! folder every finished game is kept ([`record`]) and a ladder that was cut short resumes,
//! playing only the missing games. `oware ladder` is a thin shell over [`play_ladder`].

pub mod record;

use crate::elo::MatchScore;
use crate::ratings::{Pairing, RatingError, Ratings, fit};
use crate::{Contestant, MatchOptions, mix, play_contest};
use anyhow::{Context, bail};
use record::{PairingLog, PairingSpecs, Recorded, Settings};
use serde_json::json;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The most games one pairing may have.
pub const MAX_GAMES: u32 = 100_000;

/// What a ladder plays.
#[derive(Clone, Debug, PartialEq)]
pub struct Ladder {
    /// The players' specs, in order (two or more, no two alike).
    pub players: Vec<String>,
    /// Games per pairing: each opening twice with colours swapped.
    pub games: u32,
    /// The player rated 0.
    pub anchor: usize,
    /// Only the first player against each of the others.
    pub gauntlet: bool,
    /// The record folder, if games are kept (and a cut-short ladder resumes from it).
    pub record: Option<PathBuf>,
    /// How each pairing's games are played; its `games` and `seed` are set per pairing (the
    /// seed from [`pairing_seed`] of this seed).
    pub options: MatchOptions,
}

impl Ladder {
    /// A ladder of `players` (specs), `anchor` naming the player rated 0 (`None`: the first).
    /// Duplicate players, an anchor that is not a player, too few players or games, and (with
    /// a record folder) a spec holding a space are errors.
    pub fn new(
        players: Vec<String>,
        anchor: Option<&str>,
        gauntlet: bool,
        record: Option<PathBuf>,
        options: MatchOptions,
    ) -> anyhow::Result<Ladder> {
        if players.len() < 2 {
            bail!("a ladder needs two players or more");
        }
        if options.games == 0 || options.games > MAX_GAMES {
            bail!(
                "{} games a pairing: 1 to {MAX_GAMES} are allowed",
                options.games
            );
        }
        for (i, s) in players.iter().enumerate() {
            if players[..i].contains(s) {
                bail!("player {s} is listed twice");
            }
        }
        let anchor = match anchor {
            None => 0,
            Some(a) => players.iter().position(|s| s == a).with_context(|| {
                format!(
                    "--anchor {a} is not one of the players ({})",
                    players.join(", ")
                )
            })?,
        };
        if record.is_some()
            && let Some(s) = players.iter().find(|s| s.contains(char::is_whitespace))
        {
            bail!("player {s} has a space in its spec, which a game record cannot hold");
        }
        Ok(Ladder {
            games: options.games,
            players,
            anchor,
            gauntlet,
            record,
            options,
        })
    }

    /// The pairs of players that meet.
    pub fn pairings(&self) -> Vec<(usize, usize)> {
        pairings(self.players.len(), self.gauntlet)
    }

    fn settings(&self) -> Settings {
        Settings {
            players: self.players.clone(),
            gauntlet: self.gauntlet,
            games: self.games,
            seed: self.options.seed,
            opening_plies: self.options.opening_plies,
            max_plies: self.options.max_plies,
        }
    }

    /// The first line of the table and the chart's title.
    pub fn headline(&self) -> String {
        format!(
            "Ladder of {} players, {}, {} game{} a pairing",
            self.players.len(),
            record::mode(self.gauntlet),
            self.games,
            if self.games == 1 { "" } else { "s" }
        )
    }

    /// How the ratings were made, in one sentence.
    pub fn method(&self, r: &Ratings) -> String {
        format!(
            "Bradley-Terry ratings with draws (Davidson's model; draw parameter {:.3}, i.e. {:.1}% \
             draws between equals) by maximum likelihood; ±95% is 1.96 standard errors from the \
             inverse Fisher information, relative to the anchor {} = 0.",
            r.draw_nu,
            100.0 * r.equal_draw_rate(),
            self.players[r.anchor]
        )
    }

    /// The printed table: rank, player, rating, ±95%, games, score; from the highest rating
    /// down.
    pub fn table(&self, st: &Standings) -> String {
        let (specs, r) = (&self.players, &st.ratings);
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{}: {} games ({} drawn), {} played now, {} from the record",
            self.headline(),
            r.games,
            r.draws,
            st.played_now,
            st.from_record
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
        let _ = writeln!(out, "{}", self.method(r));
        out
    }

    /// The one JSON object of `oware ladder --json`: `png` the chart written, if any, and
    /// `seconds` the ladder's wall time.
    pub fn json(&self, st: &Standings, png: Option<&Path>, seconds: f64) -> serde_json::Value {
        let (specs, r) = (&self.players, &st.ratings);
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
        let pairings: Vec<serde_json::Value> = st
            .played
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
            "mode": record::mode(self.gauntlet),
            "games_per_pairing": self.games,
            "model": "bradley-terry-davidson",
            "draw_nu": r.draw_nu,
            "games": r.games,
            "draws": r.draws,
            "played": st.played_now,
            "from_record": st.from_record,
            "pairings": pairings,
            "png": png.map(|p| p.display().to_string()),
            "seconds": seconds,
        })
    }

    /// The chart's subtitle.
    pub fn chart_subtitle(&self, r: &Ratings) -> String {
        format!(
            "Bradley-Terry ratings with draws, 95% intervals; {} = 0; {} games, {} drawn",
            self.players[r.anchor], r.games, r.draws
        )
    }
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
pub fn pairing_seed(seed: u64, a: usize, b: usize) -> u64 {
    mix(seed ^ mix(((a as u64) << 32) | b as u64))
}

/// What a ladder reports while it plays.
pub trait LadderProgress: Sync {
    /// A pairing with games to play starts (`label` names it).
    fn start(&self, label: &str);
    /// A game finished with `a_points` for the pairing's first player.
    fn game_done(&self, a_points: f64);
    /// A line about a finished pairing.
    fn note(&self, text: &str);
}

/// One finished pairing.
#[derive(Clone, Debug)]
pub struct Played {
    /// The first player's index.
    pub a: usize,
    /// The second player's index.
    pub b: usize,
    /// Its games by index.
    pub games: BTreeMap<u32, Recorded>,
    /// How many of them came from the record.
    pub from_record: usize,
}

impl Played {
    /// A's wins, draws and losses.
    pub fn score(&self) -> MatchScore {
        let mut s = MatchScore::default();
        for g in self.games.values() {
            s.add(g.a_points);
        }
        s
    }
}

/// What a ladder found.
#[derive(Clone, Debug)]
pub struct Standings {
    /// The ratings.
    pub ratings: Ratings,
    /// Every pairing.
    pub played: Vec<Played>,
    /// Games played now.
    pub played_now: usize,
    /// Games read from the record.
    pub from_record: usize,
}

/// The games the record holds already, per pairing (none without a record folder); opens
/// (or checks) the record folder first.
pub fn recorded_games(ladder: &Ladder) -> anyhow::Result<Vec<BTreeMap<u32, Recorded>>> {
    if let Some(dir) = &ladder.record {
        record::open(dir, &ladder.settings())?;
    }
    let mut recorded = Vec::new();
    for (a, b) in ladder.pairings() {
        recorded.push(match &ladder.record {
            Some(dir) => record::read_pairing(
                &record::pairing_file(dir, a, b),
                &PairingSpecs {
                    a: &ladder.players[a],
                    b: &ladder.players[b],
                    games: ladder.games,
                    max_plies: ladder.options.max_plies,
                },
            )?,
            None => BTreeMap::new(),
        });
    }
    Ok(recorded)
}

/// The games of the ladder still to play, given what [`recorded_games`] found.
pub fn missing_games(ladder: &Ladder, recorded: &[BTreeMap<u32, Recorded>]) -> u64 {
    recorded
        .iter()
        .map(|r| u64::from(ladder.games) - r.len() as u64)
        .sum()
}

/// Plays the ladder: `sides[i]` plays player `i`, `recorded` is what [`recorded_games`]
/// found. Each finished game goes to the record folder as it ends.
pub fn play_ladder(
    ladder: &Ladder,
    sides: &[Contestant<'_>],
    recorded: Vec<BTreeMap<u32, Recorded>>,
    progress: &dyn LadderProgress,
) -> anyhow::Result<Standings> {
    let specs = &ladder.players;
    if sides.len() != specs.len() {
        bail!("{} sides for {} players", sides.len(), specs.len());
    }
    let pairs = ladder.pairings();
    let mut played = Vec::with_capacity(pairs.len());
    for (k, (&(a, b), old)) in pairs.iter().zip(recorded).enumerate() {
        let todo: Vec<u32> = (0..ladder.games).filter(|i| !old.contains_key(i)).collect();
        let from_record = old.len();
        let path = ladder
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
            progress.start(&format!("{what}: "));
            let options = MatchOptions {
                seed: pairing_seed(ladder.options.seed, a, b),
                ..ladder.options
            };
            play_contest(&sides[a], &sides[b], &options, &todo, &|g| {
                progress.game_done(g.a_points());
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
        progress.note(&format!(
            "{what}: +{} ={} -{} ({:.1}%){}",
            s.wins,
            s.draws,
            s.losses,
            100.0 * s.score(),
            if from_record > 0 {
                format!(", {from_record} of {} games from the record", ladder.games)
            } else {
                String::new()
            }
        ));
        played.push(p);
    }
    let results: Vec<Pairing> = played
        .iter()
        .map(|p| Pairing {
            a: p.a,
            b: p.b,
            score: p.score(),
        })
        .collect();
    let ratings = fit(specs.len(), &results, ladder.anchor).map_err(|e| match e {
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
    let played_now = ratings.games as usize - from_record;
    Ok(Standings {
        ratings,
        played,
        played_now,
        from_record,
    })
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
