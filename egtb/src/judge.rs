//! Judging a move against the tables: was it best, and how many seeds did it give away?
//!
//! Values are intervals (see the module docs), so each verdict is one of "proven", "proven
//! not", or "undecided", and the seeds lost are a range.

use super::probe::{Analysis, Outcome};
use oware_engine::Move;

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
        let only = analysis(&[(3, 2, 6)], 17);
        assert_eq!(judge(&only, mv(3)).map(|v| v.optimal), Some(Some(true)));
        assert!(judge(&only, mv(4)).is_none());
        // Everything wins with 30 captured: any move keeps the result.
        let won = analysis(&[(0, 7, 7), (1, 0, 2)], 30);
        assert_eq!(judge(&won, mv(1)).map(|v| v.keeps_result), Some(Some(true)));
    }
}
