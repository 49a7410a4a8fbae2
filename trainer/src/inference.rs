//! The self-play network, in either of its two forms (`selfplay.inference`): every worker
//! evaluating its own batches with a shared copy of the weights, or one
//! [`InferenceService`] thread merging all workers' batches into one forward pass (the form
//! that keeps a GPU busy). Both swap in new weights without stopping the workers.

use crate::config::{InferenceMode, TrainConfig};
use crate::selfplay::{GameRecord, SelfplayStats, SharedWeights, WorkerControl, WorkerFailure};
use anyhow::Context;
use oware_model::{
    DeviceKind, InferenceService, NetEvaluator, ServiceClient, ServiceConfig, ServiceStats,
};
use std::sync::mpsc::Receiver;
use std::time::Duration;

/// The network self-play evaluates with.
pub enum SelfplayNet {
    /// Each worker evaluates its own batches (on its own thread) with these weights.
    PerWorker(SharedWeights<NetEvaluator>),
    /// The workers submit their batches to one inference thread.
    Service {
        /// The service thread (owns the network).
        service: InferenceService,
        /// The client all workers share (a constant: weights change inside the service).
        client: SharedWeights<ServiceClient>,
    },
}

impl SelfplayNet {
    /// The form `config.selfplay.inference` asks for on `device`, starting with `evaluator`.
    ///
    /// # Errors
    /// When the service thread cannot be started.
    pub fn start(
        config: &TrainConfig,
        device: DeviceKind,
        evaluator: NetEvaluator,
    ) -> anyhow::Result<SelfplayNet> {
        let sp = &config.selfplay;
        Ok(match sp.inference.resolve(device) {
            InferenceMode::Service => {
                let service = InferenceService::start(
                    evaluator,
                    ServiceConfig {
                        max_batch: sp.inference_max_batch,
                        max_wait: Duration::from_micros(sp.inference_wait_us),
                        clients: sp.worker_count(),
                    },
                )
                .context("starting the inference service thread")?;
                let client = SharedWeights::new(service.client());
                SelfplayNet::Service { service, client }
            }
            InferenceMode::PerWorker | InferenceMode::Auto => {
                SelfplayNet::PerWorker(SharedWeights::new(evaluator))
            }
        })
    }

    /// `per_worker` or `service`.
    pub fn mode(&self) -> InferenceMode {
        match self {
            SelfplayNet::PerWorker(_) => InferenceMode::PerWorker,
            SelfplayNet::Service { .. } => InferenceMode::Service,
        }
    }

    /// The service's counters (merged batch sizes), when it is the service.
    pub fn service_stats(&self) -> Option<&ServiceStats> {
        match self {
            SelfplayNet::PerWorker(_) => None,
            SelfplayNet::Service { service, .. } => Some(service.stats()),
        }
    }

    /// Hands new weights to self-play: the workers' next search passes (per worker) or the
    /// service's next batch use them.
    pub fn publish(&self, evaluator: NetEvaluator) {
        match self {
            SelfplayNet::PerWorker(weights) => weights.set(evaluator),
            SelfplayNet::Service { service, .. } => {
                service.set_weights(evaluator);
            }
        }
    }

    /// [`crate::selfplay::with_workers`] with this network.
    ///
    /// # Errors
    /// As [`crate::selfplay::with_workers`].
    pub fn with_workers<T>(
        &self,
        config: &TrainConfig,
        stats: &SelfplayStats,
        control: &WorkerControl<'_>,
        seed: u64,
        main: impl FnOnce(&Receiver<GameRecord>, &WorkerFailure) -> T,
    ) -> anyhow::Result<(T, Option<anyhow::Error>)> {
        match self {
            SelfplayNet::PerWorker(weights) => {
                crate::selfplay::with_workers(config, weights, stats, control, seed, main)
            }
            SelfplayNet::Service { client, .. } => {
                crate::selfplay::with_workers(config, client, stats, control, seed, main)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oware_model::{Device, ModelConfig};
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

    fn tiny() -> TrainConfig {
        TrainConfig::from_toml_str(include_str!("../../configs/tiny.toml"), &[])
            .expect("tiny config")
    }

    #[test]
    fn auto_is_per_worker_on_the_cpu_and_the_service_on_a_gpu() {
        assert_eq!(
            InferenceMode::Auto.resolve(DeviceKind::Cpu),
            InferenceMode::PerWorker
        );
        for gpu in [DeviceKind::Wgpu, DeviceKind::Cuda] {
            assert_eq!(InferenceMode::Auto.resolve(gpu), InferenceMode::Service);
            assert_eq!(
                InferenceMode::PerWorker.resolve(gpu),
                InferenceMode::PerWorker
            );
        }
        assert_eq!(
            InferenceMode::Service.resolve(DeviceKind::Cpu),
            InferenceMode::Service
        );
        let config = tiny();
        let ev = NetEvaluator::random(&config.model, &Device::flex());
        let net = SelfplayNet::start(&config, DeviceKind::Cpu, ev).expect("starts");
        assert_eq!(net.mode(), InferenceMode::PerWorker);
        assert!(net.service_stats().is_none());
    }

    #[test]
    fn the_inference_keys_are_checked() {
        let c =
            TrainConfig::from_toml_str("", &["selfplay.inference=service".into()]).expect("a mode");
        assert_eq!(c.selfplay.inference, InferenceMode::Service);
        let c = TrainConfig::from_toml_str("[selfplay]\ninference = \"per_worker\"\n", &[])
            .expect("a mode");
        assert_eq!(c.selfplay.inference, InferenceMode::PerWorker);
        for (set, key) in [
            // serde names the valid spellings.
            ("selfplay.inference=gpu", "per_worker"),
            (
                "selfplay.inference_max_batch=0",
                "selfplay.inference_max_batch",
            ),
            (
                "selfplay.inference_wait_us=2000000",
                "selfplay.inference_wait_us",
            ),
        ] {
            let err = TrainConfig::from_toml_str("", &[set.into()]).expect_err(set);
            assert!(format!("{err:#}").contains(key), "{set}: {err:#}");
        }
        // The defaults are the service's own.
        let sp = TrainConfig::default().selfplay;
        let service = ServiceConfig::default();
        assert_eq!(sp.inference_max_batch, service.max_batch);
        assert_eq!(
            Duration::from_micros(sp.inference_wait_us),
            service.max_wait
        );
    }

    /// Self-play through the service plays its games, merges the workers' batches, and takes
    /// new weights while the workers run.
    #[test]
    fn selfplay_through_the_service_plays_games_and_swaps_weights() {
        let mut config = tiny();
        config.selfplay.workers = 2;
        // 2 x 4 slots for 8 games: both workers get games from the start.
        config.selfplay.games_per_worker = 4;
        config.selfplay.inference = InferenceMode::Service;
        let model = ModelConfig::new().with_hidden(16).with_blocks(1);
        config.model = model.clone();
        let ev = NetEvaluator::random(&model, &Device::flex());
        let net = SelfplayNet::start(&config, DeviceKind::Cpu, ev).expect("starts");
        assert_eq!(net.mode(), InferenceMode::Service);
        let stats = SelfplayStats::default();
        let (stop, pause) = (AtomicBool::new(false), AtomicBool::new(false));
        let left = AtomicU64::new(8);
        let control = WorkerControl {
            stop: &stop,
            pause: &pause,
            games_left: Some(&left),
        };
        let (records, failure) = net
            .with_workers(&config, &stats, &control, 5, |rx, _| {
                let mut records = Vec::new();
                for record in rx {
                    records.push(record);
                    // New weights mid-run, as the learner sends them.
                    net.publish(NetEvaluator::random(&model, &Device::flex()));
                }
                records
            })
            .expect("the pool starts");
        assert!(failure.is_none(), "{failure:?}");
        assert_eq!(records.len(), 8);
        assert!(records.iter().all(|r| !r.moves.is_empty()));
        let service = net.service_stats().expect("a service");
        let worker_calls = stats.batches.load(Ordering::Relaxed);
        assert_eq!(service.requests.load(Ordering::Relaxed), worker_calls);
        assert_eq!(
            service.positions.load(Ordering::Relaxed),
            stats.evals.load(Ordering::Relaxed)
        );
        assert!(
            service.batches.load(Ordering::Relaxed) < worker_calls,
            "the two workers' batches were merged"
        );
    }
}
