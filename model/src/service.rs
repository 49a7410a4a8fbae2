//! [`InferenceService`]: one thread owns the network on its device and evaluates the merged
//! leaf batches of many callers in one forward pass.
//!
//! A GPU pays only on large batches: with many self-play workers each searching its own games
//! on a CPU core, every worker submits its batch of leaves to the service through a
//! [`ServiceClient`] (an [`Evaluator`]) and waits for its reply. The service thread takes the
//! pending requests, merges them until it holds [`ServiceConfig::max_batch`] positions, or one
//! request from each of [`ServiceConfig::clients`] callers, or [`ServiceConfig::max_wait`] has
//! passed since the first one arrived; then it runs **one** forward pass and splits the results
//! back to their callers.
//!
//! New weights ([`InferenceService::set_weights`]) are versioned and swapped in between two
//! batches, never during one: every reply is computed entirely by one version, which
//! [`ServiceClient::evaluate_versioned`] reports. Errors reach the caller as [`EvalError`]: a
//! backend failure (or a backend panic, caught at the forward pass) goes to every request of
//! the batch; a NaN or infinite output goes to the request whose position it belongs to, with
//! that position's index in the request. A stopped service answers with
//! [`EvalError::Failed`]. Nothing is ever made up.

use crate::evaluator::{NetEvaluator, prediction_from_row};
use oware_engine::Position;
use oware_search::{EvalError, Evaluation, Evaluator};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// When the service stops merging requests and runs a batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceConfig {
    /// Merging stops once the pending requests hold at least this many positions (a request
    /// is never split, so a batch can exceed it by less than one request).
    pub max_batch: usize,
    /// The longest wait, counted from the first pending request, for more requests.
    pub max_wait: Duration,
    /// The number of callers expected to submit (e.g. the self-play workers): once that many
    /// requests are pending, nobody else can be waited for (each caller has at most one
    /// request in flight), so the batch runs at once. A caller that has stopped costs at most
    /// `max_wait` per batch.
    pub clients: usize,
}

impl Default for ServiceConfig {
    fn default() -> Self {
        ServiceConfig {
            max_batch: 16_384,
            max_wait: Duration::from_millis(2),
            clients: 1,
        }
    }
}

/// Counters of a running service.
#[derive(Debug, Default)]
pub struct ServiceStats {
    /// Requests answered (successfully or with an error).
    pub requests: AtomicU64,
    /// Forward passes run (merged batches).
    pub batches: AtomicU64,
    /// Positions evaluated.
    pub positions: AtomicU64,
    /// Nanoseconds spent in forward passes (encoding, the network, reading back).
    pub busy_nanos: AtomicU64,
}

impl ServiceStats {
    /// Mean positions per forward pass so far (0 before the first).
    pub fn mean_batch(&self) -> f64 {
        let batches = self.batches.load(Ordering::Relaxed);
        if batches == 0 {
            0.0
        } else {
            self.positions.load(Ordering::Relaxed) as f64 / batches as f64
        }
    }
}

/// What a reply carries: the evaluations and the weights version that computed them.
type Reply = Result<(Vec<Evaluation>, u64), EvalError>;

struct Request {
    positions: Vec<Position>,
    reply: SyncSender<Reply>,
}

enum Message {
    Evaluate(Request),
    Stop,
}

/// State shared by the service's owner and its thread.
#[derive(Default)]
struct Shared {
    /// Weights published but not yet swapped in, with their version.
    next: Mutex<Option<(NetEvaluator, u64)>>,
    /// The newest published version.
    published: AtomicU64,
    stats: ServiceStats,
}

/// The owner of the service thread. Dropping it stops the thread (after the batch in
/// progress) and joins it; clients that call afterwards get [`EvalError::Failed`].
pub struct InferenceService {
    tx: Sender<Message>,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

/// A caller's handle: an [`Evaluator`] that submits its batch to the service and waits for the
/// reply. Cheap to clone; `Send` and `Sync`.
#[derive(Clone)]
pub struct ServiceClient {
    tx: Sender<Message>,
}

impl InferenceService {
    /// Starts the service thread (named `inference`) owning `evaluator` as weights version 0.
    ///
    /// # Errors
    /// When the thread cannot be spawned.
    pub fn start(
        evaluator: NetEvaluator,
        config: ServiceConfig,
    ) -> std::io::Result<InferenceService> {
        let (tx, rx) = std::sync::mpsc::channel::<Message>();
        let shared = Arc::new(Shared::default());
        let thread_shared = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("inference".into())
            .spawn(move || serve(evaluator, &config, &rx, &thread_shared))?;
        Ok(InferenceService {
            tx,
            shared,
            thread: Some(thread),
        })
    }

    /// A new client of this service.
    pub fn client(&self) -> ServiceClient {
        ServiceClient {
            tx: self.tx.clone(),
        }
    }

    /// Publishes new weights; returns their version (1, 2, ...). They are used from the next
    /// batch on; weights published twice before a batch: the newer wins.
    pub fn set_weights(&self, evaluator: NetEvaluator) -> u64 {
        // A poisoned lock (a thread panicked holding it) still holds a whole Option: use it.
        let mut next = self
            .shared
            .next
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let version = self.shared.published.fetch_add(1, Ordering::AcqRel) + 1;
        *next = Some((evaluator, version));
        version
    }

    /// The newest published weights version (0 before any [`InferenceService::set_weights`]).
    pub fn version(&self) -> u64 {
        self.shared.published.load(Ordering::Acquire)
    }

    /// The service's counters.
    pub fn stats(&self) -> &ServiceStats {
        &self.shared.stats
    }
}

impl Drop for InferenceService {
    fn drop(&mut self) {
        // The thread may be gone already (it only ends on Stop, so this cannot fail while it
        // runs); either way it is joined below.
        let _ = self.tx.send(Message::Stop);
        if let Some(thread) = self.thread.take() {
            // The thread catches the backend's panics itself; a panic elsewhere in it has
            // already answered its callers with errors (their reply channels closed).
            let _ = thread.join();
        }
    }
}

fn stopped() -> EvalError {
    EvalError::Failed("the inference service has stopped".into())
}

impl ServiceClient {
    /// As [`Evaluator::evaluate`], and returns the weights version that computed `out`.
    ///
    /// # Errors
    /// The batch's [`EvalError`]; [`EvalError::Failed`] when the service has stopped;
    /// [`EvalError::WrongLength`] when `out` does not have one slot per position.
    pub fn evaluate_versioned(
        &self,
        positions: &[Position],
        out: &mut [Evaluation],
    ) -> Result<u64, EvalError> {
        if out.len() != positions.len() {
            return Err(EvalError::WrongLength {
                positions: positions.len(),
                expected: positions.len(),
                got: out.len(),
            });
        }
        let (reply, answer) = std::sync::mpsc::sync_channel(1);
        self.tx
            .send(Message::Evaluate(Request {
                positions: positions.to_vec(),
                reply,
            }))
            .map_err(|_| stopped())?;
        let (evaluations, version) = answer.recv().map_err(|_| stopped())??;
        if evaluations.len() != out.len() {
            return Err(EvalError::WrongLength {
                positions: positions.len(),
                expected: positions.len(),
                got: evaluations.len(),
            });
        }
        out.copy_from_slice(&evaluations);
        Ok(version)
    }
}

impl Evaluator for ServiceClient {
    fn evaluate(&self, positions: &[Position], out: &mut [Evaluation]) -> Result<(), EvalError> {
        self.evaluate_versioned(positions, out).map(|_| ())
    }
}

/// The service thread: gather, swap weights if new ones wait, evaluate, answer; until Stop or
/// every sender is gone.
fn serve(
    mut current: NetEvaluator,
    config: &ServiceConfig,
    rx: &Receiver<Message>,
    shared: &Shared,
) {
    let mut version = 0u64;
    let max_batch = config.max_batch.max(1);
    let clients = config.clients.max(1);
    loop {
        let first = match rx.recv() {
            Ok(Message::Evaluate(request)) => request,
            Ok(Message::Stop) | Err(_) => return,
        };
        let deadline = Instant::now() + config.max_wait;
        let mut positions = first.positions.len();
        let mut batch = vec![first];
        let mut stop = false;
        while positions < max_batch && batch.len() < clients {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            match rx.recv_timeout(left) {
                Ok(Message::Evaluate(request)) => {
                    positions += request.positions.len();
                    batch.push(request);
                }
                Ok(Message::Stop) => {
                    stop = true;
                    break;
                }
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => break,
            }
        }
        // Between two batches: the newest published weights, if any, take over.
        let newer = shared
            .next
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take();
        if let Some((evaluator, v)) = newer {
            current = evaluator;
            version = v;
        }
        run_batch(&current, version, batch, positions, &shared.stats);
        if stop {
            // Requests still queued are dropped with the receiver: their callers get
            // "the inference service has stopped".
            return;
        }
    }
}

/// One forward pass over the merged positions of `batch`, split back to the callers.
fn run_batch(
    evaluator: &NetEvaluator,
    version: u64,
    batch: Vec<Request>,
    total: usize,
    stats: &ServiceStats,
) {
    let mut all = Vec::with_capacity(total);
    for request in &batch {
        all.extend_from_slice(&request.positions);
    }
    let started = Instant::now();
    // The one boundary where a backend panic (e.g. a GPU device lost inside wgpu) is caught:
    // it becomes an error for every caller of this batch instead of killing the thread and
    // leaving them waiting. The default panic hook still prints its message to stderr.
    let raw =
        catch_unwind(AssertUnwindSafe(|| evaluator.raw_outputs(&all))).unwrap_or_else(|payload| {
            Err(EvalError::Failed(format!(
                "the network backend panicked: {}",
                panic_text(&*payload)
            )))
        });
    stats
        .busy_nanos
        .fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
    stats.batches.fetch_add(1, Ordering::Relaxed);
    stats.positions.fetch_add(total as u64, Ordering::Relaxed);
    stats
        .requests
        .fetch_add(batch.len() as u64, Ordering::Relaxed);
    let width = evaluator.config().head_outputs();
    let mut offset = 0;
    for request in batch {
        let n = request.positions.len();
        let reply = match &raw {
            Ok(raw) => split(
                &request.positions,
                &raw[offset * width..][..n * width],
                width,
            )
            .map(|evaluations| (evaluations, version)),
            Err(e) => Err(e.clone()),
        };
        offset += n;
        // A caller that went away (its thread stopped) needs no answer.
        let _ = request.reply.send(reply);
    }
}

/// The evaluations of one request from its rows of the raw outputs, exactly as
/// [`NetEvaluator`]'s own `evaluate` computes them (indices local to the request).
fn split(positions: &[Position], rows: &[f32], width: usize) -> Result<Vec<Evaluation>, EvalError> {
    positions
        .iter()
        .zip(rows.chunks_exact(width))
        .enumerate()
        .map(|(i, (pos, row))| {
            prediction_from_row(i, pos, row).map(|p| Evaluation {
                policy: p.policy,
                value: p.value,
            })
        })
        .collect()
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    oware_engine::panic::panic_message(payload)
        .unwrap_or_else(|| "a panic without a message".to_string())
}

#[cfg(test)]
#[path = "service_tests.rs"]
mod tests;
