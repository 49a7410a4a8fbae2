//! The built binary: `oware pit` with network players plays its games batched (many games in
//! flight per thread, one network call per pass), and those are the games the one-game path
//! (`--unbatched`) plays: same openings, same moves, same results, with a real (tiny) network
//! against alpha-beta and against another network.

use crate::common::{oware, scratch, text};
use oware_model::{CheckpointMeta, Device, Learner, ModelConfig, OptimConfig, save_checkpoint};
use oware_search::mcts::{MctsConfig, RootAlgorithm};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A tiny untrained checkpoint (its random weights make a deterministic, non-uniform network)
/// that records the search it was "trained" with.
fn checkpoint(dir: &Path, name: &str, mcts: MctsConfig) -> PathBuf {
    let learner = Learner::new(
        &ModelConfig::new().with_hidden(16).with_blocks(1),
        &OptimConfig::default(),
        &Device::flex(),
    );
    let path = dir.join(name);
    let meta = CheckpointMeta {
        step: 1,
        mcts: Some(mcts),
        ..CheckpointMeta::default()
    };
    save_checkpoint(&path, &learner, &meta).expect("save the checkpoint");
    path
}

/// Runs `oware pit A B --games 8 --threads 2 --json --record FILE [extra]`; returns the JSON
/// and the record.
fn pit(dir: &Path, a: &str, b: &str, tag: &str, extra: &[&str]) -> (Value, String) {
    let record = dir.join(format!("{tag}.txt"));
    let record_arg = record.to_str().expect("utf-8 path");
    let mut args = vec![
        "pit",
        a,
        b,
        "--games",
        "8",
        "--threads",
        "2",
        "--seed",
        "3",
        "--json",
        "--record",
        record_arg,
    ];
    args.extend_from_slice(extra);
    let out = oware(&args);
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let json: Value =
        serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    let games = std::fs::read_to_string(&record).expect("the record is written");
    (json, games)
}

fn batched(v: &Value, who: &str) -> bool {
    v["batched"][who]
        .as_bool()
        .unwrap_or_else(|| panic!("batched.{who} in {v}"))
}

#[test]
fn batched_matches_play_the_one_game_paths_games() {
    let dir = scratch("pit-batched");
    let puct = checkpoint(
        &dir,
        "puct",
        MctsConfig {
            sims: 24,
            leaves_per_tree: 2,
            ..MctsConfig::default()
        },
    );
    let gumbel = checkpoint(
        &dir,
        "gumbel",
        MctsConfig {
            sims: 16,
            root: RootAlgorithm::Gumbel,
            ..MctsConfig::default()
        },
    );
    let puct_spec = format!("mcts:model={}", puct.display());
    let gumbel_spec = format!("mcts:model={},sims=12", gumbel.display());
    for (k, (a, b)) in [
        (puct_spec.as_str(), "alphabeta:depth=3"),
        ("alphabeta:depth=2", gumbel_spec.as_str()),
        (puct_spec.as_str(), gumbel_spec.as_str()),
    ]
    .into_iter()
    .enumerate()
    {
        let (fast, fast_games) = pit(&dir, a, b, &format!("batched-{k}"), &[]);
        let (slow, slow_games) = pit(&dir, a, b, &format!("one-game-{k}"), &["--unbatched"]);
        assert_eq!(
            (batched(&fast, "a"), batched(&fast, "b")),
            (a.starts_with("mcts:"), b.starts_with("mcts:")),
            "{fast}"
        );
        assert!(!batched(&slow, "a") && !batched(&slow, "b"), "{slow}");
        assert_eq!(fast_games.lines().count(), 8);
        assert_eq!(fast_games, slow_games, "{a} vs {b}: the games differ");
        for key in [
            "wins", "draws", "losses", "plies", "moves", "a_moves", "b_moves",
        ] {
            assert_eq!(fast[key], slow[key], "{key}: {fast} / {slow}");
        }
        let moves = fast["moves"].as_f64().expect("moves");
        let rate = fast["moves_per_sec"].as_f64().expect("moves_per_sec");
        let seconds = fast["seconds"].as_f64().expect("seconds");
        assert!(moves > 0.0 && (rate * seconds - moves).abs() <= 1e-6 * moves.max(1.0) + 1.0);
    }
}

#[test]
fn a_timed_network_player_plays_one_game_at_a_time() {
    let dir = scratch("pit-timed");
    let net = checkpoint(
        &dir,
        "net",
        MctsConfig {
            sims: 8,
            ..MctsConfig::default()
        },
    );
    let spec = format!("mcts:model={},ms=5", net.display());
    let (v, games) = pit(&dir, &spec, "random", "timed", &[]);
    assert!(!batched(&v, "a") && !batched(&v, "b"), "{v}");
    assert_eq!(games.lines().count(), 8);
}
