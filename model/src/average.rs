//! An exponential moving average of the trained weights (`optimizer.ema_decay`): the weights
//! that play (self-play, evaluation, checkpoints' `model.bpk`) when it is on, while the
//! optimizer keeps stepping the raw weights.
//!
//! After each step the average moves towards the new weights:
//! `avg ← k·avg + (1 − k)·w`, with `k = min(decay, (1 + u) / (10 + u))` where `u` counts the
//! updates since the average was started from the raw weights. The second term is the usual
//! warm-up: a fresh average follows the raw weights closely for its first updates instead of
//! dragging the random initial weights along for `1 / (1 − decay)` steps.

use crate::net::PolicyValueNet;
use burn::module::Module;
use burn::nn::Linear;

/// The moving average and how many updates it has taken.
#[derive(Debug, Clone)]
pub(crate) struct WeightAverage {
    /// The averaged network, without autodiff.
    net: PolicyValueNet,
    /// Updates since the average was started from the raw weights (saturating).
    updates: u64,
}

/// Updates after which the warm-up no longer lowers the decay for any decay below 0.99999
/// (`(1 + u) / (10 + u)` passes 0.99999 near 900,000): the count of an average restored
/// without one.
const WARMED_UP: u64 = 1 << 20;

impl WeightAverage {
    /// An average that starts at `net`'s current weights (moved off autodiff).
    pub(crate) fn start(net: &PolicyValueNet) -> WeightAverage {
        WeightAverage {
            net: net.valid(),
            updates: 0,
        }
    }

    /// An average restored from a checkpoint, after `updates` updates (`None`: an average
    /// whose count was not saved, taken as warmed up).
    pub(crate) fn restored(net: &PolicyValueNet, updates: Option<u64>) -> WeightAverage {
        WeightAverage {
            net: net.valid(),
            updates: updates.unwrap_or(WARMED_UP),
        }
    }

    /// Updates taken since the average started.
    pub(crate) fn updates(&self) -> u64 {
        self.updates
    }

    /// The averaged network (without autodiff).
    pub(crate) fn net(&self) -> &PolicyValueNet {
        &self.net
    }

    /// The weight `k` the average keeps at its next update.
    pub(crate) fn keep(&self, decay: f64) -> f64 {
        let u = self.updates as f64;
        decay.min((1.0 + u) / (10.0 + u))
    }

    /// Moves the average towards `net`'s weights with decay `decay` (see the module docs).
    pub(crate) fn update(&mut self, net: &PolicyValueNet, decay: f64) {
        let keep = self.keep(decay) as f32;
        let current = net.valid();
        let avg = self.net.clone();
        let blocks = avg
            .blocks
            .into_iter()
            .zip(&current.blocks)
            .map(|(mut a, c)| {
                a.linear = blend(a.linear, &c.linear, keep);
                a
            })
            .collect();
        self.net = PolicyValueNet {
            input: blend(avg.input, &current.input, keep),
            blocks,
            heads: blend(avg.heads, &current.heads, keep),
        };
        self.updates = self.updates.saturating_add(1);
    }
}

/// `keep·avg + (1 − keep)·current`, parameter by parameter (the average's parameter ids kept).
fn blend(avg: Linear, current: &Linear, keep: f32) -> Linear {
    let Linear { weight, bias } = avg;
    let weight = weight.map(|a| a * keep + current.weight.val() * (1.0 - keep));
    let bias = match (bias, &current.bias) {
        (Some(a), Some(c)) => Some(a.map(|a| a * keep + c.val() * (1.0 - keep))),
        (a, _) => a,
    };
    Linear { weight, bias }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ModelConfig;
    use burn::tensor::Device;

    fn numbers(net: &PolicyValueNet) -> Vec<f32> {
        net.dense_layers()
            .expect("layers")
            .into_iter()
            .flat_map(|l| l.weight.into_iter().chain(l.bias))
            .collect()
    }

    #[test]
    fn the_average_moves_towards_the_weights_by_the_kept_share() {
        let device = Device::default();
        let cfg = ModelConfig::new().with_hidden(8).with_blocks(2);
        let a = cfg.init(&device);
        let b = cfg.init(&device);
        let mut avg = WeightAverage::start(&a);
        assert_eq!(numbers(avg.net()), numbers(&a));
        // The first update keeps 1/10 of the start (the warm-up), whatever the decay.
        let k = avg.keep(0.999);
        assert!((k - 0.1).abs() < 1e-12);
        avg.update(&b, 0.999);
        for ((x, a), b) in numbers(avg.net()).iter().zip(numbers(&a)).zip(numbers(&b)) {
            let want = 0.1 * a + 0.9 * b;
            assert!((x - want).abs() < 1e-5, "{x} against {want}");
        }
        // A restored average keeps the full decay.
        let restored = WeightAverage::restored(&a, None);
        assert_eq!(restored.keep(0.999), 0.999);
        assert_eq!(WeightAverage::restored(&a, Some(1)).keep(0.999), 2.0 / 11.0);
        // Updating towards the same weights leaves the average where it is.
        let mut same = WeightAverage::restored(&a, None);
        same.update(&a, 0.9);
        for (x, y) in numbers(same.net()).iter().zip(numbers(&a)) {
            assert!((x - y).abs() < 1e-6);
        }
    }
}
