//! Fuzz target for the broker's game records (`oware_trainer::broker::wire::decode`), which
//! the learner reads from a Redis stream anyone with the password may write to: arbitrary
//! bytes, records with their header words set to anything, and valid records mutated (bytes
//! flipped, set, inserted, removed, cut or spliced). The property: no panic, bounded memory;
//! a refused record says why; an accepted one is a finished game that encodes back to exactly
//! the same bytes. `cargo test --release -p oware-trainer --test fuzz_wire -- --ignored` runs
//! the `_long` twin for `OWARE_FUZZ_CASES` cases.

#[path = "../../engine/tests/fuzz_support/mod.rs"]
mod fuzz_support;

use fuzz_support::{apply, long_cases, mutations, run};
use oware_engine::Game;
use oware_trainer::broker::wire::{self, MAX_RECORD_BYTES, decode, encode};
use oware_trainer::replay::Sample;
use oware_trainer::selfplay::GameRecord;
use proptest::prelude::*;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// A random finished game under `max_plies` with a random policy on about half its moves.
fn random_game(seed: u64, max_plies: u32) -> GameRecord {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut game = Game::with_max_plies(max_plies);
    let mut pending = Vec::new();
    while !game.is_over() {
        let moves: Vec<_> = game.legal_moves().iter().collect();
        let mv = moves[rng.random_range(0..moves.len())];
        if rng.random_bool(0.5) {
            let mut policy = [0f32; 6];
            let weights: Vec<f32> = moves.iter().map(|_| rng.random_range(0.1..1.0)).collect();
            let sum: f32 = weights.iter().sum();
            for (m, w) in moves.iter().zip(&weights) {
                policy[m.relative()] = w / sum;
            }
            pending.push((*game.position(), policy, game.to_move()));
        }
        game.play(mv).expect("legal");
    }
    let result = game.result().expect("over");
    GameRecord {
        moves: game.moves().to_vec(),
        result,
        samples: pending
            .into_iter()
            .map(|(position, policy, side)| Sample::of_result(position, policy, side, &result))
            .collect(),
    }
}

/// Valid records: short and long games, several ply limits and worker ids.
fn valid_records() -> Vec<Vec<u8>> {
    let longest = "x".repeat(wire::MAX_WORKER_ID);
    (0..8u64)
        .map(|i| {
            let plies = [40, 200, 1000][i as usize % 3];
            let game = random_game(i, plies);
            let id = ["w", "host-0123456789abcdef", &longest][i as usize % 3];
            encode(&game, id, i * 1000, i, plies).expect("encodes")
        })
        .collect()
}

/// The property of one input.
fn check(bytes: &[u8]) -> Result<(), TestCaseError> {
    match decode(bytes) {
        Ok(g) => {
            prop_assert!(bytes.len() <= MAX_RECORD_BYTES);
            prop_assert!(wire::valid_worker_id(&g.worker));
            prop_assert!((1..=1000).contains(&g.max_plies));
            // A finished game, replayed move by move under its ply limit.
            let mut game = Game::with_max_plies(g.max_plies);
            for &m in &g.record.moves {
                prop_assert!(!game.is_over());
                prop_assert!(game.play(m).is_ok());
            }
            prop_assert_eq!(game.result(), Some(g.record.result));
            prop_assert!(g.record.samples.len() <= g.record.moves.len());
            for s in &g.record.samples {
                let sum: f32 = s.policy.iter().sum();
                prop_assert!((sum - 1.0).abs() < 2e-3, "policy sums to {}", sum);
                prop_assert!(s.policy.iter().all(|p| p.is_finite() && *p >= 0.0));
            }
            // The record is canonical: encoding what was decoded gives the same bytes.
            let again = encode(&g.record, &g.worker, g.seq, g.version, g.max_plies)
                .map_err(|e| TestCaseError::fail(format!("{e:#}")))?;
            prop_assert_eq!(again.as_slice(), bytes);
        }
        Err(e) => prop_assert!(!e.0.trim().is_empty()),
    }
    Ok(())
}

fn target(cases: u32) {
    let valid = valid_records();
    for v in &valid {
        check(v).expect("a valid record passes");
    }
    run(
        "wire records (arbitrary bytes)",
        cases,
        prop::collection::vec(any::<u8>(), 0..300),
        |bytes| check(&bytes),
    );
    // Arbitrary bytes after a valid magic, so the decoder gets past the first check.
    run(
        "wire records (magic, then arbitrary)",
        cases,
        prop::collection::vec(any::<u8>(), 0..300),
        |tail| {
            let mut bytes = wire::MAGIC.to_vec();
            bytes.extend(tail);
            check(&bytes)
        },
    );
    let n = valid.len();
    run(
        "wire records (mutated)",
        cases,
        (0..n, mutations(4)),
        |(i, m)| {
            let mut bytes = valid[i].clone();
            apply(&mut bytes, &m);
            check(&bytes)
        },
    );
    // The header's words (version, sequence number, ply limit, counts) set to anything,
    // extremes included.
    let word = prop_oneof![
        Just(0u64),
        Just(1),
        Just(u64::MAX),
        Just(u64::from(u16::MAX)),
        any::<u64>()
    ];
    run(
        "wire records (header words)",
        cases,
        (0..n, 0..4usize, word),
        |(i, w, value)| {
            let mut bytes = valid[i].clone();
            match w {
                0 => bytes[4..12].copy_from_slice(&value.to_le_bytes()),
                1 => bytes[12..20].copy_from_slice(&value.to_le_bytes()),
                2 => bytes[20..22].copy_from_slice(&(value as u16).to_le_bytes()),
                _ => {
                    let id_len = bytes[22] as usize;
                    let at = 23 + id_len;
                    bytes[at..at + 2].copy_from_slice(&(value as u16).to_le_bytes());
                }
            }
            check(&bytes)
        },
    );
}

#[test]
fn fuzz_wire_records() {
    target(300);
}

#[test]
#[ignore = "long fuzz run: OWARE_FUZZ_CASES sets the case count"]
fn fuzz_wire_records_long() {
    target(long_cases());
}

/// Records at and past the size bound: refused with the reason, without reading further.
#[test]
fn oversized_and_empty_records_are_refused() {
    for len in [0usize, 3, MAX_RECORD_BYTES + 1, 4 * MAX_RECORD_BYTES] {
        let mut bytes = vec![0u8; len];
        if len >= 4 {
            bytes[..4].copy_from_slice(wire::MAGIC);
        }
        let e = decode(&bytes).expect_err("refused");
        assert!(!e.0.is_empty());
    }
}
