//! Monte Carlo tree search, generic over the [`Evaluator`](crate::Evaluator) trait.
//!
//! * [`MctsConfig`]: every setting (the trainer's `[mcts]` TOML section).
//! * [`Search`]: one game, for players and analysis.
//! * [`BatchedSearch`]: many games in flight, all their leaves evaluated in one call per pass —
//!   the self-play driver.
//! * [`RolloutSearch`]: plain UCT with random-rollout values (no network).
//! * [`MctsPlayer`] and [`RolloutMctsPlayer`]: the [`Player`](crate::Player)s on top.
//!
//! # Conventions
//! * A **simulation** is one descent from the root that adds one visit to one root child. The
//!   evaluation of a fresh root is a pass of its own and is not a simulation, so on a fresh tree
//!   the root children's visits sum to exactly the simulations requested. With a reused subtree
//!   the visits it already had are kept and the search adds `sims` more.
//! * Values are in [-1, 1]. A node's backed-up sum is from the point of view of the side that
//!   moved into it (negamax); reported values ([`MctsResult::value`]) are for the side to move
//!   at the root. A finished game is valued exactly: the sign of the final margin for the side
//!   to move, with repetition judged along each line from the game's own history and the game's
//!   ply limit.
//! * Policies and visit arrays are indexed by the mover's house, [`Move::relative`](oware_engine::Move::relative).
//! * With `root = "puct"` every node uses PUCT. With `root = "gumbel"` the root uses
//!   Gumbel-top-k and sequential halving, and interior nodes use PUCT (`gumbel_interior =
//!   "puct"`, the default) or the deterministic Gumbel-MuZero rule (`gumbel_interior =
//!   "gumbel"`).
//!
//! # Self-play with the batched driver
//! ```
//! use oware_search::mcts::{BatchedSearch, MctsConfig, SlotParams};
//! use oware_engine::Game;
//! use oware_search::UniformEvaluator;
//! use rand::SeedableRng;
//!
//! let config = MctsConfig { sims: 16, ..MctsConfig::default() };
//! let mut driver = BatchedSearch::new(config, 8).expect("valid config");
//! let mut rng = rand::rngs::SmallRng::seed_from_u64(1);
//! let evaluator = UniformEvaluator; // a network in the trainer
//! let mut finished = 0;
//! for _ in 0..20 {
//!     // Optional per-slot settings, e.g. playout cap randomization:
//!     driver.set_params(0, SlotParams { sims: 4, noise: false, temperature: true });
//!     let results = driver.search(&evaluator, &mut rng).expect("the uniform evaluator never fails");
//!     for (slot, result) in results.iter().enumerate() {
//!         let Some(r) = result else { continue };
//!         // Record a training example: driver.game(slot).position(), r.policy, later the outcome.
//!         let _example = (*driver.game(slot).position(), r.policy);
//!         driver.advance(slot, r.mv).expect("the search returns legal moves");
//!         if driver.game(slot).is_over() {
//!             finished += 1;
//!             driver.reset(slot, Game::new());
//!         }
//!     }
//! }
//! assert!(finished <= 8 * 20);
//! ```

mod batched;
mod config;
mod gumbel;
mod noise;
mod player;
mod puct;
mod rollout;
mod search;
mod slot;
mod tree;

pub use batched::{BatchedSearch, SlotParams};
pub use config::{ConfigError, CpuctForm, InteriorRule, MctsConfig, RootAlgorithm};
pub use player::{MctsPlayer, OwnTime, RolloutMctsPlayer};
pub use rollout::{DEFAULT_UCT_C, RolloutResult, RolloutSearch};
pub use search::Search;
pub use slot::MctsResult;
