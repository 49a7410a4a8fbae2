//! `oware worker`: a stateless self-play process. It fetches the newest weights of a run from
//! Redis, plays with the batched self-play driver (the same one `oware train` runs locally),
//! sends each finished game to the run's stream, and picks up new weights as they are
//! published. See the module docs of [`crate::broker`].

use super::ledger::MAX_SEQ_GAP;
use super::sign::{self, Trust};
use super::wire;
use super::{Backoff, BrokerUrl, GAME_FIELD, Keys, connect, is_mismatch};
use crate::config::{BrokerConfig, SelfplayConfig, TrainConfig};
use crate::selfplay::{GameRecord, SelfplayStats, SharedWeights, WorkerControl, with_workers};
use anyhow::Context;
use oware_model::{DeviceKind, ModelConfig, NetEvaluator};
use oware_search::mcts::MctsConfig;
use serde::Deserialize;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

/// Finished games a worker holds while Redis is away; beyond this the oldest are dropped (the
/// learner counts them as missing).
pub const OUTBOX_GAMES: usize = 10_000;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
const IO_TIMEOUT: Duration = Duration::from_secs(5);
/// How often the worker asks whether new weights are out.
const VERSION_POLL: Duration = Duration::from_millis(500);
/// How often it prints its rates.
const RATE_EVERY: Duration = Duration::from_secs(10);
/// Games sent per round trip at most.
const SEND_BATCH: usize = 256;

/// How `oware worker` was asked to run.
#[derive(Clone, Debug)]
pub struct WorkerOptions {
    /// The broker.
    pub url: BrokerUrl,
    /// The run's name (the learner's run directory's last component).
    pub run: String,
    /// Self-play threads; 0 means one per CPU core.
    pub threads: usize,
    /// Where the network runs.
    pub device: DeviceKind,
    /// Stop after this many games (all sent); `None`: until Ctrl-C.
    pub games: Option<u64>,
    /// Plain rate lines every 10 s on stderr (always; `quiet` turns them off).
    pub quiet: bool,
    /// The learner key whose signed weights the worker loads (`--learner-key`).
    pub trust: Trust,
}

/// What a worker did, printed when it stops.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct WorkerSummary {
    /// The worker's id (in the learner's TensorBoard tags and run state).
    pub worker: String,
    /// Games finished.
    pub games: u64,
    /// Games sent to Redis.
    pub sent: u64,
    /// Games dropped because the outbox was full (Redis away too long).
    pub dropped: u64,
    /// Games not sent when the worker stopped (Redis away at the end).
    pub unsent: u64,
    /// Training positions in the games finished.
    pub positions: u64,
    /// Seconds from the first weights to the end.
    pub seconds: f64,
    /// Positions per second.
    pub positions_per_sec: f64,
    /// Games per second.
    pub games_per_sec: f64,
    /// Simulations per second.
    pub sims_per_sec: f64,
    /// Weights versions loaded.
    pub weights_loaded: u64,
    /// The newest weights version held.
    pub version: u64,
    /// Times the connection to Redis was re-established.
    pub reconnects: u64,
    /// Publications refused: not signed by the trusted key, or older than the weights held.
    pub refused: u64,
    /// The fingerprint of the learner key the weights were signed with.
    pub learner_key: String,
}

/// The settings the learner publishes beside its weights.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Settings {
    mcts: MctsConfig,
    selfplay: SelfplayConfig,
    broker: BrokerConfig,
}

/// One fetched publication.
struct Fetched {
    version: u64,
    model: ModelConfig,
    settings_json: String,
    weights: Vec<u8>,
}

/// What reading the weights hash gave.
enum Fetch {
    /// Nothing is published yet.
    Nothing,
    /// Weights signed by the trusted key.
    Signed(Fetched),
    /// A publication that must not be loaded, and why.
    Refused(u64, String),
}

/// A worker id: the host name (at most 24 characters) and 128 random bits, so workers in
/// containers with the same host name and process id still differ (a restarted worker is a
/// new one).
fn worker_id() -> String {
    let host = std::fs::read_to_string("/etc/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_default();
    let host: String = host
        .trim()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        .take(24)
        .collect();
    let host = if host.is_empty() {
        "worker".to_string()
    } else {
        host
    };
    let salt: u128 = rand::random();
    format!("{host}-{salt:032x}")
}

/// The weights hash's fields as `HMGET` returns them: version, model, settings, weights,
/// checksum, signature, key (bytes: any of them may be anything another client wrote).
type WeightsFields = (
    Option<Vec<u8>>,
    Option<Vec<u8>>,
    Option<Vec<u8>>,
    Option<Vec<u8>>,
    Option<Vec<u8>>,
    Option<Vec<u8>>,
    Option<Vec<u8>>,
);

/// The weights hash: nothing yet, weights signed by the key `trust` names (checked before
/// anything else is read from them), or a refused publication.
fn fetch(
    con: &mut redis::Connection,
    keys: &Keys,
    run: &str,
    trust: &mut Trust,
) -> anyhow::Result<Fetch> {
    let (version, model, settings, weights, checksum, signature, key): WeightsFields =
        redis::cmd("HMGET")
            .arg(&keys.weights)
            .arg(&[
                "version",
                "model",
                "settings",
                "weights",
                "checksum",
                "signature",
                "key",
            ])
            .query(con)
            .with_context(|| format!("reading {}", keys.weights))?;
    let (Some(version), Some(model), Some(settings), Some(weights), Some(checksum)) =
        (version, model, settings, weights, checksum)
    else {
        return Ok(Fetch::Nothing);
    };
    let text = |b: Vec<u8>| String::from_utf8(b).ok();
    let (Some(version), Some(model), Some(settings), Some(checksum)) = (
        text(version).and_then(|v| v.parse::<u64>().ok()),
        text(model),
        text(settings),
        text(checksum),
    ) else {
        return Ok(Fetch::Refused(
            0,
            "a field is not text (or the version not a number)".into(),
        ));
    };
    let message = sign::message(run, version, &model, &settings, &weights);
    let (key, signature) = (key.and_then(text), signature.and_then(text));
    if let Err(why) = trust.check(key.as_deref(), signature.as_deref(), &message) {
        return Ok(Fetch::Refused(version, why));
    }
    let got = format!("{:016x}", oware_model::checksum(&weights));
    if got != checksum {
        return Ok(Fetch::Refused(
            version,
            format!("the weights' checksum {got} differs from the published {checksum}"),
        ));
    }
    let model: ModelConfig = serde_json::from_str(&model)
        .with_context(|| format!("{}: the published model shape", keys.weights))?;
    Ok(Fetch::Signed(Fetched {
        version,
        model,
        settings_json: settings,
        weights,
    }))
}

/// The published version field as it is (any bytes another client wrote; `None`: none).
fn published_version(
    con: &mut redis::Connection,
    keys: &Keys,
) -> redis::RedisResult<Option<Vec<u8>>> {
    redis::cmd("HGET")
        .arg(&keys.weights)
        .arg("version")
        .query(con)
}

/// How long a worker waits before reading a hash it refused again (unless its version
/// field changes).
const REFUSED_PAUSE: Duration = Duration::from_secs(5);

/// Tells about a refused publication once (the same one is not told again).
fn note_refusal(
    last: &mut Option<(u64, String)>,
    version: u64,
    why: String,
    keys: &Keys,
    held: Option<u64>,
) -> bool {
    if last
        .as_ref()
        .is_some_and(|(v, w)| *v == version && *w == why)
    {
        return false;
    }
    match held {
        Some(h) => eprintln!(
            "worker: refusing the weights version {version} of {}: {why}; keeping version {h}",
            keys.weights
        ),
        None => eprintln!(
            "worker: refusing the weights version {version} of {}: {why}; waiting for weights \
             signed by the learner",
            keys.weights
        ),
    }
    *last = Some((version, why));
    true
}

/// The self-play config of a publication: the learner's settings, `threads` local threads.
fn config_of(settings_json: &str, threads: usize) -> anyhow::Result<TrainConfig> {
    let s: Settings = serde_json::from_str(settings_json)
        .context("the learner's published settings (is this worker older than the learner?)")?;
    let mut config = TrainConfig {
        mcts: s.mcts,
        selfplay: s.selfplay,
        broker: s.broker,
        ..TrainConfig::default()
    };
    config.selfplay.workers = threads;
    config
        .validate()
        .context("the learner's published settings")?;
    Ok(config)
}

/// The connection and its retries.
struct Link<'a> {
    url: &'a BrokerUrl,
    con: Option<redis::Connection>,
    backoff: Backoff,
    reconnects: u64,
    quiet: bool,
    said_down: bool,
    /// Whether a connection was ever made.
    connected_once: bool,
    /// A TLS mismatch at the first connection: the worker stops with it.
    fatal: Option<anyhow::Error>,
}

impl Link<'_> {
    fn get(&mut self) -> Option<&mut redis::Connection> {
        if self.con.is_none() && self.backoff.ready() {
            match connect(self.url, CONNECT_TIMEOUT, IO_TIMEOUT) {
                Ok(con) => {
                    if self.said_down {
                        eprintln!("worker: connected to {} again", self.url);
                        self.reconnects += 1;
                    }
                    self.said_down = false;
                    self.connected_once = true;
                    self.backoff.succeeded();
                    self.con = Some(con);
                }
                // Never connected and a TLS set-up that does not match the server's: no retry
                // mends it (later, as after a certificate change, it is retried).
                Err(e) if !self.connected_once && is_mismatch(&e) => self.fatal = Some(e),
                Err(e) => self.down(&e),
            }
        }
        self.con.as_mut()
    }

    fn down(&mut self, e: &anyhow::Error) {
        self.con = None;
        let delay = self.backoff.failed();
        if !self.said_down || !self.quiet && delay >= Duration::from_secs(10) {
            eprintln!(
                "worker: {e:#}; playing on, retrying in {:.1} s (up to 10 s)",
                delay.as_secs_f64()
            );
        }
        self.said_down = true;
    }
}

fn sleep_unless(stop: &AtomicBool, total: Duration) {
    let until = Instant::now() + total;
    while !stop.load(Ordering::SeqCst) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20).min(until - Instant::now()));
    }
}

/// Sends up to [`SEND_BATCH`] games of the outbox in one round trip; `Ok(n)`: sent `n`.
fn send(
    con: &mut redis::Connection,
    keys: &Keys,
    outbox: &VecDeque<Vec<u8>>,
    max_len: u64,
) -> redis::RedisResult<usize> {
    let n = outbox.len().min(SEND_BATCH);
    let mut pipe = redis::pipe();
    for record in outbox.iter().take(n) {
        pipe.cmd("XADD")
            .arg(&keys.games)
            .arg("MAXLEN")
            .arg("~")
            .arg(max_len)
            .arg("*")
            .arg(GAME_FIELD)
            .arg(record.as_slice())
            .ignore();
    }
    pipe.query::<()>(con)?;
    Ok(n)
}

/// Runs a worker until `stop` is set (Ctrl-C) or its `games` are played and sent.
///
/// # Errors
/// Bad settings or weights from the learner, a failing self-play thread; never Redis being
/// away (that is retried).
pub fn run_worker_process(
    opts: &WorkerOptions,
    stop: &AtomicBool,
) -> anyhow::Result<WorkerSummary> {
    let keys = Keys::new(&opts.run)?;
    let id = worker_id();
    let mut trust = opts.trust.clone();
    let mut refused = 0u64;
    let mut last_refusal: Option<(u64, String)> = None;
    let mut link = Link {
        url: &opts.url,
        con: None,
        backoff: Backoff::new(),
        reconnects: 0,
        quiet: opts.quiet,
        said_down: false,
        connected_once: false,
        fatal: None,
    };
    let device = oware_model::device(opts.device)?;
    // The first weights.
    let mut said_waiting = false;
    let first = loop {
        if stop.load(Ordering::SeqCst) {
            return Ok(WorkerSummary {
                worker: id,
                ..WorkerSummary::default()
            });
        }
        link.get();
        if let Some(e) = link.fatal.take() {
            return Err(e);
        }
        if let Some(con) = link.get() {
            match fetch(con, &keys, &opts.run, &mut trust) {
                Ok(Fetch::Signed(f)) => break f,
                Ok(Fetch::Refused(v, why)) => {
                    if note_refusal(&mut last_refusal, v, why, &keys, None) {
                        refused += 1;
                    }
                }
                Ok(Fetch::Nothing) => {
                    if !said_waiting {
                        eprintln!(
                            "worker: no weights published for run '{}' on {} yet (start `oware \
                             train --broker URL` with a run directory named {}); waiting",
                            opts.run, opts.url, opts.run
                        );
                        said_waiting = true;
                    }
                }
                Err(e)
                    if e.chain()
                        .any(|c| c.downcast_ref::<redis::RedisError>().is_some()) =>
                {
                    link.down(&e);
                }
                Err(e) => return Err(e),
            }
        }
        sleep_unless(stop, Duration::from_millis(200));
    };
    let config = config_of(&first.settings_json, opts.threads)?;
    let evaluator = NetEvaluator::from_weights_bytes(&first.model, first.weights, &device)
        .with_context(|| format!("the weights version {} of {}", first.version, keys.weights))?;
    let mut held = first.version;
    let settings_json = first.settings_json;
    let learner_key = match &trust {
        Trust::Key(k) => k.fingerprint(),
        Trust::Fingerprint(fp) => fp.clone(),
        Trust::FirstSeen(k) => {
            let fp = k.map(|k| k.fingerprint()).unwrap_or_default();
            eprintln!(
                "worker: no --learner-key given: trusting the key {fp} that signed the first \
                 weights (anyone who wrote them first would be trusted; give --learner-key {fp} \
                 to pin it)"
            );
            fp
        }
    };
    let weights = SharedWeights::new(evaluator);
    let stats = SelfplayStats::default();
    let worker_stop = AtomicBool::new(false);
    let pause = AtomicBool::new(false);
    let left = opts.games.map(AtomicU64::new);
    let control = WorkerControl {
        stop: &worker_stop,
        pause: &pause,
        games_left: left.as_ref(),
    };
    eprintln!(
        "worker {id}: run '{}' on {}, weights version {held}, {} threads x {} games, {} sims per move",
        opts.run,
        opts.url,
        config.selfplay.worker_count(),
        config.selfplay.games_per_worker,
        config.mcts.sims
    );
    let max_plies = config.selfplay.max_plies;
    let max_len = config.broker.max_stream_len;
    let seed: u64 = rand::random();
    let started = Instant::now();
    let mut summary = WorkerSummary {
        worker: id.clone(),
        weights_loaded: 1,
        refused,
        learner_key,
        ..WorkerSummary::default()
    };
    // Games dropped since the last send that went through (a Cell: the game handler and
    // the send both touch it).
    let dropped_in_a_row = std::cell::Cell::new(0u64);
    let mut refused_until: Option<(Vec<u8>, Instant)> = None;
    let mut outbox: VecDeque<Vec<u8>> = VecDeque::new();
    let mut seq = 0u64;
    let mut last_poll = Instant::now();
    let mut last_rates = (Instant::now(), 0u64, 0u64, 0u64);
    let mut said_settings = false;
    let mut encode_error: Option<anyhow::Error> = None;
    let mut take = |record: GameRecord,
                    held: u64,
                    summary: &mut WorkerSummary,
                    outbox: &mut VecDeque<Vec<u8>>| {
        summary.games += 1;
        summary.positions += record.samples.len() as u64;
        match wire::encode(&record, &summary.worker, seq, held, max_plies) {
            Ok(bytes) => {
                seq += 1;
                if outbox.len() >= OUTBOX_GAMES {
                    outbox.pop_front();
                    summary.dropped += 1;
                    dropped_in_a_row.set(dropped_in_a_row.get() + 1);
                }
                outbox.push_back(bytes);
                if dropped_in_a_row.get() >= MAX_SEQ_GAP / 2 {
                    // So many games lost in a row that the learner would take the next
                    // sequence number for a forgery: go on as a new worker.
                    let new = worker_id();
                    eprintln!(
                        "worker {}: {} games dropped while Redis was away; going on as worker {new}",
                        summary.worker,
                        dropped_in_a_row.get()
                    );
                    summary.worker = new;
                    seq = 0;
                    dropped_in_a_row.set(0);
                }
            }
            Err(e) => encode_error = Some(e),
        }
    };
    let ((), failure) = with_workers(&config, &weights, &stats, &control, seed, |rx, failure| {
        let mut done = false;
        while !done && !stop.load(Ordering::SeqCst) && !failure.is_set() {
            match rx.recv_timeout(Duration::from_millis(50)) {
                Ok(record) => take(record, held, &mut summary, &mut outbox),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => done = true,
            }
            while let Ok(record) = rx.try_recv() {
                take(record, held, &mut summary, &mut outbox);
            }
            if !outbox.is_empty()
                && let Some(con) = link.get()
            {
                match send(con, &keys, &outbox, max_len) {
                    Ok(n) => {
                        outbox.drain(..n);
                        summary.sent += n as u64;
                        dropped_in_a_row.set(0);
                    }
                    Err(e) => link.down(&anyhow::anyhow!(
                        "sending games to {}: {}",
                        opts.url,
                        opts.url.describe(&e)
                    )),
                }
            }
            if last_poll.elapsed() >= VERSION_POLL {
                last_poll = Instant::now();
                if let Some(con) = link.get() {
                    match published_version(con, &keys) {
                        Ok(Some(v))
                            if v != held.to_string().into_bytes()
                                && refused_until.as_ref().is_none_or(|(rv, until)| {
                                    *rv != v || Instant::now() >= *until
                                }) =>
                        {
                            match fetch(con, &keys, &opts.run, &mut trust) {
                                Ok(Fetch::Signed(f)) if f.version <= held => {
                                    let why = format!(
                                        "it is older than the version {held} held (an old publication written again?)"
                                    );
                                    if note_refusal(
                                        &mut last_refusal,
                                        f.version,
                                        why,
                                        &keys,
                                        Some(held),
                                    ) {
                                        summary.refused += 1;
                                    }
                                    refused_until = Some((v, Instant::now() + REFUSED_PAUSE));
                                }
                                Ok(Fetch::Refused(rv, why)) => {
                                    if note_refusal(&mut last_refusal, rv, why, &keys, Some(held)) {
                                        summary.refused += 1;
                                    }
                                    refused_until = Some((v, Instant::now() + REFUSED_PAUSE));
                                }
                                Ok(Fetch::Signed(f)) => {
                                    refused_until = None;
                                    match NetEvaluator::from_weights_bytes(
                                        &f.model, f.weights, &device,
                                    ) {
                                        Ok(net) => {
                                            weights.set(net);
                                            held = f.version;
                                            summary.weights_loaded += 1;
                                            if f.settings_json != settings_json && !said_settings {
                                                eprintln!(
                                                    "worker: the learner's settings changed; this worker keeps the ones it started with (restart it to use the new ones)"
                                                );
                                                said_settings = true;
                                            }
                                        }
                                        Err(e) => eprintln!(
                                            "worker: the weights version {} cannot be used ({e}); keeping version {held}",
                                            f.version
                                        ),
                                    }
                                }
                                Ok(Fetch::Nothing) => {}
                                Err(e) => link.down(&e),
                            }
                        }
                        Ok(_) => {}
                        Err(e) => link.down(&anyhow::anyhow!("{}", opts.url.describe(&e))),
                    }
                }
            }
            if !opts.quiet && last_rates.0.elapsed() >= RATE_EVERY {
                let dt = last_rates.0.elapsed().as_secs_f64();
                let sims = stats.sims.load(Ordering::Relaxed);
                eprintln!(
                    "worker {}: {} games sent, {:.2} games/s, {:.0} positions/s, {:.0} sims/s, weights v{held}{}",
                    summary.worker,
                    summary.sent,
                    (summary.games - last_rates.1) as f64 / dt,
                    (summary.positions - last_rates.2) as f64 / dt,
                    (sims - last_rates.3) as f64 / dt,
                    if outbox.is_empty() {
                        String::new()
                    } else {
                        format!(", {} waiting to be sent", outbox.len())
                    }
                );
                last_rates = (Instant::now(), summary.games, summary.positions, sims);
            }
        }
    })?;
    // The games finished so far are sent (for a few seconds at most if Redis is away).
    let until = Instant::now() + Duration::from_secs(5);
    while !outbox.is_empty() && Instant::now() < until {
        match link.get() {
            Some(con) => match send(con, &keys, &outbox, max_len) {
                Ok(n) => {
                    outbox.drain(..n);
                    summary.sent += n as u64;
                }
                Err(e) => link.down(&anyhow::anyhow!("{}", opts.url.describe(&e))),
            },
            None => std::thread::sleep(Duration::from_millis(50)),
        }
    }
    summary.unsent = outbox.len() as u64;
    summary.version = held;
    summary.reconnects = link.reconnects;
    summary.seconds = started.elapsed().as_secs_f64();
    let secs = summary.seconds.max(1e-9);
    summary.positions_per_sec = summary.positions as f64 / secs;
    summary.games_per_sec = summary.games as f64 / secs;
    summary.sims_per_sec = stats.sims.load(Ordering::Relaxed) as f64 / secs;
    if let Some(e) = failure {
        return Err(e.context(format!("worker {}: self-play stopped", summary.worker)));
    }
    if let Some(e) = encode_error {
        return Err(e);
    }
    Ok(summary)
}
