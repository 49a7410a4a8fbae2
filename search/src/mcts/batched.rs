//! The batched driver: many games in flight, one evaluator call per pass for all their leaves.

use super::config::{ConfigError, MctsConfig};
use super::slot::{MctsResult, SlotSearch};
use crate::evaluator::{EvalError, Evaluation, Evaluator};
use oware_engine::Move;
use oware_engine::{Game, GameError};
use oware_engine::{MoveEffect, Position};
use rand::Rng;

/// How one slot's next searches run. Playout cap randomization (as in KataGo) keeps two kinds
/// of search apart: "record this move" goes with a full search with `noise`, and "explore on
/// this move" (`temperature`) applies to every move of the opening plies, cheap ones included.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotParams {
    /// Simulations per search (at least 1 is run). Lower it for the cheap searches of playout
    /// cap randomization.
    pub sims: u32,
    /// Root noise: Dirichlet noise on the root priors (PUCT) or the Gumbel draw at the root
    /// (Gumbel).
    pub noise: bool,
    /// Draw the move with the temperature during the first `temperature_plies` plies (PUCT:
    /// by `visits^(1/temperature)`; Gumbel: with the Gumbel draw, even without `noise`);
    /// later moves, or all moves without it, are greedy.
    pub temperature: bool,
}

impl SlotParams {
    /// A search of `sims` simulations with noise and temperature (the self-play default).
    pub fn exploring(sims: u32) -> SlotParams {
        SlotParams {
            sims,
            noise: true,
            temperature: true,
        }
    }
}

/// One game in flight and its tree.
#[derive(Clone, Debug)]
struct Slot {
    game: Game,
    search: SlotSearch,
    params: SlotParams,
}

/// Searches many games at once: every pass gathers leaves from all trees (up to
/// `leaves_per_tree` each, with virtual loss), evaluates them in **one** call to the evaluator,
/// then expands and backs up, until every unfinished slot has spent its budget.
///
/// The slots' games live in the driver: read them with [`BatchedSearch::game`], play moves with
/// [`BatchedSearch::advance`] (the move's subtree is kept), start new games with
/// [`BatchedSearch::reset`]. See the module documentation for the self-play loop.
#[derive(Clone, Debug)]
pub struct BatchedSearch {
    config: MctsConfig,
    slots: Vec<Slot>,
    positions: Vec<Position>,
    fresh: Vec<bool>,
    evals: Vec<Evaluation>,
    counts: Vec<usize>,
}

impl BatchedSearch {
    /// A driver with `slots` games, each a new game from the start position with the default
    /// ply limit, searched with `config.sims` simulations and exploration on.
    pub fn new(config: MctsConfig, slots: usize) -> Result<BatchedSearch, ConfigError> {
        config.validate()?;
        let params = SlotParams::exploring(config.sims);
        let game = Game::new();
        let mut slot = Slot {
            game: game.clone(),
            search: SlotSearch::new(),
            params,
        };
        slot.search.reset(&game);
        Ok(BatchedSearch {
            config,
            slots: vec![slot; slots],
            positions: Vec::new(),
            fresh: Vec::new(),
            evals: Vec::new(),
            counts: Vec::new(),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &MctsConfig {
        &self.config
    }

    /// The number of slots.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether there are no slots.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The game in `slot`.
    ///
    /// # Panics
    /// If `slot >= self.len()`.
    pub fn game(&self, slot: usize) -> &Game {
        &self.slots[slot].game
    }

    /// The search settings of `slot`.
    ///
    /// # Panics
    /// If `slot >= self.len()`.
    pub fn params(&self, slot: usize) -> SlotParams {
        self.slots[slot].params
    }

    /// Sets how `slot`'s next searches run (kept until changed).
    ///
    /// # Panics
    /// If `slot >= self.len()`.
    pub fn set_params(&mut self, slot: usize, params: SlotParams) {
        self.slots[slot].params = params;
    }

    /// Replaces `slot`'s game (e.g. a finished one by a new game) and forgets its tree.
    ///
    /// # Panics
    /// If `slot >= self.len()`.
    pub fn reset(&mut self, slot: usize, game: Game) {
        let s = &mut self.slots[slot];
        s.search.reset(&game);
        s.game = game;
    }

    /// Plays `mv` in `slot`'s game (checked) and makes its subtree the slot's tree (or a fresh
    /// tree when `reuse_tree` is off). On an illegal move nothing changes.
    ///
    /// # Panics
    /// If `slot >= self.len()`.
    pub fn advance(&mut self, slot: usize, mv: Move) -> Result<MoveEffect, GameError> {
        let s = &mut self.slots[slot];
        let effect = s.game.play(mv)?;
        s.search.advance(mv, &s.game, self.config.reuse_tree);
        Ok(effect)
    }

    /// Visits of the root children of `slot`'s tree by policy index.
    ///
    /// # Panics
    /// If `slot >= self.len()`.
    pub fn root_visits(&self, slot: usize) -> [u32; 6] {
        self.slots[slot].search.tree.root_visits()
    }

    /// Searches every slot whose game is not over with its own budget, evaluating all leaves of
    /// a pass in one call to `evaluator`. Returns one entry per slot: `None` where the game is
    /// over. Calls `evaluator.evaluate` once per pass with every gathered position (never
    /// with an empty batch).
    ///
    /// # Errors
    /// The evaluator's error, as soon as a call fails. The searches in progress are abandoned
    /// (every slot keeps its game, its tree is cleared below the root).
    pub fn search<E: Evaluator + ?Sized, R: Rng + ?Sized>(
        &mut self,
        evaluator: &E,
        rng: &mut R,
    ) -> Result<Vec<Option<MctsResult>>, EvalError> {
        let all = vec![true; self.slots.len()];
        self.search_some(evaluator, rng, &all)
    }

    /// [`BatchedSearch::search`] over the slots where `wanted[slot]` is set (a slot past the
    /// end of `wanted` is not wanted): the others are left as they are (game, tree, search
    /// settings) and get `None`. A match uses it to search only the games where its network
    /// player is to move.
    ///
    /// # Errors
    /// As [`BatchedSearch::search`]; only the wanted slots' searches are abandoned.
    pub fn search_some<E: Evaluator + ?Sized, R: Rng + ?Sized>(
        &mut self,
        evaluator: &E,
        rng: &mut R,
        wanted: &[bool],
    ) -> Result<Vec<Option<MctsResult>>, EvalError> {
        let wanted = |slot: usize| wanted.get(slot).copied().unwrap_or(false);
        let cfg = &self.config;
        for (i, s) in self.slots.iter_mut().enumerate() {
            if wanted(i) && !s.search.root_finished() {
                let p = s.params;
                s.search.begin(p.sims, p.noise, p.temperature, cfg, rng);
            }
        }
        let empty = Evaluation {
            policy: [0.0; 6],
            value: 0.0,
        };
        loop {
            self.positions.clear();
            self.fresh.clear();
            self.counts.clear();
            let mut progress = false;
            for (i, s) in self.slots.iter_mut().enumerate() {
                if !wanted(i) {
                    self.counts.push(0);
                    continue;
                }
                let (n, p) = s.search.gather(
                    cfg,
                    cfg.leaves_per_tree,
                    &mut self.positions,
                    &mut self.fresh,
                );
                self.counts.push(n);
                progress |= p;
            }
            let total = self.positions.len();
            if total > 0 {
                self.evals.clear();
                self.evals.resize(total, empty);
                if let Err(e) =
                    evaluator.evaluate_fresh(&self.positions, &self.fresh, &mut self.evals)
                {
                    for (i, s) in self.slots.iter_mut().enumerate() {
                        if wanted(i) {
                            s.search.abandon();
                        }
                    }
                    return Err(e);
                }
            }
            let mut offset = 0;
            for (i, (s, &n)) in self.slots.iter_mut().zip(&self.counts).enumerate() {
                if wanted(i) {
                    s.search.apply(cfg, &self.evals[offset..offset + n], rng);
                    offset += n;
                }
            }
            let done = |(i, s): (usize, &Slot)| !wanted(i) || s.search.is_done();
            if !progress || self.slots.iter().enumerate().all(done) {
                break;
            }
        }
        Ok(self
            .slots
            .iter()
            .enumerate()
            .map(|(i, s)| {
                if wanted(i) {
                    s.search.result(cfg, rng)
                } else {
                    None
                }
            })
            .collect())
    }
}
