//! Gumbel AlphaZero (Danihelka et al. 2022, "Policy improvement by planning with Gumbel").
//!
//! * Root: the `m` actions with the largest `g + logits` (Gumbel-top-k; `g = 0` without
//!   exploration) are considered; the budget is spent by sequential halving, each simulation
//!   going to the best-scoring considered action (`g + logits + σ(q̂)`) among those whose visit
//!   count in this search equals the schedule's next value, so the schedule (and exactly the
//!   budget) is followed even with several leaves in flight.
//! * Interior nodes: PUCT by default, or (`gumbel_interior = "gumbel"`) the deterministic
//!   Gumbel-MuZero rule, the child maximising `π'(a) − N(a) / (1 + Σ N)` with
//!   `π' = softmax(logits + σ(completed Q))`.
//! * Values are in [-1, 1] here and are mapped linearly to [0, 1] before the transform
//!   `σ(q) = (c_visit + max_b N(b)) · c_scale · q`.
//! * Completed Q: a visited child's mean value; an unvisited child's value is the mix of the
//!   node's own evaluation and the prior-weighted mean of its visited children's values.

use super::config::MctsConfig;
use super::noise::gumbel;
use super::tree::Tree;
use rand::Rng;

/// Smallest prior turned into a logit, so a zero prior gives a large negative number.
const MIN_PRIOR: f32 = 1e-12;

/// One phase of sequential halving: from schedule index `start`, the `count` best considered
/// actions, each with `level` visits at the phase's start, get one visit per pass.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Phase {
    start: usize,
    count: u32,
    level: u32,
}

/// The order in which considered root actions are visited: entry `i` is the number of visits
/// (in this search) the action chosen by simulation `i` must already have. Sequential halving
/// over `sims` simulations and `m` considered actions; its length is exactly `sims`.
#[cfg(test)]
pub(crate) fn schedule(m: u32, sims: u32, out: &mut Vec<u32>) {
    out.clear();
    halving(m.min(6), 0, sims as usize, 0, out, &mut Vec::new());
}

/// Appends sequential halving over `sims` more simulations to `out`: `count` actions at
/// `level` visits, halved each phase down to 2, each phase a share `1 / ceil(log2 count)` of
/// `sims`; the first phase has at least `min_passes` passes. Records each phase in `phases`.
fn halving(
    count: u32,
    level: u32,
    sims: usize,
    min_passes: u32,
    out: &mut Vec<u32>,
    phases: &mut Vec<Phase>,
) {
    let end = out.len() + sims;
    let count = count.clamp(1, 6);
    let rounds = f64::from(count).log2().ceil().max(1.0) as u32;
    let mut visits = [level; 6];
    let mut considered = count;
    let mut min_passes = min_passes;
    while out.len() < end {
        phases.push(Phase {
            start: out.len(),
            count: considered,
            level: visits[0],
        });
        let share = u32::try_from(sims).unwrap_or(u32::MAX) / (rounds * considered);
        let passes = share.max(1).max(min_passes);
        min_passes = 0;
        for _ in 0..passes {
            out.extend_from_slice(&visits[..considered as usize]);
            for v in visits.iter_mut().take(considered as usize) {
                *v += 1;
            }
            if out.len() >= end {
                break;
            }
        }
        considered = (considered / 2).max(2).min(considered);
    }
    out.truncate(end);
}

/// Mean values of `node`'s children for the side to move at `node`, completed for unvisited
/// children by the value mix; by child order. Also returns the largest child visit count.
pub(crate) fn completed_q(tree: &Tree, node: u32, out: &mut [f32; 6]) -> u32 {
    let range = tree.children(node);
    let mut sum_n = 0u32;
    let mut max_n = 0u32;
    let mut sum_p = 0.0f32;
    let mut sum_pq = 0.0f32;
    for c in range.clone() {
        let n = &tree.nodes[c];
        if n.visits > 0 {
            sum_n += n.visits;
            max_n = max_n.max(n.visits);
            sum_p += n.prior;
            sum_pq += n.prior * n.q();
        }
    }
    let raw = tree.nodes[node as usize].raw_value;
    let mix = if sum_n == 0 || sum_p <= 0.0 {
        raw
    } else {
        (raw + sum_n as f32 * (sum_pq / sum_p)) / (1.0 + sum_n as f32)
    };
    for (i, c) in range.enumerate() {
        let n = &tree.nodes[c];
        out[i] = if n.visits > 0 { n.q() } else { mix };
    }
    max_n
}

/// The monotone transform of a value in [-1, 1].
#[inline]
pub(crate) fn sigma(q: f32, max_visits: u32, cfg: &MctsConfig) -> f32 {
    (cfg.gumbel_c_visit + max_visits as f32) * cfg.gumbel_c_scale * (q + 1.0) * 0.5
}

#[inline]
fn logit(p: f32) -> f32 {
    p.max(MIN_PRIOR).ln()
}

/// `softmax(logits + σ(completed Q))` over `node`'s children, by child order.
pub(crate) fn improved_policy(tree: &Tree, node: u32, cfg: &MctsConfig) -> [f32; 6] {
    let mut q = [0.0f32; 6];
    let max_n = completed_q(tree, node, &mut q);
    let mut out = [0.0f32; 6];
    let mut max = f32::NEG_INFINITY;
    let range = tree.children(node);
    let k = range.len();
    for (i, c) in range.enumerate() {
        out[i] = logit(tree.nodes[c].prior) + sigma(q[i], max_n, cfg);
        max = max.max(out[i]);
    }
    let mut sum = 0.0;
    for x in out.iter_mut().take(k) {
        *x = (*x - max).exp();
        sum += *x;
    }
    for x in out.iter_mut().take(k) {
        *x /= sum;
    }
    out
}

/// The deterministic interior rule: argmax of `π'(a) − N(a) / (1 + Σ N)`.
pub(crate) fn select_interior(tree: &Tree, node: u32, cfg: &MctsConfig) -> u32 {
    let pi = improved_policy(tree, node, cfg);
    let range = tree.children(node);
    let total: u32 = range.clone().map(|c| tree.nodes[c].visits).sum();
    let denom = 1.0 + total as f32;
    let mut best = range.start;
    let mut best_score = f32::NEG_INFINITY;
    for (i, c) in range.enumerate() {
        let score = pi[i] - tree.nodes[c].visits as f32 / denom;
        if score > best_score {
            best_score = score;
            best = c;
        }
    }
    best as u32
}

/// The root's state during one Gumbel search, by root child order.
#[derive(Clone, Debug, Default)]
pub(crate) struct GumbelRoot {
    /// Gumbel noise (0 without exploration).
    g: [f32; 6],
    /// Logits of the root priors.
    logits: [f32; 6],
    /// Whether each child is among the `m` considered.
    considered: [bool; 6],
    /// Visits each child received in this search.
    pub new_visits: [u32; 6],
    /// The sequential-halving schedule for this search's budget.
    schedule: Vec<u32>,
    /// The phases of `schedule`.
    phases: Vec<Phase>,
}

impl GumbelRoot {
    /// Draws the noise and the considered set at an expanded root, for `sims` simulations.
    pub(super) fn init<R: Rng + ?Sized>(
        &mut self,
        tree: &Tree,
        sims: u32,
        explore: bool,
        cfg: &MctsConfig,
        rng: &mut R,
    ) {
        let range = tree.children(0);
        let k = range.len();
        self.new_visits = [0; 6];
        self.considered = [false; 6];
        for (i, c) in range.enumerate() {
            self.logits[i] = logit(tree.nodes[c].prior);
            self.g[i] = if explore { gumbel(rng) } else { 0.0 };
        }
        let m = (cfg.gumbel_considered as usize).min(k);
        let mut order = [0usize, 1, 2, 3, 4, 5];
        let order = &mut order[..k];
        order.sort_by(|&a, &b| {
            (self.g[b] + self.logits[b]).total_cmp(&(self.g[a] + self.logits[a]))
        });
        for &i in order.iter().take(m) {
            self.considered[i] = true;
        }
        self.schedule.clear();
        self.phases.clear();
        halving(
            m as u32,
            0,
            sims as usize,
            0,
            &mut self.schedule,
            &mut self.phases,
        );
    }

    /// Re-plans the halving for `total` simulations when `started` of them have begun (a timed
    /// search whose rate estimate changed): the schedule up to `started` stays as it was; the
    /// phase in progress is kept at least as long as it has gone; the rest is sequential halving
    /// of what is left.
    pub(super) fn replan(&mut self, started: u32, total: u32) {
        let started = started as usize;
        let total = (total as usize).max(started);
        let Some(i) = self.phases.iter().rposition(|p| p.start <= started) else {
            return;
        };
        let p = self.phases[i];
        let begun = (started - p.start).div_ceil(p.count as usize) as u32;
        self.schedule.truncate(p.start);
        self.phases.truncate(i);
        halving(
            p.count,
            p.level,
            total - p.start,
            begun,
            &mut self.schedule,
            &mut self.phases,
        );
    }

    /// The score `g + logits + σ(q̂)` of each root child.
    fn scores(&self, tree: &Tree, cfg: &MctsConfig) -> [f32; 6] {
        let mut q = [0.0f32; 6];
        let max_n = completed_q(tree, 0, &mut q);
        let mut s = [f32::NEG_INFINITY; 6];
        for i in 0..tree.children(0).len() {
            s[i] = self.g[i] + self.logits[i] + sigma(q[i], max_n, cfg);
        }
        s
    }

    /// The root child (arena index) for simulation number `sim` of this search.
    pub(super) fn select(&self, tree: &Tree, sim: u32, cfg: &MctsConfig) -> u32 {
        let scores = self.scores(tree, cfg);
        let k = tree.children(0).len();
        let target = self.schedule.get(sim as usize).copied();
        let mut best: Option<usize> = None;
        for i in 0..k {
            if self.considered[i]
                && Some(self.new_visits[i]) == target
                && best.is_none_or(|b| scores[i] > scores[b])
            {
                best = Some(i);
            }
        }
        // Past the schedule (not reached when the budget is respected): the least visited
        // considered action.
        let i = best.unwrap_or_else(|| {
            (0..k)
                .filter(|&i| self.considered[i])
                .min_by_key(|&i| self.new_visits[i])
                .unwrap_or(0)
        });
        tree.children(0).start as u32 + i as u32
    }

    /// The action sequential halving ends on: among the considered actions visited most in this
    /// search, the best score. Returns a policy index.
    pub(super) fn final_action(&self, tree: &Tree, cfg: &MctsConfig) -> usize {
        let scores = self.scores(tree, cfg);
        let range = tree.children(0);
        let k = range.len();
        let most = (0..k)
            .filter(|&i| self.considered[i])
            .map(|i| self.new_visits[i])
            .max()
            .unwrap_or(0);
        let mut best: Option<usize> = None;
        for i in 0..k {
            if self.considered[i]
                && self.new_visits[i] == most
                && best.is_none_or(|b| scores[i] > scores[b])
            {
                best = Some(i);
            }
        }
        let i = best.unwrap_or(0);
        tree.nodes[range.start + i].mv as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_has_exactly_the_budget() {
        let mut s = Vec::new();
        for m in 1..=6 {
            for sims in [1, 2, 3, 7, 16, 50, 64, 100, 200, 801] {
                schedule(m, sims, &mut s);
                assert_eq!(s.len(), sims as usize, "m={m} sims={sims}");
            }
        }
    }

    #[test]
    fn a_replan_keeps_what_was_run_and_halves_the_rest() {
        let mut root = GumbelRoot::default();
        let mut before = Vec::new();
        schedule(4, 40, &mut before);
        root.schedule.clear();
        halving(4, 0, 40, 0, &mut root.schedule, &mut root.phases);
        assert_eq!(root.schedule, before);
        // The same total changes nothing, at any point.
        for started in [0, 3, 20, 39, 40] {
            root.replan(started, 40);
            assert_eq!(root.schedule, before, "started {started}");
        }
        for (started, total) in [(6, 100), (6, 10), (25, 200), (25, 26), (13, 13), (0, 7)] {
            let mut r = GumbelRoot::default();
            halving(4, 0, 40, 0, &mut r.schedule, &mut r.phases);
            r.replan(started, total);
            assert_eq!(r.schedule.len(), total as usize, "{started} -> {total}");
            assert_eq!(
                r.schedule[..started as usize],
                before[..started as usize],
                "{started} -> {total}"
            );
            // Halving still ends on two actions visited in turn.
            let tail = &r.schedule[total as usize - 2..];
            if total >= 20 {
                assert_eq!(tail[0], tail[1], "{:?}", r.schedule);
            }
        }
        // Grown from the start, the plan is the plain halving of the new total.
        let mut r = GumbelRoot::default();
        halving(4, 0, 40, 0, &mut r.schedule, &mut r.phases);
        r.replan(0, 64);
        schedule(4, 64, &mut before);
        assert_eq!(r.schedule, before);
    }

    #[test]
    fn schedule_halves() {
        let mut s = Vec::new();
        schedule(4, 16, &mut s);
        // 2 rounds: 16 / (2 * 4) = 2 visits each for 4 actions, then 16 / (2 * 2) = 4 for 2.
        assert_eq!(s, vec![0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]);
    }
}
