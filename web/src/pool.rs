//! The search pool: `ai_threads` blocking threads that run every search (AI moves, hints and
//! the slices of reviews), never on the async runtime, with a queue that no client can fill.
//!
//! - **Two kinds of work.** An AI's own move ([`Work::Move`]) and optional analysis
//!   ([`Work::Analysis`]: hints, reviews). Analysis runs on at most
//!   [`crate::ServeConfig::analysis_threads`] threads at once (half of them), so the others are
//!   kept for moves; a review runs as one slice per position, so a move never waits behind a
//!   whole review. Analysis waiting or running is bounded in all
//!   ([`crate::ServeConfig::analysis_queue`], from the thread count) and per address
//!   ([`crate::config::ANALYSIS_PER_ADDRESS`]); past either it is refused with `busy`.
//! - **Moves are bounded by the tables.** A table has at most one search in the pool, live or
//!   stale (see [`crate::table::Table::ai_job`]), so moves waiting are at most the games open;
//!   the queue still refuses past `max_games` as a guard.
//! - **Order.** A free thread takes a move before analysis, and among each kind the job of the
//!   address that used the least search time lately (decayed with a half-life of
//!   [`crate::config::SEARCH_USAGE_HALF_LIFE_SECS`]), then the oldest: a client that keeps
//!   the threads busy goes behind everyone who does not.
//! - **A thread for quick moves.** A search cannot be interrupted for another, so with every
//!   thread running long searches a quick one would wait for one of them to end. With two
//!   threads or more, a quarter of them (at least one) take only light jobs: AI moves expected
//!   to take under [`crate::config::QUICK_SEARCH_SECS`] (the AI's recent searches say so) of
//!   addresses that used under [`crate::config::LIGHT_USAGE_SECS`] of search time lately. A
//!   person playing a quick AI is then never stuck behind anyone's long searches.
//! - **Stopping.** Every job has a [`Stop`]: set while the job waits, it leaves the queue at
//!   once; set while it runs, the search sees it (`Player::set_stop`) and ends early.

use crate::address::AddressKey;
use crate::config::{
    ANALYSIS_PER_ADDRESS, LIGHT_USAGE_SECS, QUICK_SEARCH_SECS, SEARCH_USAGE_HALF_LIFE_SECS,
};
use crate::protocol::{ErrorCode, ErrorReply};
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::sync::{Notify, oneshot};

/// Most addresses whose search time is remembered (those that used almost none are
/// forgotten first).
const MAX_USAGE_ENTRIES: usize = 4096;

/// What a job is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Work {
    /// An AI's own move.
    Move,
    /// A hint or a slice of a review.
    Analysis,
}

/// A flag that ends a job: set when its result is no longer wanted (an undo, a new game, a
/// connection gone).
#[derive(Debug, Default)]
pub struct Stop {
    flag: Arc<AtomicBool>,
    notify: Notify,
}

impl Stop {
    /// A new flag, not set.
    pub fn new() -> Arc<Stop> {
        Arc::new(Stop::default())
    }

    /// Sets the flag: a waiting job leaves the queue, a running search ends early.
    pub fn stop(&self) {
        self.flag.store(true, Ordering::SeqCst);
        self.notify.notify_waiters();
    }

    /// Whether the flag is set.
    pub fn is_stopped(&self) -> bool {
        self.flag.load(Ordering::SeqCst)
    }

    /// The flag itself, for a search (`Player::set_stop`).
    pub fn flag(&self) -> Arc<AtomicBool> {
        self.flag.clone()
    }

    /// Resolves once the flag is set.
    async fn stopped(&self) {
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.is_stopped() {
                return;
            }
            notified.await;
        }
    }
}

/// The error of a job that was stopped before it ran.
#[derive(Debug)]
pub struct Stopped;

impl fmt::Display for Stopped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the search was stopped: its result is no longer wanted")
    }
}

impl std::error::Error for Stopped {}

/// Whether `e` is [`Stopped`].
pub fn is_stopped(e: &anyhow::Error) -> bool {
    e.is::<Stopped>()
}

/// The pool's bounds.
#[derive(Clone, Copy, Debug)]
pub struct PoolLimits {
    /// Threads running jobs.
    pub threads: usize,
    /// Threads analysis may take at once.
    pub analysis_threads: usize,
    /// Threads kept for light jobs (see the module docs).
    pub light_threads: usize,
    /// Seconds of recent search time under which an address is light.
    pub light_usage_secs: f64,
    /// AI moves waiting or running at once.
    pub max_moves: usize,
    /// Analysis tickets held at once.
    pub max_analysis: usize,
    /// Analysis tickets one address may hold.
    pub analysis_per_address: usize,
}

impl PoolLimits {
    /// The bounds of `config`.
    pub fn of(config: &crate::ServeConfig) -> PoolLimits {
        PoolLimits {
            threads: config.ai_threads.max(1),
            analysis_threads: config.analysis_threads(),
            light_threads: light_threads(config.ai_threads),
            light_usage_secs: LIGHT_USAGE_SECS,
            max_moves: config.max_games.max(1),
            max_analysis: config.analysis_queue(),
            analysis_per_address: ANALYSIS_PER_ADDRESS,
        }
    }
}

/// Threads kept for light jobs: a quarter (at least one) with two or more threads.
pub fn light_threads(threads: usize) -> usize {
    if threads >= 2 { threads.div_ceil(4) } else { 0 }
}

struct Waiter {
    id: u64,
    work: Work,
    key: AddressKey,
    /// An AI move expected to be quick.
    quick: bool,
    tx: oneshot::Sender<Grant>,
}

#[derive(Clone, Copy)]
struct Usage {
    secs: f64,
    at: Instant,
}

impl Usage {
    fn now(&self, now: Instant) -> f64 {
        let dt = now.saturating_duration_since(self.at).as_secs_f64();
        self.secs * 0.5f64.powf(dt / SEARCH_USAGE_HALF_LIFE_SECS)
    }
}

#[derive(Default)]
struct State {
    running: usize,
    running_analysis: usize,
    /// Jobs running that were not light when they got their thread.
    running_heavy: usize,
    waiting: Vec<Waiter>,
    next_id: u64,
    moves: usize,
    analysis: usize,
    analysis_by_address: HashMap<AddressKey, usize>,
    usage: HashMap<AddressKey, Usage>,
}

struct Shared {
    limits: PoolLimits,
    state: Mutex<State>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Every change to the state is a few counters and one list; a panic cannot leave it
        // half done, so the data is good even after one.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Hands free threads to the best waiting jobs.
fn pump(shared: &Arc<Shared>, st: &mut State) {
    let now = Instant::now();
    let limits = shared.limits;
    while st.running < limits.threads {
        let analysis_free = st.running_analysis < limits.analysis_threads;
        let heavy_free = st.running_heavy + limits.light_threads < limits.threads;
        let usage = |k: &AddressKey| st.usage.get(k).map_or(0.0, |u| u.now(now));
        let light =
            |w: &Waiter| w.work == Work::Move && w.quick && usage(&w.key) < limits.light_usage_secs;
        let best = st
            .waiting
            .iter()
            .enumerate()
            .filter(|(_, w)| w.work == Work::Move || analysis_free)
            .filter(|(_, w)| heavy_free || light(w))
            .min_by(|(_, a), (_, b)| {
                let rank = |w: &Waiter| u8::from(w.work == Work::Analysis);
                rank(a)
                    .cmp(&rank(b))
                    .then(usage(&a.key).total_cmp(&usage(&b.key)))
                    .then(a.id.cmp(&b.id))
            })
            .map(|(i, _)| i);
        let Some(i) = best else { break };
        let heavy = !light(&st.waiting[i]);
        let w = st.waiting.swap_remove(i);
        st.running += 1;
        st.running_heavy += usize::from(heavy);
        if w.work == Work::Analysis {
            st.running_analysis += 1;
        }
        let grant = Grant {
            shared: Arc::clone(shared),
            work: w.work,
            key: w.key,
            heavy,
            started: now,
            armed: true,
        };
        if let Err(mut grant) = w.tx.send(grant) {
            // The waiter is gone (its task was dropped): the thread is free again.
            grant.armed = false;
            st.running -= 1;
            st.running_heavy -= usize::from(heavy);
            if w.work == Work::Analysis {
                st.running_analysis -= 1;
            }
        }
    }
}

/// A thread given to a job; giving it back (dropping it) counts the time used and hands the
/// thread to the next job.
struct Grant {
    shared: Arc<Shared>,
    work: Work,
    key: AddressKey,
    heavy: bool,
    started: Instant,
    armed: bool,
}

impl Drop for Grant {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let mut st = self.shared.lock();
        st.running = st.running.saturating_sub(1);
        if self.heavy {
            st.running_heavy = st.running_heavy.saturating_sub(1);
        }
        if self.work == Work::Analysis {
            st.running_analysis = st.running_analysis.saturating_sub(1);
        }
        let now = Instant::now();
        let used = now.saturating_duration_since(self.started).as_secs_f64();
        let before = st.usage.get(&self.key).map_or(0.0, |u| u.now(now));
        st.usage.insert(
            self.key,
            Usage {
                secs: before + used,
                at: now,
            },
        );
        if st.usage.len() > MAX_USAGE_ENTRIES {
            st.usage.retain(|_, u| u.now(now) > 0.01);
            if st.usage.len() > MAX_USAGE_ENTRIES {
                // Only under a flood from very many addresses: start counting afresh.
                st.usage.clear();
            }
        }
        pump(&self.shared, &mut st);
    }
}

/// Removes a waiter that stopped waiting (stopped, or its task dropped).
struct WaitGuard<'a> {
    shared: &'a Arc<Shared>,
    id: u64,
}

impl Drop for WaitGuard<'_> {
    fn drop(&mut self) {
        let mut st = self.shared.lock();
        st.waiting.retain(|w| w.id != self.id);
    }
}

/// A place in the queue for one kind of work of one address; dropping it frees the place.
/// A review holds one for all its slices.
pub struct Ticket {
    shared: Arc<Shared>,
    work: Work,
    key: AddressKey,
}

impl fmt::Debug for Ticket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Ticket({:?}, {})", self.work, self.key)
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut st = self.shared.lock();
        match self.work {
            Work::Move => st.moves = st.moves.saturating_sub(1),
            Work::Analysis => {
                st.analysis = st.analysis.saturating_sub(1);
                if let Some(n) = st.analysis_by_address.get_mut(&self.key) {
                    *n = n.saturating_sub(1);
                    if *n == 0 {
                        st.analysis_by_address.remove(&self.key);
                    }
                }
            }
        }
    }
}

/// The bounded pool that runs searches.
pub struct AiPool {
    shared: Arc<Shared>,
}

impl fmt::Debug for AiPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AiPool({:?})", self.shared.limits)
    }
}

/// Counts of the pool, for `/api/info` and tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolCounts {
    /// Jobs running.
    pub running: usize,
    /// Jobs waiting for a thread.
    pub waiting: usize,
    /// AI moves waiting or running.
    pub moves: usize,
    /// Hints and reviews waiting or running.
    pub analysis: usize,
}

impl AiPool {
    /// A pool with `limits`.
    pub fn new(limits: PoolLimits) -> AiPool {
        let limits = PoolLimits {
            threads: limits.threads.max(1),
            analysis_threads: limits.analysis_threads.clamp(1, limits.threads.max(1)),
            light_threads: limits.light_threads.min(limits.threads.saturating_sub(1)),
            ..limits
        };
        AiPool {
            shared: Arc::new(Shared {
                limits,
                state: Mutex::new(State::default()),
            }),
        }
    }

    /// A place for `work` of `key`, unless its bound is reached (the error says which).
    pub fn ticket(&self, key: AddressKey, work: Work) -> Result<Ticket, ErrorReply> {
        let limits = self.shared.limits;
        let mut st = self.shared.lock();
        match work {
            Work::Move => {
                if st.moves >= limits.max_moves {
                    return Err(busy(
                        "the server has as many AI moves waiting as it takes: try again in a moment",
                    ));
                }
                st.moves += 1;
            }
            Work::Analysis => {
                let mine = st.analysis_by_address.get(&key).copied().unwrap_or(0);
                if mine >= limits.analysis_per_address {
                    return Err(busy(format!(
                        "your address has {mine} hints or reviews waiting already: wait for them"
                    )));
                }
                if st.analysis >= limits.max_analysis {
                    return Err(busy(
                        "the server is busy searching for other games: try again in a moment",
                    ));
                }
                st.analysis += 1;
                *st.analysis_by_address.entry(key).or_insert(0) += 1;
            }
        }
        Ok(Ticket {
            shared: Arc::clone(&self.shared),
            work,
            key,
        })
    }

    /// Runs `job` on a search thread once one is given to it; `expected` is how long it is
    /// likely to take (for a move: the AI's recent searches; [`Duration::MAX`] when unknown).
    /// Stopped while waiting, it never runs ([`Stopped`]); a panic in the job is an error.
    pub async fn run<T: Send + 'static>(
        &self,
        ticket: &Ticket,
        stop: &Stop,
        expected: Duration,
        job: impl FnOnce() -> anyhow::Result<T> + Send + 'static,
    ) -> anyhow::Result<T> {
        if stop.is_stopped() {
            return Err(Stopped.into());
        }
        let (tx, rx) = oneshot::channel();
        let id = {
            let mut st = self.shared.lock();
            st.next_id += 1;
            let id = st.next_id;
            st.waiting.push(Waiter {
                id,
                work: ticket.work,
                key: ticket.key,
                quick: expected.as_secs_f64() < QUICK_SEARCH_SECS,
                tx,
            });
            pump(&self.shared, &mut st);
            id
        };
        let guard = WaitGuard {
            shared: &self.shared,
            id,
        };
        let grant = tokio::select! {
            biased;
            grant = rx => grant.map_err(|_| anyhow::anyhow!("the search pool is closed"))?,
            () = stop.stopped() => return Err(Stopped.into()),
        };
        drop(guard);
        let result = tokio::task::spawn_blocking(move || {
            let out = job();
            drop(grant);
            out
        })
        .await;
        match result {
            Ok(out) => out,
            Err(e) => Err(anyhow::anyhow!("the search stopped: {e}")),
        }
    }

    /// What the pool holds now.
    pub fn counts(&self) -> PoolCounts {
        let st = self.shared.lock();
        PoolCounts {
            running: st.running,
            waiting: st.waiting.len(),
            moves: st.moves,
            analysis: st.analysis,
        }
    }

    /// The pool's bounds.
    pub fn limits(&self) -> PoolLimits {
        self.shared.limits
    }
}

fn busy(message: impl Into<String>) -> ErrorReply {
    ErrorReply::new(ErrorCode::Busy, message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::time::Duration;

    fn key(i: u8) -> AddressKey {
        AddressKey::V4([10, 0, 0, i])
    }

    fn limits(threads: usize) -> PoolLimits {
        PoolLimits {
            threads,
            analysis_threads: (threads / 2).max(1),
            light_threads: light_threads(threads),
            light_usage_secs: LIGHT_USAGE_SECS,
            max_moves: 100,
            max_analysis: 4 * threads,
            analysis_per_address: 2,
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn analysis_is_bounded_per_address_and_in_all() {
        let pool = AiPool::new(limits(2));
        let a = pool.ticket(key(1), Work::Analysis).expect("room");
        let _b = pool.ticket(key(1), Work::Analysis).expect("room");
        let e = pool
            .ticket(key(1), Work::Analysis)
            .expect_err("two per address");
        assert_eq!(e.code, ErrorCode::Busy);
        let more: Vec<_> = (2..8)
            .map(|i| pool.ticket(key(i), Work::Analysis).expect("room"))
            .collect();
        assert_eq!(pool.counts().analysis, 8);
        assert!(pool.ticket(key(9), Work::Analysis).is_err(), "4 per thread");
        // Moves are not held back by analysis tickets.
        let _m = pool.ticket(key(9), Work::Move).expect("a move");
        drop(a);
        drop(more);
        assert_eq!(pool.counts().analysis, 1);
        assert!(pool.ticket(key(1), Work::Analysis).is_ok());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn analysis_leaves_a_thread_to_moves_and_panics_are_errors() {
        let pool = Arc::new(AiPool::new(limits(2)));
        let release = Arc::new(AtomicBool::new(false));
        let running = Arc::new(AtomicUsize::new(0));
        // Two long analysis jobs: only one may run.
        let mut tasks = Vec::new();
        for i in 0..2 {
            let (pool, release, running) = (pool.clone(), release.clone(), running.clone());
            tasks.push(tokio::spawn(async move {
                let t = pool.ticket(key(i), Work::Analysis).expect("room");
                pool.run(&t, &Stop::default(), Duration::ZERO, move || {
                    running.fetch_add(1, Ordering::SeqCst);
                    while !release.load(Ordering::SeqCst) {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    Ok(())
                })
                .await
            }));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(
            running.load(Ordering::SeqCst),
            1,
            "analysis takes one thread of two"
        );
        assert_eq!(pool.counts().waiting, 1);
        // A move runs at once on the thread kept for moves.
        let t = pool.ticket(key(5), Work::Move).expect("a move");
        let started = Instant::now();
        let v = tokio::time::timeout(
            Duration::from_secs(5),
            pool.run(&t, &Stop::default(), Duration::ZERO, || Ok(7)),
        )
        .await
        .expect("the move is not held back")
        .expect("runs");
        assert_eq!(v, 7);
        assert!(started.elapsed() < Duration::from_secs(2));
        let r: anyhow::Result<u32> = pool
            .run(&t, &Stop::default(), Duration::ZERO, || {
                panic!("a broken player")
            })
            .await;
        assert!(r.is_err());
        release.store(true, Ordering::SeqCst);
        for task in tasks {
            task.await.expect("task").expect("ran");
        }
        let c = pool.counts();
        assert_eq!((c.running, c.waiting), (0, 0));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_stopped_waiter_leaves_at_once_and_the_lightest_address_goes_first() {
        let pool = Arc::new(AiPool::new(limits(1)));
        let release = Arc::new(AtomicBool::new(false));
        // The heavy address holds the only thread for a while.
        let heavy = {
            let (pool, release) = (pool.clone(), release.clone());
            tokio::spawn(async move {
                let t = pool.ticket(key(1), Work::Move).expect("room");
                pool.run(&t, &Stop::default(), Duration::ZERO, move || {
                    while !release.load(Ordering::SeqCst) {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    Ok(())
                })
                .await
            })
        };
        tokio::time::sleep(Duration::from_millis(100)).await;
        release.store(true, Ordering::SeqCst);
        heavy.await.expect("task").expect("ran");
        // Now the heavy address has used ~0.1 s; it queues first, the light one second.
        let block = Arc::new(AtomicBool::new(false));
        let blocker = {
            let (pool, block) = (pool.clone(), block.clone());
            tokio::spawn(async move {
                let t = pool.ticket(key(3), Work::Move).expect("room");
                pool.run(&t, &Stop::default(), Duration::ZERO, move || {
                    while !block.load(Ordering::SeqCst) {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    Ok(())
                })
                .await
            })
        };
        tokio::time::sleep(Duration::from_millis(50)).await;
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut waiting = Vec::new();
        for i in [1u8, 2] {
            let (pool, order) = (pool.clone(), order.clone());
            waiting.push(tokio::spawn(async move {
                let t = pool.ticket(key(i), Work::Move).expect("room");
                pool.run(&t, &Stop::default(), Duration::ZERO, move || {
                    order.lock().expect("order").push(i);
                    Ok(())
                })
                .await
            }));
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // A stopped waiter leaves the queue at once, without running.
        let stop = Stop::new();
        let stopped = {
            let (pool, stop) = (pool.clone(), stop.clone());
            tokio::spawn(async move {
                let t = pool.ticket(key(4), Work::Move).expect("room");
                pool.run(&t, &stop, Duration::ZERO, || -> anyhow::Result<()> {
                    panic!("must not run")
                })
                .await
            })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert_eq!(pool.counts().waiting, 3);
        stop.stop();
        let e = tokio::time::timeout(Duration::from_secs(2), stopped)
            .await
            .expect("leaves at once")
            .expect("task")
            .expect_err("stopped");
        assert!(is_stopped(&e));
        assert_eq!(pool.counts().waiting, 2);
        block.store(true, Ordering::SeqCst);
        blocker.await.expect("task").expect("ran");
        for w in waiting {
            w.await.expect("task").expect("ran");
        }
        assert_eq!(
            *order.lock().expect("order"),
            vec![2, 1],
            "the light address first"
        );
    }

    /// Runs a job of `key` that spins until `release` is set.
    fn spin(
        pool: &Arc<AiPool>,
        k: AddressKey,
        release: &Arc<AtomicBool>,
        running: &Arc<AtomicUsize>,
    ) -> tokio::task::JoinHandle<anyhow::Result<()>> {
        let (pool, release, running) = (pool.clone(), release.clone(), running.clone());
        tokio::spawn(async move {
            let t = pool.ticket(k, Work::Move).expect("room");
            pool.run(&t, &Stop::default(), Duration::ZERO, move || {
                running.fetch_add(1, Ordering::SeqCst);
                while !release.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(5));
                }
                running.fetch_sub(1, Ordering::SeqCst);
                Ok(())
            })
            .await
        })
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn heavy_addresses_leave_a_thread_to_light_ones() {
        let pool = Arc::new(AiPool::new(PoolLimits {
            light_usage_secs: 0.05,
            ..limits(2)
        }));
        assert_eq!(pool.limits().light_threads, 1);
        // Address 1 becomes heavy: 0.2 s of search.
        let release = Arc::new(AtomicBool::new(false));
        let running = Arc::new(AtomicUsize::new(0));
        let first = spin(&pool, key(1), &release, &running);
        tokio::time::sleep(Duration::from_millis(200)).await;
        release.store(true, Ordering::SeqCst);
        first.await.expect("task").expect("ran");
        // Now its long searches take one thread only, however many it asks for.
        let release = Arc::new(AtomicBool::new(false));
        let heavy: Vec<_> = (0..3)
            .map(|_| spin(&pool, key(1), &release, &running))
            .collect();
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(running.load(Ordering::SeqCst), 1);
        // A light address's move runs at once on the other.
        let t = pool.ticket(key(2), Work::Move).expect("room");
        let v = tokio::time::timeout(
            Duration::from_secs(5),
            pool.run(&t, &Stop::default(), Duration::ZERO, || Ok(3)),
        )
        .await
        .expect("the light move is not held back")
        .expect("runs");
        assert_eq!(v, 3);
        // A long search of a fresh address may not take the kept thread either.
        let t = pool.ticket(key(7), Work::Move).expect("room");
        let no_stop = Stop::default();
        let long = pool.run(&t, &no_stop, Duration::from_secs(1), || Ok(4));
        assert!(
            tokio::time::timeout(Duration::from_millis(300), long)
                .await
                .is_err(),
            "a long search waits for a thread of its own"
        );
        release.store(true, Ordering::SeqCst);
        for h in heavy {
            h.await.expect("task").expect("ran");
        }
    }
}
