//! The network's shape ([`ModelConfig`]) and the training hyper-parameters ([`OptimConfig`]).

use crate::net::{PolicyValueNet, ResidualBlock};
use burn::config::Config;
use burn::nn::LinearConfig;
use burn::tensor::Device;
use serde::{Deserialize, Serialize};

/// The shape of the policy-value network. Stored in every checkpoint's `meta.json`.
///
/// input (`INPUT_SIZE`) → linear to `hidden` → relu → `blocks` residual blocks of width `hidden`
/// → one linear to 8 outputs (6 policy logits, value, margin).
#[derive(Config, Debug, PartialEq, Eq)]
pub struct ModelConfig {
    /// Width of the trunk (units per layer).
    #[config(default = 256)]
    pub hidden: usize,
    /// Number of residual blocks in the trunk (each is one `hidden`×`hidden` linear layer).
    #[config(default = 3)]
    pub blocks: usize,
}

impl Default for ModelConfig {
    fn default() -> Self {
        ModelConfig::new()
    }
}

impl ModelConfig {
    /// Checks the ranges: `hidden` in 1..=4096, `blocks` in 0..=64. The error names the key.
    pub fn validate(&self) -> Result<(), String> {
        if !(1..=4096).contains(&self.hidden) {
            return Err(format!("model.hidden = {} is outside 1..=4096", self.hidden));
        }
        if self.blocks > 64 {
            return Err(format!("model.blocks = {} is outside 0..=64", self.blocks));
        }
        Ok(())
    }

    /// Builds a freshly initialised network on `device` (use an autodiff device to train it).
    pub fn init(&self, device: &Device) -> PolicyValueNet {
        let input = LinearConfig::new(crate::encode::INPUT_SIZE, self.hidden).init(device);
        let blocks = (0..self.blocks)
            .map(|_| ResidualBlock {
                linear: LinearConfig::new(self.hidden, self.hidden).init(device),
            })
            .collect();
        let heads = LinearConfig::new(self.hidden, crate::net::HEAD_OUTPUTS).init(device);
        PolicyValueNet {
            input,
            blocks,
            heads,
        }
    }

    /// Number of trainable parameters of a network of this shape.
    pub fn num_params(&self) -> usize {
        let h = self.hidden;
        let input = crate::encode::INPUT_SIZE * h + h;
        let blocks = self.blocks * (h * h + h);
        let heads = h * crate::net::HEAD_OUTPUTS + crate::net::HEAD_OUTPUTS;
        input + blocks + heads
    }
}

/// Which optimizer the learner uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum OptimizerKind {
    /// Adam with L2 weight decay added to the gradient.
    #[default]
    Adam,
    /// Adam with decoupled weight decay (AdamW).
    AdamW,
    /// Stochastic gradient descent with momentum 0.9 (Nesterov off).
    Sgd,
}

/// Optimizer and loss settings of the learner. Stored in every checkpoint's `meta.json` so a
/// run resumes with the same optimizer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OptimConfig {
    /// The optimizer.
    pub optimizer: OptimizerKind,
    /// Weight decay (L2 penalty for `adam` and `sgd`, decoupled decay for `adamw`); 0 disables it.
    pub weight_decay: f32,
    /// Momentum of `sgd` (ignored by the Adam variants).
    pub momentum: f64,
    /// Weight of the value loss (mean squared error of the tanh value against the game result).
    pub value_weight: f32,
    /// Weight of the auxiliary margin loss (mean squared error of the margin head against the
    /// final seed margin / 48).
    pub margin_weight: f32,
}

impl Default for OptimConfig {
    fn default() -> Self {
        OptimConfig {
            optimizer: OptimizerKind::Adam,
            weight_decay: 1e-4,
            momentum: 0.9,
            value_weight: 1.0,
            margin_weight: 0.25,
        }
    }
}

impl OptimConfig {
    /// Checks the ranges; the error names the key.
    pub fn validate(&self) -> Result<(), String> {
        if !(0.0..=1.0).contains(&self.weight_decay) {
            return Err(format!("weight_decay = {} is outside 0..=1", self.weight_decay));
        }
        if !(0.0..1.0).contains(&self.momentum) {
            return Err(format!("momentum = {} is outside 0..1", self.momentum));
        }
        for (name, w) in [
            ("value_weight", self.value_weight),
            ("margin_weight", self.margin_weight),
        ] {
            if !(0.0..=100.0).contains(&w) {
                return Err(format!("{name} = {w} is outside 0..=100"));
            }
        }
        Ok(())
    }
}
