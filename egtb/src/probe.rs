//! Looking positions up: the tables of a directory in memory, what an interval says of the
//! result, and the interval of every move of a game given its history.

use super::bounds::Bounds;
use super::file::{FileError, read_table, table_path};
use super::index::{MAX_TABLE_SEEDS, rank_from};
use super::solve::entry_of;
use super::table::Table;
use oware_engine::Game;
use oware_engine::Move;
use oware_engine::Position;
use oware_engine::Side;
use std::path::{Path, PathBuf};

/// The result of a game for one side.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Outcome {
    /// Fewer seeds than the opponent at the end.
    Loss,
    /// 24–24.
    Draw,
    /// More seeds.
    Win,
}

impl Outcome {
    /// The outcome of a side that ends with `total` of the 48 seeds. The 25-seed ending does
    /// not change it: a side that reaches 25 would keep them to any later end.
    pub fn of_total(total: u32) -> Outcome {
        match total.cmp(&24) {
            std::cmp::Ordering::Greater => Outcome::Win,
            std::cmp::Ordering::Equal => Outcome::Draw,
            std::cmp::Ordering::Less => Outcome::Loss,
        }
    }

    /// 1 for a win, 0 for a draw, −1 for a loss.
    pub fn value(self) -> f32 {
        match self {
            Outcome::Win => 1.0,
            Outcome::Draw => 0.0,
            Outcome::Loss => -1.0,
        }
    }

    /// `win`, `draw` or `loss`.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Win => "win",
            Outcome::Draw => "draw",
            Outcome::Loss => "loss",
        }
    }
}

/// What the tables say of one live position: the interval of board seeds its mover secures,
/// with the captured totals that turn it into final seeds and a result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Probe {
    /// Board seeds the side to move secures (an interval over all histories, or over the
    /// game's own history for [`Tables::analyse`]).
    pub bounds: Bounds,
    /// Seeds on the board.
    pub seeds: u8,
    /// Seeds the side to move has captured.
    pub captured_own: u8,
    /// Seeds the opponent has captured.
    pub captured_other: u8,
}

impl Probe {
    /// The probe of `pos` whose interval is `bounds`.
    #[inline]
    fn of(pos: &Position, bounds: Bounds) -> Probe {
        let me = pos.to_move().index();
        let cap = pos.captured();
        Probe {
            bounds,
            seeds: pos.board().iter().sum(),
            captured_own: cap[me],
            captured_other: cap[1 - me],
        }
    }

    /// The mover's final seeds, lowest and highest.
    pub fn final_seeds(&self) -> (u32, u32) {
        let c = self.captured_own as u32;
        (c + self.bounds.lo as u32, c + self.bounds.hi as u32)
    }

    /// The mover's final margin (own minus the opponent's), lowest and highest.
    pub fn margins(&self) -> (i32, i32) {
        let (lo, hi) = self.final_seeds();
        (2 * lo as i32 - 48, 2 * hi as i32 - 48)
    }

    /// The worst and best result for the side to move.
    pub fn outcomes(&self) -> (Outcome, Outcome) {
        let (lo, hi) = self.final_seeds();
        (Outcome::of_total(lo), Outcome::of_total(hi))
    }

    /// The result, when every value in the interval gives the same one.
    pub fn outcome(&self) -> Option<Outcome> {
        let (a, b) = self.outcomes();
        (a == b).then_some(a)
    }
}

/// The interval of one legal move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoveBounds {
    /// The move.
    pub mv: Move,
    /// The board seeds (of the position before the move) its mover secures with it: seeds it
    /// captures plus what it keeps of the rest.
    pub bounds: Bounds,
    /// Whether the move ends the game by repeating a position of the game's history.
    pub repeats: bool,
}

/// A position of a game looked up move by move, with the game's history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Analysis {
    /// The position, by the best of its moves (at least as tight as the stored interval).
    pub probe: Probe,
    /// Every legal move, in house order.
    pub moves: Vec<MoveBounds>,
}

impl Analysis {
    /// The most board seeds some move is sure to secure (the highest low end), or `None`
    /// when the position has no legal move.
    pub fn secured(&self) -> Option<u8> {
        self.moves.iter().map(|m| m.bounds.lo).max()
    }

    /// The most board seeds some move may secure (the highest high end), or `None` when the
    /// position has no legal move.
    pub fn attainable(&self) -> Option<u8> {
        self.moves.iter().map(|m| m.bounds.hi).max()
    }

    /// The moves sure to secure [`Analysis::secured`] seeds: each keeps at least the best
    /// result the position is sure of, whatever the others turn out to be worth.
    pub fn securing_moves(&self) -> Vec<Move> {
        let top = self.secured();
        self.moves
            .iter()
            .filter(|m| Some(m.bounds.lo) == top)
            .map(|m| m.mv)
            .collect()
    }

    /// The moves that may be best: no other move is sure to do better.
    pub fn best_moves(&self) -> Vec<Move> {
        let top = self.secured().unwrap_or(0);
        self.moves
            .iter()
            .filter(|m| m.bounds.hi >= top)
            .map(|m| m.mv)
            .collect()
    }

    /// The moves sure to be best: each does at least as well as any other could.
    pub fn optimal_moves(&self) -> Vec<Move> {
        let top = self.attainable().unwrap_or(0);
        self.moves
            .iter()
            .filter(|m| m.bounds.lo >= top)
            .map(|m| m.mv)
            .collect()
    }
}

/// The least and the most seeds `side` holds on its row over the positions of `keys`
/// ([`Position::key`]), `None` when there are none: what `side` takes if the game ends by
/// repeating one of them ([`Tables::bounds_after`]).
#[inline]
pub fn repeat_rows(keys: &[u128], side: Side) -> Option<(u8, u8)> {
    keys.iter().fold(None, |acc, &k| {
        let r = Position::key_row_seeds(k, side);
        Some(acc.map_or((r, r), |(a, b): (u8, u8)| (a.min(r), b.max(r))))
    })
}

/// The tables of 0, 1, …, `max` seeds, loaded from one directory.
#[derive(Clone, Debug)]
pub struct Tables {
    dir: PathBuf,
    tables: Vec<Table>,
}

/// The directory tables are read from and written to unless another is named.
pub const DEFAULT_DIR: &str = "egtb";

impl Tables {
    /// Loads every table of `dir` from 0 seeds up to the largest present. A file missing in
    /// between, a damaged, truncated or mismatched file, or a directory without tables is an
    /// error naming the file.
    pub fn load(dir: &Path) -> Result<Tables, FileError> {
        let largest = (0..=MAX_TABLE_SEEDS)
            .rev()
            .find(|&n| table_path(dir, n).exists())
            .ok_or_else(|| FileError::Missing {
                path: table_path(dir, 0),
            })?;
        Tables::load_up_to(dir, largest)
    }

    /// Loads the tables of 0..=`max` seeds from `dir`; each must be there.
    pub fn load_up_to(dir: &Path, max: usize) -> Result<Tables, FileError> {
        let tables = (0..=max.min(MAX_TABLE_SEEDS))
            .map(|n| read_table(dir, n))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Tables {
            dir: dir.to_path_buf(),
            tables,
        })
    }

    /// Tables already in memory (0..len seeds, in order), e.g. just built.
    pub fn from_tables(dir: &Path, tables: Vec<Table>) -> Tables {
        Tables {
            dir: dir.to_path_buf(),
            tables,
        }
    }

    /// The directory the tables came from.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The most seeds on the board that the tables cover.
    pub fn max_seeds(&self) -> usize {
        self.tables.len().saturating_sub(1)
    }

    /// The table of `n` seeds, if loaded.
    pub fn table(&self, n: usize) -> Option<&Table> {
        self.tables.get(n)
    }

    /// The stored interval of `pos` (valid whatever the history), when its board is covered.
    /// Finished positions (25 captured) are looked up like any other board.
    #[inline]
    pub fn bounds(&self, pos: &Position) -> Option<Bounds> {
        let n: usize = pos.board().iter().map(|&x| x as usize).sum();
        let t = self.tables.get(n)?;
        Some(t.at(rank_from(pos.board(), pos.to_move().row_start())))
    }

    /// The entry interval of `pos`: what its mover secures when nothing was played since the
    /// last capture (right after a capture, or at the start of a game). Exact where the table
    /// knows the entry value ([`Table::entry`]); a table without entry values (format version
    /// 3) gives its stored interval narrowed by one look at the moves
    /// ([`super::entry_bounds`]).
    #[inline]
    pub fn entry(&self, pos: &Position) -> Option<Bounds> {
        let n: usize = pos.board().iter().map(|&x| x as usize).sum();
        self.tables.get(n)?;
        let index = rank_from(pos.board(), pos.to_move().row_start());
        Some(entry_of(&self.tables, n as u8, index))
    }

    /// The interval of `pos` after the history since the last capture, which `repeats`
    /// describes: the least and the most seeds `pos`'s mover holds on its row in the positions
    /// played since that capture before `pos` ([`repeat_rows`]), `None` when there are none
    /// (then it is the entry interval, [`Tables::entry`]).
    ///
    /// The mover can play the strategy that secures the entry interval's `lo` after an empty
    /// history: the game goes as it would there until a move repeats a position played before
    /// `pos`, which ends it with each side taking its row. So after this history the mover
    /// secures at least the smaller of `lo` and the least row, and likewise the opponent holds
    /// it to at most the larger of `hi` and the most. That interval is narrowed by the stored
    /// one, which holds after every history.
    #[inline]
    pub fn bounds_after(&self, pos: &Position, repeats: Option<(u8, u8)>) -> Option<Bounds> {
        match repeats {
            None => self.entry(pos),
            Some(rows) => self.narrow_after(pos, self.bounds(pos)?, rows),
        }
    }

    /// [`Tables::bounds_after`] after a history that is not empty, from `pos`'s `stored`
    /// interval ([`Tables::bounds`]) already read, and the rows `(least, most)`.
    #[inline]
    pub fn narrow_after(
        &self,
        pos: &Position,
        stored: Bounds,
        (least, most): (u8, u8),
    ) -> Option<Bounds> {
        if stored.is_exact() {
            return Some(stored);
        }
        let entry = self.entry(pos)?;
        Some(Bounds {
            lo: entry.lo.min(least).max(stored.lo),
            hi: entry.hi.max(most).min(stored.hi),
        })
    }

    /// [`Tables::bounds_after`] with the captured totals.
    #[inline]
    pub fn probe_after(&self, pos: &Position, repeats: Option<(u8, u8)>) -> Option<Probe> {
        Some(Probe::of(pos, self.bounds_after(pos, repeats)?))
    }

    /// Whether every loaded table holds entry values (format version 4 on).
    pub fn has_entries(&self) -> bool {
        self.tables.iter().all(Table::has_entries)
    }

    /// [`Tables::bounds`] with the captured totals.
    #[inline]
    pub fn probe(&self, pos: &Position) -> Option<Probe> {
        self.probe_with(pos, false)
    }

    /// [`Tables::probe`], with [`Tables::entry`]'s narrower interval when `fresh` (nothing
    /// played since the last capture).
    #[inline]
    pub fn probe_with(&self, pos: &Position, fresh: bool) -> Option<Probe> {
        let bounds = if fresh {
            self.entry(pos)?
        } else {
            self.bounds(pos)?
        };
        Some(Probe::of(pos, bounds))
    }

    /// Every legal move of the game's position with its interval, using the game's history:
    /// a quiet move back to a position seen since the last capture ends the game (each side
    /// its row) and is exact, a capture leads to a position with an empty history, whose
    /// first move cannot repeat (its entry interval holds), and any other quiet move takes
    /// its interval after the history ([`Tables::bounds_after`]). The position's interval is
    /// the best of its moves', narrowed by its own interval after the history. `None` when the game is over or the board is not covered.
    pub fn analyse(&self, game: &Game) -> Option<Analysis> {
        if game.is_over() {
            return None;
        }
        let pos = *game.position();
        let mut probe = self.probe(&pos)?;
        let n = probe.seeds;
        let seen = game.seen_since_capture();
        let mut moves = Vec::with_capacity(6);
        for mv in &game.legal_moves() {
            let mut child = pos;
            let effect = child.play_unchecked(mv);
            let child_n = n - effect.captured;
            let (bounds, repeats) = if effect.captured == 0 && seen.contains(&child.key()) {
                // The mover's row after the move is what it keeps.
                (Bounds::exact(child.row_seeds(pos.to_move())), true)
            } else {
                let stored = if effect.captured > 0 {
                    // Right after a capture the history is empty: the child's first move
                    // cannot repeat.
                    self.entry(&child)?
                } else {
                    // Its history is this one, the position itself included.
                    self.bounds_after(&child, repeat_rows(seen, child.to_move()))?
                };
                let b = stored.flip(child_n);
                (
                    Bounds {
                        lo: b.lo + effect.captured,
                        hi: b.hi + effect.captured,
                    },
                    false,
                )
            };
            moves.push(MoveBounds {
                mv,
                bounds,
                repeats,
            });
        }
        // The moves' best and the interval after this history both hold (the entry interval
        // right after a capture or at the start).
        let before = &seen[..seen.len().saturating_sub(1)];
        let stored = self.bounds_after(&pos, repeat_rows(before, pos.to_move()))?;
        probe.bounds = Bounds {
            lo: moves
                .iter()
                .map(|m| m.bounds.lo)
                .max()
                .unwrap_or(0)
                .max(stored.lo),
            hi: moves
                .iter()
                .map(|m| m.bounds.hi)
                .max()
                .unwrap_or(0)
                .min(stored.hi),
        };
        Some(Analysis { probe, moves })
    }
}
