//! The built binary: a scripted `oware engine` session (bad lines included), and short
//! `oware pit` matches whose JSON parses and whose counts add up, and whose record replays.

use serde_json::Value;
use std::io::Write;
use std::process::{Command, Output, Stdio};

fn oware() -> Command {
    Command::new(env!("CARGO_BIN_EXE_oware"))
}

fn run_with_stdin(mut cmd: Command, input: &str) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let mut stdin = child.stdin.take().expect("stdin is piped");
    stdin.write_all(input.as_bytes()).expect("write stdin");
    drop(stdin);
    child.wait_with_output().expect("the binary finishes")
}

fn lines(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn engine_answers_a_scripted_session() {
    let script = "\
isready
position startpos moves c F
go depth 4

position startpos moves c c
go depth 3
frobnicate
go depth x
go depth 0
go nodes 5
go depth
position somewhere
position startpos moves Z
newgame
go sims 10 depth 2
position startpos
go ms 30
isready extra
quit
isready
";
    let mut cmd = oware();
    cmd.args(["engine", "alphabeta:depth=5"]);
    let out = run_with_stdin(cmd, script);
    assert!(out.status.success(), "{out:?}");
    let all = lines(&out);
    // `go` prints `info depth D score (cp S | mate P) nodes N time MS pv m...` lines before its
    // bestmove: depths 1, 2, ... in order. A reader that skips them sees the rest unchanged.
    let mut depth = 0;
    for line in &all {
        if line.starts_with("bestmove ") {
            assert!(depth > 0, "no info line before {line}: {all:#?}");
            depth = 0;
        } else if let Some(rest) = line.strip_prefix("info ") {
            let w: Vec<&str> = rest.split(' ').collect();
            assert!(w.len() >= 10, "{line}");
            assert_eq!(
                (w[0], w[2], w[5], w[7], w[9]),
                ("depth", "score", "nodes", "time", "pv")
            );
            assert!(["cp", "mate"].contains(&w[3]), "{line}");
            assert_eq!(w[1].parse::<u32>().ok(), Some(depth + 1), "{all:#?}");
            depth += 1;
            assert!(
                w[4].parse::<i32>().is_ok() && w[6].parse::<u64>().is_ok(),
                "{line}"
            );
            assert!(w[8].parse::<u64>().is_ok() && w.len() > 10, "{line}");
        }
    }
    let got: Vec<String> = all
        .into_iter()
        .filter(|l| !l.starts_with("info "))
        .collect();
    let expect_prefix = [
        "readyok",
        "bestmove ",
        "error ", // c c: c is South's, North to move
        "bestmove ",
        "error ", // frobnicate
        "error ", // depth x
        "error ", // depth 0
        "error ", // nodes
        "error ", // depth without a number
        "error ", // position somewhere
        "error ", // move Z
        "bestmove ",
        "bestmove ",
        "error ", // isready extra
    ];
    assert_eq!(got.len(), expect_prefix.len(), "{got:#?}");
    for (line, prefix) in got.iter().zip(expect_prefix) {
        assert!(
            line.starts_with(prefix),
            "{line:?} should start with {prefix:?}: {got:#?}"
        );
    }
    // After `c F` South moves; after the rejected `c c`, the engine kept `c F`.
    let legal_after_c_f = ["a", "b", "c", "d", "e", "f"];
    for i in [1, 3] {
        let m = got[i].trim_start_matches("bestmove ");
        assert!(legal_after_c_f.contains(&m), "{}", got[i]);
    }
    // After newgame and at startpos, South moves.
    for i in [11, 12] {
        let m = got[i].trim_start_matches("bestmove ");
        assert!(legal_after_c_f.contains(&m), "{}", got[i]);
    }
}

#[test]
fn engine_refuses_go_on_a_finished_game() {
    // A full game between two engines' moves is long; instead play one out with pit's record
    // and feed it back.
    let dir = std::env::temp_dir().join(format!("oware-engine-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let record = dir.join("games.txt");
    let out = oware()
        .args([
            "pit",
            "alphabeta:depth=2",
            "random",
            "--games",
            "1",
            "--threads",
            "1",
        ])
        .arg("--record")
        .arg(&record)
        .output()
        .expect("pit runs");
    assert!(out.status.success(), "{out:?}");
    let text = std::fs::read_to_string(&record).expect("record written");
    let moves = text.split('\t').next().expect("moves").trim().to_string();
    let script = format!("position startpos moves {moves}\ngo\nisready\n");
    let mut cmd = oware();
    cmd.args(["engine", "random"]);
    let out = run_with_stdin(cmd, &script);
    let got = lines(&out);
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(
        got[0].starts_with("error ") && got[0].contains("over"),
        "{got:?}"
    );
    assert_eq!(got[1], "readyok");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn engine_rejects_a_bad_player_spec() {
    let out = oware()
        .args(["engine", "alphabeta:depth=many"])
        .stdin(Stdio::null())
        .output()
        .expect("runs");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("alphabeta:depth=N"), "{err}");
}

fn pit_json(args: &[&str]) -> Value {
    let out = oware()
        .arg("pit")
        .args(args)
        .arg("--json")
        .output()
        .expect("pit runs");
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

fn count(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("{key} in {v}"))
}

#[test]
fn pit_json_adds_up() {
    let dir = std::env::temp_dir().join(format!("oware-pit-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let record = dir.join("games.txt");
    let record_arg = record.to_string_lossy().to_string();
    let v = pit_json(&[
        "alphabeta:depth=3",
        "random",
        "--games",
        "7",
        "--threads",
        "2",
        "--seed",
        "9",
        "--record",
        &record_arg,
    ]);
    let keys: Vec<&str> = v
        .as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "a",
            "b",
            "games",
            "wins",
            "draws",
            "losses",
            "score",
            "elo",
            "elo_ci95",
            "a_as_south",
            "a_as_north",
            "mean_plies",
            "seconds",
            "plies",
            "moves",
            "a_moves",
            "b_moves",
            "moves_per_sec",
            "a_ms_per_move",
            "b_ms_per_move",
            "batched",
            "threads"
        ]
    );
    assert_eq!(v["a"], "alphabeta:depth=3");
    assert_eq!(v["b"], "random");
    assert_eq!(count(&v, "games"), 7);
    let (w, d, l) = (count(&v, "wins"), count(&v, "draws"), count(&v, "losses"));
    assert_eq!(w + d + l, 7);
    let by = |side: &str, key: &str| count(&v[side], key);
    for key in ["wins", "draws", "losses"] {
        assert_eq!(
            by("a_as_south", key) + by("a_as_north", key),
            count(&v, key)
        );
    }
    // Odd count: four openings, the last played once with A as South.
    let south_games: u64 = ["wins", "draws", "losses"]
        .iter()
        .map(|k| by("a_as_south", k))
        .sum();
    assert_eq!(south_games, 4);
    let score = v["score"].as_f64().expect("score");
    assert!((score - (w as f64 + d as f64 / 2.0) / 7.0).abs() < 1e-9);
    let elo = v["elo"].as_f64().expect("elo");
    let ci = v["elo_ci95"].as_array().expect("interval");
    let (lo, hi) = (ci[0].as_f64().expect("lo"), ci[1].as_f64().expect("hi"));
    assert!(lo <= elo && elo <= hi, "{lo} {elo} {hi}");
    assert!(v["mean_plies"].as_f64().expect("plies") > 4.0);
    assert!(v["seconds"].as_f64().expect("seconds") >= 0.0);
    // Plies count the openings (2 to 4 random plies per game), moves only the players'.
    let (plies, moves) = (count(&v, "plies"), count(&v, "moves"));
    assert_eq!(count(&v, "a_moves") + count(&v, "b_moves"), moves);
    assert!((2 * 7..=4 * 7).contains(&(plies - moves)), "{v}");
    let mean = v["mean_plies"].as_f64().expect("plies");
    assert!((mean * 7.0 - plies as f64).abs() < 1e-6, "{v}");
    // No network player: nothing batched.
    assert_eq!(v["batched"], serde_json::json!({ "a": false, "b": false }));

    // The record: seven lines that replay, each result matching the replayed ending.
    let text = std::fs::read_to_string(&record).expect("record written");
    assert_eq!(text.lines().count(), 7);
    let mut cmd = oware();
    cmd.args(["replay", "--json"]);
    let out = run_with_stdin(cmd, &text);
    assert!(out.status.success(), "{out:?}");
    for (line, replayed) in text.lines().zip(lines(&out)) {
        let r: Value = serde_json::from_str(&replayed).expect("replay JSON");
        let states = r["states"].as_array().expect("states");
        let last = states.last().expect("a state");
        assert_eq!(last["terminal"], true, "{line}");
        let winner = last["result"]["winner"].as_str().expect("winner");
        let tail = line.split('\t').nth(1).expect("result after a tab");
        let expected = match winner {
            "south" => "1-0 ",
            "north" => "0-1 ",
            _ => "1/2-1/2 ",
        };
        assert!(tail.starts_with(expected), "{tail} vs {winner}");
        assert!(tail.contains(last["result"]["reason"].as_str().expect("reason")));
    }

    // Same seed, same games (depth-limited players are deterministic).
    let again = pit_json(&[
        "alphabeta:depth=3",
        "random",
        "--games",
        "7",
        "--threads",
        "1",
        "--seed",
        "9",
    ]);
    for key in ["wins", "draws", "losses", "mean_plies"] {
        assert_eq!(again[key], v[key], "{key}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn pit_rejects_bad_and_unloadable_players() {
    for (a, why) in [
        ("alphabeta:depth=0", "out of range"),
        (
            "mcts:model=/nonexistent/run,sims=5",
            "/nonexistent/run does not exist",
        ),
        ("human", "oware play"),
        ("chess", "unknown player kind"),
    ] {
        let out = oware()
            .args(["pit", a, "random", "--games", "2"])
            .output()
            .expect("runs");
        assert!(!out.status.success(), "{a}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(why), "{a}: {err}");
    }
}
