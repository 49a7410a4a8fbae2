//! `oware serve --egtb DIR`: the tables load once (a bad directory is an error naming it), the
//! page learns their size, and a review marks the move that threw away a proven result.

use super::server::Server;
use crate::common::{oware, scratch, text};
use oware_egtb::{Tables, judge};
use oware_engine::{Game, Move};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde_json::json;
use std::path::Path;

/// The largest tables the test builds (a second or two).
pub(super) const SEEDS: u8 = 8;

/// Builds the tables of up to [`SEEDS`] seeds with the binary into a scratch directory named
/// after `test`, and loads them.
pub(super) fn built_tables(test: &str) -> (std::path::PathBuf, Tables) {
    let tb = scratch(test).join("tb");
    let tb_arg = tb.to_str().expect("utf-8");
    let built = oware(&[
        "egtb",
        "build",
        "--max-seeds",
        &SEEDS.to_string(),
        "--egtb",
        tb_arg,
        // The seventh and eighth tables' exact searches (minutes) are not what these tests
        // are about.
        "--exact-up-to",
        "6",
    ]);
    assert!(built.status.success(), "{}", text(&built));
    let tables = Tables::load(Path::new(&tb)).expect("the built tables");
    (tb, tables)
}

/// A record line of `moves`.
pub(super) fn record(moves: &[Move]) -> String {
    moves
        .iter()
        .map(|m| m.letter().to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A game from the start, played at random until a live position of at most `SEEDS` seeds
/// where some move throws away a result the tables prove, then that move: its moves and the
/// move's number. Random games rarely get there, so many are tried.
pub(super) fn game_with_a_table_blunder(tables: &Tables) -> (Vec<Move>, usize) {
    let mut rng = SmallRng::seed_from_u64(7);
    for _ in 0..20_000 {
        let mut game = Game::new();
        while !game.is_over() {
            let seeds: u32 = game.position().board().iter().map(|&s| u32::from(s)).sum();
            if seeds <= u32::from(SEEDS)
                && let Some(a) = tables.analyse(&game)
                && let Some(m) = a
                    .moves
                    .iter()
                    .find(|m| judge(&a, m.mv).is_some_and(|v| v.keeps_result == Some(false)))
            {
                game.play(m.mv).expect("legal");
                return (game.moves().to_vec(), game.moves().len());
            }
            let legal = game.legal_moves();
            let mv = legal.as_slice()[rng.random_range(0..legal.as_slice().len())];
            game.play(mv).expect("legal");
        }
    }
    panic!("no random game reached a table position with a losing move");
}

/// A server whose AI and review player are `alphabeta:depth=2`, with the tables of `dir`.
pub(super) fn server_with_tables(dir: &Path) -> Server {
    Server::start(&[
        "--ai",
        "alphabeta:depth=2",
        "--analysis",
        "alphabeta:depth=2",
        "--egtb",
        dir.to_str().expect("utf-8"),
    ])
}

#[test]
fn a_missing_table_directory_is_an_error_naming_it() {
    let dir = scratch("serve-no-tables").join("nothing-here");
    let o = oware(&[
        "serve",
        "--addr",
        "127.0.0.1:0",
        "--ai",
        "random",
        "--egtb",
        dir.to_str().expect("utf-8"),
    ]);
    assert!(!o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("nothing-here"), "{}", text(&o));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_review_marks_the_move_that_threw_a_proven_result_away() {
    let (tb, tables) = built_tables("serve-tables");
    let (moves, blunder) = game_with_a_table_blunder(&tables);
    let server = server_with_tables(&tb);
    let (status, _, body) = server.get("/api/info");
    assert_eq!(status, 200);
    let info: serde_json::Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(info["endgame_tables"]["max_seeds"], u64::from(SEEDS));

    let record = record(&moves);
    let mut c = server.client().await;
    c.send(json!({"type": "review", "record": record})).await;
    c.expect("review").await;
    let analysis = c.expect("analysis").await;
    let marks = analysis["table_marks"].as_array().expect("table_marks");
    let ours = marks
        .iter()
        .find(|m| m["move"] == blunder as u64)
        .unwrap_or_else(|| panic!("move {blunder} not marked: {marks:?}"));
    assert_eq!(
        ours["letter"],
        moves[blunder - 1].letter().to_string(),
        "{ours}"
    );
    for m in marks {
        let pair = (m["from"].as_str(), m["to"].as_str());
        assert!(
            matches!(
                pair,
                (Some("win"), Some("draw" | "loss")) | (Some("draw"), Some("loss"))
            ),
            "{m}"
        );
    }
    // Without tables the same review marks nothing.
    let plain = Server::start(&["--ai", "random", "--analysis", "alphabeta:depth=2"]);
    let mut c = plain.client().await;
    c.send(json!({"type": "review", "record": record})).await;
    c.expect("review").await;
    let analysis = c.expect("analysis").await;
    assert_eq!(analysis["table_marks"], json!([]));
}
