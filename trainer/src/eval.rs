//! Evaluation during training: the current network (with MCTS) against the configured
//! opponents and the previous evaluated checkpoint, in paired-opening matches. The network
//! players' searches run batched, as in self-play (many games in flight per thread, one network
//! call per pass; see [`oware_arena`]).

use crate::auto_ms::{has_auto_ms, measure_millis_per_move, resolve_auto_ms};
use crate::config::EvalConfig;
use oware_arena::eval_log::EvalLine;
use oware_arena::{MatchOptions, MatchSummary, play_contest};
use oware_engine::DEFAULT_MAX_PLIES;
use oware_model::{DeviceKind, NetEvaluator};
use oware_players::spec::PlayerSpec;
use oware_players::spec::{MctsEvaluator, MctsSpec};
use oware_players::{LoadedNetwork, PlayerBuilder, contestant, load_network_with_search};
use oware_search::mcts::MctsConfig;
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
            configured,
            ..EvalLine::of_match(
                ctx.step,
                ctx.elapsed_secs,
                ctx.games,
                &me_spec.to_string(),
                name,
                *vs_previous,
                t,
            )
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
