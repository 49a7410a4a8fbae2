//! Endgame tables in the search: the interval a table gives a node, as scores.
//!
//! A table value is a final seed count without a distance, so table results get a band of
//! their own between heuristic scores and proven game ends: a table win scores
//! [`TABLE_WIN`] plus 100 per seed of final margin, a loss the mirror image, a draw 0. They
//! are ordinary (non-decisive) scores for the transposition table.
//!
//! A table interval holds whatever the history; where its values give different results
//! (a cycle-dependent result) the searching side assumes the worst for itself. So every table
//! node is scored from the point of view of the side the search is for (the root's side):
//! a settled result (every value in the interval gives it) scores as its lowest margin for
//! that side, exact where the value is; an open one is searched as usual and held inside the
//! band of that side's worst result: `0..TABLE_WIN` when it cannot lose, `−TABLE_WIN..0`
//! (exclusive) when it can. A side that plays the best-scored move therefore keeps the best
//! result the tables guarantee it, whatever the opponent does: it never loses a table
//! position the tables call won or drawn for it.
//!
//! A node reached by a capture has nothing played since it, so its interval is its entry
//! interval ([`Tables::entry`]). Any other node's interval is the stored one narrowed by what
//! its history since the capture allows ([`Tables::bounds_after`]): the entry interval widened
//! to the rows its mover would take by repeating a position of that history.
//! Where the search stops at an open node (its last ply), the node scores a mix of the
//! heuristic evaluation and the table's estimate ([`TableNode::leaf_score`]), held inside the
//! band. The estimate is the final margin [`LEAF_SHARE_TENTHS`] of the way up the node's
//! entry interval: the real history since a capture is short, and the interval after an
//! empty history predicts the game better than the one for every history.
//!
//! Above the search, the alpha-beta player proves the results of the root's moves with the
//! game's real history when the root is in the tables ([`oware_egtb::Prover`]) and
//! searches only the moves with the best proven result.

use super::eval::SEED;
use oware_egtb::{Probe, Tables};
use oware_engine::Position;
use oware_engine::Side;

/// The score of a table win by the smallest margin, less 100.
pub const TABLE_WIN: i32 = 15_000;

/// The score of a final margin (own seeds minus the opponent's) known from a table.
#[inline]
pub fn table_score(margin: i32) -> i32 {
    match margin.signum() {
        1 => TABLE_WIN + SEED * margin,
        -1 => -TABLE_WIN + SEED * margin,
        _ => 0,
    }
}

/// Where between the ends of a cycle-dependent interval a search that stops at the node
/// places the table's estimate, in tenths from the low end: chosen by matches of
/// `alphabeta:depth=8` with the tables up to 16 seeds against it without them, where 3
/// tenths did best and 1, 2, 4 and 5 worse (see `docs/results/2026-12-01-egtb-leaf-score.md`).
pub const LEAF_SHARE_TENTHS: i32 = 3;

/// The weight of the table's estimate in the score of a node where the search stops, in
/// tenths (the heuristic evaluation has the rest): chosen by the same matches, where 4 tenths
/// did best and 2, 3, 5 and 6 worse.
pub const LEAF_TABLE_TENTHS: i32 = 4;

/// What the tables say of a search node, as scores for its side to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableNode {
    /// The lowest score the node can take (see the module docs).
    pub floor: i32,
    /// The highest.
    pub ceiling: i32,
    /// Whether the history since the last capture narrowed `floor..=ceiling` below what the
    /// stored interval (valid after every history) gives: the node's score then holds only
    /// after that history.
    pub from_history: bool,
}

impl TableNode {
    /// The score of the node where the search stops at it: the heuristic evaluation
    /// `heuristic` and the table's `estimate` ([`table_estimate`]), weighted
    /// [`LEAF_TABLE_TENTHS`] to the estimate, held inside `floor..=ceiling`. Both matter: the
    /// estimate alone plays worse than the heuristic alone, the mix better than either (see
    /// `docs/results/2026-12-01-egtb-leaf-score.md`).
    #[inline]
    pub fn leaf_score(&self, heuristic: i32, estimate: i32) -> i32 {
        ((heuristic * (10 - LEAF_TABLE_TENTHS) + estimate * LEAF_TABLE_TENTHS) / 10)
            .clamp(self.floor, self.ceiling)
    }
}

/// What the tables say of `pos` when the search is for `side`, or `None` when the board is
/// not covered: `floor == ceiling` for a settled result, otherwise the range its search is
/// held to (see the module docs). `repeats` describes the history since the last capture
/// (the rows `pos`'s mover would take by repeating a position of it, `None` when it is
/// empty), which narrows the stored interval ([`Tables::bounds_after`]).
#[inline]
pub fn table_node(
    tables: &Tables,
    pos: &Position,
    side: Side,
    repeats: Option<(u8, u8)>,
) -> Option<TableNode> {
    let ((floor, ceiling), from_history) = match repeats {
        None => (
            band(tables.probe_with(pos, true)?.margins(), pos, side),
            false,
        ),
        Some(rows) => {
            // The stored interval is read once: for the band and to tell whether the history
            // narrowed it.
            let stored = tables.probe(pos)?;
            let after = Probe {
                bounds: tables.narrow_after(pos, stored.bounds, rows)?,
                ..stored
            };
            let b = band(after.margins(), pos, side);
            (b, b != band(stored.margins(), pos, side))
        }
    };
    Some(TableNode {
        floor,
        ceiling,
        from_history,
    })
}

/// The scores a node with final margins `lo..=hi` for its mover can take when the search is
/// for `side` (see the module docs).
#[inline]
fn band((lo, hi): (i32, i32), pos: &Position, side: Side) -> (i32, i32) {
    // Margins for `side`.
    let mine = pos.to_move() == side;
    let (lo, hi) = if mine { (lo, hi) } else { (-hi, -lo) };
    let (floor, ceiling) = if lo > 0 || hi < 0 || (lo == 0 && hi == 0) {
        let s = table_score(lo);
        (s, s)
    } else if lo == 0 {
        (0, TABLE_WIN - 1)
    } else {
        (-TABLE_WIN + 1, -1)
    };
    if mine {
        (floor, ceiling)
    } else {
        (-ceiling, -floor)
    }
}

/// The table's estimate of `pos` for its side to move, in heuristic units (100 a seed), where
/// a search stops at it: the final margin [`LEAF_SHARE_TENTHS`] of the way up its **entry**
/// interval, the one after an empty history ([`Tables::entry`]). Only an estimate: the
/// node's real history may differ, which is why its score stays inside the band of its
/// stored interval. The entry interval estimates better than the stored one (see the
/// `docs/results/2026-12-01-egtb-leaf-score.md`). `None` when the board is not covered.
#[inline]
pub fn table_estimate(tables: &Tables, pos: &Position) -> Option<i32> {
    let (lo, hi) = tables.probe_with(pos, true)?.margins();
    Some(SEED * (lo + (hi - lo) * LEAF_SHARE_TENTHS / 10))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alphabeta::WIN_THRESHOLD;

    #[test]
    fn table_scores_order_results_and_margins_below_proven_ends() {
        assert!(table_score(-1) < table_score(0) && table_score(0) < table_score(1));
        assert!(table_score(2) > table_score(1) && table_score(-2) < table_score(-1));
        assert!(table_score(48) < WIN_THRESHOLD && table_score(-48) > -WIN_THRESHOLD);
        // Above any heuristic score (the captured difference dominates it: 48 seeds at most).
        assert!(table_score(1) > 48 * SEED * 2);
    }
}
