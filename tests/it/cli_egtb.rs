//! The built binary: `oware egtb build` (resumable, `--json` figures), `probe`, `stats`, a
//! damaged table as a clear error, and the consumers (`alphabeta:...,egtb=DIR` in `pit`,
//! `oware judge`) on tables of up to 8 seeds.

use crate::common::{oware, oware_env, scratch, text};
use serde_json::Value;

fn json(o: &std::process::Output) -> Value {
    assert!(o.status.success(), "{}", text(o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(o)))
}

fn build(dir: &str, max: u32) -> Value {
    json(&oware(&[
        "egtb",
        "build",
        "--max-seeds",
        &max.to_string(),
        "--egtb",
        dir,
        "--exact-up-to",
        "6",
        "--threads",
        "2",
        "--json",
    ]))
}

#[test]
fn build_probe_stats_and_resume() {
    let root = scratch("egtb-build");
    let dir = root.join("tb");
    let d = dir.to_str().expect("utf-8");
    let first = build(d, 8);
    let tables = first["tables"].as_array().expect("tables");
    assert_eq!(tables.len(), 9);
    for (n, t) in tables.iter().enumerate() {
        assert_eq!(t["n"], n);
        assert_eq!(t["status"], "built");
        assert!(t["seconds"].as_f64().is_some() && t["sweeps"].as_u64().is_some());
        assert!(t["positions_per_second_per_thread"].as_f64().is_some());
        // From 4 seeds on, most positions lie on cycles of quiet moves.
        let cyclic = t["cyclic_positions"].as_u64().expect("cyclic positions");
        assert!(n < 4 || cyclic * 2 > t["positions"].as_u64().expect("positions"));
        assert!(t["largest_component"].as_u64().expect("largest") <= cyclic);
        // Entry values: every one exact up to 5 seeds, most of them beyond.
        let positions = t["positions"].as_u64().expect("positions");
        let entry = t["entry_exact"].as_u64().expect("entry_exact");
        assert_eq!(
            entry + t["entry_open"].as_u64().expect("entry_open"),
            positions
        );
        assert!(entry >= t["exact"].as_u64().expect("exact"));
        assert!(
            n > 5 || entry == positions,
            "table {n}: {entry} of {positions}"
        );
        assert!(
            entry * 10 >= positions * 7,
            "table {n}: {entry} of {positions}"
        );
    }
    assert_eq!(first["positions"], 125_970); // C(20, 12): every board of 0..=8 seeds
    assert!(first["peak_rss_mib"].as_f64().is_some_and(|m| m > 0.0));
    // A second build with one more seed keeps all nine and builds the tenth; the old name of
    // the directory flag, `--out`, still works.
    let second = json(&oware(&[
        "egtb",
        "build",
        "--max-seeds",
        "9",
        "--out",
        d,
        "--exact-up-to",
        "6",
        "--json",
    ]));
    let status: Vec<&str> = second["tables"]
        .as_array()
        .expect("tables")
        .iter()
        .map(|t| t["status"].as_str().expect("status"))
        .collect();
    assert_eq!(&status[..9], ["kept"; 9]);
    assert_eq!(status[9], "built");

    // The forced capture chain: South takes all six seeds, which wins with 21 captured.
    let p = json(&oware(&[
        "egtb",
        "probe",
        "--egtb",
        d,
        "--position",
        "0,0,0,0,0,2,1,2,0,0,0,1",
        "--json",
    ]));
    assert_eq!(p["seeds"], 6);
    assert_eq!(p["entry"]["lo"], 6);
    assert_eq!(p["entry"]["exact"], true);
    assert_eq!(p["entry"]["stored"], true);
    assert_eq!(p["history_empty"], true);
    assert_eq!(p["value"]["lo"], 6);
    assert_eq!(p["value"]["exact"], true);
    assert_eq!(p["result"], "win");
    assert_eq!(p["optimal"], serde_json::json!(["f"]));
    let text_probe = oware(&[
        "egtb",
        "probe",
        "--dir",
        d,
        "--position",
        "0 0 0 0 0 2 1 2 0 0 0 1",
    ]);
    assert!(
        text(&text_probe).contains("f: 6  optimal")
            && text(&text_probe).contains("after an empty history: 6"),
        "{}",
        text(&text_probe)
    );
    // Seen from North (North to move, the same board rotated): the same value.
    let north = json(&oware(&[
        "egtb",
        "probe",
        "--dir",
        d,
        "--position",
        "1,2,0,0,0,1,0,0,0,0,0,2",
        "--to-move",
        "north",
        "--captured",
        "21,21",
        "--json",
    ]));
    assert_eq!(north["value"]["lo"], 6);
    // Too many seeds for these tables, a bad position: errors that say why.
    let far = oware(&["egtb", "probe", "--dir", d]);
    assert!(
        !far.status.success() && text(&far).contains("48 seeds"),
        "{}",
        text(&far)
    );
    let bad = oware(&["egtb", "probe", "--dir", d, "--position", "1,2,3"]);
    assert!(
        !bad.status.success() && text(&bad).contains("12 house counts"),
        "{}",
        text(&bad)
    );

    let s = json(&oware(&["egtb", "stats", "--egtb", d, "--json"]));
    assert_eq!(s["max_seeds"], 9);
    let t3 = &s["tables"][3];
    assert_eq!(t3["positions"], 364);
    // Two codes per position: the all-history interval and the entry value.
    assert_eq!(t3["bytes"], 2 * 364 + oware_egtb::HEADER_LEN as u64);
    assert_eq!(t3["entry_exact"], 364);
    assert_eq!(t3["entry_open"], 0);
    // The old name `--dir` of stats and probe still works.
    let old = json(&oware(&["egtb", "stats", "--dir", d, "--json"]));
    assert_eq!(old["tables"][3]["entry_exact"], 364);
    let exact: u64 = t3["exact_values"]
        .as_array()
        .expect("values")
        .iter()
        .map(|v| v.as_u64().expect("count"))
        .sum();
    assert_eq!(t3["exact"].as_u64(), Some(exact));
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_damaged_table_is_an_error_naming_the_file() {
    let root = scratch("egtb-damaged");
    let dir = root.join("tb");
    let d = dir.to_str().expect("utf-8");
    build(d, 5);
    let path = dir.join("oware-04.egtb");
    let mut bytes = std::fs::read(&path).expect("read");
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x11;
    std::fs::write(&path, &bytes).expect("write");
    for args in [
        vec!["egtb", "stats", "--dir", d],
        vec![
            "egtb",
            "probe",
            "--dir",
            d,
            "--position",
            "0,0,0,0,0,2,1,2,0,0,0,1",
        ],
        vec![
            "pit",
            "alphabeta:depth=2,egtb=DIR",
            "random",
            "--games",
            "2",
        ],
    ] {
        let args: Vec<String> = args.iter().map(|a| a.replace("DIR", d)).collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = oware(&args);
        assert!(!o.status.success(), "{args:?} succeeded");
        let t = text(&o);
        assert!(
            t.contains("oware-04.egtb") && t.contains("checksum"),
            "{args:?}: {t}"
        );
        assert!(!t.contains("panicked"), "{t}");
    }
    // Truncated: also named. A build replaces it.
    std::fs::write(&path, &bytes[..100]).expect("write");
    let o = oware(&["egtb", "stats", "--dir", d]);
    assert!(
        text(&o).contains("oware-04.egtb") && text(&o).contains("truncated"),
        "{}",
        text(&o)
    );
    let again = build(d, 5);
    assert_eq!(again["tables"][4]["status"], "built");
    assert_eq!(again["tables"][3]["status"], "kept");
    let missing = oware(&[
        "egtb",
        "stats",
        "--dir",
        root.join("none").to_str().expect("utf-8"),
    ]);
    assert!(
        text(&missing).contains("oware-00.egtb"),
        "{}",
        text(&missing)
    );
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn consumers_take_egtb_dir() {
    let root = scratch("egtb-consumers");
    let dir = root.join("tb");
    let d = dir.to_str().expect("utf-8");
    build(d, 8);
    let spec = format!("alphabeta:depth=3,egtb={d}");
    let pit = json(&oware(&[
        "pit",
        &spec,
        "alphabeta:depth=3",
        "--games",
        "4",
        "--threads",
        "2",
        "--json",
    ]));
    assert_eq!(pit["games"], 4);
    assert_eq!(pit["a"], spec);
    let j = json(&oware(&[
        "judge",
        "alphabeta:depth=3",
        "--egtb",
        d,
        "--positions",
        "30",
        "--seeds",
        "3..8",
        "--source",
        "alphabeta:depth=2",
        "--threads",
        "2",
        "--json",
    ]));
    assert_eq!(j["total"]["positions"], 30);
    let decided = j["total"]["decided"].as_u64().expect("decided");
    assert!(j["total"]["proof_nodes"].as_u64().is_some());
    assert!(
        j["total"]["decided_share"]
            .as_f64()
            .is_some_and(|s| (0.0..=1.0).contains(&s))
    );
    // With exact entry values and proofs from the real history most positions are decided.
    assert!(decided >= 15, "only {decided} of 30 decided");
    let per: u64 = j["per_seeds"]
        .as_array()
        .expect("per seed count")
        .iter()
        .map(|p| {
            let n = p["seeds"].as_u64().expect("seeds");
            assert!((3..=8).contains(&n));
            let lost = p["seeds_lost_per_move"].as_array().expect("range");
            assert!(lost[0].as_f64() <= lost[1].as_f64());
            p["positions"].as_u64().expect("count")
        })
        .sum();
    assert_eq!(per, 30);
    let t = &j["total"];
    assert_eq!(
        t["optimal"].as_u64().expect("n")
            + t["suboptimal"].as_u64().expect("n")
            + t["undecided"].as_u64().expect("n"),
        30
    );
    let rollouts = oware(&[
        "pit",
        &format!("mcts:rollouts,egtb={d}"),
        "random",
        "--games",
        "1",
    ]);
    assert!(
        text(&rollouts).contains("needs model=PATH"),
        "{}",
        text(&rollouts)
    );
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn selfplay_and_training_use_the_tables() {
    let root = scratch("egtb-selfplay");
    let dir = root.join("tb");
    let d = dir.to_str().expect("utf-8");
    build(d, 10);
    let egtb = format!("selfplay.egtb={d}");
    let out = root.join("games");
    let summary = json(&oware(&[
        "selfplay",
        "--model",
        "fresh",
        "--games",
        "48",
        "--out",
        out.to_str().expect("utf-8"),
        "--config",
        "configs/tiny.toml",
        "--set",
        &egtb,
        "--json",
    ]));
    assert_eq!(summary["games"], 48);
    // The fresh network's weights are not seeded, so the games differ from run to run: 48
    // games make "none reaches an exact table value" (seen once in about 15 runs of 12 games)
    // vanishingly rare.
    let table_games = summary["table_games"].as_u64().expect("table_games");
    assert!(
        table_games > 0,
        "no game reached an exact table value: {summary}"
    );
    assert!(summary["table_plies"].as_u64().expect("table_plies") > 0);
    assert!(summary["rescored"].as_u64().is_some());
    // Play-outs that gave up are counted; each one stops its game's attempts until the next
    // capture, so there are never more of them than the games' table attempts allow.
    let gave_up = summary["table_gave_up"].as_u64().expect("table_gave_up");
    assert!(
        gave_up <= summary["plies"].as_u64().expect("plies"),
        "{summary}"
    );
    // The records keep the ordinary format: every line replays, with a real ending.
    let games = std::fs::read_to_string(out.join("games.txt")).expect("games.txt");
    assert_eq!(games.lines().count(), 48);
    for line in games.lines() {
        let (_, result) = line.split_once('\t').expect("a result");
        let reason = result.split(' ').nth(1).expect("a reason");
        assert!(
            ["captured-25", "no-move", "repetition", "max-plies"].contains(&reason),
            "{line}"
        );
    }
    // A tiny training run with the tables, and a missing table directory as a clear error.
    let run = root.join("run");
    let o = oware(&[
        "train",
        "--config",
        "configs/tiny.toml",
        "--run",
        run.to_str().expect("utf-8"),
        "--quiet",
        "--set",
        &egtb,
        "--set",
        "schedule.max_steps=10",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    // The end of the run says how many games the tables finished (any number, even 0, in 10
    // steps of a fresh network).
    assert!(
        text(&o).contains("of this process's games finished by table play"),
        "{}",
        text(&o)
    );
    let config = std::fs::read_to_string(run.join("config.toml")).expect("config.toml");
    assert!(config.contains(&format!("egtb = \"{d}\"")), "{config}");
    let missing = root.join("none");
    let o = oware(&[
        "selfplay",
        "--model",
        "fresh",
        "--games",
        "1",
        "--out",
        out.to_str().expect("utf-8"),
        "--config",
        "configs/tiny.toml",
        "--set",
        &format!("selfplay.egtb={}", missing.display()),
    ]);
    assert!(!o.status.success());
    let msg = text(&o);
    assert!(
        msg.contains("selfplay.egtb") && msg.contains("oware-00.egtb"),
        "{msg}"
    );
}

#[test]
fn auto_tables_are_built_once_in_the_user_cache() {
    let root = scratch("egtb-auto");
    let cache = root.join("cache");
    let out = root.join("games");
    let args = [
        "selfplay",
        "--model",
        "fresh",
        "--games",
        "12",
        "--out",
        out.to_str().expect("utf-8"),
        "--config",
        "configs/tiny.toml",
        "--set",
        "selfplay.egtb=auto",
        "--json",
    ];
    let env = [("XDG_CACHE_HOME", Some(cache.as_path()))];
    let first = oware_env(&args, &env);
    let summary = json(&first);
    assert_eq!(summary["games"], 12);
    let dir = cache.join("oware").join("egtb");
    for n in 0..=14 {
        let file = dir.join(format!("oware-{n:02}.egtb"));
        assert!(file.is_file(), "{} missing", file.display());
    }
    let said = String::from_utf8_lossy(&first.stderr);
    assert!(
        said.contains("building the endgame table of 14 seeds")
            && said.contains("once per machine"),
        "{said}"
    );
    // The second time the tables are checked and kept: nothing is built.
    std::fs::remove_dir_all(&out).expect("remove the games");
    let second = oware_env(&args, &env);
    assert_eq!(json(&second)["games"], 12);
    let said = String::from_utf8_lossy(&second.stderr);
    assert!(!said.contains("building"), "{said}");
    // With no place for a cache, "auto" is an error that says what to do.
    let none = oware_env(&args, &[("XDG_CACHE_HOME", None), ("HOME", None)]);
    assert!(!none.status.success());
    let msg = text(&none);
    assert!(
        msg.contains("$XDG_CACHE_HOME or $HOME") && !msg.contains("panicked"),
        "{msg}"
    );
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn the_table_directory_is_egtb_everywhere_with_the_old_names_as_aliases() {
    let root = scratch("egtb-names");
    let d = root.join("tb");
    let d = d.to_str().expect("utf-8");
    let built = json(&oware(&[
        "egtb",
        "build",
        "--max-seeds",
        "3",
        "--egtb",
        d,
        "--json",
    ]));
    assert_eq!(built["tables"].as_array().expect("tables").len(), 4);
    // `build --out` is the same flag: everything is kept.
    let again = build(d, 3);
    for t in again["tables"].as_array().expect("tables") {
        assert_eq!(t["status"], "kept", "{again}");
    }
    let stats = json(&oware(&["egtb", "stats", "--egtb", d, "--json"]));
    let stats_dir = json(&oware(&["egtb", "stats", "--dir", d, "--json"]));
    assert_eq!(stats, stats_dir);
    let board = "0,0,0,0,0,1,0,0,0,0,0,1";
    let probe = |flag: &str| {
        let o = oware(&["egtb", "probe", "--position", board, flag, d]);
        assert!(o.status.success(), "{}", text(&o));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    assert_eq!(probe("--egtb"), probe("--dir"));
}
