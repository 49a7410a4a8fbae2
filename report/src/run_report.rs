//! `oware report`: reads a run's `eval.jsonl` and draws its evaluation curve (score against
//! each opponent over training wall time) to a PNG, plus a text table of the evaluations.
//!
//! The chart is drawn with `plotters` ([`plot`]) on an in-memory bitmap with a font embedded
//! in the binary ([`chart`]), so no system font is needed; the `image` crate encodes the PNG.
//! Matches against the previous checkpoint (`vs_previous`) are listed in the table but
//! not plotted: their opponent changes at every evaluation, so they make no curve.

use crate::plot;
use anyhow::bail;
use oware_arena::elo::score_from_elo;
use oware_arena::eval_log::{EvalLine, read_eval_log};
use oware_engine::atomic_file::write_atomic;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

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
mod tests {
    use super::*;
    use oware_arena::MatchScore;

    /// An evaluation line of `wdl` (wins, draws, losses) at `step` and `secs`.
    fn line(step: u64, secs: f64, opponent: &str, wdl: (u32, u32, u32)) -> EvalLine {
        EvalLine::of_match(
            step,
            secs,
            step * 2,
            &format!("mcts:model=runs/x/checkpoints/step-{step:07},sims=100"),
            opponent,
            opponent.starts_with("mcts:model="),
            MatchScore::new(wdl.0, wdl.1, wdl.2),
        )
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
