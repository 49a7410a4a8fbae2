//! `oware ladder` end to end with the real binary: ratings with intervals as a table, one JSON
//! object and a PNG; a ladder killed with SIGKILL in the middle resumes from its record folder,
//! plays only the missing games and ends with the same records and table as a ladder that ran
//! through; damaged records and bad arguments are clear errors.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{BIN, oware, scratch, text};

const PLAYERS: [&str; 3] = ["random", "alphabeta:depth=1", "alphabeta:depth=2"];

fn ladder(extra: &[&str]) -> std::process::Output {
    let mut args = vec!["ladder"];
    args.extend(PLAYERS);
    args.extend(extra);
    oware(&args)
}

fn json(out: &std::process::Output) -> Value {
    assert!(out.status.success(), "{}", text(out));
    serde_json::from_slice(&out.stdout).expect("one JSON object on stdout")
}

/// Every record line of a folder, file by file in name order.
fn records(dir: &Path) -> Vec<(String, String)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("record folder")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| {
            let name = p.file_name().expect("name").to_string_lossy().into_owned();
            (name, std::fs::read_to_string(p).expect("readable"))
        })
        .collect()
}

fn line_count(dir: &Path) -> usize {
    records(dir).iter().map(|(_, t)| t.lines().count()).sum()
}

#[test]
fn ladder_prints_ratings_json_and_a_chart() {
    let dir = scratch("ladder-ok");
    let rec = dir.join("rec");
    let rec_s = rec.to_str().expect("utf-8");
    let v = json(&ladder(&[
        "--games",
        "30",
        "--record",
        rec_s,
        "--anchor",
        "alphabeta:depth=1",
        "--json",
    ]));
    assert_eq!(v["anchor"], "alphabeta:depth=1");
    assert_eq!(v["mode"], "round robin");
    assert_eq!(
        (v["games"].as_u64(), v["played"].as_u64()),
        (Some(90), Some(90))
    );
    assert_eq!(v["from_record"].as_u64(), Some(0));
    let players = v["players"].as_array().expect("players");
    assert_eq!(players.len(), 3);
    for (p, name) in players.iter().zip(PLAYERS) {
        assert_eq!(p["player"], name);
        assert_eq!(p["games"].as_u64(), Some(60));
        let (r, lo, hi) = (
            p["rating"].as_f64().expect("rating"),
            p["ci95"][0].as_f64().expect("low"),
            p["ci95"][1].as_f64().expect("high"),
        );
        assert!(lo <= r && r <= hi, "{p}");
        if name == "alphabeta:depth=1" {
            assert_eq!((r, lo, hi), (0.0, 0.0, 0.0));
        } else {
            assert!(hi - lo > 10.0, "{p}");
        }
    }
    // Random loses to alpha-beta: it is rated last, far below the anchor.
    assert_eq!(players[0]["rank"].as_u64(), Some(3));
    assert!(players[0]["rating"].as_f64().expect("rating") < -300.0);
    assert_eq!(v["pairings"].as_array().map(Vec::len), Some(3));

    let png = rec.join("ladder.png");
    assert_eq!(v["png"].as_str(), png.to_str());
    let img = image::load_from_memory(&std::fs::read(&png).expect("the chart exists"))
        .expect("the PNG decodes")
        .to_rgb8();
    assert_eq!(img.width(), 1000);
    assert!(img.height() > 200 && img.height() < 600, "{}", img.height());
    assert_eq!(img.get_pixel(0, 0).0, [255, 255, 255]);
    let blue = img
        .pixels()
        .filter(|p| {
            let [r, g, b] = p.0;
            b > 150 && r < 90 && g > 80 && g < 160
        })
        .count();
    assert!(blue > 200, "the error bars and dots: {blue} pixels");

    // The table, from the record alone, and --out elsewhere; the gauntlet plays 2 pairings.
    let chart = dir.join("chart.png");
    let out = ladder(&[
        "--games",
        "30",
        "--record",
        rec_s,
        "--out",
        chart.to_str().expect("utf-8"),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<&str> = stdout.lines().collect();
    assert!(
        rows[0].contains("90 games") && rows[0].contains("0 played now"),
        "{stdout}"
    );
    assert!(rows[1].contains("rating") && rows[1].contains("±95%") && rows[1].contains("score"));
    assert!(rows[2].starts_with("   1  alphabeta:depth=2"), "{stdout}");
    // Without --anchor the first player is the anchor.
    assert!(
        rows[4].contains("random") && rows[4].contains("anchor"),
        "{stdout}"
    );
    assert!(
        rows[4].ends_with('%') && !rows[3].contains("anchor"),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("wrote {}", chart.display())),
        "{stdout}"
    );
    assert!(chart.exists());
    let g = json(&ladder(&["--games", "10", "--gauntlet", "--json"]));
    assert_eq!(g["mode"], "gauntlet");
    assert_eq!(g["pairings"].as_array().map(Vec::len), Some(2));
    assert_eq!(g["games"].as_u64(), Some(20));
    assert!(g["png"].is_null());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_killed_ladder_resumes_with_only_the_missing_games() {
    let dir = scratch("ladder-kill");
    let (whole, cut) = (dir.join("whole"), dir.join("cut"));
    let args = |rec: &Path| -> Vec<String> {
        let mut a: Vec<String> = vec!["ladder".into()];
        a.extend(PLAYERS.iter().map(|s| s.to_string()));
        a.extend(
            ["--games", "1000", "--threads", "1", "--json", "--record"]
                .iter()
                .map(|s| s.to_string()),
        );
        a.push(rec.to_str().expect("utf-8").to_string());
        a
    };
    let run = |rec: &Path| {
        Command::new(BIN)
            .args(args(rec))
            .stdin(Stdio::null())
            .output()
            .expect("runs")
    };
    let straight = json(&run(&whole));
    assert_eq!(straight["played"].as_u64(), Some(3000));

    // Start again elsewhere and kill it as soon as some games are on disk.
    let mut child = Command::new(BIN)
        .args(args(&cut))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("starts");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        assert!(
            child.try_wait().expect("waits").is_none(),
            "the ladder ended before it could be killed"
        );
        if cut.exists() && line_count(&cut) > 0 {
            break;
        }
        assert!(Instant::now() < deadline, "no game was recorded in time");
        std::thread::sleep(Duration::from_millis(2));
    }
    child.kill().expect("SIGKILL");
    let _ = child.wait();
    let kept = line_count(&cut);
    assert!(kept > 0 && kept < 3000, "{kept} games kept");

    // The resumed ladder plays only what is missing and ends where the straight one did.
    let resumed = json(&run(&cut));
    assert_eq!(resumed["from_record"].as_u64(), Some(kept as u64));
    assert_eq!(resumed["played"].as_u64(), Some(3000 - kept as u64));
    assert_eq!(resumed["players"], straight["players"]);
    assert_eq!(resumed["pairings"], straight["pairings"]);
    assert_eq!(records(&cut), records(&whole));

    // And the table from either record folder is the same.
    let table = |rec: &Path| {
        let mut a = args(rec);
        a.retain(|s| s != "--json");
        let out = Command::new(BIN).args(a).output().expect("runs");
        assert!(out.status.success(), "{}", text(&out));
        let s = String::from_utf8_lossy(&out.stdout).into_owned();
        s.lines()
            .filter(|l| !l.starts_with("wrote "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(table(&cut), table(&whole));
    assert!(table(&cut).contains("0 played now, 3000 from the record"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn damaged_records_and_bad_arguments_are_clear_errors() {
    let dir = scratch("ladder-bad");
    let rec = dir.join("rec");
    let rec_s = rec.to_str().expect("utf-8");
    assert!(
        ladder(&["--games", "6", "--record", rec_s])
            .status
            .success()
    );

    // A damaged line names the file and the line, and nothing is played.
    let file = rec.join("games-01-03.txt");
    let mut content = std::fs::read_to_string(&file).expect("record");
    let lines: Vec<String> = content.lines().map(str::to_string).collect();
    content = format!("{}\n{}\n", lines[0], lines[1].replace('\t', " "));
    std::fs::write(&file, content).expect("damage");
    let out = ladder(&["--games", "6", "--record", rec_s]);
    assert!(!out.status.success());
    let msg = text(&out);
    assert!(
        msg.contains("games-01-03.txt line 2") && msg.contains("no tab"),
        "{msg}"
    );
    assert!(!msg.contains("panicked"), "{msg}");

    // Other settings do not resume this ladder.
    let out = ladder(&["--games", "6", "--record", rec_s, "--seed", "9"]);
    assert!(!out.status.success());
    assert!(text(&out).contains("--seed 1 (now 9)"), "{}", text(&out));

    for (args, why) in [
        (vec!["ladder", "random"], "required"),
        (vec!["ladder", "random", "random"], "listed twice"),
        (
            vec![
                "ladder",
                "random",
                "alphabeta:depth=1",
                "--anchor",
                "alphabeta:depth=2",
            ],
            "not one of the players",
        ),
        (vec!["ladder", "random", "human"], "oware play"),
        (vec!["ladder", "random", "alphabeta:depth=x"], "alphabeta"),
        (
            vec!["ladder", "random", "alphabeta:depth=1", "--games", "0"],
            "--games",
        ),
    ] {
        let out = oware(&args);
        assert!(!out.status.success(), "{args:?}");
        assert!(text(&out).contains(why), "{args:?}: {}", text(&out));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_gauntlet_of_checkpoints_draws_elo_against_training_time() {
    let dir = scratch("ladder-time");
    let run = dir.join("r");
    let run_s = run.to_str().expect("utf-8");
    let out = oware(&[
        "train",
        "--config",
        crate::common::TINY,
        "--run",
        run_s,
        "--quiet",
        "--set",
        "schedule.max_steps=12",
        "--set",
        "schedule.checkpoint_every_steps=6",
        "--set",
        "eval.every_steps=0",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let ckpt = |step: &str| format!("mcts:model={run_s}/checkpoints/{step},sims=4");
    let (six, twelve) = (ckpt("step-0000006"), ckpt("step-0000012"));
    let png = dir.join("elo.png");
    let v = json(&oware(&[
        "ladder",
        "random",
        &six,
        &twelve,
        "--gauntlet",
        "--games",
        "4",
        "--out",
        png.to_str().expect("utf-8"),
        "--json",
    ]));
    assert_eq!(v["players"].as_array().map(Vec::len), Some(3));
    use image::GenericImageView;
    let img = image::open(&png).expect("a PNG");
    assert!(img.width() > 400 && img.height() > 200);
    // A time chart needs checkpoints: asked of plain players it is an error.
    let out = ladder(&[
        "--games",
        "2",
        "--chart",
        "time",
        "--out",
        png.to_str().expect("utf-8"),
    ]);
    assert!(!out.status.success());
    assert!(text(&out).contains("--chart time"), "{}", text(&out));
}
