//! The alpha-beta baseline: negamax with alpha-beta pruning, iterative deepening, a
//! transposition table, move ordering and a heuristic evaluation, plus the [`AlphaBetaPlayer`].

mod book;
mod data_file;
mod eval;
mod player;
mod score;
mod search;
mod tables;
mod tt;
pub mod tune;

pub use book::{BOOK_FILE_HEADER, Book, BookBuild, BookLine, BookMove};
pub use eval::{
    CLASSIC_FILE, EVAL_FILE_HEADER, EVAL_LIMIT, EvalWeights, FEATURE_NAMES, FEATURES, MAX_WEIGHT,
    SEED, TUNED_FILE, capture_gain, evaluate, evaluate_with, features, material,
};
pub use player::{AlphaBetaOptions, AlphaBetaPlayer};
pub use player::{iteration_info, search_info};
pub use score::{
    MATE, PLY_STEP, WIN_THRESHOLD, format_score, is_decisive, plies_to_end, result_score,
    score_to_value, terminal_score,
};
pub use search::{AlphaBetaResult, DEFAULT_DEPTH, MAX_PLY, SearchBudget, Searcher, TimeUse};
pub use tables::{
    LEAF_SHARE_TENTHS, LEAF_TABLE_TENTHS, TABLE_WIN, TableNode, table_estimate, table_node,
    table_score,
};
pub use tt::{Bound, Entry, TranspositionTable};

/// The size of a searcher's transposition table unless told otherwise, in MiB.
pub const DEFAULT_TT_MB: usize = 2;

/// Whether searches use aspiration windows unless told otherwise (`asp=`).
pub const DEFAULT_ASPIRATION: bool = false;

/// How many plies of captures the quiescence search plays below the horizon unless told
/// otherwise (`qdepth=`; 0 turns it off).
pub const DEFAULT_QDEPTH: u32 = 8;

/// The deepest quiescence search `qdepth=` accepts.
pub const MAX_QDEPTH: u32 = 32;
