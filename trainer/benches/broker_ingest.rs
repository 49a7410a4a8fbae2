//! Ingest throughput of one learner through Redis: simulated workers (many worker ids, each
//! with its own sequence) push finished games into a run's stream; the learner's broker
//! ([`LearnerBroker`]) then reads, decodes, validates (replaying every move), de-duplicates and
//! hands them over. Throughput is reported in games per second. It needs `redis-server`
//! (Debian's package): the bench starts one on a free port of 127.0.0.1, and says so and does
//! nothing where it is not installed.
//!
//! Run: `cargo bench -p oware-trainer --bench broker_ingest` (add `-- --quick` for a short run).

// `criterion_group!` generates an undocumented public function.
#![allow(missing_docs)]

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use oware_engine::{Game, Position, Side};
use oware_model::{Device, ModelConfig, NetEvaluator};
use oware_trainer::TrainConfig;
use oware_trainer::broker::learner::{BrokerState, LearnerBroker, Start};
use oware_trainer::broker::{BrokerUrl, wire};
use oware_trainer::replay::Sample;
use oware_trainer::selfplay::GameRecord;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// Simulated workers.
const WORKERS: usize = 200;
/// Games per measured batch.
const GAMES: usize = 5_000;

/// A random finished game (ply limit 200) with every move recorded (uniform policy): the
/// largest record a `tiny`-sized game makes.
fn random_game(seed: u64) -> GameRecord {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut game = Game::with_max_plies(200);
    let mut pending: Vec<(Position, [f32; 6], Side)> = Vec::new();
    while !game.is_over() {
        let moves = game.legal_moves();
        let n = moves.as_slice().len();
        let mut policy = [0f32; 6];
        for m in moves.iter() {
            policy[m.relative()] = 1.0 / n as f32;
        }
        pending.push((*game.position(), policy, game.to_move()));
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        game.play(moves.as_slice()[(s % n as u64) as usize])
            .expect("a legal move");
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

struct Redis(Child, u16);

impl Drop for Redis {
    fn drop(&mut self) {
        self.0.kill().ok();
        self.0.wait().ok();
    }
}

fn start_redis() -> Option<Redis> {
    let bin = ["/usr/bin/redis-server", "/usr/local/bin/redis-server"]
        .into_iter()
        .find(|p| std::path::Path::new(p).is_file())?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .ok()?
        .local_addr()
        .ok()?
        .port();
    let child = Command::new(bin)
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args(["--save", "", "--appendonly", "no"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let r = Redis(child, port);
    let started = Instant::now();
    while redis::Client::open(format!("redis://127.0.0.1:{port}/"))
        .and_then(|c| c.get_connection_with_timeout(Duration::from_secs(1)))
        .is_err()
    {
        if started.elapsed() > Duration::from_secs(20) {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Some(r)
}

fn bench_ingest(c: &mut Criterion) {
    let Some(redis) = start_redis() else {
        eprintln!("*** broker_ingest: redis-server is not installed; nothing measured ***");
        return;
    };
    let url = BrokerUrl::parse(&format!("redis://127.0.0.1:{}/0", redis.1)).expect("url");
    let mut con = url
        .client()
        .expect("client")
        .get_connection()
        .expect("connect");
    let config = TrainConfig::default();
    let net = NetEvaluator::random(&ModelConfig::new().with_hidden(16), &Device::flex());
    let games: Vec<GameRecord> = (0..256).map(random_game).collect();
    let plies: usize = games.iter().map(|g| g.moves.len()).sum();
    eprintln!(
        "broker_ingest: {WORKERS} simulated workers, games of {:.0} plies on average, every move recorded",
        plies as f64 / games.len() as f64
    );
    let mut group = c.benchmark_group("broker_ingest");
    group.throughput(Throughput::Elements(GAMES as u64));
    group.sample_size(10);
    let mut run = 0u64;
    group.bench_function(BenchmarkId::new("games", GAMES), |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                run += 1;
                let name = format!("bench{run}");
                let key = format!("oware:{{{name}}}:games");
                // The learner starts at version 1; the games carry it.
                let mut seqs = vec![0u64; WORKERS];
                for chunk in 0..GAMES.div_ceil(500) {
                    let mut pipe = redis::pipe();
                    for i in chunk * 500..((chunk + 1) * 500).min(GAMES) {
                        let w = i % WORKERS;
                        let bytes = wire::encode(
                            &games[i % games.len()],
                            &format!("sim-{w}"),
                            seqs[w],
                            1,
                            200,
                        )
                        .expect("encode");
                        seqs[w] += 1;
                        pipe.cmd("XADD")
                            .arg(&key)
                            .arg("*")
                            .arg("g")
                            .arg(bytes)
                            .ignore();
                    }
                    pipe.query::<()>(&mut con).expect("XADD");
                }
                let stop = AtomicBool::new(false);
                let started = Instant::now();
                let mut broker = LearnerBroker::start(
                    Start {
                        url: &url,
                        run: &name,
                        config: &config,
                        state: BrokerState::default(),
                        net: &net,
                        fresh: false,
                        stop: &stop,
                        key: std::sync::Arc::new(
                            oware_trainer::broker::sign::LearnerKey::generate(),
                        ),
                    },
                    &mut |_| {},
                )
                .expect("starts")
                .expect("not stopped");
                let mut taken = 0usize;
                while taken < GAMES {
                    broker.poll(Duration::from_millis(100), &mut |_| taken += 1);
                    assert!(
                        started.elapsed() < Duration::from_secs(120),
                        "only {taken} of {GAMES} games arrived"
                    );
                }
                total += started.elapsed();
                assert_eq!(broker.state().games, GAMES as u64);
                assert_eq!(broker.state().rejected, 0);
                broker.shutdown();
                redis::cmd("DEL")
                    .arg(&key)
                    .arg(format!("oware:{{{name}}}:weights"))
                    .query::<()>(&mut con)
                    .expect("DEL");
            }
            total
        });
    });
    group.finish();
}

criterion_group!(benches, bench_ingest);
criterion_main!(benches);
