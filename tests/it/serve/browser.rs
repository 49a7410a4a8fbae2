//! The page in a real headless Chromium, driven over WebDriver (chromedriver): a game against
//! `alphabeta:depth=2` played by clicking houses and checked against `oware replay --json`,
//! its review, and a room game between two browsers. The board's screenshot goes to
//! `docs/serve-board.png` when `OWARE_UPDATE_SCREENSHOT=1` (else to the temporary folder).
//!
//! Chromium comes from Debian's `chromium` and `chromium-driver` packages (`.ci/run` installs
//! them); without them these tests say so loudly and skip.

use super::server::{Server, replay_json};
use crate::common::scratch;
use fantoccini::{Client, ClientBuilder, Locator};
use image::GenericImageView;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
/// How long the page may take for any one thing.
const PATIENCE: Duration = Duration::from_secs(30);

/// A running chromedriver, stopped when dropped.
struct Driver {
    child: Child,
    port: u16,
    profiles: PathBuf,
    sessions: usize,
}

impl Driver {
    /// Starts chromedriver, or `None` (with a loud message) when Chromium is not installed.
    fn start(test: &str) -> Option<Driver> {
        if !Path::new(CHROMIUM).exists() || !Path::new(CHROMEDRIVER).exists() {
            crate::common::missing_service(&format!(
                "{test}: {CHROMIUM} or {CHROMEDRIVER} is missing; install Debian's chromium and \
                 chromium-driver (.ci/run does)"
            ));
            return None;
        }
        let port = crate::common::free_port();
        let child = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starts chromedriver");
        let deadline = Instant::now() + PATIENCE;
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "chromedriver did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(Driver {
            child,
            port,
            profiles: scratch(&format!("chromium-{test}")),
            sessions: 0,
        })
    }

    /// A new browser with a fresh profile (its own storage: a separate person).
    async fn browser(&mut self, width: u32, height: u32) -> Client {
        self.sessions += 1;
        let profile = self.profiles.join(format!("profile-{}", self.sessions));
        let caps = json!({
            "goog:chromeOptions": {
                "binary": CHROMIUM,
                "args": [
                    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                    "--no-first-run", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
                    format!("--user-data-dir={}", profile.display()),
                    format!("--window-size={width},{height}"),
                ]
            }
        });
        let caps = caps.as_object().expect("an object").clone();
        ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(caps)
            .connect(&format!("http://127.0.0.1:{}", self.port))
            .await
            .expect("a Chromium session")
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        // chromedriver may be gone already; stopping it is all that is left to do.
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.profiles);
    }
}

/// Evaluates a JavaScript expression in the page.
async fn js(b: &Client, expr: &str) -> Value {
    b.execute(&format!("return ({expr});"), vec![])
        .await
        .unwrap_or_else(|e| panic!("{expr}: {e}"))
}

/// Waits until the expression is true.
async fn until(b: &Client, expr: &str) {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if js(b, expr).await == json!(true) {
            return;
        }
        if Instant::now() > deadline {
            let status = js(b, "document.getElementById('status').textContent").await;
            let notice = js(b, "document.getElementById('notice').textContent").await;
            panic!("waited too long for {expr} (status {status}, notice {notice})");
        }
        tokio::time::sleep(Duration::from_millis(40)).await;
    }
}

async fn click(b: &Client, css: &str) {
    b.find(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css}: {e}"))
        .click()
        .await
        .unwrap_or_else(|e| panic!("click {css}: {e}"));
}

async fn text(b: &Client, id: &str) -> String {
    js(b, &format!("document.getElementById('{id}').textContent"))
        .await
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The board as drawn: the count shown in each house, in canonical order a..f A..F, and the
/// two captured totals.
async fn drawn_board(b: &Client) -> (Vec<u64>, [u64; 2]) {
    let board = js(
        b,
        "'abcdefABCDEF'.split('').map(h => Number(document.querySelector(`.house[data-house=\"${h}\"] .count`).textContent))",
    )
    .await;
    let board = board
        .as_array()
        .expect("counts")
        .iter()
        .map(|v| v.as_u64().expect("count"))
        .collect();
    let south = text(b, "captured-south").await.parse().expect("number");
    let north = text(b, "captured-north").await.parse().expect("number");
    (board, [south, north])
}

/// The move list as drawn.
async fn drawn_moves(b: &Client) -> String {
    js(
        b,
        "[...document.querySelectorAll('#moves .mv')].map(e => e.textContent).join(' ')",
    )
    .await
    .as_str()
    .expect("moves")
    .to_string()
}

fn as_u64s(v: &Value) -> Vec<u64> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_u64().expect("number"))
        .collect()
}

/// Opens the review panel and loads the game record `file` through its file input.
async fn review_file(b: &Client, file: &Path) {
    click(b, "#modes button[data-panel='review']").await;
    b.find(Locator::Css("#record-file"))
        .await
        .expect("file input")
        .send_keys(&file.display().to_string())
        .await
        .expect("chooses the file");
}

/// Where the board's screenshot goes.
fn screenshot_path(name: &str) -> PathBuf {
    if std::env::var_os("OWARE_UPDATE_SCREENSHOT").is_some_and(|v| v == "1") {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("docs")
            .join(name)
    } else {
        std::env::temp_dir().join(name)
    }
}

/// Saves a screenshot and checks it is a PNG of the window's size.
async fn screenshot(b: &Client, path: &Path) {
    let png = b.screenshot().await.expect("a screenshot");
    let img = image::load_from_memory(&png).expect("a PNG");
    assert!(img.width() >= 400 && img.height() >= 300);
    std::fs::write(path, &png).expect("writes the screenshot");
    eprintln!("screenshot: {}", path.display());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn browser_plays_the_ai_by_clicking_and_reviews_the_game() {
    let Some(mut driver) = Driver::start("browser-ai") else {
        return;
    };
    let server = Server::start(&["--ai", "alphabeta:depth=2"]);
    let b = driver.browser(1100, 820).await;
    b.goto(&server.url("/")).await.expect("loads the page");
    until(
        &b,
        "document.querySelectorAll('#ai-select option').length === 1",
    )
    .await;
    until(
        &b,
        "document.getElementById('conn').textContent === 'connected'",
    )
    .await;
    click(&b, "#start-ai").await;
    until(
        &b,
        "document.body.dataset.view === 'game' && document.body.dataset.turn === 'mine'",
    )
    .await;
    let (board, captured) = drawn_board(&b).await;
    assert_eq!((board, captured), (vec![4; 12], [0, 0]));

    // A tap on the other row is refused with its reason, and changes nothing.
    click(&b, ".house[data-house='A']").await;
    until(
        &b,
        "document.getElementById('notice').textContent.includes(\"North's row\")",
    )
    .await;
    assert_eq!(js(&b, "document.body.dataset.ply").await, "0");

    let mut shot = false;
    for turn in 0..500 {
        until(
            &b,
            "document.body.dataset.over === 'yes' || (document.body.dataset.turn === 'mine' \
             && document.body.dataset.animating !== 'yes' && !window.oware.state.ai_thinking)",
        )
        .await;
        if js(&b, "document.body.dataset.over").await == "yes" {
            break;
        }
        if turn == 2 {
            // The sowing animation was seen for the first moves; switch it off to go faster.
            click(&b, "#animate").await;
        }
        let ply: u64 = js(&b, "Number(document.body.dataset.ply)")
            .await
            .as_u64()
            .expect("ply");
        if turn == 1 {
            // A hint: the AI's move and its evaluation, in the notice.
            click(&b, "#btn-hint").await;
            until(
                &b,
                "/^Hint: [a-f], (about even|good for you|hard for you)/.test(document.getElementById('notice').textContent)",
            )
            .await;
        }
        if turn == 3 {
            // Undo takes back my move and the AI's reply.
            click(&b, "#btn-undo").await;
            until(
                &b,
                &format!(
                    "Number(document.body.dataset.ply) === {} && document.body.dataset.turn === 'mine'",
                    ply - 2
                ),
            )
            .await;
            assert_eq!(drawn_moves(&b).await.split(' ').count() as u64, ply - 2);
            continue;
        }
        if !shot && ply >= 14 {
            screenshot(&b, &screenshot_path("serve-board.png")).await;
            shot = true;
        }
        let playable = js(
            &b,
            "[...document.querySelectorAll('.house.playable')].map(e => e.dataset.house)",
        )
        .await;
        let playable = playable.as_array().expect("houses");
        assert!(!playable.is_empty(), "my turn with no playable house");
        let house = playable[turn % playable.len()]
            .as_str()
            .expect("letter")
            .to_string();
        if turn == 5 {
            // The keyboard plays too: the key of the house's letter.
            b.find(Locator::Css("body"))
                .await
                .expect("body")
                .send_keys(&house)
                .await
                .expect("types");
        } else {
            click(&b, &format!(".house[data-house='{house}']")).await;
        }
        until(&b, &format!("Number(document.body.dataset.ply) > {ply}")).await;
    }
    assert!(shot, "the game ended before the screenshot");
    until(&b, "document.body.dataset.animating !== 'yes'").await;

    // The board and the move list as drawn agree with `oware replay --json`.
    let moves = drawn_moves(&b).await;
    let replay = replay_json(&moves);
    let states = replay["states"].as_array().expect("a legal game");
    let last = &states[states.len() - 1];
    assert_eq!(last["terminal"], true);
    let (board, captured) = drawn_board(&b).await;
    assert_eq!(board, as_u64s(&last["board"]));
    assert_eq!(captured.to_vec(), as_u64s(&last["captured"]));
    let status = text(&b, "status").await;
    let winner = last["result"]["winner"].as_str().expect("winner");
    let expected = if winner == "draw" {
        "Draw".to_string()
    } else {
        format!("{}{} wins", winner[..1].to_uppercase(), &winner[1..])
    };
    assert!(status.starts_with(&expected), "{status} vs {winner}");

    // The review: the graph with its turning point, stepping, clicking a move.
    click(&b, "#btn-review").await;
    until(&b, "document.querySelector('#graph polyline') !== null").await;
    let caption = text(&b, "graph-caption").await;
    assert!(caption.contains("turning point"), "{caption}");
    assert!(js(&b, "document.querySelector('#graph .turn') !== null").await == json!(true));
    let n = states.len() - 1;
    click(&b, "#rv-first").await;
    assert_eq!(text(&b, "rv-pos").await, format!("0 / {n}"));
    assert_eq!(drawn_board(&b).await.0, vec![4; 12]);
    click(&b, "#rv-forward").await;
    click(&b, "#rv-forward").await;
    assert_eq!(text(&b, "rv-pos").await, format!("2 / {n}"));
    assert_eq!(drawn_board(&b).await.0, as_u64s(&states[2]["board"]));
    click(&b, "#moves .mv[data-ply='5']").await;
    assert_eq!(text(&b, "rv-pos").await, format!("5 / {n}"));
    assert_eq!(drawn_board(&b).await.0, as_u64s(&states[5]["board"]));
    screenshot(&b, &std::env::temp_dir().join("serve-review.png")).await;

    // The download is the record `oware replay` reads; loading it back reviews the same game.
    let prefix = "data:text/plain;charset=utf-8,";
    let href = js(&b, "document.getElementById('download').href").await;
    let href = href.as_str().expect("a link");
    assert!(href.starts_with(prefix), "{href:.60}");
    let record = js(
        &b,
        &format!("decodeURIComponent({:?})", &href[prefix.len()..]),
    )
    .await;
    let record = record.as_str().expect("text").to_string();
    assert!(record.starts_with(&format!("{moves}\t")), "{record}");
    assert!(
        record.contains("south=human north=alphabeta:depth=2"),
        "{record}"
    );
    assert_eq!(
        replay_json(record.trim_end()),
        replay,
        "oware replay reads the download"
    );
    let file = scratch("browser-record").join("game.txt");
    std::fs::write(&file, &record).expect("writes the record");
    click(&b, "#btn-close-review").await;
    review_file(&b, &file).await;
    until(
        &b,
        &format!("document.getElementById('rv-pos').textContent === '{n} / {n}'"),
    )
    .await;
    assert_eq!(drawn_moves(&b).await, moves);
    assert_eq!(drawn_board(&b).await.0, as_u64s(&last["board"]));
    b.close().await.expect("closes Chromium");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn browser_room_game_between_two_browsers() {
    let Some(mut driver) = Driver::start("browser-room") else {
        return;
    };
    let server = Server::start(&["--ai", "random"]);
    let host = driver.browser(1000, 800).await;
    let friend = driver.browser(390, 844).await; // a phone-sized screen
    host.goto(&server.url("/")).await.expect("loads the page");
    until(
        &host,
        "document.getElementById('conn').textContent === 'connected'",
    )
    .await;
    click(&host, "#modes button[data-panel='room']").await;
    click(&host, "#create-room").await;
    until(
        &host,
        "document.getElementById('room-code-shown').textContent.length === 15",
    )
    .await;
    let code = text(&host, "room-code-shown").await;
    let link = text(&host, "room-link").await;
    assert!(link.ends_with(&format!("/?room={code}")), "{link}");

    friend.goto(&link).await.expect("follows the link");
    until(
        &friend,
        "window.oware.seat === 'north' && document.body.dataset.view === 'game'",
    )
    .await;
    until(&host, "document.getElementById('seats').textContent.includes('North: friend') && !document.getElementById('seats').textContent.includes('not connected')").await;

    click(&host, ".house[data-house='c']").await;
    until(
        &friend,
        "document.body.dataset.ply === '1' && document.body.dataset.animating !== 'yes'",
    )
    .await;
    click(&friend, ".house[data-house='c']").await;
    until(
        &friend,
        "document.getElementById('notice').textContent.includes(\"South's row\")",
    )
    .await;
    click(&friend, ".house[data-house='F']").await;
    until(&host, "document.body.dataset.ply === '2'").await;

    // A reload reconnects the friend to the same seat, with the game as it was.
    friend.refresh().await.expect("reloads");
    until(&friend, "window.oware.seat === 'north' && document.body.dataset.ply === '2' && document.body.dataset.animating !== 'yes'").await;
    until(&host, "document.body.dataset.animating !== 'yes'").await;
    assert_eq!(drawn_board(&friend).await, drawn_board(&host).await);
    assert_eq!(drawn_moves(&friend).await, "c F");

    // Someone watches by code, and a reload keeps them watching.
    let watcher = driver.browser(800, 700).await;
    watcher
        .goto(&server.url("/"))
        .await
        .expect("loads the page");
    until(
        &watcher,
        "document.getElementById('conn').textContent === 'connected'",
    )
    .await;
    click(&watcher, "#modes button[data-panel='room']").await;
    watcher
        .find(Locator::Css("#room-code"))
        .await
        .expect("the code field")
        .send_keys(&code)
        .await
        .expect("types the code");
    click(&watcher, "#watch-room").await;
    until(
        &watcher,
        "window.oware.seat === 'watcher' && document.body.dataset.ply === '2'",
    )
    .await;
    until(
        &host,
        "document.getElementById('seats').textContent.includes('1 watching')",
    )
    .await;
    watcher.refresh().await.expect("reloads");
    until(
        &watcher,
        "window.oware.seat === 'watcher' && document.body.dataset.ply === '2'",
    )
    .await;
    assert_eq!(drawn_board(&watcher).await, drawn_board(&host).await);

    // The host plays with the keyboard, the friend answers, then a draw is agreed.
    until(&host, "document.body.dataset.turn === 'mine'").await;
    host.find(Locator::Css("body"))
        .await
        .expect("body")
        .send_keys("a")
        .await
        .expect("types");
    until(&friend, "document.body.dataset.ply === '3'").await;
    click(&host, "#btn-draw").await;
    until(&friend, "document.getElementById('accept-draw') !== null").await;
    click(&friend, "#accept-draw").await;
    until(
        &host,
        "document.getElementById('status').textContent === 'Draw agreed'",
    )
    .await;
    until(
        &friend,
        "document.getElementById('status').textContent === 'Draw agreed'",
    )
    .await;
    assert_eq!(drawn_moves(&host).await, "c F a");
    until(
        &watcher,
        "document.getElementById('status').textContent === 'Draw agreed'",
    )
    .await;
    assert_eq!(drawn_moves(&watcher).await, "c F a");
    watcher.close().await.expect("closes Chromium");
    screenshot(&friend, &std::env::temp_dir().join("serve-phone.png")).await;
    friend.close().await.expect("closes Chromium");
    host.close().await.expect("closes Chromium");
}

/// With `--egtb`, the review draws the move that threw away a proven result red on the graph
/// and in the move list, and says so when the review stands on it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn browser_review_marks_a_table_blunder() {
    let Some(mut driver) = Driver::start("browser-tables") else {
        return;
    };
    let (tb, tables) = super::tables::built_tables("browser-tables");
    let (moves, blunder) = super::tables::game_with_a_table_blunder(&tables);
    let server = super::tables::server_with_tables(&tb);
    let b = driver.browser(1100, 820).await;
    b.goto(&server.url("/")).await.expect("loads the page");
    until(
        &b,
        "document.getElementById('conn').textContent === 'connected'",
    )
    .await;
    let file = scratch("browser-tables-record").join("game.txt");
    std::fs::write(&file, super::tables::record(&moves)).expect("writes the record");
    review_file(&b, &file).await;
    until(
        &b,
        &format!("document.querySelector('#graph .table-mark[data-move=\"{blunder}\"]') !== null"),
    )
    .await;
    assert!(text(&b, "graph-caption").await.contains("Endgame tables"));
    click(&b, &format!("#moves .mv[data-ply='{blunder}']")).await;
    until(
        &b,
        &format!("document.getElementById('rv-pos').textContent.startsWith('{blunder} /')"),
    )
    .await;
    let status = text(&b, "status").await;
    assert!(status.contains("threw away a"), "{status}");
    let marked = js(
        &b,
        &format!("document.querySelector(\"#moves .mv[data-ply='{blunder}']\").classList.contains('table-mark')"),
    )
    .await;
    assert_eq!(marked, json!(true));
    b.close().await.expect("closes Chromium");
}
