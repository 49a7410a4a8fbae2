//! Fuzz targets for the trainer's parsers of untrusted input: the training config (TOML text
//! and `--set` overrides) and `replay.bin`. Each runs over arbitrary input and over mutations
//! of valid input (the shipped configs with random keys and values; a saved buffer with bytes
//! flipped, cut or spliced, with and without a matching checksum). The property: no panic,
//! bounded memory, and an error that names what is wrong. The `*_long` twins run the same for
//! `OWARE_FUZZ_CASES` cases: `cargo test --release -p oware-trainer --test fuzz -- --ignored`.

#[path = "../../engine/tests/fuzz_support/mod.rs"]
mod fuzz_support;

use fuzz_support::{apply, long_cases, mutate_text, mutations, run};
use oware_engine::bounds::{MAX_GAMES, MAX_SIMS, MAX_SIMS_PER_WORKER, MAX_THREADS};
use oware_engine::{Position, Side};
use oware_model::checksum;
use oware_trainer::TrainConfig;
use oware_trainer::replay::{ReplayBuffer, Sample};
use proptest::prelude::*;

const CONFIGS: [&str; 4] = [
    include_str!("../../configs/default.toml"),
    include_str!("../../configs/quick.toml"),
    include_str!("../../configs/gpu.toml"),
    include_str!("../../configs/tiny.toml"),
];

/// The config property: never a panic; an accepted config keeps every bound; a refused one
/// says why (for a bad value, the key).
fn check_config(text: &str, sets: &[String]) -> Result<Option<String>, TestCaseError> {
    match TrainConfig::from_toml_str(text, sets) {
        Ok(c) => {
            prop_assert!((1..=MAX_SIMS).contains(&c.mcts.sims));
            prop_assert!((1..=MAX_SIMS).contains(&c.selfplay.cheap_sims));
            prop_assert!((1..=MAX_SIMS).contains(&c.eval.sims));
            prop_assert!(c.eval.every_steps == 0 || (1..=MAX_GAMES).contains(&c.eval.games));
            prop_assert!(c.selfplay.workers <= MAX_THREADS as usize);
            let in_flight =
                c.selfplay.games_per_worker as u64 * c.mcts.sims.max(c.selfplay.cheap_sims) as u64;
            prop_assert!(in_flight <= MAX_SIMS_PER_WORKER);
            // The resolved config (run/config.toml) reads back as the same config.
            let again = c
                .to_toml()
                .map_err(|e| TestCaseError::fail(format!("{e:#}")))
                .and_then(|t| {
                    TrainConfig::from_toml_str(&t, &[])
                        .map_err(|e| TestCaseError::fail(format!("{t}\n{e:#}")))
                })?;
            prop_assert_eq!(again, c);
            Ok(None)
        }
        Err(e) => {
            let msg = format!("{e:#}");
            prop_assert!(!msg.trim().is_empty());
            Ok(Some(msg))
        }
    }
}

/// A TOML value of any type, extremes included.
fn toml_value() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        prop::sample::select(vec![
            "0",
            "1",
            "-1",
            "1000001",
            "4294967296",
            "1e308",
            "-1e-308",
            "nan",
            "inf",
            "-inf",
            "0.0",
            "true",
            "false",
            "\"\"",
            "\"gumbel\"",
            "\"puct\"",
            "\"x\"",
            "[]",
            "[1, 2]",
            "[\"alphabeta:depth=4\"]",
            "[\"alphabeta:depth=999\"]",
            "{}",
            "{ a = 1 }",
            "1979-05-27T07:32:00Z",
            "'''multi'''",
        ])
        .prop_map(str::to_string),
        any::<f64>().prop_map(|f| format!("{f:?}")),
        "[a-z]{0,8}".prop_map(|s| format!("\"{s}\"")),
    ]
}

/// A shipped config with one key (known or not) of one section (known or not) set to a random
/// value: `(text, section, key)`.
fn config_with_random_key() -> impl Strategy<Value = (String, String, String)> {
    let sections = prop::sample::select(vec![
        "model",
        "mcts",
        "selfplay",
        "replay",
        "optimizer",
        "schedule",
        "eval",
        "log",
        "extra",
    ]);
    let keys = prop_oneof![
        prop::sample::select(vec![
            "sims",
            "hidden",
            "blocks",
            "workers",
            "games_per_worker",
            "cheap_sims",
            "full_search_prob",
            "capacity",
            "min_samples",
            "batch_size",
            "lr",
            "minutes",
            "max_steps",
            "games",
            "opponents",
            "every_steps",
            "root",
            "leaves_per_tree",
            "temperature",
            "c_puct",
            "dirichlet_alpha",
            "max_plies",
            "seed",
            "kind",
        ])
        .prop_map(str::to_string),
        "[a-z_]{1,12}",
    ];
    (0..CONFIGS.len(), sections, keys, toml_value()).prop_map(|(i, section, key, value)| {
        let mut text = CONFIGS[i].to_string();
        text.push_str(&format!("\n[{section}]\n{key} = {value}\n"));
        (text, section.to_string(), key)
    })
}

fn configs(cases: u32) {
    run("config TOML (arbitrary)", cases, any::<String>(), |text| {
        check_config(&text, &[]).map(|_| ())
    });
    run(
        "config TOML (mutated shipped configs)",
        cases,
        (0..CONFIGS.len(), mutations(6)),
        |(i, m)| check_config(&mutate_text(CONFIGS[i], &m), &[]).map(|_| ()),
    );
    run(
        "config TOML (random keys and values)",
        cases,
        config_with_random_key(),
        |(text, section, key)| {
            if let Some(msg) = check_config(&text, &[])? {
                // Duplicated sections and keys are TOML errors with a line; every other
                // refusal names the key or its section.
                prop_assert!(
                    msg.contains(&key) || msg.contains(&section) || msg.contains("line"),
                    "{}",
                    msg
                );
            }
            Ok(())
        },
    );
    let set = (
        prop::sample::select(vec!["mcts", "selfplay", "eval", "model", "nope", ""]),
        prop::sample::select(vec!["sims", "workers", "games", "hidden", "root", "x", ""]),
        toml_value(),
    );
    run(
        "config --set overrides",
        cases,
        (set, any::<String>()),
        |((section, key, value), junk)| {
            let sets = [format!("{section}.{key}={value}"), junk];
            check_config("", &sets[..1])?;
            check_config("", &sets[1..]).map(|_| ())
        },
    );
}

#[test]
fn fuzz_config() {
    configs(250);
}

#[test]
#[ignore = "long fuzz run: OWARE_FUZZ_CASES sets the case count"]
fn fuzz_config_long() {
    configs(long_cases());
}

/// A valid `replay.bin`: `n` samples of start-like positions, as the trainer writes them.
fn saved_buffer(n: usize) -> Vec<u8> {
    let mut buf = ReplayBuffer::new(64);
    buf.extend((0..n).map(|i| {
        let mut board = [4u8; 12];
        board[i % 12] = 0;
        board[(i + 5) % 12] = 8;
        let side = if i % 2 == 0 { Side::South } else { Side::North };
        Sample {
            position: Position::from_parts(board, [0, 0], side).expect("48 seeds"),
            policy: [1.0 / 6.0; 6],
            value: if i % 3 == 0 { 1.0 } else { -1.0 },
            margin: i as f32 / 48.0,
            short_value: if i % 3 == 0 { 1.0 } else { -1.0 },
        }
    }));
    buf.to_bytes()
}

/// The `replay.bin` property (the bytes a checkpoint holds): decoding never panics; a decoded
/// buffer holds valid positions within its capacity; an error says the buffer is damaged (the
/// checkpoint reader adds the file's name).
fn check_replay(bytes: &[u8]) -> Result<(), TestCaseError> {
    match ReplayBuffer::from_bytes(bytes) {
        Ok(b) => {
            prop_assert!(b.len() <= b.capacity());
            for s in b.sample(b.len().min(8), &mut rand::rng()) {
                let p = s.position;
                let seeds: u32 = p.board().iter().map(|&x| x as u32).sum::<u32>()
                    + p.captured().iter().map(|&x| x as u32).sum::<u32>();
                prop_assert_eq!(seeds, 48);
            }
        }
        Err(e) => prop_assert!(e.starts_with("damaged replay buffer"), "{}", e),
    }
    Ok(())
}

/// Re-seals mutated bytes with a valid checksum, so the decoder behind it sees the damage.
fn reseal(bytes: &mut [u8]) {
    if bytes.len() >= 8 {
        let body = bytes.len() - 8;
        let sum = checksum(&bytes[..body]);
        bytes[body..].copy_from_slice(&sum.to_le_bytes());
    }
}

fn replay_files(cases: u32) {
    let valid = saved_buffer(20);
    run(
        "replay.bin (arbitrary bytes)",
        cases,
        prop::collection::vec(any::<u8>(), 0..200),
        |bytes| check_replay(&bytes),
    );
    run("replay.bin (mutated)", cases, mutations(4), |m| {
        let mut bytes = valid.clone();
        apply(&mut bytes, &m);
        check_replay(&bytes)
    });
    run(
        "replay.bin (mutated, checksum fixed)",
        cases,
        mutations(4),
        |m| {
            let mut bytes = valid.clone();
            apply(&mut bytes, &m);
            reseal(&mut bytes);
            check_replay(&bytes)
        },
    );
    // The header's words (capacity, total, count) set to anything, checksum fixed.
    let words = (0..3usize, any::<u64>());
    run("replay.bin (header words)", cases, words, |(w, value)| {
        let mut bytes = valid.clone();
        let at = 8 + 8 * w;
        bytes[at..at + 8].copy_from_slice(&value.to_le_bytes());
        reseal(&mut bytes);
        check_replay(&bytes)
    });
}

#[test]
fn fuzz_replay_file() {
    replay_files(250);
}

#[test]
#[ignore = "long fuzz run: OWARE_FUZZ_CASES sets the case count"]
fn fuzz_replay_file_long() {
    replay_files(long_cases());
}

/// Deeply nested TOML (arrays and inline tables, in a file and in `--set`): an error, never a
/// stack overflow.
#[test]
fn deeply_nested_toml_is_an_error() {
    for depth in [64usize, 1_000, 100_000] {
        let arrays = format!(
            "[mcts]\nsims = {}{}\n",
            "[".repeat(depth),
            "]".repeat(depth)
        );
        let tables = format!(
            "[mcts]\nsims = {}{}\n",
            "{ a = ".repeat(depth),
            "}".repeat(depth)
        );
        for text in [arrays, tables] {
            let err = TrainConfig::from_toml_str(&text, &[]).expect_err("not a number");
            assert!(!format!("{err:#}").is_empty());
        }
        let set = format!("mcts.sims={}{}", "[".repeat(depth), "]".repeat(depth));
        let err = TrainConfig::from_toml_str("", &[set]).expect_err("not a number");
        assert!(format!("{err:#}").contains("sims"), "{err:#}");
    }
}
