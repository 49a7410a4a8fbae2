//! What keeps the evaluation during training from saturating: opponents at the network's own
//! time per move (`ms=auto` in an `[eval] opponents` spec) and the network's Elo against a
//! fixed anchor (`[eval] anchor`), fitted over every evaluation match of the run so far.
//!
//! The rating is a maximum-likelihood Bradley–Terry fit with draws ([`oware_arena::ratings`],
//! as `oware ladder` computes it) in which every evaluated network (one per step) and every
//! fixed opponent is a player and the anchor is 0. Each evaluation plays the anchor, and all
//! of them play the same other opponents, so the opponents' ratings are learned from the
//! networks that scored neither 0% nor 100% against them: once a network sweeps the anchor,
//! its rating still comes from the stronger opponents (and from `vs_previous` matches, which
//! link each network to the one before). An `ms=auto` opponent is one player over the run (the
//! network's time per move barely changes while its size and simulations stay the same).

use crate::eval::EvalLine;
use oware_arena::MatchScore;
use oware_arena::ratings::{Pairing, fit};
use oware_engine::Game;
use oware_search::{Limits, Player};
use std::time::{Duration, Instant};

/// The option of an opponent spec that `[eval]` replaces by the network's time per move.
pub const AUTO_MS: &str = "ms=auto";

/// Moves timed to measure the network's time per move (after one untimed warm-up move).
pub const TIMED_MOVES: usize = 8;

/// Whether `spec` asks for the network's time per move.
pub fn has_auto_ms(spec: &str) -> bool {
    spec.split_once(':')
        .is_some_and(|(_, options)| options.split(',').any(|o| o == AUTO_MS))
}

/// `spec` with `ms=auto` replaced by `ms=MILLIS`; `spec` itself when it has no `ms=auto`.
pub fn resolve_auto_ms(spec: &str, millis: u64) -> String {
    let Some((kind, options)) = spec.split_once(':') else {
        return spec.to_string();
    };
    let options: Vec<String> = options
        .split(',')
        .map(|o| {
            if o == AUTO_MS {
                format!("ms={millis}")
            } else {
                o.to_string()
            }
        })
        .collect();
    format!("{kind}:{}", options.join(","))
}

/// The mean time per move of `player` in milliseconds (rounded up, at least 1): one warm-up
/// move, then [`TIMED_MOVES`] moves of a game from the start, each searched alone on this
/// thread, as an equal-time opponent would search.
pub fn measure_millis_per_move(player: &mut dyn Player) -> anyhow::Result<u64> {
    let mut game = Game::new();
    let mut spent = Duration::ZERO;
    let mut timed = 0u32;
    for i in 0..=TIMED_MOVES {
        if game.is_over() {
            break;
        }
        let start = Instant::now();
        let choice = player
            .choose(&game, Limits::default())
            .map_err(|e| anyhow::anyhow!("timing the network's moves: {e}"))?;
        if i > 0 {
            spent += start.elapsed();
            timed += 1;
        }
        game.play(choice.mv)
            .map_err(|e| anyhow::anyhow!("timing the network's moves: {e}"))?;
    }
    let mean = spent.as_secs_f64() * 1000.0 / f64::from(timed.max(1));
    Ok((mean.ceil() as u64).max(1))
}

/// The network's Elo against the anchor at one evaluation, with its 95% interval.
#[derive(Clone, Debug, PartialEq)]
pub struct AnchorElo {
    /// The anchor's spec (rated 0).
    pub anchor: String,
    /// The network's Elo.
    pub elo: f64,
    /// The 95% interval.
    pub ci95: (f64, f64),
}

/// Who a line's opponent is in the fit: a fixed opponent by its configured spec, or the
/// network of an earlier step (a `vs_previous` match names its checkpoint `step-NNNNNNN`).
fn opponent_key(line: &EvalLine) -> Option<String> {
    if !line.vs_previous {
        return Some(format!(
            "spec {}",
            line.configured.as_deref().unwrap_or(&line.opponent)
        ));
    }
    line.opponent
        .split([',', '/', '\\', '='])
        .find_map(|part| part.strip_prefix("step-"))
        .and_then(|digits| digits.parse::<u64>().ok())
        .map(|step| format!("net {step}"))
}

/// Fits the ratings over `lines` (every evaluation match of the run so far, this evaluation's
/// included) and returns the network of `step` against `anchor`; `None` when no line of `step`
/// exists. A fit that fails (players that no games link to the anchor) is an error.
pub fn anchor_elo(
    lines: &[EvalLine],
    anchor: &str,
    step: u64,
) -> anyhow::Result<Option<AnchorElo>> {
    let mut names: Vec<String> = vec![format!("spec {anchor}")];
    let index = |name: String, names: &mut Vec<String>| match names.iter().position(|n| *n == name)
    {
        Some(i) => i,
        None => {
            names.push(name);
            names.len() - 1
        }
    };
    let mut pairings = Vec::new();
    for line in lines {
        let Some(them) = opponent_key(line) else {
            continue;
        };
        let (_, w, d, l) = line.wdl;
        let a = index(format!("net {}", line.step), &mut names);
        let b = index(them, &mut names);
        if a != b {
            pairings.push(Pairing {
                a,
                b,
                score: MatchScore::new(w, d, l),
            });
        }
    }
    let Some(me) = names.iter().position(|n| *n == format!("net {step}")) else {
        return Ok(None);
    };
    if names.len() < 2 {
        return Ok(None);
    }
    match fit(names.len(), &pairings, 0) {
        Ok(r) => {
            let mine = r.players[me];
            Ok(Some(AnchorElo {
                anchor: anchor.to_string(),
                elo: mine.rating,
                ci95: (mine.rating - mine.ci95, mine.rating + mine.ci95),
            }))
        }
        Err(e) => Err(anyhow::anyhow!("rating against the anchor {anchor}: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The report's evaluation-line fixture (training time and games play no part here).
    fn line(step: u64, opponent: &str, wdl: (u32, u32, u32)) -> EvalLine {
        crate::report::tests::line(step, 0.0, opponent, wdl)
    }

    #[test]
    fn auto_ms_is_found_and_replaced() {
        assert!(has_auto_ms("alphabeta:ms=auto"));
        assert!(has_auto_ms("alphabeta:egtb=t,ms=auto"));
        assert!(!has_auto_ms("alphabeta:ms=20"));
        assert!(!has_auto_ms("random"));
        assert_eq!(resolve_auto_ms("alphabeta:ms=auto", 7), "alphabeta:ms=7");
        assert_eq!(
            resolve_auto_ms("alphabeta:egtb=t,ms=auto", 12),
            "alphabeta:egtb=t,ms=12"
        );
        assert_eq!(resolve_auto_ms("random", 5), "random");
    }

    #[test]
    fn a_saturated_anchor_still_rates_through_a_stronger_opponent() {
        let anchor = "alphabeta:depth=4";
        let strong = "alphabeta:ms=auto";
        let mut lines = Vec::new();
        // Early networks lose some games to the anchor and most to the strong opponent; the
        // last sweeps the anchor but scores half against the strong one.
        for (step, vs_anchor, vs_strong) in [
            (1000, (10, 0, 10), (2, 0, 18)),
            (2000, (16, 0, 4), (6, 0, 14)),
            (3000, (20, 0, 0), (10, 0, 10)),
        ] {
            let mut strong_line = line(step, &format!("{strong}-resolved"), vs_strong);
            strong_line.configured = Some(strong.to_string());
            lines.push(line(step, anchor, vs_anchor));
            lines.push(strong_line);
        }
        let at = |step| {
            anchor_elo(&lines, anchor, step)
                .expect("fits")
                .expect("linked")
        };
        let first = at(1000);
        assert!(first.elo.abs() < 60.0, "{first:?}");
        assert!(first.ci95.0 < first.elo && first.elo < first.ci95.1);
        let last = at(3000);
        // Finite despite the sweep, and above the middle network.
        assert!(last.elo.is_finite() && last.elo > at(2000).elo, "{last:?}");
        assert!(last.ci95.1 - last.ci95.0 < 1000.0, "{last:?}");
        assert_eq!(anchor_elo(&lines, anchor, 4000).expect("fits"), None);
    }

    #[test]
    fn previous_matches_link_networks() {
        let anchor = "alphabeta:depth=4";
        let lines = vec![
            line(1000, anchor, (10, 0, 10)),
            line(2000, anchor, (12, 0, 8)),
            line(
                2000,
                "mcts:model=runs/x/checkpoints/step-0001000,sims=100",
                (15, 0, 5),
            ),
        ];
        let r = anchor_elo(&lines, anchor, 2000)
            .expect("fits")
            .expect("linked");
        let one = anchor_elo(&lines, anchor, 1000)
            .expect("fits")
            .expect("linked");
        assert!(r.elo > one.elo, "{r:?} {one:?}");
    }
}
