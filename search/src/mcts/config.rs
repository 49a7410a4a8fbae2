//! The search settings: one plain struct, read from the trainer's `[mcts]` TOML section.

use oware_engine::bounds::{MAX_BATCH, MAX_SIMS};
use serde::{Deserialize, Serialize};

/// Which algorithm picks the simulations' first moves at the root (and the interior rule that
/// goes with it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RootAlgorithm {
    /// AlphaZero: PUCT everywhere, Dirichlet noise at the root for self-play, the move chosen by
    /// visit count (with the temperature schedule), the visit distribution as policy target.
    #[default]
    Puct,
    /// Gumbel AlphaZero (Danihelka et al. 2022): Gumbel-top-k sampling and sequential halving at
    /// the root, the rule `gumbel_interior` below it, and the improved policy from completed
    /// Q-values as policy target.
    Gumbel,
}

/// The selection rule below the root when the root algorithm is Gumbel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InteriorRule {
    /// PUCT, as with the PUCT root (the default: it played better in our network-free
    /// comparisons, see `examples/search_compare.rs`, and is cheaper).
    #[default]
    Puct,
    /// The deterministic Gumbel-MuZero rule: the child maximising
    /// `π'(a) − N(a) / (1 + Σ N)`, `π' = softmax(logits + σ(completed Q))`.
    Gumbel,
}

/// How the PUCT exploration constant is computed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CpuctForm {
    /// `c = c_puct` at every node.
    #[default]
    Constant,
    /// AlphaZero's slowly growing form: `c = c_init + ln((N + c_base + 1) / c_base)` where `N` is
    /// the parent's visit count.
    Growing,
}

/// Settings of the Monte Carlo tree search. Every field has a default (the `[mcts]` section of
/// `configs/default.toml` states exactly these, checked by a test in the trainer), and unknown
/// keys are an error when read from TOML or JSON.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MctsConfig {
    /// Simulations per search (per move). Each simulation is one descent from the root that adds
    /// one visit to one root child; the evaluation of a fresh root itself is not counted.
    pub sims: u32,
    /// The root algorithm: `"puct"` or `"gumbel"`.
    pub root: RootAlgorithm,
    /// The form of the PUCT constant: `"constant"` (uses `c_puct`) or `"growing"` (uses
    /// `c_init` and `c_base`).
    pub cpuct_form: CpuctForm,
    /// The constant PUCT exploration factor.
    pub c_puct: f32,
    /// `c_init` of the growing form.
    pub c_init: f32,
    /// `c_base` of the growing form.
    pub c_base: f32,
    /// First play urgency: an unvisited child is valued at its parent's value minus this.
    pub fpu_reduction: f32,
    /// Dirichlet noise concentration at the root (self-play, PUCT only).
    pub dirichlet_alpha: f32,
    /// Weight of the Dirichlet noise in the root priors: `p = (1 - frac) p + frac * noise`.
    pub dirichlet_frac: f32,
    /// Move-choice temperature for self-play (PUCT): the move is drawn with probability
    /// proportional to `visits^(1/temperature)`. 0 means always the most visited move.
    pub temperature: f32,
    /// Number of plies from the start of a game during which `temperature` applies; later moves
    /// are chosen greedily.
    pub temperature_plies: u32,
    /// Virtual loss: each simulation in flight counts as a visit with value `-virtual_loss` on
    /// every node of its path, so that further leaves of the same pass look elsewhere.
    pub virtual_loss: f32,
    /// Leaves gathered per tree in one evaluator call (several per tree use virtual loss). For a
    /// single-game search this is the evaluator batch size.
    pub leaves_per_tree: u32,
    /// Gumbel: actions considered at the root (`m`; at most the number of legal moves is used).
    pub gumbel_considered: u32,
    /// Gumbel: `c_visit` of the monotone transform `σ(q) = (c_visit + max N) · c_scale · q`.
    pub gumbel_c_visit: f32,
    /// Gumbel: `c_scale` of that transform.
    pub gumbel_c_scale: f32,
    /// Gumbel: the rule below the root, `"puct"` or `"gumbel"` (deterministic Gumbel-MuZero).
    pub gumbel_interior: InteriorRule,
    /// Keep the subtree of the move played for the next search.
    pub reuse_tree: bool,
    /// KataGo's forced playouts and policy target pruning, `k` (0 = off): in a search with
    /// root noise (self-play's full searches, PUCT root), a root child with fewer than
    /// `sqrt(k · P · N)` visits is visited first; the policy target then takes back from every
    /// child but the most visited the forced visits that PUCT would not have given it, and
    /// drops children left with one visit. The move played is chosen from the real visits.
    pub forced_playouts: f32,
}

impl Default for MctsConfig {
    fn default() -> Self {
        MctsConfig {
            sims: 100,
            root: RootAlgorithm::Puct,
            cpuct_form: CpuctForm::Constant,
            c_puct: 1.5,
            c_init: 1.25,
            c_base: 19652.0,
            fpu_reduction: 0.25,
            dirichlet_alpha: 1.0,
            dirichlet_frac: 0.25,
            temperature: 1.0,
            temperature_plies: 20,
            virtual_loss: 1.0,
            leaves_per_tree: 2,
            gumbel_considered: 6,
            gumbel_c_visit: 50.0,
            gumbel_c_scale: 1.0,
            gumbel_interior: InteriorRule::Puct,
            reuse_tree: true,
            forced_playouts: 0.0,
        }
    }
}

/// A setting out of its range, named by its key.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("mcts.{field}: {message}")]
pub struct ConfigError {
    /// The key (as in TOML) of the bad setting.
    pub field: &'static str,
    /// What is wrong with it.
    pub message: String,
}

fn check(
    ok: bool,
    field: &'static str,
    message: impl FnOnce() -> String,
) -> Result<(), ConfigError> {
    if ok {
        Ok(())
    } else {
        Err(ConfigError {
            field,
            message: message(),
        })
    }
}

impl MctsConfig {
    /// Checks every setting's range; the error names the first bad key.
    pub fn validate(&self) -> Result<(), ConfigError> {
        check((1..=MAX_SIMS).contains(&self.sims), "sims", || {
            format!("must lie in 1..={MAX_SIMS}, got {}", self.sims)
        })?;
        let positive = [
            ("c_puct", self.c_puct),
            ("c_init", self.c_init),
            ("c_base", self.c_base),
            ("dirichlet_alpha", self.dirichlet_alpha),
            ("gumbel_c_scale", self.gumbel_c_scale),
        ];
        for (field, v) in positive {
            check(v.is_finite() && v > 0.0, field, || {
                format!("must be a finite number > 0, got {v}")
            })?;
        }
        let non_negative = [
            ("fpu_reduction", self.fpu_reduction),
            ("temperature", self.temperature),
            ("virtual_loss", self.virtual_loss),
            ("gumbel_c_visit", self.gumbel_c_visit),
        ];
        for (field, v) in non_negative {
            check(v.is_finite() && v >= 0.0, field, || {
                format!("must be a finite number >= 0, got {v}")
            })?;
        }
        check(
            self.forced_playouts.is_finite() && (0.0..=100.0).contains(&self.forced_playouts),
            "forced_playouts",
            || format!("must lie in [0, 100], got {}", self.forced_playouts),
        )?;
        check(
            (0.0..=1.0).contains(&self.dirichlet_frac),
            "dirichlet_frac",
            || format!("must lie in [0, 1], got {}", self.dirichlet_frac),
        )?;
        check(
            (1..=MAX_BATCH).contains(&self.leaves_per_tree),
            "leaves_per_tree",
            || format!("must lie in 1..={MAX_BATCH}, got {}", self.leaves_per_tree),
        )?;
        check(
            (1..=6).contains(&self.gumbel_considered),
            "gumbel_considered",
            || format!("must lie in 1..=6, got {}", self.gumbel_considered),
        )?;
        Ok(())
    }

    /// The PUCT exploration factor at a node with `parent_visits` visits.
    #[inline]
    pub fn cpuct(&self, parent_visits: u32) -> f32 {
        match self.cpuct_form {
            CpuctForm::Constant => self.c_puct,
            CpuctForm::Growing => {
                self.c_init + ((parent_visits as f32 + self.c_base + 1.0) / self.c_base).ln()
            }
        }
    }
}
