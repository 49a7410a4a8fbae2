//! Self-play through Redis, end to end: a real `redis-server` (started by each test on a free
//! port of 127.0.0.1, without persistence), the built `oware` binary as learner and workers,
//! and `configs/tiny.toml`. A learner without local self-play trains from three workers, one of
//! them killed with SIGKILL; a learner killed and resumed takes the games sent meanwhile, none
//! lost and none twice; hostile records are rejected and counted; Redis stopped and started
//! again mid-run does not stop the run.
//!
//! Where `redis-server` is not installed (`.ci/run` installs it), each test says so loudly and
//! passes without running.

use oware_trainer::broker::wire;
use oware_trainer::tensorboard::{event_files, read_scalars};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod common;

use common::{BIN, scratch};
const TINY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/configs/tiny.toml");
const LIMIT: Duration = Duration::from_secs(180);

/// A `redis-server` of this test, stopped when dropped.
struct Redis {
    child: Option<Child>,
    port: u16,
    dir: PathBuf,
}

fn redis_binary() -> Option<PathBuf> {
    ["/usr/bin/redis-server", "/usr/local/bin/redis-server"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
}

impl Redis {
    /// Starts one, or `None` (with a loud message) where redis-server is not installed.
    fn start(dir: &Path) -> Option<Redis> {
        let Some(_) = redis_binary() else {
            eprintln!(
                "\n*** SKIPPED: redis-server is not installed (apt-get install redis-server; \
                 .ci/run does it) ***\n"
            );
            return None;
        };
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .expect("a free port")
            .local_addr()
            .expect("address")
            .port();
        let mut r = Redis {
            child: None,
            port,
            dir: dir.to_path_buf(),
        };
        r.up();
        Some(r)
    }

    fn up(&mut self) {
        let bin = redis_binary().expect("redis-server");
        let log = File::create(self.dir.join(format!("redis-{}.log", self.port))).expect("log");
        let child = Command::new(bin)
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(&self.dir)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server starts");
        self.child = Some(child);
        let started = Instant::now();
        while self.con().is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "redis-server answers"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Stops it (SIGKILL: nothing is kept, as after a crash of a Redis without persistence).
    fn down(&mut self) {
        if let Some(mut c) = self.child.take() {
            c.kill().ok();
            c.wait().ok();
        }
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    fn con(&self) -> redis::RedisResult<redis::Connection> {
        let client = redis::Client::open(self.url())?;
        client.get_connection_with_timeout(Duration::from_secs(1))
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.down();
    }
}

/// Starts `oware ARGS`, its stderr into `log`.
fn spawn(args: &[&str], log: &Path) -> Child {
    Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(File::create(log).expect("log file"))
        .spawn()
        .expect("starts")
}

fn learner(run: &Path, url: &str, sets: &[&str], log: &Path) -> Child {
    let mut args = vec![
        "train",
        "--config",
        TINY,
        "--run",
        run.to_str().expect("utf-8"),
        "--quiet",
        "--broker",
        url,
    ];
    for s in sets {
        args.extend(["--set", s]);
    }
    spawn(&args, log)
}

fn worker(url: &str, run: &str, extra: &[&str], log: &Path) -> Child {
    let mut args = vec![
        "worker",
        "--broker",
        url,
        "--run",
        run,
        "--threads",
        "1",
        "--json",
    ];
    args.extend_from_slice(extra);
    spawn(&args, log)
}

fn sigint(child: &Child) {
    let ok = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill")
        .success();
    assert!(ok);
}

/// Waits for `child` to exit (killing it after `LIMIT`), asserting success; its stdout.
fn finish(mut child: Child, what: &str, log: &Path) -> String {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            let mut out = String::new();
            if let Some(mut s) = child.stdout.take() {
                std::io::Read::read_to_string(&mut s, &mut out).ok();
            }
            let err = std::fs::read_to_string(log).unwrap_or_default();
            assert!(status.success(), "{what} failed ({status}):\n{err}\n{out}");
            return out;
        }
        if started.elapsed() > LIMIT {
            child.kill().ok();
            let err = std::fs::read_to_string(log).unwrap_or_default();
            panic!("{what} did not finish:\n{err}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn meta(run: &Path) -> Option<Value> {
    let latest = std::fs::read_to_string(run.join("checkpoints/latest")).ok()?;
    let path = run
        .join("checkpoints")
        .join(latest.trim())
        .join("meta.json");
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

fn step(run: &Path) -> u64 {
    meta(run).and_then(|m| m["step"].as_u64()).unwrap_or(0)
}

/// Waits until `cond` holds (failing after `LIMIT`, with `log`).
fn wait_for(what: &str, log: &Path, mut cond: impl FnMut() -> bool) {
    let started = Instant::now();
    while !cond() {
        if started.elapsed() > LIMIT {
            panic!(
                "timed out waiting for {what}:\n{}",
                std::fs::read_to_string(log).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The broker's state in the latest checkpoint.
fn broker_state(run: &Path) -> Value {
    meta(run).expect("a checkpoint")["extra"]["broker"].clone()
}

/// Games per worker that are still in the stream (not acknowledged), by worker id: their
/// sequence numbers.
fn stream_games(redis: &Redis, run: &str) -> BTreeMap<String, Vec<u64>> {
    let mut con = redis.con().expect("connect");
    let entries: redis::streams::StreamRangeReply = redis::cmd("XRANGE")
        .arg(format!("oware:{{{run}}}:games"))
        .arg("-")
        .arg("+")
        .query(&mut con)
        .expect("XRANGE");
    let mut out: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for e in entries.ids {
        let Some(redis::Value::BulkString(bytes)) = e.map.get("g") else {
            continue;
        };
        if let Ok(g) = wire::decode(bytes) {
            out.entry(g.worker).or_default().push(g.seq);
        }
    }
    out
}

/// The accounting every test checks: each worker's games were taken (or dropped as stale)
/// exactly once and in order with nothing missing, the run's game count is the broker's (no
/// game trained twice), and what a worker sent beyond the checkpoint is still in the stream.
fn check_accounting(run: &Path, redis: &Redis, name: &str, sent: &BTreeMap<String, u64>) {
    let m = meta(run).expect("a checkpoint");
    let b = &m["extra"]["broker"];
    assert_eq!(
        b["games"], m["games"],
        "every game trained comes from the broker: {b}"
    );
    let workers = b["workers"].as_object().expect("workers");
    let left = stream_games(redis, name);
    for (id, t) in workers {
        let n = |k: &str| t[k].as_u64().expect(k);
        assert_eq!(n("missing"), 0, "{id}: {t}");
        assert_eq!(n("games") + n("stale"), n("next_seq"), "{id}: {t}");
        if let Some(&total) = sent.get(id) {
            // What is not in the checkpoint is still in the stream, nothing else is lost.
            let mut rest: Vec<u64> = left
                .get(id)
                .map(|v| v.iter().copied().filter(|&s| s >= n("next_seq")).collect())
                .unwrap_or_default();
            rest.sort_unstable();
            rest.dedup();
            let want: Vec<u64> = (n("next_seq")..total).collect();
            assert_eq!(rest, want, "{id}: {t}, sent {total}");
        }
    }
}

/// The worker summaries (`--json`) by worker id: games sent.
fn sent_of(summaries: &[String]) -> BTreeMap<String, u64> {
    summaries
        .iter()
        .map(|s| {
            let v: Value = serde_json::from_str(s.trim()).expect("worker summary JSON");
            (
                v["worker"].as_str().expect("id").to_string(),
                v["sent"].as_u64().expect("sent"),
            )
        })
        .collect()
}

#[test]
fn three_workers_train_a_learner_and_a_killed_worker_is_no_error() {
    let dir = scratch("broker-three");
    let Some(redis) = Redis::start(&dir) else {
        return;
    };
    let url = redis.url();
    let run = dir.join("three");
    let log = dir.join("learner.log");
    // The workers start first and wait for the learner's weights.
    let logs: Vec<PathBuf> = (0..3).map(|i| dir.join(format!("worker{i}.log"))).collect();
    let mut workers: Vec<Child> = logs.iter().map(|p| worker(&url, "three", &[], p)).collect();
    for p in &logs {
        wait_for("a waiting worker", p, || {
            std::fs::read_to_string(p).is_ok_and(|t| t.contains("no weights published"))
        });
    }
    // Data-bound: every step needs 128 new positions, so all three workers contribute.
    let l = learner(
        &run,
        &url,
        &[
            "selfplay.workers=0",
            "schedule.max_steps=100",
            "schedule.samples_per_position=0.5",
            "broker.max_version_lag=1000",
        ],
        &log,
    );
    // Kill one worker once the learner has games from it, mid-game (16 games in flight).
    wait_for("a first checkpoint", &log, || step(&run) >= 10);
    let mut killed = workers.remove(0);
    killed.kill().expect("SIGKILL");
    killed.wait().ok();
    finish(l, "the learner", &log);
    assert_eq!(step(&run), 100);
    let learner_log = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(!learner_log.contains("error"), "{learner_log}");
    let b = broker_state(&run);
    let workers_seen = b["workers"].as_object().expect("workers").len();
    assert_eq!(workers_seen, 3, "games from all three workers: {b}");
    assert_eq!(b["rejected"], 0, "{b}");
    // TensorBoard has the broker's scalars.
    let files = event_files(&run).expect("events");
    let scalars = read_scalars(&files[0]).expect("readable");
    for tag in [
        "broker/ingest_games_per_sec",
        "broker/version_lag",
        "broker/workers",
        "broker/games_per_worker_per_sec",
        "broker/rejected",
        "broker/stale",
    ] {
        assert!(scalars.iter().any(|s| s.tag == tag), "no {tag}");
    }
    assert!(
        scalars.iter().any(|s| s.tag.starts_with("broker/worker/")),
        "per-worker rates"
    );
    // The other workers stop cleanly on Ctrl-C and report what they sent.
    let mut summaries = Vec::new();
    for (w, p) in workers.into_iter().zip(&logs[1..]) {
        sigint(&w);
        summaries.push(finish(w, "a worker", p));
    }
    let sent = sent_of(&summaries);
    assert_eq!(sent.len(), 2);
    check_accounting(&run, &redis, "three", &sent);
    let wlog = std::fs::read_to_string(&logs[1]).unwrap_or_default();
    assert!(wlog.contains("weights version"), "{wlog}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_killed_learner_resumes_and_takes_the_games_sent_meanwhile_once() {
    let dir = scratch("broker-resume");
    let Some(redis) = Redis::start(&dir) else {
        return;
    };
    let url = redis.url();
    let run = dir.join("resume");
    let log = dir.join("learner.log");
    let sets = [
        "selfplay.workers=0",
        "schedule.max_steps=1000000",
        "eval.every_steps=0",
        "broker.max_version_lag=1000",
    ];
    let mut l = learner(&run, &url, &sets, &log);
    let logs: Vec<PathBuf> = (0..2).map(|i| dir.join(format!("worker{i}.log"))).collect();
    let workers: Vec<Child> = logs
        .iter()
        .map(|p| worker(&url, "resume", &["--games", "120"], p))
        .collect();
    wait_for("a checkpoint", &log, || step(&run) >= 10);
    l.kill().expect("SIGKILL");
    l.wait().ok();
    let at_kill = broker_state(&run)["games"].as_u64().expect("games");
    // The workers go on while the learner is away, and finish their games.
    let mut summaries = Vec::new();
    for (w, p) in workers.into_iter().zip(&logs) {
        summaries.push(finish(w, "a worker", p));
    }
    let sent = sent_of(&summaries);
    assert!(sent.values().all(|&n| n == 120), "{sent:?}");
    // Resume: the learner takes what was sent meanwhile.
    let log2 = dir.join("learner2.log");
    let args = [
        "train",
        "--resume",
        run.to_str().expect("utf-8"),
        "--quiet",
        "--broker",
        &url,
    ];
    let l = spawn(&args, &log2);
    let before = step(&run);
    wait_for("the resumed learner's checkpoints", &log2, || {
        step(&run) >= before + 20
    });
    // Let it read the rest of the stream, then stop it.
    let mut con = redis.con().expect("connect");
    wait_for("the stream read to its end", &log2, || {
        let groups: redis::streams::StreamInfoGroupsReply = redis::cmd("XINFO")
            .arg("GROUPS")
            .arg("oware:{resume}:games")
            .query(&mut con)
            .expect("XINFO");
        groups.groups.iter().all(|g| g.lag == Some(0))
    });
    std::thread::sleep(Duration::from_millis(500));
    sigint(&l);
    finish(l, "the resumed learner", &log2);
    let b = broker_state(&run);
    assert!(
        b["games"].as_u64().expect("games") > at_kill,
        "games after the resume: {b}, {at_kill} at the kill"
    );
    check_accounting(&run, &redis, "resume", &sent);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn hostile_records_are_rejected_and_counted() {
    let dir = scratch("broker-hostile");
    let Some(redis) = Redis::start(&dir) else {
        return;
    };
    let url = redis.url();
    let run = dir.join("hostile");
    let log = dir.join("learner.log");
    // Local self-play trains; the stream brings only hostile records.
    let l = learner(
        &run,
        &url,
        &["selfplay.workers=1", "schedule.max_steps=60"],
        &log,
    );
    let mut con = redis.con().expect("connect");
    wait_for("the published weights", &log, || {
        redis::cmd("HGET")
            .arg("oware:{hostile}:weights")
            .arg("version")
            .query::<Option<u64>>(&mut con)
            .ok()
            .flatten()
            .is_some()
    });
    // A valid record made hostile: an illegal first move (a North house), a policy that does
    // not sum to 1; plus an oversized blob and a wrong field.
    let mut good = Vec::new();
    good.extend_from_slice(wire::MAGIC);
    good.extend_from_slice(&1u64.to_le_bytes());
    good.extend_from_slice(&0u64.to_le_bytes());
    good.extend_from_slice(&200u16.to_le_bytes());
    good.push(1);
    good.push(b'h');
    good.extend_from_slice(&1u16.to_le_bytes());
    let mut illegal = good.clone();
    illegal.push(6); // North's house on South's move
    illegal.extend_from_slice(&0u16.to_le_bytes());
    let mut bad_policy = good.clone();
    bad_policy.push(0);
    bad_policy.extend_from_slice(&1u16.to_le_bytes());
    bad_policy.extend_from_slice(&0u16.to_le_bytes());
    for p in [0.9f32, 0.9, 0.0, 0.0, 0.0, 0.0] {
        bad_policy.extend_from_slice(&p.to_le_bytes());
    }
    let huge = vec![7u8; wire::MAX_RECORD_BYTES + 1];
    let key = "oware:{hostile}:games";
    for (field, value) in [
        ("g", illegal),
        ("g", bad_policy),
        ("g", huge),
        ("x", b"hello".to_vec()),
    ] {
        let _: String = redis::cmd("XADD")
            .arg(key)
            .arg("*")
            .arg(field)
            .arg(value)
            .query(&mut con)
            .expect("XADD");
    }
    finish(l, "the learner", &log);
    assert_eq!(step(&run), 60);
    let b = broker_state(&run);
    assert_eq!(b["rejected"], 4, "{b}");
    assert_eq!(b["games"], 0, "{b}");
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    for why in ["illegal move", "sums to", "larger than", "field 'x'"] {
        assert!(text.contains(why), "no '{why}' in:\n{text}");
    }
    // Acknowledged and deleted with the checkpoint that counts them.
    let left: usize = redis::cmd("XLEN").arg(key).query(&mut con).expect("XLEN");
    assert_eq!(left, 0);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn redis_stopped_and_started_again_mid_run_does_not_stop_the_run() {
    let dir = scratch("broker-restart");
    let Some(mut redis) = Redis::start(&dir) else {
        return;
    };
    let url = redis.url();
    let run = dir.join("restart");
    let log = dir.join("learner.log");
    // Data-bound (256 new positions per step): the run cannot end on what it had before.
    let l = learner(
        &run,
        &url,
        &[
            "selfplay.workers=0",
            "schedule.max_steps=200",
            "schedule.samples_per_position=0.25",
            "eval.every_steps=0",
            "broker.max_version_lag=1000",
        ],
        &log,
    );
    let wlog = dir.join("worker.log");
    let w = worker(&url, "restart", &[], &wlog);
    wait_for("a checkpoint", &log, || step(&run) >= 10);
    redis.down();
    std::thread::sleep(Duration::from_secs(2));
    redis.up();
    finish(l, "the learner", &log);
    assert_eq!(step(&run), 200);
    // The new Redis started empty: the learner read games from it.
    let mut con = redis.con().expect("connect");
    let groups: redis::streams::StreamInfoGroupsReply = redis::cmd("XINFO")
        .arg("GROUPS")
        .arg("oware:{restart}:games")
        .query(&mut con)
        .expect("the group exists again");
    assert!(
        groups
            .groups
            .iter()
            .any(|g| g.entries_read.unwrap_or(0) > 0),
        "games read after the restart"
    );
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(text.contains("lost the connection"), "{text}");
    assert!(text.contains("connected again"), "{text}");
    sigint(&w);
    let summary = finish(w, "the worker", &wlog);
    let v: Value = serde_json::from_str(summary.trim()).expect("summary");
    assert!(v["reconnects"].as_u64().expect("reconnects") >= 1, "{v}");
    std::fs::remove_dir_all(&dir).ok();
}
