//! The interface between search and whatever judges positions (a network, a uniform prior).

use crate::position::Position;

/// What an evaluator says of one position, from the point of view of the side to move.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Evaluation {
    /// Probabilities over the mover's six houses in sowing order (index = [`crate::Move::relative`]).
    /// Illegal moves have probability 0; the legal ones sum to 1.
    pub policy: [f32; 6],
    /// Expected result for the side to move, in [-1, 1].
    pub value: f32,
}

/// Judges a batch of live positions at once. Shared by reference between rayon workers.
pub trait Evaluator: Sync {
    /// Fills `out[i]` with the evaluation of `positions[i]`. Every position is live (has a
    /// legal move); `out.len() == positions.len()`.
    fn evaluate(&self, positions: &[Position], out: &mut [Evaluation]);
}

/// The evaluator that knows nothing: uniform policy over the legal moves, value 0.
#[derive(Clone, Copy, Debug, Default)]
pub struct UniformEvaluator;

/// A uniform policy over the legal moves of `pos`.
pub fn uniform_policy(pos: &Position) -> [f32; 6] {
    let moves = pos.legal_moves();
    let mut policy = [0.0; 6];
    if !moves.is_empty() {
        let p = 1.0 / moves.len() as f32;
        for m in &moves {
            policy[m.relative()] = p;
        }
    }
    policy
}

impl Evaluator for UniformEvaluator {
    fn evaluate(&self, positions: &[Position], out: &mut [Evaluation]) {
        for (pos, e) in positions.iter().zip(out.iter_mut()) {
            *e = Evaluation {
                policy: uniform_policy(pos),
                value: 0.0,
            };
        }
    }
}

impl<E: Evaluator + Send + ?Sized> Evaluator for std::sync::Arc<E> {
    fn evaluate(&self, positions: &[Position], out: &mut [Evaluation]) {
        (**self).evaluate(positions, out)
    }
}
