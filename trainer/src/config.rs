//! The training configuration: TOML with one struct per section, unknown keys rejected, every
//! range checked with an error that names the key, and `--set section.key=value` overrides.
//!
//! One source of truth for the defaults: the `Default` impls (here, and `ModelConfig`,
//! `OptimConfig` and `MctsConfig` in their crates). A key a file leaves out takes its value
//! from them. `configs/default.toml` states exactly these values, every key with a comment,
//! which a test checks; `quick.toml`, `gpu.toml` and `tiny.toml` state only what they change.

use anyhow::Context;
use oware_model::{ModelConfig, OptimConfig};
use oware_search::mcts::MctsConfig;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// `configs/default.toml`: the defaults, written out and commented (a test checks that it states
/// exactly [`TrainConfig::default`]).
pub const DEFAULT_TOML: &str = include_str!("../../configs/default.toml");

/// The whole configuration of a training run (the resolved copy is `RUN/config.toml`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrainConfig {
    /// `[model]`: network shape.
    pub model: ModelConfig,
    /// `[mcts]`: the search used by self-play.
    pub mcts: MctsConfig,
    /// `[selfplay]`: workers and games in flight.
    pub selfplay: SelfplayConfig,
    /// `[replay]`: the replay buffer.
    pub replay: ReplayConfig,
    /// `[optimizer]`: optimizer and loss weights.
    pub optimizer: OptimConfig,
    /// `[schedule]`: how long, how fast, when to checkpoint.
    pub schedule: ScheduleConfig,
    /// `[eval]`: evaluation matches during training.
    pub eval: EvalConfig,
    /// `[log]`: TensorBoard and terminal output.
    pub log: LogConfig,
    /// `[broker]`: self-play workers elsewhere (`oware train --broker`, `oware worker`).
    pub broker: BrokerConfig,
}

/// `[selfplay]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SelfplayConfig {
    /// Self-play worker threads; 0 means one per CPU core, except with `oware train --broker`,
    /// where 0 means no local self-play at all (the games come from `oware worker` processes).
    pub workers: usize,
    /// Games each worker keeps in flight (its batch of trees).
    pub games_per_worker: usize,
    /// Ply limit of self-play games, at most [`oware_engine::DEFAULT_MAX_PLIES`]. The default
    /// is that limit itself, the one evaluation, `pit` and `play` use: the network has no input
    /// for the ply, so self-play games end where real games do and their results (the value
    /// targets) mean the same. Lower it only for tests.
    pub max_plies: u32,
    /// Playout cap randomization: the probability that a move gets the full search (`mcts.sims`,
    /// root noise, recorded as a training example). Other moves get `cheap_sims` and no noise
    /// and are not recorded. The temperature applies to every move of the first
    /// `mcts.temperature_plies` plies, cheap ones included (as in KataGo). 1.0 turns it off.
    pub full_search_prob: f32,
    /// Simulations of the cheap searches.
    pub cheap_sims: u32,
    /// Opening diversity: each self-play game starts with a number of uniformly random moves
    /// drawn from `0..=opening_plies` (not searched, not recorded); 0 turns it off. The
    /// temperature schedule (`mcts.temperature_plies`) is the other source of diverse openings.
    pub opening_plies: u32,
    /// The horizon, in recorded positions, of the short-horizon value target (trained only by
    /// networks with `model.short_value`): each position's target mixes its search value with
    /// the next positions' targets, weight `1/horizon` on its own.
    pub short_value_horizon: f32,
    /// Endgame tables: a directory built by `oware egtb build`, `"auto"` (the default: the
    /// tables of 0..=14 seeds in the per-user cache, built there the first time, see
    /// [`crate::selfplay_egtb::load_auto`]), or empty for none. With
    /// tables, a game that reaches a position of exact table value is finished by perfect
    /// table play, value targets inside the tables are clamped into the results the tables
    /// allow, and the search's leaf values are held to them too (see
    /// [`crate::selfplay_egtb`]).
    pub egtb: String,
    /// With tables: the plies of a game finished by table play are training examples too
    /// (perfect play's policy, the exact result as value target); otherwise only searched
    /// positions are, and a network sees few positions the tables play out.
    pub table_samples: bool,
    /// Where the workers' leaf batches are evaluated: each on its own thread (`per_worker`),
    /// or merged by one inference thread per device (`service`); `auto` picks `per_worker`
    /// on the CPU and `service` on a GPU.
    pub inference: InferenceMode,
    /// Service only: a merged batch runs once it holds this many positions.
    pub inference_max_batch: usize,
    /// Service only: the longest wait in microseconds, from the first pending batch, for the
    /// other workers' batches (a merged batch runs at once when every worker has submitted).
    pub inference_wait_us: u64,
}

/// `selfplay.inference`: who runs the self-play network.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InferenceMode {
    /// `per_worker` on the CPU, `service` on a GPU.
    #[default]
    Auto,
    /// One inference thread per device evaluates the merged batches of all workers.
    Service,
    /// Every worker evaluates its own batches with its own view of the weights.
    PerWorker,
}

impl InferenceMode {
    /// The mode used on `device`: `Auto` resolved.
    pub fn resolve(self, device: oware_model::DeviceKind) -> InferenceMode {
        match (self, device) {
            (InferenceMode::Auto, oware_model::DeviceKind::Cpu) => InferenceMode::PerWorker,
            (InferenceMode::Auto, _) => InferenceMode::Service,
            (mode, _) => mode,
        }
    }

    /// The config spelling.
    pub fn name(self) -> &'static str {
        match self {
            InferenceMode::Auto => "auto",
            InferenceMode::Service => "service",
            InferenceMode::PerWorker => "per_worker",
        }
    }
}

impl SelfplayConfig {
    /// The number of worker threads: `workers`, or one per CPU core when it is 0.
    pub fn worker_count(&self) -> usize {
        if self.workers == 0 {
            // A platform that cannot tell its core count gets one worker.
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        } else {
            self.workers
        }
    }
}

impl Default for SelfplayConfig {
    fn default() -> Self {
        SelfplayConfig {
            workers: 0,
            games_per_worker: 128,
            max_plies: oware_engine::DEFAULT_MAX_PLIES,
            full_search_prob: 1.0,
            cheap_sims: 25,
            opening_plies: 0,
            short_value_horizon: 6.0,
            egtb: crate::selfplay_egtb::AUTO.to_string(),
            table_samples: false,
            inference: InferenceMode::Auto,
            // The service's own defaults (one source of truth).
            inference_max_batch: oware_model::ServiceConfig::default().max_batch,
            inference_wait_us: oware_model::ServiceConfig::default().max_wait.as_micros() as u64,
        }
    }
}

/// `[replay]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReplayConfig {
    /// Most recent positions kept.
    pub capacity: usize,
    /// Positions needed before training starts.
    pub min_samples: usize,
}

impl Default for ReplayConfig {
    fn default() -> Self {
        ReplayConfig {
            capacity: 800_000,
            min_samples: 4_000,
        }
    }
}

/// The learning-rate schedule's shape.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LrDecay {
    /// `lr` throughout (after warm-up).
    Constant,
    /// Cosine from `lr` down to `lr * lr_final_fraction` at the end of the run (`max_steps` or
    /// `minutes`, whichever comes first; those that are set).
    #[default]
    Cosine,
}

/// `[schedule]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ScheduleConfig {
    /// Wall-clock limit of the run in minutes (summed over resumes); 0 means none.
    pub minutes: f64,
    /// Learner steps to run; 0 means no step limit. The run stops at whichever limit comes
    /// first; at least one of `minutes` and `max_steps` must be set.
    pub max_steps: u64,
    /// Positions per learner step.
    pub batch_size: usize,
    /// Peak learning rate.
    pub lr: f64,
    /// Linear warm-up steps.
    pub lr_warmup_steps: u64,
    /// Decay after warm-up: `"cosine"` (over the run's progress) or `"constant"`.
    pub lr_decay: LrDecay,
    /// Final learning rate as a fraction of `lr` (cosine).
    pub lr_final_fraction: f64,
    /// Bound on reuse: the learner trains on at most this many samples per new self-play
    /// position (it waits for self-play when ahead).
    pub samples_per_position: f64,
    /// New weights go to the self-play workers every this many steps.
    pub sync_every_steps: u64,
    /// A checkpoint every this many steps (and at the end).
    pub checkpoint_every_steps: u64,
    /// Checkpoints kept on disk (the newest).
    pub keep_checkpoints: usize,
    /// Seed of all randomness in the run.
    pub seed: u64,
}

impl Default for ScheduleConfig {
    fn default() -> Self {
        ScheduleConfig {
            minutes: 60.0,
            max_steps: 0,
            batch_size: 256,
            lr: 2e-3,
            lr_warmup_steps: 200,
            lr_decay: LrDecay::Cosine,
            lr_final_fraction: 0.05,
            samples_per_position: 6.0,
            sync_every_steps: 25,
            checkpoint_every_steps: 1000,
            keep_checkpoints: 5,
            seed: 1,
        }
    }
}

impl ScheduleConfig {
    /// The step limit, `None` when `max_steps` is 0.
    pub fn step_limit(&self) -> Option<u64> {
        (self.max_steps > 0).then_some(self.max_steps)
    }

    /// The run's progress in [0, 1]: the larger of the step fraction (with a step limit) and the
    /// time fraction (with a time limit), so the schedule ends when the run does.
    pub fn progress(&self, step: u64, elapsed_secs: f64) -> f64 {
        let by_steps = match self.step_limit() {
            Some(limit) => step as f64 / limit as f64,
            None => 0.0,
        };
        let by_time = if self.minutes > 0.0 {
            elapsed_secs / (self.minutes * 60.0)
        } else {
            0.0
        };
        by_steps.max(by_time).clamp(0.0, 1.0)
    }

    /// The learning rate at `step` (0-based) when the run is `progress` (0..1) done.
    pub fn lr_at(&self, step: u64, progress: f64) -> f64 {
        if step < self.lr_warmup_steps {
            return self.lr * (step + 1) as f64 / self.lr_warmup_steps as f64;
        }
        match self.lr_decay {
            LrDecay::Constant => self.lr,
            LrDecay::Cosine => {
                let t = progress.clamp(0.0, 1.0);
                let floor = self.lr * self.lr_final_fraction;
                floor + (self.lr - floor) * 0.5 * (1.0 + (std::f64::consts::PI * t).cos())
            }
        }
    }
}

/// `[eval]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EvalConfig {
    /// Evaluate every this many learner steps (and at the end); 0 disables evaluation.
    pub every_steps: u64,
    /// Games per opponent (played in pairs with colours swapped).
    pub games: u32,
    /// Simulations per move of the network player.
    pub sims: u32,
    /// Opponent player specs, e.g. `["alphabeta:depth=4"]`. `ms=auto` in a spec
    /// (`alphabeta:ms=auto`) is the network's own mean time per move, measured at each
    /// evaluation by timing a few of its searches.
    pub opponents: Vec<String>,
    /// The opponent rated 0 for the network's Elo against a fixed anchor (`eval/elo_vs_anchor`),
    /// fitted over all evaluation matches of the run; a fixed player (no `ms=auto`), played at
    /// every evaluation (after `opponents`, when it is not one of them). Empty: no such rating.
    pub anchor: String,
    /// Also play the previous evaluated checkpoint.
    pub vs_previous: bool,
    /// Random opening plies before each pair of games.
    pub opening_plies: u32,
}

impl Default for EvalConfig {
    fn default() -> Self {
        EvalConfig {
            every_steps: 2500,
            games: 20,
            sims: 100,
            opponents: vec!["alphabeta:depth=4".into(), "alphabeta:ms=auto".into()],
            anchor: "alphabeta:depth=4".into(),
            vs_previous: false,
            opening_plies: 2,
        }
    }
}

/// `[log]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LogConfig {
    /// Write TensorBoard scalars into the run directory.
    pub tensorboard: bool,
    /// Log losses and rates every this many steps.
    pub every_steps: u64,
}

impl Default for LogConfig {
    fn default() -> Self {
        LogConfig {
            tensorboard: true,
            every_steps: 25,
        }
    }
}

/// `[broker]`: used only with `oware train --broker URL` (the URL itself is a command-line
/// flag, never stored in the config, because it may carry a password).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BrokerConfig {
    /// Games played with weights more than this many published versions older than the
    /// learner's newest are dropped (and counted as stale).
    pub max_version_lag: u64,
    /// Upper bound on the games stream: workers add games with `MAXLEN ~ max_stream_len`, so a
    /// learner that is away for long loses the oldest unread games rather than Redis filling
    /// its memory.
    pub max_stream_len: u64,
    /// Games the learner reads from the stream per request.
    pub read_batch: usize,
    /// Games one worker id may send per minute, sustained (and in a burst); the excess is
    /// dropped and counted (`broker/rate_limited`). 0: no limit.
    pub max_games_per_worker_per_minute: u64,
}

impl Default for BrokerConfig {
    fn default() -> Self {
        BrokerConfig {
            max_version_lag: 4,
            max_stream_len: 100_000,
            read_batch: 512,
            max_games_per_worker_per_minute: 6000,
        }
    }
}

fn check(ok: bool, key: &str, msg: impl FnOnce() -> String) -> anyhow::Result<()> {
    if ok {
        Ok(())
    } else {
        anyhow::bail!("{key}: {}", msg())
    }
}

impl TrainConfig {
    /// Checks every range; the error names the key.
    pub fn validate(&self) -> anyhow::Result<()> {
        use oware_engine::bounds::{MAX_GAMES, MAX_SIMS, MAX_SIMS_PER_WORKER, MAX_THREADS};
        self.model
            .validate()
            .map_err(|e| anyhow::anyhow!("model.{e}"))?;
        self.mcts.validate()?;
        self.optimizer
            .validate()
            .map_err(|e| anyhow::anyhow!("optimizer.{e}"))?;
        let s = &self.selfplay;
        check(
            s.workers <= MAX_THREADS as usize,
            "selfplay.workers",
            || format!("{} is more than {MAX_THREADS}", s.workers),
        )?;
        check(
            (1..=65_536).contains(&s.games_per_worker),
            "selfplay.games_per_worker",
            || format!("{} is outside 1..=65536", s.games_per_worker),
        )?;
        check(
            (1..=oware_engine::DEFAULT_MAX_PLIES).contains(&s.max_plies),
            "selfplay.max_plies",
            || {
                format!(
                    "{} is outside 1..={} (the rules' ply limit)",
                    s.max_plies,
                    oware_engine::DEFAULT_MAX_PLIES
                )
            },
        )?;
        check(
            (0.0..=1.0).contains(&s.full_search_prob),
            "selfplay.full_search_prob",
            || format!("{} is outside 0..=1", s.full_search_prob),
        )?;
        check(
            s.full_search_prob > 0.0,
            "selfplay.full_search_prob",
            || "must be > 0, or no move is ever recorded".into(),
        )?;
        check(
            (1..=MAX_SIMS).contains(&s.cheap_sims),
            "selfplay.cheap_sims",
            || format!("{} is outside 1..={MAX_SIMS}", s.cheap_sims),
        )?;
        check(
            s.short_value_horizon.is_finite() && (1.0..=1000.0).contains(&s.short_value_horizon),
            "selfplay.short_value_horizon",
            || format!("{} is outside 1..=1000", s.short_value_horizon),
        )?;
        check(s.opening_plies <= 40, "selfplay.opening_plies", || {
            format!("{} is above 40", s.opening_plies)
        })?;
        let in_flight = s.games_per_worker as u64 * self.mcts.sims.max(s.cheap_sims) as u64;
        check(
            in_flight <= MAX_SIMS_PER_WORKER,
            "selfplay.games_per_worker",
            || {
                format!(
                    "{} games x {} simulations = {in_flight} in flight per worker, more than {MAX_SIMS_PER_WORKER}",
                    s.games_per_worker,
                    self.mcts.sims.max(s.cheap_sims)
                )
            },
        )?;
        check(
            (1..=1 << 20).contains(&s.inference_max_batch),
            "selfplay.inference_max_batch",
            || format!("{} is outside 1..=1048576", s.inference_max_batch),
        )?;
        check(
            s.inference_wait_us <= 1_000_000,
            "selfplay.inference_wait_us",
            || format!("{} is more than 1000000 (one second)", s.inference_wait_us),
        )?;
        let r = &self.replay;
        check(r.capacity >= 1, "replay.capacity", || {
            "must be at least 1".into()
        })?;
        check(r.min_samples <= r.capacity, "replay.min_samples", || {
            format!("{} exceeds replay.capacity {}", r.min_samples, r.capacity)
        })?;
        let c = &self.schedule;
        check(
            c.minutes >= 0.0 && c.minutes.is_finite(),
            "schedule.minutes",
            || format!("{} must be >= 0", c.minutes),
        )?;
        check(
            c.max_steps >= 1 || c.minutes > 0.0,
            "schedule.max_steps",
            || "is 0 (no step limit) and schedule.minutes is 0 (no time limit): set one".into(),
        )?;
        check(
            (1..=65_536).contains(&c.batch_size),
            "schedule.batch_size",
            || format!("{} is outside 1..=65536", c.batch_size),
        )?;
        check(c.lr > 0.0 && c.lr <= 1.0, "schedule.lr", || {
            format!("{} is outside (0, 1]", c.lr)
        })?;
        check(
            (0.0..=1.0).contains(&c.lr_final_fraction),
            "schedule.lr_final_fraction",
            || format!("{} is outside 0..=1", c.lr_final_fraction),
        )?;
        check(
            c.samples_per_position > 0.0,
            "schedule.samples_per_position",
            || format!("{} must be > 0", c.samples_per_position),
        )?;
        check(c.sync_every_steps >= 1, "schedule.sync_every_steps", || {
            "must be at least 1".into()
        })?;
        check(
            c.checkpoint_every_steps >= 1,
            "schedule.checkpoint_every_steps",
            || "must be at least 1".into(),
        )?;
        check(c.keep_checkpoints >= 1, "schedule.keep_checkpoints", || {
            "must be at least 1".into()
        })?;
        let e = &self.eval;
        check(
            e.every_steps == 0 || (1..=MAX_GAMES).contains(&e.games),
            "eval.games",
            || format!("{} is outside 1..={MAX_GAMES}", e.games),
        )?;
        check((1..=MAX_SIMS).contains(&e.sims), "eval.sims", || {
            format!("{} is outside 1..={MAX_SIMS}", e.sims)
        })?;
        check(e.opening_plies <= 20, "eval.opening_plies", || {
            format!("{} is more than 20", e.opening_plies)
        })?;
        for (i, spec) in e.opponents.iter().enumerate() {
            // `ms=auto` becomes a number at evaluation time; any number checks the rest.
            crate::auto_ms::resolve_auto_ms(spec, 1)
                .parse::<oware_players::spec::PlayerSpec>()
                .map_err(|err| anyhow::anyhow!("eval.opponents[{i}]: {err}"))?;
        }
        if !e.anchor.is_empty() {
            e.anchor
                .parse::<oware_players::spec::PlayerSpec>()
                .map_err(|err| anyhow::anyhow!("eval.anchor: {err}"))?;
        }
        check(
            !crate::auto_ms::has_auto_ms(&e.anchor),
            "eval.anchor",
            || "must be a fixed player, without ms=auto".into(),
        )?;
        check(self.log.every_steps >= 1, "log.every_steps", || {
            "must be at least 1".into()
        })?;
        let b = &self.broker;
        check(
            (100..=100_000_000).contains(&b.max_stream_len),
            "broker.max_stream_len",
            || format!("{} is outside 100..=100000000", b.max_stream_len),
        )?;
        check(
            (1..=10_000).contains(&b.read_batch),
            "broker.read_batch",
            || format!("{} is outside 1..=10000", b.read_batch),
        )?;
        check(
            b.max_games_per_worker_per_minute <= 100_000_000,
            "broker.max_games_per_worker_per_minute",
            || {
                format!(
                    "{} is above 100000000 (0 means no limit)",
                    b.max_games_per_worker_per_minute
                )
            },
        )?;
        Ok(())
    }

    /// Reads a config file (keys it leaves out take their default values, the ones
    /// `configs/default.toml` states), applies `--set` overrides, validates.
    pub fn load(path: Option<&Path>, sets: &[String]) -> anyhow::Result<TrainConfig> {
        let (text, origin) = match path {
            Some(p) => (read_config(p)?, p.display().to_string()),
            None => (String::new(), "the default config".to_string()),
        };
        Self::from_toml_str(&text, sets).with_context(|| format!("in {origin}"))
    }

    /// Reads the resolved `config.toml` of a run being resumed: as [`TrainConfig::load`], except
    /// that a key whose default has changed since and that the file (written by an older
    /// version) leaves out takes its old default ([`CHANGED_DEFAULTS`]), so a resumed run goes
    /// on as it started.
    pub fn load_resumed(path: &Path, sets: &[String]) -> anyhow::Result<TrainConfig> {
        let in_file = || format!("in {}", path.display());
        let mut value: toml::Table = toml::from_str(&read_config(path)?)
            .map_err(anyhow::Error::from)
            .with_context(in_file)?;
        for (section, key, old) in CHANGED_DEFAULTS {
            if let Some(toml::Value::Table(t)) = value.get_mut(*section)
                && !t.contains_key(*key)
            {
                t.insert((*key).to_string(), old.parse::<toml::Value>()?);
            }
        }
        Self::from_table(value, sets).with_context(in_file)
    }

    /// Parses TOML text (missing keys take their defaults), applies overrides and validates.
    pub fn from_toml_str(text: &str, sets: &[String]) -> anyhow::Result<TrainConfig> {
        Self::from_table(toml::from_str(text)?, sets)
    }

    /// [`TrainConfig::from_toml_str`] of parsed TOML.
    fn from_table(mut value: toml::Table, sets: &[String]) -> anyhow::Result<TrainConfig> {
        let defaults = toml::Table::try_from(TrainConfig::default())?;
        for set in sets {
            apply_set(&mut value, &defaults, set)?;
        }
        let config: TrainConfig = toml::Value::Table(value).try_into()?;
        config.validate()?;
        Ok(config)
    }

    /// The config as commented-free TOML (the resolved copy written into a run directory).
    pub fn to_toml(&self) -> anyhow::Result<String> {
        Ok(toml::to_string_pretty(self)?)
    }
}

/// The text of a config file, or an error naming it.
fn read_config(path: &Path) -> anyhow::Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("reading config {}", path.display()))
}

/// Keys whose default changed, with the old default as a TOML value: a resumed run whose
/// `config.toml` (written by an older version, before the key existed) leaves one out keeps
/// the old value ([`TrainConfig::load_resumed`]). A section the file lacks altogether is left
/// to the defaults.
pub const CHANGED_DEFAULTS: &[(&str, &str, &str)] = &[
    // 2026-12-05: value_target_mix 0 -> 0.5, selfplay.egtb "" -> "auto".
    ("optimizer", "value_target_mix", "0.0"),
    ("selfplay", "egtb", "\"\""),
];

/// Applies one `section.key=value` override. The value is read as TOML (`0.01`, `true`,
/// `"gumbel"`, `["alphabeta:depth=4"]`), or taken as a plain string when it is not valid TOML.
fn apply_set(table: &mut toml::Table, defaults: &toml::Table, set: &str) -> anyhow::Result<()> {
    let (key, raw) = set
        .split_once('=')
        .with_context(|| format!("--set '{set}': expected section.key=value"))?;
    let key = key.trim();
    let Some((section, field)) = key.split_once('.') else {
        anyhow::bail!("--set '{set}': expected section.key=value, e.g. schedule.lr=0.001");
    };
    let known = defaults
        .get(section)
        .and_then(|s| s.as_table())
        .with_context(|| {
            let names: Vec<&str> = defaults.keys().map(String::as_str).collect();
            format!(
                "--set '{set}': unknown section '{section}' (sections: {})",
                names.join(", ")
            )
        })?;
    if !known.contains_key(field) {
        let names: Vec<&str> = known.keys().map(String::as_str).collect();
        anyhow::bail!(
            "--set '{set}': unknown key '{key}' (keys of [{section}]: {})",
            names.join(", ")
        );
    }
    let raw = raw.trim();
    // Not valid TOML (e.g. `gumbel` without quotes): the value is the plain string, on purpose;
    // the deserializer then names the key if a string does not fit it.
    let value = toml::from_str::<toml::Table>(&format!("v = {raw}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(raw.to_string()));
    let entry = table
        .entry(section.to_string())
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    let Some(section_table) = entry.as_table_mut() else {
        anyhow::bail!("[{section}] is not a table");
    };
    section_table.insert(field.to_string(), value);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_file_states_exactly_the_defaults() {
        // Every key of every section is spelled out in configs/default.toml ...
        let file: toml::Table = toml::from_str(DEFAULT_TOML).expect("parses");
        let all = toml::Table::try_from(TrainConfig::default()).expect("serializes");
        for (section, keys) in &all {
            let keys = keys.as_table().expect("section");
            let given = file
                .get(section)
                .and_then(|s| s.as_table())
                .expect("section present");
            for key in keys.keys() {
                assert!(
                    given.contains_key(key),
                    "configs/default.toml lacks {section}.{key}"
                );
            }
        }
        // ... with exactly the values of the Default impls, the one source of the defaults.
        let c: TrainConfig = toml::from_str(DEFAULT_TOML).expect("valid");
        assert_eq!(c, TrainConfig::default(), "configs/default.toml differs");
        c.validate().expect("valid");
        assert_eq!(TrainConfig::from_toml_str("", &[]).expect("empty file"), c);
        assert_eq!(
            TrainConfig::from_toml_str(DEFAULT_TOML, &[]).expect("file"),
            c
        );
    }

    #[test]
    fn a_resumed_run_keeps_the_old_default_of_a_key_its_config_leaves_out() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("config.toml");
        // A config.toml of an older version: the two keys did not exist yet.
        let mut old = toml::Table::try_from(TrainConfig::default()).expect("serializes");
        for (section, key, _) in CHANGED_DEFAULTS {
            old.get_mut(*section)
                .and_then(|s| s.as_table_mut())
                .expect("section")
                .remove(*key);
        }
        std::fs::write(&path, toml::to_string(&old).expect("toml")).expect("write");
        let resumed = TrainConfig::load_resumed(&path, &[]).expect("loads");
        assert_eq!(resumed.optimizer.value_target_mix, 0.0);
        assert_eq!(resumed.selfplay.egtb, "");
        // A new run from the same file takes today's defaults ...
        let fresh = TrainConfig::load(Some(&path), &[]).expect("loads");
        assert_eq!(fresh.optimizer.value_target_mix, 0.5);
        assert_eq!(fresh.selfplay.egtb, crate::selfplay_egtb::AUTO);
        // ... and a file that states the keys, or a --set, is taken as it is.
        let sets = ["optimizer.value_target_mix=0.25".to_string()];
        let set = TrainConfig::load_resumed(&path, &sets).expect("loads");
        assert_eq!(set.optimizer.value_target_mix, 0.25);
        let today = dir.path().join("today.toml");
        std::fs::write(&today, TrainConfig::default().to_toml().expect("toml")).expect("write");
        assert_eq!(
            TrainConfig::load_resumed(&today, &[]).expect("loads"),
            TrainConfig::default()
        );
        // A damaged file is an error that names it.
        std::fs::write(&path, "[selfplay\n").expect("write");
        let e = TrainConfig::load_resumed(&path, &[]).expect_err("damaged");
        assert!(format!("{e:#}").contains("config.toml"), "{e:#}");
    }

    #[test]
    fn shipped_configs_state_only_what_they_change() {
        let defaults = toml::Table::try_from(TrainConfig::default()).expect("serializes");
        for (name, text) in [
            ("quick", include_str!("../../configs/quick.toml")),
            ("tiny", include_str!("../../configs/tiny.toml")),
            ("gpu", include_str!("../../configs/gpu.toml")),
        ] {
            TrainConfig::from_toml_str(text, &[])
                .unwrap_or_else(|e| panic!("configs/{name}.toml: {e:#}"));
            let file: toml::Table = toml::from_str(text).expect("parses");
            for (section, keys) in &file {
                let keys = keys.as_table().expect("section");
                for (key, value) in keys {
                    let default = &defaults[section.as_str()][key.as_str()];
                    assert_ne!(
                        value, default,
                        "configs/{name}.toml repeats the default {section}.{key} = {value}"
                    );
                }
            }
            // Every key is commented: each line that sets one has a `#` after the value.
            for line in text.lines() {
                let line = line.trim();
                if line.contains('=') && !line.starts_with('#') {
                    assert!(
                        line.contains('#'),
                        "configs/{name}.toml: no comment on '{line}'"
                    );
                }
            }
        }
    }

    #[test]
    fn defaults_validate_and_round_trip() {
        let c = TrainConfig::default();
        c.validate().expect("defaults are valid");
        let text = c.to_toml().expect("toml");
        let back = TrainConfig::from_toml_str(&text, &[]).expect("parses");
        assert_eq!(back, c);
    }

    #[test]
    fn step_and_time_limits() {
        let c = TrainConfig::default();
        assert_eq!(
            c.schedule.step_limit(),
            None,
            "the default run is time-limited"
        );
        assert!((c.schedule.progress(1_000_000, 1800.0) - 0.5).abs() < 1e-9);
        let err = TrainConfig::from_toml_str("", &["schedule.minutes=0".into()])
            .expect_err("no limit at all");
        assert!(format!("{err:#}").contains("schedule.max_steps"), "{err:#}");
        let c = TrainConfig::from_toml_str(
            "",
            &["schedule.minutes=0".into(), "schedule.max_steps=100".into()],
        )
        .expect("a step limit");
        assert_eq!(c.schedule.step_limit(), Some(100));
        let err = TrainConfig::from_toml_str("", &["selfplay.max_plies=1001".into()])
            .expect_err("beyond the rules");
        assert!(format!("{err:#}").contains("selfplay.max_plies"), "{err:#}");
    }

    #[test]
    fn unknown_keys_and_bad_values_name_the_key() {
        let err = TrainConfig::from_toml_str("[schedule]\nlrr = 0.1\n", &[]).expect_err("unknown");
        assert!(format!("{err:#}").contains("lrr"), "{err:#}");
        let err = TrainConfig::from_toml_str("[schedule]\nlr = -1.0\n", &[]).expect_err("range");
        assert!(format!("{err:#}").contains("schedule.lr"), "{err:#}");
        let err = TrainConfig::from_toml_str("", &["schedule.nope=1".into()]).expect_err("set");
        assert!(format!("{err:#}").contains("schedule.nope"), "{err:#}");
        let err = TrainConfig::from_toml_str("", &["mcts.sims=0".into()]).expect_err("range");
        assert!(format!("{err:#}").contains("sims"), "{err:#}");
        let err = TrainConfig::from_toml_str("[eval]\nopponents = [\"alphabeta:depth=x\"]\n", &[])
            .expect_err("bad spec");
        assert!(format!("{err:#}").contains("eval.opponents[0]"), "{err:#}");
        let err = TrainConfig::from_toml_str("[eval]\nanchor = \"alphabeta:ms=auto\"\n", &[])
            .expect_err("a moving anchor");
        assert!(format!("{err:#}").contains("eval.anchor"), "{err:#}");
        let err = TrainConfig::from_toml_str("[eval]\nanchor = \"nobody\"\n", &[])
            .expect_err("not a player");
        assert!(format!("{err:#}").contains("eval.anchor"), "{err:#}");
        let err = TrainConfig::from_toml_str("[eval]\nopponents = [\"alphabeta:ms=soon\"]\n", &[])
            .expect_err("not a time");
        assert!(format!("{err:#}").contains("eval.opponents[0]"), "{err:#}");
        let c = TrainConfig::from_toml_str(
            "[eval]\nopponents = [\"alphabeta:depth=3,ms=auto\"]\nanchor = \"random\"\n",
            &[],
        )
        .expect("ms=auto and an anchor outside the opponents");
        assert_eq!(c.eval.anchor, "random");
    }

    #[test]
    fn set_overrides_apply() {
        let c = TrainConfig::from_toml_str(
            "",
            &[
                "schedule.lr=0.01".into(),
                "mcts.root=gumbel".into(),
                "eval.opponents=[\"random\"]".into(),
            ],
        )
        .expect("valid");
        assert_eq!(c.schedule.lr, 0.01);
        assert_eq!(c.mcts.root, oware_search::mcts::RootAlgorithm::Gumbel);
        assert_eq!(c.eval.opponents, vec!["random".to_string()]);
    }

    #[test]
    fn lr_schedule_warms_up_and_decays() {
        let s = ScheduleConfig {
            lr: 1.0,
            lr_warmup_steps: 10,
            max_steps: 110,
            minutes: 10.0,
            lr_final_fraction: 0.1,
            ..Default::default()
        };
        assert!((s.lr_at(0, 0.0) - 0.1).abs() < 1e-9);
        assert!((s.lr_at(10, s.progress(10, 0.0)) - 0.9818).abs() < 1e-3);
        assert!((s.lr_at(110, s.progress(110, 0.0)) - 0.1).abs() < 1e-9);
        assert!(
            (s.progress(20, 300.0) - 0.5).abs() < 1e-9,
            "time decides when it is ahead"
        );
        assert!((s.lr_at(60, 0.5) - 0.55).abs() < 1e-9);
    }
}
