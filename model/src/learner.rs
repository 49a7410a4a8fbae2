//! [`Learner`]: the trainable network, its optimizer and the loss.

use crate::average::WeightAverage;
use crate::config::{ModelConfig, OptimConfig, OptimizerKind};
use crate::encode::{ILLEGAL_LOGIT, encode_batch, legal_mask};
use crate::evaluator::NetEvaluator;
use crate::net::{PolicyValueNet, tensor_to_vec};
use burn::optim::decay::WeightDecayConfig;
use burn::optim::momentum::MomentumConfig;
use burn::optim::{AdamConfig, AdamWConfig, GradientsParams, ModuleOptimizer, SgdConfig};
use burn::tensor::activation::log_softmax;
use burn::tensor::{Device, Tensor, TensorData};
use oware_engine::Position;
use serde::{Deserialize, Serialize};

/// One training batch. Every target is from the point of view of the side to move in the
/// matching position.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TrainBatch {
    /// The positions (each should have a legal move).
    pub positions: Vec<Position>,
    /// Target policy over the mover's houses in sowing order (e.g. MCTS visit shares). Should
    /// be 0 on illegal moves and sum to 1; mass on an illegal move is ignored.
    pub policy: Vec<[f32; 6]>,
    /// Target value in [-1, 1] (game result for the mover, or a blend).
    pub value: Vec<f32>,
    /// Target margin: (mover's final seeds − opponent's final seeds) / 48, in [-1, 1].
    pub margin: Vec<f32>,
    /// Target short-horizon value in [-1, 1], for networks with that head: one per position,
    /// or empty (then that head is not trained on this batch).
    pub short_value: Vec<f32>,
}

impl TrainBatch {
    /// Number of samples.
    pub fn len(&self) -> usize {
        self.positions.len()
    }

    /// Whether the batch holds no sample.
    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }

    /// Checks that the four columns have one entry per position and hold finite numbers.
    pub fn validate(&self) -> Result<(), TrainError> {
        let n = self.positions.len();
        if n == 0 {
            return Err(TrainError::EmptyBatch);
        }
        for (name, len) in [
            ("policy", self.policy.len()),
            ("value", self.value.len()),
            ("margin", self.margin.len()),
        ] {
            if len != n {
                return Err(TrainError::LengthMismatch {
                    column: name,
                    len,
                    positions: n,
                });
            }
        }
        if !self.short_value.is_empty() && self.short_value.len() != n {
            return Err(TrainError::LengthMismatch {
                column: "short_value",
                len: self.short_value.len(),
                positions: n,
            });
        }
        let finite = self.policy.iter().flatten().all(|x| x.is_finite())
            && self.value.iter().all(|x| x.is_finite())
            && self.margin.iter().all(|x| x.is_finite())
            && self.short_value.iter().all(|x| x.is_finite());
        if !finite {
            return Err(TrainError::NonFiniteTarget);
        }
        Ok(())
    }
}

/// The parts of the loss of one step (means over the batch).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Losses {
    /// `policy + value_weight·value + margin_weight·margin`: what was minimised.
    pub total: f32,
    /// Cross-entropy of the masked policy against the target policy.
    pub policy: f32,
    /// Mean squared error of the value.
    pub value: f32,
    /// Mean squared error of the margin.
    pub margin: f32,
}

/// Why a training step could not run.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum TrainError {
    /// The batch holds no sample.
    #[error("training batch is empty")]
    EmptyBatch,
    /// A target column's length differs from the number of positions.
    #[error("training batch has {len} {column} targets for {positions} positions")]
    LengthMismatch {
        /// The column.
        column: &'static str,
        /// Its length.
        len: usize,
        /// Number of positions.
        positions: usize,
    },
    /// A target is NaN or infinite.
    #[error("training batch holds a NaN or infinite target")]
    NonFiniteTarget,
    /// The learning rate is not a finite positive number.
    #[error("learning rate {0} is not a finite number > 0")]
    BadLearningRate(f64),
    /// The loss came out NaN or infinite (the step was still applied).
    #[error("loss is not finite ({0:?}); lower the learning rate")]
    NonFiniteLoss(Losses),
    /// The backend could not hand back the loss.
    #[error("{0}")]
    Backend(String),
}

/// Why the optimizer settings of a loaded learner could not be changed.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ReconfigureError {
    /// The optimizer kind differs: its saved state (moments) belongs to the other kind.
    #[error(
        "optimizer = {requested:?} differs from {saved:?}, whose state the checkpoint holds; \
         the optimizer cannot change within a run (start a new run to use another one)"
    )]
    KindChanged {
        /// The kind the learner was saved with.
        saved: OptimizerKind,
        /// The kind asked for.
        requested: OptimizerKind,
    },
    /// The new settings are out of range (the message names the key).
    #[error("{0}")]
    Invalid(String),
}

/// The trainable network (on an autodiff device), its optimizer and loss settings.
pub struct Learner {
    model: PolicyValueNet,
    optim: ModuleOptimizer,
    config: ModelConfig,
    optim_config: OptimConfig,
    device: Device,
    steps: u64,
    /// The moving average of the weights, when `optim_config.ema_decay > 0`.
    average: Option<WeightAverage>,
}

impl std::fmt::Debug for Learner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Learner")
            .field("config", &self.config)
            .field("optim_config", &self.optim_config)
            .field("device", &self.device)
            .field("steps", &self.steps)
            .finish()
    }
}

/// The value head's targets: `(1 − mix)·value + mix·short_value` per sample, the results
/// alone when `mix` is 0 or the batch has no short-horizon column.
fn value_targets(batch: &TrainBatch, mix: f32) -> Vec<f32> {
    if mix == 0.0 || batch.short_value.len() != batch.value.len() {
        return batch.value.clone();
    }
    batch
        .value
        .iter()
        .zip(&batch.short_value)
        .map(|(&z, &s)| (1.0 - mix) * z + mix * s)
        .collect()
}

/// Builds the optimizer an [`OptimConfig`] names.
pub(crate) fn build_optimizer(cfg: &OptimConfig) -> ModuleOptimizer {
    let decay = (cfg.weight_decay > 0.0).then(|| WeightDecayConfig::new(cfg.weight_decay));
    match cfg.optimizer {
        OptimizerKind::Adam => AdamConfig::new().with_weight_decay(decay).init(),
        OptimizerKind::AdamW => AdamWConfig::new()
            .with_weight_decay(cfg.weight_decay)
            .init(),
        OptimizerKind::Sgd => SgdConfig::new()
            .with_weight_decay(decay)
            .with_momentum(Some(
                MomentumConfig::new()
                    .with_momentum(cfg.momentum)
                    .with_dampening(0.0),
            ))
            .init(),
    }
}

impl Learner {
    /// A fresh network of shape `config` and a fresh optimizer, on `device` (autodiff is added).
    pub fn new(config: &ModelConfig, optim_config: &OptimConfig, device: &Device) -> Learner {
        let device = device.clone().autodiff();
        let model = config.init(&device);
        Learner::from_parts(
            model,
            build_optimizer(optim_config),
            config,
            optim_config,
            device,
        )
    }

    pub(crate) fn from_parts(
        model: PolicyValueNet,
        optim: ModuleOptimizer,
        config: &ModelConfig,
        optim_config: &OptimConfig,
        device: Device,
    ) -> Learner {
        let average = (optim_config.ema_decay > 0.0).then(|| WeightAverage::start(&model));
        Learner {
            model,
            optim,
            config: config.clone(),
            optim_config: optim_config.clone(),
            device,
            steps: 0,
            average,
        }
    }

    /// Replaces the moving average (when `optimizer.ema_decay > 0`) by `net`'s weights, an
    /// average saved in a checkpoint after `updates` updates (`None`: long warmed up).
    pub(crate) fn restore_average(&mut self, net: &PolicyValueNet, updates: Option<u64>) {
        if self.average.is_some() {
            self.average = Some(WeightAverage::restored(net, updates));
        }
    }

    /// Updates the moving average has taken since it started, when there is one.
    pub(crate) fn average_updates(&self) -> Option<u64> {
        self.average.as_ref().map(WeightAverage::updates)
    }

    /// The network's shape.
    pub fn config(&self) -> &ModelConfig {
        &self.config
    }

    /// The optimizer and loss settings.
    pub fn optim_config(&self) -> &OptimConfig {
        &self.optim_config
    }

    /// The training device (with autodiff).
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The training network: the raw weights the optimizer steps.
    pub fn model(&self) -> &PolicyValueNet {
        &self.model
    }

    /// The network that plays: the moving average of the weights when `optimizer.ema_decay`
    /// is above 0 (without autodiff), else the training network.
    pub fn play_model(&self) -> &PolicyValueNet {
        self.average
            .as_ref()
            .map_or(&self.model, WeightAverage::net)
    }

    /// Whether the network that plays is a moving average, not the training network.
    pub fn has_average(&self) -> bool {
        self.average.is_some()
    }

    pub(crate) fn optimizer(&self) -> &ModuleOptimizer {
        &self.optim
    }

    /// Steps taken by this learner since it was created or loaded (the trainer keeps the
    /// global step count in the checkpoint meta).
    pub fn steps_taken(&self) -> u64 {
        self.steps
    }

    /// Changes the loss weights (value, margin) for the next steps; the optimizer kind and
    /// weight decay stay as built.
    pub fn set_loss_weights(&mut self, value_weight: f32, margin_weight: f32) {
        self.optim_config.value_weight = value_weight;
        self.optim_config.margin_weight = margin_weight;
    }

    /// Applies new optimizer and loss settings to the next steps, keeping the optimizer's state
    /// (Adam moments, SGD momentum): weight decay, momentum and the loss weights may change,
    /// the optimizer kind may not (its state would not fit). Used when a run resumes with
    /// changed `[optimizer]` keys.
    pub fn reconfigure(&mut self, config: &OptimConfig) -> Result<(), ReconfigureError> {
        config.validate().map_err(ReconfigureError::Invalid)?;
        if config.optimizer != self.optim_config.optimizer {
            return Err(ReconfigureError::KindChanged {
                saved: self.optim_config.optimizer,
                requested: config.optimizer,
            });
        }
        if config == &self.optim_config {
            return Ok(());
        }
        let state = self.optim.to_record();
        self.optim = build_optimizer(config).load_record(state);
        self.optim_config = config.clone();
        match (config.ema_decay > 0.0, self.average.is_some()) {
            (true, false) => self.average = Some(WeightAverage::start(&self.model)),
            (false, true) => self.average = None,
            _ => {}
        }
        Ok(())
    }

    /// A non-autodiff copy of the weights that play ([`Learner::play_model`]) for self-play
    /// and evaluation.
    pub fn evaluator(&self) -> NetEvaluator {
        NetEvaluator::new(self.play_model(), self.config.clone(), &self.device)
    }

    /// The losses of `batch` under the current weights, without a step.
    pub fn losses(&self, batch: &TrainBatch) -> Result<Losses, TrainError> {
        batch.validate()?;
        let (_, losses) = self.loss_tensors(batch, &self.device.clone().without_autodiff())?;
        Ok(losses)
    }

    /// One optimizer step on `batch` with learning rate `lr`; returns the batch's losses
    /// before the step.
    pub fn step(&mut self, batch: &TrainBatch, lr: f64) -> Result<Losses, TrainError> {
        batch.validate()?;
        if !(lr.is_finite() && lr > 0.0) {
            return Err(TrainError::BadLearningRate(lr));
        }
        let device = self.device.clone();
        let (total, losses) = self.loss_tensors(batch, &device)?;
        let grads = GradientsParams::from_grads(total.backward(), &self.model);
        self.model = self.optim.step(lr, self.model.clone(), grads);
        self.steps += 1;
        if let Some(average) = &mut self.average {
            average.update(&self.model, self.optim_config.ema_decay);
        }
        let all_finite = [losses.total, losses.policy, losses.value, losses.margin]
            .iter()
            .all(|x| x.is_finite());
        if all_finite {
            Ok(losses)
        } else {
            Err(TrainError::NonFiniteLoss(losses))
        }
    }

    /// The total loss tensor (for `backward`) and the parts as numbers. Uses the autodiff
    /// model when `device` has autodiff, its `valid()` copy otherwise.
    fn loss_tensors(
        &self,
        batch: &TrainBatch,
        device: &Device,
    ) -> Result<(Tensor<1>, Losses), TrainError> {
        let n = batch.len();
        let input = encode_batch(&batch.positions, self.config.move_features, device);
        let mut mask = Vec::with_capacity(n * 6);
        let mut target = Vec::with_capacity(n * 6);
        for (pos, t) in batch.positions.iter().zip(&batch.policy) {
            for (legal, &p) in legal_mask(pos).into_iter().zip(t) {
                mask.push(if legal { 0.0 } else { ILLEGAL_LOGIT });
                target.push(if legal { p } else { 0.0 });
            }
        }
        let mask = Tensor::<2>::from_data(TensorData::new(mask, [n, 6]), device);
        let target_p = Tensor::<2>::from_data(TensorData::new(target, [n, 6]), device);
        let target_v = Tensor::<2>::from_data(
            TensorData::new(
                value_targets(batch, self.optim_config.value_target_mix),
                [n, 1],
            ),
            device,
        );
        let target_m =
            Tensor::<2>::from_data(TensorData::new(batch.margin.clone(), [n, 1]), device);

        let out = if device.is_autodiff() {
            self.model.forward(input)
        } else {
            burn::module::Module::valid(&self.model).forward(input)
        };
        let log_p = log_softmax(out.policy_logits + mask, 1);
        let policy = -(target_p * log_p).sum() / n as f32;
        let value = (out.value - target_v).square().mean();
        let margin = (out.margin - target_m).square().mean();
        let w = &self.optim_config;
        let mut total =
            policy.clone() + value.clone() * w.value_weight + margin.clone() * w.margin_weight;
        if let Some(short) = out.short_value.filter(|_| batch.short_value.len() == n) {
            let target_s =
                Tensor::<2>::from_data(TensorData::new(batch.short_value.clone(), [n, 1]), device);
            total = total + (short - target_s).square().mean() * w.short_value_weight;
        }
        let parts = Tensor::cat(vec![total.clone(), policy, value, margin], 0);
        let v = tensor_to_vec(parts.detach()).map_err(TrainError::Backend)?;
        let [total_v, policy_v, value_v, margin_v] = v[..] else {
            return Err(TrainError::Backend(format!(
                "the loss came back as {} numbers, 4 expected",
                v.len()
            )));
        };
        let losses = Losses {
            total: total_v,
            policy: policy_v,
            value: value_v,
            margin: margin_v,
        };
        Ok((total, losses))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oware_search::Evaluator;

    /// A fixed batch from a deterministic walk with arbitrary but learnable targets.
    pub(crate) fn fixed_batch(n: usize) -> TrainBatch {
        let mut batch = TrainBatch::default();
        let mut pos = Position::start();
        let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        while batch.len() < n {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                pos = Position::start();
                continue;
            }
            // One-hot target on a legal move, so the best possible cross-entropy is 0.
            let pick = moves.as_slice()[(next() % moves.len() as u64) as usize];
            let mut p = [0.0; 6];
            p[pick.relative()] = 1.0;
            batch.positions.push(pos);
            batch.policy.push(p);
            batch.value.push(if next() % 2 == 0 { 0.8 } else { -0.8 });
            batch.margin.push((next() % 41) as f32 / 48.0 - 20.0 / 48.0);
            let (after, _) = pos.play(pick).expect("legal");
            pos = after;
        }
        batch
    }

    #[test]
    fn loss_falls_on_a_fixed_batch() {
        let device = Device::flex();
        let cfg = ModelConfig::new().with_hidden(64).with_blocks(2);
        let mut learner = Learner::new(&cfg, &OptimConfig::default(), &device);
        let batch = fixed_batch(32);
        let first = learner.step(&batch, 3e-3).expect("step");
        let mut last = first;
        for _ in 0..300 {
            last = learner.step(&batch, 3e-3).expect("step");
        }
        assert!(first.total > 1.0, "initial loss {first:?}");
        assert!(last.total < 0.1 * first.total, "{first:?} -> {last:?}");
        // The initial weights are random, so leave room: 0.022 has been seen after 300 steps.
        assert!(last.policy < 0.1 && last.value < 0.05, "{last:?}");
        assert_eq!(learner.steps_taken(), 301);

        // The evaluator sees the trained weights: it now prefers each target move.
        let ev = learner.evaluator();
        let preds = ev.predict(&batch.positions).expect("finite");
        let hits = preds
            .iter()
            .zip(&batch.policy)
            .filter(|(p, t)| {
                let best = (0..6).max_by(|&a, &b| p.policy[a].total_cmp(&p.policy[b]));
                best.is_some_and(|b| t[b] == 1.0)
            })
            .count();
        assert!(hits >= 30, "{hits}/32 targets learnt");
        let mut out = vec![
            oware_search::Evaluation {
                policy: [0.0; 6],
                value: 0.0
            };
            batch.len()
        ];
        ev.evaluate(&batch.positions, &mut out).expect("finite");
        for (e, v) in out.iter().zip(&batch.value) {
            assert!((e.value - v).abs() < 0.3, "{} vs {v}", e.value);
        }
        // losses() agrees with what the next step reports.
        let l = learner.losses(&batch).expect("losses");
        let s = learner.step(&batch, 1e-6).expect("step");
        assert!((l.total - s.total).abs() < 1e-4);
    }

    #[test]
    fn the_short_value_head_learns_its_target_and_round_trips() {
        let device = Device::flex();
        let cfg = ModelConfig {
            short_value: true,
            ..ModelConfig::new().with_hidden(32).with_blocks(1)
        };
        assert_eq!(cfg.head_outputs(), 9);
        let mut learner = Learner::new(&cfg, &OptimConfig::default(), &device);
        let mut batch = fixed_batch(32);
        // A target unlike the value: the head must learn it on its own.
        batch.short_value = batch.value.iter().map(|v| -0.5 * v).collect();
        let first = learner.step(&batch, 3e-3).expect("step");
        let mut last = first;
        for _ in 0..300 {
            last = learner.step(&batch, 3e-3).expect("step");
        }
        assert!(last.total < 0.2 * first.total, "{first:?} -> {last:?}");
        // The evaluator reads the wider head row; a checkpoint keeps the head.
        let ev = learner.evaluator();
        assert!(ev.predict(&batch.positions).is_ok());
        let dir = tempfile::tempdir().expect("temp dir");
        let ckpt = dir.path().join("step-0000001");
        crate::save_checkpoint(&ckpt, &learner, &crate::CheckpointMeta::default()).expect("save");
        let (back, _) = crate::load_checkpoint(&ckpt, &device).expect("load");
        assert_eq!(back.config(), &cfg);
        // Without the head, a batch's short-horizon targets are ignored; a wrong length is an
        // error.
        let mut plain = Learner::new(
            &ModelConfig::new().with_hidden(16).with_blocks(1),
            &OptimConfig::default(),
            &device,
        );
        assert!(plain.step(&batch, 1e-3).is_ok());
        batch.short_value.pop();
        assert!(learner.step(&batch, 1e-3).is_err());
    }

    #[test]
    fn the_value_target_mixes_in_the_short_horizon_target() {
        let mut batch = fixed_batch(32);
        batch.short_value = batch.value.iter().map(|v| -v).collect();
        assert_eq!(value_targets(&batch, 0.0), batch.value);
        assert_eq!(value_targets(&batch, 1.0), batch.short_value);
        let quarter = value_targets(&batch, 0.25);
        for (t, z) in quarter.iter().zip(&batch.value) {
            assert!((t - 0.5 * z).abs() < 1e-6, "{t} for result {z}");
        }
        // No short-horizon column (broker games of old workers): the results.
        let mut plain = batch.clone();
        plain.short_value.clear();
        assert_eq!(value_targets(&plain, 0.5), plain.value);
        // A network without the short-horizon head learns the mixed target: with the short
        // target the negated result, an even mix is 0 everywhere.
        let device = Device::flex();
        let optim = OptimConfig {
            value_target_mix: 0.5,
            ..OptimConfig::default()
        };
        let cfg = ModelConfig::new().with_hidden(32).with_blocks(1);
        let mut learner = Learner::new(&cfg, &optim, &device);
        for _ in 0..300 {
            learner.step(&batch, 3e-3).expect("step");
        }
        let predicted = learner
            .evaluator()
            .predict(&batch.positions)
            .expect("predict");
        let worst = predicted
            .iter()
            .map(|p| p.value.abs())
            .fold(0.0f32, f32::max);
        assert!(worst < 0.2, "value {worst} where the mixed target is 0");
    }

    #[test]
    fn evaluator_is_a_snapshot() {
        fn assert_send<T: Send>() {}
        assert_send::<Learner>();
        let device = Device::flex();
        let cfg = ModelConfig::new().with_hidden(16).with_blocks(1);
        let mut learner = Learner::new(&cfg, &OptimConfig::default(), &device);
        let batch = fixed_batch(8);
        let ev = learner.evaluator();
        let before = ev.raw_outputs(&batch.positions).expect("read");
        for _ in 0..5 {
            learner.step(&batch, 1e-2).expect("step");
        }
        // Training moved on; the evaluator handed out earlier still holds the old weights.
        assert_eq!(ev.raw_outputs(&batch.positions).expect("read"), before);
        assert_ne!(
            learner
                .evaluator()
                .raw_outputs(&batch.positions)
                .expect("read"),
            before
        );
    }

    #[test]
    fn sgd_and_adamw_also_learn() {
        let device = Device::flex();
        let cfg = ModelConfig::new().with_hidden(32).with_blocks(1);
        let batch = fixed_batch(16);
        for (kind, lr) in [(OptimizerKind::Sgd, 0.05), (OptimizerKind::AdamW, 3e-3)] {
            let oc = OptimConfig {
                optimizer: kind,
                ..OptimConfig::default()
            };
            let mut learner = Learner::new(&cfg, &oc, &device);
            let first = learner.step(&batch, lr).expect("step");
            let mut last = first;
            for _ in 0..150 {
                last = learner.step(&batch, lr).expect("step");
            }
            assert!(
                last.total < 0.5 * first.total,
                "{kind:?}: {first:?} -> {last:?}"
            );
        }
    }

    #[test]
    fn reconfigure_takes_effect_keeps_the_state_and_refuses_another_kind() {
        let device = Device::flex();
        let cfg = ModelConfig::new().with_hidden(16).with_blocks(1);
        let batch = fixed_batch(8);
        let mut first = Learner::new(&cfg, &OptimConfig::default(), &device);
        for _ in 0..3 {
            first.step(&batch, 1e-2).expect("step");
        }
        let dir = tempfile::tempdir().expect("temp dir");
        let ck = dir.path().join("ck");
        crate::save_checkpoint(&ck, &first, &crate::CheckpointMeta::default()).expect("save");
        let load = || crate::load_checkpoint(&ck, &device).expect("load").0;
        let (mut plain, mut round_trip, mut decayed) = (load(), load(), load());
        let heavy = OptimConfig {
            weight_decay: 0.5,
            margin_weight: 2.0,
            ..OptimConfig::default()
        };
        // There and back again: the Adam moments survive, so the next step is the same.
        round_trip.reconfigure(&heavy).expect("same kind");
        round_trip
            .reconfigure(&OptimConfig::default())
            .expect("same kind");
        let a = plain.step(&batch, 1e-2).expect("step");
        let b = round_trip.step(&batch, 1e-2).expect("step");
        assert_eq!(a, b);
        let probe = &batch.positions;
        let out = |l: &Learner| l.evaluator().raw_outputs(probe).expect("read");
        assert_eq!(out(&plain), out(&round_trip));
        // New settings take effect.
        decayed.reconfigure(&heavy).expect("same kind");
        assert_eq!(decayed.optim_config(), &heavy);
        let c = decayed.step(&batch, 1e-2).expect("step");
        assert_ne!(c, a, "margin_weight changes the loss");
        assert_ne!(out(&decayed), out(&plain), "weight decay changes the step");
        // Another optimizer kind would not fit the saved state.
        let sgd = OptimConfig {
            optimizer: OptimizerKind::Sgd,
            ..OptimConfig::default()
        };
        let err = decayed.reconfigure(&sgd).expect_err("another kind");
        assert!(matches!(err, ReconfigureError::KindChanged { .. }), "{err}");
        assert_eq!(decayed.optim_config(), &heavy, "unchanged");
    }

    #[test]
    fn bad_batches_are_errors() {
        let device = Device::flex();
        let mut learner = Learner::new(
            &ModelConfig::new().with_hidden(8).with_blocks(0),
            &OptimConfig::default(),
            &device,
        );
        assert_eq!(
            learner.step(&TrainBatch::default(), 1e-3),
            Err(TrainError::EmptyBatch)
        );
        let mut b = fixed_batch(4);
        b.value.pop();
        assert!(matches!(
            learner.step(&b, 1e-3),
            Err(TrainError::LengthMismatch {
                column: "value",
                len: 3,
                positions: 4
            })
        ));
        let mut b = fixed_batch(4);
        b.margin[2] = f32::NAN;
        assert_eq!(learner.step(&b, 1e-3), Err(TrainError::NonFiniteTarget));
        let b = fixed_batch(4);
        assert!(matches!(
            learner.step(&b, f64::NAN),
            Err(TrainError::BadLearningRate(_))
        ));
        assert!(matches!(
            learner.step(&b, -1.0),
            Err(TrainError::BadLearningRate(_))
        ));
        assert_eq!(learner.steps_taken(), 0);
    }
}
