//! `oware serve` under attack: each test plays one attack of issue 26 against the real server
//! (all traffic on 127.0.0.0/8; clients of "other addresses" bind 127.0.x.y as their source)
//! and checks that the service stays up for everyone else.
//!
//! The latency bounds are the issue's: honest moves' round trip p99 at most 100 ms and every
//! honest AI reply within its budget plus 1 s. On a machine busy with other work, the round
//! trips of the same clients without attackers (measured first, in the same test) set the
//! floor: the bound is `max(100 ms, 2 × p99 without attackers)`, and the budget of a
//! `depth=2` reply is its longest time without attackers. The figures are printed
//! (`--nocapture`); `OWARE_HOSTILE_SECS` sets the attack's length (default 20 s).

use super::server::{Client, Server};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The tests that measure latency run one at a time.
static HEAVY: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn attack_secs() -> u64 {
    std::env::var("OWARE_HOSTILE_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20)
}

/// A client from `127.0.a.b`.
async fn from(server: &Server, a: u8, b: u8) -> Client {
    Client::connect_from(&server.addr, Ipv4Addr::new(127, 0, a, b))
        .await
        .unwrap_or_else(|e| panic!("127.0.{a}.{b} connects: {e}"))
}

/// The next message within `wait`; `None` on a timeout or a closed connection.
async fn next_within(c: &mut Client, wait: Duration) -> Option<Value> {
    tokio::time::timeout(wait, c.next()).await.ok().flatten()
}

fn info(server: &Server) -> Value {
    let (status, _, body) = server.get("/api/info");
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).expect("JSON")
}

#[derive(Default)]
struct Latency {
    /// A person's move sent until its state came back, ms.
    moves: Vec<f64>,
    /// A person's move sent until the AI's reply came back, ms.
    replies: Vec<f64>,
    errors: Vec<String>,
}

impl Latency {
    fn take(&mut self) -> Latency {
        std::mem::take(self)
    }
}

fn percentile(v: &[f64], p: f64) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    s.get(((s.len().max(1) - 1) as f64 * p).round() as usize)
        .copied()
        .unwrap_or(0.0)
}

fn max(v: &[f64]) -> f64 {
    v.iter().copied().fold(0.0, f64::max)
}

/// An honest person against AI number `ai` as South: a pause of 50–250 ms, a random legal
/// move, the AI's reply; a new game at every end.
async fn honest(mut c: Client, ai: usize, until: Instant, seed: u64, stats: Arc<Mutex<Latency>>) {
    let mut rng = SmallRng::seed_from_u64(seed);
    c.send(json!({"type": "new_ai", "ai": ai, "side": "south"}))
        .await;
    let mut sent: Option<(u64, Instant)> = None;
    let mut awaiting_ai: Option<(u64, Instant)> = None;
    let mut over = true;
    while Instant::now() < until {
        let Some(m) = next_within(&mut c, Duration::from_millis(500)).await else {
            continue;
        };
        match m["type"].as_str() {
            Some("joined") => over = false,
            Some("state") if !over => {
                let ply = m["ply"].as_u64().unwrap_or(0);
                if let Some((p, t0)) = sent
                    && ply == p + 1
                {
                    let ms = t0.elapsed().as_secs_f64() * 1000.0;
                    stats.lock().expect("stats").moves.push(ms);
                    sent = None;
                    awaiting_ai = Some((p + 2, t0));
                }
                if let Some((q, t0)) = awaiting_ai
                    && ply == q
                {
                    let ms = t0.elapsed().as_secs_f64() * 1000.0;
                    stats.lock().expect("stats").replies.push(ms);
                    awaiting_ai = None;
                }
                if m["terminal"] == true {
                    over = true;
                    sent = None;
                    awaiting_ai = None;
                    c.send(json!({"type": "new_ai", "ai": ai, "side": "south"}))
                        .await;
                    continue;
                }
                if m["to_move"] == "south" && sent.is_none() && awaiting_ai.is_none() {
                    let legal: Vec<Value> = m["legal"].as_array().cloned().unwrap_or_default();
                    if legal.is_empty() {
                        continue;
                    }
                    let mv = legal[rng.random_range(0..legal.len())].clone();
                    tokio::time::sleep(Duration::from_millis(rng.random_range(50..250))).await;
                    sent = Some((ply, Instant::now()));
                    c.send(json!({"type": "move", "house": mv})).await;
                }
            }
            Some("error") => stats.lock().expect("stats").errors.push(m.to_string()),
            _ => {}
        }
    }
}

/// What the attackers did.
#[derive(Default)]
struct Attack {
    /// Searches they started (states with the AI thinking: after a move, or a rematch).
    searches: u64,
}

/// Plays a move and takes it back while the AI thinks, as fast as the server lets it.
async fn move_undo(mut c: Client, until: Instant, attack: Arc<Mutex<Attack>>) {
    c.send(json!({"type": "new_ai", "ai": 0, "side": "south"}))
        .await;
    let mut last: Option<Value> = None;
    while Instant::now() < until {
        let Some(m) = next_within(&mut c, Duration::from_millis(300)).await else {
            // Nothing came: act again on the last state.
            if let Some(s) = last.clone() {
                act_move_undo(&mut c, &s).await;
            }
            continue;
        };
        match m["type"].as_str() {
            Some("state") => {
                if m["ai_thinking"] == true {
                    attack.lock().expect("attack").searches += 1;
                }
                act_move_undo(&mut c, &m).await;
                last = Some(m);
            }
            Some("error") if m["code"] == "rate_limited" => {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            _ => {}
        }
    }
}

async fn act_move_undo(c: &mut Client, s: &Value) {
    if s["terminal"] == true {
        c.send(json!({"type": "new_ai", "ai": 0, "side": "south"}))
            .await;
    } else if s["ai_thinking"] == true {
        c.send(json!({"type": "undo"})).await;
    } else if let Some(mv) = s["legal"].as_array().and_then(|l| l.first()) {
        c.send(json!({"type": "move", "house": mv})).await;
    }
}

/// As North, resigns while the AI opens and asks for a rematch (a new opening search), in a
/// loop.
async fn resign_rematch(mut c: Client, until: Instant, attack: Arc<Mutex<Attack>>) {
    c.send(json!({"type": "new_ai", "ai": 0, "side": "north"}))
        .await;
    while Instant::now() < until {
        let Some(m) = next_within(&mut c, Duration::from_millis(300)).await else {
            c.send(json!({"type": "rematch"})).await;
            continue;
        };
        match m["type"].as_str() {
            Some("state") if m["terminal"] == true => c.send(json!({"type": "rematch"})).await,
            Some("state") if m["ai_thinking"] == true => {
                attack.lock().expect("attack").searches += 1;
                c.send(json!({"type": "resign"})).await;
            }
            Some("state") if m["ply"].as_u64().is_some_and(|p| p > 0) => {
                c.send(json!({"type": "resign"})).await;
            }
            Some("error") if m["code"] == "rate_limited" => {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            _ => {}
        }
    }
}

/// Watches `/api/info` until `until`: the most AI moves in the pool, and whether they ever
/// outnumbered the games (one search per table at most).
fn watch_pool(server_url: String, until: Instant) -> std::thread::JoinHandle<(u64, bool)> {
    std::thread::spawn(move || {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .new_agent();
        let (mut most, mut over) = (0, false);
        while Instant::now() < until {
            if let Ok(mut res) = agent.get(&server_url).call()
                && let Ok(body) = res.body_mut().read_to_string()
                && let Ok(v) = serde_json::from_str::<Value>(&body)
            {
                let moves = v["open"]["moves"].as_u64().unwrap_or(0);
                let games = v["open"]["games"].as_u64().unwrap_or(0);
                most = most.max(moves);
                over |= moves > games;
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        (most, over)
    })
}

/// Honest players' figures for one phase, printed.
fn report(phase: &str, l: &Latency) -> (f64, f64) {
    let (p99, reply_max) = (percentile(&l.moves, 0.99), max(&l.replies));
    println!(
        "hostile/{phase}: {} moves, round trip p50 {:.2} ms p99 {p99:.2} ms max {:.2} ms; {} AI \
         replies, p50 {:.1} ms p99 {:.1} ms max {reply_max:.1} ms; {} errors",
        l.moves.len(),
        percentile(&l.moves, 0.5),
        max(&l.moves),
        l.replies.len(),
        percentile(&l.replies, 0.5),
        percentile(&l.replies, 0.99),
        l.errors.len(),
    );
    (p99, reply_max)
}

fn uptime() -> String {
    std::fs::read_to_string("/proc/loadavg").unwrap_or_default()
}

/// 10 hostile clients loop move + undo (and resign + rematch as North) against the strongest
/// AI while 50 honest clients play `alphabeta:depth=2`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stale_searches_do_not_pile_up_and_honest_players_are_served() {
    let _heavy = HEAVY.lock().await;
    let server = Server::start(&[
        "--ai",
        "alphabeta:ms=1000",
        "--ai",
        "alphabeta:depth=2",
        "--ai-threads",
        "2",
    ]);
    let stats = Arc::new(Mutex::new(Latency::default()));
    let attack_for = Duration::from_secs(attack_secs());
    let baseline_for = Duration::from_secs(6);
    let start = Instant::now();
    let until = start + baseline_for + attack_for;
    let mut honest_tasks = Vec::new();
    for i in 0..50u8 {
        let c = from(&server, 1, 1 + i).await;
        honest_tasks.push(tokio::spawn(honest(
            c,
            1,
            until,
            u64::from(i),
            stats.clone(),
        )));
    }
    // Without attackers first.
    tokio::time::sleep(baseline_for).await;
    let baseline = stats.lock().expect("stats").take();
    let attack = Arc::new(Mutex::new(Attack::default()));
    let pool = watch_pool(server.url("/api/info"), until);
    let mut attackers = Vec::new();
    for i in 0..10u8 {
        let c = from(&server, 2, 1 + i).await;
        attackers.push(if i < 7 {
            tokio::spawn(move_undo(c, until, attack.clone()))
        } else {
            tokio::spawn(resign_rematch(c, until, attack.clone()))
        });
    }
    for t in honest_tasks.into_iter().chain(attackers) {
        t.await.expect("a client task");
    }
    let under_attack = stats.lock().expect("stats").take();
    let (most_moves, outnumbered) = pool.join().expect("the pool watcher");
    println!("hostile: load average {}", uptime());
    let (base_p99, base_reply) = report("without attackers", &baseline);
    let (p99, reply_max) = report("under attack", &under_attack);
    let a = attack.lock().expect("attack");
    println!(
        "hostile: the attackers started {} searches; at most {most_moves} AI moves in the pool",
        a.searches
    );
    assert!(
        baseline.errors.is_empty() && under_attack.errors.is_empty(),
        "{:?} {:?}",
        baseline.errors,
        under_attack.errors
    );
    assert!(a.searches > 100, "the attack ran: {} searches", a.searches);
    assert!(!outnumbered, "more AI moves in the pool than games");
    assert!(
        under_attack.replies.len() > 100,
        "the honest players kept playing: {} AI replies",
        under_attack.replies.len()
    );
    let move_bound = 100.0f64.max(2.0 * base_p99);
    assert!(
        p99 <= move_bound,
        "move round trip p99 {p99:.1} ms > {move_bound:.1} ms"
    );
    let reply_bound = base_reply + 1000.0;
    assert!(
        reply_max <= reply_bound,
        "an AI reply took {reply_max:.0} ms (budget {base_reply:.0} ms + 1 s)"
    );
    assert!(
        info(&server)["open"]["games"].as_u64().is_some(),
        "the server is up"
    );
}

/// A valid game of random moves as a record line, long (a review of it costs many searches).
fn long_record(seed: u64) -> String {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut game = oware_engine::Game::with_max_plies(300);
    while !game.is_over() {
        let moves: Vec<_> = game.legal_moves().iter().collect();
        let mv = moves[rng.random_range(0..moves.len())];
        game.play(mv).expect("legal");
    }
    game.record()
}

/// 10 hostile clients ask for hints of the 1-second AI and reviews of long records as fast as
/// they may while 20 honest clients play `alphabeta:depth=2`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hints_and_reviews_do_not_starve_ai_moves() {
    let _heavy = HEAVY.lock().await;
    let server = Server::start(&[
        "--ai",
        "alphabeta:ms=1000",
        "--ai",
        "alphabeta:depth=2",
        "--ai-threads",
        "2",
    ]);
    let stats = Arc::new(Mutex::new(Latency::default()));
    let attack_for = Duration::from_secs(attack_secs().min(15));
    let baseline_for = Duration::from_secs(5);
    let until = Instant::now() + baseline_for + attack_for;
    let mut tasks = Vec::new();
    for i in 0..20u8 {
        let c = from(&server, 3, 1 + i).await;
        tasks.push(tokio::spawn(honest(
            c,
            1,
            until,
            100 + u64::from(i),
            stats.clone(),
        )));
    }
    tokio::time::sleep(baseline_for).await;
    let baseline = stats.lock().expect("stats").take();
    let busy = Arc::new(Mutex::new(0u64));
    let most_analysis = Arc::new(Mutex::new(0u64));
    let record = long_record(1);
    for i in 0..10u8 {
        let mut c = from(&server, 4, 1 + i).await;
        let (busy, record) = (busy.clone(), record.clone());
        tasks.push(tokio::spawn(async move {
            c.send(json!({"type": "new_ai", "ai": 0, "side": "south"}))
                .await;
            let mut n = 0u64;
            while Instant::now() < until {
                n += 1;
                if n.is_multiple_of(2) {
                    c.send(json!({"type": "hint"})).await;
                } else {
                    c.send(json!({"type": "review", "record": record})).await;
                }
                let deadline = Instant::now() + Duration::from_millis(100);
                while let Some(m) =
                    next_within(&mut c, deadline.saturating_duration_since(Instant::now())).await
                {
                    if m["code"] == "busy" {
                        *busy.lock().expect("busy") += 1;
                    }
                }
            }
        }));
    }
    let url = server.url("/api/info");
    let watcher = {
        let most = most_analysis.clone();
        std::thread::spawn(move || {
            while Instant::now() < until {
                if let Ok(mut r) = ureq::get(&url).call()
                    && let Ok(body) = r.body_mut().read_to_string()
                    && let Ok(v) = serde_json::from_str::<Value>(&body)
                {
                    let a = v["open"]["analysis"].as_u64().unwrap_or(0);
                    let mut m = most.lock().expect("most");
                    *m = (*m).max(a);
                }
                std::thread::sleep(Duration::from_millis(200));
            }
        })
    };
    for t in tasks {
        t.await.expect("a client task");
    }
    watcher.join().expect("watcher");
    let under_attack = stats.lock().expect("stats").take();
    println!("hostile: load average {}", uptime());
    let (base_p99, base_reply) = report("analysis, without attackers", &baseline);
    let (p99, reply_max) = report("analysis, under attack", &under_attack);
    let (busy, most) = (
        *busy.lock().expect("busy"),
        *most_analysis.lock().expect("most"),
    );
    let queue = info(&server)["limits"]["analysis_queue"]
        .as_u64()
        .expect("queue");
    println!(
        "hostile: {busy} hints and reviews refused as busy; at most {most} in the pool (bound {queue})"
    );
    assert!(busy > 50, "the attackers were refused: {busy}");
    assert!(most <= queue, "analysis in the pool {most} > {queue}");
    assert!(under_attack.errors.is_empty(), "{:?}", under_attack.errors);
    assert!(
        under_attack.replies.len() > 30,
        "{} replies",
        under_attack.replies.len()
    );
    let move_bound = 100.0f64.max(2.0 * base_p99);
    assert!(
        p99 <= move_bound,
        "move round trip p99 {p99:.1} ms > {move_bound:.1} ms"
    );
    let reply_bound = base_reply + 1000.0;
    assert!(
        reply_max <= reply_bound,
        "an AI reply took {reply_max:.0} ms (budget {base_reply:.0} ms + 1 s)"
    );
}

/// Connections and tables of one address are capped; another address is not affected.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_address_cannot_take_more_than_its_cap() {
    let server = Server::start(&[
        "--ai",
        "random",
        "--max-connections-per-address",
        "4",
        "--max-tables-per-address",
        "3",
    ]);
    // WebSockets: four from one address, then refused; another address still gets in.
    let mut held = Vec::new();
    for _ in 0..4 {
        held.push(from(&server, 5, 1).await);
    }
    let refused = Client::connect_from(&server.addr, Ipv4Addr::new(127, 0, 5, 1)).await;
    let why = refused.err().expect("a fifth connection is refused");
    assert!(why.contains("503"), "{why}");
    let mut other = from(&server, 5, 2).await;

    // Tables: one connection makes room after room (a room is not replaced by the next).
    let c = &mut held[0];
    for _ in 0..3 {
        c.join(json!({"type": "create_room", "side": "south"}))
            .await;
    }
    c.send(json!({"type": "create_room", "side": "south"}))
        .await;
    let e = c.expect_error("limit").await;
    assert!(
        e["message"]
            .as_str()
            .is_some_and(|m| m.contains("your address")),
        "{e}"
    );
    c.send(json!({"type": "new_local"})).await;
    c.expect_error("limit").await;
    assert_eq!(info(&server)["open"]["rooms"], 3);
    // The other address plays on.
    other.join(json!({"type": "new_local"})).await;
    other.play("c", 1).await;

    // Raw TCP (page loads): twice the WebSocket cap (8) from one address; the next is closed
    // at once, while the others stay open until the header timeout.
    let addr: std::net::SocketAddr = server.addr.parse().expect("address");
    let mut open = Vec::new();
    for _ in 0..8 {
        open.push(tcp_from(Ipv4Addr::new(127, 0, 5, 3), addr).await);
    }
    let mut ninth = tcp_from(Ipv4Addr::new(127, 0, 5, 3), addr).await;
    let started = Instant::now();
    let mut buf = [0u8; 16];
    let n = ninth.read(&mut buf).unwrap_or(0);
    assert_eq!(n, 0, "the ninth TCP connection is closed");
    assert!(started.elapsed() < Duration::from_secs(2));
    // The first eight are still open: a request on one is answered.
    let first = &mut open[0];
    first
        .write_all(
            format!(
                "GET /api/info HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
                server.addr
            )
            .as_bytes(),
        )
        .expect("writes");
    let mut body = String::new();
    first.read_to_string(&mut body).expect("reads");
    assert!(body.starts_with("HTTP/1.1 200"), "{body}");
    // Another address is not affected.
    let mut fresh = tcp_from(Ipv4Addr::new(127, 0, 5, 4), addr).await;
    fresh
        .write_all(
            format!(
                "GET / HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
                server.addr
            )
            .as_bytes(),
        )
        .expect("writes");
    let mut page = String::new();
    fresh.read_to_string(&mut page).expect("reads");
    assert!(page.starts_with("HTTP/1.1 200"));
}

/// A blocking TCP connection to `addr` from `source` (std has no bind-before-connect; tokio's
/// `TcpSocket` does it), reads timing out after 3 s.
async fn tcp_from(source: Ipv4Addr, addr: std::net::SocketAddr) -> std::net::TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket.bind((source, 0).into()).expect("bind");
    let stream = socket.connect(addr).await.expect("connects");
    let std = stream.into_std().expect("std stream");
    std.set_nonblocking(false).expect("blocking");
    std.set_read_timeout(Some(Duration::from_secs(3)))
        .expect("timeout");
    std
}

/// A table that nobody sits at makes room for a new one once it has been unattended for the
/// eviction grace; one kept open by `resume` alone expires.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unattended_tables_go_first_and_resume_is_not_activity() {
    let server = Server::start(&[
        "--ai",
        "random",
        "--idle-timeout",
        "4",
        "--max-tables-per-address",
        "2",
    ]);
    // Grace: a quarter of the idle limit, 1 s.
    let mut c = from(&server, 6, 1).await;
    let (first, _) = c
        .join(json!({"type": "create_room", "side": "south"}))
        .await;
    let first_token = first["token"].as_str().expect("token").to_string();
    c.join(json!({"type": "create_room", "side": "south"}))
        .await;
    // The first room has nobody at it, but only just: refused.
    c.send(json!({"type": "create_room", "side": "south"}))
        .await;
    c.expect_error("limit").await;
    tokio::time::sleep(Duration::from_millis(1300)).await;
    c.join(json!({"type": "create_room", "side": "south"}))
        .await;
    assert_eq!(server_tables(&server), 2, "the unattended room made room");
    let mut late = from(&server, 6, 2).await;
    late.send(json!({"type": "resume", "token": first_token}))
        .await;
    late.expect_error("not_found").await;

    // A game kept open only by resuming it: it expires all the same.
    let mut g = from(&server, 6, 3).await;
    let (joined, _) = g.join(json!({"type": "new_local"})).await;
    let token = joined["token"].as_str().expect("token").to_string();
    drop(g);
    let started = Instant::now();
    let mut expired = false;
    while started.elapsed() < Duration::from_secs(9) {
        let mut r = from(&server, 6, 4).await;
        r.send(json!({"type": "resume", "token": token})).await;
        match r.next().await {
            Some(m) if m["type"] == "joined" => {}
            Some(m) if m["code"] == "not_found" || m["code"] == "expired" => {
                expired = true;
                break;
            }
            other => panic!("unexpected {other:?}"),
        }
        tokio::time::sleep(Duration::from_millis(400)).await;
    }
    assert!(
        expired,
        "resuming every 0.4 s kept a game alive past its idle limit"
    );
    assert!(
        started.elapsed() >= Duration::from_secs(3),
        "it expired after its idle limit"
    );
}

fn server_tables(server: &Server) -> u64 {
    let i = info(server);
    i["open"]["rooms"].as_u64().unwrap_or(0) + i["open"]["games"].as_u64().unwrap_or(0)
}

/// A seat needs the whole join code; guessing six-letter codes from many addresses runs out a
/// budget shared by all, and the join link still works then.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn room_codes_cannot_be_guessed_into_a_seat() {
    let server = Server::start(&["--ai", "random"]);
    let mut host = from(&server, 7, 1).await;
    let (joined, state) = host
        .join(json!({"type": "create_room", "side": "south"}))
        .await;
    let join_code = joined["code"].as_str().expect("code").to_string();
    let room_code = state["code"].as_str().expect("room code").to_string();
    assert_eq!((room_code.len(), join_code.len()), (6, 15));
    assert!(join_code.starts_with(&format!("{room_code}-")));

    // The six letters let one watch, not sit.
    let mut guest = from(&server, 7, 2).await;
    guest
        .send(json!({"type": "join_room", "code": room_code}))
        .await;
    let e = guest.expect_error("not_allowed").await;
    assert!(
        e["message"]
            .as_str()
            .is_some_and(|m| m.contains("join code")),
        "{e}"
    );
    // A wrong join key is an unknown code.
    guest
        .send(json!({"type": "join_room", "code": format!("{room_code}-AAAAAAAA")}))
        .await;
    guest.expect_error("not_found").await;

    // 25 addresses guess 10 unknown codes each: past the shared budget (200), six-letter codes
    // are refused for everyone (a fresh address asks right after the budget ran out, before
    // it refills by one: it refills 100 a minute).
    let mut fresh = from(&server, 8, 200).await;
    let mut limited = 0;
    'flood: for a in 0..25u8 {
        let mut g = from(&server, 8, 1 + a).await;
        for i in 0..10u8 {
            let code = format!("ZZZZ{}{}", (b'A' + a % 20) as char, (b'2' + i % 8) as char);
            g.send(json!({"type": "watch", "code": code})).await;
            if g.expect("error").await["code"] == "rate_limited" {
                limited += 1;
                break 'flood;
            }
        }
    }
    assert!(limited > 0, "the shared budget ran out");
    fresh
        .send(json!({"type": "watch", "code": room_code}))
        .await;
    let e = fresh.expect_error("rate_limited").await;
    assert!(
        e["message"]
            .as_str()
            .is_some_and(|m| m.contains("join link")),
        "{e}"
    );
    // The join code is not guessable: it still works.
    let (joined, _) = fresh
        .join(json!({"type": "join_room", "code": join_code}))
        .await;
    assert_eq!(joined["seat"], "north");
}

/// Sends a raw HTTP request; the whole response.
fn raw_http(server: &Server, request: &str) -> String {
    let mut s = std::net::TcpStream::connect(&server.addr).expect("connects");
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    s.write_all(request.as_bytes()).expect("writes");
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out
}

/// DNS rebinding: a request naming a host that is not localhost, an IP address or a configured
/// public origin is refused, `/api/info` included; `/api/info` names no server paths.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_hosts_are_refused_and_info_shows_no_paths() {
    let models = concat!(env!("CARGO_MANIFEST_DIR"), "/models/oware-default");
    let spec = format!("mcts:model={models},sims=8");
    let server = Server::start(&[
        "--ai",
        &spec,
        "--public-origin",
        "https://oware.example.org",
    ]);
    let get = |host: &str| {
        raw_http(
            &server,
            &format!("GET /api/info HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"),
        )
    };
    let evil = get("evil.example:8080");
    assert!(evil.starts_with("HTTP/1.1 421"), "{evil}");
    assert!(get("localhost").starts_with("HTTP/1.1 200"));
    assert!(get("oware.example.org").starts_with("HTTP/1.1 200"));
    let page = raw_http(
        &server,
        "GET / HTTP/1.1\r\nHost: rebind.evil.example\r\nConnection: close\r\n\r\n",
    );
    assert!(page.starts_with("HTTP/1.1 421"), "{page}");
    let ok = get(&server.addr);
    let body = ok.split("\r\n\r\n").nth(1).unwrap_or("");
    assert!(
        !body.contains(env!("CARGO_MANIFEST_DIR")) && !body.contains("models/"),
        "{body}"
    );
    assert!(body.contains("mcts:model=oware-default"), "{body}");

    // WebSockets: the rebinding page's own origin and host are refused, the configured origin
    // (behind a proxy that rewrites Host) is let in.
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let ws = |origin: &str, host: &str| {
        let mut r = format!("ws://{}/ws", server.addr)
            .into_client_request()
            .expect("request");
        r.headers_mut()
            .insert("Origin", origin.parse().expect("header"));
        r.headers_mut()
            .insert("Host", host.parse().expect("header"));
        r
    };
    let refused =
        tokio_tungstenite::connect_async(ws("http://evil.example:8080", "evil.example:8080")).await;
    assert!(refused.is_err());
    let proxied =
        tokio_tungstenite::connect_async(ws("https://oware.example.org", &server.addr)).await;
    assert!(proxied.is_ok(), "{proxied:?}");
}

/// Slowloris: a client that trickles its headers, or sends nothing, is closed after the
/// header timeout; others are served meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_headers_are_cut_off() {
    let server = Server::start(&["--ai", "random", "--header-timeout", "1"]);
    let mut silent = std::net::TcpStream::connect(&server.addr).expect("connects");
    silent
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let mut slow = std::net::TcpStream::connect(&server.addr).expect("connects");
    slow.set_read_timeout(Some(Duration::from_millis(200)))
        .expect("timeout");
    let started = Instant::now();
    slow.write_all(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .expect("writes");
    let mut closed_after = None;
    for i in 0..50 {
        if slow
            .write_all(format!("X-Slow-{i}: a\r\n").as_bytes())
            .is_err()
        {
            closed_after = Some(started.elapsed());
            break;
        }
        let mut buf = [0u8; 256];
        match slow.read(&mut buf) {
            Ok(0) => {
                closed_after = Some(started.elapsed());
                break;
            }
            // A 408 or similar before closing is fine too.
            Ok(_) => {}
            Err(_) => {}
        }
        // Others are served meanwhile.
        if i == 2 {
            assert_eq!(server.get("/api/info").0, 200);
        }
    }
    let closed_after = closed_after.expect("the slow client is closed");
    assert!(
        closed_after < Duration::from_secs(5),
        "closed after {closed_after:?}"
    );
    let mut buf = [0u8; 64];
    let n = silent.read(&mut buf).unwrap_or(0);
    assert!(n == 0 || String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 408"));
    assert!(started.elapsed() < Duration::from_secs(8));
}

/// Binary frames count against the message rate; a refused `create` keeps the current game.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn binary_floods_are_limited_and_a_refused_create_keeps_the_game() {
    use tokio_tungstenite::tungstenite::Message;
    let server = Server::start(&["--ai", "random", "--max-rooms", "1"]);
    let mut c = from(&server, 9, 1).await;
    for _ in 0..80 {
        c.send_message(Message::Binary(vec![1, 2, 3].into())).await;
    }
    let mut limited = 0;
    for _ in 0..80 {
        if c.expect("error").await["code"] == "rate_limited" {
            limited += 1;
        }
    }
    assert!(limited > 20, "{limited} of 80 binary frames rate limited");

    let mut host = from(&server, 9, 2).await;
    host.join(json!({"type": "create_room", "side": "south"}))
        .await;
    let mut p = from(&server, 9, 3).await;
    p.join(json!({"type": "new_local"})).await;
    p.play("c", 1).await;
    p.send(json!({"type": "create_room", "side": "south"}))
        .await;
    p.expect_error("limit").await;
    // The game is still there, and still this connection's.
    let s = p.play("F", 2).await;
    assert_eq!(s["moves"], json!(["c", "F"]));
    assert_eq!(info(&server)["open"]["games"], 1);
}
