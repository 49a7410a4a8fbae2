//! The HTTP routes and the WebSocket protocol, against the built binary.

use super::server::{Server, moves_line, replay_fields, replay_json};
use serde_json::{Value, json};
use std::time::Duration;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

fn legal(state: &Value) -> Vec<String> {
    state["legal"]
        .as_array()
        .expect("legal")
        .iter()
        .map(|m| m.as_str().expect("letter").to_string())
        .collect()
}

#[test]
fn http_serves_the_page_its_files_and_info() {
    let server = Server::start(&["--ai", "alphabeta:depth=2", "--ai", "random"]);
    let (status, ctype, body) = server.get("/");
    assert_eq!(status, 200);
    assert!(ctype.starts_with("text/html"), "{ctype}");
    assert!(body.contains("<title>Oware</title>") && body.contains("/app.js"));
    for (path, kind) in [
        ("/app.js", "text/javascript"),
        ("/style.css", "text/css"),
        ("/favicon.svg", "image/svg+xml"),
    ] {
        let (status, ctype, body) = server.get(path);
        assert_eq!(
            (status, ctype.starts_with(kind)),
            (200, true),
            "{path}: {ctype}"
        );
        assert!(body.len() > 100, "{path}");
    }
    let (status, _, body) = server.get("/api/info");
    assert_eq!(status, 200);
    let info: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(info["ais"][0]["spec"], "alphabeta:depth=2");
    assert_eq!(info["ais"][1]["spec"], "random");
    assert_eq!(info["limits"]["max_message_bytes"], 8192);
    assert_eq!(server.get("/no/such/page").0, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreign_origin_cannot_open_a_websocket() {
    let server = Server::start(&["--ai", "random"]);
    let mut request = format!("ws://{}/ws", server.addr)
        .into_client_request()
        .expect("request");
    request
        .headers_mut()
        .insert("Origin", "http://evil.example".parse().expect("header"));
    let refused = tokio_tungstenite::connect_async(request).await;
    assert!(refused.is_err(), "a cross-origin upgrade must be refused");
    let mut ok = format!("ws://{}/ws", server.addr)
        .into_client_request()
        .expect("request");
    let origin = format!("http://{}", server.addr);
    ok.headers_mut()
        .insert("Origin", origin.parse().expect("header"));
    assert!(tokio_tungstenite::connect_async(ok).await.is_ok());
}

/// A whole game against `alphabeta:depth=2`, with a hint, an undo and a review; every state
/// agrees with `oware replay --json`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_game_against_the_ai() {
    let server = Server::start(&["--ai", "alphabeta:depth=2"]);
    let mut c = server.client().await;
    let (joined, mut state) = c
        .join(json!({"type": "new_ai", "ai": 0, "side": "south"}))
        .await;
    assert_eq!(joined["kind"], "ai");
    assert_eq!(joined["seat"], "south");
    assert!(joined["token"].as_str().expect("token").len() >= 32);
    assert_eq!(state["seats"][1]["player"], "ai");

    c.send(json!({"type": "hint", "id": 5})).await;
    let hint = c.expect("hint").await;
    assert_eq!(hint["id"], 5);
    assert!(legal(&state).contains(&hint["move"].as_str().expect("move").to_string()));
    assert!(
        hint["value"]
            .as_f64()
            .is_some_and(|v| (-1.0..=1.0).contains(&v))
    );

    // Two moves and their replies, then undo: back to one pair.
    for ply in [0u64, 2] {
        let mv = legal(&state)[0].clone();
        c.play(&mv, ply + 1).await;
        state = c
            .state_where(|s| s["ply"] == ply + 2 && s["ai_thinking"] == false)
            .await;
        assert_eq!(state["to_move"], "south");
    }
    c.send(json!({"type": "undo"})).await;
    state = c.state_at(2).await;
    assert_eq!(state["moves"].as_array().map(Vec::len), Some(2));

    let mut n = 0;
    while state["terminal"] == false {
        assert_eq!(state["to_move"], "south", "{state}");
        let moves = legal(&state);
        let mv = &moves[n % moves.len()];
        n += 1;
        let ply = state["ply"].as_u64().expect("ply");
        // At a person's pace: the AI answers in a millisecond, and more than 20 messages a
        // second would be rate limited.
        tokio::time::sleep(Duration::from_millis(50)).await;
        c.send(json!({"type": "move", "house": mv})).await;
        state = c
            .state_where(|s| {
                s["terminal"] == true
                    || (s["ply"].as_u64() > Some(ply + 1) && s["ai_thinking"] == false)
            })
            .await;
    }
    let line = moves_line(&state);
    let replay = replay_json(&line);
    let states = replay["states"].as_array().expect("states");
    assert_eq!(
        replay_fields(&state),
        states[states.len() - 1],
        "final state"
    );
    assert!(state["ending"].as_str().is_some_and(|e| !e.is_empty()));
    assert!(
        state["record"]
            .as_str()
            .expect("record")
            .starts_with(&format!("{line}\t"))
    );
    c.send(json!({"type": "move", "house": "a"})).await;
    c.expect_error("game_over").await;

    // The review: every state as oware replay gives it, then an evaluation per state.
    c.send(json!({"type": "review", "record": state["record"]}))
        .await;
    let review = c.expect("review").await;
    assert_eq!(&review["states"], &replay["states"]);
    let analysis = c.expect("analysis").await;
    let evals = analysis["evals"].as_array().expect("evals");
    assert_eq!(evals.len(), states.len());
    let turning = analysis["turning_point"].as_u64().expect("a turning point");
    assert!(turning >= 1 && turning < states.len() as u64);
    // A new game at the same table.
    c.send(json!({"type": "rematch"})).await;
    c.state_at(0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn as_north_the_ai_opens() {
    let server = Server::start(&["--ai", "alphabeta:depth=2"]);
    let mut c = server.client().await;
    let (_, state) = c
        .join(json!({"type": "new_ai", "ai": 0, "side": "north"}))
        .await;
    assert_eq!(state["to_move"], "south");
    let state = c.state_at(1).await;
    assert_eq!(state["to_move"], "north");
    assert_eq!(state["last"]["side"], "south");
    assert_eq!(state["can_undo"], false, "nothing of North's to undo");
    c.send(json!({"type": "move", "house": "a"})).await;
    let e = c.expect_error("illegal_move").await;
    assert_eq!(e["reason"], "other-row");
    c.send(json!({"type": "new_ai", "ai": 3, "side": "north"}))
        .await;
    c.expect_error("bad_message").await;
}

/// Two friends in a room, a watcher, wrong seats, bad messages, a reconnect, a draw agreed,
/// a rematch with the sides swapped, and a resignation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_room_game_between_two_clients() {
    let server = Server::start(&["--ai", "random"]);
    let mut host = server.client().await;
    let (joined, _) = host
        .join(json!({"type": "create_room", "side": "south"}))
        .await;
    // Players get the join code (room code, a dash, the join key): a seat needs all of it.
    let code = joined["code"].as_str().expect("code").to_string();
    assert_eq!(code.len(), 15, "{code}");
    assert_eq!(joined["link"], format!("/?room={code}"));
    assert_eq!(joined["seat"], "south");
    let host_token = joined["token"].as_str().expect("token").to_string();
    assert_ne!(
        host_token, code,
        "the seat is held by a secret, not by the code"
    );

    let mut guest = server.client().await;
    let (joined, _) = guest
        .join(json!({"type": "join_room", "code": code.to_lowercase()}))
        .await;
    assert_eq!(joined["seat"], "north");
    let guest_token = joined["token"].as_str().expect("token").to_string();
    host.state_where(|s| s["seats"][1]["connected"] == true)
        .await;

    let mut watcher = server.client().await;
    let (joined, _) = watcher.join(json!({"type": "watch", "code": code})).await;
    assert_eq!(joined["seat"], "watcher");
    assert!(joined.get("token").is_none());
    let mut third = server.client().await;
    third.send(json!({"type": "join_room", "code": code})).await;
    third.expect_error("room_full").await;

    // Wrong seats and bad messages change nothing.
    watcher.send(json!({"type": "move", "house": "c"})).await;
    watcher.expect_error("not_your_seat").await;
    guest.send(json!({"type": "move", "house": "A"})).await;
    guest.expect_error("not_your_turn").await;
    host.send(json!({"type": "move", "house": "A", "id": 9}))
        .await;
    let e = host.expect_error("illegal_move").await;
    assert_eq!(
        (e["reason"].as_str(), e["id"].as_u64()),
        (Some("other-row"), Some(9))
    );
    for bad in [
        "{",
        "null",
        r#"{"type":"move"}"#,
        r#"{"type":"move","house":"cc"}"#,
        r#"{"type":"warp"}"#,
    ] {
        host.send_text(bad).await;
        host.expect_error("bad_message").await;
    }
    host.send_message(Message::Binary(vec![1, 2, 3].into()))
        .await;
    host.expect_error("bad_message").await;
    host.send(json!({"type": "hint"})).await;
    host.expect_error("not_allowed").await;

    // Both players and the watcher see every move.
    host.play("c", 1).await;
    guest.state_at(1).await;
    watcher.state_at(1).await;
    guest.play("F", 2).await;
    host.state_at(2).await;

    // The guest drops; the host sees the seat empty; the guest comes back to the same seat.
    drop(guest);
    host.state_where(|s| s["seats"][1]["connected"] == false)
        .await;
    let mut guest = server.client().await;
    let (joined, state) = guest
        .join(json!({"type": "resume", "token": guest_token}))
        .await;
    assert_eq!(joined["seat"], "north");
    assert_eq!(state["moves"], json!(["c", "F"]));
    host.state_where(|s| s["seats"][1]["connected"] == true)
        .await;
    let mut bad = server.client().await;
    bad.send(json!({"type": "resume", "token": "0123456789abcdef0123456789abcdef"}))
        .await;
    bad.expect_error("not_found").await;

    // A draw offered and declined, offered again and accepted.
    host.play("a", 3).await;
    guest.send(json!({"type": "offer_draw"})).await;
    host.state_where(|s| s["draw_offer"] == "north").await;
    host.send(json!({"type": "decline_draw"})).await;
    let notice = host.expect("notice").await;
    assert!(notice["text"].as_str().expect("text").contains("declined"));
    guest.send(json!({"type": "offer_draw"})).await;
    host.state_where(|s| s["draw_offer"] == "north").await;
    watcher.send(json!({"type": "accept_draw"})).await;
    watcher.expect_error("not_your_seat").await;
    host.send(json!({"type": "accept_draw"})).await;
    let end = guest.state_where(|s| s["terminal"] == true).await;
    assert_eq!(
        end["result"],
        json!({"winner": "draw", "reason": "agreement"})
    );
    assert!(
        end["record"]
            .as_str()
            .expect("record")
            .starts_with("c F a\t1/2-1/2 agreement")
    );
    watcher.state_where(|s| s["terminal"] == true).await;

    // A rematch: both ask, the sides swap; then the host (now North) resigns.
    host.send(json!({"type": "rematch"})).await;
    guest.state_where(|s| s["rematch_offer"] == "south").await;
    guest.send(json!({"type": "rematch"})).await;
    let fresh = host
        .state_where(|s| s["ply"] == 0 && s["terminal"] == false)
        .await;
    assert_eq!(fresh["moves"], json!([]));
    host.send(json!({"type": "move", "house": "a"})).await;
    host.expect_error("not_your_turn").await;
    guest.play("d", 1).await;
    host.send(json!({"type": "resign"})).await;
    let end = guest.state_where(|s| s["terminal"] == true).await;
    assert_eq!(
        end["result"],
        json!({"winner": "south", "reason": "resignation"})
    );
    assert_eq!(end["ending"], "North resigned: South wins");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_rooms_and_connections_expire() {
    let server = Server::start(&["--ai", "random", "--idle-timeout", "1"]);
    let mut host = server.client().await;
    let (joined, _) = host
        .join(json!({"type": "create_room", "side": "random"}))
        .await;
    let code = joined["code"].as_str().expect("code").to_string();
    // The room expires, and so does the host's silent connection (whichever comes first).
    host.expect_error("expired").await;
    // The sweep runs four times per idle limit: give it two rounds.
    tokio::time::sleep(Duration::from_millis(600)).await;
    let mut late = server.client().await;
    late.send(json!({"type": "join_room", "code": code})).await;
    late.expect_error("not_found").await;
    // A connection that says nothing is closed.
    let code = late.close_code().await;
    assert_eq!(code, Some(1000));
    let (_, _, info) = server.get("/api/info");
    let info: Value = serde_json::from_str(&info).expect("JSON");
    assert_eq!(info["open"]["rooms"], 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limits_on_rooms_games_connections_messages_and_guesses() {
    let server = Server::start(&[
        "--ai",
        "random",
        "--max-rooms",
        "2",
        "--max-games",
        "1",
        "--max-connections",
        "8",
    ]);
    let mut a = server.client().await;
    let mut b = server.client().await;
    a.join(json!({"type": "create_room", "side": "south"}))
        .await;
    b.join(json!({"type": "create_room", "side": "north"}))
        .await;
    let mut c = server.client().await;
    c.send(json!({"type": "create_room", "side": "south"}))
        .await;
    c.expect_error("limit").await;
    c.join(json!({"type": "new_local"})).await;
    // Replacing one's own game does not count twice.
    c.join(json!({"type": "new_local"})).await;
    let mut d = server.client().await;
    d.send(json!({"type": "new_ai", "ai": 0, "side": "south"}))
        .await;
    d.expect_error("limit").await;

    // Message size: a long message gets an error reply, a huge one closes the connection.
    d.send_text(&format!(
        r#"{{"type":"review","record":"{}"}}"#,
        "c ".repeat(6000)
    ))
    .await;
    d.expect_error("too_large").await;
    d.send(json!({"type": "ping", "id": 1})).await;
    assert_eq!(d.expect("pong").await["id"], 1);
    d.send_text(&"x".repeat(100_000)).await;
    assert_eq!(d.close_code().await, Some(1009));

    // A flood of messages is slowed down.
    let mut limited = 0;
    for _ in 0..80 {
        a.send(json!({"type": "ping"})).await;
    }
    for _ in 0..80 {
        let m = a.next().await.expect("a reply to each");
        if m["code"] == "rate_limited" {
            limited += 1;
        }
    }
    assert!(limited > 20, "{limited} of 80 rate limited");

    // Guessing room codes is rate-limited per address.
    let mut g = server.client().await;
    let mut codes = Vec::new();
    for i in 0..14 {
        g.send(json!({"type": "join_room", "code": format!("ZZZZ{}{}", (b'A' + i / 8) as char, 2 + i % 8)}))
            .await;
        codes.push(g.expect("error").await["code"].clone());
    }
    assert_eq!(codes[0], "not_found");
    assert_eq!(codes[13], "rate_limited", "{codes:?}");

    // Connections: past the limit the upgrade is refused.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut open = Vec::new();
    let mut refused = false;
    for _ in 0..10 {
        match tokio_tungstenite::connect_async(format!("ws://{}/ws", server.addr)).await {
            Ok((ws, _)) => open.push(ws),
            Err(_) => {
                refused = true;
                break;
            }
        }
    }
    assert!(refused, "more than 8 connections were accepted");
    assert!(open.len() <= 4, "{} more connections accepted", open.len());
}
