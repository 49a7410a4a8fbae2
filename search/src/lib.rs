//! # oware-search
//!
//! The searches that choose moves, and the two interfaces everything above them uses:
//!
//! - [`Evaluator`]: (policy over the mover's six houses, value) of a *batch* of positions — a
//!   network, random rollouts, or a uniform prior; endgame tables can correct one
//!   ([`TableEvaluator`]).
//! - [`Player`]: anything that picks a move in a game (random, alpha-beta, MCTS, a person).
//! - [`alphabeta`]: negamax with iterative deepening, a transposition table, move ordering, a
//!   heuristic evaluation and endgame tables at the leaves and at the root.
//! - [`mcts`]: Monte Carlo tree search (PUCT or a Gumbel root, random rollouts), one game at a
//!   time or many games in flight with one evaluator call per pass.
//!
//! It may use the rules engine (`oware-engine`) and the endgame tables (today a module of the
//! engine crate); it knows nothing of neural networks, matches or training.

pub mod alphabeta;
mod evaluator;
pub mod mcts;
mod player;
mod table_evaluator;
mod table_root;

pub use alphabeta::{AlphaBetaOptions, AlphaBetaPlayer, AlphaBetaResult, SearchBudget, Searcher};
pub use evaluator::{EvalError, Evaluation, Evaluator, UniformEvaluator, uniform_policy};
pub use mcts::{MctsPlayer, RolloutMctsPlayer};
pub use player::{
    Budget, Choice, PROGRESS_MILLIS, Player, PlayerError, RandomPlayer, Score, SearchInfo,
};
pub use table_evaluator::TableEvaluator;
pub use table_root::{
    CONTESTED_PROOF_NODES, PROOF_NODES, SEED_PROOF_NODES, restrict_to, table_root_moves,
};
