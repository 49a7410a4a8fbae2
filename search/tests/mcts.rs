//! The search with no network: a uniform evaluator and random rollouts.

use oware_engine::{DEFAULT_MAX_PLIES, Game, Move, Position, Side};
use oware_search::mcts::{
    BatchedSearch, InteriorRule, MctsConfig, RolloutSearch, RootAlgorithm, Search, SlotParams,
};
use oware_search::{
    Budget, Choice, MctsPlayer, Player, RandomPlayer, RolloutMctsPlayer, UniformEvaluator,
};
use rand::SeedableRng;
use rand::rngs::SmallRng;

/// South has 23 and `f` sows its one seed into `A` (1 seed): 2 captured, 25 in all.
fn winning_capture() -> Game {
    let pos = Position::from_parts([1, 0, 1, 0, 0, 1, 1, 0, 5, 5, 0, 0], [23, 11], Side::South)
        .expect("48 seeds");
    Game::from_position(pos, DEFAULT_MAX_PLIES)
}

/// North has 23 and `F` (1 seed) reaches `a`. South may play `a` (emptying it) or `b`, after
/// which `F` makes `a` 2 and North captures its 25th seed.
fn losing_move() -> Game {
    let pos = Position::from_parts([1, 1, 0, 0, 0, 0, 4, 0, 0, 0, 0, 1], [18, 23], Side::South)
        .expect("48 seeds");
    Game::from_position(pos, DEFAULT_MAX_PLIES)
}

fn mv(s: &str) -> Move {
    s.parse().expect("a move")
}

fn config(root: RootAlgorithm, sims: u32, leaves: u32) -> MctsConfig {
    MctsConfig {
        sims,
        root,
        leaves_per_tree: leaves,
        ..MctsConfig::default()
    }
}

const ROOTS: [RootAlgorithm; 2] = [RootAlgorithm::Puct, RootAlgorithm::Gumbel];

/// Gumbel at the root with the Gumbel-MuZero rule below it.
fn gumbel_interior(sims: u32, leaves: u32) -> MctsConfig {
    MctsConfig {
        gumbel_interior: InteriorRule::Gumbel,
        ..config(RootAlgorithm::Gumbel, sims, leaves)
    }
}

#[test]
fn the_gumbel_interior_rule_finds_wins_and_avoids_losses() {
    let mut s = Search::new(gumbel_interior(64, 2)).expect("valid");
    let mut rng = SmallRng::seed_from_u64(3);
    s.set_game(&winning_capture());
    assert_eq!(
        s.run(&UniformEvaluator, 64, false, &mut rng)
            .expect("uniform never fails")
            .map(|r| r.mv),
        Some(mv("f"))
    );
    s.set_game(&losing_move());
    let r = s
        .run(&UniformEvaluator, 100, true, &mut rng)
        .expect("uniform never fails")
        .expect("live");
    assert_eq!(r.mv, mv("a"), "{r:?}");
    assert!(r.policy[1] < 0.2, "{r:?}");
}

#[test]
fn the_test_positions_do_what_they_claim() {
    let mut g = winning_capture();
    g.play(mv("f")).expect("legal");
    assert_eq!(g.result().map(|r| r.winner.name()), Some("south"));
    let mut g = losing_move();
    g.play(mv("b")).expect("legal");
    g.play(mv("F")).expect("legal");
    assert_eq!(g.result().map(|r| r.winner.name()), Some("north"));
}

#[test]
fn search_takes_a_capture_that_wins_at_once() {
    for root in ROOTS {
        for leaves in [1, 4] {
            let mut s = Search::new(config(root, 64, leaves)).expect("valid");
            s.set_game(&winning_capture());
            let mut rng = SmallRng::seed_from_u64(3);
            let r = s
                .run(&UniformEvaluator, 64, false, &mut rng)
                .expect("uniform never fails")
                .expect("live game");
            assert_eq!(r.mv, mv("f"), "{root:?} leaves {leaves}: {r:?}");
            assert!(r.value > 0.5, "{root:?}: value {}", r.value);
        }
    }
}

#[test]
fn search_avoids_a_move_that_loses_at_once() {
    for root in ROOTS {
        for explore in [false, true] {
            let mut s = Search::new(config(root, 100, 1)).expect("valid");
            s.set_game(&losing_move());
            let mut rng = SmallRng::seed_from_u64(5);
            let r = s
                .run(&UniformEvaluator, 100, explore, &mut rng)
                .expect("uniform never fails")
                .expect("live game");
            assert_eq!(r.mv, mv("a"), "{root:?}: {r:?}");
            assert!(r.policy[1] < 0.2, "{root:?}: {r:?}");
            if root == RootAlgorithm::Puct {
                assert!(r.visits[1] < r.visits[0], "{root:?}: {r:?}");
            }
        }
    }
}

#[test]
fn visit_counts_sum_to_the_simulations() {
    for root in ROOTS {
        for leaves in [1, 3, 8] {
            for sims in [1, 2, 7, 50, 200] {
                let mut s = Search::new(config(root, sims, leaves)).expect("valid");
                s.set_game(&Game::new());
                let mut rng = SmallRng::seed_from_u64(sims as u64);
                let r = s
                    .run(&UniformEvaluator, sims, true, &mut rng)
                    .expect("uniform never fails")
                    .expect("live");
                assert_eq!(
                    r.visits.iter().sum::<u32>(),
                    sims,
                    "{root:?} {leaves} {sims}"
                );
                assert_eq!(r.sims, sims);
                let p: f32 = r.policy.iter().sum();
                assert!((p - 1.0).abs() < 1e-4, "policy sums to {p}");
            }
        }
    }
}

#[test]
fn batched_slots_each_spend_their_own_budget() {
    for root in ROOTS {
        let mut d = BatchedSearch::new(config(root, 40, 4), 6).expect("valid");
        for slot in 0..6 {
            d.set_params(
                slot,
                SlotParams {
                    sims: 5 + 17 * slot as u32,
                    noise: slot % 2 == 0,
                    temperature: slot % 3 == 0,
                },
            );
        }
        let mut rng = SmallRng::seed_from_u64(11);
        let results = d.search(&UniformEvaluator, &mut rng).expect("never fails");
        for (slot, r) in results.iter().enumerate() {
            let r = r.expect("live game");
            assert_eq!(r.visits.iter().sum::<u32>(), 5 + 17 * slot as u32);
            assert!(d.game(slot).legal_moves().contains(r.mv));
        }
    }
}

/// Counts the calls and the positions it is asked about.
struct Counting {
    calls: std::sync::atomic::AtomicUsize,
    max_batch: std::sync::atomic::AtomicUsize,
}

impl oware_search::Evaluator for Counting {
    fn evaluate(
        &self,
        positions: &[Position],
        out: &mut [oware_search::Evaluation],
    ) -> Result<(), oware_search::EvalError> {
        use std::sync::atomic::Ordering::Relaxed;
        assert!(!positions.is_empty());
        self.calls.fetch_add(1, Relaxed);
        self.max_batch.fetch_max(positions.len(), Relaxed);
        UniformEvaluator.evaluate(positions, out)
    }
}

#[test]
fn the_batched_driver_evaluates_all_trees_in_one_call_per_pass() {
    use std::sync::atomic::Ordering::Relaxed;
    let eval = Counting {
        calls: 0.into(),
        max_batch: 0.into(),
    };
    let mut d = BatchedSearch::new(config(RootAlgorithm::Puct, 32, 2), 64).expect("valid");
    let mut rng = SmallRng::seed_from_u64(2);
    d.search(&eval, &mut rng).expect("never fails");
    // 1 pass for the roots, then at least 16 (2 leaves per tree and pass, 32 sims).
    let calls = eval.calls.load(Relaxed);
    assert!((17..=40).contains(&calls), "{calls} calls");
    assert!(eval.max_batch.load(Relaxed) >= 64 * 2 - 8);
}

#[test]
fn batched_with_one_slot_and_one_leaf_matches_the_single_search() {
    for root in ROOTS {
        let cfg = config(root, 60, 1);
        let mut single = Search::new(cfg.clone()).expect("valid");
        let mut driver = BatchedSearch::new(cfg, 1).expect("valid");
        let mut rng_a = SmallRng::seed_from_u64(42);
        let mut rng_b = SmallRng::seed_from_u64(42);
        let mut game = Game::new();
        for _ in 0..12 {
            single.set_game(&game);
            let a = single
                .run(&UniformEvaluator, 60, true, &mut rng_a)
                .expect("uniform never fails")
                .expect("live");
            let b = driver
                .search(&UniformEvaluator, &mut rng_b)
                .expect("never fails")[0]
                .expect("live");
            assert_eq!(a, b, "{root:?} at ply {}", game.ply());
            game.play(a.mv).expect("legal");
            driver.advance(0, b.mv).expect("legal");
            if game.is_over() {
                break;
            }
        }
    }
}

#[test]
fn gumbel_spends_exactly_the_budget() {
    for (considered, interior) in
        (1..=6).flat_map(|m| [(m, InteriorRule::Puct), (m, InteriorRule::Gumbel)])
    {
        for leaves in [1, 2, 5] {
            for sims in [1, 3, 10, 16, 33, 100] {
                let cfg = MctsConfig {
                    gumbel_considered: considered,
                    gumbel_interior: interior,
                    ..config(RootAlgorithm::Gumbel, sims, leaves)
                };
                let mut s = Search::new(cfg).expect("valid");
                s.set_game(&Game::new());
                let mut rng = SmallRng::seed_from_u64(7);
                let r = s
                    .run(&UniformEvaluator, sims, true, &mut rng)
                    .expect("uniform never fails")
                    .expect("live");
                assert_eq!(
                    r.visits.iter().sum::<u32>(),
                    sims,
                    "m={considered} sims={sims}"
                );
                // Only considered actions are visited.
                let visited = r.visits.iter().filter(|&&v| v > 0).count();
                assert!(visited <= considered as usize);
            }
        }
    }
}

#[test]
fn subtree_reuse_keeps_the_childs_visits() {
    for root in ROOTS {
        let mut d = BatchedSearch::new(config(root, 300, 2), 1).expect("valid");
        let mut rng = SmallRng::seed_from_u64(9);
        let r = d.search(&UniformEvaluator, &mut rng).expect("never fails")[0].expect("live");
        let child_visits = r.visits[r.mv.relative()];
        assert!(child_visits > 2);
        d.advance(0, r.mv).expect("legal");
        // The child's own evaluation was one visit; its children hold the rest.
        assert_eq!(
            d.root_visits(0).iter().sum::<u32>(),
            child_visits - 1,
            "{root:?}"
        );
        d.set_params(0, SlotParams::exploring(50));
        let r2 = d.search(&UniformEvaluator, &mut rng).expect("never fails")[0].expect("live");
        assert_eq!(r2.visits.iter().sum::<u32>(), child_visits - 1 + 50);
        assert_eq!(r2.sims, 50);
    }
}

#[test]
fn set_game_reuses_the_tree_when_the_game_continues() {
    let mut s = Search::new(config(RootAlgorithm::Puct, 200, 1)).expect("valid");
    let mut game = Game::new();
    s.set_game(&game);
    let mut rng = SmallRng::seed_from_u64(1);
    let r = s
        .run(&UniformEvaluator, 200, false, &mut rng)
        .expect("uniform never fails")
        .expect("live");
    game.play(r.mv).expect("legal");
    let reply = game.legal_moves().get(0).expect("a move");
    game.play(reply).expect("legal");
    s.set_game(&game);
    let kept: u32 = s.root_visits().iter().sum();
    // Another game: the tree is forgotten.
    s.set_game(&Game::replay(["a"]).expect("legal"));
    assert_eq!(s.root_visits().iter().sum::<u32>(), 0);
    assert!(kept <= r.visits[r.mv.relative()]);
}

#[test]
fn finished_games_have_no_search() {
    let mut g = winning_capture();
    g.play(mv("f")).expect("legal");
    let mut s = Search::new(MctsConfig::default()).expect("valid");
    s.set_game(&g);
    let mut rng = SmallRng::seed_from_u64(1);
    assert!(
        s.run(&UniformEvaluator, 10, false, &mut rng)
            .expect("uniform never fails")
            .is_none()
    );
    let mut d = BatchedSearch::new(config(RootAlgorithm::Puct, 10, 1), 2).expect("valid");
    d.reset(1, g);
    let results = d.search(&UniformEvaluator, &mut rng).expect("never fails");
    assert!(results[0].is_some() && results[1].is_none());
    let mut rs = RolloutSearch::new(1.0);
    rs.set_game(d.game(1));
    assert!(rs.run(10, &mut rng).is_none());
}

#[test]
fn rollout_search_wins_at_once_and_counts_its_simulations() {
    let mut s = RolloutSearch::new(1.4);
    s.set_game(&winning_capture());
    let mut rng = SmallRng::seed_from_u64(1);
    let r = s.run(500, &mut rng).expect("live");
    assert_eq!(r.mv, mv("f"));
    assert_eq!(r.visits.iter().sum::<u32>(), 500);
    let mut s = RolloutSearch::new(1.4);
    s.set_game(&losing_move());
    let r = s.run(500, &mut rng).expect("live");
    assert_eq!(r.mv, mv("a"));
}

fn play_out(a: &mut dyn Player, b: &mut dyn Player) -> Game {
    let mut game = Game::new();
    a.new_game();
    b.new_game();
    while !game.is_over() {
        let p: &mut dyn Player = if game.to_move() == Side::South { a } else { b };
        let Choice { mv, .. } = p.choose(&game, Budget::default()).expect("a move");
        game.play(mv).expect("players choose legal moves");
    }
    game
}

#[test]
fn players_play_whole_games() {
    let mut rollout = RolloutMctsPlayer::new(60, 1.4, 1);
    let mut random = RandomPlayer::new(2);
    let g = play_out(&mut rollout, &mut random);
    assert!(g.result().is_some());
    let cfg = MctsConfig {
        sims: 24,
        leaves_per_tree: 4,
        ..MctsConfig::default()
    };
    let mut net = MctsPlayer::new(UniformEvaluator, cfg, 3).expect("valid");
    let g = play_out(&mut random, &mut net);
    assert!(g.result().is_some());
    let c = net
        .choose(
            &Game::new(),
            Budget {
                sims: Some(7),
                ..Budget::default()
            },
        )
        .expect("a move");
    assert!(c.value.is_some());
    assert!(c.info.starts_with("sims 7 "), "{}", c.info);
    let timed = Budget {
        millis: Some(5),
        ..Budget::default()
    };
    let mut rollout = RolloutMctsPlayer::new(60, 1.4, 1);
    let c = rollout.choose(&Game::new(), timed).expect("a move");
    assert!(Game::new().legal_moves().contains(c.mv));
    let sims: u32 = c
        .info
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("sims N");
    // The anytime search measures its rate on a first few simulations, then spends the rest
    // of the time in rounds: more than that first measurement in 5 ms.
    assert!(sims > 8, "{}", c.info);
}

#[test]
fn cheap_searches_keep_the_temperature_but_not_the_noise() {
    // 48 games at the start position, 8 simulations each: with the temperature the moves
    // differ from game to game, without it every game plays the same greedy move.
    for root in ROOTS {
        let distinct = |temperature: bool| {
            let mut d = BatchedSearch::new(config(root, 8, 1), 48).expect("valid");
            for slot in 0..48 {
                d.set_params(
                    slot,
                    SlotParams {
                        sims: 8,
                        noise: false,
                        temperature,
                    },
                );
            }
            let mut rng = SmallRng::seed_from_u64(5);
            let results = d.search(&UniformEvaluator, &mut rng).expect("uniform");
            let moves: std::collections::HashSet<_> =
                results.iter().map(|r| r.expect("live").mv).collect();
            moves.len()
        };
        assert_eq!(distinct(false), 1, "{root:?}: greedy without temperature");
        assert!(distinct(true) >= 3, "{root:?}: sampled with temperature");
    }
}

/// The uniform evaluator, failing on one call (counted from 0) as a diverged network would.
struct FailsOnCall {
    fail_on: usize,
    calls: std::sync::atomic::AtomicUsize,
}

impl oware_search::Evaluator for FailsOnCall {
    fn evaluate(
        &self,
        positions: &[Position],
        out: &mut [oware_search::Evaluation],
    ) -> Result<(), oware_search::EvalError> {
        let call = self
            .calls
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if call == self.fail_on {
            return Err(oware_search::EvalError::NonFinite {
                index: 0,
                what: "value",
            });
        }
        UniformEvaluator.evaluate(positions, out)
    }
}

#[test]
fn a_failing_evaluator_is_an_error_and_the_search_recovers() {
    let failing = |fail_on| FailsOnCall {
        fail_on,
        calls: 0.into(),
    };
    for root in ROOTS {
        // The batched driver passes the error on, then searches normally again.
        let mut d = BatchedSearch::new(config(root, 30, 2), 3).expect("valid");
        let mut rng = SmallRng::seed_from_u64(1);
        let eval = failing(3);
        let err = d
            .search(&eval, &mut rng)
            .expect_err("fails on the 4th call");
        assert!(matches!(err, oware_search::EvalError::NonFinite { .. }));
        let results = d.search(&eval, &mut rng).expect("recovers");
        for r in &results {
            assert_eq!(r.expect("live").visits.iter().sum::<u32>(), 30);
        }
        // A player reports it instead of making up a move.
        let mut p = MctsPlayer::new(failing(2), config(root, 30, 2), 1).expect("valid");
        let e = p
            .choose(&Game::new(), Budget::default())
            .expect_err("the evaluator fails");
        assert!(e.to_string().contains("not a finite number"), "{e}");
        let c = p.choose(&Game::new(), Budget::default()).expect("recovers");
        assert!(Game::new().legal_moves().contains(c.mv));
    }
}

#[test]
fn config_reads_from_toml_and_checks_its_ranges() {
    let cfg: MctsConfig = toml::from_str(
        "sims = 400\nroot = \"gumbel\"\ncpuct_form = \"growing\"\ndirichlet_alpha = 0.8\n",
    )
    .expect("valid toml");
    assert_eq!(cfg.sims, 400);
    assert_eq!(cfg.root, RootAlgorithm::Gumbel);
    assert_eq!(cfg.gumbel_c_visit, 50.0);
    cfg.validate().expect("in range");
    let text = toml::to_string(&cfg).expect("serializes");
    assert_eq!(
        toml::from_str::<MctsConfig>(&text).expect("round trip"),
        cfg
    );
    assert!(toml::from_str::<MctsConfig>("simz = 3").is_err());
    let bad = MctsConfig {
        dirichlet_frac: 1.5,
        ..MctsConfig::default()
    };
    let e = bad.validate().expect_err("out of range");
    assert_eq!(e.field, "dirichlet_frac");
    assert!(e.to_string().contains("mcts.dirichlet_frac"), "{e}");
    assert!(
        Search::new(MctsConfig {
            sims: 0,
            ..MctsConfig::default()
        })
        .is_err()
    );
}

#[test]
fn without_exploration_the_search_ignores_the_seed() {
    for root in ROOTS {
        let mut results = Vec::new();
        for seed in 0..3 {
            let mut s = Search::new(config(root, 80, 2)).expect("valid");
            s.set_game(&Game::new());
            let mut rng = SmallRng::seed_from_u64(seed);
            results.push(
                s.run(&UniformEvaluator, 80, false, &mut rng)
                    .expect("uniform never fails")
                    .expect("live"),
            );
        }
        assert!(results.windows(2).all(|w| w[0] == w[1]), "{root:?}");
    }
}

#[test]
fn the_temperature_applies_only_to_the_first_plies() {
    let mut moves = std::collections::HashSet::new();
    for seed in 0..40 {
        let mut s = Search::new(config(RootAlgorithm::Puct, 30, 1)).expect("valid");
        s.set_game(&Game::new());
        let mut rng = SmallRng::seed_from_u64(seed);
        moves.insert(
            s.run(&UniformEvaluator, 30, true, &mut rng)
                .expect("uniform never fails")
                .expect("live")
                .mv,
        );
    }
    assert!(moves.len() > 1, "exploration always chose {moves:?}");
    let cfg = MctsConfig {
        temperature_plies: 0,
        ..config(RootAlgorithm::Puct, 30, 1)
    };
    for seed in 0..20 {
        let mut s = Search::new(cfg.clone()).expect("valid");
        s.set_game(&Game::new());
        let mut rng = SmallRng::seed_from_u64(seed);
        let r = s
            .run(&UniformEvaluator, 30, true, &mut rng)
            .expect("uniform never fails")
            .expect("live");
        let most = *r.visits.iter().max().expect("six entries");
        assert_eq!(r.visits[r.mv.relative()], most);
    }
}

/// A prior that favours the mover's first house (`a`/`A`) strongly, value 0.
struct Skewed;

impl oware_search::Evaluator for Skewed {
    fn evaluate(
        &self,
        positions: &[Position],
        out: &mut [oware_search::Evaluation],
    ) -> Result<(), oware_search::EvalError> {
        for (p, o) in positions.iter().zip(out.iter_mut()) {
            let mut policy = [0.02f32; 6];
            policy[0] = 0.9;
            let legal = p.legal_moves();
            let mut masked = [0.0f32; 6];
            let mut sum = 0.0;
            for m in &legal {
                masked[m.relative()] = policy[m.relative()];
                sum += policy[m.relative()];
            }
            for x in &mut masked {
                *x /= sum.max(1e-9);
            }
            *o = oware_search::Evaluation {
                policy: masked,
                value: 0.0,
            };
        }
        Ok(())
    }
}

/// One noised (self-play) search of `sims` from the start with forced playouts `k`.
fn forced_search(k: f32, sims: u32) -> oware_search::mcts::MctsResult {
    let cfg = MctsConfig {
        sims,
        forced_playouts: k,
        dirichlet_frac: 0.0,
        reuse_tree: false,
        ..MctsConfig::default()
    };
    let mut d = BatchedSearch::new(cfg, 1).expect("valid");
    d.set_params(
        0,
        SlotParams {
            sims,
            noise: true,
            temperature: false,
        },
    );
    let mut rng = SmallRng::seed_from_u64(3);
    d.search(&Skewed, &mut rng).expect("never fails")[0].expect("live")
}

#[test]
fn forced_playouts_visit_every_child_and_the_target_takes_them_back() {
    let plain = forced_search(0.0, 400);
    let forced = forced_search(20.0, 400);
    for r in [&plain, &forced] {
        assert_eq!(r.visits.iter().sum::<u32>(), 400);
        assert!((r.policy.iter().sum::<f32>() - 1.0).abs() < 1e-5, "{r:?}");
    }
    // PUCT alone gives each low-prior child about its prior's share (8 of 400); with k = 20
    // each is forced to sqrt(20 · 0.02 · 400) ≈ 12.6 visits (all six houses are legal).
    for i in 1..6 {
        assert!(forced.visits[i] >= 12, "{forced:?}");
        assert!(forced.visits[i] > plain.visits[i], "{plain:?} {forced:?}");
        // The target gives the forced visits back: less than the child's visit share, about
        // what PUCT alone gave it.
        let share = forced.visits[i] as f32 / 400.0;
        assert!(forced.policy[i] < share, "{forced:?}");
        assert!(
            forced.policy[i] <= 1.5 * plain.policy[i],
            "{plain:?} {forced:?}"
        );
    }
    // The most visited child keeps all its visits: its target share grows.
    assert!(
        forced.policy[0] >= forced.visits[0] as f32 / 400.0,
        "{forced:?}"
    );
    // Without noise (evaluation, play) forced playouts change nothing.
    let cfg = MctsConfig {
        sims: 200,
        forced_playouts: 2.0,
        ..MctsConfig::default()
    };
    let quiet = |cfg: MctsConfig| {
        let mut s = Search::new(cfg).expect("valid");
        s.set_game(&Game::new());
        let mut rng = SmallRng::seed_from_u64(5);
        s.run(&Skewed, 200, false, &mut rng)
            .expect("never fails")
            .expect("live")
    };
    let off = MctsConfig {
        forced_playouts: 0.0,
        ..cfg.clone()
    };
    assert_eq!(quiet(cfg), quiet(off));
}
