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
//! A node reached by a capture has nothing played since it, so its first move cannot repeat
//! and its interval is the stored one narrowed by one look at its moves ([`Tables::entry`]).
//! Where the search stops at an open node (its last ply), the node scores the mean of the
//! heuristic evaluation and the table's estimate (the final margin [`LEAF_SHARE_TENTHS`] of
//! the way up the interval), held inside the band ([`TableNode::leaf_score`]): the
//! mean plays better than either alone.

use super::eval::SEED;
use crate::egtb::Tables;
use crate::position::Position;
use crate::side::Side;

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
/// places its value, in tenths from the low end: chosen by matches of `alphabeta:depth=8`
/// with the tables up to 16 seeds against it without them, where 3 tenths did best, the
/// middle nearly as well and either end worse (see the README's endgame-table section).
pub const LEAF_SHARE_TENTHS: i32 = 3;

/// What the tables say of a search node, as scores for its side to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableNode {
    /// The lowest score the node can take (see the module docs).
    pub floor: i32,
    /// The highest.
    pub ceiling: i32,
    /// The final margin [`LEAF_SHARE_TENTHS`] of the way up the table's interval, in
    /// heuristic units (100 a seed), for the side to move.
    pub estimate: i32,
}

impl TableNode {
    /// The score of the node where the search stops at it: the mean of the heuristic
    /// evaluation `heuristic` and the table's estimate, held inside `floor..=ceiling`.
    /// Both matter: the estimate alone plays worse than the heuristic alone, the mean better
    /// than either (see the README's endgame-table section).
    #[inline]
    pub fn leaf_score(&self, heuristic: i32) -> i32 {
        ((heuristic + self.estimate) / 2).clamp(self.floor, self.ceiling)
    }
}

/// What the tables say of `pos` when the search is for `side`, or `None` when the board is
/// not covered: `floor == ceiling` for a settled result, otherwise the range its search is
/// held to (see the module docs), with the estimate a search uses where it stops. `fresh`
/// when nothing was played since the last capture, which narrows the interval
/// ([`Tables::entry`]).
#[inline]
pub fn table_node(tables: &Tables, pos: &Position, side: Side, fresh: bool) -> Option<TableNode> {
    let (lo, hi) = tables.probe_with(pos, fresh)?.margins();
    let mine = pos.to_move() == side;
    let estimate = SEED * (lo + (hi - lo) * LEAF_SHARE_TENTHS / 10);
    // Margins for `side`.
    let (lo, hi) = if mine { (lo, hi) } else { (-hi, -lo) };
    let (floor, ceiling) = if lo > 0 || hi < 0 || (lo == 0 && hi == 0) {
        let s = table_score(lo);
        (s, s)
    } else if lo == 0 {
        (0, TABLE_WIN - 1)
    } else {
        (-TABLE_WIN + 1, -1)
    };
    let (floor, ceiling) = if mine {
        (floor, ceiling)
    } else {
        (-ceiling, -floor)
    };
    Some(TableNode {
        floor,
        ceiling,
        estimate,
    })
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
