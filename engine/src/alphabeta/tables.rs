//! Endgame tables in the search: the interval a table gives a node, as scores.
//!
//! A table value is a final seed count without a distance, so table results get a band of
//! their own between heuristic scores and proven game ends: a table win scores
//! [`TABLE_WIN`] plus 100 per seed of final margin, a loss the mirror image, a draw 0. They
//! are ordinary (non-decisive) scores for the transposition table.

use super::eval::SEED;
use crate::egtb::Tables;
use crate::position::Position;

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

/// The scores of the lowest and highest final margin the tables allow the side to move in
/// `pos` (whatever the history), or `None` when its board is not covered.
#[inline]
pub fn table_bounds(tables: &Tables, pos: &Position) -> Option<(i32, i32)> {
    let (lo, hi) = tables.probe(pos)?.margins();
    Some((table_score(lo), table_score(hi)))
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
