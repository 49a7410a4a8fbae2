//! The load test (ignored by default): 200 WebSocket clients in 100 rooms play random legal
//! moves for 60 s (`OWARE_LOAD_SECS` to change), with a human-like pause of 50–250 ms before
//! each move. It reports the move round trip (a move sent until its state comes back) at p50
//! and p99 and the server's memory before, during and after, and checks: no error, p99 at most
//! 50 ms, the rooms gone and the memory back near where it started once the clients leave.
//!
//! `cargo test --release --test serve -- --ignored --nocapture load`

use super::server::{Client, Server};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const ROOMS: usize = 100;

#[derive(Default)]
struct Stats {
    rtts: Vec<f64>,
    errors: Vec<String>,
    games: usize,
}

/// The server's resident memory in MiB, from /proc.
fn rss_mib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    let kb: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS");
    kb / 1024.0
}

/// One player: moves when it is its turn, asks for a rematch when a game ends.
async fn play(
    mut c: Client,
    mut side: &'static str,
    until: Instant,
    seed: u64,
    stats: Arc<Mutex<Stats>>,
) {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut pending: Option<(u64, Instant)> = None;
    let mut over = false;
    loop {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        let Ok(Some(m)) = tokio::time::timeout(left, c.next()).await else {
            return;
        };
        match m["type"].as_str() {
            Some("state") => {
                let ply = m["ply"].as_u64().unwrap_or(0);
                if let Some((p, t0)) = pending
                    && ply == p + 1
                {
                    stats
                        .lock()
                        .expect("stats")
                        .rtts
                        .push(t0.elapsed().as_secs_f64() * 1000.0);
                    pending = None;
                }
                if m["terminal"] == true {
                    if !over {
                        over = true;
                        pending = None;
                        if side == "south" {
                            stats.lock().expect("stats").games += 1;
                        }
                        c.send(json!({"type": "rematch"})).await;
                    }
                    continue;
                }
                if over {
                    // The rematch started: the sides swap.
                    over = false;
                    side = if side == "south" { "north" } else { "south" };
                }
                if m["to_move"] == side && pending.is_none() {
                    let legal: Vec<&Value> = m["legal"]
                        .as_array()
                        .map(|v| v.iter().collect())
                        .unwrap_or_default();
                    let mv = legal[rng.random_range(0..legal.len())].clone();
                    tokio::time::sleep(Duration::from_millis(rng.random_range(50..250))).await;
                    pending = Some((ply, Instant::now()));
                    c.send(json!({"type": "move", "house": mv})).await;
                }
            }
            Some("error") => stats.lock().expect("stats").errors.push(m.to_string()),
            _ => {}
        }
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "load test, 60 s: cargo test --release --test serve -- --ignored --nocapture load"]
async fn load_200_clients_in_100_rooms() {
    let secs: u64 = std::env::var("OWARE_LOAD_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    let server = Server::start(&[
        "--ai",
        "random",
        "--idle-timeout",
        "5",
        "--max-connections",
        "512",
        // All 200 clients come from 127.0.0.1: lift the per-address caps.
        "--max-connections-per-address",
        "512",
        "--max-tables-per-address",
        "200",
    ]);
    let pid = server.pid();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = rss_mib(pid);
    let stats = Arc::new(Mutex::new(Stats::default()));
    let until = Instant::now() + Duration::from_secs(secs);
    let mut players = Vec::new();
    for r in 0..ROOMS {
        let mut host = server.client().await;
        let (joined, _) = host
            .join(json!({"type": "create_room", "side": "south"}))
            .await;
        let mut guest = server.client().await;
        guest
            .join(json!({"type": "join_room", "code": joined["code"]}))
            .await;
        players.push(tokio::spawn(play(
            host,
            "south",
            until,
            2 * r as u64,
            stats.clone(),
        )));
        players.push(tokio::spawn(play(
            guest,
            "north",
            until,
            2 * r as u64 + 1,
            stats.clone(),
        )));
    }
    // The first moves of the hosts need a state to start from: each gets one when the guest
    // joins (presence), so all rooms are playing now.
    let mut during = Vec::new();
    while Instant::now() < until {
        tokio::time::sleep(
            Duration::from_secs(5).min(until.saturating_duration_since(Instant::now())),
        )
        .await;
        during.push(rss_mib(pid));
    }
    for p in players {
        p.await.expect("a player task");
    }
    // The clients are gone; the rooms expire after 5 s idle.
    tokio::time::sleep(Duration::from_secs(8)).await;
    let after = rss_mib(pid);
    let (_, _, info) = server.get("/api/info");
    let info: Value = serde_json::from_str(&info).expect("JSON");

    let stats = stats.lock().expect("stats");
    let mut rtts = stats.rtts.clone();
    rtts.sort_by(|a, b| a.total_cmp(b));
    assert!(!rtts.is_empty(), "no move was played");
    let (p50, p99, max) = (
        percentile(&rtts, 0.5),
        percentile(&rtts, 0.99),
        rtts[rtts.len() - 1],
    );
    let peak = during.iter().copied().fold(0.0, f64::max);
    println!(
        "load: {} clients in {ROOMS} rooms for {secs} s: {} moves ({:.0}/s), {} games finished, {} errors",
        2 * ROOMS,
        rtts.len(),
        rtts.len() as f64 / secs as f64,
        stats.games,
        stats.errors.len()
    );
    println!("load: move round trip p50 {p50:.2} ms, p99 {p99:.2} ms, max {max:.2} ms");
    println!(
        "load: server RSS before {before:.1} MiB, during {} MiB (peak {peak:.1}), after {after:.1} MiB; open after: {}",
        during
            .iter()
            .map(|m| format!("{m:.1}"))
            .collect::<Vec<_>>()
            .join(" "),
        info["open"]
    );
    assert!(
        stats.errors.is_empty(),
        "errors: {:?}",
        &stats.errors[..stats.errors.len().min(5)]
    );
    assert!(p99 <= 50.0, "p99 {p99:.1} ms is over the 50 ms target");
    assert_eq!(
        info["open"]["rooms"], 0,
        "rooms left after the clients went"
    );
    assert!(
        after <= before + 32.0,
        "memory did not come back: {before:.1} → {after:.1} MiB"
    );
}
