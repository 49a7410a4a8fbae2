//! The Redis ACL set-up of docs/security.md, tested with a real `redis-server` and real ACL
//! users: the learner's user may do what a learner does on its run's keys only; a worker's user
//! may only add games to the stream and read the weights; the default user is off. A learner
//! and a worker train to the end with them, and each refused command is tried.
//!
//! Where `redis-server` is not installed, the test says so loudly and passes without running.

use oware_trainer::broker::{BrokerUrl, connect};
use std::time::Duration;

use crate::common::broker::{Redis, broker_state, finish, learner, sigint, step, worker};
use crate::common::scratch;

/// The ACL rules of docs/security.md for run `run`: (user, rules).
fn acl_rules(run: &str) -> [(&'static str, Vec<String>); 3] {
    let keys = format!("~oware:{{{run}}}:*");
    let weights = format!("%R~oware:{{{run}}}:weights");
    let games = format!("%W~oware:{{{run}}}:games");
    let strs = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let mut learner = strs(&["on", ">learner-secret", "resetkeys"]);
    learner.push(keys);
    learner.extend(strs(&[
        "resetchannels",
        "-@all",
        "+ping",
        "+hget",
        "+hmget",
        "+hgetall",
        "+hset",
        "+del",
        "+xgroup|create",
        "+xreadgroup",
        "+xack",
        "+xdel",
        "+multi",
        "+exec",
    ]));
    let mut worker = strs(&["on", ">worker-secret", "resetkeys"]);
    worker.push(weights);
    worker.push(games);
    worker.extend(strs(&[
        "resetchannels",
        "-@all",
        "+ping",
        "+hget",
        "+hmget",
        "+xadd",
    ]));
    let admin = strs(&["on", ">admin-secret", "~*", "&*", "+@all"]);
    [("admin", admin), ("learner", learner), ("worker", worker)]
}

fn con_as(redis: &Redis, user: &str, password: &str) -> anyhow::Result<redis::Connection> {
    let url = BrokerUrl::parse(&format!(
        "redis://{user}:{password}@127.0.0.1:{}/0",
        redis.port
    ))?;
    connect(&url, Duration::from_secs(2), Duration::from_secs(5))
}

/// Runs `args` and returns the error code Redis answered with (`None`: it was allowed).
fn refusal(con: &mut redis::Connection, args: &[&str]) -> Option<String> {
    let mut cmd = redis::cmd(args[0]);
    for a in &args[1..] {
        cmd.arg(*a);
    }
    match cmd.query::<redis::Value>(con) {
        Ok(_) => None,
        Err(e) => Some(e.code().unwrap_or("?").to_string()),
    }
}

#[test]
fn workers_may_only_add_games_and_read_weights() {
    let dir = scratch("broker-acl");
    let Some(redis) = Redis::start(&dir) else {
        return;
    };
    let name = "acl";
    {
        let mut root = redis.con().expect("connect");
        for (user, rules) in acl_rules(name) {
            let mut cmd = redis::cmd("ACL");
            cmd.arg("SETUSER").arg(user);
            for r in &rules {
                cmd.arg(r.as_str());
            }
            cmd.query::<()>(&mut root)
                .unwrap_or_else(|e| panic!("ACL SETUSER {user}: {e}"));
        }
        redis::cmd("ACL")
            .arg("SETUSER")
            .arg("default")
            .arg("off")
            .query::<()>(&mut root)
            .expect("default off");
    }
    // Nobody gets in without a user.
    assert!(redis.con().is_err(), "the default user is off");
    let learner_url = format!("redis://learner:learner-secret@127.0.0.1:{}/0", redis.port);
    let worker_url = format!("redis://worker:worker-secret@127.0.0.1:{}/0", redis.port);

    let run = dir.join(name);
    let log = dir.join("learner.log");
    let wlog = dir.join("worker.log");
    let w = worker(&worker_url, name, &[], &wlog);
    let l = learner(
        &run,
        &learner_url,
        &[
            "selfplay.workers=0",
            "schedule.max_steps=30",
            "schedule.samples_per_position=0.5",
        ],
        &log,
    );
    finish(l, "the learner under its ACL user", &log);
    assert_eq!(step(&run), 30);
    let b = broker_state(&run);
    assert!(b["games"].as_u64() > Some(0), "games from the worker: {b}");
    assert_eq!(b["rejected"], 0, "{b}");
    sigint(&w);
    let out = finish(w, "the worker under its ACL user", &wlog);
    let summary: serde_json::Value = serde_json::from_str(out.trim()).expect("summary");
    assert!(summary["sent"].as_u64() > Some(0), "{summary}");

    // What a worker's credentials cannot do.
    let mut wc = con_as(&redis, "worker", "worker-secret").expect("the worker user");
    let weights = format!("oware:{{{name}}}:weights");
    let games = format!("oware:{{{name}}}:games");
    assert_eq!(refusal(&mut wc, &["HGET", &weights, "version"]), None);
    assert_eq!(refusal(&mut wc, &["XADD", &games, "*", "g", "x"]), None);
    let noperm = Some("NOPERM".to_string());
    for args in [
        vec!["HSET", &weights, "version", "999"],
        vec!["HDEL", &weights, "signature"],
        vec!["DEL", &weights],
        vec!["DEL", &games],
        vec!["XADD", &weights, "*", "g", "x"],
        vec!["XRANGE", &games, "-", "+"],
        vec![
            "XREADGROUP",
            "GROUP",
            "learner",
            "learner",
            "STREAMS",
            &games,
            "0",
        ],
        vec!["XACK", &games, "learner", "0-1"],
        vec!["XDEL", &games, "0-1"],
        vec!["XGROUP", "DESTROY", &games, "learner"],
        vec!["HGET", "oware:{other}:weights", "version"],
        vec!["SET", "x", "y"],
        vec!["FLUSHALL"],
        vec!["CONFIG", "SET", "maxmemory", "1"],
    ] {
        assert_eq!(refusal(&mut wc, &args), noperm, "worker: {args:?}");
    }
    // The learner's credentials reach its own run's keys only, and no server commands.
    let mut lc = con_as(&redis, "learner", "learner-secret").expect("the learner user");
    assert_eq!(refusal(&mut lc, &["HGET", &weights, "version"]), None);
    for args in [
        vec!["HSET", "oware:{other}:weights", "version", "1"],
        vec!["SET", "x", "y"],
        vec!["KEYS", "*"],
        vec!["FLUSHALL"],
        vec!["CONFIG", "GET", "requirepass"],
        vec!["ACL", "LIST"],
    ] {
        assert_eq!(refusal(&mut lc, &args), noperm, "learner: {args:?}");
    }
    std::fs::remove_dir_all(&dir).ok();
}
