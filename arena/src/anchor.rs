//! The network's Elo against a fixed anchor (`[eval] anchor` of a training run), fitted over
//! every evaluation match of the run so far.
//!
//! The rating is a maximum-likelihood Bradley–Terry fit with draws ([`crate::ratings`], as
//! `oware ladder` computes it) in which every evaluated network (one per step) and every
//! fixed opponent is a player and the anchor is 0. Each evaluation plays the anchor, and all
//! of them play the same other opponents, so the opponents' ratings are learned from the
//! networks that scored neither 0% nor 100% against them: once a network sweeps the anchor,
//! its rating still comes from the stronger opponents (and from `vs_previous` matches, which
//! link each network to the one before). An `ms=auto` opponent is one player over the run (the
//! network's time per move barely changes while its size and simulations stay the same).

use crate::elo::MatchScore;
use crate::eval_log::EvalLine;
use crate::ratings::{Pairing, fit};

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

    /// The evaluation-line fixture (training time and games play no part here).
    fn line(step: u64, opponent: &str, wdl: (u32, u32, u32)) -> EvalLine {
        crate::eval_log::tests::line(step, 0.0, opponent, wdl)
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
