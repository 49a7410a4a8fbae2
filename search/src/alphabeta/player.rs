//! The alpha-beta player: a [`Searcher`] behind the [`Player`] trait.

use super::book::Book;
use super::eval::EvalWeights;
use super::score::{format_score, plies_to_end, score_to_value};
use super::search::{AlphaBetaResult, SearchBudget, Searcher, TimeUse};
use crate::player::{Budget, Choice, Player, PlayerError, Score, SearchInfo};
use crate::table_root::table_root_moves;
use oware_egtb::{Prover, Tables};
use oware_engine::Game;
use oware_engine::Move;
use rand::SeedableRng;
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use std::fmt::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The settings of an alpha-beta player beyond its budget (the keys of
/// `alphabeta:...` besides `depth=`, `ms=` and `egtb=`; `docs/alphabeta.md`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AlphaBetaOptions {
    /// The transposition table's size in MiB (`tt_mb=`).
    pub tt_mb: usize,
    /// The evaluation's weights (`eval=`).
    pub weights: EvalWeights,
    /// How a timed search spends its time (`tm=`).
    pub time_use: TimeUse,
    /// Aspiration windows around the previous iteration's score (`asp=`).
    pub aspiration: bool,
    /// Plies of captures the quiescence search plays below the horizon (`qdepth=`; 0: off).
    pub qdepth: u32,
    /// The opening book whose moves are played where the position is in it (`book=`).
    pub book: Option<Arc<Book>>,
}

impl Default for AlphaBetaOptions {
    fn default() -> Self {
        AlphaBetaOptions {
            tt_mb: super::DEFAULT_TT_MB,
            weights: EvalWeights::DEFAULT,
            time_use: TimeUse::default(),
            aspiration: super::DEFAULT_ASPIRATION,
            qdepth: super::DEFAULT_QDEPTH,
            book: None,
        }
    }
}

/// Plays the move alpha-beta finds, searching to a fixed depth or for a fixed time per move.
///
/// Between equally good moves it chooses by a shuffle seeded from its seed and the position, so
/// it is deterministic for a given seed (with a depth limit; a time limit depends on the
/// machine's speed) yet varies between seeds.
#[derive(Debug)]
pub struct AlphaBetaPlayer {
    searcher: Searcher,
    depth: Option<u32>,
    millis: Option<u64>,
    seed: u64,
    last: Option<AlphaBetaResult>,
    /// With tables: proves the results of the root's moves with the game's real history
    /// before each search in a table position; its answers after captures are kept.
    prover: Option<Prover>,
    /// The name [`Player::name`] gives, when set (the spec it was built from).
    name: Option<String>,
    /// Book moves are played without a search where the position is in it.
    book: Option<Arc<Book>>,
}

impl AlphaBetaPlayer {
    /// A player searching to `depth` plies and/or for `millis` milliseconds per move (with
    /// neither, to [`super::DEFAULT_DEPTH`]), with the default table size.
    pub fn new(depth: Option<u32>, millis: Option<u64>, seed: u64) -> AlphaBetaPlayer {
        AlphaBetaPlayer::with_table(depth, millis, seed, super::DEFAULT_TT_MB)
    }

    /// As [`AlphaBetaPlayer::new`], with a transposition table of about `tt_megabytes` MiB.
    pub fn with_table(
        depth: Option<u32>,
        millis: Option<u64>,
        seed: u64,
        tt_megabytes: usize,
    ) -> AlphaBetaPlayer {
        AlphaBetaPlayer {
            searcher: Searcher::new(tt_megabytes),
            depth,
            millis,
            seed,
            last: None,
            prover: None,
            name: None,
            book: None,
        }
    }

    /// A player searching to `depth` plies and/or for `millis` milliseconds per move, with
    /// the given options.
    pub fn with_options(
        depth: Option<u32>,
        millis: Option<u64>,
        seed: u64,
        options: &AlphaBetaOptions,
    ) -> AlphaBetaPlayer {
        let mut player = AlphaBetaPlayer::with_table(depth, millis, seed, options.tt_mb);
        player.searcher.set_weights(options.weights);
        player.searcher.set_time_use(options.time_use);
        player.searcher.set_aspiration(options.aspiration);
        player.searcher.set_quiescence(options.qdepth);
        player.book = options.book.clone();
        player
    }

    /// The book move this player plays in `game`, if its book has the position: drawn by the
    /// moves' shares with a number seeded from the player's seed, the position and the ply
    /// (so a seed gives the same games, and different seeds vary).
    pub fn book_move(&self, game: &Game) -> Option<Move> {
        let book = self.book.as_ref()?;
        let draw = self.seed.rotate_left(7)
            ^ (game.position().key() as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93)
            ^ ((game.position().key() >> 64) as u64)
            ^ u64::from(game.ply()).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let mut rng = SmallRng::seed_from_u64(draw);
        book.choose(game, rand::Rng::random(&mut rng))
    }

    /// Names the player (e.g. by the spec it was built from) instead of its budget.
    pub fn with_name(mut self, name: String) -> AlphaBetaPlayer {
        self.name = Some(name);
        self
    }

    /// Probes the endgame tables at every node they cover (`alphabeta:...,egtb=DIR`).
    pub fn with_tables(mut self, tables: Arc<Tables>) -> AlphaBetaPlayer {
        self.prover = Some(Prover::new(tables.clone()));
        self.searcher.set_tables(Some(tables));
        self
    }

    /// The searcher, e.g. to change its evaluation weights.
    pub fn searcher_mut(&mut self) -> &mut Searcher {
        &mut self.searcher
    }

    /// The full result of the last search (depth, nodes, score, principal variation).
    pub fn last_result(&self) -> Option<&AlphaBetaResult> {
        self.last.as_ref()
    }

    /// Searches `game` with the given limits (those set override the player's own) and
    /// returns the full result.
    pub fn search(&mut self, game: &Game, limits: Budget) -> AlphaBetaResult {
        self.search_reporting(game, limits, &mut |_| {})
    }

    /// As [`AlphaBetaPlayer::search`], calling `on_iteration` after each completed iteration.
    pub fn search_reporting(
        &mut self,
        game: &Game,
        limits: Budget,
        on_iteration: &mut dyn FnMut(&AlphaBetaResult),
    ) -> AlphaBetaResult {
        let (depth, millis) = if limits.depth.is_some() || limits.millis.is_some() {
            (limits.depth, limits.millis)
        } else {
            (self.depth, self.millis)
        };
        let mut order: Vec<Move> = game.legal_moves().iter().collect();
        let mix = self.seed
            ^ (game.position().key() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ (game.ply() as u64).rotate_left(32);
        order.shuffle(&mut SmallRng::seed_from_u64(mix));
        let started = Instant::now();
        let kept = self.prover.as_mut().and_then(|p| {
            // A timed search gives the proofs at most half its time.
            let deadline = millis.map(|ms| started + Duration::from_millis(ms / 2));
            table_root_moves(p, game, deadline)
        });
        let millis = millis.map(|ms| {
            let spent = started.elapsed().as_millis() as u64;
            ms.saturating_sub(spent).max(1)
        });
        self.searcher.search_among(
            game,
            SearchBudget {
                depth,
                millis,
                nodes: None,
            },
            &order,
            kept.as_deref(),
            on_iteration,
        )
    }
}

/// A one-line summary of a search: `depth D score S nodes N time T ms nps X pv m1 m2 ...`.
pub fn search_info(r: &AlphaBetaResult) -> String {
    let mut s = format!(
        "depth {} score {} nodes {} time {} ms nps {:.0} pv",
        r.depth,
        format_score(r.score),
        r.nodes,
        r.elapsed.as_millis(),
        r.nodes_per_second()
    );
    for m in &r.pv {
        let _ = write!(s, " {m}");
    }
    s
}

/// A completed iteration as an `info` report: the score in hundredths of a seed, or
/// `mate ±P` when proven.
pub fn iteration_info(r: &AlphaBetaResult) -> SearchInfo {
    let score = match plies_to_end(r.score) {
        Some(p) if r.score > 0 => Score::Mate(p as i32),
        Some(p) => Score::Mate(-(p as i32)),
        None => Score::Cp(r.score),
    };
    SearchInfo {
        depth: Some(r.depth),
        sims: None,
        score,
        nodes: r.nodes,
        millis: r.elapsed.as_millis().try_into().unwrap_or(u64::MAX),
        pv: r.pv.clone(),
    }
}

impl Player for AlphaBetaPlayer {
    fn name(&self) -> String {
        if let Some(name) = &self.name {
            return name.clone();
        }
        let base = match (self.depth, self.millis) {
            (Some(d), Some(ms)) => format!("alphabeta:depth={d},ms={ms}"),
            (Some(d), None) => format!("alphabeta:depth={d}"),
            (None, Some(ms)) => format!("alphabeta:ms={ms}"),
            (None, None) => format!("alphabeta:depth={}", super::DEFAULT_DEPTH),
        };
        match self.searcher.tables() {
            Some(t) => format!("{base},egtb={}", t.dir().display()),
            None => base,
        }
    }

    fn choose(&mut self, game: &Game, limits: Budget) -> Result<Choice, PlayerError> {
        self.choose_reporting(game, limits, &mut |_| {})
    }

    /// Reports each completed iteration of the deepening.
    fn choose_reporting(
        &mut self,
        game: &Game,
        limits: Budget,
        progress: &mut dyn FnMut(&SearchInfo),
    ) -> Result<Choice, PlayerError> {
        if let Some(mv) = self.book_move(game) {
            self.last = None;
            return Ok(Choice {
                mv,
                value: None,
                info: format!("book {mv}"),
            });
        }
        let r = self.search_reporting(game, limits, &mut |r| progress(&iteration_info(r)));
        let mv = r.best.ok_or(PlayerError::GameOver)?;
        let choice = Choice {
            mv,
            value: Some(score_to_value(r.score)),
            info: search_info(&r),
        };
        self.last = Some(r);
        Ok(choice)
    }

    fn new_game(&mut self) {
        self.searcher.clear();
        self.last = None;
    }

    fn set_stop(&mut self, stop: Option<Arc<std::sync::atomic::AtomicBool>>) {
        self.searcher.set_stop(stop);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alphabeta::{Book, BookLine, BookMove};

    #[test]
    fn the_book_move_is_played_and_the_search_takes_over_out_of_the_book() {
        let mv = |s: &str| s.parse::<Move>().expect("a move");
        let book = Book::from_lines(vec![
            BookLine {
                path: vec![],
                moves: vec![BookMove {
                    mv: mv("a"),
                    share: 1000,
                }],
            },
            BookLine {
                path: vec![mv("a")],
                moves: vec![
                    BookMove {
                        mv: mv("A"),
                        share: 500,
                    },
                    BookMove {
                        mv: mv("F"),
                        share: 500,
                    },
                ],
            },
        ])
        .expect("a book");
        let options = AlphaBetaOptions {
            book: Some(Arc::new(book)),
            ..AlphaBetaOptions::default()
        };
        let mut seen = Vec::new();
        for seed in 0..16 {
            let mut player = AlphaBetaPlayer::with_options(Some(4), None, seed, &options);
            let mut game = Game::new();
            // The book's move, not a search's.
            let first = player.choose(&game, Budget::default()).expect("a move");
            assert_eq!(first.mv, mv("a"));
            assert!(first.info.starts_with("book"), "{}", first.info);
            game.play(first.mv).expect("legal");
            let second = player.choose(&game, Budget::default()).expect("a move");
            assert!([mv("A"), mv("F")].contains(&second.mv));
            seen.push(second.mv);
            game.play(second.mv).expect("legal");
            // Out of the book: a search.
            let third = player.choose(&game, Budget::default()).expect("a move");
            assert!(third.info.starts_with("depth"), "{}", third.info);
        }
        // The seeds draw both moves of equal share.
        assert!(seen.contains(&mv("A")) && seen.contains(&mv("F")));
        // Without a book, the search decides the first move.
        let mut plain =
            AlphaBetaPlayer::with_options(Some(4), None, 0, &AlphaBetaOptions::default());
        let first = plain
            .choose(&Game::new(), Budget::default())
            .expect("a move");
        assert!(first.info.starts_with("depth"));
    }
}
