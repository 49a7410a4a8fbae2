//! The network's throughput on a device (`oware bench`): evaluations/s of the inference
//! service (several callers' batches merged into one forward pass) and of the direct path at
//! chosen batch sizes, and learner steps/s at the config's learner batch. The figures of the
//! GPU check script (`scripts/gpu-check.sh`).

use crate::TrainConfig;
use oware_engine::Position;
use oware_model::{
    Device, DeviceKind, InferenceService, Learner, NetEvaluator, ServiceConfig, TrainBatch,
    legal_mask,
};
use oware_search::{Evaluation, Evaluator};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// What to measure.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchPlan {
    /// Merged batch sizes to measure.
    pub batches: Vec<usize>,
    /// Callers submitting to the service at once; each submits batch/callers positions.
    pub callers: usize,
    /// Seconds of measurement per batch size and path (after a warm-up).
    pub seconds: f64,
    /// Seconds of learner steps (0 skips the learner).
    pub learner_seconds: f64,
}

/// `n` varied live positions from seeded random games.
fn positions(n: usize, rng: &mut SmallRng) -> Vec<Position> {
    let mut out = Vec::with_capacity(n);
    let mut pos = Position::start();
    while out.len() < n {
        let moves = pos.legal_moves();
        let Some(&m) = moves
            .as_slice()
            .get(rng.random_range(0..moves.len().max(1)))
        else {
            pos = Position::start();
            continue;
        };
        out.push(pos);
        pos = match pos.play(m) {
            Ok((next, _)) => next,
            Err(_) => Position::start(),
        };
    }
    out
}

/// Calls `f` until `seconds` have passed (at least once); returns (calls, elapsed seconds).
fn timed(seconds: f64, mut f: impl FnMut() -> anyhow::Result<()>) -> anyhow::Result<(u64, f64)> {
    let started = Instant::now();
    let limit = Duration::from_secs_f64(seconds);
    let mut calls = 0u64;
    loop {
        f()?;
        calls += 1;
        if started.elapsed() >= limit {
            return Ok((calls, started.elapsed().as_secs_f64()));
        }
    }
}

/// Evaluations/s of the service with `callers` threads each submitting `batch / callers`
/// positions (so the merged batch is `batch`).
fn bench_service(
    ev: &NetEvaluator,
    batch: usize,
    callers: usize,
    seconds: f64,
    rng: &mut SmallRng,
) -> anyhow::Result<Value> {
    let callers = callers.min(batch).max(1);
    let per_caller = batch / callers;
    let batch = per_caller * callers;
    let service = InferenceService::start(
        ev.clone(),
        ServiceConfig {
            max_batch: batch,
            max_wait: Duration::from_millis(50),
            clients: callers,
        },
    )?;
    let inputs: Vec<Vec<Position>> = (0..callers).map(|_| positions(per_caller, rng)).collect();
    let results: Vec<anyhow::Result<(u64, f64)>> = std::thread::scope(|s| {
        let handles: Vec<_> = inputs
            .iter()
            .map(|input| {
                let client = service.client();
                s.spawn(move || {
                    let mut out = vec![
                        Evaluation {
                            policy: [0.0; 6],
                            value: 0.0
                        };
                        input.len()
                    ];
                    // Warm-up: the first calls at a shape compile the GPU kernels.
                    for _ in 0..3 {
                        client.evaluate(input, &mut out)?;
                    }
                    timed(seconds, || Ok(client.evaluate(input, &mut out)?))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("a caller thread panicked")))
            })
            .collect()
    });
    let mut positions_done = 0u64;
    let mut secs = 0.0f64;
    for r in results {
        let (calls, elapsed) = r?;
        positions_done += calls * per_caller as u64;
        secs = secs.max(elapsed);
    }
    let stats = service.stats();
    Ok(json!({
        "batch": batch,
        "callers": callers,
        "evals_per_sec": positions_done as f64 / secs.max(1e-9),
        "mean_network_batch": stats.mean_batch(),
        "seconds": secs,
    }))
}

/// Evaluations/s of one thread calling the network directly at `batch`.
fn bench_direct(
    ev: &NetEvaluator,
    batch: usize,
    seconds: f64,
    rng: &mut SmallRng,
) -> anyhow::Result<Value> {
    let input = positions(batch, rng);
    let mut out = vec![
        Evaluation {
            policy: [0.0; 6],
            value: 0.0
        };
        batch
    ];
    for _ in 0..3 {
        ev.evaluate(&input, &mut out)?;
    }
    let (calls, secs) = timed(seconds, || Ok(ev.evaluate(&input, &mut out)?))?;
    Ok(json!({
        "batch": batch,
        "evals_per_sec": (calls * batch as u64) as f64 / secs.max(1e-9),
        "seconds": secs,
    }))
}

/// Learner steps/s at the config's batch size on `device`.
fn bench_learner(
    config: &TrainConfig,
    device: &Device,
    seconds: f64,
    rng: &mut SmallRng,
) -> anyhow::Result<Value> {
    let n = config.schedule.batch_size;
    let pos = positions(n, rng);
    let batch = TrainBatch {
        policy: pos
            .iter()
            .map(|p| {
                let mask = legal_mask(p);
                let legal = mask.iter().filter(|&&l| l).count().max(1) as f32;
                mask.map(|l| if l { 1.0 / legal } else { 0.0 })
            })
            .collect(),
        value: (0..n).map(|_| rng.random_range(-1.0..=1.0)).collect(),
        margin: (0..n).map(|_| rng.random_range(-0.5..=0.5)).collect(),
        short_value: if config.model.short_value {
            (0..n).map(|_| rng.random_range(-1.0..=1.0)).collect()
        } else {
            Vec::new()
        },
        positions: pos,
    };
    let mut learner = Learner::new(&config.model, &config.optimizer, device);
    let lr = config.schedule.lr * 0.1;
    for _ in 0..2 {
        learner.step(&batch, lr)?;
    }
    let (steps, secs) = timed(seconds, || {
        learner.step(&batch, lr)?;
        Ok(())
    })?;
    let rate = steps as f64 / secs.max(1e-9);
    Ok(json!({
        "batch_size": n,
        "steps": steps,
        "steps_per_sec": rate,
        "samples_per_sec": rate * n as f64,
        "seconds": secs,
    }))
}

/// Measures `plan` with the network of `config` (random weights) on `kind`; `say` hears a
/// line per figure as it is measured. The result is `oware bench --json`'s object.
pub fn run_bench(
    config: &TrainConfig,
    kind: DeviceKind,
    plan: &BenchPlan,
    say: &dyn Fn(String),
) -> anyhow::Result<Value> {
    let description = oware_model::describe(kind)?;
    let device = oware_model::device(kind)?;
    say(format!("device: {description}"));
    say(format!(
        "network: hidden {} x {} blocks, {} parameters",
        config.model.hidden,
        config.model.blocks,
        config.model.num_params()
    ));
    let mut rng = SmallRng::seed_from_u64(config.schedule.seed);
    let ev = NetEvaluator::random(&config.model, &device);
    let mut service = Vec::new();
    let mut direct = Vec::new();
    for &b in &plan.batches {
        let s = bench_service(&ev, b, plan.callers, plan.seconds, &mut rng)?;
        let d = bench_direct(&ev, b, plan.seconds, &mut rng)?;
        say(format!(
            "batch {:>6}: service {:>10.0} evaluations/s ({} callers, mean network batch {:.0}); direct {:>10.0} evaluations/s",
            s["batch"].as_u64().unwrap_or(0),
            s["evals_per_sec"].as_f64().unwrap_or(0.0),
            s["callers"].as_u64().unwrap_or(0),
            s["mean_network_batch"].as_f64().unwrap_or(0.0),
            d["evals_per_sec"].as_f64().unwrap_or(0.0)
        ));
        service.push(s);
        direct.push(d);
    }
    let learner = if plan.learner_seconds > 0.0 {
        let l = bench_learner(config, &device, plan.learner_seconds, &mut rng)?;
        say(format!(
            "learner: {:.2} steps/s at batch {} ({:.0} samples/s)",
            l["steps_per_sec"].as_f64().unwrap_or(0.0),
            l["batch_size"].as_u64().unwrap_or(0),
            l["samples_per_sec"].as_f64().unwrap_or(0.0)
        ));
        l
    } else {
        Value::Null
    };
    Ok(json!({
        "device": kind.name(),
        "description": description,
        "model": {
            "hidden": config.model.hidden,
            "blocks": config.model.blocks,
            "move_features": config.model.move_features,
            "params": config.model.num_params(),
        },
        "service": service,
        "direct": direct,
        "learner": learner,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_bench_reports_every_figure() {
        let config = TrainConfig::load(
            None,
            &[
                "model.hidden=16".into(),
                "model.blocks=1".into(),
                "schedule.batch_size=8".into(),
            ],
        )
        .expect("valid");
        let plan = BenchPlan {
            batches: vec![4, 16],
            callers: 2,
            seconds: 0.02,
            learner_seconds: 0.02,
        };
        let lines = std::sync::Mutex::new(Vec::new());
        let out = run_bench(&config, DeviceKind::Cpu, &plan, &|l| {
            lines.lock().expect("not poisoned").push(l)
        })
        .expect("runs");
        assert_eq!(out["service"].as_array().map(Vec::len), Some(2));
        assert_eq!(out["direct"].as_array().map(Vec::len), Some(2));
        for (s, d) in out["service"]
            .as_array()
            .into_iter()
            .flatten()
            .zip(out["direct"].as_array().into_iter().flatten())
        {
            assert!(s["evals_per_sec"].as_f64().is_some_and(|r| r > 0.0), "{s}");
            assert!(d["evals_per_sec"].as_f64().is_some_and(|r| r > 0.0), "{d}");
        }
        assert!(
            out["learner"]["steps_per_sec"]
                .as_f64()
                .is_some_and(|r| r > 0.0)
        );
        assert_eq!(out["model"]["hidden"], 16);
        assert!(lines.lock().expect("not poisoned").len() >= 4);
    }
}
