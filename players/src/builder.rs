//! The player builder: a spec string in, a fresh [`Player`] per game out, loading a network once.

use crate::spec::PlayerSpec;
use crate::spec::{MctsEvaluator, MctsSpec};
use anyhow::Context;
use oware_arena::{Contestant, NetworkSide, PlayerFactory};
use oware_egtb::Tables;
use oware_model::{DeviceKind, NetEvaluator, load_evaluator, resolve_checkpoint};
use oware_search::alphabeta::{AlphaBetaOptions, Book, EvalWeights};
use oware_search::mcts::{CpuctForm, MctsConfig, RolloutMctsPlayer};
use oware_search::{AlphaBetaPlayer, MctsPlayer, Player, RandomPlayer, TableEvaluator};
use std::path::Path;
use std::sync::Arc;

/// A loaded network and the search settings its checkpoint was trained with.
#[derive(Clone, Debug)]
pub struct LoadedNetwork {
    /// The network.
    pub evaluator: Arc<NetEvaluator>,
    /// The run's `[mcts]` section stored in the checkpoint; `None` for checkpoints written
    /// before it was stored (their players use `MctsConfig::default()`).
    pub trained_search: Option<MctsConfig>,
}

/// Loads the network a `model=PATH` names: a checkpoint folder or a run directory (its latest
/// checkpoint), with the search settings it was trained with. The error names the path and
/// what is wrong.
pub fn load_network_with_search(path: &Path, device: DeviceKind) -> anyhow::Result<LoadedNetwork> {
    let dir = resolve_checkpoint(path)?;
    let device = oware_model::device(device)?;
    let (evaluator, meta) = load_evaluator(&dir, &device)
        .with_context(|| format!("loading the model in {}", dir.display()))?;
    Ok(LoadedNetwork {
        evaluator: Arc::new(evaluator),
        trained_search: meta.mcts,
    })
}

/// Loads the network a `model=PATH` names (see [`load_network_with_search`]), without its
/// search settings.
pub fn load_network(path: &Path, device: DeviceKind) -> anyhow::Result<Arc<NetEvaluator>> {
    Ok(load_network_with_search(path, device)?.evaluator)
}

/// The MCTS settings of a network player: the search the network was trained with
/// (`trained`, the checkpoint's `[mcts]`; `MctsConfig::default()` when the checkpoint predates
/// that record) without self-play exploration (no Dirichlet noise, temperature 0: the most
/// visited move or the sequential-halving winner), then the spec's keys on top: `sims=`,
/// `batch=` (leaves per tree), `c=` (the constant PUCT factor; it also makes the form
/// constant), `fpu=` and `root=`. The result is validated: the error names the bad setting.
pub fn play_mcts_config(
    spec: &MctsSpec,
    trained: Option<&MctsConfig>,
) -> anyhow::Result<MctsConfig> {
    let mut config = trained.cloned().unwrap_or_default();
    config.dirichlet_frac = 0.0;
    config.temperature = 0.0;
    config.temperature_plies = 0;
    if let Some(s) = spec.sims {
        config.sims = s;
    }
    if let Some(b) = spec.batch {
        config.leaves_per_tree = b;
    }
    if let Some(c) = spec.c {
        config.c_puct = c;
        config.cpuct_form = CpuctForm::Constant;
    }
    if let Some(f) = spec.fpu {
        config.fpu_reduction = f;
    }
    if let Some(r) = spec.root {
        config.root = r;
    }
    config
        .validate()
        .with_context(|| format!("the search of player {}", PlayerSpec::Mcts(spec.clone())))?;
    Ok(config)
}

/// When and where a network player's checkpoint was trained: its run and the training wall
/// time it had when it was saved.
#[derive(Clone, Debug, PartialEq)]
pub struct TrainingTime {
    /// The run's name: the run directory of `RUN/checkpoints/step-N`, else the checkpoint
    /// folder's own name.
    pub run: String,
    /// Training wall-clock minutes when the checkpoint was written (over all resumes).
    pub minutes: f64,
    /// Its learner step.
    pub step: u64,
}

/// The training time of the checkpoint a `mcts:model=PATH` spec plays (`None` for other
/// players, and for checkpoints that do not record their training time). A missing or
/// damaged checkpoint is an error naming it.
pub fn training_time(spec: &PlayerSpec) -> anyhow::Result<Option<TrainingTime>> {
    let PlayerSpec::Mcts(MctsSpec {
        evaluator: MctsEvaluator::Model(path),
        ..
    }) = spec
    else {
        return Ok(None);
    };
    let dir = resolve_checkpoint(Path::new(path))?;
    let info = oware_model::read_checkpoint_info(&dir)
        .with_context(|| format!("reading {}", dir.display()))?;
    let Some(secs) = info.meta.extra.get("elapsed_secs").and_then(|v| v.as_f64()) else {
        return Ok(None);
    };
    let name = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned());
    let parent = dir.parent();
    let run = match parent.and_then(name) {
        Some(folder) if folder == oware_model::CHECKPOINTS_DIR => {
            parent.and_then(Path::parent).and_then(name)
        }
        _ => name(&dir),
    }
    .unwrap_or_else(|| dir.display().to_string());
    Ok(Some(TrainingTime {
        run,
        minutes: secs / 60.0,
        step: info.meta.step,
    }))
}

/// Loads the endgame tables an `egtb=DIR` names (every table of the directory).
pub fn load_tables(dir: &Path) -> anyhow::Result<Arc<Tables>> {
    let tables = Tables::load(dir)
        .with_context(|| format!("loading the endgame tables in {}", dir.display()))?;
    Ok(Arc::new(tables))
}

/// The evaluation weights an `eval=` names: `classic` and `tuned` are the shipped sets
/// (`models/alphabeta/`), anything else a weights file (`./classic` for a file of that name).
/// A missing, damaged or foreign file is an error naming it.
pub fn load_eval_weights(eval: &str) -> anyhow::Result<EvalWeights> {
    match eval {
        "classic" => Ok(EvalWeights::CLASSIC),
        "tuned" => Ok(EvalWeights::TUNED),
        path => EvalWeights::load(Path::new(path)).map_err(|e| anyhow::anyhow!("eval={path}: {e}")),
    }
}

/// The opening book file a `book=FILE` names. A missing, damaged or foreign file is an error
/// naming it and the line.
pub fn load_book(book: &str) -> anyhow::Result<Arc<Book>> {
    Book::load(Path::new(book))
        .map(Arc::new)
        .map_err(|e| anyhow::anyhow!("book={book}: {e}"))
}

/// The alpha-beta options a spec's keys give (its weights and book files read now).
fn alphabeta_options(spec: &PlayerSpec) -> anyhow::Result<Option<AlphaBetaOptions>> {
    let PlayerSpec::AlphaBeta {
        eval,
        tt_mb,
        tm,
        asp,
        qdepth,
        book,
        ..
    } = spec
    else {
        return Ok(None);
    };
    let mut options = AlphaBetaOptions::default();
    if let Some(e) = eval {
        options.weights = load_eval_weights(e)?;
    }
    if let Some(mb) = tt_mb {
        options.tt_mb = *mb as usize;
    }
    if let Some(tm) = tm {
        options.time_use = *tm;
    }
    if let Some(asp) = asp {
        options.aspiration = *asp;
    }
    if let Some(q) = qdepth {
        options.qdepth = *q;
    }
    if let Some(b) = book {
        options.book = Some(load_book(b)?);
    }
    Ok(Some(options))
}

/// The `egtb=DIR` of a spec, if any.
fn tables_dir(spec: &PlayerSpec) -> Option<&str> {
    match spec {
        PlayerSpec::AlphaBeta { egtb, .. } => egtb.as_deref(),
        PlayerSpec::Mcts(m) => m.egtb.as_deref(),
        _ => None,
    }
}

/// Builds players from one spec many times (one per game), loading a network and endgame
/// tables only once.
pub struct PlayerBuilder {
    spec: PlayerSpec,
    network: Option<LoadedNetwork>,
    tables: Option<Arc<Tables>>,
    /// An alpha-beta spec's options (its weights loaded once).
    alphabeta: Option<AlphaBetaOptions>,
}

impl PlayerBuilder {
    /// Prepares to build `spec`: loads its network, if it has one.
    pub fn new(spec: &PlayerSpec, device: DeviceKind) -> anyhow::Result<PlayerBuilder> {
        let network = match spec {
            PlayerSpec::Mcts(MctsSpec {
                evaluator: MctsEvaluator::Model(path),
                ..
            }) => Some(load_network_with_search(Path::new(path), device)?),
            _ => None,
        };
        let tables = match tables_dir(spec) {
            Some(dir) => Some(load_tables(Path::new(dir))?),
            None => None,
        };
        let alphabeta = alphabeta_options(spec)?;
        Ok(PlayerBuilder {
            spec: spec.clone(),
            network,
            tables,
            alphabeta,
        })
    }

    /// Prepares to build the player a spec string names.
    pub fn from_str(spec: &str, device: DeviceKind) -> anyhow::Result<PlayerBuilder> {
        let parsed: PlayerSpec = spec.parse()?;
        PlayerBuilder::new(&parsed, device)
    }

    /// A network player with an already loaded network (and no tables) and the search it was
    /// trained with (`None`: `MctsConfig::default()`).
    pub fn with_network(spec: PlayerSpec, network: LoadedNetwork) -> PlayerBuilder {
        PlayerBuilder {
            spec,
            network: Some(network),
            tables: None,
            alphabeta: None,
        }
    }

    /// The search settings a network player built from this spec uses (see
    /// [`play_mcts_config`]); `None` for players without a network.
    pub fn network_search(&self) -> anyhow::Result<Option<MctsConfig>> {
        match (&self.spec, &self.network) {
            (PlayerSpec::Mcts(m), Some(n)) => {
                Ok(Some(play_mcts_config(m, n.trained_search.as_ref())?))
            }
            _ => Ok(None),
        }
    }

    /// How a match plays this player batched: the network and its search (as
    /// [`PlayerBuilder::network_search`]) for a network player with a simulation budget;
    /// `None` for players without a network and for timed network players (`ms=`), whose
    /// clock is per move and per game, so they choose their moves one game at a time.
    pub fn network_side(&self) -> anyhow::Result<Option<NetworkSide>> {
        let (PlayerSpec::Mcts(m), Some(loaded)) = (&self.spec, &self.network) else {
            return Ok(None);
        };
        if m.millis.is_some() {
            return Ok(None);
        }
        let config = play_mcts_config(m, loaded.trained_search.as_ref())?;
        let network = Arc::clone(&loaded.evaluator);
        let evaluator: Arc<dyn oware_search::Evaluator + Send> = match &self.tables {
            Some(t) => Arc::new(TableEvaluator::new(network, t.clone())),
            None => network,
        };
        Ok(Some(NetworkSide {
            name: self.spec.to_string(),
            evaluator,
            config,
            tables: self.tables.clone(),
        }))
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
            PlayerSpec::AlphaBeta {
                depth,
                millis,
                eval,
                tt_mb,
                tm,
                asp,
                qdepth,
                book,
                ..
            } => {
                let options = self.alphabeta.clone().unwrap_or_default();
                let mut player = AlphaBetaPlayer::with_options(*depth, *millis, seed, &options);
                if eval.is_some()
                    || tt_mb.is_some()
                    || tm.is_some()
                    || asp.is_some()
                    || qdepth.is_some()
                    || book.is_some()
                {
                    // The player names only its budget and tables: the spec names the rest.
                    player = player.with_name(name);
                }
                match &self.tables {
                    Some(t) => Box::new(player.with_tables(t.clone())),
                    None => Box::new(player),
                }
            }
            PlayerSpec::Mcts(m) => match &m.evaluator {
                MctsEvaluator::Rollouts => Box::new(
                    RolloutMctsPlayer::new(
                        m.sims.unwrap_or(crate::spec::DEFAULT_MCTS_SIMS),
                        // The spec's `c=` when given, else the documented default.
                        m.c.unwrap_or(oware_search::mcts::DEFAULT_UCT_C),
                        seed,
                    )
                    .with_time(m.millis.map(|ms| (ms, m.sims)))
                    .with_name(name),
                ),
                MctsEvaluator::Model(path) => {
                    let loaded = self
                        .network
                        .as_ref()
                        .with_context(|| format!("the model {path} is not loaded"))?;
                    let config = play_mcts_config(m, loaded.trained_search.as_ref())?;
                    let network = Arc::clone(&loaded.evaluator);
                    let time = m.millis.map(|ms| (ms, m.sims));
                    match &self.tables {
                        Some(t) => Box::new(
                            MctsPlayer::new(TableEvaluator::new(network, t.clone()), config, seed)?
                                .with_tables(t.clone())
                                .with_time(time)
                                .with_name(name),
                        ),
                        None => Box::new(
                            MctsPlayer::new(network, config, seed)?
                                .with_time(time)
                                .with_name(name),
                        ),
                    }
                }
            },
            PlayerSpec::Human => anyhow::bail!(
                "'human' is a person at the keyboard: use `oware play` to play against an AI"
            ),
        })
    }
}

/// How one side of a match is played: batched when [`PlayerBuilder::network_side`] gives a
/// network side (`network`), else by per-game players from `factory`.
pub fn contestant<'a>(
    network: &'a Option<NetworkSide>,
    factory: &'a PlayerFactory<'a>,
) -> Contestant<'a> {
    match network {
        Some(side) => Contestant::Network(side),
        None => Contestant::Player(factory),
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
