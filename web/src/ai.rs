//! The AI players the server offers, and the bounded pool their searches run on.
//!
//! A search never runs on the async runtime: it takes one of `ai_threads` permits and runs in
//! `spawn_blocking`, so a slow AI delays only the searches queued behind it, never a move of
//! another game. Each search is one `choose` with the operator's spec (every spec has a depth,
//! a time or a simulation count), and a table or a connection has at most one search of each
//! kind waiting, so no client can ask for unbounded work.

use anyhow::Context;
use oware_engine::{Game, Move, Side, Winner};
use oware_model::DeviceKind;
use oware_players::PlayerBuilder;
use oware_players::spec::{MctsEvaluator, PlayerSpec};
use oware_search::{Budget, Choice};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::Semaphore;

/// One player the server can build.
pub struct AiEntry {
    /// The spec string, canonical.
    pub spec: String,
    /// A name for people.
    pub label: String,
    builder: Arc<PlayerBuilder>,
}

impl AiEntry {
    /// Parses and prepares `spec` (loading its network, if any).
    pub fn load(spec: &str) -> anyhow::Result<AiEntry> {
        let parsed: PlayerSpec = spec.parse()?;
        if parsed == PlayerSpec::Human {
            anyhow::bail!("--ai human: a person cannot be offered as the AI");
        }
        let builder = PlayerBuilder::new(&parsed, DeviceKind::Cpu)
            .with_context(|| format!("cannot build the AI player '{spec}'"))?;
        Ok(AiEntry {
            spec: parsed.to_string(),
            label: label(&parsed),
            builder: Arc::new(builder),
        })
    }
}

/// A short name for people: "Alpha-beta, 5 plies", "Network NAME, MCTS 400 sims", ...
pub fn label(spec: &PlayerSpec) -> String {
    match spec {
        PlayerSpec::Random => "Random moves".to_string(),
        PlayerSpec::Human => "A person".to_string(),
        PlayerSpec::AlphaBeta {
            depth,
            millis,
            egtb,
        } => {
            let base = match (depth, millis) {
                (Some(d), None) => format!("Alpha-beta, {d} plies"),
                (None, Some(ms)) => format!("Alpha-beta, {:.1} s a move", *ms as f64 / 1000.0),
                (Some(d), Some(ms)) => format!("Alpha-beta, {d} plies or {ms} ms"),
                (None, None) => "Alpha-beta".to_string(),
            };
            match egtb {
                Some(_) => format!("{base}, endgame tables"),
                None => base,
            }
        }
        PlayerSpec::Mcts(m) => {
            // The budget as the spec states it; without one, the player's own default.
            let budget = match (m.sims, m.millis) {
                (Some(s), _) => format!("{s} sims"),
                (None, Some(ms)) => format!("{ms} ms a move"),
                (None, None) => match &m.evaluator {
                    MctsEvaluator::Rollouts => {
                        format!("{} sims", oware_players::spec::DEFAULT_MCTS_SIMS)
                    }
                    MctsEvaluator::Model(_) => "its trained sims".to_string(),
                },
            };
            match &m.evaluator {
                MctsEvaluator::Rollouts => format!("MCTS with rollouts, {budget}"),
                MctsEvaluator::Model(path) => {
                    let name = std::path::Path::new(path)
                        .file_name()
                        .map_or_else(|| path.clone(), |n| n.to_string_lossy().into_owned());
                    format!("Network {name}, MCTS {budget}")
                }
            }
        }
    }
}

/// The players offered, and the one that evaluates positions for the review graph.
pub struct Roster {
    /// The AIs, in the order of `--ai`.
    pub ais: Vec<AiEntry>,
    /// The evaluating player.
    pub analysis: AiEntry,
}

impl Roster {
    /// Loads every spec; the first error names its spec.
    pub fn load(ais: &[String], analysis: &str) -> anyhow::Result<Roster> {
        if ais.is_empty() {
            anyhow::bail!("no AI player to offer");
        }
        let ais = ais
            .iter()
            .map(|s| AiEntry::load(s))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let analysis = AiEntry::load(analysis).context("--analysis")?;
        if analysis.builder.spec() == &PlayerSpec::Random {
            anyhow::bail!(
                "--analysis random: the review graph needs a player that evaluates positions \
                 (alphabeta or mcts)"
            );
        }
        Ok(Roster { ais, analysis })
    }
}

/// A place in the search queue; dropping it frees the place.
#[derive(Debug)]
pub struct Ticket(Arc<AtomicUsize>);

impl Drop for Ticket {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The bounded pool that runs searches.
#[derive(Debug)]
pub struct AiPool {
    permits: Arc<Semaphore>,
    queued: Arc<AtomicUsize>,
    max_queue: usize,
}

impl AiPool {
    /// A pool running `threads` searches at once, with at most `max_queue` waiting or running
    /// for optional work (hints, reviews).
    pub fn new(threads: usize, max_queue: usize) -> AiPool {
        AiPool {
            permits: Arc::new(Semaphore::new(threads.max(1))),
            queued: Arc::new(AtomicUsize::new(0)),
            max_queue,
        }
    }

    /// A place for an AI's own move: always given (there is at most one per game).
    pub fn ticket(&self) -> Ticket {
        self.queued.fetch_add(1, Ordering::AcqRel);
        Ticket(self.queued.clone())
    }

    /// A place for optional work, unless the queue is full.
    pub fn try_ticket(&self) -> Option<Ticket> {
        let n = self.queued.fetch_add(1, Ordering::AcqRel);
        let ticket = Ticket(self.queued.clone());
        (n < self.max_queue).then_some(ticket)
    }

    /// Searches waiting or running.
    pub fn queued(&self) -> usize {
        self.queued.load(Ordering::Acquire)
    }

    /// Runs `job` on a blocking thread once a permit is free. A panic in the job is an error.
    pub async fn run<T: Send + 'static>(
        &self,
        ticket: Ticket,
        job: impl FnOnce() -> anyhow::Result<T> + Send + 'static,
    ) -> anyhow::Result<T> {
        let permit = self
            .permits
            .clone()
            .acquire_owned()
            .await
            .context("the search pool is closed")?;
        let result = tokio::task::spawn_blocking(move || {
            let out = job();
            drop(permit);
            out
        })
        .await;
        drop(ticket);
        match result {
            Ok(out) => out,
            Err(e) => Err(anyhow::anyhow!("the search stopped: {e}")),
        }
    }
}

/// A random seed for a player.
fn seed() -> u64 {
    rand::random()
}

/// A search to run: what `entry` plays in `game`.
pub fn choose_job(entry: &AiEntry, game: Game) -> impl FnOnce() -> anyhow::Result<Choice> + use<> {
    let builder = entry.builder.clone();
    move || {
        if game.is_over() {
            anyhow::bail!("the game is over");
        }
        let mut player = builder.build(seed())?;
        player
            .choose(&game, Budget::default())
            .with_context(|| format!("the AI '{}' could not choose a move", player.name()))
    }
}

/// A search to run: South's expected result (-1..1) in every state of the game `moves` make,
/// the start included, by one player of `entry` (finished states score their result).
pub fn analysis_job(
    entry: &AiEntry,
    moves: Vec<Move>,
) -> impl FnOnce() -> anyhow::Result<Vec<f32>> + use<> {
    let builder = entry.builder.clone();
    move || {
        let mut player = builder.build(seed())?;
        let mut game = Game::new();
        let mut evals = Vec::with_capacity(moves.len() + 1);
        for i in 0..=moves.len() {
            evals.push(evaluate_for_south(player.as_mut(), &game)?);
            if let Some(&mv) = moves.get(i) {
                game.play(mv).context("the reviewed game is not legal")?;
            }
        }
        Ok(evals)
    }
}

/// South's expected result in `game`: the result once over, else the player's evaluation.
fn evaluate_for_south(player: &mut dyn oware_search::Player, game: &Game) -> anyhow::Result<f32> {
    if let Some(r) = game.result() {
        return Ok(match r.winner {
            Winner::Draw => 0.0,
            Winner::Side(s) => south_value(1.0, s),
        });
    }
    let choice = player
        .choose(game, Budget::default())
        .with_context(|| format!("the analysis player '{}' failed", player.name()))?;
    let value = choice.value.with_context(|| {
        format!(
            "the analysis player '{}' gives no evaluation",
            player.name()
        )
    })?;
    Ok(south_value(value, game.to_move()))
}

/// A value for `side` seen from South's side.
pub fn south_value(value: f32, side: Side) -> f32 {
    match side {
        Side::South => value,
        Side::North => -value,
    }
}

/// The state reached by the move that changed South's evaluation most (the turning point),
/// when the game has a move.
pub fn turning_point(evals: &[f32]) -> Option<usize> {
    let mut best: Option<(f32, usize)> = None;
    for (i, w) in evals.windows(2).enumerate() {
        let swing = (w[1] - w[0]).abs();
        if best.is_none_or(|(b, _)| swing > b) {
            best = Some((swing, i + 1));
        }
    }
    best.map(|(_, k)| k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_say_what_plays() {
        let l = |s: &str| label(&s.parse().expect("spec"));
        assert_eq!(l("alphabeta:depth=5"), "Alpha-beta, 5 plies");
        assert_eq!(l("alphabeta:ms=1000"), "Alpha-beta, 1.0 s a move");
        assert_eq!(
            l("mcts:model=runs/r1,sims=400"),
            "Network r1, MCTS 400 sims"
        );
        assert_eq!(l("random"), "Random moves");
    }

    #[test]
    fn turning_point_is_the_biggest_swing() {
        assert_eq!(turning_point(&[]), None);
        assert_eq!(turning_point(&[0.1]), None);
        assert_eq!(turning_point(&[0.0, 0.1, -0.5, -0.4, 1.0]), Some(4));
        assert_eq!(turning_point(&[0.0, 0.6, 0.5]), Some(1));
    }

    #[test]
    fn analysis_scores_every_state_from_souths_side() {
        let entry = AiEntry::load("alphabeta:depth=3").expect("spec");
        let game = Game::replay(["c", "F", "a"]).expect("legal");
        let evals = analysis_job(&entry, game.moves().to_vec())().expect("analysis");
        assert_eq!(evals.len(), 4);
        assert!(evals.iter().all(|v| (-1.0..=1.0).contains(v)));
        let c = choose_job(&entry, game.clone())().expect("a move");
        assert!(game.legal_moves().contains(c.mv));
        assert!(AiEntry::load("human").is_err());
        let refused = Roster::load(&["random".to_string()], "random")
            .err()
            .map(|e| e.to_string());
        assert!(refused.is_some_and(|e| e.contains("evaluates")));
        assert!(AiEntry::load("alphabeta:depth=x").is_err());
    }

    #[tokio::test]
    async fn the_pool_bounds_optional_work_and_survives_panics() {
        let pool = AiPool::new(1, 2);
        let a = pool.try_ticket().expect("room");
        let b = pool.try_ticket().expect("room");
        assert!(pool.try_ticket().is_none(), "queue full");
        let forced = pool.ticket();
        assert_eq!(pool.queued(), 3);
        drop(a);
        let r: anyhow::Result<u32> = pool.run(b, || panic!("a broken player")).await;
        assert!(r.is_err());
        assert_eq!(pool.run(forced, || Ok(7)).await.expect("runs"), 7);
        assert_eq!(pool.queued(), 0);
    }
}
