//! The single-game search, for players and analysis.

use super::config::{ConfigError, MctsConfig};
use super::slot::{MctsResult, SlotSearch};
use crate::evaluator::{EvalError, Evaluation, Evaluator};
use oware_engine::Game;
use oware_engine::Position;
use rand::Rng;

/// A search over one game, reusing its tree from one call to the next when the game continues.
///
/// Runs exactly the same steps as one slot of [`super::BatchedSearch`]: given the same
/// configuration, game and random generator state, both return the same result.
#[derive(Clone, Debug)]
pub struct Search {
    config: MctsConfig,
    slot: SlotSearch,
    positions: Vec<Position>,
    fresh: Vec<bool>,
    evals: Vec<Evaluation>,
}

impl Search {
    /// A search with `config`, which is checked.
    pub fn new(config: MctsConfig) -> Result<Search, ConfigError> {
        config.validate()?;
        Ok(Search {
            config,
            slot: SlotSearch::new(),
            positions: Vec::new(),
            fresh: Vec::new(),
            evals: Vec::new(),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &MctsConfig {
        &self.config
    }

    /// Puts `game` at the root. When `game` continues the game searched last (same start, the
    /// same moves so far plus the moves played since) and `reuse_tree` is on, the subtree of
    /// the moves played since is kept; otherwise the tree starts afresh.
    pub fn set_game(&mut self, game: &Game) {
        self.slot.follow(game, self.config.reuse_tree);
    }

    /// Forgets the tree and puts `game` at the root.
    pub fn reset(&mut self, game: &Game) {
        self.slot.reset(game);
    }

    /// Runs `sims` simulations (at least 1) from the root set by [`Search::set_game`]. With
    /// `explore` the root gets noise (Dirichlet for PUCT, Gumbel for Gumbel) and the PUCT move is
    /// drawn with the temperature schedule; without it the choice is greedy. Returns `None` when
    /// the game at the root is over.
    ///
    /// # Errors
    /// The evaluator's error; the search is abandoned (the tree is cleared below the root).
    pub fn run<E: Evaluator + ?Sized, R: Rng + ?Sized>(
        &mut self,
        evaluator: &E,
        sims: u32,
        explore: bool,
        rng: &mut R,
    ) -> Result<Option<MctsResult>, EvalError> {
        self.run_steered(evaluator, sims, explore, rng, &mut |_, _| None)
    }

    /// As [`Search::run`], asking `steer` after each pass of the search (`spent`: false) and
    /// when the budget is spent (`spent`: true) for a new budget: `Some(total)` makes the
    /// search `total` simulations in all (at least those started; a Gumbel root re-plans its
    /// halving), `None` keeps it. Without new budgets the search runs exactly as
    /// [`Search::run`]; a timed search grows and ends its budget by the clock this way.
    ///
    /// # Errors
    /// As [`Search::run`].
    pub fn run_steered<E: Evaluator + ?Sized, R: Rng + ?Sized>(
        &mut self,
        evaluator: &E,
        sims: u32,
        explore: bool,
        rng: &mut R,
        steer: &mut dyn FnMut(&Search, bool) -> Option<u32>,
    ) -> Result<Option<MctsResult>, EvalError> {
        if self.slot.root_finished() {
            return Ok(None);
        }
        self.slot.begin(sims, explore, explore, &self.config, rng);
        let empty = Evaluation {
            policy: [0.0; 6],
            value: 0.0,
        };
        loop {
            if self.slot.is_done() {
                match steer(self, true) {
                    Some(total) if total > self.slot.started() && !self.slot.root_finished() => {
                        self.slot.resize(total, &self.config);
                        continue;
                    }
                    _ => break,
                }
            }
            let cfg = &self.config;
            self.positions.clear();
            self.fresh.clear();
            let (n, progress) = self.slot.gather(
                cfg,
                cfg.leaves_per_tree,
                &mut self.positions,
                &mut self.fresh,
            );
            if n > 0 {
                self.evals.clear();
                self.evals.resize(n, empty);
                if let Err(e) =
                    evaluator.evaluate_fresh(&self.positions, &self.fresh, &mut self.evals)
                {
                    self.slot.abandon();
                    return Err(e);
                }
            }
            self.slot.apply(cfg, &self.evals[..n], rng);
            if !progress {
                break;
            }
            if let Some(total) = steer(self, false) {
                self.slot.resize(total, &self.config);
            }
        }
        Ok(self.slot.result(&self.config, rng))
    }

    /// Simulations started in the current (or last) search.
    pub fn sims_started(&self) -> u32 {
        self.slot.started()
    }

    /// The search so far: the root value for the side to move and the principal variation, at
    /// most `max_len` moves; `None` before the root is evaluated or when the game is over.
    pub fn progress(&self, max_len: usize) -> Option<(f32, Vec<oware_engine::Move>)> {
        self.slot.progress(&self.config, max_len)
    }

    /// Visits of the root's children by policy index.
    pub fn root_visits(&self) -> [u32; 6] {
        self.slot.tree.root_visits()
    }

    /// Nodes in the tree.
    pub fn tree_size(&self) -> usize {
        self.slot.tree.nodes.len()
    }
}
