//! A network player searches as its network was trained (the checkpoint's `[mcts]`), without
//! self-play noise, and a spec's keys override those settings.

use oware_engine::Game;
use oware_model::DeviceKind;
use oware_model::{
    CheckpointMeta, Device, Learner, ModelConfig, OptimConfig, read_checkpoint_info,
    save_checkpoint,
};
use oware_players::PlayerBuilder;
use oware_search::Budget;
use oware_search::mcts::{CpuctForm, MctsConfig, RootAlgorithm};
use std::path::{Path, PathBuf};

/// The search a (made-up) run trained with: nothing like the defaults.
fn trained() -> MctsConfig {
    MctsConfig {
        sims: 37,
        root: RootAlgorithm::Gumbel,
        cpuct_form: CpuctForm::Growing,
        c_puct: 2.25,
        fpu_reduction: 0.1,
        leaves_per_tree: 3,
        gumbel_considered: 4,
        dirichlet_frac: 0.3,
        temperature: 1.0,
        temperature_plies: 30,
        ..MctsConfig::default()
    }
}

/// A tiny checkpoint whose meta.json holds `mcts`.
fn checkpoint(root: &Path, mcts: Option<MctsConfig>) -> PathBuf {
    let learner = Learner::new(
        &ModelConfig::new().with_hidden(8).with_blocks(0),
        &OptimConfig::default(),
        &Device::flex(),
    );
    let dir = root.join("step-0000001");
    let meta = CheckpointMeta {
        step: 1,
        mcts,
        ..CheckpointMeta::default()
    };
    save_checkpoint(&dir, &learner, &meta).expect("save the checkpoint");
    dir
}

fn builder(spec: &str) -> PlayerBuilder {
    PlayerBuilder::from_str(spec, DeviceKind::Cpu).expect("a valid network player")
}

fn search(spec: &str) -> MctsConfig {
    builder(spec)
        .network_search()
        .expect("valid settings")
        .expect("a network player")
}

#[test]
fn the_checkpoints_search_reaches_the_player_without_noise() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = checkpoint(tmp.path(), Some(trained()));
    let spec = format!("mcts:model={}", dir.display());
    let want = MctsConfig {
        dirichlet_frac: 0.0,
        temperature: 0.0,
        temperature_plies: 0,
        ..trained()
    };
    assert_eq!(search(&spec), want);
    // The player itself runs the checkpoint's 37 simulations per move.
    let mut player = builder(&spec).build(1).expect("player");
    let choice = player
        .choose(&Game::new(), Budget::default())
        .expect("a move");
    assert!(choice.info.starts_with("sims 37 "), "{}", choice.info);
}

#[test]
fn spec_keys_override_the_checkpoints_search() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = checkpoint(tmp.path(), Some(trained()));
    let spec = format!(
        "mcts:model={},sims=12,batch=5,c=1.1,fpu=0.4,root=puct",
        dir.display()
    );
    let got = search(&spec);
    let want = MctsConfig {
        sims: 12,
        leaves_per_tree: 5,
        c_puct: 1.1,
        cpuct_form: CpuctForm::Constant,
        fpu_reduction: 0.4,
        root: RootAlgorithm::Puct,
        dirichlet_frac: 0.0,
        temperature: 0.0,
        temperature_plies: 0,
        ..trained()
    };
    assert_eq!(got, want);
    let mut player = builder(&spec).build(1).expect("player");
    let choice = player
        .choose(&Game::new(), Budget::default())
        .expect("a move");
    assert!(choice.info.starts_with("sims 12 "), "{}", choice.info);
}

#[test]
fn a_checkpoint_without_search_settings_plays_the_default_search() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = checkpoint(tmp.path(), None);
    let meta = std::fs::read_to_string(dir.join("meta.json")).expect("meta.json");
    assert!(!meta.contains("\"mcts\""), "{meta}");
    let want = MctsConfig {
        dirichlet_frac: 0.0,
        temperature: 0.0,
        temperature_plies: 0,
        ..MctsConfig::default()
    };
    assert_eq!(search(&format!("mcts:model={}", dir.display())), want);
}

#[test]
fn the_reference_networks_metadata_still_reads() {
    // A copy of meta.json of models/reference/net-2026-12-01-default-44min (written before
    // checkpoints held their search): it reads, with no search settings.
    let tmp = tempfile::tempdir().expect("temp dir");
    std::fs::write(
        tmp.path().join("meta.json"),
        include_str!("data/reference-meta.json"),
    )
    .expect("write meta.json");
    let info = read_checkpoint_info(tmp.path()).expect("the reference's meta.json reads");
    assert_eq!(
        info.model,
        ModelConfig {
            move_features: false,
            ..ModelConfig::new().with_hidden(128).with_blocks(3)
        }
    );
    assert_eq!(info.meta.step, 200_000);
    assert_eq!(info.meta.mcts, None);
}

/// The fixed reference networks strength is measured against (`models/reference/`, format
/// version 1): every one loads and plays, with the search its checkpoint carries (if any) and
/// a spec's `sims=` on top, whatever the checkpoint format has become since.
#[test]
fn the_reference_networks_load_and_play() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/reference");
    let mut found = 0;
    for name in ["net-2026-12-01-default-44min", "net-2026-12-01-full60"] {
        let dir: PathBuf = root.join(name);
        let spec = format!("mcts:model={},sims=16", dir.display());
        let b = builder(&spec);
        assert_eq!(
            b.network_search().expect("settings").map(|c| c.sims),
            Some(16),
            "{name}"
        );
        let mut player = b.build(3).expect("player");
        let choice = player
            .choose(&Game::new(), Budget::default())
            .expect("a move");
        assert!(
            choice.info.starts_with("sims 16 "),
            "{name}: {}",
            choice.info
        );
        found += 1;
    }
    assert_eq!(found, 2);
}

/// The median of the times `spec` takes for its moves of one game (at most `moves`).
fn median_move_millis(spec: &str, moves: usize) -> f64 {
    let mut player = builder(spec).build(5).expect("player");
    let mut game = Game::new();
    let mut times = Vec::new();
    while times.len() < moves && !game.is_over() {
        let start = std::time::Instant::now();
        let choice = player.choose(&game, Budget::default()).expect("a move");
        times.push(start.elapsed().as_secs_f64() * 1000.0);
        game.play(choice.mv).expect("a legal move");
    }
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

#[test]
fn a_timed_search_stops_in_time() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = checkpoint(tmp.path(), Some(trained()));
    // Both roots size their budget from the rate they measure, re-plan it as the estimate
    // changes and end at the clock (a Gumbel root re-plans its sequential halving): the
    // median is within 10% of the time asked. The upper bound is generous for a loaded CI
    // machine, where a stall only makes a move later.
    for root in ["puct", "gumbel"] {
        for ms in [60.0, 100.0] {
            let spec = format!("mcts:model={},ms={ms},root={root}", dir.display());
            let median = median_move_millis(&spec, 9);
            eprintln!("{root}: median {median:.1} ms for ms={ms}");
            assert!(
                (0.9 * ms..=2.0 * ms).contains(&median),
                "{root}: median {median:.1} ms for ms={ms}"
            );
        }
    }
    // `sims=` caps a timed search: 20 simulations take far less than a minute.
    let spec = format!("mcts:model={},ms=60000,sims=20", dir.display());
    let mut player = builder(&spec).build(5).expect("player");
    let choice = player
        .choose(&Game::new(), Budget::default())
        .expect("a move");
    assert!(choice.info.starts_with("sims 20 "), "{}", choice.info);
}
