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
/// WebSocket connections open at once from one address (IPv6: one /64). TCP connections of
/// any kind from one address are bounded by [`TCP_PER_ADDRESS_FACTOR`] times this.
pub const DEFAULT_MAX_CONNECTIONS_PER_ADDRESS: usize = 32;
/// Tables (games and rooms) one address may hold at once; when it holds that many, its own
/// oldest table that nobody sits at makes room, else the new one is refused.
pub const DEFAULT_MAX_TABLES_PER_ADDRESS: usize = 16;
/// Seconds a client may take to send a request's headers (against slowloris: a connection
/// that trickles its headers is closed).
pub const DEFAULT_HEADER_TIMEOUT_SECS: f64 = 10.0;
/// TCP connections (page loads and WebSockets together) one address may hold, as a multiple
/// of its WebSocket limit: a browser opens a few for the page's files besides its WebSocket.
pub const TCP_PER_ADDRESS_FACTOR: usize = 2;
/// TCP connections of all addresses together, as a multiple of `max_connections`; past it a
/// new connection is closed at once.
pub const TCP_TOTAL_FACTOR: usize = 2;
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
/// Unknown room codes all addresses together may try in a burst: past it (and past the
/// sustained rate below), six-letter codes are refused for everyone until the budget refills;
/// join codes and seat tokens, which cannot be guessed, still work.
pub const GLOBAL_LOOKUP_FAILURE_BURST: f64 = 200.0;
/// Unknown room codes all addresses together may try per minute, sustained.
pub const GLOBAL_LOOKUP_FAILURES_PER_MINUTE: f64 = 100.0;
/// Addresses whose failed look-ups are remembered at once; past it the addresses not
/// remembered share one bucket.
pub const MAX_TRACKED_ADDRESSES: usize = 4096;
/// Letters of the join key that follows the room code in a join code (`ABCDEF-GHJKMNPQ`): a
/// seat in a room needs the whole join code, the six-letter room code alone lets one watch.
pub const JOIN_KEY_LEN: usize = 8;
/// Hints and reviews waiting or running at once, per search thread; past it they are
/// refused with `busy`.
pub const ANALYSIS_QUEUE_PER_THREAD: usize = 4;
/// Hints and reviews waiting or running at once for one address.
pub const ANALYSIS_PER_ADDRESS: usize = 2;
/// Seconds over which an address's search time counts for the order of the queue: the
/// address that used the least search time lately goes first (halved every this many).
pub const SEARCH_USAGE_HALF_LIFE_SECS: f64 = 30.0;
/// Seconds of search time (decayed as above) under which an address counts as light: the
/// threads kept for light jobs take only AI moves of light addresses.
pub const LIGHT_USAGE_SECS: f64 = 0.5;
/// Seconds under which an AI's searches count as quick (measured over its recent searches
/// that were not stopped; before any, its `ms=` budget if it has one): the threads kept for
/// light jobs take only quick ones.
pub const QUICK_SEARCH_SECS: f64 = 0.1;
/// Seconds nobody has sat at a table before it may be closed to make room for a new one
/// (at most a quarter of the idle limit).
pub const EVICT_GRACE_SECS: u64 = 30;
/// Seconds between the server's WebSocket pings; a peer silent for three of them is dropped.
pub const PING_SECS: u64 = 15;
/// Messages that may wait for a slow connection; past them the connection's next message is
/// read only once there is room again.
pub const OUTBOX: usize = 64;
/// With `--egtb`: the most nodes one proof may visit when an AI or a hint plays a table move
/// (a quiet move proven to keep the position's exact value).
pub const TABLE_MOVE_PROOF_NODES: u64 = 200_000;

/// With `--egtb`: the most nodes one proof may visit when a review judges a move by the tables
/// (per threshold of the bisection of each open move's value).
pub const REVIEW_PROOF_NODES: u64 = 20_000;

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
    /// WebSocket connections open at once from one address (IPv6: one /64).
    pub max_connections_per_address: usize,
    /// Tables one address may hold at once.
    pub max_tables_per_address: usize,
    /// How long a room, game or connection may stay idle before it expires.
    pub idle: Duration,
    /// Threads that run AI searches (the size of the search pool).
    pub ai_threads: usize,
    /// How long a client may take to send a request's headers.
    pub header_timeout: Duration,
    /// The origins (`https://host[:port]`) the server is reached at besides localhost and
    /// IP addresses, e.g. through a reverse proxy: requests naming any other host are
    /// refused (against DNS rebinding).
    pub public_origins: Vec<String>,
    /// Endgame tables (`oware egtb build`): where they cover a position with an exact value,
    /// the AIs and hints play perfectly, and reviews mark the moves that threw a result away.
    pub egtb: Option<std::path::PathBuf>,
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
            max_connections_per_address: DEFAULT_MAX_CONNECTIONS_PER_ADDRESS,
            max_tables_per_address: DEFAULT_MAX_TABLES_PER_ADDRESS,
            idle: Duration::from_secs(DEFAULT_IDLE_SECS),
            ai_threads: default_ai_threads(),
            header_timeout: Duration::from_secs_f64(DEFAULT_HEADER_TIMEOUT_SECS),
            public_origins: Vec::new(),
            egtb: None,
        }
    }

    /// Threads hints and reviews may use at once: half the search threads (at least one), so
    /// the other half is kept for the AIs' own moves.
    pub fn analysis_threads(&self) -> usize {
        (self.ai_threads / 2).max(1)
    }

    /// Hints and reviews waiting or running at once.
    pub fn analysis_queue(&self) -> usize {
        ANALYSIS_QUEUE_PER_THREAD * self.ai_threads.max(1)
    }

    /// How long nobody must have sat at a table before it may make room for a new one.
    pub fn evict_grace(&self) -> Duration {
        Duration::from_secs(EVICT_GRACE_SECS).min(self.idle / 4)
    }
}

/// `origin` as the server compares it: `scheme://host[:port]`, lower case, without a path or
/// a default port; an error says what is wrong.
pub fn normalize_origin(origin: &str) -> Result<String, String> {
    let o = origin.trim().trim_end_matches('/').to_ascii_lowercase();
    let (scheme, authority) = o
        .split_once("://")
        .ok_or_else(|| format!("'{origin}' is not an origin: expected https://HOST[:PORT]"))?;
    if scheme != "http" && scheme != "https" {
        return Err(format!("'{origin}': the scheme must be http or https"));
    }
    if authority.is_empty() || authority.contains(['/', '?', '#', '@', ' ']) {
        return Err(format!(
            "'{origin}' is not an origin: expected {scheme}://HOST[:PORT], no path or user"
        ));
    }
    let authority = match (scheme, authority.rsplit_once(':')) {
        ("http", Some((host, "80"))) | ("https", Some((host, "443"))) => host,
        _ => authority,
    };
    Ok(format!("{scheme}://{authority}"))
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
