//! Plain UCT with random-rollout leaf values: no network, no priors. The baseline player and a
//! check of the tree code on its own.

use super::tree::{NodeState, Tree};
use oware_engine::Game;
use oware_engine::Move;
use rand::Rng;

/// The default UCT exploration constant (values are in [-1, 1]).
pub const DEFAULT_UCT_C: f32 = 1.4;

/// What a rollout search found at the root.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RolloutResult {
    /// Visits of each root child by policy index (reused visits included).
    pub visits: [u32; 6],
    /// The root's mean value for the side to move, in [-1, 1].
    pub value: f32,
    /// The most visited move.
    pub mv: Move,
    /// Simulations run by this search.
    pub sims: u32,
}

/// UCT search (UCB1 selection, an unvisited child first) whose leaves are valued by one uniform
/// random playout to the end of the game under the full rules. The tree is kept from one call
/// to the next when the game continues.
///
/// Each simulation adds one visit to one root child, so on a fresh tree the root children's
/// visits sum to the simulations run.
#[derive(Clone, Debug)]
pub struct RolloutSearch {
    tree: Tree,
    c: f32,
    scratch: Vec<u128>,
}

impl RolloutSearch {
    /// A search with exploration constant `c` (non-finite or negative values become
    /// [`DEFAULT_UCT_C`]).
    pub fn new(c: f32) -> RolloutSearch {
        let c = if c.is_finite() && c >= 0.0 {
            c
        } else {
            DEFAULT_UCT_C
        };
        RolloutSearch {
            tree: Tree::new(),
            c,
            scratch: Vec::with_capacity(256),
        }
    }

    /// The exploration constant.
    pub fn c(&self) -> f32 {
        self.c
    }

    /// Puts `game` at the root, keeping the subtree of the moves played since the last search
    /// when `game` continues that game.
    pub fn set_game(&mut self, game: &Game) {
        self.tree.follow(game, true);
    }

    /// Forgets the tree and puts `game` at the root.
    pub fn reset(&mut self, game: &Game) {
        self.tree.reset(game);
    }

    /// Runs `sims` simulations (at least 1) from the root. Returns `None` when the game there is
    /// over.
    pub fn run<R: Rng + ?Sized>(&mut self, sims: u32, rng: &mut R) -> Option<RolloutResult> {
        if self.tree.root().state == NodeState::Terminal {
            return None;
        }
        let sims = sims.max(1);
        for _ in 0..sims {
            self.simulate(rng);
        }
        let root = self.tree.root();
        let mut best = (0u32, 0usize);
        for c in self.tree.children(0) {
            let n = &self.tree.nodes[c];
            if n.visits > best.0 {
                best = (n.visits, n.mv as usize);
            }
        }
        Some(RolloutResult {
            visits: self.tree.root_visits(),
            value: -root.q(),
            mv: Move::from_relative(root.pos.to_move(), best.1),
            sims,
        })
    }

    /// Visits of the root's children by policy index.
    pub fn root_visits(&self) -> [u32; 6] {
        self.tree.root_visits()
    }

    /// The most visited line from the root, at most `max_len` moves; `None` when the game at
    /// the root is over.
    pub fn principal_variation(&self, max_len: usize) -> Option<Vec<Move>> {
        (self.tree.root().state != NodeState::Terminal)
            .then(|| self.tree.principal_variation(None, max_len))
    }

    /// Nodes in the tree.
    pub fn tree_size(&self) -> usize {
        self.tree.nodes.len()
    }

    /// One simulation: descend by UCB1, expand a node on its second visit, value the new leaf by
    /// a random playout (or exactly when the game is over there), back up.
    fn simulate<R: Rng + ?Sized>(&mut self, rng: &mut R) {
        let tree = &mut self.tree;
        tree.begin_descent();
        let mut node = 0u32;
        let value = loop {
            let n = tree.nodes[node as usize];
            match n.state {
                NodeState::Terminal => break n.raw_value,
                NodeState::Fresh | NodeState::Pending => {
                    if node != 0 && n.visits == 0 {
                        self.scratch.clear();
                        self.scratch.extend_from_slice(tree.line_history());
                        let r = oware_engine::random_playout(
                            n.pos,
                            &mut self.scratch,
                            tree.line_ply(),
                            tree.max_plies,
                            rng,
                        );
                        break r.value_for(n.pos.to_move());
                    }
                    tree.create_children(node);
                    let k = n_children(tree, node);
                    for c in tree.children(node) {
                        tree.nodes[c].prior = 1.0 / k as f32;
                    }
                    tree.nodes[node as usize].state = NodeState::Expanded;
                }
                NodeState::Expanded => {
                    node = select_ucb(tree, node, self.c);
                    tree.step(node);
                }
            }
        };
        tree.backup_visit(node, value);
    }
}

fn n_children(tree: &Tree, node: u32) -> usize {
    tree.nodes[node as usize].num_children as usize
}

/// The child maximising `Q + c · sqrt(ln N / n)`; the first unvisited child if there is one.
#[inline]
fn select_ucb(tree: &Tree, node: u32, c: f32) -> u32 {
    let parent = &tree.nodes[node as usize];
    let log_n = (parent.visits.max(1) as f32).ln();
    let range = tree.children(node);
    let mut best = range.start;
    let mut best_score = f32::NEG_INFINITY;
    for i in range {
        let child = &tree.nodes[i];
        if child.visits == 0 {
            return i as u32;
        }
        let n = child.visits as f32;
        let score = child.value_sum / n + c * (log_n / n).sqrt();
        if score > best_score {
            best_score = score;
            best = i;
        }
    }
    best as u32
}
