//! Evaluation during training: the current network (with MCTS) against the configured
//! opponents and the previous evaluated checkpoint, in paired-opening matches. The network
//! players' searches run batched, as in self-play (many games in flight per thread, one network
//! call per pass; see [`oware_engine::arena`]).

use crate::anchor::{AnchorElo, has_auto_ms, measure_millis_per_move, resolve_auto_ms};
use crate::config::EvalConfig;
use oware_arena::{MatchOptions, MatchSummary, play_contest};
use oware_engine::DEFAULT_MAX_PLIES;
use oware_model::{DeviceKind, NetEvaluator};
use oware_players::spec::PlayerSpec;
use oware_players::spec::{MctsEvaluator, MctsSpec};
use oware_players::{LoadedNetwork, PlayerBuilder, contestant, load_network_with_search};
use oware_search::mcts::MctsConfig;
use serde_json::json;
use std::path::Path;
use std::sync::Arc;

/// What an evaluation needs to know.
pub struct EvalContext<'a> {
    /// The `[eval]` section.
    pub config: &'a EvalConfig,
    /// The network under test (the learner's current weights).
    pub network: Arc<NetEvaluator>,
    /// The run's `[mcts]` section: the search the network under test plays with (without
    /// self-play noise and temperature, with the evaluation's simulations).
    pub search: &'a MctsConfig,
    /// The checkpoint these weights are saved as (after the evaluation, so that its
    /// `meta.json` holds it): the network player's name in `eval.jsonl`.
    pub checkpoint: &'a Path,
    /// The previous evaluated checkpoint, if any (it must exist).
    pub previous: Option<&'a Path>,
    /// The learner step of `checkpoint`.
    pub step: u64,
    /// Training wall-clock seconds so far.
    pub elapsed_secs: f64,
    /// Self-play games so far.
    pub games: u64,
    /// Device for the networks.
    pub device: DeviceKind,
    /// Seed of the openings.
    pub seed: u64,
}

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

fn network_spec(path: &Path, sims: u32) -> PlayerSpec {
    PlayerSpec::Mcts(MctsSpec {
        evaluator: MctsEvaluator::Model(path.display().to_string()),
        sims: Some(sims),
        ..MctsSpec::default()
    })
}

/// Plays every evaluation match; `on_match` receives each match's line and a line of progress
/// as soon as the match is over (an error from it stops the evaluation).
pub fn run_evaluation(
    ctx: &EvalContext<'_>,
    on_match: &mut dyn FnMut(&EvalLine, &str) -> anyhow::Result<()>,
) -> anyhow::Result<Vec<EvalLine>> {
    let cfg = ctx.config;
    let me_spec = network_spec(ctx.checkpoint, cfg.sims);
    let me = PlayerBuilder::with_network(
        me_spec.clone(),
        LoadedNetwork {
            evaluator: Arc::clone(&ctx.network),
            trained_search: Some(ctx.search.clone()),
        },
    );
    // `ms=auto` opponents search for the network's own time per move, timed once here.
    let mut auto_ms = None;
    let mut opponents: Vec<(String, bool, PlayerBuilder)> = Vec::new();
    let mut configured = Vec::new();
    let anchor =
        (!cfg.anchor.is_empty() && !cfg.opponents.contains(&cfg.anchor)).then_some(&cfg.anchor);
    for spec in cfg.opponents.iter().chain(anchor) {
        let played = if has_auto_ms(spec) {
            let ms = match auto_ms {
                Some(ms) => ms,
                None => {
                    let ms = measure_millis_per_move(me.build(ctx.seed)?.as_mut())?;
                    auto_ms = Some(ms);
                    ms
                }
            };
            configured.push(Some(spec.clone()));
            resolve_auto_ms(spec, ms)
        } else {
            configured.push(None);
            spec.clone()
        };
        let builder = PlayerBuilder::from_str(&played, ctx.device)?;
        opponents.push((played, false, builder));
    }
    if let Some(prev) = ctx.previous.filter(|_| cfg.vs_previous) {
        let spec = network_spec(prev, cfg.sims);
        let builder =
            PlayerBuilder::with_network(spec.clone(), load_network_with_search(prev, ctx.device)?);
        opponents.push((spec.to_string(), true, builder));
    }

    // A platform that cannot tell its core count plays one game at a time.
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let options = MatchOptions {
        games: cfg.games,
        opening_plies: Some(cfg.opening_plies),
        seed: ctx.seed,
        threads,
        max_plies: DEFAULT_MAX_PLIES,
    };
    let mut lines = Vec::new();
    let me_net = me.network_side()?;
    let all: Vec<u32> = (0..options.games).collect();
    configured.resize(opponents.len(), None);
    for ((name, vs_previous, opponent), configured) in opponents.iter().zip(configured) {
        let a = |seed: u64| me.build(seed).map_err(|e| format!("{e:#}"));
        let b = |seed: u64| opponent.build(seed).map_err(|e| format!("{e:#}"));
        let opponent_net = opponent.network_side()?;
        let games = play_contest(
            &contestant(&me_net, &a),
            &contestant(&opponent_net, &b),
            &options,
            &all,
            &|_| {},
        )
        .map_err(|e| anyhow::anyhow!(e))?;
        let summary = MatchSummary::from_games(&games);
        let t = summary.total;
        let line = EvalLine {
            step: ctx.step,
            elapsed_secs: ctx.elapsed_secs,
            selfplay_games: ctx.games,
            player: me_spec.to_string(),
            opponent: name.clone(),
            vs_previous: *vs_previous,
            wdl: (t.games(), t.wins, t.draws, t.losses),
            score: t.score(),
            elo: t.elo(),
            elo_ci95: t.elo_ci95(),
            configured,
            vs_anchor: None,
        };
        let note = format!(
            "eval step {}: vs {}: {}-{}-{} ({:.1}%), Elo {:+.0} [{:+.0}, {:+.0}]",
            ctx.step,
            if *vs_previous { "previous" } else { name },
            t.wins,
            t.draws,
            t.losses,
            100.0 * t.score(),
            t.elo(),
            line.elo_ci95.0,
            line.elo_ci95.1
        );
        on_match(&line, &note)?;
        lines.push(line);
    }
    Ok(lines)
}
