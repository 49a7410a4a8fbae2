//! The broker under attack, end to end: a real `redis-server`, the built `oware` as learner
//! and workers, and a hostile client that holds the Redis password. Forged weights (tampered,
//! signed by another key, unsigned, an old publication written again) are refused by every
//! worker whatever it trusts, and the learner publishes its own again; a flood of junk entries
//! (garbage, oversized records, duplicates, games under another ply limit, forged sequence
//! numbers, one worker id far over its rate) is dropped and counted, deleted from Redis at
//! once, leaves the learner's memory bounded, and the learner trains on from its honest worker.
//!
//! Where `redis-server` is not installed, each test says so loudly and passes without running.

use oware_engine::Game;
use oware_trainer::broker::sign::{self, LearnerKey, PublicKey};
use oware_trainer::broker::wire;
use oware_trainer::replay::Sample;
use oware_trainer::selfplay::GameRecord;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::broker::{
    Proc, Redis, broker_state, finish, learner, sigint, step, wait_for, worker,
};
use crate::common::scratch;

fn log_has(path: &Path, text: &str) -> bool {
    std::fs::read_to_string(path).is_ok_and(|t| t.contains(text))
}

/// The fields of the weights hash.
fn weights_hash(con: &mut redis::Connection, key: &str) -> Vec<(String, Vec<u8>)> {
    redis::cmd("HGETALL").arg(key).query(con).expect("HGETALL")
}

fn field<'a>(hash: &'a [(String, Vec<u8>)], name: &str) -> &'a [u8] {
    hash.iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_slice())
        .unwrap_or_else(|| panic!("no field {name}"))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).expect("text")
}

/// Replaces the weights hash with `fields`.
fn write_hash(con: &mut redis::Connection, key: &str, fields: &[(String, Vec<u8>)]) {
    let mut pipe = redis::pipe();
    pipe.atomic().cmd("DEL").arg(key).ignore();
    pipe.cmd("HSET").arg(key);
    for (n, v) in fields {
        pipe.arg(n).arg(v.as_slice());
    }
    pipe.ignore().query::<()>(con).expect("HSET");
}

/// `hash` with `name` set to `value` (added if missing).
fn with(mut hash: Vec<(String, Vec<u8>)>, name: &str, value: Vec<u8>) -> Vec<(String, Vec<u8>)> {
    hash.retain(|(n, _)| n != name);
    hash.push((name.to_string(), value));
    hash
}

/// Whether `hash` is a publication of run `run` signed by `learner`.
fn is_genuine(hash: &[(String, Vec<u8>)], run: &str, learner: &PublicKey) -> bool {
    let get = |n: &str| hash.iter().find(|(k, _)| k == n).map(|(_, v)| v.as_slice());
    let (Some(v), Some(m), Some(s), Some(w), Some(k), Some(sig)) = (
        get("version"),
        get("model"),
        get("settings"),
        get("weights"),
        get("key"),
        get("signature"),
    ) else {
        return false;
    };
    let Some(version) = String::from_utf8(v.to_vec())
        .ok()
        .and_then(|v| v.parse().ok())
    else {
        return false;
    };
    let message = sign::message(run, version, &text(m), &text(s), w);
    PublicKey::parse(&text(k)) == Some(*learner) && learner.verifies(&message, &text(sig))
}

/// Forges with `forge` (given the learner's latest genuine hash) every 100 ms until `done`
/// holds.
#[allow(clippy::too_many_arguments)]
fn keep_forging(
    con: &mut redis::Connection,
    key: &str,
    run: &str,
    learner: &PublicKey,
    what: &str,
    log: &Path,
    mut forge: impl FnMut(Vec<(String, Vec<u8>)>) -> Vec<(String, Vec<u8>)>,
    mut done: impl FnMut() -> bool,
) {
    // The learner publishes its own again within seconds of the last forgery.
    let started = Instant::now();
    let mut genuine = weights_hash(con, key);
    while !is_genuine(&genuine, run, learner) {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{what}: the learner did not publish its weights again"
        );
        std::thread::sleep(Duration::from_millis(50));
        genuine = weights_hash(con, key);
    }
    let started = Instant::now();
    while !done() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{what}: not every worker refused it in 60 s:\n{}",
            std::fs::read_to_string(log).unwrap_or_default()
        );
        let now = weights_hash(con, key);
        // Forge from the learner's own publication (not from a forgery of ours).
        if is_genuine(&now, run, learner) {
            genuine = now;
        }
        write_hash(con, key, &forge(genuine.clone()));
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn forged_weights_are_refused_by_every_worker() {
    let dir = scratch("broker-forged");
    let Some(redis) = Redis::start(&dir) else {
        return;
    };
    let url = redis.url();
    let name = "forged";
    let run = dir.join(name);
    let log = dir.join("learner.log");
    let l = learner(
        &run,
        &url,
        &[
            "selfplay.workers=0",
            "schedule.max_steps=100000",
            "schedule.samples_per_position=0.5",
            "broker.max_version_lag=100000",
        ],
        &log,
    );
    let key = format!("oware:{{{name}}}:weights");
    let mut con = redis.con().expect("connect");
    wait_for("the published weights", &log, || {
        redis::cmd("HGET")
            .arg(&key)
            .arg("signature")
            .query::<Option<String>>(&mut con)
            .ok()
            .flatten()
            .is_some()
    });
    let public = std::fs::read_to_string(run.join(sign::PUBLIC_KEY_FILE)).expect("the public key");
    let public = PublicKey::parse(&public).expect("a public key");
    let fingerprint = public.fingerprint();
    assert!(
        log_has(&log, &fingerprint),
        "the learner prints its fingerprint"
    );
    let first = weights_hash(&mut con, &key);

    // Workers pinned to the key, to its fingerprint, trusting the first key they see, and one
    // given a wrong key.
    let logs: Vec<_> = (0..4).map(|i| dir.join(format!("worker{i}.log"))).collect();
    let wrong = LearnerKey::generate().public().hex();
    let pub_hex = public.hex();
    let extra: [Vec<&str>; 4] = [
        vec!["--learner-key", &pub_hex],
        vec!["--learner-key", &fingerprint],
        vec![],
        vec!["--learner-key", &wrong],
    ];
    let mut workers: Vec<Proc> = logs
        .iter()
        .zip(&extra)
        .map(|(p, e)| worker(&url, name, e, p))
        .collect();
    for p in &logs[..3] {
        // The line a worker prints when it starts playing.
        wait_for("a playing worker", p, || log_has(p, "sims per move"));
    }
    wait_for("the wrong-key worker refusing", &logs[3], || {
        log_has(&logs[3], "not the learner's")
    });
    assert!(!log_has(&logs[3], "sims per move"), "it never plays");
    wait_for("games from the workers", &log, || step(&run) >= 5);

    let honest = &logs[..3];
    let all_refused = |why: &str| honest.iter().all(|p| log_has(p, why));
    let version =
        |h: &[(String, Vec<u8>)]| -> u64 { text(field(h, "version")).parse().expect("a version") };
    // 1. The learner's publication, tampered (its settings changed), under a new version.
    keep_forging(
        &mut con,
        &key,
        name,
        &public,
        "tampered",
        &log,
        |h| {
            let v = version(&h) + 1000;
            let mut settings = text(field(&h, "settings"));
            settings.push(' ');
            let h = with(h, "settings", settings.into_bytes());
            with(h, "version", v.to_string().into_bytes())
        },
        || all_refused("signature does not match"),
    );
    // 2. Signed, but by another key.
    let forger = LearnerKey::generate();
    keep_forging(
        &mut con,
        &key,
        name,
        &public,
        "signed by another key",
        &log,
        |h| {
            let v = version(&h) + 2000;
            let m = sign::message(
                name,
                v,
                &text(field(&h, "model")),
                &text(field(&h, "settings")),
                field(&h, "weights"),
            );
            let h = with(h, "version", v.to_string().into_bytes());
            let h = with(h, "key", forger.public().hex().into_bytes());
            with(h, "signature", forger.sign(&m).into_bytes())
        },
        || {
            honest[..2].iter().all(|p| log_has(p, "not the learner's"))
                && log_has(&honest[2], "of the weights first loaded")
        },
    );
    // 3. Not signed at all.
    keep_forging(
        &mut con,
        &key,
        name,
        &public,
        "unsigned",
        &log,
        |mut h| {
            let v = version(&h) + 3000;
            h.retain(|(n, _)| n != "signature" && n != "key");
            with(h, "version", v.to_string().into_bytes())
        },
        || all_refused("not signed"),
    );
    // 4. The learner's first publication written again (signed, but old).
    wait_for("a newer publication of the learner", &log, || {
        let h = weights_hash(&mut con, &key);
        is_genuine(&h, name, &public) && version(&h) > version(&first) + 1
    });
    keep_forging(
        &mut con,
        &key,
        name,
        &public,
        "an old publication",
        &log,
        |_| first.clone(),
        || all_refused("older than the version"),
    );
    // The learner noticed and published its own again; it trains on from the workers.
    assert!(log_has(&log, "changed by another client"));
    let before = step(&run);
    wait_for("more steps after the forgeries", &log, || {
        step(&run) >= before + 5
    });

    sigint(&l);
    let learner_done = finish(l, "the learner", &log);
    drop(learner_done);
    let last = broker_state(&run)["version"].as_u64().expect("version");
    let mut summaries = Vec::new();
    let wrong_worker = workers.pop().expect("the wrong-key worker");
    for (w, p) in workers.into_iter().zip(honest) {
        sigint(&w);
        summaries.push((finish(w, "a worker", p), p.clone()));
    }
    drop(wrong_worker);
    for (out, p) in &summaries {
        let s: Value = serde_json::from_str(out.trim()).expect("worker summary JSON");
        assert!(s["refused"].as_u64() >= Some(4), "{s}\n{p:?}");
        assert_eq!(s["learner_key"], fingerprint.as_str(), "{s}");
        // Only the learner's versions were loaded (every forgery was 1000 or more above).
        let v = s["version"].as_u64().expect("version");
        assert!(
            v <= last,
            "worker holds version {v}, the learner published up to {last}"
        );
        assert!(s["sent"].as_u64() > Some(0), "{s}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A random finished game under `max_plies` with a uniform policy on every other move.
fn random_game(seed: u64, max_plies: u32) -> GameRecord {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut game = Game::with_max_plies(max_plies);
    let mut pending = Vec::new();
    while !game.is_over() {
        let moves: Vec<_> = game.legal_moves().iter().collect();
        if game.ply().is_multiple_of(2) {
            let mut policy = [0f32; 6];
            for m in &moves {
                policy[m.relative()] = 1.0 / moves.len() as f32;
            }
            pending.push((*game.position(), policy, game.to_move()));
        }
        game.play(moves[rng.random_range(0..moves.len())])
            .expect("legal");
    }
    let result = game.result().expect("over");
    GameRecord {
        moves: game.moves().to_vec(),
        result,
        samples: pending
            .into_iter()
            .map(|(position, policy, side)| Sample::of_result(position, policy, side, &result))
            .collect(),
    }
}

/// The process's resident memory now and at its peak, MiB (`VmRSS`, `VmHWM`).
fn memory_mib(pid: u32) -> (f64, f64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    let get = |k: &str| -> f64 {
        status
            .lines()
            .find_map(|l| l.strip_prefix(k))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            .expect(k)
            / 1024.0
    };
    (get("VmRSS:"), get("VmHWM:"))
}

/// Entries read by the learner and not acknowledged yet.
fn pending_entries(con: &mut redis::Connection, games: &str) -> u64 {
    let v: redis::Value = redis::cmd("XPENDING")
        .arg(games)
        .arg("learner")
        .query(con)
        .expect("XPENDING");
    match v {
        redis::Value::Array(items) => match items.first() {
            Some(redis::Value::Int(n)) => u64::try_from(*n).unwrap_or(0),
            _ => 0,
        },
        _ => 0,
    }
}

fn count(b: &Value, k: &str) -> u64 {
    b[k].as_u64().unwrap_or(0)
}

#[test]
fn a_junk_flood_leaves_the_learner_bounded_and_training_from_honest_workers() {
    let dir = scratch("broker-flood");
    let Some(redis) = Redis::start(&dir) else {
        return;
    };
    let url = redis.url();
    let name = "flood";
    let run = dir.join(name);
    let log = dir.join("learner.log");
    let l = learner(
        &run,
        &url,
        &[
            "selfplay.workers=0",
            "schedule.max_steps=100000",
            "schedule.samples_per_position=0.5",
            "broker.max_version_lag=100000",
            "broker.max_games_per_worker_per_minute=600",
        ],
        &log,
    );
    let wlog = dir.join("worker.log");
    let w = worker(&url, name, &[], &wlog);
    wait_for("a first checkpoint", &log, || step(&run) >= 10);
    let honest_id = std::fs::read_to_string(&wlog)
        .unwrap_or_default()
        .lines()
        .find_map(|l| {
            let rest = l.strip_prefix("worker ")?;
            let (id, _) = rest.split_once(':')?;
            wire::valid_worker_id(id).then(|| id.to_string())
        })
        .expect("the worker's id in its log");
    let before = broker_state(&run);
    let honest_before = before["workers"][&honest_id]["games"].as_u64().unwrap_or(0);
    let pid = l.id();
    let (rss_before, _) = memory_mib(pid);

    // The flood.
    let games = format!("oware:{{{name}}}:games");
    let mut con = redis.con().expect("connect");
    let version: u64 = redis::cmd("HGET")
        .arg(format!("oware:{{{name}}}:weights"))
        .arg("version")
        .query(&mut con)
        .expect("version");
    let mut rng = SmallRng::seed_from_u64(7);
    let mut entries: Vec<(&str, Vec<u8>)> = Vec::new();
    for _ in 0..2000 {
        let junk: Vec<u8> = (0..1024).map(|_| rng.random()).collect();
        entries.push(("g", junk));
    }
    for _ in 0..200 {
        entries.push(("g", vec![0xAB; 200 * 1024]));
    }
    for _ in 0..500 {
        entries.push(("x", b"not a game field".to_vec()));
    }
    let sample = random_game(1, 200);
    // One fake worker far over its rate (600 a minute), and the same record 1000 times.
    for seq in 0..3000 {
        let g = random_game(100 + seq, 200);
        entries.push((
            "g",
            wire::encode(&g, "flood", seq, version, 200).expect("encode"),
        ));
    }
    let dup = wire::encode(&sample, "dup", 0, version, 200).expect("encode");
    for _ in 0..1000 {
        entries.push(("g", dup.clone()));
    }
    // Valid games under another ply limit than the learner's 200.
    for seq in 0..500 {
        let g = random_game(5000 + seq, 1000);
        entries.push((
            "g",
            wire::encode(&g, "plies", seq, version, 1000).expect("encode"),
        ));
    }
    // The honest worker's id with sequence numbers that would silence it or overflow.
    for seq in [1u64 << 62, u64::MAX] {
        entries.push((
            "g",
            wire::encode(&sample, &honest_id, seq, version, 200).expect("encode"),
        ));
    }
    let total = entries.len();
    let flood_started = Instant::now();
    for chunk in entries.chunks(500) {
        let mut pipe = redis::pipe();
        for (f, v) in chunk {
            pipe.cmd("XADD")
                .arg(&games)
                .arg("*")
                .arg(*f)
                .arg(v.as_slice())
                .ignore();
        }
        pipe.query::<()>(&mut con).expect("XADD");
    }
    // The junk is read, dropped and deleted at once: the stream empties of it quickly.
    wait_for("the junk deleted from the stream", &log, || {
        let len: usize = redis::cmd("XLEN")
            .arg(&games)
            .query(&mut con)
            .unwrap_or(usize::MAX);
        len < 500
    });
    let cleared = flood_started.elapsed();
    let pending = pending_entries(&mut con, &games);
    // It trains on from the honest worker.
    let after_flood = step(&run);
    wait_for("training after the flood", &log, || {
        step(&run) >= after_flood + 20
    });
    let (rss_after, peak) = memory_mib(pid);
    let b = broker_state(&run);
    println!(
        "flood: {total} entries (about {} MiB) dropped and deleted in {:.1} s; {} pending \
         after; learner memory {rss_before:.0} MiB before, {rss_after:.0} MiB after, peak \
         {peak:.0} MiB",
        (2000 * 1024 + 200 * 200 * 1024) >> 20,
        cleared.as_secs_f64(),
        pending
    );
    println!("flood: broker state {b}");
    assert!(
        count(&b, "rejected") >= 2700,
        "garbage, oversized, wrong field: {b}"
    );
    assert!(
        count(&b, "rate_limited") >= 2300,
        "one id past its rate: {b}"
    );
    assert!(count(&b, "duplicates") >= 999, "{b}");
    assert_eq!(count(&b, "wrong_settings"), 500, "{b}");
    assert!(count(&b, "out_of_sequence") >= 2, "{b}");
    let honest = &b["workers"][&honest_id];
    assert!(
        honest["next_seq"].as_u64() < Some(1 << 20),
        "not silenced: {honest}"
    );
    assert!(
        honest["games"].as_u64().unwrap_or(0) > honest_before,
        "the honest worker's games are still taken: {honest}"
    );
    assert!(pending < 5000, "{pending} entries pending");
    assert!(
        peak - rss_before < 400.0,
        "the learner's memory peaked {:.0} MiB above where it was",
        peak - rss_before
    );
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        text.contains("rejected stream entry"),
        "the first rejections are named"
    );
    sigint(&l);
    finish(l, "the learner", &log);
    sigint(&w);
    finish(w, "the worker", &wlog);
    std::fs::remove_dir_all(&dir).ok();
}
