//! The learner's side of the broker: publishes weights, reads games from the stream on a
//! thread of its own (so Redis never stalls training), de-duplicates and ages them, and
//! acknowledges them once a checkpoint holds them. See the module docs of [`crate::broker`].

use super::wire::{self, Rejected, WireGame};
use super::{Backoff, BrokerUrl, GAME_FIELD, GROUP, Keys, connect, is_mismatch};
use crate::config::TrainConfig;
use crate::selfplay::GameRecord;
use oware_model::NetEvaluator;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, SyncSender, TryRecvError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Most workers remembered for de-duplication; beyond it the one seen longest ago is forgotten.
pub const MAX_TRACKED_WORKERS: usize = 10_000;
/// Timeout for connecting to Redis.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// Timeout for each Redis reply.
const IO_TIMEOUT: Duration = Duration::from_secs(5);
/// How long one read waits for new games.
const BLOCK_MS: usize = 100;
/// How often the thread checks that Redis still holds the published weights.
const WEIGHTS_CHECK: Duration = Duration::from_secs(2);

/// What the learner knows of one worker (saved in checkpoints).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkerTally {
    /// The lowest sequence number not seen yet: records below it are duplicates.
    pub next_seq: u64,
    /// Games taken into the replay buffer.
    pub games: u64,
    /// Games dropped as stale.
    pub stale: u64,
    /// Duplicate records dropped.
    pub duplicates: u64,
    /// Sequence numbers skipped (games that never arrived: dropped by a worker whose Redis was
    /// away too long, or trimmed from the stream).
    pub missing: u64,
    /// The run's game count when this worker was last heard from (for forgetting the oldest).
    pub last_seen: u64,
}

/// The broker's part of a run's state, saved in every checkpoint (`meta.json`, `extra.broker`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BrokerState {
    /// The newest published weights version.
    pub version: u64,
    /// Games taken from workers.
    pub games: u64,
    /// Records rejected by validation.
    pub rejected: u64,
    /// Games dropped as stale.
    pub stale: u64,
    /// Duplicate records dropped.
    pub duplicates: u64,
    /// Per worker id.
    pub workers: BTreeMap<String, WorkerTally>,
}

/// What happened to one record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Taken.
    Taken,
    /// Played with weights too old (or unknown to this learner).
    Stale,
    /// Seen before.
    Duplicate,
}

impl BrokerState {
    /// Decides on a valid game with the learner's newest version and `max_lag`, and counts it.
    pub fn judge(&mut self, game: &WireGame, max_lag: u64) -> Verdict {
        let seen = self.games + self.stale;
        if !self.workers.contains_key(&game.worker) && self.workers.len() >= MAX_TRACKED_WORKERS {
            let oldest = self
                .workers
                .iter()
                .min_by_key(|(_, t)| t.last_seen)
                .map(|(id, _)| id.clone());
            if let Some(id) = oldest {
                self.workers.remove(&id);
            }
        }
        let tally = self.workers.entry(game.worker.clone()).or_default();
        tally.last_seen = seen;
        if game.seq < tally.next_seq {
            tally.duplicates += 1;
            self.duplicates += 1;
            return Verdict::Duplicate;
        }
        tally.missing += game.seq - tally.next_seq;
        tally.next_seq = game.seq + 1;
        // A version above the newest comes from weights this learner never published.
        let fresh = game.version <= self.version && self.version - game.version <= max_lag;
        if fresh {
            tally.games += 1;
            self.games += 1;
            Verdict::Taken
        } else {
            tally.stale += 1;
            self.stale += 1;
            Verdict::Stale
        }
    }
}

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
}

impl Publication {
    /// The publication of `net` as `version` with `config`'s settings.
    pub fn new(version: u64, net: &NetEvaluator, config: &TrainConfig) -> anyhow::Result<Self> {
        Ok(Publication {
            version,
            model: serde_json::to_string(net.config())?,
            settings: serde_json::to_string(&serde_json::json!({
                "mcts": config.mcts,
                "selfplay": config.selfplay,
                "broker": config.broker,
            }))?,
            weights: net.weights_bytes()?,
        })
    }

    fn write(&self, con: &mut redis::Connection, key: &str) -> redis::RedisResult<()> {
        redis::pipe()
            .atomic()
            .cmd("HSET")
            .arg(key)
            .arg("version")
            .arg(self.version)
            .arg("model")
            .arg(&self.model)
            .arg("settings")
            .arg(&self.settings)
            .arg("weights")
            .arg(&self.weights)
            .arg("checksum")
            .arg(format!("{:016x}", oware_model::checksum(&self.weights)))
            .ignore()
            .query(con)
    }
}

/// A message from the Redis thread.
enum Incoming {
    /// A valid game, with its stream entry id.
    Game(String, Box<WireGame>),
    /// A record that failed validation.
    Rejected(String, Rejected),
    /// An entry that is gone from the stream (trimmed while pending): acknowledge only.
    Gone(String),
}

/// A request to the Redis thread.
enum Command {
    Publish(Arc<Publication>),
    Ack(Vec<String>),
}

/// The link's health, shared with the thread.
#[derive(Default)]
struct Link {
    connected: bool,
    last_error: Option<String>,
    reconnects: u64,
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
}

impl BrokerReport {
    /// The progress line's broker part.
    pub fn line(&self) -> String {
        format!(
            "broker{}: {} workers, {:.1} games/s, lag {:.1}, rejected {}, stale {}",
            if self.connected { "" } else { " (Redis away)" },
            self.active_workers,
            self.ingest_games_per_sec,
            self.mean_version_lag,
            self.totals.rejected,
            self.totals.stale
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
}

/// The learner's broker: owns the Redis thread and the de-duplication state.
pub struct LearnerBroker {
    url: BrokerUrl,
    state: BrokerState,
    max_lag: u64,
    rx: Receiver<Incoming>,
    commands: Sender<Command>,
    thread: Option<JoinHandle<()>>,
    stop: Arc<AtomicBool>,
    link: Arc<Mutex<Link>>,
    /// Entry ids whose games (or verdicts) are not in a checkpoint yet.
    unacked: Vec<String>,
    /// Entry ids of the checkpoint being written.
    in_checkpoint: Vec<String>,
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
        state.version = state.version.max(on_redis.unwrap_or(0)) + 1;
        let publication = Arc::new(Publication::new(state.version, net, config)?);
        publication
            .write(&mut con, &keys.weights)
            .map_err(|e| anyhow::anyhow!("publishing weights on {url}: {}", url.describe(&e)))?;
        ensure_group(&mut con, &keys.games).map_err(|e| {
            anyhow::anyhow!("creating the consumer group on {url}: {}", url.describe(&e))
        })?;
        notes(&format!(
            "broker {url}: published weights version {} as run '{run}' ({} and {}); waiting for \
             `oware worker --broker URL --run {run}`",
            state.version, keys.weights, keys.games
        ));
        let (tx, rx) = std::sync::mpsc::sync_channel(4 * config.broker.read_batch);
        let (commands, command_rx) = std::sync::mpsc::channel();
        let stop_thread = Arc::new(AtomicBool::new(false));
        let link = Arc::new(Mutex::new(Link {
            connected: true,
            ..Link::default()
        }));
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
        };
        let handle = std::thread::Builder::new()
            .name("broker".into())
            .spawn(move || thread.run())?;
        Ok(Some(LearnerBroker {
            url: url.clone(),
            state,
            max_lag: config.broker.max_version_lag,
            rx,
            commands,
            thread: Some(handle),
            stop: stop_thread,
            link,
            unacked: Vec::new(),
            in_checkpoint: Vec::new(),
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
        &self.state
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
        handled
    }

    fn handle(&mut self, msg: Incoming, take: &mut dyn FnMut(GameRecord)) {
        match msg {
            Incoming::Game(id, game) => {
                self.unacked.push(id);
                let verdict = self.state.judge(&game, self.max_lag);
                let entry = self
                    .recent
                    .entry(game.worker.clone())
                    .or_insert((Instant::now(), 0));
                entry.0 = Instant::now();
                if verdict == Verdict::Taken {
                    entry.1 += 1;
                    self.window_games += 1;
                    self.window_lag += self.state.version - game.version;
                    take(game.record);
                }
            }
            Incoming::Rejected(id, why) => {
                self.unacked.push(id.clone());
                self.state.rejected += 1;
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
            Incoming::Gone(id) => self.unacked.push(id),
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
        let publication = Publication::new(self.state.version + 1, net, config)?;
        self.state.version += 1;
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
    }

    /// Call when writing a checkpoint failed: its entries wait for the next one.
    pub fn checkpoint_failed(&mut self) {
        let mut ids = std::mem::take(&mut self.in_checkpoint);
        ids.append(&mut self.unacked);
        self.unacked = ids;
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
            per_worker: self
                .recent
                .iter()
                .map(|(id, (_, n))| (id.clone(), *n as f64 / dt))
                .collect(),
            connected: self.link.lock().map(|l| l.connected).unwrap_or(false),
            totals: self.state.clone(),
        };
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

fn sleep_unless(stop: &AtomicBool, total: Duration) {
    let until = Instant::now() + total;
    while !stop.load(Ordering::SeqCst) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20).min(until - Instant::now()));
    }
}

/// Creates the consumer group (reading from the stream's start, so games added while the
/// group did not exist are read), and the stream if needed; an existing group is kept.
fn ensure_group(con: &mut redis::Connection, games: &str) -> redis::RedisResult<()> {
    match redis::cmd("XGROUP")
        .arg("CREATE")
        .arg(games)
        .arg(GROUP)
        .arg("0")
        .arg("MKSTREAM")
        .query::<()>(con)
    {
        Err(e) if e.code() == Some("BUSYGROUP") => Ok(()),
        other => other,
    }
}

/// One entry of a stream reply: its id and, unless it is gone, its fields.
type Entry = (String, Option<Vec<(Vec<u8>, Vec<u8>)>>);

fn bytes_of(v: &redis::Value) -> Option<Vec<u8>> {
    match v {
        redis::Value::BulkString(b) => Some(b.clone()),
        redis::Value::SimpleString(s) => Some(s.clone().into_bytes()),
        _ => None,
    }
}

/// The entries of an `XREADGROUP` reply for one stream (RESP2 arrays or RESP3 maps).
fn parse_entries(reply: &redis::Value) -> Result<Vec<Entry>, String> {
    let streams: Vec<&redis::Value> = match reply {
        redis::Value::Nil => return Ok(Vec::new()),
        redis::Value::Array(items) => items
            .iter()
            .map(|s| match s {
                redis::Value::Array(kv) if kv.len() == 2 => Ok(&kv[1]),
                _ => Err("a stream of the reply is not [key, entries]".to_string()),
            })
            .collect::<Result<_, _>>()?,
        redis::Value::Map(kv) => kv.iter().map(|(_, v)| v).collect(),
        other => return Err(format!("unexpected reply {other:?}")),
    };
    let mut out = Vec::new();
    for entries in streams {
        let redis::Value::Array(entries) = entries else {
            return Err("the entries are not an array".into());
        };
        for entry in entries {
            let redis::Value::Array(parts) = entry else {
                return Err("an entry is not an array".into());
            };
            let id = parts
                .first()
                .and_then(bytes_of)
                .and_then(|b| String::from_utf8(b).ok())
                .ok_or("an entry has no id")?;
            let fields = match parts.get(1) {
                None | Some(redis::Value::Nil) => None,
                Some(redis::Value::Array(f)) => Some(
                    f.chunks(2)
                        .filter_map(|kv| Some((bytes_of(&kv[0])?, bytes_of(kv.get(1)?)?)))
                        .collect(),
                ),
                Some(redis::Value::Map(f)) => Some(
                    f.iter()
                        .filter_map(|(k, v)| Some((bytes_of(k)?, bytes_of(v)?)))
                        .collect(),
                ),
                Some(other) => return Err(format!("entry {id}: unexpected fields {other:?}")),
            };
            out.push((id, fields));
        }
    }
    Ok(out)
}

/// The record of an entry's fields, or why there is none.
fn record_of(fields: &[(Vec<u8>, Vec<u8>)]) -> Result<&[u8], Rejected> {
    if fields.len() != 1 {
        return Err(Rejected(format!(
            "{} fields; a game entry has exactly one, '{GAME_FIELD}'",
            fields.len()
        )));
    }
    let (name, value) = &fields[0];
    if name.as_slice() != GAME_FIELD.as_bytes() {
        return Err(Rejected(format!(
            "field '{}' is not '{GAME_FIELD}'",
            String::from_utf8_lossy(&name[..name.len().min(32)])
        )));
    }
    Ok(value)
}

/// The thread that talks to Redis for the learner.
struct RedisThread {
    url: BrokerUrl,
    keys: Keys,
    con: Option<redis::Connection>,
    backoff: Backoff,
    publication: Arc<Publication>,
    acks: Vec<String>,
    /// `Some(id)`: re-reading this consumer's pending entries after `id`; `None`: new entries.
    pending_cursor: Option<String>,
    read_batch: usize,
    tx: SyncSender<Incoming>,
    commands: Receiver<Command>,
    stop: Arc<AtomicBool>,
    link: Arc<Mutex<Link>>,
    last_weights_check: Instant,
}

/// Why the thread's loop step ended early.
enum StepError {
    /// Redis failed: reconnect.
    Redis(redis::RedisError),
    /// The learner is gone: exit.
    LearnerGone,
}

impl From<redis::RedisError> for StepError {
    fn from(e: redis::RedisError) -> Self {
        StepError::Redis(e)
    }
}

impl RedisThread {
    fn run(&mut self) {
        loop {
            let stopping = self.stop.load(Ordering::SeqCst);
            self.take_commands();
            if stopping {
                self.final_acks();
                return;
            }
            if self.con.is_none() && !self.reconnect() {
                std::thread::sleep(self.backoff.wait().min(Duration::from_millis(50)));
                continue;
            }
            match self.step() {
                Ok(()) => {}
                Err(StepError::LearnerGone) => return,
                Err(StepError::Redis(e)) => self.lost(&e),
            }
        }
    }

    fn take_commands(&mut self) {
        while let Ok(cmd) = self.commands.try_recv() {
            match cmd {
                Command::Publish(p) => {
                    self.publication = p;
                    self.last_weights_check = Instant::now() - 2 * WEIGHTS_CHECK;
                }
                Command::Ack(mut ids) => self.acks.append(&mut ids),
            }
        }
    }

    fn lost(&mut self, e: &redis::RedisError) {
        self.con = None;
        let delay = self.backoff.failed();
        let mut link = self.link.lock().unwrap_or_else(|p| p.into_inner());
        if link.connected {
            link.last_error = Some(format!(
                "broker {}: lost the connection ({}); training goes on, reconnecting (every {:.1} s, up to 10 s)",
                self.url,
                self.url.describe(e),
                delay.as_secs_f64()
            ));
        }
        link.connected = false;
    }

    fn reconnect(&mut self) -> bool {
        if !self.backoff.ready() {
            return false;
        }
        match connect(&self.url, CONNECT_TIMEOUT, IO_TIMEOUT) {
            Ok(mut con) => {
                // Redis may have come back empty: the group and the weights again, then the
                // pending entries from the start (those already taken are duplicates).
                let setup = ensure_group(&mut con, &self.keys.games)
                    .and_then(|()| self.publication.write(&mut con, &self.keys.weights));
                if let Err(e) = setup {
                    self.con = Some(con);
                    self.lost(&e);
                    return false;
                }
                self.con = Some(con);
                self.backoff.succeeded();
                self.pending_cursor = Some("0".to_string());
                self.last_weights_check = Instant::now();
                let mut link = self.link.lock().unwrap_or_else(|p| p.into_inner());
                link.connected = true;
                link.reconnects += 1;
                link.last_error = Some(format!("broker {}: connected again", self.url));
                true
            }
            Err(_) => {
                self.backoff.failed();
                false
            }
        }
    }

    fn step(&mut self) -> Result<(), StepError> {
        let Some(con) = self.con.as_mut() else {
            return Ok(());
        };
        if self.last_weights_check.elapsed() >= WEIGHTS_CHECK {
            let held: Option<u64> = redis::cmd("HGET")
                .arg(&self.keys.weights)
                .arg("version")
                .query(con)?;
            if held != Some(self.publication.version) {
                // Redis restarted empty (or lost the key): publish again.
                self.publication.write(con, &self.keys.weights)?;
                ensure_group(con, &self.keys.games)?;
            }
            self.last_weights_check = Instant::now();
        }
        if !self.acks.is_empty() {
            for chunk in self.acks.chunks(1000) {
                redis::pipe()
                    .cmd("XACK")
                    .arg(&self.keys.games)
                    .arg(GROUP)
                    .arg(chunk)
                    .ignore()
                    .cmd("XDEL")
                    .arg(&self.keys.games)
                    .arg(chunk)
                    .ignore()
                    .query::<()>(con)?;
            }
            self.acks.clear();
        }
        let start = self.pending_cursor.clone().unwrap_or_else(|| ">".into());
        let mut cmd = redis::cmd("XREADGROUP");
        cmd.arg("GROUP")
            .arg(GROUP)
            .arg(GROUP)
            .arg("COUNT")
            .arg(self.read_batch);
        if self.pending_cursor.is_none() {
            cmd.arg("BLOCK").arg(BLOCK_MS);
        }
        cmd.arg("STREAMS").arg(&self.keys.games).arg(&start);
        let reply: redis::Value = match cmd.query(con) {
            Ok(v) => v,
            Err(e) if e.code() == Some("NOGROUP") => {
                ensure_group(con, &self.keys.games)?;
                return Ok(());
            }
            Err(e) => return Err(e.into()),
        };
        let entries = match parse_entries(&reply) {
            Ok(entries) => entries,
            Err(why) => {
                return Err(StepError::Redis(redis::RedisError::from((
                    redis::ErrorKind::Parse,
                    "unexpected XREADGROUP reply",
                    why,
                ))));
            }
        };
        if self.pending_cursor.is_some() {
            self.pending_cursor = entries.last().map(|(id, _)| id.clone());
        }
        for (id, fields) in entries {
            let msg = match fields {
                None => Incoming::Gone(id),
                Some(fields) => match record_of(&fields).and_then(wire::decode) {
                    Ok(game) => Incoming::Game(id, Box::new(game)),
                    Err(why) => Incoming::Rejected(id, why),
                },
            };
            self.tx.send(msg).map_err(|_| StepError::LearnerGone)?;
        }
        Ok(())
    }

    /// At shutdown: sends the acknowledgements held, trying for a few seconds at most.
    fn final_acks(&mut self) {
        let until = Instant::now() + Duration::from_secs(3);
        while !self.acks.is_empty() && Instant::now() < until {
            if self.con.is_none() && !self.reconnect() {
                std::thread::sleep(Duration::from_millis(50));
                continue;
            }
            if let Some(con) = self.con.as_mut() {
                let mut ok = true;
                for chunk in self.acks.chunks(1000) {
                    let r = redis::pipe()
                        .cmd("XACK")
                        .arg(&self.keys.games)
                        .arg(GROUP)
                        .arg(chunk)
                        .ignore()
                        .cmd("XDEL")
                        .arg(&self.keys.games)
                        .arg(chunk)
                        .ignore()
                        .query::<()>(con);
                    if let Err(e) = r {
                        self.lost(&e);
                        ok = false;
                        break;
                    }
                }
                if ok {
                    self.acks.clear();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oware_engine::{EndReason, GameResult, Winner};

    fn game(worker: &str, seq: u64, version: u64) -> WireGame {
        WireGame {
            worker: worker.into(),
            seq,
            version,
            record: GameRecord {
                moves: Vec::new(),
                result: GameResult {
                    winner: Winner::Draw,
                    reason: EndReason::MaxPlies,
                    score: [24, 24],
                },
                samples: Vec::new(),
            },
        }
    }

    #[test]
    fn duplicates_gaps_and_stale_games_are_counted() {
        let mut s = BrokerState {
            version: 10,
            ..BrokerState::default()
        };
        assert_eq!(s.judge(&game("a", 0, 10), 2), Verdict::Taken);
        assert_eq!(s.judge(&game("a", 0, 10), 2), Verdict::Duplicate);
        assert_eq!(s.judge(&game("a", 1, 8), 2), Verdict::Taken);
        assert_eq!(s.judge(&game("a", 2, 7), 2), Verdict::Stale);
        assert_eq!(
            s.judge(&game("a", 5, 11), 2),
            Verdict::Stale,
            "unknown version"
        );
        assert_eq!(s.judge(&game("b", 0, 9), 2), Verdict::Taken);
        let a = &s.workers["a"];
        assert_eq!(
            (a.games, a.stale, a.duplicates, a.missing, a.next_seq),
            (2, 2, 1, 2, 6)
        );
        assert_eq!(a.games + a.stale + a.missing, a.next_seq);
        assert_eq!((s.games, s.stale, s.duplicates), (3, 2, 1));
        // The state survives a checkpoint's JSON.
        let json = serde_json::to_value(&s).expect("json");
        assert_eq!(
            serde_json::from_value::<BrokerState>(json).expect("back"),
            s
        );
    }

    #[test]
    fn stream_replies_parse_and_odd_entries_are_named() {
        use redis::Value::{Array, BulkString, Nil};
        let reply = Array(vec![Array(vec![
            BulkString(b"oware:{r}:games".to_vec()),
            Array(vec![
                Array(vec![
                    BulkString(b"1-0".to_vec()),
                    Array(vec![BulkString(b"g".to_vec()), BulkString(vec![1, 2])]),
                ]),
                Array(vec![BulkString(b"1-1".to_vec()), Nil]),
            ]),
        ])]);
        let entries = parse_entries(&reply).expect("parses");
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].0, "1-0");
        let fields = entries[0].1.as_ref().expect("fields");
        assert_eq!(record_of(fields).expect("one field"), &[1, 2]);
        assert!(entries[1].1.is_none(), "a deleted entry");
        assert!(parse_entries(&Nil).expect("timeout").is_empty());
        let two = vec![(b"g".to_vec(), vec![]), (b"x".to_vec(), vec![])];
        assert!(record_of(&two).is_err());
        let other = vec![(b"x".to_vec(), vec![])];
        assert!(
            record_of(&other)
                .expect_err("wrong field")
                .0
                .contains("'x'")
        );
    }
}
