//! The opening book: positions from the start of the game with the moves a strong player chose
//! there, built by [`Book::build`] from a long MCTS search (`oware book build`) and read from a
//! small text file (`alphabeta:...,book=FILE`; the format is in `docs/file-formats.md`).
//!
//! # The file
//! Lines starting with `#` (and anything after a `#`) are comments; blank lines are skipped.
//! The first other line is [`BOOK_FILE_HEADER`]; then one line per position:
//!
//! ```text
//! MOVES | MOVE SHARE [MOVE SHARE]...
//! ```
//!
//! `MOVES` are the moves from the start position that reach it (`-` for the start itself),
//! then each book move with its share of the analysing search's visits (a decimal in (0, 1]).
//! A position is keyed by what it is (board, captured seeds, side to move), so a book move is
//! also played where another move order transposes into it. A line whose moves do not replay,
//! a book move that is not legal there, a share out of range, a move or a position given
//! twice are errors naming the line ([`Book::load`] adds the file).

use crate::evaluator::{EvalError, Evaluator};
use crate::mcts::{MctsConfig, Search};
use oware_engine::{Game, Move, Position};
use rand::SeedableRng;
use rand::rngs::SmallRng;
use std::collections::HashMap;
use std::fmt::Write;
use std::path::Path;

/// The first line of every book file (after comments): the format and its version.
pub const BOOK_FILE_HEADER: &str = "oware-book 1";

/// Shares are kept in thousandths: the file's three decimals.
const SHARE_SCALE: u32 = 1000;

/// One move of a book position and its share of the analysing search's visits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BookMove {
    /// The move.
    pub mv: Move,
    /// Its share of the visits, in thousandths (1..=1000).
    pub share: u16,
}

/// A book position: the moves that first reached it and its book moves, largest share first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BookLine {
    /// The moves from the start position (empty for the start).
    pub path: Vec<Move>,
    /// The book moves, largest share first.
    pub moves: Vec<BookMove>,
}

/// An opening book: book moves by position (see the module docs).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Book {
    lines: Vec<BookLine>,
    /// Position key → index in `lines`.
    index: HashMap<u128, usize>,
}

/// How [`Book::build`] analyses: how deep, how long, which moves enter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BookBuild {
    /// Positions up to this many plies from the start are analysed (the book's moves are
    /// those of plies `0..depth`).
    pub depth: u32,
    /// Simulations of the analysing search per position.
    pub sims: u32,
    /// A move enters the book when its share of the root's visits is at least this (the most
    /// visited move always enters). In (0, 1].
    pub threshold: f64,
    /// Analyse at most this many positions (shallowest first).
    pub max_positions: usize,
    /// Seeds each position's search (mixed with the position), so a build is reproducible.
    pub seed: u64,
    /// Threads analysing positions of one ply at once (the result does not depend on it).
    pub threads: usize,
}

/// At most 40 characters of what a file holds, for an error message.
fn shorten(s: &str) -> String {
    let mut out: String = s.chars().take(40).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    out
}

/// A share as the file writes it: thousandths as a decimal (`0.412`, `1.000`).
fn share_text(share: u16) -> String {
    format!(
        "{}.{:03}",
        share as u32 / SHARE_SCALE,
        share as u32 % SHARE_SCALE
    )
}

/// Reads a share: a decimal in (0, 1] with at most three decimals, as thousandths.
fn parse_share(text: &str) -> Option<u16> {
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    if frac.len() > 3 || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    let int: u32 = if int.is_empty() { 0 } else { int.parse().ok()? };
    let mut f: u32 = if frac.is_empty() {
        0
    } else {
        frac.parse().ok()?
    };
    for _ in frac.len()..3 {
        f *= 10;
    }
    let v = int.checked_mul(SHARE_SCALE)?.checked_add(f)?;
    (1..=SHARE_SCALE).contains(&v).then_some(v as u16)
}

/// Moves as the file writes them: separated by spaces.
fn moves_text(moves: &[Move]) -> String {
    let words: Vec<String> = moves.iter().map(|m| m.to_string()).collect();
    words.join(" ")
}

/// Mixes a seed with a position key (a search's seed per position).
fn mix(seed: u64, key: u128) -> u64 {
    let mut h = seed ^ (key as u64) ^ ((key >> 64) as u64).rotate_left(17);
    h ^= h >> 33;
    h = h.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    h ^= h >> 33;
    h = h.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    h ^ (h >> 33)
}

impl Book {
    /// A book of the given lines; a position given twice, a path that does not replay or a
    /// move that is not legal there is an error (the line's number counted from 1).
    pub fn from_lines(lines: Vec<BookLine>) -> Result<Book, String> {
        let mut book = Book::default();
        for (i, line) in lines.into_iter().enumerate() {
            book.push(line)
                .map_err(|e| format!("position {}: {e}", i + 1))?;
        }
        Ok(book)
    }

    /// Adds a line after checking it (see [`Book::from_lines`]).
    fn push(&mut self, line: BookLine) -> Result<(), String> {
        let game = Game::replay_from(
            Position::start(),
            oware_engine::DEFAULT_MAX_PLIES,
            line.path.iter().copied(),
            |_, _, _| {},
        )
        .map_err(|e| format!("the moves do not replay: {e}"))?;
        if game.is_over() {
            return Err("the moves end the game: a book position has a move to play".to_string());
        }
        if line.moves.is_empty() {
            return Err("no book move".to_string());
        }
        let legal = game.legal_moves();
        for (i, m) in line.moves.iter().enumerate() {
            if !legal.contains(m.mv) {
                return Err(format!("book move {} is not legal there", m.mv));
            }
            if !(1..=SHARE_SCALE as u16).contains(&m.share) {
                return Err(format!("book move {}: share out of range", m.mv));
            }
            if line.moves[..i].iter().any(|o| o.mv == m.mv) {
                return Err(format!("book move {} is given twice", m.mv));
            }
        }
        let key = game.position().key();
        if let Some(&earlier) = self.index.get(&key) {
            let path = moves_text(&self.lines[earlier].path);
            return Err(format!(
                "the position is already in the book (reached by '{}')",
                if path.is_empty() {
                    "-".to_string()
                } else {
                    path
                }
            ));
        }
        let mut line = line;
        line.moves.sort_by_key(|m| std::cmp::Reverse(m.share));
        self.index.insert(key, self.lines.len());
        self.lines.push(line);
        Ok(())
    }

    /// Reads a book file's text (see the module docs). The error says what is wrong and on
    /// which line.
    pub fn parse(text: &str) -> Result<Book, String> {
        let mut lines = text
            .lines()
            .enumerate()
            .map(|(i, l)| (i + 1, l.split('#').next().unwrap_or("").trim()))
            .filter(|(_, l)| !l.is_empty());
        match lines.next() {
            Some((_, l)) if l.split_whitespace().eq(BOOK_FILE_HEADER.split_whitespace()) => {}
            Some((n, l)) => {
                return Err(format!(
                    "line {n}: '{}' is not an opening book's first line (expected '{BOOK_FILE_HEADER}')",
                    shorten(l)
                ));
            }
            None => {
                return Err(format!(
                    "empty: an opening book starts with '{BOOK_FILE_HEADER}'"
                ));
            }
        }
        let mut book = Book::default();
        for (n, line) in lines {
            let Some((path, moves)) = line.split_once('|') else {
                return Err(format!(
                    "line {n}: '{}' is not 'MOVES | MOVE SHARE ...'",
                    shorten(line)
                ));
            };
            let path = path.trim();
            let path: Vec<Move> =
                if path == "-" {
                    Vec::new()
                } else {
                    let mut out = Vec::new();
                    for t in path.split_whitespace() {
                        out.push(t.parse::<Move>().map_err(|e| {
                            format!("line {n}: '{}' is not a move: {e}", shorten(t))
                        })?);
                    }
                    if out.is_empty() {
                        return Err(format!(
                            "line {n}: no moves before '|' (write '-' for the start position)"
                        ));
                    }
                    out
                };
            let words: Vec<&str> = moves.split_whitespace().collect();
            if words.is_empty() || !words.len().is_multiple_of(2) {
                return Err(format!(
                    "line {n}: '{}' is not 'MOVE SHARE' pairs after '|'",
                    shorten(moves.trim())
                ));
            }
            let mut book_moves = Vec::new();
            for pair in words.chunks(2) {
                let mv = pair[0]
                    .parse::<Move>()
                    .map_err(|e| format!("line {n}: '{}' is not a move: {e}", shorten(pair[0])))?;
                let share = parse_share(pair[1]).ok_or_else(|| {
                    format!(
                        "line {n}: share '{}' of {mv} is not a decimal in (0, 1] with at most 3 decimals",
                        shorten(pair[1])
                    )
                })?;
                book_moves.push(BookMove { mv, share });
            }
            book.push(BookLine {
                path,
                moves: book_moves,
            })
            .map_err(|e| format!("line {n}: {e}"))?;
        }
        Ok(book)
    }

    /// Reads the book file at `path` (see [`Book::parse`]); the error names the file.
    pub fn load(path: &Path) -> Result<Book, String> {
        let text = super::data_file::read_text(path, "opening book", "an opening book")?;
        Book::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// The book as a file's text (which [`Book::parse`] reads back), after the given comment
    /// lines (each written with a `# ` in front).
    pub fn to_file_text(&self, comments: &[String]) -> String {
        let mut s = super::data_file::comment_lines(comments);
        s.push_str(BOOK_FILE_HEADER);
        s.push('\n');
        for line in &self.lines {
            let path = moves_text(&line.path);
            s.push_str(if path.is_empty() { "-" } else { &path });
            s.push_str(" |");
            for m in &line.moves {
                let _ = write!(s, " {} {}", m.mv, share_text(m.share));
            }
            s.push('\n');
        }
        s
    }

    /// The positions in the book.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// Whether the book has no position.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// The positions, in file order.
    pub fn lines(&self) -> &[BookLine] {
        &self.lines
    }

    /// The book moves of `pos`, largest share first, if it is in the book.
    pub fn probe(&self, pos: &Position) -> Option<&[BookMove]> {
        self.index
            .get(&pos.key())
            .map(|&i| self.lines[i].moves.as_slice())
    }

    /// The book move to play in `game`'s position, drawn by share with the random number
    /// `draw` (any `u64`; the same draw gives the same move); `None` when the position is not
    /// in the book or the game is over.
    pub fn choose(&self, game: &Game, draw: u64) -> Option<Move> {
        if game.is_over() {
            return None;
        }
        let legal = game.legal_moves();
        let moves = self.probe(game.position())?;
        let total: u64 = moves
            .iter()
            .filter(|m| legal.contains(m.mv))
            .map(|m| m.share as u64)
            .sum();
        if total == 0 {
            return None;
        }
        let mut pick = draw % total;
        for m in moves.iter().filter(|m| legal.contains(m.mv)) {
            if pick < m.share as u64 {
                return Some(m.mv);
            }
            pick -= m.share as u64;
        }
        None
    }

    /// Builds a book by analysing positions from the start with `config`'s MCTS guided by
    /// `evaluator` (no exploration noise), `options.sims` simulations each: ply by ply, every
    /// position reached by book moves (each once, however reached) up to `options.depth` plies
    /// and `options.max_positions` positions. The moves with a visit share of at least
    /// `options.threshold` (and always the most visited) are its book moves. Every search is
    /// seeded from `options.seed` and its position, so the same evaluator gives the same book
    /// whatever `options.threads`.
    ///
    /// # Errors
    /// The configuration's error, or the evaluator's.
    pub fn build<E: Evaluator + ?Sized>(
        evaluator: &E,
        config: &MctsConfig,
        options: &BookBuild,
        on_position: &(dyn Fn(usize) + Sync),
    ) -> Result<Book, String> {
        let mut config = config.clone();
        config.sims = options.sims.max(1);
        config.dirichlet_frac = 0.0;
        config.temperature = 0.0;
        config.temperature_plies = 0;
        config
            .validate()
            .map_err(|e| format!("the analysing search: {e}"))?;
        let mut book = Book::default();
        let mut seen: std::collections::HashSet<u128> = std::collections::HashSet::new();
        let mut level: Vec<Game> = vec![Game::new()];
        seen.insert(Position::start().key());
        let done = std::sync::atomic::AtomicUsize::new(0);
        for _ply in 0..options.depth {
            let room = options.max_positions.saturating_sub(book.len());
            level.truncate(room);
            if level.is_empty() {
                break;
            }
            let threads = options.threads.clamp(1, level.len());
            let analyse = |game: &Game| -> Result<Vec<BookMove>, EvalError> {
                let mut search =
                    Search::new(config.clone()).map_err(|e| EvalError::Failed(e.to_string()))?;
                search.reset(game);
                let mut rng = SmallRng::seed_from_u64(mix(options.seed, game.position().key()));
                search.run(evaluator, config.sims, false, &mut rng)?;
                let visits = search.root_visits();
                done.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                on_position(done.load(std::sync::atomic::Ordering::Relaxed));
                Ok(shares(game, &visits, options.threshold))
            };
            let results: Vec<Result<Vec<BookMove>, EvalError>> = if threads == 1 {
                level.iter().map(analyse).collect()
            } else {
                let mut slots: Vec<Option<Result<Vec<BookMove>, EvalError>>> =
                    (0..level.len()).map(|_| None).collect();
                std::thread::scope(|scope| {
                    let handles: Vec<_> = (0..threads)
                        .map(|t| {
                            let level = &level;
                            let analyse = &analyse;
                            scope.spawn(move || {
                                level
                                    .iter()
                                    .enumerate()
                                    .skip(t)
                                    .step_by(threads)
                                    .map(|(i, g)| (i, analyse(g)))
                                    .collect::<Vec<_>>()
                            })
                        })
                        .collect();
                    for h in handles {
                        // A panicked thread leaves its slots empty: an error below.
                        if let Ok(part) = h.join() {
                            for (i, r) in part {
                                slots[i] = Some(r);
                            }
                        }
                    }
                });
                slots
                    .into_iter()
                    .map(|s| {
                        s.unwrap_or_else(|| {
                            Err(EvalError::Failed(
                                "an analysing thread panicked".to_string(),
                            ))
                        })
                    })
                    .collect()
            };
            let mut next = Vec::new();
            for (game, moves) in level.iter().zip(results) {
                let moves = moves.map_err(|e| format!("analysing {}: {e}", describe(game)))?;
                for m in &moves {
                    let mut child = game.clone();
                    child.play_unchecked(m.mv);
                    if !child.is_over() && seen.insert(child.position().key()) {
                        next.push(child);
                    }
                }
                book.push(BookLine {
                    path: game.moves().to_vec(),
                    moves,
                })?;
            }
            level = next;
        }
        Ok(book)
    }
}

/// The moves after `game` for an error message (`-` for the start).
fn describe(game: &Game) -> String {
    let t = moves_text(game.moves());
    if t.is_empty() {
        "the start position".to_string()
    } else {
        format!("the position after '{t}'")
    }
}

/// The book moves of a position from its root visits (by policy index): each legal move with a
/// share of at least `threshold`, and the most visited always; shares in thousandths (at
/// least 1).
fn shares(game: &Game, visits: &[u32; 6], threshold: f64) -> Vec<BookMove> {
    let side = game.to_move();
    let legal = game.legal_moves();
    let total: u64 = visits.iter().map(|&v| v as u64).sum();
    let mut moves: Vec<(Move, u32)> = (0..6)
        .map(|i| (Move::from_relative(side, i), visits[i]))
        .filter(|(m, _)| legal.contains(*m))
        .collect();
    // Most visited first; house order breaks ties.
    moves.sort_by_key(|&(_, v)| std::cmp::Reverse(v));
    let mut out = Vec::new();
    for (i, &(mv, v)) in moves.iter().enumerate() {
        let share = if total == 0 {
            0.0
        } else {
            v as f64 / total as f64
        };
        if i == 0 || share >= threshold {
            let thousandths = (share * SHARE_SCALE as f64)
                .round()
                .clamp(1.0, SHARE_SCALE as f64);
            out.push(BookMove {
                mv,
                share: thousandths as u16,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::UniformEvaluator;

    fn mv(s: &str) -> Move {
        s.parse().expect("a move")
    }

    fn sample() -> Book {
        Book::from_lines(vec![
            BookLine {
                path: vec![],
                moves: vec![
                    BookMove {
                        mv: mv("f"),
                        share: 412,
                    },
                    BookMove {
                        mv: mv("e"),
                        share: 305,
                    },
                ],
            },
            BookLine {
                path: vec![mv("f")],
                moves: vec![BookMove {
                    mv: mv("A"),
                    share: 1000,
                }],
            },
        ])
        .expect("a book")
    }

    #[test]
    fn a_book_round_trips_through_its_text() {
        let book = sample();
        let text = book.to_file_text(&["built by a test".to_string()]);
        assert!(
            text.starts_with("# built by a test\noware-book 1\n- | f 0.412 e 0.305\nf | A 1.000\n"),
            "{text}"
        );
        assert_eq!(Book::parse(&text), Ok(book.clone()));
    }

    #[test]
    fn damaged_books_are_errors_naming_the_line() {
        for (text, why) in [
            ("", "empty"),
            (
                "oware-eval 1\n",
                "line 1: 'oware-eval 1' is not an opening book",
            ),
            ("oware-book 2\n", "line 1"),
            (
                "# c\noware-book 1\nf A\n",
                "line 3: 'f A' is not 'MOVES | MOVE SHARE",
            ),
            (
                "oware-book 1\n- | f\n",
                "line 2: 'f' is not 'MOVE SHARE' pairs",
            ),
            ("oware-book 1\n- |\n", "line 2"),
            ("oware-book 1\n- | f 1.5\n", "line 2: share '1.5' of f"),
            ("oware-book 1\n- | f 0\n", "share '0'"),
            ("oware-book 1\n- | f 0.1234\n", "at most 3 decimals"),
            ("oware-book 1\n- | f x\n", "share 'x'"),
            ("oware-book 1\n- | f -0.5\n", "share '-0.5'"),
            (
                "oware-book 1\n- | A 0.5\n",
                "line 2: book move A is not legal there",
            ),
            ("oware-book 1\n- | z 0.5\n", "line 2: 'z' is not a move"),
            (
                "oware-book 1\n- | f 0.5 f 0.2\n",
                "book move f is given twice",
            ),
            (
                "oware-book 1\nf f | A 0.5\n",
                "line 2: the moves do not replay",
            ),
            ("oware-book 1\n | A 0.5\n", "line 2: no moves before '|'"),
            (
                "oware-book 1\n- | f 0.5\n\n# x\n- | e 0.5\n",
                "line 5: the position is already in the book (reached by '-')",
            ),
        ] {
            match Book::parse(text) {
                Ok(b) => panic!("{text:?} parsed as {b:?}"),
                Err(e) => assert!(e.contains(why), "{text:?}: {e}"),
            }
        }
        // The file is named, also for a file that is not text.
        let dir = std::env::temp_dir().join(format!("oware-book-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let bad = dir.join("bad-book.txt");
        std::fs::write(&bad, "oware-book 1\n- | f 2\n").expect("write");
        let e = Book::load(&bad).expect_err("damaged");
        assert!(e.contains("bad-book.txt: line 2"), "{e}");
        std::fs::write(&bad, [0xff, 0xfe, 0x00]).expect("write");
        let e = Book::load(&bad).expect_err("binary");
        assert!(e.contains("bad-book.txt: not an opening book"), "{e}");
        let e = Book::load(&dir.join("missing.txt")).expect_err("missing");
        assert!(e.contains("missing.txt"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_book_move_is_drawn_by_share_and_transpositions_find_it() {
        let book = sample();
        let game = Game::new();
        let mut counts = [0u32; 2];
        for draw in 0..717u64 {
            match book.choose(&game, draw) {
                Some(m) if m == mv("f") => counts[0] += 1,
                Some(m) if m == mv("e") => counts[1] += 1,
                other => panic!("{other:?}"),
            }
        }
        // Shares 412 and 305 of 717.
        assert_eq!(counts, [412, 305]);
        let after_f = Game::replay(["f"]).expect("replays");
        assert_eq!(book.choose(&after_f, 99), Some(mv("A")));
        let out = Game::replay(["a"]).expect("replays");
        assert_eq!(book.choose(&out, 0), None);
    }

    #[test]
    fn a_build_is_reproducible_and_follows_its_threshold() {
        let config = MctsConfig {
            leaves_per_tree: 1,
            ..MctsConfig::default()
        };
        let options = BookBuild {
            depth: 3,
            sims: 64,
            threshold: 0.3,
            max_positions: 20,
            seed: 7,
            threads: 1,
        };
        let a = Book::build(&UniformEvaluator, &config, &options, &|_| {}).expect("built");
        let b = Book::build(
            &UniformEvaluator,
            &config,
            &BookBuild {
                threads: 2,
                ..options
            },
            &|_| {},
        )
        .expect("built");
        assert_eq!(a, b);
        assert!(a.len() > 1 && a.len() <= 20);
        for line in a.lines() {
            assert!(line.path.len() < 3);
            // Every move but the most visited has at least the threshold's share.
            for m in &line.moves[1..] {
                assert!(m.share >= 300, "{line:?}");
            }
        }
        let capped = Book::build(
            &UniformEvaluator,
            &config,
            &BookBuild {
                max_positions: 2,
                ..options
            },
            &|_| {},
        )
        .expect("built");
        assert_eq!(capped.len(), 2);
    }
}
