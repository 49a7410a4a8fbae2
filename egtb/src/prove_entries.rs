//! The proof pass: entries a table's exact search left open, settled by proof-number search.
//!
//! The exact search of [`super::component`] is a depth-first alpha-beta over (position, path)
//! without a transposition table, and some entries stay open within its node budget however
//! large (table 8: 2,818 open at 1,000,000 nodes an entry, 2,183 at 4,000,000). The
//! [`Prover`]'s proof-number search asks the same yes/no question of the real game from an
//! empty history, grows its tree where a proof looks cheapest, and keeps what it settles of
//! positions right after a capture for the proofs after it; on those entries it settles about
//! a third within 100,000 nodes. Every answer holds after an empty history: a repetition ends
//! the line exactly as in the game, and every leaf is cut only by an interval that holds after
//! its path (see [`crate::prove`]).
//!
//! The prover plays the real game, whose 25-seed ending stops a line where the tables' values
//! play on; its answers agree with the tables' only at a result's threshold. So each question
//! "at least `t` of the board's seeds?" is asked of the board with the mover holding `25 − t`
//! captured seeds ([`question`]): securing `t` is then exactly winning.

use super::bounds::Bounds;
use super::index::unrank;
use super::probe::Tables;
use super::prove::{PROOF_DEPTH, Proof, Prover};
use super::table::Table;
use oware_engine::{Position, Side};
use rayon::prelude::*;
use std::path::Path;
use std::sync::Arc;

/// What the proof pass did for one table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct EntryProofs {
    /// Open entries it looked at.
    pub searched: u64,
    /// Those it settled exactly.
    pub settled: u64,
    /// Proof-number nodes over all proofs.
    pub nodes: u64,
}

/// Narrows the open entries of `table` (of `n` seeds, whose smaller tables are `smaller`) by
/// proofs of at most `budget` nodes an entry, all thresholds together, on the current rayon
/// pool (none with a budget of 0). Returns the table with its entries narrowed and what the
/// pass did.
pub(crate) fn prove_open_entries(
    n: u8,
    smaller: &[Table],
    table: Table,
    budget: u64,
) -> (Table, EntryProofs) {
    if budget == 0 {
        return (table, EntryProofs::default());
    }
    let Some(mut entries) = table.entry_codes().map(<[u8]>::to_vec) else {
        return (table, EntryProofs::default());
    };
    let open: Vec<(u64, Bounds)> = (0..table.len())
        .filter_map(|i| Bounds::from_code(entries[i as usize]).map(|b| (i, b)))
        .filter(|(_, b)| !b.is_exact())
        .collect();
    if open.is_empty() {
        return (table, EntryProofs::default());
    }
    let mut set: Vec<Table> = smaller[..n as usize].to_vec();
    set.push(table.clone());
    let tables = Arc::new(Tables::from_tables(Path::new("(being built)"), set));
    let results: Vec<(u64, Bounds, u64)> = open
        .par_iter()
        .map_init(
            || Prover::new(Arc::clone(&tables)),
            |prover, &(i, start)| prove_entry(prover, n, i, start, budget),
        )
        .collect();
    let mut stats = EntryProofs {
        searched: open.len() as u64,
        ..EntryProofs::default()
    };
    for (i, b, nodes) in results {
        stats.nodes += nodes;
        stats.settled += b.is_exact() as u64;
        entries[i as usize] = b.code();
    }
    let codes = table.codes().to_vec();
    match Table::with_entries(n as usize, codes, entries) {
        Ok(t) => (t, stats),
        Err(e) => unreachable!("narrowed entries stay valid: {e}"),
    }
}

/// The entry interval of board `i` of the table of `n` seeds, `start` so far, after proofs of
/// at most `budget` nodes in all that halve it; with the nodes spent.
fn prove_entry(
    prover: &mut Prover,
    n: u8,
    i: u64,
    start: Bounds,
    budget: u64,
) -> (u64, Bounds, u64) {
    let Some(board) = unrank(i, n as usize) else {
        unreachable!("position {i} lies in the table of {n} seeds")
    };
    let (mut lo, mut hi) = (start.lo as i32, start.hi as i32);
    let mut spent = 0u64;
    while lo < hi && spent < budget {
        let t = (lo + hi + 1) / 2;
        let pos = question(&board, n, t);
        let answer = prover.secures(&pos, &[pos.key()], t, PROOF_DEPTH, budget - spent, None);
        spent += prover.nodes();
        match answer {
            Proof::Yes => lo = t,
            Proof::No => hi = t - 1,
            Proof::Unknown => break,
        }
    }
    let b = Bounds {
        lo: lo as u8,
        hi: hi as u8,
    };
    (i, b, spent)
}

/// The board of `n` seeds (South to move) as the real game's position in which South wins
/// exactly when it secures at least `t` of the board's seeds (`1 ≤ t ≤ n`): South holds `25 − t`
/// captured seeds, North the rest, so neither has 25 yet.
fn question(board: &[u8; 12], n: u8, t: i32) -> Position {
    debug_assert!(1 <= t && t <= i32::from(n));
    let south = (25 - t) as u8;
    match Position::from_parts(*board, [south, 48 - n - south], Side::South) {
        Ok(p) => p,
        Err(e) => unreachable!("a table board of {n} seeds asked for {t}: {e}"),
    }
}
