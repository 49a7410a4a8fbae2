//! `oware report` end to end with the real binary: a hand-written `eval.jsonl` becomes a PNG
//! of the right size with the curves in it and a table on stdout; damaged, empty and missing
//! logs are clear errors that name the file.

use std::path::Path;

use crate::common::{oware, scratch, text};

fn eval_line(
    step: u64,
    secs: f64,
    opponent: &str,
    previous: bool,
    w: u32,
    d: u32,
    l: u32,
) -> String {
    let games = w + d + l;
    let score = (f64::from(w) + 0.5 * f64::from(d)) / f64::from(games);
    let clamped = score.clamp(0.5 / f64::from(games), 1.0 - 0.5 / f64::from(games));
    let elo = 400.0 * (clamped / (1.0 - clamped)).log10();
    format!(
        "{{\"step\":{step},\"elapsed_secs\":{secs},\"selfplay_games\":{},\
         \"player\":\"mcts:model=runs/t/checkpoints/step-{step:07},sims=100\",\
         \"opponent\":\"{opponent}\",\"vs_previous\":{previous},\"games\":{games},\
         \"wins\":{w},\"draws\":{d},\"losses\":{l},\"score\":{score},\"elo\":{elo},\
         \"elo_ci95\":[{},{}]}}",
        step * 3,
        elo - 150.0,
        elo + 150.0
    )
}

fn write_log(run: &Path) {
    let mut lines = Vec::new();
    for (i, secs) in [30.0, 95.0, 160.0, 240.0].into_iter().enumerate() {
        let step = 1000 * (i as u64 + 1);
        let k = i as u32;
        lines.push(eval_line(
            step,
            secs,
            "alphabeta:depth=2",
            false,
            6 + 4 * k,
            2,
            12 - 4 * k,
        ));
        lines.push(eval_line(
            step,
            secs,
            "alphabeta:depth=4",
            false,
            2 + 2 * k,
            2,
            16 - 2 * k,
        ));
        if i > 0 {
            let prev = format!(
                "mcts:model=runs/t/checkpoints/step-{:07},sims=100",
                step - 1000
            );
            lines.push(eval_line(step, secs, &prev, true, 11, 0, 9));
        }
    }
    std::fs::write(run.join("eval.jsonl"), lines.join("\n") + "\n").expect("eval.jsonl");
}

fn decode(path: &Path) -> image::RgbImage {
    let bytes = std::fs::read(path).expect("the PNG exists");
    image::load_from_memory(&bytes)
        .expect("the PNG decodes")
        .to_rgb8()
}

#[test]
fn report_draws_the_curve_and_prints_a_table() {
    let run = scratch("report-ok");
    write_log(&run);
    let out = oware(&["report", run.to_str().expect("utf-8")]);
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("alphabeta:depth=4") && stdout.contains("previous step-0001000"));
    assert!(stdout.contains("eval.png"), "{stdout}");
    // One header, 11 evaluations, and the line naming the PNG.
    assert_eq!(stdout.lines().count(), 13, "{stdout}");

    let img = decode(&run.join("eval.png"));
    assert_eq!(img.dimensions(), (1000, 600));
    assert_eq!(img.get_pixel(0, 0).0, [255, 255, 255]);
    let non_white = img.pixels().filter(|p| p.0 != [255, 255, 255]).count();
    assert!(non_white > 10_000, "only {non_white} drawn pixels");
    // The two curves have distinct, saturated colours.
    let saturated = |p: &image::Rgb<u8>| {
        let (max, min) = (
            *p.0.iter().max().unwrap_or(&0),
            *p.0.iter().min().unwrap_or(&0),
        );
        max - min > 120
    };
    let mut colours = std::collections::HashMap::new();
    for p in img.pixels().filter(|p| saturated(p)) {
        *colours.entry(p.0).or_insert(0usize) += 1;
    }
    let strong = colours.values().filter(|n| **n > 300).count();
    assert!(strong >= 2, "curve colours: {colours:?}");

    // --out writes elsewhere, and the log may be named directly.
    let other = run.join("sub-plot.png");
    let log = run.join("eval.jsonl");
    let out = oware(&[
        "report",
        log.to_str().expect("utf-8"),
        "--out",
        other.to_str().expect("utf-8"),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(decode(&other).dimensions(), (1000, 600));
    // A log without Elo against an anchor draws no Elo chart.
    assert!(!run.join("eval-elo.png").exists());
    let _ = std::fs::remove_dir_all(&run);
}

#[test]
fn report_draws_elo_against_the_anchor_over_time() {
    let run = scratch("report-elo");
    let mut lines = Vec::new();
    for (i, secs) in [60.0, 180.0, 300.0, 420.0].into_iter().enumerate() {
        let step = 2500 * (i as u64 + 1);
        let elo = -150.0 + 120.0 * i as f64;
        for (opponent, w) in [
            ("alphabeta:depth=4", 8 + 3 * i as u32),
            ("alphabeta:ms=9", 2 + i as u32),
        ] {
            let mut v: serde_json::Value =
                serde_json::from_str(&eval_line(step, secs, opponent, false, w, 0, 20 - w))
                    .expect("json");
            v["anchor"] = "alphabeta:depth=4".into();
            v["elo_vs_anchor"] = elo.into();
            v["elo_vs_anchor_ci95"] = serde_json::json!([elo - 90.0, elo + 90.0]);
            if opponent.contains("ms=") {
                v["opponent_config"] = "alphabeta:ms=auto".into();
            }
            lines.push(v.to_string());
        }
    }
    std::fs::write(run.join("eval.jsonl"), lines.join("\n") + "\n").expect("eval.jsonl");
    let out = oware(&["report", run.to_str().expect("utf-8")]);
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("eval-elo.png"), "{stdout}");
    let img = decode(&run.join("eval-elo.png"));
    assert_eq!(img.dimensions(), (1000, 600));
    // The curve and its band: the first series colour, strong and light.
    let blue = img.pixels().filter(|p| p.0 == [31, 119, 180]).count();
    assert!(blue > 300, "curve pixels: {blue}");
    let band = img
        .pixels()
        .filter(|p| p.0[2] > p.0[0] + 20 && p.0[0] > 200)
        .count();
    assert!(band > 5_000, "band pixels: {band}");
    let _ = std::fs::remove_dir_all(&run);
}

#[test]
fn damaged_or_missing_logs_are_clear_errors() {
    let run = scratch("report-bad");
    write_log(&run);
    let log = run.join("eval.jsonl");
    let mut content = std::fs::read_to_string(&log).expect("log");
    content.push_str("{\"step\":12000,\"elapsed_secs\":3\n");
    std::fs::write(&log, content).expect("damage");
    let out = oware(&["report", run.to_str().expect("utf-8")]);
    assert!(!out.status.success());
    let msg = text(&out);
    assert!(msg.contains("eval.jsonl line 12"), "{msg}");
    assert!(!msg.contains("panicked"), "{msg}");
    assert!(!run.join("eval.png").exists());

    std::fs::write(&log, "").expect("empty");
    let out = oware(&["report", run.to_str().expect("utf-8")]);
    assert!(!out.status.success());
    assert!(text(&out).contains("eval.jsonl"), "{}", text(&out));

    std::fs::remove_file(&log).expect("remove");
    let out = oware(&["report", run.to_str().expect("utf-8")]);
    assert!(!out.status.success());
    assert!(text(&out).contains("eval.jsonl"), "{}", text(&out));

    let missing = run.join("no-such-run");
    let out = oware(&["report", missing.to_str().expect("utf-8")]);
    assert!(!out.status.success());
    assert!(text(&out).contains("no-such-run"), "{}", text(&out));
    let _ = std::fs::remove_dir_all(&run);
}
