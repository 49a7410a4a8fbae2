//! Uniform random playouts: the benchmark of the rules and the leaf value of rollout MCTS.

use crate::game::{GameResult, adjudicate};
use crate::moves::Move;
use crate::position::Position;
use rand::Rng;

/// A 1024-bit filter over position keys: a clear bit proves a key was not seen, so the exact
/// (linear) search of the history runs only on a possible hit.
#[derive(Default)]
struct KeyFilter([u64; 16]);

impl KeyFilter {
    #[inline]
    fn bit(key: u128) -> (usize, u64) {
        let h = ((key as u64) ^ ((key >> 64) as u64)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let b = (h >> 54) as usize;
        (b >> 6, 1u64 << (b & 63))
    }
    #[inline]
    fn insert(&mut self, key: u128) {
        let (w, m) = Self::bit(key);
        self.0[w] |= m;
    }
    #[inline]
    fn may_contain(&self, key: u128) -> bool {
        let (w, m) = Self::bit(key);
        self.0[w] & m != 0
    }
}

/// The index of the `k`-th set bit of `mask` (`k < mask.count_ones()`).
#[inline]
fn nth_bit(mut mask: u8, k: u32) -> usize {
    for _ in 0..k {
        mask &= mask - 1;
    }
    mask.trailing_zeros() as usize
}

/// Plays uniformly random legal moves from `pos` until the game ends, with the full rules
/// (repetition since the last capture, ply limit). `seen` holds the keys of the positions since
/// the last capture that led to `pos` (`pos` included), and is used as scratch space; `ply` is the
/// number of plies already played. `pos` must be live. Returns the result.
///
/// Each ply draws one number, `rng.random_range(0..n)` over the `n: u32` legal moves in house
/// order, generates moves once (as a bit mask), and scans the history for a repetition only when
/// a 1024-bit filter says the position may have been seen.
pub fn random_playout<R: Rng + ?Sized>(
    mut pos: Position,
    seen: &mut Vec<u128>,
    mut ply: u32,
    max_plies: u32,
    rng: &mut R,
) -> GameResult {
    let mut filter = KeyFilter::default();
    for &k in seen.iter() {
        filter.insert(k);
    }
    let mut moves = pos.legal_mask();
    loop {
        debug_assert!(moves != 0, "playout from a finished position");
        let k = rng.random_range(0..moves.count_ones());
        let m = Move::from_relative(pos.to_move(), nth_bit(moves, k));
        let effect = pos.play_unchecked(m);
        ply += 1;
        if effect.captured > 0 {
            seen.clear();
            filter = KeyFilter::default();
        }
        moves = pos.legal_mask();
        let key = pos.key();
        let ended =
            moves == 0 || ply >= max_plies || (filter.may_contain(key) && seen.contains(&key));
        if ended && let Some(result) = adjudicate(&mut pos, seen, ply, max_plies) {
            return result;
        }
        filter.insert(key);
        seen.push(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Game;
    use rand::SeedableRng;
    use rand::rngs::SmallRng;

    /// The fast playout loop reaches the same results as playing the same moves through `Game`.
    #[test]
    fn playout_agrees_with_game() {
        for seed in 0..300 {
            let mut rng = SmallRng::seed_from_u64(seed);
            let mut seen = vec![Position::start().key()];
            let r = random_playout(Position::start(), &mut seen, 0, 1000, &mut rng);
            // Replay the same random choices through Game.
            let mut rng = SmallRng::seed_from_u64(seed);
            let mut g = Game::new();
            while !g.is_over() {
                let moves = g.legal_moves();
                let m = moves.as_slice()[rng.random_range(0..moves.len() as u32) as usize];
                g.play_unchecked(m);
            }
            assert_eq!(Some(r), g.result(), "seed {seed}");
        }
    }
}
