//! Self-play through Redis, end to end: a real `redis-server` (started by each test on a free
//! port of 127.0.0.1, without persistence), the built `oware` binary as learner and workers,
//! and `configs/tiny.toml`. A learner without local self-play trains from three workers, one of
//! them killed with SIGKILL; a learner killed and resumed takes the games sent meanwhile, none
//! lost and none twice; hostile records are rejected and counted; Redis stopped and started
//! again mid-run does not stop the run.
//!
//! Every child process is guarded (killed and waited for on drop, see `broker_common`): a
//! failing assertion leaves nothing running.
//!
//! Where `redis-server` is not installed (`.ci/run` installs it), each test says so loudly and
//! passes without running.

use oware_trainer::broker::wire;
use oware_trainer::tensorboard::{event_files, read_scalars};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::common::broker::{
    Proc, Redis, broker_state, finish, learner, meta, sigint, spawn, step, wait_for, worker,
};
use crate::common::scratch;

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
    let mut workers: Vec<Proc> = logs.iter().map(|p| worker(&url, "three", &[], p)).collect();
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
    let workers: Vec<Proc> = logs
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
