//! AlphaZero's PUCT: child selection, Dirichlet noise at the root, and the move chosen from the
//! visit counts with a temperature.

use super::config::MctsConfig;
use super::noise::dirichlet;
use super::tree::Tree;
use rand::Rng;

/// The child of `node` maximising `Q + c · P · sqrt(N) / (1 + n)`, where `Q` is the child's mean
/// value for the side to move at `node` (an unvisited child gets the node's own value minus the
/// first-play-urgency reduction), `P` its prior, `n` its visits and `N` the node's visits.
#[inline]
pub(crate) fn select(tree: &Tree, node: u32, cfg: &MctsConfig) -> u32 {
    let parent = &tree.nodes[node as usize];
    let parent_q = if parent.visits > 0 { -parent.q() } else { 0.0 };
    let fpu = parent_q - cfg.fpu_reduction;
    let visits = parent.visits.max(1);
    let scale = cfg.cpuct(visits) * (visits as f32).sqrt();
    let range = tree.children(node);
    let mut best = range.start;
    let mut best_score = f32::NEG_INFINITY;
    for c in range {
        let child = &tree.nodes[c];
        let q = if child.visits > 0 { child.q() } else { fpu };
        let score = q + scale * child.prior / (1 + child.visits) as f32;
        if score > best_score {
            best_score = score;
            best = c;
        }
    }
    best as u32
}

/// The forced visits of a root child of prior `prior` when the root children hold `total`
/// visits: `sqrt(k · P · N)` (KataGo's forced playouts).
#[inline]
fn forced_visits(k: f32, prior: f32, total: u32) -> f32 {
    (k * prior * total as f32).sqrt()
}

/// The root child to visit next with forced playouts `k > 0`: the child furthest below its
/// forced visits, if any is below them, else the PUCT choice.
pub(crate) fn select_root_forced(tree: &Tree, cfg: &MctsConfig) -> u32 {
    let total: u32 = tree.children(0).map(|c| tree.nodes[c].visits).sum();
    let mut best: Option<(u32, f32)> = None;
    for c in tree.children(0) {
        let n = &tree.nodes[c];
        let deficit = forced_visits(cfg.forced_playouts, n.prior, total) - n.visits as f32;
        if deficit > 0.0 && best.is_none_or(|(_, d)| deficit > d) {
            best = Some((c as u32, deficit));
        }
    }
    match best {
        Some((c, _)) => c,
        None => select(tree, 0, cfg),
    }
}

/// The policy target of a root searched with forced playouts (KataGo's policy target
/// pruning): the visits by policy index, where every child but the most visited gives back
/// as many of its forced visits as keep its PUCT score below the best child's, and a child
/// left with at most one visit gets none. The priors are those the search used (with noise).
pub(crate) fn pruned_visits(tree: &Tree, cfg: &MctsConfig) -> [f32; 6] {
    let mut out = [0.0f32; 6];
    let total: u32 = tree.children(0).map(|c| tree.nodes[c].visits).sum();
    let best_rel = most_visited(tree);
    let scale = cfg.cpuct(total.max(1)) * (total.max(1) as f32).sqrt();
    let puct = |q: f32, prior: f32, n: f32| q + scale * prior / (1.0 + n);
    let Some(best) = tree
        .children(0)
        .map(|c| &tree.nodes[c])
        .find(|n| n.mv as usize == best_rel)
    else {
        return out;
    };
    let best_score = puct(best.q(), best.prior, best.visits as f32);
    for c in tree.children(0) {
        let n = &tree.nodes[c];
        let visits = n.visits as f32;
        if n.mv as usize == best_rel || n.visits == 0 {
            out[n.mv as usize] = visits;
            continue;
        }
        let floor = (visits - forced_visits(cfg.forced_playouts, n.prior, total)).max(0.0);
        // The fewest visits (down to `floor`) at which the child still scores below the best:
        // PUCT grows as visits are taken away, so solve q + s·p/(1 + v) <= best for v.
        let gap = best_score - n.q();
        let needed = if gap > 0.0 {
            (scale * n.prior / gap - 1.0).max(0.0)
        } else {
            visits
        };
        let kept = needed.ceil().clamp(floor, visits);
        out[n.mv as usize] = if kept <= 1.0 { 0.0 } else { kept };
    }
    out
}

/// Mixes Dirichlet(`alpha`) noise into the root children's priors:
/// `p = (1 - frac) · p + frac · noise`. Returns the priors before the noise, by child order.
pub(crate) fn add_root_noise<R: Rng + ?Sized>(
    tree: &mut Tree,
    cfg: &MctsConfig,
    rng: &mut R,
) -> [f32; 6] {
    let range = tree.children(0);
    let mut saved = [0.0f32; 6];
    let mut noise = [0.0f32; 6];
    let k = range.len();
    dirichlet(cfg.dirichlet_alpha, &mut noise[..k], rng);
    for (i, c) in range.enumerate() {
        let n = &mut tree.nodes[c];
        saved[i] = n.prior;
        n.prior = (1.0 - cfg.dirichlet_frac) * n.prior + cfg.dirichlet_frac * noise[i];
    }
    saved
}

/// Puts back root priors saved by [`add_root_noise`].
pub(crate) fn restore_root_priors(tree: &mut Tree, saved: &[f32; 6]) {
    for (i, c) in tree.children(0).enumerate() {
        tree.nodes[c].prior = saved[i];
    }
}

/// The policy index of the most visited root child (ties: the higher prior, then the first).
pub(crate) fn most_visited(tree: &Tree) -> usize {
    let mut best = (0u32, f32::NEG_INFINITY, 0usize);
    for c in tree.children(0) {
        let n = &tree.nodes[c];
        if n.visits > best.0 || (n.visits == best.0 && n.prior > best.1) {
            best = (n.visits, n.prior, n.mv as usize);
        }
    }
    best.2
}

/// A policy index drawn with probability proportional to `visits^(1 / temperature)`
/// (`temperature > 0`). Falls back to the most visited child when no child has a visit.
pub(crate) fn sample_by_visits<R: Rng + ?Sized>(
    tree: &Tree,
    temperature: f32,
    rng: &mut R,
) -> usize {
    let inv = 1.0 / temperature as f64;
    let mut weights = [0.0f64; 6];
    let mut total = 0.0;
    for c in tree.children(0) {
        let n = &tree.nodes[c];
        let w = if n.visits == 0 {
            0.0
        } else {
            (n.visits as f64).powf(inv)
        };
        weights[n.mv as usize] = w;
        total += w;
    }
    if !(total.is_finite() && total > 0.0) {
        return most_visited(tree);
    }
    let mut x = rng.random::<f64>() * total;
    let mut last = most_visited(tree);
    for (i, &w) in weights.iter().enumerate() {
        if w > 0.0 {
            last = i;
            if x < w {
                return i;
            }
            x -= w;
        }
    }
    last
}
