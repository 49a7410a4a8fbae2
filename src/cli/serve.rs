//! `oware serve`: the board in a browser (vs AI, two on one device, friend rooms); the server
//! itself is the `oware-web` crate.

use oware_web::ServeConfig;
use oware_web::config::{
    DEFAULT_ADDR, DEFAULT_ANALYSIS_SPEC, DEFAULT_HEADER_TIMEOUT_SECS, DEFAULT_IDLE_SECS,
    DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_CONNECTIONS_PER_ADDRESS, DEFAULT_MAX_GAMES,
    DEFAULT_MAX_ROOMS, DEFAULT_MAX_TABLES_PER_ADDRESS, default_ai_threads, default_ais,
};
use std::net::SocketAddr;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

/// Arguments of `oware serve`.
#[derive(clap::Args, Debug)]
pub(super) struct Args {
    /// Where to listen. The default is reachable from this machine only; give e.g.
    /// 0.0.0.0:8080 to let others in.
    #[arg(long, default_value = DEFAULT_ADDR, value_name = "IP:PORT")]
    addr: SocketAddr,

    /// An AI player to offer (any player spec; repeat for more; the first is the default).
    /// Default: MCTS with the newest checkpoint under `runs/` (else `alphabeta:ms=1000`),
    /// and alpha-beta at depth 2 and 5 and at one second a move.
    #[arg(long = "ai", value_name = "PLAYER")]
    ai: Vec<String>,

    /// Friend rooms open at once.
    #[arg(long, default_value_t = DEFAULT_MAX_ROOMS, value_name = "N")]
    max_rooms: usize,

    /// Games against the AI or on one device open at once.
    #[arg(long, default_value_t = DEFAULT_MAX_GAMES, value_name = "N")]
    max_games: usize,

    /// WebSocket connections open at once.
    #[arg(long, default_value_t = DEFAULT_MAX_CONNECTIONS, value_name = "N")]
    max_connections: usize,

    /// WebSocket connections open at once from one address (an IPv6 address counts by its
    /// /64); other TCP connections from one address are bounded by twice this.
    #[arg(long, default_value_t = DEFAULT_MAX_CONNECTIONS_PER_ADDRESS, value_name = "N")]
    max_connections_per_address: usize,

    /// Games and rooms one address may hold at once (its own oldest unattended one makes
    /// room for a new one).
    #[arg(long, default_value_t = DEFAULT_MAX_TABLES_PER_ADDRESS, value_name = "N")]
    max_tables_per_address: usize,

    /// An origin the page is reached at besides localhost and IP addresses (e.g. behind a
    /// reverse proxy: https://oware.example.org); repeat for more. Requests naming any other
    /// host are refused, against DNS rebinding.
    #[arg(long = "public-origin", value_name = "URL")]
    public_origins: Vec<String>,

    /// Seconds a client may take to send a request's headers.
    #[arg(long, default_value_t = DEFAULT_HEADER_TIMEOUT_SECS, value_name = "SECS")]
    header_timeout: f64,

    /// Seconds without a move after which a room or game expires (and without a message
    /// after which a connection closes).
    #[arg(long, default_value_t = DEFAULT_IDLE_SECS as f64, value_name = "SECS")]
    idle_timeout: f64,

    /// Threads that run AI searches (default: one per core).
    #[arg(long, value_name = "T")]
    ai_threads: Option<usize>,

    /// The player that evaluates every position of a reviewed game for the graph.
    #[arg(long, default_value = DEFAULT_ANALYSIS_SPEC, value_name = "PLAYER")]
    analysis: String,

    /// Endgame tables (`oware egtb build`): positions they give an exact value are played
    /// perfectly by every AI and hint, and reviews mark the moves that threw a win or a draw
    /// away.
    #[arg(long, value_name = "DIR")]
    egtb: Option<std::path::PathBuf>,
}

/// Runs `oware serve`.
pub(super) fn run(args: Args) -> anyhow::Result<ExitCode> {
    if !(args.idle_timeout.is_finite() && args.idle_timeout > 0.0) {
        anyhow::bail!(
            "--idle-timeout {} must be a positive number of seconds",
            args.idle_timeout
        );
    }
    if !(args.header_timeout.is_finite() && args.header_timeout > 0.0) {
        anyhow::bail!(
            "--header-timeout {} must be a positive number of seconds",
            args.header_timeout
        );
    }
    if args.max_connections_per_address == 0 || args.max_tables_per_address == 0 {
        anyhow::bail!(
            "--max-connections-per-address and --max-tables-per-address must be at least 1"
        );
    }
    if args.max_rooms == 0 && args.max_games == 0 {
        anyhow::bail!("--max-rooms 0 with --max-games 0 leaves nothing to play");
    }
    let ais = if args.ai.is_empty() {
        default_ais(Path::new("runs"))
    } else {
        args.ai
    };
    let mut config = ServeConfig::new(args.addr, ais);
    config.analysis = args.analysis;
    config.egtb = args.egtb;
    config.max_rooms = args.max_rooms;
    config.max_games = args.max_games;
    config.max_connections = args.max_connections;
    config.max_connections_per_address = args.max_connections_per_address;
    config.max_tables_per_address = args.max_tables_per_address;
    config.public_origins = args.public_origins;
    config.header_timeout = Duration::from_secs_f64(args.header_timeout);
    config.idle = Duration::from_secs_f64(args.idle_timeout);
    config.ai_threads = args.ai_threads.unwrap_or_else(default_ai_threads).max(1);
    oware_web::run(config)?;
    Ok(ExitCode::SUCCESS)
}
