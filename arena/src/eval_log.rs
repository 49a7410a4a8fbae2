//! The evaluation log of a training run, `eval.jsonl`: one line per evaluation match (the
//! network at a learner step against one opponent), written by the trainer and read back by
//! `oware report` and the anchor rating ([`crate::anchor`]).

use crate::anchor::AnchorElo;
use crate::elo::MatchScore;
use anyhow::{Context, bail};
use serde_json::json;
use std::path::Path;

/// One match of an evaluation: a line of `eval.jsonl`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EvalLine {
    /// Learner step.
    pub step: u64,
    /// Training seconds so far.
    pub elapsed_secs: f64,
    /// Self-play games so far.
    pub selfplay_games: u64,
    /// The network player's spec.
    pub player: String,
    /// The opponent's spec (`previous` matches name the checkpoint).
    pub opponent: String,
    /// Whether the opponent is the previous checkpoint.
    pub vs_previous: bool,
    /// Games, wins, draws, losses of the network.
    pub wdl: (u32, u32, u32, u32),
    /// Score 0..1.
    pub score: f64,
    /// Elo difference and its 95% interval.
    pub elo: f64,
    /// 95% interval of the Elo difference.
    pub elo_ci95: (f64, f64),
    /// The opponent as `[eval] opponents` names it, when that differs from the spec played
    /// (`alphabeta:ms=auto`, played as `alphabeta:ms=N`).
    pub configured: Option<String>,
    /// The network's Elo against `[eval] anchor` at this evaluation (the same on every line of
    /// it), when an anchor is set.
    pub vs_anchor: Option<AnchorElo>,
}

impl EvalLine {
    /// The line of a match of the network `player` against `opponent` that scored `score`,
    /// at learner step `step`, `elapsed_secs` seconds and `selfplay_games` games into the run
    /// (no configured opponent, no anchor rating).
    pub fn of_match(
        step: u64,
        elapsed_secs: f64,
        selfplay_games: u64,
        player: &str,
        opponent: &str,
        vs_previous: bool,
        score: MatchScore,
    ) -> EvalLine {
        EvalLine {
            step,
            elapsed_secs,
            selfplay_games,
            player: player.to_string(),
            opponent: opponent.to_string(),
            vs_previous,
            wdl: (score.games(), score.wins, score.draws, score.losses),
            score: score.score(),
            elo: score.elo(),
            elo_ci95: score.elo_ci95(),
            configured: None,
            vs_anchor: None,
        }
    }

    /// The `eval.jsonl` object.
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = json!({
            "step": self.step,
            "elapsed_secs": (self.elapsed_secs * 10.0).round() / 10.0,
            "selfplay_games": self.selfplay_games,
            "player": self.player,
            "opponent": self.opponent,
            "vs_previous": self.vs_previous,
            "games": self.wdl.0,
            "wins": self.wdl.1,
            "draws": self.wdl.2,
            "losses": self.wdl.3,
            "score": self.score,
            "elo": self.elo,
            "elo_ci95": [self.elo_ci95.0, self.elo_ci95.1],
        });
        if let Some(c) = &self.configured {
            v["opponent_config"] = json!(c);
        }
        if let Some(a) = &self.vs_anchor {
            v["anchor"] = json!(a.anchor);
            v["elo_vs_anchor"] = json!(a.elo);
            v["elo_vs_anchor_ci95"] = json!([a.ci95.0, a.ci95.1]);
        }
        v
    }

    /// A TensorBoard-friendly name of the opponent: `alphabeta_depth_4`, `previous`.
    pub fn opponent_tag(&self) -> String {
        if self.vs_previous {
            return "previous".to_string();
        }
        let mut tag: String = self
            .configured
            .as_deref()
            .unwrap_or(&self.opponent)
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        while tag.contains("__") {
            tag = tag.replace("__", "_");
        }
        tag.trim_matches('_').to_string()
    }

    /// Parses a line of `eval.jsonl` back (for reports).
    pub fn from_json(v: &serde_json::Value) -> Option<EvalLine> {
        let ci = v.get("elo_ci95")?.as_array()?;
        Some(EvalLine {
            step: v.get("step")?.as_u64()?,
            elapsed_secs: v.get("elapsed_secs")?.as_f64()?,
            selfplay_games: v.get("selfplay_games")?.as_u64()?,
            player: v.get("player")?.as_str()?.to_string(),
            opponent: v.get("opponent")?.as_str()?.to_string(),
            vs_previous: v.get("vs_previous")?.as_bool()?,
            wdl: (
                v.get("games")?.as_u64()? as u32,
                v.get("wins")?.as_u64()? as u32,
                v.get("draws")?.as_u64()? as u32,
                v.get("losses")?.as_u64()? as u32,
            ),
            score: v.get("score")?.as_f64()?,
            elo: v.get("elo")?.as_f64()?,
            elo_ci95: (ci.first()?.as_f64()?, ci.get(1)?.as_f64()?),
            configured: match v.get("opponent_config") {
                None => None,
                Some(c) => Some(c.as_str()?.to_string()),
            },
            vs_anchor: match v.get("elo_vs_anchor") {
                None => None,
                Some(elo) => {
                    let ci = v.get("elo_vs_anchor_ci95")?.as_array()?;
                    Some(AnchorElo {
                        anchor: v.get("anchor")?.as_str()?.to_string(),
                        elo: elo.as_f64()?,
                        ci95: (ci.first()?.as_f64()?, ci.get(1)?.as_f64()?),
                    })
                }
            },
        })
    }
}

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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An evaluation line of `wdl` (wins, draws, losses) at `step` and `secs`, against
    /// `opponent` (a `mcts:model=` opponent is the previous checkpoint).
    pub(crate) fn line(step: u64, secs: f64, opponent: &str, wdl: (u32, u32, u32)) -> EvalLine {
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
}
