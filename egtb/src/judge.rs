//! Judging a move against the tables: was it best, and how many seeds did it give away?
//!
//! Values are intervals (see the module docs), so each verdict is one of "proven", "proven
//! not", or "undecided", and the seeds lost are a range.

use super::bounds::Bounds;
use super::probe::{Analysis, Outcome, Tables};
use super::prove::{Proof, Prover, proof_depth};
use oware_engine::{Game, Move};
use std::time::Instant;

/// What the tables say of one move chosen in an analysed position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// Seeds on the board.
    pub seeds: u8,
    /// `Some(true)`: no move does better; `Some(false)`: some move surely does better;
    /// `None`: the intervals overlap.
    pub optimal: Option<bool>,
    /// The board seeds the move gives away compared with the best move, lowest and highest.
    pub lost: (u8, u8),
    /// `Some(true)`: the move keeps the best result (win, draw, loss) the position allows;
    /// `Some(false)`: it surely throws a better result away; `None`: undecided.
    pub keeps_result: Option<bool>,
    /// `Some(true)`: some legal move is surely worse than another, so the position tests the
    /// player; `Some(false)`: every legal move is worth the same (or there is only one), so any
    /// move is optimal; `None`: the intervals cannot tell.
    pub choice: Option<bool>,
    /// Nodes the proofs that narrowed the moves' intervals visited ([`prove_moves`]); 0 when
    /// the analysis was the tables' alone.
    pub nodes: u64,
}

/// Nodes per threshold `oware judge` gives [`prove_moves`] by default, and the budget of an
/// alpha-beta root's second round of seed proofs where its best moves are contested: one
/// number, so the player proves as much as the judge that scores it.
pub const JUDGE_PROOF_NODES: u64 = 400_000;

/// Thresholds a move's bisection in [`prove_moves`] may leave open before it stops.
const OPEN_THRESHOLDS: usize = 3;

/// The game's analysis ([`Tables::analyse`]: a capture child at its entry value, a
/// repetition exactly, a quiet child at its stored interval), with every move still open
/// narrowed by bounded proofs from the game's real history: the child's value is bisected
/// with the [`Prover`], `node_limit` nodes per threshold, none after `deadline`. Returns the
/// analysis and the nodes the proofs expanded; `None` where [`Tables::analyse`] gives none.
pub fn prove_moves(
    tables: &Tables,
    prover: &mut Prover,
    game: &Game,
    node_limit: u64,
    deadline: Option<Instant>,
) -> Option<(Analysis, u64)> {
    let mut analysis = tables.analyse(game)?;
    let nodes = narrow_moves(&mut analysis, prover, game, &|_| true, node_limit, deadline);
    Some((analysis, nodes))
}

/// Narrows `analysis` (of `game`, from [`Tables::analyse`] or [`prove_moves`]) further: the
/// interval of every move `which` selects that is neither exact nor a repetition is bisected
/// from where it stands, as in [`prove_moves`], and the position's interval follows. Returns
/// the nodes the proofs expanded. An alpha-beta root uses it to prove only its contested moves
/// again, with a larger budget.
pub fn narrow_moves(
    analysis: &mut Analysis,
    prover: &mut Prover,
    game: &Game,
    which: &dyn Fn(Move) -> bool,
    node_limit: u64,
    deadline: Option<Instant>,
) -> u64 {
    let mut nodes = 0u64;
    let n = analysis.probe.seeds;
    for m in analysis.moves.iter_mut() {
        if m.bounds.is_exact() || m.repeats || !which(m.mv) {
            continue;
        }
        let mut child = game.clone();
        let Ok(effect) = child.play(m.mv) else {
            continue;
        };
        if child.is_over() {
            continue;
        }
        let c = effect.captured;
        let child_n = n - c;
        // The mover gets c + (child_n − value(child)).
        let (mut lo, mut hi) = (child_n + c - m.bounds.hi, child_n + c - m.bounds.lo);
        // Bisect; a threshold left open is set aside and the search goes on among the others
        // (nearest the middle first), up to `OPEN_THRESHOLDS` of them.
        let mut open: Vec<u8> = Vec::new();
        while lo < hi && open.len() < OPEN_THRESHOLDS {
            let middle = (lo + hi).div_ceil(2);
            let Some(mid) = (lo + 1..=hi)
                .filter(|t| !open.contains(t))
                .min_by_key(|&t| t.abs_diff(middle))
            else {
                break;
            };
            let p = prover.secures(
                child.position(),
                child.seen_since_capture(),
                mid as i32,
                proof_depth(game),
                node_limit,
                deadline,
            );
            nodes += prover.nodes();
            match p {
                Proof::Yes => lo = mid,
                Proof::No => hi = mid - 1,
                Proof::Unknown => open.push(mid),
            }
        }
        m.bounds = Bounds {
            lo: c + child_n - hi,
            hi: c + child_n - lo,
        };
    }
    let best_lo = analysis.secured().unwrap_or(0);
    let best_hi = analysis.attainable().unwrap_or(0);
    let b = &mut analysis.probe.bounds;
    *b = Bounds {
        lo: b.lo.max(best_lo),
        hi: b.hi.min(best_hi).max(b.lo.max(best_lo)),
    };
    nodes
}

/// Judges `mv` in `analysis`; `None` when `mv` is not one of its legal moves.
pub fn judge(analysis: &Analysis, mv: Move) -> Option<Verdict> {
    let chosen = analysis.moves.iter().find(|m| m.mv == mv)?;
    let others = analysis.moves.iter().filter(|m| m.mv != mv);
    let (mut other_lo, mut other_hi) = (None::<u8>, None::<u8>);
    for m in others {
        other_lo = Some(other_lo.map_or(m.bounds.lo, |x| x.max(m.bounds.lo)));
        other_hi = Some(other_hi.map_or(m.bounds.hi, |x| x.max(m.bounds.hi)));
    }
    let c = chosen.bounds;
    let p = &analysis.probe;
    // Some move is sure to do worse than another (it is not among the moves that may be
    // best); or every move is sure to be best (all of one exact value), or there is only one.
    let all = analysis.moves.len();
    let choice = if analysis.best_moves().len() < all {
        Some(true)
    } else if all == 1 || analysis.optimal_moves().len() == all {
        Some(false)
    } else {
        None
    };
    let result = |seeds: u8| Outcome::of_total(p.captured_own as u32 + seeds as u32);
    let (optimal, lost, keeps_result) = match (other_lo, other_hi) {
        // The only legal move.
        (None, _) | (_, None) => (Some(true), (0, 0), Some(true)),
        (Some(olo), Some(ohi)) => {
            let optimal = if c.lo >= ohi {
                Some(true)
            } else if c.hi < olo {
                Some(false)
            } else {
                None
            };
            let lost = (olo.saturating_sub(c.hi), ohi.saturating_sub(c.lo));
            let keeps = if result(c.lo) >= result(ohi) {
                Some(true)
            } else if result(c.hi) < result(olo) {
                Some(false)
            } else {
                None
            };
            (optimal, lost, keeps)
        }
    };
    Some(Verdict {
        seeds: p.seeds,
        optimal,
        lost,
        keeps_result,
        choice,
        nodes: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Bounds, MoveBounds, Probe};
    use oware_engine::Side;

    fn analysis(moves: &[(usize, u8, u8)], own: u8) -> Analysis {
        let moves: Vec<MoveBounds> = moves
            .iter()
            .map(|&(h, lo, hi)| MoveBounds {
                mv: Move::from_relative(Side::South, h),
                bounds: Bounds { lo, hi },
                repeats: false,
            })
            .collect();
        Analysis {
            probe: Probe {
                bounds: Bounds { lo: 0, hi: 10 },
                seeds: 10,
                captured_own: own,
                captured_other: 38 - own,
            },
            moves,
        }
    }

    #[test]
    fn verdicts_follow_the_intervals() {
        let mv = |h| Move::from_relative(Side::South, h);
        // a is exact 7, b exact 4, c somewhere in 3..=8.
        let a = analysis(&[(0, 7, 7), (1, 4, 4), (2, 3, 8)], 17);
        let va = judge(&a, mv(0)).expect("legal");
        assert_eq!(va.optimal, None, "c may be better");
        assert_eq!(va.lost, (0, 1));
        let vb = judge(&a, mv(1)).expect("legal");
        assert_eq!(vb.optimal, Some(false));
        assert_eq!(vb.lost, (3, 4));
        // With 17 captured: a (24 final) draws at worst... and c may win; b (21) loses.
        assert_eq!(vb.keeps_result, Some(false));
        assert_eq!(va.keeps_result, None);
        assert_eq!(va.choice, Some(true), "b is surely worse than a");
        let only = analysis(&[(3, 2, 6)], 17);
        assert_eq!(judge(&only, mv(3)).map(|v| v.optimal), Some(Some(true)));
        assert_eq!(judge(&only, mv(3)).map(|v| v.choice), Some(Some(false)));
        let equal = analysis(&[(0, 5, 5), (1, 5, 5)], 17);
        assert_eq!(judge(&equal, mv(1)).map(|v| v.choice), Some(Some(false)));
        let open = analysis(&[(0, 5, 5), (1, 4, 6)], 17);
        assert_eq!(judge(&open, mv(0)).map(|v| v.choice), Some(None));
        assert!(judge(&only, mv(4)).is_none());
        // Everything wins with 30 captured: any move keeps the result.
        let won = analysis(&[(0, 7, 7), (1, 0, 2)], 30);
        assert_eq!(judge(&won, mv(1)).map(|v| v.keeps_result), Some(Some(true)));
    }
}
