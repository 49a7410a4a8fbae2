//! The server's settings and every limit it enforces, with their defaults in one place.

use std::net::SocketAddr;
use std::time::Duration;

/// The address `oware serve` binds when `--addr` is not given: localhost only.
pub const DEFAULT_ADDR: &str = "127.0.0.1:8080";
/// Friend rooms open at once.
pub const DEFAULT_MAX_ROOMS: usize = 256;
/// Games against the AI or on one device open at once.
pub const DEFAULT_MAX_GAMES: usize = 512;
/// WebSocket connections open at once.
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;
/// Seconds without any action after which a room or game expires, and without any message
/// after which a connection is closed.
pub const DEFAULT_IDLE_SECS: u64 = 30 * 60;
/// The player that evaluates every position of a game for the review graph: fast, and bounded
/// both in depth and in time per position.
pub const DEFAULT_ANALYSIS_SPEC: &str = "alphabeta:depth=10,ms=20";
/// The alpha-beta strengths offered besides the default AI when no `--ai` is given.
pub const DEFAULT_EXTRA_AIS: [&str; 3] = [
    "alphabeta:depth=2",
    "alphabeta:depth=5",
    "alphabeta:ms=1000",
];

/// The largest text message the server reads; a longer one gets a `too_large` error reply.
pub const MAX_MESSAGE_BYTES: usize = 8 * 1024;
/// The largest WebSocket message or frame the transport accepts at all; past it the connection
/// is closed (close code 1009).
pub const MAX_TRANSPORT_BYTES: usize = 64 * 1024;
/// Messages a connection may send per second, sustained.
pub const MESSAGES_PER_SECOND: f64 = 20.0;
/// Messages a connection may send in a burst.
pub const MESSAGE_BURST: f64 = 40.0;
/// Unknown room codes or seat tokens one address may try in a burst.
pub const LOOKUP_FAILURE_BURST: f64 = 10.0;
/// Unknown room codes or seat tokens one address may try per minute, sustained.
pub const LOOKUP_FAILURES_PER_MINUTE: f64 = 10.0;
/// Addresses whose failed look-ups are remembered at once (the oldest are forgotten first).
pub const MAX_TRACKED_ADDRESSES: usize = 4096;
/// Searches (AI moves, hints, reviews) waiting or running at once; more hints and reviews are
/// refused with `busy` (an AI's own move always waits its turn).
pub const MAX_AI_QUEUE: usize = 256;
/// Seconds between the server's WebSocket pings; a peer silent for three of them is dropped.
pub const PING_SECS: u64 = 15;
/// Messages that may wait for a slow connection; past them the connection's next message is
/// read only once there is room again.
pub const OUTBOX: usize = 64;
/// Seconds a full outbox may stay full before its connection is dropped as not reading.
pub const SEND_PATIENCE_SECS: u64 = 5;

/// Everything `oware serve` needs to run.
#[derive(Clone, Debug)]
pub struct ServeConfig {
    /// Where to listen.
    pub addr: SocketAddr,
    /// The AI players offered, as spec strings (the first is the default).
    pub ais: Vec<String>,
    /// The player that evaluates positions for the review graph.
    pub analysis: String,
    /// Friend rooms open at once.
    pub max_rooms: usize,
    /// Games against the AI or on one device open at once.
    pub max_games: usize,
    /// WebSocket connections open at once.
    pub max_connections: usize,
    /// How long a room, game or connection may stay idle before it expires.
    pub idle: Duration,
    /// Threads that run AI searches (the size of the search pool).
    pub ai_threads: usize,
}

impl ServeConfig {
    /// The defaults, offering `ais` (none: the default AI and a few alpha-beta strengths).
    pub fn new(addr: SocketAddr, ais: Vec<String>) -> ServeConfig {
        ServeConfig {
            addr,
            ais,
            analysis: DEFAULT_ANALYSIS_SPEC.to_string(),
            max_rooms: DEFAULT_MAX_ROOMS,
            max_games: DEFAULT_MAX_GAMES,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            idle: Duration::from_secs(DEFAULT_IDLE_SECS),
            ai_threads: default_ai_threads(),
        }
    }
}

/// One search thread per core.
pub fn default_ai_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The players offered when no `--ai` is given: the default AI (the newest checkpoint under
/// `runs` with MCTS, else alpha-beta) and [`DEFAULT_EXTRA_AIS`], without duplicates.
pub fn default_ais(runs: &std::path::Path) -> Vec<String> {
    let mut ais = vec![oware_players::default_ai_spec(runs)];
    for extra in DEFAULT_EXTRA_AIS {
        if !ais.iter().any(|a| a == extra) {
            ais.push(extra.to_string());
        }
    }
    ais
}
