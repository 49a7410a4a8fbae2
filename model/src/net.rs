//! The policy-value network: a residual MLP trunk with policy, value and margin heads.

use burn::module::Module;
use burn::nn::Linear;
use burn::tensor::Tensor;
use burn::tensor::activation::{relu, softmax, tanh};

/// Outputs of the shared head layer: 6 policy logits, the value and the margin (pre-activation).
pub const HEAD_OUTPUTS: usize = 8;
/// Column of the value in the raw head output.
pub const VALUE_COLUMN: usize = 6;
/// Column of the margin in the raw head output.
pub const MARGIN_COLUMN: usize = 7;
/// Column of the short-horizon value in the raw head output, in networks with that head
/// ([`crate::ModelConfig::short_value`]).
pub(crate) const SHORT_VALUE_COLUMN: usize = 8;

/// One residual block of the trunk: `x ↦ relu(x + W·x + b)`, width preserved.
#[derive(Module, Debug)]
pub struct ResidualBlock {
    /// The block's `hidden`×`hidden` layer.
    pub linear: Linear,
}

impl ResidualBlock {
    /// `[batch, hidden]` → `[batch, hidden]`.
    pub fn forward(&self, x: Tensor<2>) -> Tensor<2> {
        let y = self.linear.forward(x.clone());
        relu(x + y)
    }
}

/// The network. Build it with [`crate::ModelConfig::init`].
///
/// The three heads share one linear layer (one matrix product instead of three): its 8 outputs
/// are the 6 policy logits (mover's houses in sowing order), the value and the margin, both
/// before their `tanh`.
#[derive(Module, Debug)]
pub struct PolicyValueNet {
    /// Input layer: `ModelConfig::input_size` → `hidden`, followed by relu.
    pub input: Linear,
    /// The residual trunk.
    pub blocks: Vec<ResidualBlock>,
    /// The shared head layer: `hidden` → [`HEAD_OUTPUTS`] (one more with the short-horizon
    /// value head).
    pub heads: Linear,
}

/// What [`PolicyValueNet::forward`] returns.
#[derive(Debug, Clone)]
pub struct NetOutput {
    /// Policy logits, `[batch, 6]`, unmasked.
    pub policy_logits: Tensor<2>,
    /// Value for the side to move, `tanh`, in [-1, 1], `[batch, 1]`.
    pub value: Tensor<2>,
    /// Predicted final seed margin (mover's final total − opponent's) / 48, `tanh`, in [-1, 1],
    /// `[batch, 1]`. An auxiliary target that gives the trunk a denser signal than win/loss.
    pub margin: Tensor<2>,
    /// The short-horizon value, `tanh`, `[batch, 1]`, in networks with that head.
    pub short_value: Option<Tensor<2>>,
}

impl PolicyValueNet {
    /// The raw head outputs: input `[batch, input_size]` → `[batch, HEAD_OUTPUTS]`: columns 0..6
    /// are the policy logits, [`VALUE_COLUMN`] and [`MARGIN_COLUMN`] the value and margin before
    /// `tanh`.
    pub fn forward_raw(&self, input: Tensor<2>) -> Tensor<2> {
        let mut x = relu(self.input.forward(input));
        for block in &self.blocks {
            x = block.forward(x);
        }
        self.heads.forward(x)
    }

    /// The full forward pass: input `[batch, input_size]` (see [`crate::encode`]) → policy
    /// logits `[batch, 6]`, value `[batch, 1]` and margin `[batch, 1]` (see [`NetOutput`]).
    pub fn forward(&self, input: Tensor<2>) -> NetOutput {
        let raw = self.forward_raw(input);
        let [batch, _] = raw.dims();
        let policy_logits = raw.clone().slice([0..batch, 0..6]);
        let value = tanh(
            raw.clone()
                .slice([0..batch, VALUE_COLUMN..VALUE_COLUMN + 1]),
        );
        let margin = tanh(
            raw.clone()
                .slice([0..batch, MARGIN_COLUMN..MARGIN_COLUMN + 1]),
        );
        let [_, width] = raw.dims();
        let short_value = (width > SHORT_VALUE_COLUMN)
            .then(|| tanh(raw.slice([0..batch, SHORT_VALUE_COLUMN..SHORT_VALUE_COLUMN + 1])));
        NetOutput {
            policy_logits,
            value,
            margin,
            short_value,
        }
    }

    /// Policy probabilities with illegal moves masked: logits `[batch, 6]` plus the additive
    /// mask `[batch, 6]` of [`crate::encode::mask_batch`] → softmax over the last dimension,
    /// `[batch, 6]`, 0 on illegal moves, summing to 1 over the legal ones.
    pub fn masked_policy(logits: Tensor<2>, mask: Tensor<2>) -> Tensor<2> {
        softmax(logits + mask, 1)
    }

    /// The weights as plain row-major matrices, layer by layer in forward order (input layer,
    /// blocks, heads). For a plain-Rust reference forward pass and for inspection. An error
    /// when the backend cannot hand the numbers out.
    pub fn dense_layers(&self) -> Result<Vec<DenseLayer>, String> {
        let mut layers = vec![DenseLayer::from_linear(&self.input)?];
        for b in &self.blocks {
            layers.push(DenseLayer::from_linear(&b.linear)?);
        }
        layers.push(DenseLayer::from_linear(&self.heads)?);
        Ok(layers)
    }

    /// Whether every weight and bias is a finite number (a diverged network holds NaN or
    /// infinities). An error when the backend cannot hand the numbers out.
    pub fn all_finite(&self) -> Result<bool, String> {
        Ok(self
            .dense_layers()?
            .iter()
            .all(|l| l.weight.iter().chain(&l.bias).all(|x| x.is_finite())))
    }
}

/// One linear layer as plain numbers: `y = x·W + b` with `W` row-major `[d_in, d_out]`.
#[derive(Debug, Clone, PartialEq)]
pub struct DenseLayer {
    /// Input width.
    pub d_in: usize,
    /// Output width.
    pub d_out: usize,
    /// Row-major `[d_in, d_out]`.
    pub weight: Vec<f32>,
    /// `[d_out]` (zeros when the layer has no bias).
    pub bias: Vec<f32>,
}

impl DenseLayer {
    fn from_linear(linear: &Linear) -> Result<DenseLayer, String> {
        let w = linear.weight.val();
        let [d_in, d_out] = w.dims();
        let weight = tensor_to_vec(w)?;
        let bias = match &linear.bias {
            Some(b) => tensor_to_vec(b.val())?,
            None => vec![0.0; d_out],
        };
        if weight.len() != d_in * d_out || bias.len() != d_out {
            return Err(format!(
                "a {d_in}x{d_out} layer came back with {} weights and {} biases",
                weight.len(),
                bias.len()
            ));
        }
        Ok(DenseLayer {
            d_in,
            d_out,
            weight,
            bias,
        })
    }
}

/// The tensor's values as `f32` (converting from another float type if needed). An error (in
/// words) when the backend's storage cannot be read, never an empty vector.
pub(crate) fn tensor_to_vec<const D: usize>(t: Tensor<D>) -> Result<Vec<f32>, String> {
    let data = t.into_data().convert::<f32>();
    data.try_to_vec::<f32>()
        .map_err(|e| format!("reading a tensor back from the device: {e}"))
}

/// A plain-Rust forward pass of the same network over row-major inputs `[batch, input_size]`;
/// returns the raw head outputs `[batch, HEAD_OUTPUTS]` (as [`PolicyValueNet::forward_raw`]).
/// Naive loops: a reference for tests, not a fast path.
pub fn reference_forward(layers: &[DenseLayer], input: &[f32], batch: usize) -> Vec<f32> {
    let mut x = input.to_vec();
    let last = layers.len().saturating_sub(1);
    for (li, layer) in layers.iter().enumerate() {
        let mut y = vec![0.0f32; batch * layer.d_out];
        for r in 0..batch {
            let xr = &x[r * layer.d_in..(r + 1) * layer.d_in];
            let yr = &mut y[r * layer.d_out..(r + 1) * layer.d_out];
            yr.copy_from_slice(&layer.bias);
            for (k, &xv) in xr.iter().enumerate() {
                if xv != 0.0 {
                    let wrow = &layer.weight[k * layer.d_out..(k + 1) * layer.d_out];
                    for (o, &w) in yr.iter_mut().zip(wrow) {
                        *o += xv * w;
                    }
                }
            }
        }
        x = if li == 0 {
            y.into_iter().map(|v| v.max(0.0)).collect()
        } else if li == last {
            y
        } else {
            // residual block: relu(x + Wx + b)
            y.iter().zip(&x).map(|(a, b)| (a + b).max(0.0)).collect()
        };
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ModelConfig;
    use crate::encode::{encode_batch, encode_vec, mask_batch};
    use burn::tensor::Device;
    use oware_engine::{Position, Side};

    fn positions() -> Vec<Position> {
        vec![
            Position::start(),
            Position::from_parts([0, 1, 2, 3, 9, 13, 0, 0, 2, 1, 0, 0], [10, 7], Side::South)
                .expect("48"),
            Position::from_parts([0, 1, 2, 3, 9, 13, 0, 0, 2, 1, 0, 0], [10, 7], Side::North)
                .expect("48"),
        ]
    }

    #[test]
    fn forward_shapes_and_ranges() {
        let device = Device::flex();
        let net = ModelConfig::new()
            .with_hidden(32)
            .with_blocks(2)
            .init(&device);
        let pos = positions();
        let out = net.forward(encode_batch(&pos, false, &device));
        assert_eq!(out.policy_logits.dims(), [3, 6]);
        assert_eq!(out.value.dims(), [3, 1]);
        assert_eq!(out.margin.dims(), [3, 1]);
        for v in tensor_to_vec(out.value)
            .expect("read")
            .into_iter()
            .chain(tensor_to_vec(out.margin).expect("read"))
        {
            assert!((-1.0..=1.0).contains(&v));
        }
    }

    #[test]
    fn masked_policy_sums_to_one_over_legal_moves() {
        let device = Device::flex();
        let net = ModelConfig::new()
            .with_hidden(16)
            .with_blocks(1)
            .init(&device);
        let pos = positions();
        let out = net.forward(encode_batch(&pos, false, &device));
        let p = tensor_to_vec(PolicyValueNet::masked_policy(
            out.policy_logits,
            mask_batch(&pos, &device),
        ))
        .expect("read");
        for (i, pos) in pos.iter().enumerate() {
            let mask = crate::encode::legal_mask(pos);
            let row = &p[i * 6..i * 6 + 6];
            let sum: f32 = row.iter().sum();
            assert!((sum - 1.0).abs() < 1e-5, "row {i} sums to {sum}");
            for (j, &legal) in mask.iter().enumerate() {
                if legal {
                    assert!(row[j] > 0.0);
                } else {
                    assert_eq!(row[j], 0.0, "illegal move {j} of row {i}");
                }
            }
        }
    }

    #[test]
    fn plain_reference_matches_burn() {
        let device = Device::flex();
        // With the move features: the wider input layer is read like the others.
        let cfg = ModelConfig {
            move_features: true,
            ..ModelConfig::new().with_hidden(24).with_blocks(2)
        };
        let net = cfg.init(&device);
        let layers = net.dense_layers().expect("read");
        assert_eq!(layers.len(), 4);
        let n_params: usize = layers.iter().map(|l| l.weight.len() + l.bias.len()).sum();
        assert_eq!(n_params, cfg.num_params());
        assert_eq!(net.num_params(), cfg.num_params());
        let pos = positions();
        let burn_raw =
            tensor_to_vec(net.forward_raw(encode_batch(&pos, cfg.move_features, &device)))
                .expect("read");
        let plain = reference_forward(&layers, &encode_vec(&pos, cfg.move_features), pos.len());
        assert_eq!(burn_raw.len(), pos.len() * HEAD_OUTPUTS);
        for (a, b) in burn_raw.iter().zip(&plain) {
            assert!((a - b).abs() < 1e-4, "{a} vs {b}");
        }
        assert_eq!(layers[0].d_in, cfg.input_size());
    }
}
