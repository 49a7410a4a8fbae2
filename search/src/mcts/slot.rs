//! One tree's search, step by step: the state machine shared by the single-game [`super::Search`]
//! and the batched driver [`super::BatchedSearch`], so both make the same decisions in the same
//! order.
//!
//! A search of `sims` simulations: `begin`, then passes of `gather` (select up to L leaves with
//! virtual loss, hand their positions out) and `apply` (take the evaluations, expand, back up)
//! until `is_done`, then `result`. A fresh root is first evaluated by a pass of its own, which is
//! not a simulation; every simulation adds exactly one visit to one root child, so with a fresh
//! tree the root children's visits sum to `sims`.

use super::config::{InteriorRule, MctsConfig, RootAlgorithm};
use super::gumbel::{self, GumbelRoot};
use super::puct;
use super::tree::{NodeState, Tree};
use crate::evaluator::Evaluation;
use oware_engine::Game;
use oware_engine::Move;
use oware_engine::Position;
use rand::Rng;

/// What a search found at the root.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MctsResult {
    /// Visits of each root child by policy index ([`Move::relative`]), visits kept from a
    /// reused subtree included. Illegal moves have 0.
    pub visits: [u32; 6],
    /// The policy training target by policy index: the visit distribution (PUCT; with forced
    /// playouts, after policy target pruning) or the
    /// improved policy `softmax(logits + σ(completed Q))` (Gumbel). Sums to 1 over legal moves.
    pub policy: [f32; 6],
    /// The evaluator's prior at the root by policy index, before any noise.
    pub prior: [f32; 6],
    /// The root value for the side to move, in [-1, 1]: the mean over all visits (PUCT), or
    /// the improved policy's expectation of the completed Q-values (Gumbel, whose sequential
    /// halving spreads visits on purpose).
    pub value: f32,
    /// The move chosen: by visits (greedy, or drawn with the temperature when the search has
    /// `temperature` on and lies within `temperature_plies`) for PUCT; the sequential-halving
    /// winner for Gumbel.
    pub mv: Move,
    /// Simulations run by this search.
    pub sims: u32,
}

/// The state of one tree's search.
#[derive(Clone, Debug)]
pub(crate) struct SlotSearch {
    /// The tree.
    pub tree: Tree,
    /// Simulations requested in this search.
    sims: u32,
    /// Simulations not yet started.
    budget: u32,
    /// Simulations started (and not abandoned) in this search.
    started: u32,
    /// Whether this search puts noise on the root (Dirichlet for PUCT, the Gumbel draw).
    noise: bool,
    /// Whether this search draws its move with the temperature in the opening plies.
    temperature: bool,
    /// Whether the root's per-search state (noise, Gumbel draw) is set up.
    root_ready: bool,
    /// Root priors before Dirichlet noise, by child order, while noise is applied.
    saved_priors: Option<[f32; 6]>,
    /// Gumbel root state.
    gumbel: GumbelRoot,
    /// Leaves awaiting evaluation, in the order their positions were handed out.
    pending: Vec<u32>,
}

impl SlotSearch {
    /// A search over the start position of a default game.
    pub(super) fn new() -> SlotSearch {
        SlotSearch {
            tree: Tree::new(),
            sims: 0,
            budget: 0,
            started: 0,
            noise: false,
            temperature: false,
            root_ready: false,
            saved_priors: None,
            gumbel: GumbelRoot::default(),
            pending: Vec::new(),
        }
    }

    fn restore_priors(&mut self) {
        if let Some(saved) = self.saved_priors.take() {
            puct::restore_root_priors(&mut self.tree, &saved);
        }
    }

    fn clear_search(&mut self) {
        self.restore_priors();
        self.pending.clear();
        self.budget = 0;
        self.root_ready = false;
    }

    /// Starts afresh at `game`'s position.
    pub(super) fn reset(&mut self, game: &Game) {
        self.clear_search();
        self.tree.reset(game);
    }

    /// Gives up the search in progress (its evaluator failed): forgets the tree below the root,
    /// so the slot can search again from a clean state.
    pub(super) fn abandon(&mut self) {
        self.clear_search();
        self.tree.clear_below_root();
    }

    /// Puts `game` at the root, reusing the subtree when `game` continues the tree's game.
    pub(super) fn follow(&mut self, game: &Game, reuse: bool) {
        self.clear_search();
        self.tree.follow(game, reuse);
    }

    /// After `mv` was played in the game, now `game`: the move's subtree becomes the tree (or
    /// a fresh tree when `reuse` is off).
    pub(super) fn advance(&mut self, mv: Move, game: &Game, reuse: bool) {
        self.clear_search();
        if reuse {
            self.tree.advance(mv.relative(), game);
        } else {
            self.tree.reset(game);
        }
    }

    /// Whether the game at the root is over.
    pub(super) fn root_finished(&self) -> bool {
        self.tree.root().state == NodeState::Terminal
    }

    /// Starts a search of `sims` (at least 1) simulations. `noise`: root noise (Dirichlet for
    /// PUCT; the Gumbel draw for Gumbel). `temperature`: within the first `temperature_plies`
    /// plies the move is drawn with the temperature (PUCT) or, for Gumbel without `noise`,
    /// with the Gumbel draw, which is how Gumbel samples its move.
    pub(super) fn begin<R: Rng + ?Sized>(
        &mut self,
        sims: u32,
        noise: bool,
        temperature: bool,
        cfg: &MctsConfig,
        rng: &mut R,
    ) {
        self.clear_search();
        self.sims = sims.max(1);
        self.budget = self.sims;
        self.started = 0;
        self.gumbel.new_visits = [0; 6];
        self.noise = noise;
        self.temperature = temperature;
        if self.tree.root().state == NodeState::Expanded {
            self.init_root(cfg, rng);
        }
    }

    fn init_root<R: Rng + ?Sized>(&mut self, cfg: &MctsConfig, rng: &mut R) {
        self.root_ready = true;
        match cfg.root {
            RootAlgorithm::Puct => {
                if self.noise && cfg.dirichlet_frac > 0.0 {
                    self.saved_priors = Some(puct::add_root_noise(&mut self.tree, cfg, rng));
                }
            }
            RootAlgorithm::Gumbel => {
                let draw = self.noise || self.in_temperature_plies(cfg);
                self.gumbel.init(&self.tree, self.sims, draw, cfg, rng);
            }
        }
    }

    /// Whether this search samples its move: `temperature` is on and the root lies within the
    /// first `temperature_plies` plies.
    fn in_temperature_plies(&self, cfg: &MctsConfig) -> bool {
        self.temperature && cfg.temperature > 0.0 && self.tree.root_ply < cfg.temperature_plies
    }

    /// Whether the search has spent its budget and has nothing in flight (or the game is over).
    pub(super) fn is_done(&self) -> bool {
        self.root_finished() || (self.root_ready && self.budget == 0 && self.pending.is_empty())
    }

    /// Selects up to `max_leaves` leaves and appends their positions to `positions`, and to
    /// `fresh` whether each is fresh (nothing played since the last capture: the history that
    /// decides repetitions is the leaf alone; see [`crate::Evaluator::evaluate_fresh`]). Leaves
    /// that end the game are backed up at once. Returns the number of positions appended and
    /// whether the search advanced at all.
    pub(super) fn gather(
        &mut self,
        cfg: &MctsConfig,
        max_leaves: u32,
        positions: &mut Vec<Position>,
        fresh: &mut Vec<bool>,
    ) -> (usize, bool) {
        if self.is_done() {
            return (0, false);
        }
        let vl = cfg.virtual_loss;
        match self.tree.root().state {
            NodeState::Fresh => {
                self.tree.begin_descent();
                self.tree.add_virtual(0, vl);
                self.tree.create_children(0);
                self.tree.nodes[0].state = NodeState::Pending;
                positions.push(self.tree.root().pos);
                fresh.push(self.tree.line_history().len() == 1);
                self.pending.push(0);
                return (1, true);
            }
            NodeState::Pending | NodeState::Terminal => return (0, false),
            NodeState::Expanded => {}
        }
        let mut pushed = 0usize;
        let mut progress = false;
        while pushed < max_leaves as usize && self.budget > 0 {
            self.tree.begin_descent();
            self.tree.add_virtual(0, vl);
            let first = match cfg.root {
                RootAlgorithm::Puct if self.noise && cfg.forced_playouts > 0.0 => {
                    puct::select_root_forced(&self.tree, cfg)
                }
                RootAlgorithm::Puct => puct::select(&self.tree, 0, cfg),
                RootAlgorithm::Gumbel => self.gumbel.select(&self.tree, self.started, cfg),
            };
            let mut node = first;
            loop {
                self.tree.step(node);
                self.tree.add_virtual(node, vl);
                let state = self.tree.nodes[node as usize].state;
                match state {
                    NodeState::Expanded => {
                        node = match (cfg.root, cfg.gumbel_interior) {
                            (RootAlgorithm::Gumbel, InteriorRule::Gumbel) => {
                                gumbel::select_interior(&self.tree, node, cfg)
                            }
                            _ => puct::select(&self.tree, node, cfg),
                        };
                    }
                    NodeState::Terminal => {
                        self.count_sim(first);
                        let v = self.tree.nodes[node as usize].raw_value;
                        self.tree.backup(node, v, vl);
                        progress = true;
                        break;
                    }
                    NodeState::Fresh => {
                        self.count_sim(first);
                        self.tree.create_children(node);
                        self.tree.nodes[node as usize].state = NodeState::Pending;
                        positions.push(self.tree.nodes[node as usize].pos);
                        fresh.push(self.tree.line_history().len() == 1);
                        self.pending.push(node);
                        pushed += 1;
                        progress = true;
                        break;
                    }
                    NodeState::Pending => {
                        // Collision with a leaf already in flight: abandon this descent and
                        // gather no more from this tree in this pass.
                        self.tree.revert(node, vl);
                        return (pushed, progress);
                    }
                }
            }
        }
        (pushed, progress)
    }

    /// Simulations started (and not abandoned) in this search.
    pub(super) fn started(&self) -> u32 {
        self.started
    }

    /// Changes this search's budget to `total` simulations (at least those already started):
    /// a timed search that grows or ends its plan. A Gumbel root re-plans its halving.
    pub(super) fn resize(&mut self, total: u32, cfg: &MctsConfig) {
        let total = total.max(self.started);
        if total == self.sims {
            return;
        }
        self.sims = total;
        self.budget = total - self.started;
        if self.root_ready && cfg.root == RootAlgorithm::Gumbel {
            self.gumbel.replan(self.started, total);
        }
    }

    /// The search so far: the root value for the side to move (as [`SlotSearch::result`]
    /// reports it) and the principal variation (the move the search would play first), at
    /// most `max_len` moves. `None` before the root is evaluated or when the game is over.
    pub(super) fn progress(&self, cfg: &MctsConfig, max_len: usize) -> Option<(f32, Vec<Move>)> {
        if self.root_finished() || self.tree.root().state != NodeState::Expanded {
            return None;
        }
        let tree = &self.tree;
        let (value, first) = match cfg.root {
            RootAlgorithm::Puct => {
                let root = tree.root();
                let v = if root.visits > 0 {
                    -root.q()
                } else {
                    root.raw_value
                };
                (v, Some(puct::most_visited(tree)))
            }
            RootAlgorithm::Gumbel => {
                let pi = gumbel::improved_policy(tree, 0, cfg);
                let mut q = [0.0f32; 6];
                gumbel::completed_q(tree, 0, &mut q);
                let v = pi.iter().zip(&q).take(tree.children(0).len());
                let first = self.root_ready.then(|| self.gumbel.final_action(tree, cfg));
                (v.map(|(p, q)| p * q).sum(), first)
            }
        };
        Some((value, tree.principal_variation(first, max_len)))
    }

    fn count_sim(&mut self, first: u32) {
        self.budget -= 1;
        self.started += 1;
        let i = first as usize - self.tree.children(0).start;
        self.gumbel.new_visits[i] += 1;
    }

    /// Takes the evaluations of the leaves handed out by the last `gather`, in order: expands
    /// the leaves and backs their values up.
    pub(super) fn apply<R: Rng + ?Sized>(
        &mut self,
        cfg: &MctsConfig,
        evals: &[Evaluation],
        rng: &mut R,
    ) {
        debug_assert_eq!(evals.len(), self.pending.len());
        for (i, eval) in evals.iter().enumerate().take(self.pending.len()) {
            let leaf = self.pending[i];
            self.tree.set_evaluation(leaf, eval);
            let v = self.tree.nodes[leaf as usize].raw_value;
            self.tree.backup(leaf, v, cfg.virtual_loss);
        }
        self.pending.clear();
        if !self.root_ready && self.tree.root().state == NodeState::Expanded {
            self.init_root(cfg, rng);
        }
    }

    /// The outcome of the finished search; `None` when the game at the root is over.
    pub(super) fn result<R: Rng + ?Sized>(
        &self,
        cfg: &MctsConfig,
        rng: &mut R,
    ) -> Option<MctsResult> {
        if self.root_finished() {
            return None;
        }
        let tree = &self.tree;
        let root = tree.root();
        let range = tree.children(0);
        let visits = tree.root_visits();
        let mut prior = [0.0f32; 6];
        for (i, c) in range.clone().enumerate() {
            let n = &tree.nodes[c];
            prior[n.mv as usize] = match &self.saved_priors {
                Some(saved) => saved[i],
                None => n.prior,
            };
        }
        let mut value = if root.visits > 0 {
            -root.q()
        } else {
            root.raw_value
        };
        let mut policy = [0.0f32; 6];
        let rel = match cfg.root {
            RootAlgorithm::Puct => {
                let counts = if self.noise && cfg.forced_playouts > 0.0 {
                    puct::pruned_visits(tree, cfg)
                } else {
                    visits.map(|v| v as f32)
                };
                let total: f32 = counts.iter().sum();
                for i in 0..6 {
                    policy[i] = if total > 0.0 {
                        counts[i] / total
                    } else {
                        prior[i]
                    };
                }
                if self.in_temperature_plies(cfg) {
                    puct::sample_by_visits(tree, cfg.temperature, rng)
                } else {
                    puct::most_visited(tree)
                }
            }
            RootAlgorithm::Gumbel => {
                let pi = gumbel::improved_policy(tree, 0, cfg);
                let mut q = [0.0f32; 6];
                gumbel::completed_q(tree, 0, &mut q);
                value = 0.0;
                for (i, c) in range.enumerate() {
                    policy[tree.nodes[c].mv as usize] = pi[i];
                    value += pi[i] * q[i];
                }
                self.gumbel.final_action(tree, cfg)
            }
        };
        Some(MctsResult {
            visits,
            policy,
            prior,
            value,
            mv: Move::from_relative(root.pos.to_move(), rel),
            sims: self.started,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluator::{Evaluator, UniformEvaluator};
    use crate::mcts::config::RootAlgorithm;
    use crate::mcts::tree::NONE;
    use rand::SeedableRng;
    use rand::rngs::SmallRng;

    fn run(s: &mut SlotSearch, cfg: &MctsConfig, sims: u32, rng: &mut SmallRng) -> MctsResult {
        s.begin(sims, true, true, cfg, rng);
        let mut positions = Vec::new();
        let mut fresh = Vec::new();
        let mut evals = Vec::new();
        while !s.is_done() {
            positions.clear();
            fresh.clear();
            let (n, _) = s.gather(cfg, cfg.leaves_per_tree, &mut positions, &mut fresh);
            evals.resize(
                n,
                Evaluation {
                    policy: [0.0; 6],
                    value: 0.0,
                },
            );
            UniformEvaluator
                .evaluate(&positions, &mut evals[..n])
                .expect("the uniform evaluator never fails");
            s.apply(cfg, &evals[..n], rng);
        }
        s.result(cfg, rng).expect("live")
    }

    /// Parent links, contiguous children, and (no search in flight) every expanded node's
    /// visits = its own evaluation + its children's visits; terminal nodes hold only their own.
    fn check(tree: &Tree) {
        assert_eq!(tree.nodes[0].parent, NONE);
        for (i, n) in tree.nodes.iter().enumerate() {
            let range = tree.children(i as u32);
            assert!(range.end <= tree.nodes.len());
            let child_visits: u32 = range.clone().map(|c| tree.nodes[c].visits).sum();
            for c in range {
                assert_eq!(tree.nodes[c].parent, i as u32);
            }
            match n.state {
                NodeState::Expanded => assert_eq!(n.visits, 1 + child_visits, "node {i}"),
                NodeState::Fresh => assert_eq!(n.visits, 0),
                NodeState::Terminal => assert_eq!(child_visits, 0),
                NodeState::Pending => panic!("pending node {i} after the search"),
            }
        }
    }

    #[test]
    fn tree_invariants_hold_through_searches_and_moves() {
        let rules = [
            (RootAlgorithm::Puct, InteriorRule::Puct),
            (RootAlgorithm::Gumbel, InteriorRule::Puct),
            (RootAlgorithm::Gumbel, InteriorRule::Gumbel),
        ];
        for (root, gumbel_interior) in rules {
            let cfg = MctsConfig {
                root,
                gumbel_interior,
                leaves_per_tree: 3,
                ..MctsConfig::default()
            };
            let mut rng = SmallRng::seed_from_u64(4);
            let mut s = SlotSearch::new();
            let mut game = Game::new();
            s.reset(&game);
            for _ in 0..30 {
                let r = run(&mut s, &cfg, 120, &mut rng);
                check(&s.tree);
                let kept = r.visits[r.mv.relative()];
                game.play(r.mv).expect("legal");
                s.advance(r.mv, &game, true);
                if game.is_over() {
                    break;
                }
                check(&s.tree);
                assert_eq!(s.tree.root().visits, kept);
                assert_eq!(s.tree.root().pos, *game.position());
            }
        }
    }
    /// A leaf is handed out as fresh exactly when the move into it captured, or when it is the
    /// root and the game has no position since its last capture but the root's.
    #[test]
    fn leaves_are_fresh_exactly_after_a_capture() {
        let cfg = MctsConfig {
            leaves_per_tree: 4,
            ..MctsConfig::default()
        };
        let mut rng = SmallRng::seed_from_u64(7);
        let mut s = SlotSearch::new();
        let mut game = Game::new();
        s.reset(&game);
        let (mut positions, mut fresh, mut evals) = (Vec::new(), Vec::new(), Vec::new());
        let mut seen = [0usize; 2];
        while !game.is_over() && game.ply() < 120 {
            s.begin(60, true, true, &cfg, &mut rng);
            while !s.is_done() {
                positions.clear();
                fresh.clear();
                let (n, _) = s.gather(&cfg, cfg.leaves_per_tree, &mut positions, &mut fresh);
                assert_eq!((positions.len(), fresh.len()), (n, n));
                let pending = &s.pending[s.pending.len() - n..];
                for (&node, &f) in pending.iter().zip(&fresh) {
                    let nd = &s.tree.nodes[node as usize];
                    let root_fresh = game.seen_since_capture().len() == 1;
                    let expected = if node == 0 { root_fresh } else { nd.captured };
                    assert_eq!(f, expected, "node {node} at ply {}", game.ply());
                    seen[usize::from(f)] += 1;
                }
                evals.resize(
                    n,
                    Evaluation {
                        policy: [0.0; 6],
                        value: 0.0,
                    },
                );
                UniformEvaluator
                    .evaluate_fresh(&positions, &fresh, &mut evals[..n])
                    .expect("the uniform evaluator never fails");
                s.apply(&cfg, &evals[..n], &mut rng);
            }
            let r = s.result(&cfg, &mut rng).expect("live");
            game.play(r.mv).expect("legal");
            s.advance(r.mv, &game, true);
        }
        assert!(
            seen[0] > 0 && seen[1] > 0,
            "both kinds of leaf met: {seen:?}"
        );
    }
}
