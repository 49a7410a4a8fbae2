//! The network's shape ([`ModelConfig`]) and the training hyper-parameters ([`OptimConfig`]).

use crate::net::{PolicyValueNet, ResidualBlock};
use burn::config::Config;
use burn::nn::LinearConfig;
use burn::tensor::Device;
use serde::{Deserialize, Serialize};

/// The shape of the policy-value network. Stored in every checkpoint's `meta.json`, and the
/// `[model]` section of a training config.
///
/// input ([`ModelConfig::input_size`]) → linear to `hidden` → relu → `blocks` residual blocks of width `hidden`
/// → one linear to 8 outputs (6 policy logits, value, margin), 9 with the short-horizon value
/// head (`short_value`).
///
/// It implements burn's [`Config`] trait (builders, `save`/`load`), with serde derived here
/// rather than by burn's macro so that a missing key takes its default and an unknown key is an
/// error (burn's generated serde does the opposite of both).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ModelConfig {
    /// Width of the trunk (units per layer). Default 128.
    pub hidden: usize,
    /// Number of residual blocks in the trunk (each is one `hidden`×`hidden` linear layer).
    /// Default 3.
    pub blocks: usize,
    /// An auxiliary head predicting a short-horizon value: the exponentially weighted mean of
    /// the next recorded search values (KataGo's short-term value targets). Default off;
    /// checkpoints without the key have no such head.
    pub short_value: bool,
    /// The input also holds what each house's sowing would capture and carry, for both
    /// sides ([`crate::encode`]'s move features, 26 more inputs). Default off (15-minute runs
    /// with them scored 48.4% against the yardstick over two seeds, without 45.1%: no gain
    /// shown, see `docs/results/2026-12-07-move-features.md`); a checkpoint without the key
    /// has the base layout.
    pub move_features: bool,
}

impl Config for ModelConfig {}

impl Default for ModelConfig {
    fn default() -> Self {
        ModelConfig {
            hidden: 128,
            blocks: 3,
            short_value: false,
            move_features: false,
        }
    }
}

impl std::fmt::Display for ModelConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{{\"hidden\":{},\"blocks\":{}{},\"move_features\":{}}}",
            self.hidden,
            self.blocks,
            if self.short_value {
                ",\"short_value\":true"
            } else {
                ""
            },
            self.move_features
        )
    }
}

impl ModelConfig {
    /// The default shape (hidden 128, 3 blocks: the `[model]` defaults of a training config).
    pub fn new() -> ModelConfig {
        ModelConfig::default()
    }

    /// The same shape with trunk width `hidden`.
    pub fn with_hidden(mut self, hidden: usize) -> ModelConfig {
        self.hidden = hidden;
        self
    }

    /// The same shape with `blocks` residual blocks.
    pub fn with_blocks(mut self, blocks: usize) -> ModelConfig {
        self.blocks = blocks;
        self
    }

    /// Checks the ranges: `hidden` in 1..=4096, `blocks` in 0..=64. The error names the key
    /// (without the section name).
    pub fn validate(&self) -> Result<(), String> {
        if !(1..=4096).contains(&self.hidden) {
            return Err(format!("hidden = {} is outside 1..=4096", self.hidden));
        }
        if self.blocks > 64 {
            return Err(format!("blocks = {} is outside 0..=64", self.blocks));
        }
        Ok(())
    }

    /// Outputs of the network's shared head layer: [`crate::net::HEAD_OUTPUTS`], plus one for
    /// the short-horizon value.
    pub fn head_outputs(&self) -> usize {
        crate::net::HEAD_OUTPUTS + usize::from(self.short_value)
    }

    /// Inputs per position: [`crate::encode::input_size`] of `move_features`.
    pub fn input_size(&self) -> usize {
        crate::encode::input_size(self.move_features)
    }

    /// Builds a freshly initialised network on `device` (use an autodiff device to train it).
    pub fn init(&self, device: &Device) -> PolicyValueNet {
        let input = LinearConfig::new(self.input_size(), self.hidden).init(device);
        let blocks = (0..self.blocks)
            .map(|_| ResidualBlock {
                linear: LinearConfig::new(self.hidden, self.hidden).init(device),
            })
            .collect();
        let heads = LinearConfig::new(self.hidden, self.head_outputs()).init(device);
        PolicyValueNet {
            input,
            blocks,
            heads,
        }
    }

    /// Number of trainable parameters of a network of this shape.
    pub fn num_params(&self) -> usize {
        let h = self.hidden;
        let input = self.input_size() * h + h;
        let blocks = self.blocks * (h * h + h);
        let heads = h * self.head_outputs() + self.head_outputs();
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
    /// Weight of the auxiliary short-horizon value loss (mean squared error of that head
    /// against its target); used only by networks with the head (`model.short_value`).
    pub short_value_weight: f32,
    /// Share `m` of the short-horizon value target in the value head's target:
    /// `(1 − m)·result + m·short`, where `short` is the short-horizon target of
    /// `selfplay.short_value_horizon` (search values of the next recorded positions, ending in
    /// the result). 0 trains the value on the game's result alone; any network shape can use it.
    pub value_target_mix: f32,
    /// Decay of an exponential moving average of the weights (`avg ← d·avg + (1 − d)·w` after
    /// every step, with a warm-up over the first steps): when above 0, the average is the
    /// network that plays (self-play, evaluation, the checkpoints' `model.bpk`) while the
    /// optimizer steps the raw weights (kept in `train_model.bpk`). 0 turns it off: the raw
    /// weights play.
    pub ema_decay: f64,
}

impl Default for OptimConfig {
    fn default() -> Self {
        OptimConfig {
            optimizer: OptimizerKind::Adam,
            weight_decay: 1e-4,
            momentum: 0.9,
            value_weight: 1.0,
            margin_weight: 0.25,
            short_value_weight: 0.25,
            // 0.5: the 15-minute runs' best, with selfplay.egtb (docs/results/2026-12-05-*).
            value_target_mix: 0.5,
            ema_decay: 0.0,
        }
    }
}

impl OptimConfig {
    /// Checks the ranges; the error names the key (without the section name).
    pub fn validate(&self) -> Result<(), String> {
        if !(0.0..=1.0).contains(&self.weight_decay) {
            return Err(format!(
                "weight_decay = {} is outside 0..=1",
                self.weight_decay
            ));
        }
        if !(0.0..1.0).contains(&self.momentum) {
            return Err(format!("momentum = {} is outside 0..1", self.momentum));
        }
        for (name, w) in [
            ("value_weight", self.value_weight),
            ("margin_weight", self.margin_weight),
            ("short_value_weight", self.short_value_weight),
        ] {
            if !(0.0..=100.0).contains(&w) {
                return Err(format!("{name} = {w} is outside 0..=100"));
            }
        }
        if !(0.0..=1.0).contains(&self.value_target_mix) {
            return Err(format!(
                "value_target_mix = {} is outside 0..=1",
                self.value_target_mix
            ));
        }
        if !(0.0..1.0).contains(&self.ema_decay) {
            return Err(format!("ema_decay = {} is outside 0..1", self.ema_decay));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_config_serde() {
        let c: ModelConfig = serde_json::from_str(r#"{"hidden": 64}"#).expect("partial");
        assert_eq!(c, ModelConfig::new().with_hidden(64));
        assert_eq!(c.blocks, 3);
        let err = serde_json::from_str::<ModelConfig>(r#"{"hiden": 64}"#).expect_err("typo");
        assert!(err.to_string().contains("hiden"), "{err}");
        let back: ModelConfig = serde_json::from_str(&c.to_string()).expect("display is json");
        assert_eq!(back, c);
        assert_eq!(
            ModelConfig::new().with_hidden(0).validate(),
            Err("hidden = 0 is outside 1..=4096".to_string())
        );
        assert!(ModelConfig::new().validate().is_ok());
        // The move features widen the input layer and travel in the JSON form, off as well
        // as on.
        let base = ModelConfig::new();
        assert!(!base.move_features);
        let mf = ModelConfig {
            move_features: true,
            ..ModelConfig::new()
        };
        for c in [&mf, &base] {
            let back: ModelConfig = serde_json::from_str(&c.to_string()).expect("display is json");
            assert_eq!(&back, c);
        }
        assert_eq!(
            mf.input_size(),
            crate::encode::INPUT_SIZE + crate::encode::MOVE_FEATURES
        );
        assert_eq!(base.input_size(), crate::encode::INPUT_SIZE);
        assert_eq!(
            mf.num_params() - base.num_params(),
            crate::encode::MOVE_FEATURES * mf.hidden
        );
        assert_eq!(mf.num_params(), 70_792);
        assert_eq!(
            burn::module::Module::num_params(&mf.init(&Device::flex())),
            mf.num_params()
        );
    }

    #[test]
    fn optim_config_serde() {
        let c: OptimConfig =
            serde_json::from_str(r#"{"optimizer": "sgd", "momentum": 0.8}"#).expect("partial");
        assert_eq!(c.optimizer, OptimizerKind::Sgd);
        assert_eq!(c.weight_decay, OptimConfig::default().weight_decay);
        assert!(serde_json::from_str::<OptimConfig>(r#"{"lr": 1}"#).is_err());
        assert!(serde_json::from_str::<OptimConfig>(r#"{"optimizer": "rmsprop"}"#).is_err());
        let bad = OptimConfig {
            weight_decay: 2.0,
            ..OptimConfig::default()
        };
        assert!(
            bad.validate()
                .expect_err("range")
                .starts_with("weight_decay")
        );
    }
}
