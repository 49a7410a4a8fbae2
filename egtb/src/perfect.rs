//! Perfect play from the tables: a move that keeps a position's exact value.
//!
//! At a position of exact value `v` (board seeds its mover secures, given the game's history)
//! every move's value lies within `[0, v]` and some move's is `v`. A move keeps the value when
//! its interval starts at `v` (a capture at its child's entry value, a repetition, or a quiet
//! move whose child's interval says so), or, for a quiet move, when a bounded [`Prover`] search
//! from the real history proves that the child's mover secures no more than its share. Moves
//! are also ruled out: one whose interval ends below `v`, or whose proof shows the child's
//! mover securing more, does not keep the value, so when a single move is left it is the one
//! that does (a forced move needs no proof).

use super::probe::{Analysis, MoveBounds, Probe, Tables};
use super::prove::{Proof, Prover, proof_depth};
use oware_engine::{Game, Move};
use std::sync::Arc;

/// A move of `game` (analysed as `analysis`) that keeps the value `v`, or `None` when none can
/// be shown to within proofs of at most `proof_nodes` nodes each.
pub fn keeping_move(
    analysis: &Analysis,
    game: &Game,
    v: u8,
    prover: &mut Prover,
    proof_nodes: u64,
) -> Option<Move> {
    let n = analysis.probe.seeds;
    // Some move's value is exactly `v`; a move whose interval ends below `v` is not it.
    let mut open: Vec<&MoveBounds> = analysis.moves.iter().filter(|m| m.bounds.hi >= v).collect();
    if let Some(m) = open.iter().find(|m| m.bounds.lo >= v) {
        return Some(m.mv);
    }
    let mut i = 0;
    while i < open.len() {
        let m = open[i];
        let mut child = game.clone();
        // Only a quiet move that leaves the game going needs a proof (a capture's child and a
        // finished game are valued exactly by the analysis already).
        let quiet = child.play(m.mv).is_ok_and(|e| e.captured == 0) && !child.is_over();
        if !quiet {
            i += 1;
            continue;
        }
        // The move keeps `v` exactly when the child's mover secures no more than n − v.
        let t = i32::from(n - v) + 1;
        match prover.secures(
            child.position(),
            child.seen_since_capture(),
            t,
            proof_depth(game),
            proof_nodes,
            None,
        ) {
            Proof::No => return Some(m.mv),
            // Proven to give the opponent more: not the move.
            Proof::Yes => {
                open.remove(i);
            }
            Proof::Unknown => i += 1,
        }
    }
    // Every other move is proven to lose value, so the one left keeps it.
    if let [only] = open[..] {
        return Some(only.mv);
    }
    None
}

/// The move of perfect play in `game`, with the position's probe (its exact value given the
/// game's history), when the tables give the position an exact value and a move that keeps it
/// can be shown within proofs of `proof_nodes` nodes; `None` otherwise (not covered, not
/// exact, the game over, or no move shown).
pub fn perfect_move(tables: &Arc<Tables>, game: &Game, proof_nodes: u64) -> Option<(Move, Probe)> {
    if game.is_over() {
        return None;
    }
    let analysis = tables.analyse(game)?;
    if !analysis.probe.bounds.is_exact() {
        return None;
    }
    let mut prover = Prover::new(Arc::clone(tables));
    let mv = keeping_move(
        &analysis,
        game,
        analysis.probe.bounds.lo,
        &mut prover,
        proof_nodes,
    )?;
    Some((mv, analysis.probe))
}
