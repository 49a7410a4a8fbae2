//! Fuzz targets for the engine's parsers of untrusted input: record lines (`oware replay`,
//! `oware play --load`, `games.txt`) and the bounded line reader. Each runs over arbitrary input
//! and over mutations of valid input; the property is always: no panic, bounded memory, and an
//! error that names what is wrong. The `*_long` twins run the same targets for
//! `OWARE_FUZZ_CASES` cases: `cargo test --release -p oware-engine --test fuzz -- --ignored`.

mod fuzz_support;

use fuzz_support::{long_cases, mutate_text, mutations, run};
use oware_engine::Game;
use oware_engine::bounded_lines::{BoundedLines, Line};
use oware_engine::record::{RecordLine, format_line};
use proptest::prelude::*;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// A finished random game (seeded), as a record line with a result and players.
fn recorded_game(seed: u64) -> String {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut game = Game::with_max_plies(rng.random_range(1..=300));
    while !game.is_over() {
        let legal = game.legal_moves();
        game.play_unchecked(legal.as_slice()[rng.random_range(0..legal.len())]);
    }
    format_line(
        game.moves(),
        game.result().as_ref(),
        Some(("random", "alphabeta:depth=3")),
    )
}

/// The record-line property: replaying never panics; it either plays every token or names
/// the first bad ply.
fn check_record_line(line: &str) -> Result<(), TestCaseError> {
    let record = RecordLine::parse(line);
    let mut plies = 0u32;
    match record.replay(|_, _, _| plies += 1) {
        Ok(game) => {
            prop_assert_eq!(game.ply() as usize, record.tokens.len());
            prop_assert_eq!(plies, game.ply());
        }
        Err(e) => {
            let msg = e.to_string();
            prop_assert!(msg.starts_with(&format!("ply {plies}: ")), "{}", msg);
        }
    }
    Ok(())
}

fn record_lines(cases: u32) {
    run("record lines (arbitrary)", cases, any::<String>(), |line| {
        check_record_line(&line)
    });
    let tokens = prop::collection::vec(
        prop_oneof![
            prop::sample::select(vec![
                "a", "b", "c", "d", "e", "f", "A", "B", "C", "D", "E", "F"
            ]),
            prop::sample::select(vec!["#", "\t", "", "aa", "G", "1-0", "é", "\u{0}"]),
        ],
        0..120,
    );
    run("record lines (move tokens)", cases, tokens, |t| {
        check_record_line(&t.join(" "))
    });
    run(
        "record lines (mutated records)",
        cases,
        (any::<u64>(), mutations(6)),
        |(seed, m)| check_record_line(&mutate_text(&recorded_game(seed), &m)),
    );
}

#[test]
fn fuzz_record_lines() {
    record_lines(1000);
}

#[test]
#[ignore = "long fuzz run: OWARE_FUZZ_CASES sets the case count"]
fn fuzz_record_lines_long() {
    record_lines(long_cases());
}

fn bounded_lines(cases: u32) {
    let input = (prop::collection::vec(any::<u8>(), 0..600), 0..64usize);
    run("bounded line reader", cases, input, |(bytes, max)| {
        let breaks = bytes.iter().filter(|&&b| b == b'\n').count();
        let mut count = 0;
        for item in BoundedLines::new(&bytes[..], max) {
            let (number, line) = item.map_err(|e| TestCaseError::fail(e.to_string()))?;
            count += 1;
            prop_assert_eq!(number, count);
            match line {
                Line::Text(t) => prop_assert!(t.len() <= max),
                Line::TooLong { bytes, max: m } => prop_assert!(bytes > m && m == max),
                Line::NotUtf8(t) => prop_assert!(t.chars().count() <= max),
            }
        }
        prop_assert!(count <= breaks + 1);
        Ok(())
    });
}

#[test]
fn fuzz_bounded_lines() {
    bounded_lines(1000);
}

#[test]
#[ignore = "long fuzz run: OWARE_FUZZ_CASES sets the case count"]
fn fuzz_bounded_lines_long() {
    bounded_lines(long_cases());
}
