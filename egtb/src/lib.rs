//! # oware-egtb
//!
//! Endgame tables: for every position with up to 21 seeds on the board, what its side to move
//! secures with best play, by retrograde analysis under the exact rules of `docs/rules.md`.
//! The crate holds the build, the table files, probes, the prover, the judge's verdicts and a
//! history-aware brute-force solver that the tests check the tables against. It uses only the
//! rules engine (`oware-engine`); search, the arena and the players build on it.
//!
//! # What a table holds
//! The table of `n` seeds has one byte for each of the `C(n + 11, 11)` boards with `n` seeds,
//! seen from the side to move (its row first; South and North to move share one table by
//! rotation). The byte is an interval `[lo, hi]` ([`Bounds`]) of **the number of the board's
//! `n` seeds that the side to move secures with best play of both sides**: seeds it captures
//! from now on plus those on its row at the end. Captured totals do not change it, so one
//! table serves every split of the captured seeds.
//!
//! Under our rules a repeated position ends the game with each side taking its own row, so
//! the value of a position depends on the positions played since the last capture: a side
//! that can steer back to an earlier position may end the game there. The tables therefore
//! store **bounds that hold for every history**: whatever was played since the last capture
//! (nothing, right after a capture or at the start of a game), the value lies in `[lo, hi]`.
//! Where `lo == hi` the value is **exact**: the same after every history, so best play never
//! depends on a repetition. Elsewhere the interval is **cycle-dependent**: both ends are real
//! values of some histories in most such positions (sampled histories reach them), and a
//! consumer must treat it as a bound, never as the value.
//!
//! Beside that interval each table stores the **entry value** `V(P)` of every board: the
//! number of board seeds the side to move secures with best play when `P` is reached with an
//! **empty history** (nothing played since the last capture: right after a capture, or at the
//! start of a game). It is one number, stored exactly where the build settled it and otherwise
//! as the tightest interval it proved ([`Table::entry`]); it always lies inside the all-history
//! interval, the empty history being one of all histories. Consumers read it wherever the
//! history is empty ([`Tables::entry`]) and the all-history interval, with the real history,
//! everywhere else. Tables of format version 3 have no entry values; for them
//! [`Tables::entry`] gives the all-history interval narrowed by one look ([`entry_bounds`]).
//!
//! The result follows: the mover's final total is its captured seeds plus the value, and it
//! wins with more than 24. That holds under the 25-seed ending too: a side that reaches 25
//! would keep them to any later end, so stopping at 25 changes the final count but never the
//! result. The interval gives the result whenever all its values give the same one
//! ([`Probe::outcome`]). The `max_plies` adjudication is not modelled: the tables describe
//! the game without a ply limit.
//!
//! # How it is computed
//! Let `r(X)` be the seeds on the row of the side to move in `X`. A move that captures leads
//! to a smaller table, solved first, and to a position **with an empty history**: its first
//! move cannot repeat, so its interval is the stored one narrowed by one look at its moves
//! ([`entry_bounds`]). A position without a legal move is worth `r(X)`. A quiet move from `P`
//! to `Q` (a cancelled grand slam included) either ends the game, if `Q` was seen since the
//! last capture, giving the mover `n − r(Q)`, or continues with the mover getting
//! `n − value(Q)`.
//!
//! `Q` can have been seen only if the game went from `Q` to `P` by quiet moves. In the table's
//! quiet-move graph (boards from the mover's side, so a position and its rotation with the
//! other side to move are one node) every quiet move of the game is an edge, so `Q` then
//! reaches `P` there and `P → Q` closes a cycle: `P` and `Q` lie in the same strongly
//! connected component. (The graph only over-approximates the game's: it may join positions
//! the game keeps apart, which only makes more moves "may repeat", never fewer. A move to the
//! rotation of `P` itself is a real cycle: the same house played back restores `P`.) So with
//! all moves' intervals `[l_m, h_m]`,
//!
//! ```text
//! lo(P) = max_m l_m,  l_m = n − max(r(Q), hi(Q))  if Q is in P's component (either case),
//! hi(P) = max_m h_m,  h_m = n − min(r(Q), lo(Q))
//!                     l_m = n − hi(Q), h_m = n − lo(Q)  otherwise (no repetition).
//! ```
//!
//! Any `lo`, `hi` with `lo ≤` the right side of the first line and `hi ≥` that of the second at
//! every position are sound: by induction on the positions not yet in the history (every game
//! ends), the value after any history lies between them. The solver computes the tightest such
//! pair: it finds the components by one depth-first search and solves each the moment it is
//! complete, after every component it reaches; a position alone in its component without a
//! move to itself is solved in one look (exactly, when its children are), and the positions of
//! a cycle start at the empty interval (`lo = n`, `hi = 0`) and are widened in place until
//! nothing changes ([`solve_table`]). From 2 seeds on most positions lie in one large
//! component, where the interval of most positions is wide because their value really does
//! depend on the history (tests reach both ends with sampled histories).
//!
//! # How entry values are computed
//! Leaving `P`'s component makes everything played before irrelevant: no position since the
//! last capture can be reached again, so a quiet move out of the component is worth its
//! child's entry value (after any history: this sharpens the all-history intervals too), and
//! so is a capture. Inside a cyclic component, once its all-history intervals are final, each
//! member's entry interval starts at its all-history interval and is narrowed to the least
//! (for `lo`) and the greatest (for `hi`) fixpoint of the max–min recursion in which a quiet
//! move inside the component continues the game at the child's entry interval:
//!
//! ```text
//! lo_e(P) = max(lo(P), max_m l_m),  l_m = n − hi_e(Q)   (quiet, Q in P's component)
//! hi_e(P) = min(hi(P), max_m h_m),  h_m = n − lo_e(Q)
//!           exits: l_m, h_m from the child's entry value (capture: seeds + the rest)
//! ```
//!
//! Both are sound after an empty history: a bound raised at step `k` is forced by moves to
//! positions whose bounds were justified at earlier steps, so, for each side to move, the
//! forced line never repeats a position before it leaves the component, captures or reaches a
//! position whose all-history bound (true after any history) carries the rest. In the tables
//! of up to [`SolveOptions::exact_up_to`] seeds the entries left open are then settled by an
//! exact search of (position, path since the entry) inside the component that keeps each
//! result with the positions it depended on and reuses it on every line that cannot change it
//! (`shared_proofs`), then by a search cut by the entry intervals widened by what a repetition
//! of the path could give, within [`SolveOptions::node_budget`] nodes each; what neither
//! settles keeps the narrowest interval proved. Every entry of the tables up to 20 seeds is
//! exact.
//!
//! [`Tables::analyse`] narrows the interval of a game's position with its actual history: a
//! move back to a position seen since the last capture is exact. [`Prover`] goes further: it
//! proves, within a node budget, what the side to move can force after the game's real
//! history, by a search of the real game that the intervals cut short.

mod bits;
mod bounds;
mod build;
mod component;
mod file;
mod index;
mod judge;
mod perfect;
mod probe;
mod prove;
mod prove_entries;
mod scc;
mod shared_proofs;
mod solve;
mod successors;
mod table;
mod unmove;

pub use bounds::{Bounds, CODES};
pub use build::{BuildError, BuildEvent, TableReport, build_tables, build_tables_with};
pub use file::{
    FORMAT_VERSION, FileError, HEADER_LEN, OLDEST_READ_VERSION, RULES, file_name, file_version,
    read_table, table_path, write_table,
};
pub use index::{Boards, MAX_TABLE_SEEDS, rank, rank_from, table_len, unrank};
pub use judge::{JUDGE_PROOF_NODES, Verdict, judge, narrow_moves, prove_moves};
pub use perfect::{keeping_move, perfect_move};
pub use probe::{Analysis, DEFAULT_DIR, MoveBounds, Outcome, Probe, Tables, repeat_rows};
pub use prove::{MoveProof, PROOF_DEPTH, Proof, Prover, kept_moves, proof_depth};
pub use solve::{
    DEFAULT_EXACT_UP_TO, DEFAULT_NODE_BUDGET, DEFAULT_PROOF_BUDGET, SolveEvent, SolveOptions,
    SolveStats, entry_bounds, solve_table, solve_table_with,
};
pub use successors::{Successor, movers_board, own_row, successors, table_position};
pub use table::{Table, TableError};

pub mod brute;
#[cfg(test)]
mod tests;
