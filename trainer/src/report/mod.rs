//! `oware report`: reads a run's `eval.jsonl` and draws its evaluation curve (score against
//! each opponent over training wall time) to a PNG, plus a text table of the evaluations.
//!
//! The chart is drawn with `plotters` ([`plot`]) on an in-memory bitmap with a font embedded
//! in the binary ([`chart`]), so no system font is needed; the `image` crate encodes the PNG.
//! Matches against the previous checkpoint (`vs_previous`) are listed in the table but
//! not plotted: their opponent changes at every evaluation, so they make no curve.

pub mod chart;
pub mod ladder;
pub mod plot;

use crate::eval::EvalLine;
use crate::rundir::write_atomic;
use anyhow::{Context, bail};
use oware_arena::elo::score_from_elo;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The fields every line of `eval.jsonl` must have.
const FIELDS: [&str; 13] = [
    "step",
    "elapsed_secs",
    "selfplay_games",
    "player",
    "opponent",
    "vs_previous",
    "games",
    "wins",
    "draws",
    "losses",
    "score",
    "elo",
    "elo_ci95",
];

/// Reads every evaluation of an `eval.jsonl` file, in file order. Blank lines are skipped. A
/// missing or empty file, or a line that is not a complete evaluation, is an error naming the
/// file and the line.
pub fn read_eval_log(path: &Path) -> anyhow::Result<Vec<EvalLine>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the evaluation log {}", path.display()))?;
    let mut lines = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        lines.push(parse_eval_line(line).with_context(|| {
            format!("{} line {}: not a valid evaluation", path.display(), n + 1)
        })?);
    }
    if lines.is_empty() {
        bail!(
            "{} holds no evaluations yet (a run writes one line per evaluation match)",
            path.display()
        );
    }
    Ok(lines)
}

/// Every evaluation of an `eval.jsonl` file, as [`read_eval_log`] reads it, but a missing or
/// empty file is no evaluation yet rather than an error.
pub fn read_eval_lines(path: &Path) -> anyhow::Result<Vec<EvalLine>> {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Ok(m) if m.len() == 0 => return Ok(Vec::new()),
        _ => {}
    }
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the evaluation log {}", path.display()))?;
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    read_eval_log(path)
}

/// Parses one line of `eval.jsonl`; the error says what is wrong with it.
pub fn parse_eval_line(line: &str) -> anyhow::Result<EvalLine> {
    let value: serde_json::Value = serde_json::from_str(line).context("not valid JSON")?;
    if !value.is_object() {
        bail!("not a JSON object");
    }
    if let Some(line) = EvalLine::from_json(&value) {
        if !(0.0..=1.0).contains(&line.score) {
            bail!("score {} is outside 0..1", line.score);
        }
        if line.elapsed_secs < 0.0 {
            bail!("elapsed_secs {} is negative", line.elapsed_secs);
        }
        return Ok(line);
    }
    let missing: Vec<&str> = FIELDS
        .iter()
        .copied()
        .filter(|f| value.get(f).is_none_or(|v| v.is_null()))
        .collect();
    if missing.is_empty() {
        bail!(
            "a field has the wrong type (expected: {})",
            FIELDS.join(", ")
        );
    }
    bail!("missing field(s): {}", missing.join(", "))
}

/// One plotted evaluation: a point of a curve.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    /// Training wall time in minutes.
    pub minutes: f64,
    /// Score in percent.
    pub score: f64,
    /// Low end of the score's 95% interval, in percent.
    pub low: f64,
    /// High end of the score's 95% interval, in percent.
    pub high: f64,
}

/// The evaluations against one opponent, by training time: one curve of the plot.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// The opponent's spec, as written in `eval.jsonl`.
    pub opponent: String,
    /// The points, sorted by time.
    pub points: Vec<Point>,
}

/// A point from an evaluation. The score interval is the Elo interval mapped back to scores,
/// widened where needed so it holds the score itself (the Elo of a clean sweep is clamped).
pub fn point(line: &EvalLine) -> Point {
    let score = line.score * 100.0;
    let (lo, hi) = line.elo_ci95;
    Point {
        minutes: line.elapsed_secs / 60.0,
        score,
        low: (score_from_elo(lo) * 100.0).min(score),
        high: (score_from_elo(hi) * 100.0).max(score),
    }
}

/// Groups the evaluations against fixed opponents into curves, in order of each opponent's
/// first appearance; matches against the previous checkpoint are left out.
pub fn series(lines: &[EvalLine]) -> Vec<Series> {
    let mut out: Vec<Series> = Vec::new();
    for line in lines.iter().filter(|l| !l.vs_previous) {
        let p = point(line);
        match out.iter_mut().find(|s| s.opponent == line.opponent) {
            Some(s) => s.points.push(p),
            None => out.push(Series {
                opponent: line.opponent.clone(),
                points: vec![p],
            }),
        }
    }
    for s in &mut out {
        s.points.sort_by(|a, b| a.minutes.total_cmp(&b.minutes));
    }
    out
}

/// How the table names an opponent: its spec, or `previous step-NNNNNNN` for the previous
/// checkpoint.
fn opponent_label(line: &EvalLine) -> String {
    if !line.vs_previous {
        return line.opponent.clone();
    }
    let step = line
        .opponent
        .split([',', '/', '\\', '='])
        .find(|part| part.starts_with("step-"));
    match step {
        Some(step) => format!("previous {step}"),
        None => "previous".to_string(),
    }
}

/// The player spec without its checkpoint path (`mcts:model=…,sims=100` → `mcts:sims=100`).
pub fn player_without_model(spec: &str) -> String {
    let Some((kind, options)) = spec.split_once(':') else {
        return spec.to_string();
    };
    let kept: Vec<&str> = options
        .split(',')
        .filter(|o| !o.starts_with("model="))
        .collect();
    if kept.is_empty() {
        kind.to_string()
    } else {
        format!("{kind}:{}", kept.join(","))
    }
}

/// A text table of the evaluations: step, minutes, opponent, W-D-L, score and Elo with its
/// 95% interval.
pub fn eval_table(lines: &[EvalLine]) -> String {
    let labels: Vec<String> = lines.iter().map(opponent_label).collect();
    let width = labels.iter().map(|l| l.len()).max().unwrap_or(0).max(8);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>8}  {:>7}  {:<width$}  {:>11}  {:>6}  Elo [95% interval]",
        "step", "minutes", "opponent", "W-D-L", "score"
    );
    for (line, label) in lines.iter().zip(&labels) {
        let (_, w, d, l) = line.wdl;
        let _ = writeln!(
            out,
            "{:>8}  {:>7.1}  {:<width$}  {:>11}  {:>5.1}%  {:+.0} [{:+.0}, {:+.0}]",
            line.step,
            line.elapsed_secs / 60.0,
            label,
            format!("{w}-{d}-{l}"),
            line.score * 100.0,
            line.elo,
            line.elo_ci95.0,
            line.elo_ci95.1,
        );
    }
    out
}

/// The name of a run for the plot's title: the directory's last component.
pub fn run_name(run: &Path) -> String {
    let named = |p: &Path| {
        p.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .filter(|n| !n.is_empty())
    };
    named(run)
        .or_else(|| run.canonicalize().ok().as_deref().and_then(named))
        .unwrap_or_else(|| run.display().to_string())
}

/// What [`report`] did.
#[derive(Clone, Debug)]
pub struct Report {
    /// The evaluation log read.
    pub eval_log: PathBuf,
    /// The PNG written.
    pub png: PathBuf,
    /// The Elo chart written (`eval-elo.png` beside `png`), when the log has Elo against an
    /// anchor.
    pub elo_png: Option<PathBuf>,
    /// The evaluations read, in file order.
    pub lines: Vec<EvalLine>,
}

/// Draws the evaluation curve of `run` (a run directory, or an `eval.jsonl` file directly) to
/// `out` (default `RUN/eval.png`, written atomically).
pub fn report(run: &Path, out: Option<&Path>) -> anyhow::Result<Report> {
    let (dir, eval_log) = if run.is_file() {
        let dir = run
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or_else(|| Path::new("."))
            .to_path_buf();
        (dir, run.to_path_buf())
    } else if run.is_dir() {
        (run.to_path_buf(), run.join("eval.jsonl"))
    } else {
        bail!("{}: no such run directory", run.display());
    };
    let lines = read_eval_log(&eval_log)?;
    let curves = series(&lines);
    if curves.is_empty() {
        bail!(
            "{} has only matches against the previous checkpoint; there is no opponent to plot",
            eval_log.display()
        );
    }
    let name = run_name(&dir);
    let subtitle = subtitle(&lines);
    let png = plot::draw(&name, &subtitle, &curves)?.encode_png()?;
    let out = out.map_or_else(|| dir.join("eval.png"), Path::to_path_buf);
    write_atomic(&out, &png)?;
    let curves = elo_series(&lines);
    let elo_png = if curves.is_empty() {
        None
    } else {
        let subtitle = format!(
            "{}: Elo against the anchor (0), Bradley-Terry fit over all evaluations so far, 95% bands",
            lines
                .last()
                .map(|l| player_without_model(&l.player))
                .unwrap_or_default()
        );
        let axis = plot::elo_axis(&curves);
        let png = plot::draw_with_axis(&name, &subtitle, &curves, &axis)?
            .0
            .encode_png()?;
        let stem = out
            .file_stem()
            .map_or_else(|| "eval".into(), |s| s.to_string_lossy().into_owned());
        let path = out.with_file_name(format!("{stem}-elo.png"));
        write_atomic(&path, &png)?;
        Some(path)
    };
    Ok(Report {
        eval_log,
        png: out,
        elo_png,
        lines,
    })
}

/// The Elo against the anchor over training time: one curve per anchor named in the log, one
/// point per evaluation (from its last line, whose fit holds all its matches), `score`/`low`/
/// `high` in Elo.
pub fn elo_series(lines: &[EvalLine]) -> Vec<Series> {
    let mut out: Vec<Series> = Vec::new();
    let mut last: Vec<(String, u64, usize)> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(a) = &line.vs_anchor else { continue };
        match last
            .iter_mut()
            .find(|(name, step, _)| *name == a.anchor && *step == line.step)
        {
            Some(entry) => entry.2 = i,
            None => last.push((a.anchor.clone(), line.step, i)),
        }
    }
    for &(_, _, i) in &last {
        let line = &lines[i];
        let Some(a) = &line.vs_anchor else { continue };
        let p = Point {
            minutes: line.elapsed_secs / 60.0,
            score: a.elo,
            low: a.ci95.0.min(a.elo),
            high: a.ci95.1.max(a.elo),
        };
        let name = format!("vs. anchor {}", a.anchor);
        match out.iter_mut().find(|s| s.opponent == name) {
            Some(s) => s.points.push(p),
            None => out.push(Series {
                opponent: name,
                points: vec![p],
            }),
        }
    }
    for s in &mut out {
        s.points.sort_by(|a, b| a.minutes.total_cmp(&b.minutes));
    }
    out
}

/// The line under the title: the network and where the last evaluation stood.
fn subtitle(lines: &[EvalLine]) -> String {
    match lines.iter().max_by(|a, b| a.step.cmp(&b.step)) {
        Some(last) => format!(
            "{} vs. each opponent, 95% bands; last step {}, {} game{}",
            player_without_model(&last.player),
            last.step,
            last.selfplay_games,
            if last.selfplay_games == 1 { "" } else { "s" }
        ),
        None => String::new(),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An evaluation line of `wdl` (wins, draws, losses) at `step` and `secs` (also the
    /// anchor's tests use it).
    pub(crate) fn line(step: u64, secs: f64, opponent: &str, wdl: (u32, u32, u32)) -> EvalLine {
        let score = oware_arena::elo::MatchScore::new(wdl.0, wdl.1, wdl.2);
        EvalLine {
            step,
            elapsed_secs: secs,
            selfplay_games: step * 2,
            player: format!("mcts:model=runs/x/checkpoints/step-{step:07},sims=100"),
            opponent: opponent.to_string(),
            vs_previous: opponent.starts_with("mcts:model="),
            wdl: (score.games(), wdl.0, wdl.1, wdl.2),
            score: score.score(),
            elo: score.elo(),
            elo_ci95: score.elo_ci95(),
            ..EvalLine::default()
        }
    }

    #[test]
    fn lines_round_trip_through_json() {
        let l = line(1000, 12.5, "alphabeta:depth=2", (14, 1, 5));
        let text = l.to_json().to_string();
        let back = parse_eval_line(&text).expect("parses");
        // serde_json may lose the last bit of a float; everything else is exact.
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(1.0);
        assert!(close(back.elo_ci95.1, l.elo_ci95.1) && close(back.elo, l.elo));
        let same = EvalLine {
            elo_ci95: l.elo_ci95,
            elo: l.elo,
            ..back
        };
        assert_eq!(same, l);
    }

    #[test]
    fn damaged_lines_say_what_is_wrong() {
        let err = |s: &str| format!("{:#}", parse_eval_line(s).expect_err("rejected"));
        assert!(err("{\"step\": 3").contains("not valid JSON"));
        assert!(err("[1, 2]").contains("not a JSON object"));
        let mut v = line(1, 1.0, "random", (1, 0, 0)).to_json();
        v.as_object_mut().expect("object").remove("wins");
        assert!(err(&v.to_string()).contains("missing field(s): wins"));
        v["wins"] = serde_json::json!("many");
        assert!(err(&v.to_string()).contains("wrong type"));
        let mut v = line(1, 1.0, "random", (1, 0, 0)).to_json();
        v["score"] = serde_json::json!(1.5);
        assert!(err(&v.to_string()).contains("score 1.5 is outside"));
        v["score"] = serde_json::json!(0.5);
        v["elapsed_secs"] = serde_json::json!(-3.0);
        assert!(err(&v.to_string()).contains("negative"));
    }

    #[test]
    fn log_errors_name_file_and_line() {
        let dir = std::env::temp_dir().join(format!("oware-report-log-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("eval.jsonl");
        let good = line(1000, 10.0, "random", (3, 0, 1)).to_json().to_string();
        std::fs::write(&path, format!("{good}\n\n{good}\n{{oops\n")).expect("write");
        let msg = format!("{:#}", read_eval_log(&path).expect_err("damaged"));
        assert!(msg.contains("eval.jsonl line 4"), "{msg}");
        std::fs::write(&path, format!("{good}\n\n{good}\n")).expect("write");
        assert_eq!(read_eval_log(&path).expect("reads").len(), 2);
        std::fs::write(&path, "\n").expect("write");
        let msg = format!("{:#}", read_eval_log(&path).expect_err("empty"));
        assert!(msg.contains("no evaluations"), "{msg}");
        let msg = format!(
            "{:#}",
            read_eval_log(&dir.join("nope.jsonl")).expect_err("missing")
        );
        assert!(msg.contains("nope.jsonl"), "{msg}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn series_group_by_opponent_and_skip_previous() {
        let lines = vec![
            line(2000, 120.0, "alphabeta:depth=2", (8, 0, 2)),
            line(2000, 120.0, "random", (10, 0, 0)),
            line(1000, 60.0, "alphabeta:depth=2", (5, 0, 5)),
            line(
                2000,
                120.0,
                "mcts:model=runs/x/checkpoints/step-0001000,sims=100",
                (6, 0, 4),
            ),
        ];
        let s = series(&lines);
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].opponent, "alphabeta:depth=2");
        assert_eq!(s[1].opponent, "random");
        let minutes: Vec<f64> = s[0].points.iter().map(|p| p.minutes).collect();
        assert_eq!(minutes, vec![1.0, 2.0]);
        assert!((s[0].points[1].score - 80.0).abs() < 1e-9);
    }

    #[test]
    fn intervals_hold_their_score() {
        for wdl in [(10, 0, 0), (0, 0, 10), (5, 0, 5), (7, 2, 1)] {
            let p = point(&line(1, 30.0, "random", wdl));
            assert!(p.low <= p.score && p.score <= p.high, "{wdl:?}: {p:?}");
            assert!(p.low >= 0.0 && p.high <= 100.0, "{wdl:?}: {p:?}");
            assert!(p.high - p.low > 1.0, "{wdl:?}: {p:?}");
        }
        let even = point(&line(1, 30.0, "random", (50, 0, 50)));
        assert!((even.low + even.high - 100.0).abs() < 1e-6);
    }

    #[test]
    fn table_lists_every_evaluation() {
        let lines = vec![
            line(1000, 90.0, "alphabeta:depth=2", (14, 1, 5)),
            line(
                2000,
                180.0,
                "mcts:model=runs/x/checkpoints/step-0001000,sims=100",
                (6, 0, 4),
            ),
        ];
        let table = eval_table(&lines);
        let rows: Vec<&str> = table.lines().collect();
        assert_eq!(rows.len(), 3);
        assert!(rows[0].contains("opponent") && rows[0].contains("W-D-L"));
        assert!(rows[1].contains("1000") && rows[1].contains("1.5"));
        assert!(rows[1].contains("alphabeta:depth=2") && rows[1].contains("14-1-5"));
        assert!(rows[1].contains("72.5%") && rows[1].contains("+168"));
        assert!(rows[2].contains("previous step-0001000") && rows[2].contains("60.0%"));
    }

    #[test]
    fn player_spec_loses_its_path() {
        assert_eq!(
            player_without_model("mcts:model=runs/a/checkpoints/step-0000100,sims=100"),
            "mcts:sims=100"
        );
        assert_eq!(player_without_model("mcts:model=x"), "mcts");
        assert_eq!(player_without_model("random"), "random");
    }

    #[test]
    fn run_names_come_from_the_directory() {
        assert_eq!(run_name(Path::new("runs/quick1")), "quick1");
        assert_eq!(run_name(Path::new("runs/quick1/")), "quick1");
        assert!(!run_name(Path::new(".")).is_empty());
    }
}
