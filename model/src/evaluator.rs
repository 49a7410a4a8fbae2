//! [`NetEvaluator`]: the network as an [`Evaluator`] for search, one forward pass per batch.

use crate::config::ModelConfig;
use crate::encode::{encode_batch, legal_mask};
use crate::net::{MARGIN_COLUMN, PolicyValueNet, VALUE_COLUMN, tensor_to_vec};
use burn::module::Module;
use burn::tensor::Device;
use oware_engine::Position;
use oware_search::{EvalError, Evaluation, Evaluator};

/// Everything the network says of one position, from the mover's point of view.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Prediction {
    /// Probabilities over the mover's houses in sowing order; 0 on illegal moves, summing to 1
    /// over the legal ones (all 0 when there is no legal move).
    pub policy: [f32; 6],
    /// Expected result for the mover, in [-1, 1].
    pub value: f32,
    /// Expected final seed margin (mover − opponent) / 48, in [-1, 1].
    pub margin: f32,
}

/// An inference copy of the network's weights (no autodiff) on one device.
///
/// `Sync` and `Send`: share one `&NetEvaluator` between rayon workers; each
/// [`Evaluator::evaluate`] call runs one forward pass over its whole batch. Cloning is cheap
/// (tensor handles are shared).
#[derive(Clone, Debug)]
pub struct NetEvaluator {
    model: PolicyValueNet,
    config: ModelConfig,
    device: Device,
}

impl NetEvaluator {
    /// Wraps a network (possibly a training one): takes its non-autodiff copy
    /// (`model.valid()`) on `device` without autodiff.
    pub fn new(model: &PolicyValueNet, config: ModelConfig, device: &Device) -> NetEvaluator {
        let device = device.clone().without_autodiff();
        let model = model.valid().to_device(&device);
        NetEvaluator {
            model,
            config,
            device,
        }
    }

    /// A freshly initialised (untrained) network of shape `config` on `device`.
    pub fn random(config: &ModelConfig, device: &Device) -> NetEvaluator {
        let device = device.clone().without_autodiff();
        let model = config.init(&device);
        NetEvaluator {
            model,
            config: config.clone(),
            device,
        }
    }

    /// The network's shape.
    pub fn config(&self) -> &ModelConfig {
        &self.config
    }

    /// The device it runs on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The inference network.
    pub fn model(&self) -> &PolicyValueNet {
        &self.model
    }

    /// The raw head outputs of a batch, row-major `[positions.len(), config.head_outputs()]` (policy
    /// logits unmasked, value and margin before `tanh`).
    ///
    /// # Errors
    /// [`EvalError::Failed`] when the backend's numbers cannot be read back,
    /// [`EvalError::WrongLength`] when it returns fewer (or more) than the batch needs.
    pub fn raw_outputs(&self, positions: &[Position]) -> Result<Vec<f32>, EvalError> {
        if positions.is_empty() {
            return Ok(Vec::new());
        }
        let n = positions.len();
        let input = encode_batch(positions, self.config.move_features, &self.device);
        let raw = tensor_to_vec(self.model.forward_raw(input)).map_err(EvalError::Failed)?;
        let expected = n * self.config.head_outputs();
        if raw.len() != expected {
            return Err(EvalError::WrongLength {
                positions: n,
                expected,
                got: raw.len(),
            });
        }
        Ok(raw)
    }

    /// Policy (masked, normalised), value and margin of every position, in one forward pass.
    ///
    /// # Errors
    /// As [`NetEvaluator::raw_outputs`], and [`EvalError::NonFinite`] when the network outputs
    /// a NaN or an infinity for a position (a diverged network): never a made-up answer.
    pub fn predict(&self, positions: &[Position]) -> Result<Vec<Prediction>, EvalError> {
        let raw = self.raw_outputs(positions)?;
        positions
            .iter()
            .zip(raw.chunks_exact(self.config.head_outputs()))
            .enumerate()
            .map(|(i, (pos, row))| prediction_from_row(i, pos, row))
            .collect()
    }
}

/// Masked softmax of the six logits, `tanh` of value and margin, for position `index` of a
/// batch. Every output must be finite: the illegal moves' logits too, since a NaN anywhere
/// means the network is broken.
pub(crate) fn prediction_from_row(
    index: usize,
    pos: &Position,
    row: &[f32],
) -> Result<Prediction, EvalError> {
    let non_finite = |what| EvalError::NonFinite { index, what };
    if !row[..6].iter().all(|x| x.is_finite()) {
        return Err(non_finite("policy"));
    }
    if !row[VALUE_COLUMN].is_finite() {
        return Err(non_finite("value"));
    }
    if !row[MARGIN_COLUMN].is_finite() {
        return Err(non_finite("margin"));
    }
    let mask = legal_mask(pos);
    let mut policy = [0.0f32; 6];
    let max = (0..6)
        .filter(|&j| mask[j])
        .map(|j| row[j])
        .fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0f32;
    for j in 0..6 {
        if mask[j] {
            let e = (row[j] - max).exp();
            policy[j] = e;
            sum += e;
        }
    }
    // With finite logits the largest legal term is exp(0) = 1, so `sum` is in [1, 6]; it is 0
    // only without a legal move (all-zero policy, as documented on `Prediction`).
    if sum > 0.0 {
        for p in &mut policy {
            *p /= sum;
        }
    }
    Ok(Prediction {
        policy,
        value: row[VALUE_COLUMN].tanh(),
        margin: row[MARGIN_COLUMN].tanh(),
    })
}

impl Evaluator for NetEvaluator {
    fn evaluate(&self, positions: &[Position], out: &mut [Evaluation]) -> Result<(), EvalError> {
        let raw = self.raw_outputs(positions)?;
        for (i, ((pos, row), e)) in positions
            .iter()
            .zip(raw.chunks_exact(self.config.head_outputs()))
            .zip(out.iter_mut())
            .enumerate()
        {
            let p = prediction_from_row(i, pos, row)?;
            *e = Evaluation {
                policy: p.policy,
                value: p.value,
            };
        }
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::encode::mask_batch;
    use crate::net::HEAD_OUTPUTS;
    use burn::tensor::Tensor;
    use oware_engine::Side;

    pub(crate) fn some_positions() -> Vec<Position> {
        let mut out = vec![Position::start()];
        let mut pos = Position::start();
        // A deterministic walk: always the last legal move.
        for _ in 0..40 {
            let moves = pos.legal_moves();
            let Some(m) = moves.iter().last() else { break };
            let (next, _) = pos.play(m).expect("legal");
            pos = next;
            if !pos.legal_moves().is_empty() {
                out.push(pos);
            }
        }
        out.push(
            Position::from_parts([1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0], [22, 23], Side::South)
                .expect("48"),
        );
        out
    }

    #[test]
    fn policy_is_masked_and_normalised_value_in_range() {
        let device = Device::flex();
        let ev = NetEvaluator::random(&ModelConfig::new().with_hidden(32), &device);
        let pos = some_positions();
        let mut out = vec![
            Evaluation {
                policy: [0.0; 6],
                value: 9.0
            };
            pos.len()
        ];
        ev.evaluate(&pos, &mut out).expect("finite network");
        for (p, e) in pos.iter().zip(&out) {
            let mask = legal_mask(p);
            let sum: f32 = e.policy.iter().sum();
            assert!((sum - 1.0).abs() < 1e-5);
            for (j, (&legal, &p)) in mask.iter().zip(&e.policy).enumerate() {
                assert_eq!(legal, p > 0.0, "move {j}");
            }
            assert!((-1.0..=1.0).contains(&e.value));
        }
        // The last position has a single legal move.
        let last = out.last().expect("non-empty");
        assert_eq!(last.policy, [0.0, 0.0, 0.0, 0.0, 0.0, 1.0]);
    }

    #[test]
    fn host_softmax_matches_tensor_softmax() {
        let device = Device::flex();
        let ev = NetEvaluator::random(&ModelConfig::new().with_hidden(16), &device);
        let pos = some_positions();
        let preds = ev.predict(&pos).expect("finite network");
        let out = ev.model().forward(encode_batch(&pos, false, &device));
        let p = tensor_to_vec(PolicyValueNet::masked_policy(
            out.policy_logits,
            mask_batch(&pos, &device),
        ))
        .expect("read");
        let v = tensor_to_vec(out.value).expect("read");
        let m = tensor_to_vec(out.margin).expect("read");
        for (i, pr) in preds.iter().enumerate() {
            for j in 0..6 {
                assert!((pr.policy[j] - p[i * 6 + j]).abs() < 1e-5);
            }
            assert!((pr.value - v[i]).abs() < 1e-5);
            assert!((pr.margin - m[i]).abs() < 1e-5);
        }
    }

    #[test]
    fn shared_between_two_threads() {
        fn assert_sync_send<T: Sync + Send>() {}
        assert_sync_send::<NetEvaluator>();
        let device = Device::flex();
        let ev = NetEvaluator::random(&ModelConfig::new().with_hidden(32), &device);
        let pos = some_positions();
        let expected = ev.predict(&pos).expect("finite network");
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..2)
                .map(|t| {
                    let ev = &ev;
                    let pos = &pos;
                    s.spawn(move || {
                        let mut results = Vec::new();
                        for round in 0..20 {
                            // Different batch sizes per thread and round.
                            let k = 1 + (round * 7 + t * 3) % pos.len();
                            let mut out = vec![
                                Evaluation {
                                    policy: [0.0; 6],
                                    value: 0.0
                                };
                                k
                            ];
                            ev.evaluate(&pos[..k], &mut out).expect("finite network");
                            results.push(out);
                        }
                        results
                    })
                })
                .collect();
            for h in handles {
                let results = h.join().expect("worker thread");
                for out in results {
                    for (i, e) in out.iter().enumerate() {
                        for j in 0..6 {
                            assert!((e.policy[j] - expected[i].policy[j]).abs() < 1e-5);
                        }
                        assert!((e.value - expected[i].value).abs() < 1e-5);
                    }
                }
            }
        });
    }

    #[test]
    fn empty_batch() {
        let ev = NetEvaluator::random(&ModelConfig::new().with_hidden(8), &Device::flex());
        let mut out: Vec<Evaluation> = Vec::new();
        ev.evaluate(&[], &mut out).expect("nothing to evaluate");
        assert!(ev.predict(&[]).expect("nothing to predict").is_empty());
    }

    /// A network whose input-layer weights (or, with `head_bias`, head biases) all hold
    /// `value`, set through burn.
    pub(crate) fn poisoned(config: &ModelConfig, value: f32, head_bias: bool) -> PolicyValueNet {
        use burn::module::Param;
        let device = Device::flex();
        let mut net = config.init(&device);
        if head_bias {
            net.heads.bias = Some(Param::from_tensor(Tensor::<1>::full(
                [HEAD_OUTPUTS],
                value,
                &device,
            )));
        } else {
            net.input.weight = Param::from_tensor(Tensor::<2>::full(
                [config.input_size(), config.hidden],
                value,
                &device,
            ));
        }
        net
    }

    #[test]
    fn a_nan_or_infinite_network_is_an_error_not_a_uniform_guess() {
        let config = ModelConfig::new().with_hidden(16).with_blocks(1);
        let pos = some_positions();
        for (value, bias_only) in [(f32::NAN, false), (f32::INFINITY, true), (f32::NAN, true)] {
            let net = poisoned(&config, value, bias_only);
            assert!(!net.all_finite().expect("read"), "{value} is not finite");
            let ev = NetEvaluator::new(&net, config.clone(), &Device::flex());
            let mut out = vec![
                Evaluation {
                    policy: [0.0; 6],
                    value: 0.0
                };
                pos.len()
            ];
            let err = ev.evaluate(&pos, &mut out).expect_err("not finite");
            assert!(
                matches!(err, EvalError::NonFinite { index: 0, .. }),
                "{value}: {err}"
            );
            assert!(err.to_string().contains("not a finite number"), "{err}");
            assert!(ev.predict(&pos).is_err());
        }
        // Finite but absurd weights overflow to infinity inside the network (every position
        // has inputs summing to more than 1): also an error.
        let huge = poisoned(&config, 3e38, false);
        assert!(huge.all_finite().expect("read"));
        let ev = NetEvaluator::new(&huge, config, &Device::flex());
        assert!(matches!(ev.predict(&pos), Err(EvalError::NonFinite { .. })));
    }
}
