//! The message handling under arbitrary input (proptest, a few thousand cases): arbitrary
//! bytes, and valid messages with bytes flipped, cut or spliced. Whatever arrives, the server
//! answers (an error for anything that is not a valid request), never panics, and a game at
//! the table only ever changes by legal moves.

use oware_engine::Game;
use oware_web::ServeConfig;
use oware_web::ai::Roster;
use oware_web::hub::Hub;
use oware_web::protocol::{self, Reply};
use oware_web::session::{Outbound, Session};
use proptest::prelude::*;
use serde_json::Value;
use std::net::IpAddr;
use std::sync::{Arc, OnceLock};
use tokio::sync::mpsc;

/// Valid messages of every kind, to mutate.
const VALID: &[&str] = &[
    r#"{"type":"move","house":"c"}"#,
    r#"{"type":"move","house":"A","id":3}"#,
    r#"{"type":"new_ai","ai":0,"side":"south"}"#,
    r#"{"type":"new_local"}"#,
    r#"{"type":"create_room","side":"random"}"#,
    r#"{"type":"join_room","code":"ABCDEF"}"#,
    r#"{"type":"watch","code":"K7PQ2M"}"#,
    r#"{"type":"resume","token":"00112233445566778899aabbccddeeff"}"#,
    r#"{"type":"hint"}"#,
    r#"{"type":"undo"}"#,
    r#"{"type":"resign"}"#,
    r#"{"type":"offer_draw"}"#,
    r#"{"type":"accept_draw"}"#,
    r#"{"type":"decline_draw"}"#,
    r#"{"type":"rematch"}"#,
    r#"{"type":"review","record":"c F a\t1-0"}"#,
    r#"{"type":"leave"}"#,
    r#"{"type":"ping","id":18446744073709551615}"#,
];

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a runtime")
    })
}

/// A fresh hub (so no limit of an earlier case is in the way) and a session on it.
fn session() -> (Session, mpsc::Receiver<Outbound>) {
    let addr = "127.0.0.1:0".parse().expect("address");
    let config = ServeConfig::new(addr, vec!["random".to_string()]);
    let roster = Roster::load(&config.ais, "alphabeta:depth=1", None).expect("players");
    let hub = Arc::new(Hub::new(config, roster, Default::default()));
    let (tx, rx) = mpsc::channel(1024);
    let ip: IpAddr = "127.0.0.1".parse().expect("ip");
    (Session::new(hub, ip, tx), rx)
}

fn mutate(base: &str, edits: &[(usize, u8, u8)]) -> Vec<u8> {
    let mut bytes = base.as_bytes().to_vec();
    for &(pos, op, byte) in edits {
        if bytes.is_empty() {
            bytes.push(byte);
            continue;
        }
        let i = pos % bytes.len();
        match op % 4 {
            0 => bytes[i] = byte,
            1 => {
                bytes.remove(i);
            }
            2 => bytes.insert(i, byte),
            _ => bytes.truncate(i),
        }
    }
    bytes
}

/// Sends `text`; checks the answer: at least one reply, an error first when the text is no
/// valid request.
fn check(session: &mut Session, text: &str) -> Result<(), TestCaseError> {
    let valid = protocol::parse(text).is_ok();
    let replies = session.handle(text);
    if !valid {
        prop_assert!(!replies.is_empty(), "no answer to {text:?}");
        prop_assert!(
            matches!(replies[0].reply, Reply::Error(_)),
            "{text:?}: {:?}",
            replies[0]
        );
    }
    for r in &replies {
        let json: Value = serde_json::from_str(&r.to_json()).expect("replies are JSON");
        prop_assert!(json["type"].is_string());
    }
    Ok(())
}

/// The session's table is a legal game: its moves replay, to its board.
fn check_table(session: &Session) -> Result<(), TestCaseError> {
    if let Some(view) = session.table_view() {
        let moves: Vec<String> = view.moves.iter().map(char::to_string).collect();
        let game = Game::replay(moves.iter().map(String::as_str));
        prop_assert!(game.is_ok(), "{moves:?}");
        if let Ok(game) = game {
            prop_assert_eq!(game.position().board(), &view.position.board);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_get_an_error_reply(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let _rt = runtime().enter();
        let (mut s, _rx) = session();
        let text = String::from_utf8_lossy(&bytes);
        check(&mut s, &text)?;
        let binary = s.handle_binary();
        prop_assert!(matches!(binary.reply, Reply::Error(_)));
    }

    #[test]
    fn mutated_messages_never_break_a_game(
        script in proptest::collection::vec(
            (0..VALID.len(), proptest::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 0..4)),
            1..12,
        )
    ) {
        let _rt = runtime().enter();
        let (mut s, _rx) = session();
        // Sit at a game on one device first, so moves, undos and resignations act on it.
        prop_assert_eq!(s.handle(r#"{"type":"new_local"}"#).len(), 2);
        for (base, edits) in script {
            let bytes = mutate(VALID[base], &edits);
            check(&mut s, &String::from_utf8_lossy(&bytes))?;
            check_table(&s)?;
        }
    }
}

/// A game on one device fed legal moves with garbage between them: the garbage is refused,
/// every legal move lands, and the table holds the game played here.
#[test]
fn garbage_between_moves_changes_nothing() {
    let _rt = runtime().enter();
    let (mut s, _rx) = session();
    s.handle(r#"{"type":"new_local"}"#);
    let junk = [
        "",
        "{}",
        "[]",
        "\"move\"",
        r#"{"type":"move","house":"g"}"#,
        r#"{"type":"move","house":["a"]}"#,
        r#"{"type":"move","house":"é"}"#,
        r#"{"type":"accept_draw"}"#,
        r#"{"type":"decline_draw"}"#,
    ];
    let deep = "[".repeat(10_000);
    let mut game = Game::new();
    let mut rng = 12345u64;
    // 18 plies and a piece of garbage each: within the message burst of one connection.
    for ply in 0..18 {
        let j = if ply == 17 {
            deep.as_str()
        } else {
            junk[ply % junk.len()]
        };
        let replies = s.handle(j);
        assert!(
            matches!(replies.first().map(|r| &r.reply), Some(Reply::Error(_))),
            "{j:.20}"
        );
        let legal = game.legal_moves();
        rng = rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let mv = legal.as_slice()[(rng >> 33) as usize % legal.len()];
        let replies = s.handle(&format!(r#"{{"type":"move","house":"{mv}"}}"#));
        assert!(
            replies.is_empty(),
            "a legal move is answered by the state: {replies:?}"
        );
        game.play(mv).expect("legal");
    }
    let view = s.table_view().expect("at a table");
    assert_eq!(
        view.moves,
        game.moves().iter().map(|m| m.letter()).collect::<Vec<_>>()
    );
    assert_eq!(&view.position.board, game.position().board());
}
