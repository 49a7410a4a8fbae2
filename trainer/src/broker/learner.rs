//! The learner's side of the broker: publishes weights, starts the Redis thread
//! ([`super::stream`]) that reads games from the stream (so Redis never stalls training), judges
//! each game with the ledger ([`super::ledger`]) and acknowledges them once a checkpoint holds
//! them. See the module docs of [`crate::broker`].

pub use super::ledger::{BrokerState, Ledger, MAX_TRACKED_WORKERS, Rules, Verdict, WorkerTally};
use super::sign::{self, LearnerKey};
use super::stream::{
    CONNECT_TIMEOUT, Command, IO_TIMEOUT, Incoming, Link, RedisThread, ensure_group, sleep_unless,
};
use super::{Backoff, BrokerUrl, Keys, connect, is_mismatch};
use crate::config::TrainConfig;
use crate::selfplay::GameRecord;
use oware_model::NetEvaluator;
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Games held unacknowledged (taken, waiting for a checkpoint) past which the learner
/// checkpoints early; at twice it, the Redis thread stops reading until a checkpoint. At least
/// this many, and at least twice what the learner needs before it trains, so it can always
/// reach a checkpoint.
pub const MAX_UNACKED: usize = 100_000;
/// Workers whose rates TensorBoard gets a tag of their own (the busiest); the others are
/// summed in `broker/worker/others/games_per_sec`.
pub const TOP_WORKERS: usize = 16;

/// One publication of the weights.
#[derive(Clone, Debug)]
pub struct Publication {
    /// Its version.
    pub version: u64,
    /// The network shape, JSON.
    pub model: String,
    /// The `[mcts]`, `[selfplay]` and `[broker]` sections, JSON.
    pub settings: String,
    /// The weights (burnpack).
    pub weights: Vec<u8>,
    /// The learner's signature of [`sign::message`], hex.
    pub signature: String,
    /// The learner's public key, hex.
    pub key: String,
}

impl Publication {
    /// The publication of `net` as `version` of run `run` with `config`'s settings, signed
    /// with `key`.
    pub fn new(
        version: u64,
        net: &NetEvaluator,
        config: &TrainConfig,
        run: &str,
        key: &LearnerKey,
    ) -> anyhow::Result<Self> {
        let model = serde_json::to_string(net.config())?;
        let settings = serde_json::to_string(&serde_json::json!({
            "mcts": config.mcts,
            "selfplay": config.selfplay,
            "broker": config.broker,
        }))?;
        let weights = net.weights_bytes()?;
        let signature = key.sign(&sign::message(run, version, &model, &settings, &weights));
        Ok(Publication {
            version,
            model,
            settings,
            weights,
            signature,
            key: key.public().hex(),
        })
    }

    /// The fields of the weights hash, as written.
    pub fn fields(&self) -> Vec<(&'static str, Cow<'_, [u8]>)> {
        let owned = |s: String| Cow::Owned(s.into_bytes());
        vec![
            ("version", owned(self.version.to_string())),
            ("model", Cow::Borrowed(self.model.as_bytes())),
            ("settings", Cow::Borrowed(self.settings.as_bytes())),
            ("weights", Cow::Borrowed(&self.weights[..])),
            (
                "checksum",
                owned(format!("{:016x}", oware_model::checksum(&self.weights))),
            ),
            ("signature", Cow::Borrowed(self.signature.as_bytes())),
            ("key", Cow::Borrowed(self.key.as_bytes())),
        ]
    }

    /// Replaces the weights hash with this publication (fields of other writers go).
    pub(super) fn write(&self, con: &mut redis::Connection, key: &str) -> redis::RedisResult<()> {
        let mut pipe = redis::pipe();
        pipe.atomic().cmd("DEL").arg(key).ignore();
        pipe.cmd("HSET").arg(key);
        for (name, value) in self.fields() {
            pipe.arg(name).arg(value.as_ref());
        }
        pipe.ignore().query(con)
    }
}

/// Rates and counts for the progress line and TensorBoard.
#[derive(Clone, Debug, Default)]
pub struct BrokerReport {
    /// Games taken per second since the last report.
    pub ingest_games_per_sec: f64,
    /// Mean version lag of the games taken since the last report.
    pub mean_version_lag: f64,
    /// Workers heard from in the last minute.
    pub active_workers: usize,
    /// Games per second per active worker since the last report.
    pub games_per_worker_per_sec: f64,
    /// Games per second since the last report of each worker heard from in the last minute.
    pub per_worker: Vec<(String, f64)>,
    /// Whether the Redis connection is up.
    pub connected: bool,
    /// The run's totals.
    pub totals: BrokerState,
    /// The summed rate of the workers not in `per_worker` (past the [`TOP_WORKERS`] busiest).
    pub others_per_sec: f64,
}

impl BrokerReport {
    /// The progress line's broker part.
    pub fn line(&self) -> String {
        format!(
            "broker{}: {} workers, {:.1} games/s, lag {:.1}, rejected {}, stale {}, dropped {}",
            if self.connected { "" } else { " (Redis away)" },
            self.active_workers,
            self.ingest_games_per_sec,
            self.mean_version_lag,
            self.totals.rejected,
            self.totals.stale,
            self.totals.dropped()
        )
    }
}

/// What [`LearnerBroker::start`] needs.
pub struct Start<'a> {
    /// The broker.
    pub url: &'a BrokerUrl,
    /// The run's name in the keys.
    pub run: &'a str,
    /// The run's config (its settings are published for the workers).
    pub config: &'a TrainConfig,
    /// The broker state of the checkpoint resumed from (default for a new run).
    pub state: BrokerState,
    /// The weights to publish first.
    pub net: &'a NetEvaluator,
    /// A new run: clear the games stream.
    pub fresh: bool,
    /// Set to give up waiting for Redis (Ctrl-C).
    pub stop: &'a AtomicBool,
    /// The key that signs the publications ([`LearnerKey::load_or_create`] in the run's
    /// directory).
    pub key: Arc<LearnerKey>,
}

/// The learner's broker: owns the Redis thread and the de-duplication state.
pub struct LearnerBroker {
    url: BrokerUrl,
    run: String,
    key: Arc<LearnerKey>,
    ledger: Ledger,
    rx: Receiver<Incoming>,
    commands: Sender<Command>,
    thread: Option<JoinHandle<()>>,
    stop: Arc<AtomicBool>,
    link: Arc<Mutex<Link>>,
    /// Entry ids of games taken that are not in a checkpoint yet.
    unacked: Vec<String>,
    /// Entry ids of the checkpoint being written.
    in_checkpoint: Vec<String>,
    /// Entry ids to acknowledge at once (nothing a crash could lose: rejected, duplicate,
    /// stale, rate-limited and gone entries, and games without positions).
    ack_now: Vec<String>,
    /// Games held unacknowledged, shared with the Redis thread (which stops reading at
    /// twice `max_unacked`).
    held: Arc<AtomicUsize>,
    max_unacked: usize,
    window_start: Instant,
    window_games: u64,
    window_lag: u64,
    recent: HashMap<String, (Instant, u64)>,
    notes: Vec<String>,
    rejected_notes: u64,
}

/// Reports the first few rejections in full, then only counts.
const REJECTION_NOTES: u64 = 10;

impl LearnerBroker {
    /// Connects (retrying with backoff until Redis answers or `start.stop` is set; then
    /// `None`), publishes the weights as the next version, makes sure the consumer group
    /// exists, and starts the Redis thread. A new run (`fresh`) first clears the run's games
    /// stream (games of an older run of the same name are not this run's). `notes` receives
    /// what the user should know.
    pub fn start(
        start: Start<'_>,
        notes: &mut dyn FnMut(&str),
    ) -> anyhow::Result<Option<LearnerBroker>> {
        let Start {
            url,
            run,
            config,
            mut state,
            net,
            fresh,
            stop,
            key,
        } = start;
        let keys = Keys::new(run)?;
        let mut backoff = Backoff::new();
        let mut con = loop {
            if stop.load(Ordering::SeqCst) {
                return Ok(None);
            }
            match connect(url, CONNECT_TIMEOUT, IO_TIMEOUT) {
                Ok(con) => break con,
                // A TLS set-up that does not match the server's: no retry mends it.
                Err(e) if is_mismatch(&e) => return Err(e),
                Err(e) => {
                    let delay = backoff.failed();
                    notes(&format!("{e:#}; retrying in {:.1} s", delay.as_secs_f64()));
                    sleep_unless(stop, delay);
                }
            }
        };
        let on_redis: Option<u64> = redis::cmd("HGET")
            .arg(&keys.weights)
            .arg("version")
            .query(&mut con)
            .map_err(|e| {
                anyhow::anyhow!("reading {} on {url}: {}", keys.weights, url.describe(&e))
            })?;
        if fresh {
            redis::cmd("DEL")
                .arg(&keys.games)
                .query::<()>(&mut con)
                .map_err(|e| {
                    anyhow::anyhow!("clearing {} on {url}: {}", keys.games, url.describe(&e))
                })?;
        }
        state.version = state
            .version
            .max(on_redis.unwrap_or(0))
            .checked_add(1)
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "{} on {url} holds the last version there is (a forged value?): delete it \
                     (DEL {}) and start again",
                    keys.weights,
                    keys.weights
                )
            })?;
        let publication = Arc::new(Publication::new(state.version, net, config, run, &key)?);
        publication
            .write(&mut con, &keys.weights)
            .map_err(|e| anyhow::anyhow!("publishing weights on {url}: {}", url.describe(&e)))?;
        ensure_group(&mut con, &keys.games).map_err(|e| {
            anyhow::anyhow!("creating the consumer group on {url}: {}", url.describe(&e))
        })?;
        notes(&format!(
            "broker {url}: published weights version {} as run '{run}' ({} and {}), signed by \
             the key {} (fingerprint {}); waiting for `oware worker --broker URL --run {run} \
             --learner-key {}`",
            state.version,
            keys.weights,
            keys.games,
            key.public().hex(),
            key.public().fingerprint(),
            key.public().fingerprint()
        ));
        let (tx, rx) = std::sync::mpsc::sync_channel(4 * config.broker.read_batch);
        let max_unacked =
            MAX_UNACKED.max(2 * (config.replay.min_samples + config.schedule.batch_size));
        let held = Arc::new(AtomicUsize::new(0));
        let (commands, command_rx) = std::sync::mpsc::channel();
        let stop_thread = Arc::new(AtomicBool::new(false));
        let link = Arc::new(Mutex::new(Link {
            connected: true,
            ..Link::default()
        }));
        let written = Some(Arc::clone(&publication));
        let mut thread = RedisThread {
            url: url.clone(),
            keys,
            con: Some(con),
            backoff: Backoff::new(),
            publication,
            acks: Vec::new(),
            pending_cursor: Some("0".to_string()),
            read_batch: config.broker.read_batch,
            tx,
            commands: command_rx,
            stop: Arc::clone(&stop_thread),
            link: Arc::clone(&link),
            last_weights_check: Instant::now(),
            last_full_check: Instant::now(),
            written,
            held: Arc::clone(&held),
            max_held: 2 * max_unacked,
            count: config.broker.read_batch,
        };
        let handle = std::thread::Builder::new()
            .name("broker".into())
            .spawn(move || thread.run())?;
        let rules = Rules {
            max_lag: config.broker.max_version_lag,
            max_plies: config.selfplay.max_plies,
            games_per_worker_per_minute: config.broker.max_games_per_worker_per_minute,
        };
        Ok(Some(LearnerBroker {
            url: url.clone(),
            run: run.to_string(),
            key,
            ledger: Ledger::new(state, rules),
            rx,
            commands,
            thread: Some(handle),
            stop: stop_thread,
            link,
            unacked: Vec::new(),
            in_checkpoint: Vec::new(),
            ack_now: Vec::new(),
            held,
            max_unacked,
            window_start: Instant::now(),
            window_games: 0,
            window_lag: 0,
            recent: HashMap::new(),
            notes: Vec::new(),
            rejected_notes: 0,
        }))
    }

    /// The state to save in the next checkpoint.
    pub fn state(&self) -> &BrokerState {
        &self.ledger.state
    }

    /// Whether so many games wait for a checkpoint to be acknowledged that the learner should
    /// write one now (the Redis thread stops reading at twice as many).
    pub fn needs_checkpoint(&self) -> bool {
        self.unacked.len() >= self.max_unacked
    }

    /// Games taken and not yet acknowledged (waiting for a checkpoint).
    pub fn unacknowledged(&self) -> usize {
        self.unacked.len() + self.in_checkpoint.len()
    }

    fn update_held(&self) {
        self.held.store(self.unacknowledged(), Ordering::SeqCst);
    }

    /// Handles the games that have arrived, waiting up to `wait` for the first; `take` gets
    /// each game to train on. Returns how many records were handled.
    pub fn poll(&mut self, wait: Duration, take: &mut dyn FnMut(GameRecord)) -> usize {
        let mut handled = 0;
        let first = if wait.is_zero() {
            self.rx
                .try_recv()
                .map_err(|e| matches!(e, TryRecvError::Disconnected))
        } else {
            self.rx
                .recv_timeout(wait)
                .map_err(|e| matches!(e, RecvTimeoutError::Disconnected))
        };
        let mut next = first.ok();
        while let Some(msg) = next {
            handled += 1;
            self.handle(msg, take);
            next = self.rx.try_recv().ok();
        }
        if !self.ack_now.is_empty() {
            // A gone thread is reported by `take_notes`; the learner goes on.
            let _ = self
                .commands
                .send(Command::Ack(std::mem::take(&mut self.ack_now)));
        }
        self.update_held();
        handled
    }

    fn handle(&mut self, msg: Incoming, take: &mut dyn FnMut(GameRecord)) {
        match msg {
            Incoming::Game(id, game) => {
                let now = Instant::now();
                let verdict = self.ledger.judge(&game, now);
                // A flood of fresh ids within a minute is not tracked past the bound.
                if self.recent.len() < MAX_TRACKED_WORKERS || self.recent.contains_key(&game.worker)
                {
                    let entry = self.recent.entry(game.worker.clone()).or_insert((now, 0));
                    entry.0 = now;
                    if verdict == Verdict::Taken {
                        entry.1 += 1;
                    }
                }
                if verdict == Verdict::Taken {
                    self.window_games += 1;
                    let lag = self.ledger.state.version.saturating_sub(game.version);
                    self.window_lag = self.window_lag.saturating_add(lag);
                    if game.record.samples.is_empty() {
                        self.ack_now.push(id);
                    } else {
                        self.unacked.push(id);
                    }
                    take(game.record);
                } else {
                    self.ack_now.push(id);
                }
            }
            Incoming::Rejected(id, why) => {
                self.ack_now.push(id.clone());
                self.ledger.state.rejected = self.ledger.state.rejected.saturating_add(1);
                self.rejected_notes += 1;
                if self.rejected_notes <= REJECTION_NOTES {
                    self.notes
                        .push(format!("broker: rejected stream entry {id}: {why}"));
                } else if self.rejected_notes == REJECTION_NOTES + 1 {
                    self.notes.push(
                        "broker: more records rejected; only counted from now on (broker/rejected)"
                            .to_string(),
                    );
                }
            }
            Incoming::Gone(id) => self.ack_now.push(id),
            Incoming::Note(text) => self.notes.push(text),
        }
    }

    /// Messages for the user (rejections, the link going down and up), taken once.
    pub fn take_notes(&mut self) -> Vec<String> {
        let mut link = self.link.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(e) = link.last_error.take() {
            self.notes.push(e);
        }
        drop(link);
        std::mem::take(&mut self.notes)
    }

    /// Publishes `net` as the next version (sent by the Redis thread; the newest wins).
    pub fn publish(&mut self, net: &NetEvaluator, config: &TrainConfig) -> anyhow::Result<()> {
        let version = self
            .ledger
            .state
            .version
            .checked_add(1)
            .ok_or_else(|| anyhow::anyhow!("no weights version is left to publish"))?;
        let publication = Publication::new(version, net, config, &self.run, &self.key)?;
        self.ledger.state.version = version;
        // A gone thread is reported by `take_notes`; the learner goes on.
        let _ = self.commands.send(Command::Publish(Arc::new(publication)));
        Ok(())
    }

    /// Call before writing a checkpoint: its games' entries are acknowledged by
    /// [`LearnerBroker::checkpoint_written`].
    pub fn checkpoint_starting(&mut self) {
        self.in_checkpoint = std::mem::take(&mut self.unacked);
    }

    /// Call after a checkpoint was written: acknowledges its entries. After a failed write,
    /// [`LearnerBroker::checkpoint_failed`] keeps them for the next one.
    pub fn checkpoint_written(&mut self) {
        let ids = std::mem::take(&mut self.in_checkpoint);
        if !ids.is_empty() {
            let _ = self.commands.send(Command::Ack(ids));
        }
        self.update_held();
    }

    /// Call when writing a checkpoint failed: its entries wait for the next one.
    pub fn checkpoint_failed(&mut self) {
        let mut ids = std::mem::take(&mut self.in_checkpoint);
        ids.append(&mut self.unacked);
        self.unacked = ids;
        self.update_held();
    }

    /// Rates since the last report, and the totals.
    pub fn report(&mut self) -> BrokerReport {
        let dt = self.window_start.elapsed().as_secs_f64().max(1e-9);
        let minute = Duration::from_secs(60);
        self.recent.retain(|_, (seen, _)| seen.elapsed() < minute);
        let active = self.recent.len();
        let report = BrokerReport {
            ingest_games_per_sec: self.window_games as f64 / dt,
            mean_version_lag: if self.window_games > 0 {
                self.window_lag as f64 / self.window_games as f64
            } else {
                0.0
            },
            active_workers: active,
            games_per_worker_per_sec: if active > 0 {
                self.window_games as f64 / dt / active as f64
            } else {
                0.0
            },
            per_worker: Vec::new(),
            connected: self.link.lock().map(|l| l.connected).unwrap_or(false),
            totals: self.ledger.state.clone(),
            others_per_sec: 0.0,
        };
        let mut report = report;
        let mut rates: Vec<(String, f64)> = self
            .recent
            .iter()
            .map(|(id, (_, n))| (id.clone(), *n as f64 / dt))
            .collect();
        rates.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        report.others_per_sec = rates.iter().skip(TOP_WORKERS).map(|(_, r)| r).sum();
        rates.truncate(TOP_WORKERS);
        report.per_worker = rates;
        self.window_start = Instant::now();
        self.window_games = 0;
        self.window_lag = 0;
        for (_, n) in self.recent.values_mut() {
            *n = 0;
        }
        report
    }

    /// Stops the Redis thread after it has sent the acknowledgements it holds (it gives up
    /// after a few seconds when Redis is away: the entries stay pending and are recognised as
    /// duplicates when the run resumes).
    pub fn shutdown(mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(handle) = self.thread.take() {
            // A panic in the thread has already been printed; nothing is lost by it.
            let _ = handle.join();
        }
        let reconnects = self.link.lock().map(|l| l.reconnects).unwrap_or(0);
        if reconnects > 0 {
            eprintln!(
                "broker {}: the connection was re-established {reconnects} time(s)",
                self.url
            );
        }
    }
}
