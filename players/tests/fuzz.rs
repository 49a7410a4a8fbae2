//! Fuzz targets for the players crate's parsers of untrusted input: the engine protocol (the
//! real loop, in process) and player specs. Each runs over arbitrary input and over mutations
//! of valid input; the property is always: no panic, bounded memory, and an error that names
//! what is wrong. The `*_long` twins run the same targets for `OWARE_FUZZ_CASES` cases:
//! `cargo test --release -p oware-players --test fuzz -- --ignored`.

#[path = "../../engine/tests/fuzz_support/mod.rs"]
mod fuzz_support;

use fuzz_support::{long_cases, mutate_text, mutations, run};
use oware_engine::Game;
use oware_engine::bounds::{MAX_BATCH, MAX_DEPTH, MAX_MILLIS, MAX_SIMS, MAX_TT_MB};
use oware_players::protocol::Engine;
use oware_players::spec::{MctsEvaluator, PlayerSpec};
use oware_search::{Budget, Choice, Player, PlayerError, RandomPlayer};
use proptest::prelude::*;

/// A random player that checks what the protocol hands it: a live game and limits within
/// their bounds.
struct Checked(RandomPlayer);

impl Player for Checked {
    fn name(&self) -> String {
        "checked random".to_string()
    }

    fn choose(&mut self, game: &Game, limits: Budget) -> Result<Choice, PlayerError> {
        assert!(!game.is_over(), "go on a finished game reached the player");
        assert!(limits.sims.is_none_or(|s| (1..=MAX_SIMS).contains(&s)));
        assert!(limits.depth.is_none_or(|d| (1..=MAX_DEPTH).contains(&d)));
        assert!(limits.millis.is_none_or(|m| (1..=MAX_MILLIS).contains(&m)));
        self.0.choose(game, limits)
    }
}

/// The protocol property: the real loop answers every line with `bestmove m` (a legal move),
/// `readyok` or `error ...`, and never panics.
fn check_protocol(input: &[u8]) -> Result<(), TestCaseError> {
    let mut engine = Engine::new(Box::new(Checked(RandomPlayer::new(7))));
    let mut out = Vec::new();
    engine
        .serve(input, &mut out)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let out = String::from_utf8(out).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let lines = out.lines().count();
    prop_assert!(lines <= input.iter().filter(|&&b| b == b'\n').count() + 1);
    for line in out.lines() {
        prop_assert!(
            line == "readyok"
                || line.starts_with("error ")
                || line
                    .strip_prefix("bestmove ")
                    .is_some_and(|m| m.parse::<oware_engine::Move>().is_ok()),
            "unexpected answer {:?}",
            line
        );
    }
    Ok(())
}

/// One protocol command from the grammar, with values around the bounds.
fn command() -> impl Strategy<Value = String> {
    let number = prop_oneof![
        Just("0".to_string()),
        Just("1".to_string()),
        Just(MAX_SIMS.to_string()),
        Just((MAX_SIMS + 1).to_string()),
        Just(MAX_DEPTH.to_string()),
        Just(MAX_MILLIS.to_string()),
        Just(u64::MAX.to_string()),
        Just("18446744073709551616".to_string()),
        Just("-3".to_string()),
        Just("x".to_string()),
        (1..200u64).prop_map(|n| n.to_string()),
    ];
    let key = prop::sample::select(vec!["sims", "depth", "ms", "nodes", ""]);
    let go = prop::collection::vec((key, number), 0..3).prop_map(|pairs| {
        let mut s = "go".to_string();
        for (k, v) in pairs {
            // Timed and deep searches are skipped by the player, which ignores limits.
            s.push_str(&format!(" {k} {v}"));
        }
        s
    });
    let moves = prop::collection::vec(
        prop::sample::select(vec![
            "a", "b", "c", "d", "e", "f", "A", "B", "C", "D", "E", "F", "x",
        ]),
        0..40,
    )
    .prop_map(|m| format!("position startpos moves {}", m.join(" ")));
    prop_oneof![
        Just("newgame".to_string()),
        Just("isready".to_string()),
        Just("quit".to_string()),
        Just("position startpos".to_string()),
        Just("position fen x".to_string()),
        Just(String::new()),
        moves,
        go,
    ]
}

fn protocol(cases: u32) {
    run(
        "engine protocol (arbitrary bytes)",
        cases,
        prop::collection::vec(any::<u8>(), 0..400),
        |bytes| check_protocol(&bytes),
    );
    let script = (prop::collection::vec(command(), 0..20), mutations(4));
    run(
        "engine protocol (mutated scripts)",
        cases,
        script,
        |(commands, m)| {
            let text = commands.join("\n");
            check_protocol(text.as_bytes())?;
            check_protocol(mutate_text(&text, &m).as_bytes())
        },
    );
}

#[test]
fn fuzz_engine_protocol() {
    protocol(500);
}

#[test]
#[ignore = "long fuzz run: OWARE_FUZZ_CASES sets the case count"]
fn fuzz_engine_protocol_long() {
    protocol(long_cases());
}

/// The spec property: parsing never panics; a parsed spec is within every bound and prints
/// as a spec that parses back to it; an error names the spec and lists the valid forms.
fn check_spec(text: &str) -> Result<(), TestCaseError> {
    match text.parse::<PlayerSpec>() {
        Ok(spec) => {
            match &spec {
                PlayerSpec::AlphaBeta {
                    depth,
                    millis,
                    egtb,
                    eval,
                    tt_mb,
                    ..
                } => {
                    prop_assert!(depth.is_none_or(|d| (1..=MAX_DEPTH).contains(&d)));
                    prop_assert!(millis.is_none_or(|m| (1..=MAX_MILLIS).contains(&m)));
                    prop_assert!(egtb.as_ref().is_none_or(|d| !d.is_empty()));
                    prop_assert!(eval.as_ref().is_none_or(|e| !e.is_empty()));
                    prop_assert!(tt_mb.is_none_or(|m| (1..=MAX_TT_MB).contains(&m)));
                }
                PlayerSpec::Mcts(m) => {
                    prop_assert!(m.sims.is_none_or(|s| (1..=MAX_SIMS).contains(&s)));
                    prop_assert!(m.batch.is_none_or(|b| (1..=MAX_BATCH).contains(&b)));
                    if let MctsEvaluator::Model(path) = &m.evaluator {
                        prop_assert!(!path.is_empty());
                    }
                    prop_assert!(m.egtb.as_ref().is_none_or(|d| !d.is_empty()));
                }
                PlayerSpec::Random | PlayerSpec::Human => {}
            }
            let printed = spec.to_string();
            let again = printed.parse::<PlayerSpec>();
            prop_assert_eq!(again.as_ref(), Ok(&spec), "{} printed as {}", text, printed);
        }
        Err(e) => {
            let msg = e.to_string();
            prop_assert!(msg.contains(&format!("'{text}'")), "{}", msg);
            prop_assert!(msg.contains("valid forms"), "{}", msg);
        }
    }
    Ok(())
}

/// A spec from the grammar, with values around the bounds.
fn spec_text() -> impl Strategy<Value = String> {
    let value = prop_oneof![
        Just("0".to_string()),
        Just("1".to_string()),
        Just(MAX_SIMS.to_string()),
        Just((MAX_SIMS + 1).to_string()),
        Just(MAX_DEPTH.to_string()),
        Just((MAX_DEPTH + 1).to_string()),
        Just(MAX_MILLIS.to_string()),
        Just(MAX_BATCH.to_string()),
        Just(u64::MAX.to_string()),
        Just("1e9".to_string()),
        Just("NaN".to_string()),
        Just("inf".to_string()),
        Just("-0".to_string()),
        Just("0.5".to_string()),
        Just("runs/x,y".to_string()),
        Just(String::new()),
        (1..5000u32).prop_map(|n| n.to_string()),
    ];
    let key = prop::sample::select(vec![
        "depth", "ms", "sims", "batch", "c", "model", "rollouts", "nodes", "",
    ]);
    let option = prop_oneof![
        (key.clone(), value).prop_map(|(k, v)| format!("{k}={v}")),
        key.prop_map(str::to_string),
    ];
    let kind = prop::sample::select(vec![
        "alphabeta",
        "mcts",
        "random",
        "human",
        "",
        "AlphaBeta",
    ]);
    (kind, prop::option::of(prop::collection::vec(option, 0..4))).prop_map(|(k, o)| match o {
        None => k.to_string(),
        Some(opts) => format!("{k}:{}", opts.join(",")),
    })
}

fn specs(cases: u32) {
    run("player specs (arbitrary)", cases, any::<String>(), |s| {
        check_spec(&s)
    });
    run("player specs (grammar)", cases, spec_text(), |s| {
        check_spec(&s)
    });
    let valid = prop::sample::select(vec![
        "alphabeta:depth=8",
        "alphabeta:depth=12,ms=500",
        "mcts:rollouts,sims=1000,c=1.4",
        "mcts:model=runs/NAME,sims=400,batch=64",
        "random",
    ]);
    run(
        "player specs (mutated)",
        cases,
        (valid, mutations(3)),
        |(s, m)| check_spec(&mutate_text(s, &m)),
    );
}

#[test]
fn fuzz_player_specs() {
    specs(1000);
}

#[test]
#[ignore = "long fuzz run: OWARE_FUZZ_CASES sets the case count"]
fn fuzz_player_specs_long() {
    specs(long_cases());
}
