//! The upper bounds on every number a user, a file or a peer can hand to a search or a match:
//! one constant each, used by every parser (player specs, the engine protocol, the training
//! config, the command line). A value above its bound is a clear error, never an out-of-memory
//! abort. The bounds lie far beyond any real use and are documented in `--help` and `docs/players.md`.

/// The most simulations one MCTS search may run (`sims=`, `go sims N`, `mcts.sims`,
/// `selfplay.cheap_sims`, `eval.sims`), and the most a timed MCTS search (`go ms N`) runs in
/// all. A simulation adds at most six nodes of about 44 bytes to the tree (whose arena is
/// doubled when it is re-rooted), so one search stays under about 600 MB.
pub const MAX_SIMS: u32 = 1_000_000;

/// The largest evaluation batch of one MCTS search (`batch=`, `mcts.leaves_per_tree`): the
/// leaves gathered per tree in one evaluator call.
pub const MAX_BATCH: u32 = 1024;

/// The deepest alpha-beta search, in plies (`depth=`, `go depth N`); alpha-beta sizes its
/// per-ply arrays from it.
pub const MAX_DEPTH: u32 = 120;

/// The longest time per move, in milliseconds (`ms=`, `go ms N`): one day. Alpha-beta's memory
/// does not grow with time (a fixed table); a timed MCTS search also stops at [`MAX_SIMS`].
pub const MAX_MILLIS: u64 = 86_400_000;

/// The largest alpha-beta transposition table, in MiB (`alphabeta:...,tt_mb=N`): a player
/// allocates its table once, per game in a match, on every match thread.
pub const MAX_TT_MB: u32 = 4096;

/// The most games one match or self-play command plays (`oware pit --games`,
/// `oware selfplay --games`, `eval.games`). A match keeps every finished game (its moves and
/// repetition history, at most about 17 KB each) until it reports.
pub const MAX_GAMES: u32 = 100_000;

/// The most threads a match or self-play uses (`oware pit --threads`, `selfplay.workers`).
/// Every thread holds its own players (search tables and trees).
pub const MAX_THREADS: u32 = 256;

/// The most simulations one self-play worker keeps in flight over all its games
/// (`selfplay.games_per_worker × mcts.sims`): its trees hold at most six nodes per simulation.
pub const MAX_SIMS_PER_WORKER: u64 = 1 << 22;

/// The longest line the line-based readers accept (the engine protocol, `oware replay`), in
/// bytes. A game of the longest allowed length (1000 plies) takes about 2 KB; a longer line is
/// an error for that line, and is never held in memory whole.
pub const MAX_LINE_BYTES: usize = 1 << 16;

/// The largest game-record file `oware play` loads, in bytes (a record of 100,000 long
/// games fits).
pub const MAX_RECORD_FILE_BYTES: u64 = 256 << 20;
