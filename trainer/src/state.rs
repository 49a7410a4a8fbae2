//! The resumable state of a training run: the learner, the replay buffer and the counters, as
//! saved in each checkpoint and restored by `--resume`.

use crate::config::TrainConfig;
use crate::replay::ReplayBuffer;
use crate::rundir::RunDir;
use anyhow::Context;
use oware_model::{CheckpointMeta, Learner, load_checkpoint, save_checkpoint};
use rand::SeedableRng;
use rand::rngs::SmallRng;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The replay buffer's file inside a checkpoint folder.
pub const REPLAY_FILE: &str = "replay.bin";

/// The trainer's counters saved in each checkpoint's `meta.json` (`extra`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Counters {
    /// Wall-clock seconds of training so far, over all resumes.
    pub elapsed_secs: f64,
    /// Samples the learner has trained on.
    pub trained_samples: u64,
    /// Training samples produced by self-play.
    pub new_samples: u64,
    /// Simulations run by self-play.
    pub sims: u64,
    /// Moves played by self-play.
    pub moves: u64,
    /// The previous evaluated checkpoint (for `eval.vs_previous`).
    pub previous_eval_checkpoint: Option<String>,
    /// How many times the run has been (re)started. The random streams (self-play workers, the
    /// learner's sampling) are derived from `[schedule] seed`, this count and the step, so a
    /// resumed run does not replay the random choices it made before.
    pub starts: u64,
}

/// Everything a checkpoint saves and a resume restores.
pub struct State {
    /// The network and its optimizer.
    pub learner: Learner,
    /// The replay buffer.
    pub replay: ReplayBuffer,
    /// Step, games, positions, last evaluation.
    pub meta: CheckpointMeta,
    /// The trainer's own counters.
    pub counters: Counters,
}

/// A new run's state.
pub fn fresh_state(config: &TrainConfig, device: &oware_model::Device) -> State {
    State {
        learner: Learner::new(&config.model, &config.optimizer, device),
        replay: ReplayBuffer::new(config.replay.capacity),
        meta: CheckpointMeta::default(),
        counters: Counters::default(),
    }
}

/// The state saved in the run's latest checkpoint.
pub fn load_state(
    run: &RunDir,
    config: &TrainConfig,
    device: &oware_model::Device,
) -> anyhow::Result<State> {
    let Some(dir) = run.latest()? else {
        anyhow::bail!(
            "{} has no checkpoint to resume from (checkpoints/latest is missing)",
            run.root().display()
        );
    };
    let (learner, meta) = load_checkpoint(&dir, device)
        .with_context(|| format!("loading checkpoint {}", dir.display()))?;
    if learner.config() != &config.model {
        anyhow::bail!(
            "checkpoint {} holds a network of another shape ({:?}) than [model] in the config ({:?})",
            dir.display(),
            learner.config(),
            config.model
        );
    }
    let replay_path = dir.join(REPLAY_FILE);
    let mut replay = if replay_path.exists() {
        ReplayBuffer::load(&replay_path)?
    } else {
        ReplayBuffer::new(config.replay.capacity)
    };
    if replay.capacity() != config.replay.capacity {
        let mut resized = ReplayBuffer::new(config.replay.capacity);
        let mut rng = SmallRng::seed_from_u64(0);
        let keep = replay.len().min(config.replay.capacity);
        resized.extend(replay.sample(keep, &mut rng));
        replay = resized;
    }
    let counters: Counters = serde_json::from_value(meta.extra.clone()).unwrap_or_default();
    Ok(State {
        learner,
        replay,
        meta,
        counters,
    })
}

/// Writes a checkpoint (weights, optimizer, counters, replay buffer) and points `latest` at
/// it once it is complete; keeps the newest `keep` (and the previous evaluated one).
pub fn save_state(run: &RunDir, state: &mut State, keep: usize) -> anyhow::Result<PathBuf> {
    let dir = run.checkpoint(state.meta.step);
    state.meta.extra = serde_json::to_value(&state.counters)?;
    if dir.exists() {
        std::fs::remove_dir_all(&dir).with_context(|| format!("replacing {}", dir.display()))?;
    }
    save_checkpoint(&dir, &state.learner, &state.meta)
        .with_context(|| format!("writing checkpoint {}", dir.display()))?;
    state.replay.save(&dir.join(REPLAY_FILE))?;
    run.set_latest(&dir)?;
    let previous = state
        .counters
        .previous_eval_checkpoint
        .as_deref()
        .map(Path::new);
    run.prune(keep, previous.as_slice())?;
    Ok(dir)
}
