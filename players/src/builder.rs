//! The player builder: a spec string in, a fresh [`Player`] per game out, loading a network once.

use anyhow::Context;
use oware_engine::mcts::{MctsConfig, RolloutMctsPlayer};
use oware_engine::spec::{MctsEvaluator, MctsSpec};
use oware_engine::{AlphaBetaPlayer, MctsPlayer, Player, PlayerSpec, RandomPlayer};
use oware_model::{DeviceKind, NetEvaluator, load_evaluator, resolve_checkpoint};
use std::path::Path;
use std::sync::Arc;

/// Loads the network a `model=PATH` names: a checkpoint folder or a run directory (its latest
/// checkpoint). The error names the path and what is wrong.
pub fn load_network(path: &Path, device: DeviceKind) -> anyhow::Result<Arc<NetEvaluator>> {
    let dir = resolve_checkpoint(path)?;
    let device = oware_model::device(device)?;
    let (evaluator, _) = load_evaluator(&dir, &device)
        .with_context(|| format!("loading the model in {}", dir.display()))?;
    Ok(Arc::new(evaluator))
}

/// The MCTS settings of a network player: the play-time defaults (no noise, greedy), with the
/// spec's simulations, batch and exploration constant.
pub fn play_mcts_config(spec: &MctsSpec) -> MctsConfig {
    let mut config = MctsConfig {
        sims: spec.sims,
        temperature: 0.0,
        ..MctsConfig::default()
    };
    if let Some(b) = spec.batch {
        config.leaves_per_tree = b.max(1);
    }
    if let Some(c) = spec.c {
        config.c_puct = c;
    }
    config
}

/// Builds players from one spec many times (one per game), loading a network only once.
pub struct PlayerBuilder {
    spec: PlayerSpec,
    network: Option<Arc<NetEvaluator>>,
}

impl PlayerBuilder {
    /// Prepares to build `spec`: loads its network, if it has one.
    pub fn new(spec: &PlayerSpec, device: DeviceKind) -> anyhow::Result<PlayerBuilder> {
        let network = match spec {
            PlayerSpec::Mcts(MctsSpec {
                evaluator: MctsEvaluator::Model(path),
                ..
            }) => Some(load_network(Path::new(path), device)?),
            _ => None,
        };
        Ok(PlayerBuilder {
            spec: spec.clone(),
            network,
        })
    }

    /// Prepares to build the player a spec string names.
    pub fn from_str(spec: &str, device: DeviceKind) -> anyhow::Result<PlayerBuilder> {
        let parsed: PlayerSpec = spec.parse()?;
        PlayerBuilder::new(&parsed, device)
    }

    /// A network player with an already loaded network.
    pub fn with_network(spec: PlayerSpec, network: Arc<NetEvaluator>) -> PlayerBuilder {
        PlayerBuilder {
            spec,
            network: Some(network),
        }
    }

    /// The spec.
    pub fn spec(&self) -> &PlayerSpec {
        &self.spec
    }

    /// A fresh player for one game.
    pub fn build(&self, seed: u64) -> anyhow::Result<Box<dyn Player>> {
        let name = self.spec.to_string();
        Ok(match &self.spec {
            PlayerSpec::Random => Box::new(RandomPlayer::new(seed)),
            PlayerSpec::AlphaBeta { depth, millis } => {
                Box::new(AlphaBetaPlayer::new(*depth, *millis, seed))
            }
            PlayerSpec::Mcts(m) => match &m.evaluator {
                MctsEvaluator::Rollouts => Box::new(
                    RolloutMctsPlayer::new(
                        m.sims,
                        // The spec's `c=` when given, else the documented default.
                        m.c.unwrap_or(oware_engine::mcts::DEFAULT_UCT_C),
                        seed,
                    )
                    .with_name(name),
                ),
                MctsEvaluator::Model(path) => {
                    let network = self
                        .network
                        .clone()
                        .with_context(|| format!("the model {path} is not loaded"))?;
                    Box::new(MctsPlayer::new(network, play_mcts_config(m), seed)?.with_name(name))
                }
            },
            PlayerSpec::Human => anyhow::bail!(
                "'human' is a person at the keyboard: use `oware play` to play against an AI"
            ),
        })
    }
}

/// Parses `spec` and builds one player (CPU device for networks).
pub fn build_player_from_str(spec: &str, seed: u64) -> anyhow::Result<Box<dyn Player>> {
    PlayerBuilder::from_str(spec, DeviceKind::Cpu)?.build(seed)
}

/// Builds the player `spec` names (networks on the CPU), seeded with `seed`.
pub fn build_player(spec: &PlayerSpec, seed: u64) -> anyhow::Result<Box<dyn Player>> {
    PlayerBuilder::new(spec, DeviceKind::Cpu)?.build(seed)
}
