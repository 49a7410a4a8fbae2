//! Judging a player by the endgame tables: its move on positions from real games, each with
//! its game's history, against what the tables prove — the share of optimal moves and the
//! seeds lost per move, per seed count. `oware judge` is a thin shell over this module.
//!
//! The tables store intervals (values can depend on the history), so each verdict is proven,
//! proven not, or undecided, and the seeds lost are a range: the tally keeps the sum of its
//! lower and of its upper ends.

use crate::{MatchOptions, PlayerFactory, play_match};
use anyhow::Context;
use oware_egtb::{Prover, Tables, Verdict, judge, prove_moves};
use oware_engine::record::games_in;
use oware_engine::{DEFAULT_MAX_PLIES, Game};
use oware_search::Budget;
use rand::SeedableRng;
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rayon::prelude::*;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};

/// Every live position of `game`'s history (start included) with a seed count in `lo..=hi`
/// where the mover has a choice of at least two legal moves, as games stopped there. A forced
/// move says nothing about the player, so such positions are not judged.
pub fn candidates(game: &Game, lo: u8, hi: u8, out: &mut Vec<Game>) {
    let mut g = Game::from_position(*game.start(), game.max_plies());
    for &m in game.moves() {
        if g.is_over() {
            break;
        }
        let n: u8 = g.position().board().iter().sum();
        if (lo..=hi).contains(&n) && g.legal_moves().len() >= 2 {
            out.push(g.clone());
        }
        if g.play(m).is_err() {
            break;
        }
    }
}

/// The games of a record file's text (`pit --record` files, self-play game lists: one game
/// per line, moves separated by spaces, anything after a tab or `#` ignored); `source` names
/// the file in errors.
pub fn games_from_record(text: &str, source: &Path) -> anyhow::Result<Vec<Game>> {
    games_in(text)
        .into_iter()
        .map(|(n, line)| {
            Game::replay(line.tokens.iter().copied())
                .with_context(|| format!("{} line {n}", source.display()))
        })
        .collect()
}

/// Candidate positions with `lo..=hi` seeds from games that `source` plays against itself
/// after random openings: rounds of `2 × threads` games (at least 8) until there are
/// `4 × wanted` candidates or 64 rounds were played. `progress` hears the games played and
/// the candidates so far after each round.
pub fn positions_from_selfplay(
    source: &PlayerFactory<'_>,
    (lo, hi): (u8, u8),
    wanted: usize,
    seed: u64,
    threads: usize,
    progress: &mut dyn FnMut(u64, usize),
) -> anyhow::Result<Vec<Game>> {
    let mut out = Vec::new();
    let per_round = (2 * threads as u32).max(8);
    for round in 0..64u64 {
        let options = MatchOptions {
            games: per_round,
            opening_plies: None,
            seed: seed.wrapping_add(round.wrapping_mul(0x9E37_79B9)),
            threads,
            max_plies: DEFAULT_MAX_PLIES,
        };
        let games =
            play_match(source, source, &options, &|_| {}).map_err(|e| anyhow::anyhow!(e))?;
        for g in &games {
            candidates(&g.game, lo, hi, &mut out);
        }
        progress((round + 1) * u64::from(per_round), out.len());
        if out.len() >= 4 * wanted {
            break;
        }
    }
    Ok(out)
}

/// `wanted` of the candidates, drawn with `seed`.
pub fn draw_positions(mut candidates: Vec<Game>, wanted: usize, seed: u64) -> Vec<Game> {
    let mut rng = SmallRng::seed_from_u64(seed);
    candidates.shuffle(&mut rng);
    candidates.truncate(wanted);
    candidates
}

/// Totals of one seed count (or of all).
#[derive(Clone, Copy, Debug, Default)]
pub struct Tally {
    /// Positions judged.
    pub positions: u32,
    /// Of them, the move was proven optimal.
    pub optimal: u32,
    /// Of them, the move was proven not optimal.
    pub suboptimal: u32,
    /// Seeds lost by the moves: the sum of the lower ends.
    pub lost_lo: u64,
    /// Seeds lost by the moves: the sum of the upper ends.
    pub lost_hi: u64,
    /// The move proven to keep the position's result.
    pub keeps: u32,
    /// The move proven to throw the position's result away.
    pub throws: u32,
    /// Nodes the proofs from the real histories visited.
    pub nodes: u64,
    /// Decided positions where some move is surely worse than another (a real choice, see
    /// [`Verdict::choice`]): a random mover is optimal in all the others.
    pub choice_decided: u32,
    /// Of them, the move was proven optimal.
    pub choice_optimal: u32,
}

impl Tally {
    /// Counts one verdict.
    pub fn add(&mut self, v: &Verdict) {
        self.positions += 1;
        match v.optimal {
            Some(true) => self.optimal += 1,
            Some(false) => self.suboptimal += 1,
            None => {}
        }
        self.lost_lo += v.lost.0 as u64;
        self.lost_hi += v.lost.1 as u64;
        self.nodes += v.nodes;
        if v.choice == Some(true) && v.optimal.is_some() {
            self.choice_decided += 1;
            self.choice_optimal += u32::from(v.optimal == Some(true));
        }
        match v.keeps_result {
            Some(true) => self.keeps += 1,
            Some(false) => self.throws += 1,
            None => {}
        }
    }

    /// Positions with a proven verdict.
    pub fn decided(&self) -> u32 {
        self.optimal + self.suboptimal
    }

    /// The JSON object of these totals.
    pub fn json(&self) -> Value {
        let n = self.positions.max(1) as f64;
        let share = (self.decided() > 0).then(|| self.optimal as f64 / self.decided() as f64);
        json!({
            "positions": self.positions,
            "optimal": self.optimal,
            "suboptimal": self.suboptimal,
            "undecided": self.positions - self.decided(),
            "decided": self.decided(),
            "decided_share": self.decided() as f64 / n,
            "proof_nodes": self.nodes,
            "optimal_share": share,
            "seeds_lost_per_move": [self.lost_lo as f64 / n, self.lost_hi as f64 / n],
            "result_kept": self.keeps,
            "result_thrown": self.throws,
            "with_choice": {
                "decided": self.choice_decided,
                "optimal": self.choice_optimal,
                "optimal_share": (self.choice_decided > 0)
                    .then(|| self.choice_optimal as f64 / self.choice_decided as f64),
            },
        })
    }
}

/// The verdicts of a judge, totalled per seed count and over all.
#[derive(Clone, Debug, Default)]
pub struct JudgeReport {
    /// Per seed count on the board.
    pub per_seeds: BTreeMap<u8, Tally>,
    /// Over all positions.
    pub total: Tally,
}

impl JudgeReport {
    /// Totals the verdicts.
    pub fn of(verdicts: &[Verdict]) -> JudgeReport {
        let mut r = JudgeReport::default();
        for v in verdicts {
            r.per_seeds.entry(v.seeds).or_default().add(v);
            r.total.add(v);
        }
        r
    }

    /// The JSON object of `oware judge --json`.
    pub fn json(&self, player: &str, egtb: &Path, (lo, hi): (u8, u8)) -> Value {
        let by_seeds: Vec<Value> = self
            .per_seeds
            .iter()
            .map(|(n, t)| {
                let mut j = t.json();
                j["seeds"] = json!(n);
                j
            })
            .collect();
        json!({
            "player": player,
            "egtb": egtb.display().to_string(),
            "seeds": [lo, hi],
            "total": self.total.json(),
            "per_seeds": by_seeds,
        })
    }

    /// The printed table, one row per seed count and one for all.
    pub fn table(&self, player: &str, egtb: &Path, (lo, hi): (u8, u8)) -> String {
        let mut out = format!(
            "{player} judged on {} positions with {lo}..={hi} seeds (tables in {})\n",
            self.total.positions,
            egtb.display()
        );
        out.push_str(
            "seeds  positions  decided  optimal (of decided)  with a choice  seeds lost/move  result thrown  proof nodes\n",
        );
        let line = |label: String, t: &Tally| {
            let n = t.positions.max(1) as f64;
            let share = |optimal: u32, decided: u32| {
                if decided > 0 {
                    format!(
                        "{:5.1}% of {:>4}",
                        100.0 * optimal as f64 / decided as f64,
                        decided
                    )
                } else {
                    "    - of    0".to_string()
                }
            };
            let all = share(t.optimal, t.decided());
            let choice = share(t.choice_optimal, t.choice_decided);
            format!(
                "{label:>5}  {:>9}  {:>6.1}%  {all:>20}  {choice:>13}  {:>6.2}..{:<6.2}  {:>13}  {:>11}\n",
                t.positions,
                100.0 * t.decided() as f64 / n,
                t.lost_lo as f64 / n,
                t.lost_hi as f64 / n,
                t.throws,
                t.nodes
            )
        };
        for (n, t) in &self.per_seeds {
            out.push_str(&line(n.to_string(), t));
        }
        out.push_str(&line("all".to_string(), &self.total));
        out
    }
}

/// The most nodes [`judge_positions`] lets one proof of a threshold visit by default.
pub const DEFAULT_PROOF_NODES: u64 = oware_egtb::JUDGE_PROOF_NODES;

/// Judges the player of `factory` (a fresh one per position, seeded from `seed`) on every
/// position, on `threads` threads; `progress` hears (judged, total) now and then. Each
/// position's moves are those of [`Tables::analyse`] (a capture child at its entry value),
/// the open ones narrowed by proofs from the game's real history of at most `proof_nodes`
/// nodes per threshold ([`prove_moves`]; 0: no proofs).
#[allow(clippy::too_many_arguments)]
pub fn judge_positions(
    tables: &Tables,
    positions: &[Game],
    factory: &PlayerFactory<'_>,
    seed: u64,
    threads: usize,
    proof_nodes: u64,
    progress: &(dyn Fn(u32, usize) + Sync),
) -> anyhow::Result<Vec<Verdict>> {
    let shared = std::sync::Arc::new(tables.clone());
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .context("starting the threads")?;
    let done = AtomicU32::new(0);
    let total = positions.len();
    pool.install(|| {
        positions
            .par_iter()
            .enumerate()
            .map(|(i, game)| -> anyhow::Result<Verdict> {
                let (analysis, nodes) = if proof_nodes > 0 {
                    let mut prover = Prover::new(std::sync::Arc::clone(&shared));
                    prove_moves(tables, &mut prover, game, proof_nodes, None)
                } else {
                    tables.analyse(game).map(|a| (a, 0))
                }
                .context("a candidate position is covered by the tables")?;
                let mut player = factory(seed ^ (i as u64).wrapping_mul(0x51ED))
                    .map_err(|e| anyhow::anyhow!(e))?;
                let choice = player
                    .choose(game, Budget::default())
                    .with_context(|| format!("{} choosing a move", player.name()))?;
                let mut v = judge(&analysis, choice.mv).with_context(|| {
                    format!("{} chose {}, not a legal move", player.name(), choice.mv)
                })?;
                v.nodes = nodes;
                let d = done.fetch_add(1, Ordering::Relaxed) + 1;
                if d.is_multiple_of(10) || d as usize == total {
                    progress(d, total);
                }
                Ok(v)
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use oware_egtb::{Table, solve_table};
    use oware_search::{Player, RandomPlayer};

    fn tables(max: u8) -> Tables {
        let mut tables: Vec<Table> = Vec::new();
        for n in 0..=max {
            let (t, _) = solve_table(n, &tables, &|_| {});
            tables.push(t);
        }
        Tables::from_tables(Path::new("mem"), tables)
    }

    #[test]
    fn records_give_games_and_damaged_lines_name_the_file() {
        let games = games_from_record("c F a\t1-0\n\n# note\nd A # after\n", Path::new("g.txt"))
            .expect("valid");
        assert_eq!(games.len(), 2);
        assert_eq!(games[1].moves().len(), 2);
        let e = games_from_record("c F\nc c\n", Path::new("g.txt")).expect_err("illegal");
        assert!(format!("{e:#}").contains("g.txt line 2"), "{e:#}");
    }

    #[test]
    fn candidates_are_the_live_positions_in_range() {
        let mut game = Game::new();
        let mut player = RandomPlayer::new(4);
        while !game.is_over() {
            let mv = player.choose(&game, Budget::default()).expect("live").mv;
            game.play(mv).expect("legal");
        }
        let mut out = Vec::new();
        candidates(&game, 2, 20, &mut out);
        for g in &out {
            let n: u8 = g.position().board().iter().sum();
            assert!((2..=20).contains(&n) && !g.is_over());
            assert!(
                g.legal_moves().len() >= 2,
                "a forced move is not a candidate"
            );
        }
        let mut all = Vec::new();
        candidates(&game, 0, 48, &mut all);
        assert!(all.len() >= out.len() && !all.is_empty());
    }

    #[test]
    fn a_random_player_is_judged_on_every_position() {
        let tb = tables(4);
        let make = |seed: u64| -> Result<Box<dyn Player>, String> {
            Ok(Box::new(RandomPlayer::new(seed)))
        };
        let found =
            positions_from_selfplay(&make, (2, 4), 10, 1, 2, &mut |_, _| {}).expect("plays");
        assert!(!found.is_empty());
        let positions = draw_positions(found, 10, 7);
        let verdicts =
            judge_positions(&tb, &positions, &make, 1, 2, 10_000, &|_, _| {}).expect("judges");
        assert_eq!(verdicts.len(), positions.len());
        let report = JudgeReport::of(&verdicts);
        assert_eq!(report.total.positions as usize, positions.len());
        let per: u32 = report.per_seeds.values().map(|t| t.positions).sum();
        assert_eq!(per, report.total.positions);
        let j = report.json("random", Path::new("mem"), (2, 4));
        assert_eq!(j["total"]["positions"], positions.len());
        let t = &report.total;
        assert!(t.choice_optimal <= t.choice_decided && t.choice_decided <= t.decided());
        assert_eq!(j["total"]["with_choice"]["decided"], t.choice_decided);
        assert!(
            report
                .table("random", Path::new("mem"), (2, 4))
                .contains("all")
        );
    }
}
