//! The interface between search and whatever judges positions (a network, a uniform prior).

use oware_engine::Position;

/// What an evaluator says of one position, from the point of view of the side to move.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Evaluation {
    /// Probabilities over the mover's six houses in sowing order (index = [`oware_engine::Move::relative`]).
    /// Illegal moves have probability 0; the legal ones sum to 1.
    pub policy: [f32; 6],
    /// Expected result for the side to move, in [-1, 1].
    pub value: f32,
}

/// Why an evaluator could not judge a batch. A search that gets one stops and passes it on:
/// it never falls back to a made-up evaluation.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum EvalError {
    /// The evaluator produced a NaN or infinite number (e.g. a diverged network).
    #[error("the evaluator's {what} for position {index} of the batch is not a finite number")]
    NonFinite {
        /// Index of the position in the batch.
        index: usize,
        /// Which output (`"policy"`, `"value"`, ...).
        what: &'static str,
    },
    /// The backend returned fewer (or more) numbers than the batch needs.
    #[error(
        "the evaluator returned {got} numbers for a batch of {positions} positions ({expected} expected)"
    )]
    WrongLength {
        /// Positions in the batch.
        positions: usize,
        /// Numbers expected.
        expected: usize,
        /// Numbers returned.
        got: usize,
    },
    /// Anything else that stopped the evaluator (a device error, ...), in words.
    #[error("{0}")]
    Failed(String),
}

/// Judges a batch of live positions at once. Shared by reference between rayon workers.
pub trait Evaluator: Sync {
    /// Fills `out[i]` with the evaluation of `positions[i]`. Every position is live (has a
    /// legal move); `out.len() == positions.len()`. On an error `out` is unspecified and the
    /// caller must not use it.
    fn evaluate(&self, positions: &[Position], out: &mut [Evaluation]) -> Result<(), EvalError>;

    /// [`Evaluator::evaluate`], told for each position whether it is *fresh*: nothing was
    /// played since the last capture (a capture's child, or the start of a game), so its value
    /// does not depend on the history. `fresh.len() == positions.len()`. The searches call this
    /// one; an evaluator whose answer does not depend on the history (a network) keeps the
    /// default, which ignores `fresh`.
    fn evaluate_fresh(
        &self,
        positions: &[Position],
        fresh: &[bool],
        out: &mut [Evaluation],
    ) -> Result<(), EvalError> {
        debug_assert_eq!(fresh.len(), positions.len());
        self.evaluate(positions, out)
    }
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
    fn evaluate(&self, positions: &[Position], out: &mut [Evaluation]) -> Result<(), EvalError> {
        for (pos, e) in positions.iter().zip(out.iter_mut()) {
            *e = Evaluation {
                policy: uniform_policy(pos),
                value: 0.0,
            };
        }
        Ok(())
    }
}

impl<E: Evaluator + Send + ?Sized> Evaluator for std::sync::Arc<E> {
    fn evaluate(&self, positions: &[Position], out: &mut [Evaluation]) -> Result<(), EvalError> {
        (**self).evaluate(positions, out)
    }

    fn evaluate_fresh(
        &self,
        positions: &[Position],
        fresh: &[bool],
        out: &mut [Evaluation],
    ) -> Result<(), EvalError> {
        (**self).evaluate_fresh(positions, fresh, out)
    }
}
