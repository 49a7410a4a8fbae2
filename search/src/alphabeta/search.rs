//! Negamax alpha-beta with principal-variation search, iterative deepening, a transposition
//! table and move ordering (table move, captures, history). The hot path allocates nothing.
//!
//! Every ending of the rules is scored exactly, in the order [`oware_engine::adjudicate`] decides them:
//! 25 captured; no legal move (rows collected); a repetition of a position since the last
//! capture, counting the game's own history and the search path (rows collected); the ply
//! limit (rows collected).
//!
//! # Repetitions and the table (the graph-history interaction)
//! A repetition ends the game, so the score of a node whose subtree ran into a repetition of a
//! position *above* it (on the search path or in the game's history) holds only for the path
//! it was reached by. Such scores are never stored: each node learns the lowest entry of the
//! key stack that a repetition below it matched, and stores its result only when that entry is
//! the node itself or lies below it (a cycle back to the node is part of the node's own
//! value). A table node whose band its history since the last capture narrowed
//! ([`super::TableNode::from_history`]) counts as a repetition of that history's first
//! position.
//!
//! The table is kept from one search to the next, but the game's history is not the same in
//! each: a stored score assumed the history of the search that stored it. The game's history
//! (positions since its last capture) shares the root's captured totals, and totals only grow,
//! so only positions with exactly the root's totals can run into it. For those, an entry
//! stored by an earlier search gives its move for ordering but not its score; every other
//! entry is independent of any history and is reused as it is.

use super::eval::{EvalWeights, capture_gain, evaluate_with};
use super::score::{
    MATE, PLY_STEP, from_table, plies_to_end, result_score, terminal_score, to_table,
};
use super::tables::{table_estimate, table_node};
use super::tt::{Bound, Entry, TranspositionTable};
use oware_egtb::Tables;
use oware_engine::Game;
use oware_engine::Position;
use oware_engine::Side;
use oware_engine::{Move, MoveList};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The deepest the search goes, in plies from the root.
pub const MAX_PLY: usize = oware_engine::bounds::MAX_DEPTH as usize;
/// The depth searched when neither a depth nor a time is given.
pub const DEFAULT_DEPTH: u32 = 10;

const INF: i32 = MATE + 1_000;
const FILTER_SIZE: usize = 1 << 12;
/// No repetition below: the "lowest key matched" of a subtree that met none.
const NO_REPETITION: usize = usize::MAX;
/// History scores are halved when one passes this, so they never overflow in a long search and
/// stay below the ordering bands of captures and table scores (2^28).
const HISTORY_LIMIT: u32 = 1 << 26;
/// The half-width of an aspiration window, in centiseeds.
const ASPIRATION_WINDOW: i32 = 40;

/// How a timed search spends its time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TimeUse {
    /// Deepen until the deadline: an iteration the clock stops keeps what it proved (the
    /// previous iteration's best move, or a move searched fully that beat it). The default.
    #[default]
    Spend,
    /// Start no iteration once 60% of the time is gone (the next would likely not finish):
    /// the time manager of earlier builds, which used about half its time.
    Finish,
}

impl TimeUse {
    /// The name in a player spec (`tm=spend|finish`).
    pub const fn name(self) -> &'static str {
        match self {
            TimeUse::Spend => "spend",
            TimeUse::Finish => "finish",
        }
    }
}

/// What bounds one search. With neither `depth` nor `millis`, [`DEFAULT_DEPTH`] is used.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SearchBudget {
    /// Deepest iteration, in plies.
    pub depth: Option<u32>,
    /// Time budget in milliseconds; the search returns the last completed iteration's result.
    pub millis: Option<u64>,
    /// Stop after about this many nodes.
    pub nodes: Option<u64>,
}

/// What a search found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AlphaBetaResult {
    /// The best move; `None` only when the game is already over.
    pub best: Option<Move>,
    /// The score for the side to move (centiseeds, or a decisive score; see
    /// [`super::terminal_score`]).
    pub score: i32,
    /// The last completed iteration's depth (0 for a finished game).
    pub depth: u32,
    /// Nodes visited over all iterations.
    pub nodes: u64,
    /// The principal variation, starting with `best`.
    pub pv: Vec<Move>,
    /// Time spent.
    pub elapsed: Duration,
}

impl AlphaBetaResult {
    /// Nodes per second over the whole search.
    pub fn nodes_per_second(&self) -> f64 {
        let s = self.elapsed.as_secs_f64();
        if s > 0.0 { self.nodes as f64 / s } else { 0.0 }
    }
}

/// Mixes a position key into the 64-bit hash used by the table and the repetition filter.
#[inline]
fn hash_key(key: u128) -> u64 {
    let lo = key as u64;
    let hi = (key >> 64) as u64;
    let mut h = lo ^ hi.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    h ^= h >> 29;
    h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h ^= h >> 32;
    h = h.wrapping_mul(0x94D0_49BB_1331_11EB);
    h ^ (h >> 31)
}

/// A move played ahead, with the child's key and its ordering score.
#[derive(Clone, Copy)]
struct Child {
    pos: Position,
    key: u128,
    hash: u64,
    mv: Move,
    order: u32,
}

impl Child {
    const EMPTY: Child = Child {
        pos: Position::start(),
        key: 0,
        hash: 0,
        mv: Move::from_relative(oware_engine::Side::South, 0),
        order: 0,
    };
}

/// The alpha-beta searcher. It owns its transposition table, history table and scratch space,
/// all allocated at construction; a search allocates only its result.
pub struct Searcher {
    tt: TranspositionTable,
    weights: EvalWeights,
    time_use: TimeUse,
    aspiration: bool,
    /// The most captures the quiescence search plays below the horizon (0: none).
    qdepth: u32,
    history: [u32; 12],
    /// Keys of the positions since the last capture of the game, then of the search path.
    keys: Vec<u128>,
    /// Per entry of `keys`, the least and the most seeds on South's row over the positions
    /// from the last capture before it up to it (the rows a repetition would hand out), and
    /// the index in `keys` of the first of those positions.
    rows: Vec<(u8, u8, usize)>,
    /// The lowest index of `keys` that a repetition in the subtree being searched matched
    /// ([`NO_REPETITION`] when none did).
    rep_floor: usize,
    /// Per hash bucket, how many of `keys` fall in it: most positions are ruled out as
    /// repetitions without scanning `keys`.
    filter: Vec<u16>,
    pv: Vec<Move>,
    pv_len: [usize; MAX_PLY + 1],
    nodes: u64,
    node_limit: u64,
    deadline: Option<Instant>,
    /// Set by another thread to end the search early ([`Searcher::set_stop`]).
    stop: Option<Arc<AtomicBool>>,
    stopped: bool,
    base_ply: u32,
    max_plies: u32,
    /// Advanced by every search, stored with each table entry.
    generation: u16,
    /// The captured totals at the root: positions with these totals can repeat the game's
    /// history.
    root_captured: [u8; 2],
    /// Endgame tables probed at every node they cover, and the side the last search was for
    /// (table scores depend on it).
    tables: Option<Arc<Tables>>,
    root_side: Side,
}

impl std::fmt::Debug for Searcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Searcher").field("tt", &self.tt).finish()
    }
}

impl Default for Searcher {
    fn default() -> Self {
        Searcher::new(super::DEFAULT_TT_MB)
    }
}

impl Searcher {
    /// A searcher with a transposition table of about `tt_megabytes` MiB and the default
    /// evaluation weights.
    pub fn new(tt_megabytes: usize) -> Searcher {
        Searcher {
            tt: TranspositionTable::new(tt_megabytes),
            weights: EvalWeights::DEFAULT,
            time_use: TimeUse::Spend,
            aspiration: super::DEFAULT_ASPIRATION,
            qdepth: super::DEFAULT_QDEPTH,
            history: [0; 12],
            keys: Vec::with_capacity(2048),
            rows: Vec::with_capacity(2048),
            rep_floor: NO_REPETITION,
            filter: vec![0; FILTER_SIZE],
            pv: vec![
                Move::from_relative(oware_engine::Side::South, 0);
                (MAX_PLY + 1) * (MAX_PLY + 1)
            ],
            pv_len: [0; MAX_PLY + 1],
            nodes: 0,
            node_limit: u64::MAX,
            deadline: None,
            stop: None,
            stopped: false,
            base_ply: 0,
            max_plies: u32::MAX,
            generation: 0,
            root_captured: [0; 2],
            tables: None,
            root_side: Side::South,
        }
    }

    /// Ends every search early once `stop` is set (it returns as a search out of time does:
    /// the best move so far); `None` takes the flag away.
    pub fn set_stop(&mut self, stop: Option<Arc<AtomicBool>>) {
        self.stop = stop;
    }

    /// Probes `tables` at every node whose board they cover (see [`super::table_node`]).
    pub fn set_tables(&mut self, tables: Option<Arc<Tables>>) {
        self.tables = tables;
    }

    /// The tables the search probes, if any.
    pub fn tables(&self) -> Option<&Arc<Tables>> {
        self.tables.as_ref()
    }

    /// Uses other evaluation weights.
    pub fn set_weights(&mut self, weights: EvalWeights) {
        self.weights = weights;
    }

    /// The evaluation weights in use.
    pub fn weights(&self) -> &EvalWeights {
        &self.weights
    }

    /// How timed searches spend their time (see [`TimeUse`]).
    pub fn set_time_use(&mut self, time_use: TimeUse) {
        self.time_use = time_use;
    }

    /// Whether iterations search an aspiration window around the previous score first.
    pub fn set_aspiration(&mut self, on: bool) {
        self.aspiration = on;
    }

    /// How many plies of captures the quiescence search may play below the horizon (0 turns
    /// it off: the horizon is scored by the evaluation alone). See [`Searcher::quiesce`].
    pub fn set_quiescence(&mut self, qdepth: u32) {
        self.qdepth = qdepth.min(super::MAX_QDEPTH);
    }

    /// The quiescence depth in use (see [`Searcher::set_quiescence`]).
    pub fn quiescence(&self) -> u32 {
        self.qdepth
    }

    /// The number of entries the transposition table holds.
    pub fn table_capacity(&self) -> usize {
        self.tt.capacity()
    }

    /// Forgets everything learned in earlier searches (table and history).
    pub fn clear(&mut self) {
        self.tt.clear();
        self.history = [0; 12];
    }

    /// Searches the current position of `game` within `limits`. The root moves are tried in
    /// the order given by `root_order` first (moves not in it follow in house order), which
    /// decides between equally good moves: pass a seeded shuffle for varied but reproducible
    /// play. On a finished game, returns its exact score and no move.
    pub fn search(
        &mut self,
        game: &Game,
        limits: SearchBudget,
        root_order: &[Move],
    ) -> AlphaBetaResult {
        self.search_reporting(game, limits, root_order, &mut |_| {})
    }

    /// As [`Searcher::search`], calling `on_iteration` with the result so far after each
    /// completed iteration of the deepening.
    pub fn search_reporting(
        &mut self,
        game: &Game,
        limits: SearchBudget,
        root_order: &[Move],
        on_iteration: &mut dyn FnMut(&AlphaBetaResult),
    ) -> AlphaBetaResult {
        self.search_among(game, limits, root_order, None, on_iteration)
    }

    /// As [`Searcher::search_reporting`], choosing only among the root moves in `allowed`
    /// (every legal move when `None`, or when none of `allowed` is legal).
    pub fn search_among(
        &mut self,
        game: &Game,
        limits: SearchBudget,
        root_order: &[Move],
        allowed: Option<&[Move]>,
        on_iteration: &mut dyn FnMut(&AlphaBetaResult),
    ) -> AlphaBetaResult {
        let started = Instant::now();
        if let Some(result) = game.result() {
            return AlphaBetaResult {
                best: None,
                score: result_score(&result, game.to_move(), 0),
                depth: 0,
                nodes: 0,
                pv: Vec::new(),
                elapsed: started.elapsed(),
            };
        }
        let max_depth = match (limits.depth, limits.millis) {
            (Some(d), _) => d.clamp(1, MAX_PLY as u32),
            (None, Some(_)) => MAX_PLY as u32,
            (None, None) => DEFAULT_DEPTH,
        };
        let budget = limits.millis.map(Duration::from_millis);
        self.deadline = budget.map(|b| started + b);
        self.node_limit = limits.nodes.unwrap_or(u64::MAX);
        self.nodes = 0;
        // A flag set before the search starts stops it at once.
        self.stopped = self
            .stop
            .as_ref()
            .is_some_and(|s| s.load(Ordering::Relaxed));
        self.base_ply = game.ply();
        self.max_plies = game.max_plies();
        self.generation = self.generation.wrapping_add(1);
        self.root_captured = game.position().captured();
        if self.tables.is_some() && self.root_side != game.to_move() {
            // Table scores are seen from the searching side: those stored for the other are
            // not valid now.
            self.tt.clear();
        }
        self.root_side = game.to_move();
        for h in &mut self.history {
            *h /= 8;
        }
        self.keys.clear();
        self.rows.clear();
        self.filter.fill(0);
        self.rep_floor = NO_REPETITION;
        for &k in game.seen_since_capture() {
            self.push_key(k);
        }

        let root = *game.position();
        let legal = game.legal_moves();
        let mut moves: Vec<Move> = root_order
            .iter()
            .copied()
            .filter(|m| legal.contains(*m))
            .collect();
        for m in &legal {
            if !moves.contains(&m) {
                moves.push(m);
            }
        }
        if let Some(allowed) = allowed
            && moves.iter().any(|m| allowed.contains(m))
        {
            moves.retain(|m| allowed.contains(m));
        }
        // Captures first at the first iteration (stable, so the given order breaks ties).
        moves.sort_by_key(|m| {
            std::cmp::Reverse(capture_gain(root.board(), root.to_move(), m.house()))
        });

        let mut best = moves[0];
        let mut best_score = -INF;
        let mut best_pv = vec![best];
        let mut completed = 0;
        let single_reply_in_time = moves.len() == 1 && limits.depth.is_none();
        for depth in 1..=max_depth {
            let (score, iter_best, finished) =
                if self.aspiration && completed >= 3 && plies_to_end(best_score).is_none() {
                    self.aspirated(&root, &mut moves, depth as i32, best_score)
                } else {
                    self.root(&root, &mut moves, depth as i32, -INF, INF)
                };
            if !finished {
                // A move searched fully in the unfinished iteration beat the old best (which
                // is searched first): take it.
                if let Some((m, s)) = iter_best
                    && m != best
                    && s > -INF
                {
                    best = m;
                    best_score = s;
                    best_pv = vec![m];
                }
                break;
            }
            completed = depth;
            best_score = score;
            if let Some((m, _)) = iter_best {
                best = m;
            }
            best_pv = self.pv[..self.pv_len[0]].to_vec();
            if best_pv.first() != Some(&best) {
                best_pv = vec![best];
            }
            on_iteration(&AlphaBetaResult {
                best: Some(best),
                score: best_score,
                depth: completed,
                nodes: self.nodes,
                pv: best_pv.clone(),
                elapsed: started.elapsed(),
            });
            if single_reply_in_time {
                break;
            }
            if plies_to_end(score).is_some_and(|p| p <= depth) {
                break;
            }
            if let Some(b) = budget {
                match self.time_use {
                    // The next iteration runs to the deadline; what it proves by then counts.
                    TimeUse::Spend => {
                        if started.elapsed() >= b {
                            break;
                        }
                    }
                    // The next iteration costs a few times this one: do not start what
                    // cannot end.
                    TimeUse::Finish => {
                        if started.elapsed() * 5 > b * 3 {
                            break;
                        }
                    }
                }
            }
        }
        AlphaBetaResult {
            best: Some(best),
            score: best_score,
            depth: completed,
            nodes: self.nodes,
            pv: best_pv,
            elapsed: started.elapsed(),
        }
    }

    #[inline]
    fn push_key(&mut self, key: u128) {
        self.filter[hash_key(key) as usize & (FILTER_SIZE - 1)] += 1;
        let row = Position::key_row_seeds(key, Side::South);
        let rows = match (self.keys.last(), self.rows.last()) {
            (Some(&k), Some(&(lo, hi, start)))
                if Position::key_captured(k) == Position::key_captured(key) =>
            {
                (lo.min(row), hi.max(row), start)
            }
            _ => (row, row, self.keys.len()),
        };
        self.keys.push(key);
        self.rows.push(rows);
    }

    #[inline]
    fn pop_key(&mut self, key: u128, hash: u64) {
        self.filter[hash as usize & (FILTER_SIZE - 1)] -= 1;
        let popped = self.keys.pop();
        self.rows.pop();
        debug_assert_eq!(popped, Some(key));
    }

    /// The index in `keys` of the earlier occurrence of this position, if it is a repetition.
    #[inline]
    fn repetition(&self, key: u128, hash: u64) -> Option<usize> {
        // Keys hold the captured totals, which only grow: a key from before a capture can
        // never match a later one, so scanning every key equals scanning since the capture.
        if self.filter[hash as usize & (FILTER_SIZE - 1)] == 0 {
            return None;
        }
        self.keys.iter().rposition(|&k| k == key)
    }

    /// Rewards a move that caused a cut-off at `depth`, halving every score when one grows
    /// past [`HISTORY_LIMIT`].
    #[inline]
    fn reward_history(&mut self, m: Move, depth: i32) {
        let h = &mut self.history[m.house()];
        // depth <= MAX_PLY, so the reward is at most 14,400 and h stays far from u32::MAX.
        *h += (depth * depth) as u32;
        if *h > HISTORY_LIMIT {
            for x in &mut self.history {
                *x /= 2;
            }
        }
    }

    #[inline]
    fn check_limits(&mut self) {
        if self.nodes >= self.node_limit {
            self.stopped = true;
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            self.stopped = true;
        }
        if self
            .stop
            .as_ref()
            .is_some_and(|s| s.load(Ordering::Relaxed))
        {
            self.stopped = true;
        }
    }

    /// One iteration at the root. Returns the score, the best move with its score (also when
    /// the iteration was cut short), and whether the iteration finished. Reorders `moves` so
    /// the best comes first.
    fn root(
        &mut self,
        pos: &Position,
        moves: &mut [Move],
        depth: i32,
        mut alpha: i32,
        beta: i32,
    ) -> (i32, Option<(Move, i32)>, bool) {
        let mut best: Option<(Move, i32)> = None;
        self.pv_len[0] = 0;
        for i in 0..moves.len() {
            let m = moves[i];
            let mut child = *pos;
            child.play_unchecked(m);
            let (ck, ch) = (child.key(), hash_key(child.key()));
            let score = if i == 0 {
                -self.node(&child, ck, ch, depth - 1, 1, -beta, -alpha)
            } else {
                let s = -self.node(&child, ck, ch, depth - 1, 1, -alpha - 1, -alpha);
                if s > alpha && !self.stopped {
                    -self.node(&child, ck, ch, depth - 1, 1, -beta, -alpha)
                } else {
                    s
                }
            };
            if self.stopped {
                return (alpha, best, false);
            }
            if score > alpha {
                alpha = score;
                best = Some((m, score));
                self.set_pv(0, m);
                // Move the new best to the front, keeping the others' order.
                moves[..=i].rotate_right(1);
                if alpha >= beta {
                    // Above an aspiration window: the caller searches again, wider.
                    break;
                }
            }
        }
        (alpha, best, true)
    }

    /// One iteration at the root in an aspiration window around `guess` (the previous
    /// iteration's score), widened to the full window on the side it fails. Returns as
    /// [`Searcher::root`]; when the clock stops a re-search after a fail high, the move that
    /// failed high is the best found.
    fn aspirated(
        &mut self,
        pos: &Position,
        moves: &mut [Move],
        depth: i32,
        guess: i32,
    ) -> (i32, Option<(Move, i32)>, bool) {
        let mut lo = guess - ASPIRATION_WINDOW;
        let mut hi = guess + ASPIRATION_WINDOW;
        let mut failed_high: Option<(Move, i32)> = None;
        loop {
            let (score, best, finished) = self.root(pos, moves, depth, lo, hi);
            if !finished {
                return (score, best.or(failed_high), false);
            }
            if score <= lo && lo > -INF {
                lo = -INF;
            } else if score >= hi && hi < INF {
                failed_high = best;
                hi = INF;
            } else {
                return (score, best, true);
            }
        }
    }

    #[inline]
    fn set_pv(&mut self, ply: usize, m: Move) {
        let row = ply * (MAX_PLY + 1);
        let child_row = (ply + 1) * (MAX_PLY + 1);
        self.pv[row + ply] = m;
        let end = self.pv_len[ply + 1].max(ply + 1);
        for i in ply + 1..end {
            self.pv[row + i] = self.pv[child_row + i];
        }
        self.pv_len[ply] = end;
    }

    /// The exact score of the ending at `pos` (collecting the rows first when `collect`).
    #[inline]
    fn terminal(pos: &Position, ply: usize, collect: bool) -> i32 {
        let mut p = *pos;
        if collect {
            p.collect_rows();
        }
        let me = p.to_move().index();
        let cap = p.captured();
        terminal_score(cap[me] as i32 - cap[1 - me] as i32, ply as u32)
    }

    /// The quiescence score of `pos` within `alpha..beta` (fail-soft): the better for the side
    /// to move of standing pat (the static evaluation) and each capture it can play, each
    /// answered the same way, at most `qleft` captures deep. The position must be live and
    /// not a repetition nor at the ply limit (the search checks those before the horizon);
    /// `ply` is its distance from the root. Exposed for tests and analysis; the search calls
    /// it at its horizon when the quiescence depth is above 0.
    pub fn quiesce(
        &mut self,
        pos: &Position,
        ply: usize,
        alpha: i32,
        beta: i32,
        qleft: u32,
    ) -> i32 {
        let stand = evaluate_with(pos, &self.weights);
        self.quiesce_below(pos, stand, ply, alpha, beta, qleft)
    }

    /// [`Searcher::quiesce`] with the static evaluation `stand` already computed.
    ///
    /// The captures are the legal moves (so the must-feed rule holds) whose capture stands: a
    /// capture the grand-slam rule cancels takes nothing and is a quiet move here. Every child
    /// is scored by the rules first, in the order the search uses: 25 captured, then no legal
    /// move (rows collected), then the ply limit (rows collected). A child reached by a
    /// capture cannot repeat any earlier position (its captured totals are new), so no
    /// repetition check is needed. Captures are tried largest first.
    fn quiesce_below(
        &mut self,
        pos: &Position,
        stand: i32,
        ply: usize,
        mut alpha: i32,
        beta: i32,
        qleft: u32,
    ) -> i32 {
        if stand >= beta || qleft == 0 || ply >= MAX_PLY {
            return stand;
        }
        let mut kids = [Child::EMPTY; 6];
        let mut n = 0;
        for m in &pos.legal_moves() {
            let mut child = *pos;
            let effect = child.play_unchecked(m);
            if effect.captured > 0 {
                kids[n] = Child {
                    pos: child,
                    key: 0,
                    hash: 0,
                    mv: m,
                    order: effect.captured as u32,
                };
                n += 1;
            }
        }
        if n == 0 {
            return stand;
        }
        for i in 1..n {
            let mut j = i;
            while j > 0 && kids[j - 1].order < kids[j].order {
                kids.swap(j - 1, j);
                j -= 1;
            }
        }
        let mut best = stand;
        alpha = alpha.max(stand);
        for kid in &kids[..n] {
            self.nodes += 1;
            if self.nodes & 1023 == 0 {
                self.check_limits();
            }
            if self.stopped {
                return 0;
            }
            let child = &kid.pos;
            let cply = ply + 1;
            let score = if child.has_winning_capture() {
                -Self::terminal(child, cply, false)
            } else if child.legal_mask() == 0 || self.base_ply + cply as u32 >= self.max_plies {
                // No legal move, or the ply limit: the game ends and each side takes its row.
                -Self::terminal(child, cply, true)
            } else {
                let h = evaluate_with(child, &self.weights);
                -self.quiesce_below(child, h, cply, -beta, -alpha, qleft - 1)
            };
            if score > best {
                best = score;
                if score > alpha {
                    alpha = score;
                    if alpha >= beta {
                        break;
                    }
                }
            }
        }
        best
    }

    /// A node reached by a move, `ply` plies below the root, with its key and hash.
    #[allow(clippy::too_many_arguments)]
    fn node(
        &mut self,
        pos: &Position,
        key: u128,
        hash: u64,
        depth: i32,
        ply: usize,
        mut alpha: i32,
        beta: i32,
    ) -> i32 {
        self.nodes += 1;
        if self.nodes & 1023 == 0 {
            self.check_limits();
        }
        if self.stopped {
            return 0;
        }
        self.pv_len[ply] = ply;
        if pos.has_winning_capture() {
            return Self::terminal(pos, ply, false);
        }
        let moves: MoveList = pos.legal_moves();
        if moves.is_empty() {
            return Self::terminal(pos, ply, true);
        }
        if let Some(earlier) = self.repetition(key, hash) {
            self.rep_floor = self.rep_floor.min(earlier);
            return Self::terminal(pos, ply, true);
        }
        if self.base_ply + ply as u32 >= self.max_plies {
            return Self::terminal(pos, ply, true);
        }
        // The tables hold whatever the history (they know no ply limit: not used where the
        // search itself reaches it); see `super::tables`.
        let mut hist_floor = NO_REPETITION;
        let table = match &self.tables {
            Some(t)
                if (self.base_ply as u64 + ply as u64 + depth.max(0) as u64)
                    < self.max_plies as u64 =>
            {
                // The rows a repetition of a position since the last capture would give the
                // mover; none when nothing was played since (the parent's captured totals
                // differ, or there is no parent).
                let (repeats, start) = match (self.keys.last(), self.rows.last()) {
                    (Some(&k), Some(&(lo, hi, start)))
                        if Position::key_captured(k) == Position::key_captured(key) =>
                    {
                        if pos.to_move() == Side::South {
                            (Some((lo, hi)), start)
                        } else {
                            // The board's seeds are all on the two rows.
                            let n = pos.board().iter().sum::<u8>();
                            (Some((n - hi, n - lo)), start)
                        }
                    }
                    _ => (None, NO_REPETITION),
                };
                let node = table_node(t, pos, self.root_side, repeats);
                if node.is_some_and(|t| t.from_history) {
                    // Its band holds only after this history, from the stretch's first
                    // position on: like a repetition of it, nothing above may store a
                    // score that depends on it (see the module docs).
                    hist_floor = start;
                }
                node
            }
            _ => None,
        };
        self.rep_floor = self.rep_floor.min(hist_floor);
        let (tb_lo, tb_hi) = table.map_or((-INF, INF), |t| (t.floor, t.ceiling));
        if tb_lo == tb_hi || tb_lo >= beta {
            return tb_lo;
        }
        if tb_hi <= alpha {
            return tb_hi;
        }
        if depth <= 0 || ply >= MAX_PLY {
            let h = evaluate_with(pos, &self.weights);
            return match (table, &self.tables) {
                // A table node's board is covered, so the estimate always exists; the
                // heuristic stands in only to avoid a panic in the search.
                (Some(node), Some(tb)) => node.leaf_score(h, table_estimate(tb, pos).unwrap_or(h)),
                _ if self.qdepth > 0 && ply < MAX_PLY => {
                    self.quiesce_below(pos, h, ply, alpha, beta, self.qdepth)
                }
                _ => h,
            };
        }
        // A win can be no closer than the next ply: cut when the window lies beyond it.
        let best_possible = MATE - (ply as i32 + 1) * PLY_STEP + 48;
        if alpha >= best_possible {
            return alpha;
        }

        let pv_node = beta - alpha > 1;
        // A subtree that reaches the ply limit (its quiescence plies included) has a value that
        // depends on the path length: such results are neither taken from nor given to the
        // table.
        let near_limit = self.base_ply as u64 + ply as u64 + depth as u64 + self.qdepth as u64
            >= self.max_plies as u64;
        let mut tt_move = None;
        if let Some(e) = self.tt.probe(hash) {
            tt_move = e.best.filter(|m| moves.contains(*m));
            // An earlier search's score for a position that can repeat this game's history
            // assumed that search's history (see the module docs): only its move is used.
            let history_free =
                e.generation == self.generation || pos.captured() != self.root_captured;
            if history_free && !pv_node && !near_limit && e.depth as i32 >= depth {
                let s = from_table(e.score, ply);
                match e.bound {
                    Bound::Exact => return s,
                    Bound::Lower if s >= beta => return s,
                    Bound::Upper if s <= alpha => return s,
                    _ => {}
                }
            }
        }

        // Above the last ply, play every move up front: the children's table slots are loaded
        // together (their cache misses overlap) and their stored scores help ordering. At the
        // last ply the children are leaves that use no table: play each only when searched.
        // Order: table move, captures by size, children already scored (best for us first),
        // then history.
        let n = moves.len();
        let ahead = depth >= 2;
        let mut kids = [Child::EMPTY; 6];
        for (kid, m) in kids.iter_mut().zip(moves.iter()) {
            kid.mv = m;
            if ahead {
                let mut child = *pos;
                let effect = child.play_unchecked(m);
                kid.pos = child;
                kid.key = child.key();
                kid.hash = hash_key(kid.key);
                kid.order = if Some(m) == tt_move {
                    u32::MAX
                } else if effect.captured > 0 {
                    (1 << 30) + effect.captured as u32
                } else if let Some(e) = self.tt.probe(kid.hash) {
                    // Lower child scores are better for us.
                    (1 << 28) + (32_768 - e.score as i32) as u32
                } else {
                    self.history[m.house()]
                };
            } else {
                let gain = capture_gain(pos.board(), pos.to_move(), m.house());
                kid.order = if Some(m) == tt_move {
                    u32::MAX
                } else if gain > 0 {
                    (1 << 30) + gain
                } else {
                    self.history[m.house()]
                };
            }
        }
        for i in 1..n {
            let mut j = i;
            while j > 0 && kids[j - 1].order < kids[j].order {
                kids.swap(j - 1, j);
                j -= 1;
            }
        }

        // This node's entry in the key stack; repetitions below that match it or deeper entries
        // do not depend on the path to it.
        let own_index = self.keys.len();
        let outer_floor = std::mem::replace(&mut self.rep_floor, NO_REPETITION);
        self.push_key(key);
        let alpha0 = alpha;
        let mut best_score = -INF;
        let mut best_move = kids[0].mv;
        for (i, kid) in kids[..n].iter_mut().enumerate() {
            let m = kid.mv;
            if !ahead {
                kid.pos = *pos;
                kid.pos.play_unchecked(m);
                kid.key = kid.pos.key();
                kid.hash = hash_key(kid.key);
            }
            let (child, ck, ch) = (&kid.pos, kid.key, kid.hash);
            let score = if i == 0 {
                -self.node(child, ck, ch, depth - 1, ply + 1, -beta, -alpha)
            } else {
                let s = -self.node(child, ck, ch, depth - 1, ply + 1, -alpha - 1, -alpha);
                if s > alpha && s < beta && !self.stopped {
                    -self.node(child, ck, ch, depth - 1, ply + 1, -beta, -alpha)
                } else {
                    s
                }
            };
            if self.stopped {
                self.pop_key(key, hash);
                self.rep_floor = self.rep_floor.min(outer_floor);
                return 0;
            }
            if score > best_score {
                best_score = score;
                best_move = m;
                if score > alpha {
                    alpha = score;
                    if pv_node {
                        self.set_pv(ply, m);
                    }
                    if alpha >= beta {
                        self.reward_history(m, depth);
                        break;
                    }
                }
            }
        }
        self.pop_key(key, hash);
        let floor = self.rep_floor.min(hist_floor);
        self.rep_floor = floor.min(outer_floor);
        let best_score = best_score.clamp(tb_lo, tb_hi);

        let bound = if best_score >= beta {
            Bound::Lower
        } else if best_score > alpha0 {
            Bound::Exact
        } else {
            Bound::Upper
        };
        if near_limit || floor < own_index {
            return best_score;
        }
        self.tt.store(
            hash,
            Entry {
                depth: depth.clamp(0, 255) as u8,
                bound,
                score: to_table(best_score, ply),
                best: Some(best_move),
                generation: self.generation,
            },
        );
        best_score
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alphabeta::{WIN_THRESHOLD, terminal_score};

    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    /// Live positions from random games (seeded), with the game that reached each.
    fn random_games(n: usize, seed: u64) -> Vec<Game> {
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut out = Vec::new();
        while out.len() < n {
            let mut game = Game::new();
            let plies = rng.random_range(4..80);
            for _ in 0..plies {
                let legal = game.legal_moves();
                if game.is_over() || legal.is_empty() {
                    break;
                }
                let m = legal.as_slice()[rng.random_range(0..legal.len())];
                game.play_unchecked(m);
            }
            if !game.is_over() {
                out.push(game);
            }
        }
        out
    }

    /// The quiescence value written plainly, full window: stand pat or any standing capture,
    /// children scored by the rules first.
    fn reference(pos: &Position, ply: u32, qleft: u32, w: &EvalWeights) -> i32 {
        let stand = evaluate_with(pos, w);
        if qleft == 0 {
            return stand;
        }
        let mut best = stand;
        for m in &pos.legal_moves() {
            let (child, effect) = pos.play(m).expect("legal");
            if effect.captured == 0 {
                continue;
            }
            let margin = |p: &Position| {
                let c = p.captured();
                let me = p.to_move().index();
                c[me] as i32 - c[1 - me] as i32
            };
            let score = if child.has_winning_capture() {
                -terminal_score(margin(&child), ply + 1)
            } else if child.legal_moves().is_empty() {
                let mut done = child;
                done.collect_rows();
                -terminal_score(margin(&done), ply + 1)
            } else {
                -reference(&child, ply + 1, qleft - 1, w)
            };
            best = best.max(score);
        }
        best
    }

    #[test]
    fn quiescence_is_the_capture_search_with_stand_pat_and_its_bounds_hold() {
        let w = EvalWeights::DEFAULT;
        let mut s = Searcher::new(1);
        let mut rng = SmallRng::seed_from_u64(5);
        let mut deeper = 0;
        for game in random_games(400, 11) {
            let pos = *game.position();
            let stand = evaluate_with(&pos, &w);
            let full = s.quiesce(&pos, 0, -INF, INF, 8);
            assert_eq!(full, reference(&pos, 0, 8, &w), "{pos:?}");
            // Standing pat is always possible: never below the static evaluation.
            assert!(full >= stand, "{pos:?}");
            if full != stand {
                deeper += 1;
            }
            // With no standing capture, the evaluation itself.
            let captures = pos
                .legal_moves()
                .iter()
                .filter(|&m| pos.play(m).is_ok_and(|(_, e)| e.captured > 0))
                .count();
            if captures == 0 {
                assert_eq!(full, stand);
            }
            // Fail-soft windows: a result at or below alpha bounds the value from above, one at
            // or above beta from below, one inside is exact.
            for _ in 0..4 {
                let a = full + rng.random_range(-400..400);
                let b = a + rng.random_range(1..400);
                let r = s.quiesce(&pos, 0, a, b, 8);
                if r <= a {
                    assert!(full <= r, "{pos:?} ({a}, {b}): {r} vs {full}");
                } else if r >= b {
                    assert!(full >= r, "{pos:?} ({a}, {b}): {r} vs {full}");
                } else {
                    assert_eq!(r, full, "{pos:?} ({a}, {b})");
                }
            }
        }
        // Captures changed the value of many positions.
        assert!(deeper > 40, "{deeper}");
    }

    #[test]
    fn grand_slams_and_the_must_feed_rule_are_the_engines() {
        let w = EvalWeights::DEFAULT;
        let mut s = Searcher::new(1);
        // North holds 1 seed in A and 1 in B; South's f (2 seeds) makes them 2 and 2: a
        // capture of every seed North has, cancelled (grand slam). No other capture exists.
        let pos = Position::from_parts([0, 0, 0, 0, 5, 2, 1, 1, 0, 0, 0, 0], [19, 20], Side::South)
            .expect("48 seeds");
        let (_, effect) = pos
            .play(Move::from_relative(Side::South, 5))
            .expect("legal");
        assert!(effect.grand_slam && effect.captured == 0);
        assert_eq!(s.quiesce(&pos, 0, -INF, INF, 8), evaluate_with(&pos, &w));
        // North's row is empty: only moves that feed it are legal (e and f, not d), and none
        // captures.
        let pos = Position::from_parts([0, 0, 0, 2, 2, 1, 0, 0, 0, 0, 0, 0], [21, 22], Side::South)
            .expect("48 seeds");
        assert_eq!(pos.legal_moves().len(), 2);
        assert_eq!(s.quiesce(&pos, 0, -INF, INF, 8), evaluate_with(&pos, &w));
    }

    #[test]
    fn quiescence_sees_what_a_plain_search_at_the_same_depth_misses() {
        let budget = |d| SearchBudget {
            depth: Some(d),
            ..SearchBudget::default()
        };
        let (mut plain, mut quiet, mut deep) =
            (Searcher::new(1), Searcher::new(1), Searcher::new(8));
        plain.set_quiescence(0);
        quiet.set_quiescence(8);
        deep.set_quiescence(0);
        // (board, captured, South to move): positions from random games where the move a
        // one-ply search picks without quiescence is not the one a depth-11 search picks,
        // and with quiescence it is.
        for (board, captured) in [
            // North has 24: after d, its capture wins at once; b puts the loss off longest.
            ([1, 1, 1, 2, 0, 0, 2, 5, 0, 0, 0, 2], [10, 24]),
            // Material: e walks into a chain of captures, a does not.
            ([1, 1, 13, 3, 3, 4, 5, 1, 0, 9, 2, 1], [5, 0]),
        ] {
            let pos = Position::from_parts(board, captured, Side::South).expect("48 seeds");
            let game = Game::from_position(pos, oware_engine::DEFAULT_MAX_PLIES);
            let truth = deep.search(&game, budget(11), &[]);
            let p = plain.search(&game, budget(1), &[]);
            let q = quiet.search(&game, budget(1), &[]);
            assert_ne!(p.best, truth.best, "{board:?}");
            assert_eq!(q.best, truth.best, "{board:?}");
        }
        // The first is lost: quiescence proves it at one ply (North's winning capture is past
        // the horizon), the plain search sees a heuristic score.
        let pos = Position::from_parts([1, 1, 1, 2, 0, 0, 2, 5, 0, 0, 0, 2], [10, 24], Side::South)
            .expect("48 seeds");
        let game = Game::from_position(pos, oware_engine::DEFAULT_MAX_PLIES);
        let truth = deep.search(&game, budget(11), &[]);
        assert!(truth.score <= -WIN_THRESHOLD);
        assert_eq!(quiet.search(&game, budget(1), &[]).score, truth.score);
        assert!(plain.search(&game, budget(1), &[]).score > -WIN_THRESHOLD);
    }

    #[test]
    fn history_scores_are_halved_before_they_can_overflow() {
        let mut s = Searcher::new(1);
        let m = Move::from_relative(oware_engine::Side::South, 2);
        s.history = [HISTORY_LIMIT; 12];
        // Far more cut-offs at the deepest depth than a long timed search makes on one move.
        for _ in 0..1_000_000 {
            s.reward_history(m, MAX_PLY as i32);
            assert!(s.history[m.house()] <= HISTORY_LIMIT);
        }
        assert!(s.history.iter().all(|&h| h <= HISTORY_LIMIT));
        // Orderings stay below the table-score band.
        assert!(HISTORY_LIMIT + (MAX_PLY * MAX_PLY) as u32 <= 1 << 28);
    }
    #[test]
    fn a_stop_flag_ends_a_long_search_with_a_legal_move() {
        let stop = Arc::new(AtomicBool::new(false));
        let mut s = Searcher::new(1);
        s.set_stop(Some(stop.clone()));
        let flag = stop.clone();
        let setter = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            flag.store(true, Ordering::Relaxed);
        });
        let game = Game::new();
        let limits = SearchBudget {
            millis: Some(60_000),
            ..SearchBudget::default()
        };
        let started = Instant::now();
        let r = s.search(&game, limits, &[]);
        setter.join().expect("setter");
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the flag stopped it"
        );
        assert!(r.best.is_some_and(|m| game.legal_moves().contains(m)));
        // A flag that is set already stops the next search at once.
        let started = Instant::now();
        let r = s.search(&game, limits, &[]);
        assert!(started.elapsed() < Duration::from_secs(1));
        assert!(r.best.is_some());
    }
}
