//! Evaluation throughput of [`NetEvaluator`] on the CPU (`flex`) at batch 1, 64, 256 and 1024,
//! beside a plain-Rust yardstick: the same network (same weights) computed with `ndarray`'s
//! matrix product (the `matrixmultiply` sgemm kernels), with the same encoding and masked softmax
//! around it. Throughput is reported in positions per second.
//!
//! Run: `cargo bench -p oware-model --bench eval` (add `-- --quick` for a short run).

// `criterion_group!` generates an undocumented public function.
#![allow(missing_docs)]

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use ndarray::{Array1, Array2, ArrayView2};
use oware_engine::Position;
use oware_model::encode::{INPUT_SIZE, encode_vec, input_size, legal_mask};
use oware_model::{DenseLayer, Device, ModelConfig, NetEvaluator};
use oware_search::{Evaluation, Evaluator};
use std::hint::black_box;
use std::time::Duration;

/// glibc malloc page-faults heavily on flex's large short-lived buffers; mimalloc avoids it.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const BATCHES: [usize; 4] = [1, 64, 256, 1024];

/// A pool of varied live positions from deterministic pseudo-random games.
fn positions(n: usize) -> Vec<Position> {
    let mut out = Vec::with_capacity(n);
    let mut pos = Position::start();
    let mut seed: u64 = 0x2545_F491_4F6C_DD1D;
    while out.len() < n {
        let moves = pos.legal_moves();
        if moves.is_empty() {
            pos = Position::start();
            continue;
        }
        out.push(pos);
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let m = moves.as_slice()[(seed % moves.len() as u64) as usize];
        pos = pos
            .play(m)
            .map(|(p, _)| p)
            .unwrap_or_else(|_| Position::start());
    }
    out
}

/// The yardstick: the same MLP as plain matrices.
struct PlainNet {
    layers: Vec<(Array2<f32>, Array1<f32>)>,
}

impl PlainNet {
    fn new(layers: &[DenseLayer]) -> PlainNet {
        let layers = layers
            .iter()
            .map(|l| {
                let w = Array2::from_shape_vec((l.d_in, l.d_out), l.weight.clone())
                    .expect("weight shape");
                (w, Array1::from_vec(l.bias.clone()))
            })
            .collect();
        PlainNet { layers }
    }

    fn evaluate(&self, positions: &[Position], out: &mut [Evaluation]) {
        let n = positions.len();
        // The first layer's width says whether the network reads the move features.
        let move_features = self.layers[0].0.nrows() != INPUT_SIZE;
        let input = encode_vec(positions, move_features);
        let x0 =
            ArrayView2::from_shape((n, input_size(move_features)), &input).expect("input shape");
        let last = self.layers.len() - 1;
        let mut x: Array2<f32> = Array2::zeros((0, 0));
        for (i, (w, b)) in self.layers.iter().enumerate() {
            let mut y = if i == 0 { x0.dot(w) } else { x.dot(w) };
            y += b;
            if i == 0 {
                y.mapv_inplace(|v| v.max(0.0));
            } else if i < last {
                y += &x;
                y.mapv_inplace(|v| v.max(0.0));
            }
            x = y;
        }
        for (r, (pos, e)) in positions.iter().zip(out.iter_mut()).enumerate() {
            let row = x.row(r);
            let mask = legal_mask(pos);
            let max = (0..6)
                .filter(|&j| mask[j])
                .map(|j| row[j])
                .fold(f32::NEG_INFINITY, f32::max);
            let mut policy = [0.0f32; 6];
            let mut sum = 0.0;
            for j in 0..6 {
                if mask[j] {
                    policy[j] = (row[j] - max).exp();
                    sum += policy[j];
                }
            }
            for p in &mut policy {
                *p /= sum;
            }
            *e = Evaluation {
                policy,
                value: row[6].tanh(),
            };
        }
    }
}

fn bench_eval(c: &mut Criterion) {
    let config = ModelConfig::new();
    let net = NetEvaluator::random(&config, &Device::flex());
    let plain = PlainNet::new(&net.model().dense_layers().expect("weights"));
    let pool = positions(1024);
    let blank = Evaluation {
        policy: [0.0; 6],
        value: 0.0,
    };

    // Both paths compute the same numbers.
    let mut a = vec![blank; 64];
    let mut b = vec![blank; 64];
    net.evaluate(&pool[..64], &mut a).expect("finite");
    plain.evaluate(&pool[..64], &mut b);
    for (x, y) in a.iter().zip(&b) {
        assert!(
            (x.value - y.value).abs() < 1e-3,
            "{} vs {}",
            x.value,
            y.value
        );
        for j in 0..6 {
            assert!((x.policy[j] - y.policy[j]).abs() < 1e-3);
        }
    }

    let mut group = c.benchmark_group(format!(
        "eval_{}x{}_{}params",
        config.hidden,
        config.blocks,
        config.num_params()
    ));
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(3));
    group.sample_size(20);
    for &n in &BATCHES {
        let batch = &pool[..n];
        let mut out = vec![blank; n];
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::new("burn_flex", n), &n, |bch, _| {
            bch.iter(|| {
                net.evaluate(black_box(batch), &mut out).expect("finite");
                black_box(&out);
            })
        });
        group.bench_with_input(BenchmarkId::new("plain_sgemm", n), &n, |bch, _| {
            bch.iter(|| {
                plain.evaluate(black_box(batch), &mut out);
                black_box(&out);
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_eval);
criterion_main!(benches);
