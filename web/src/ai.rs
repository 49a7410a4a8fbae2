//! The AI players the server offers, and the searches they run on the pool ([`crate::pool`]).
//!
//! A search never runs on the async runtime: it runs on one of the pool's threads, so a slow
//! AI delays only the searches queued behind it, never a move of another game. Each search is
//! one `choose` with the operator's spec (every spec has a depth, a time or a simulation
//! count), given the job's stop flag so a search nobody waits for any more ends early; a review
//! is one job per position.
//!
//! With endgame tables (`oware serve --egtb DIR`), a position the tables give an exact value
//! (with the game's history) is played perfectly: the AI's move and the hint are a move that
//! keeps the value ([`oware_egtb::perfect_move`]), and a review marks each move that threw away
//! a win or a draw the tables prove ([`TableMark`]).

use crate::config::{REVIEW_PROOF_NODES, TABLE_MOVE_PROOF_NODES};
use crate::pool::{AiPool, Stop, Stopped, Ticket};
use crate::protocol::TableMark;
use anyhow::Context;
use oware_egtb::{Outcome, Prover, Tables, judge, perfect_move, prove_moves};
use oware_engine::{Game, Move, Side, Winner};
use oware_model::DeviceKind;
use oware_players::PlayerBuilder;
use oware_players::spec::{MctsEvaluator, PlayerSpec};
use oware_search::{Budget, Choice};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// One player the server can build.
pub struct AiEntry {
    /// The spec string, canonical (it may name files: it is never shown to clients).
    pub spec: String,
    /// The spec as clients see it: directories and files reduced to their last component
    /// (`mcts:model=runs/big,sims=400` shows as `mcts:model=big,sims=400`).
    pub public: String,
    /// A name for people.
    pub label: String,
    builder: Arc<PlayerBuilder>,
    /// The endgame tables it plays perfectly from, where they give an exact value.
    tables: Option<Arc<Tables>>,
    /// How long its searches take, in microseconds: a moving average of those that were not
    /// stopped, starting from its `ms=` budget (0 without one).
    cost_micros: Arc<AtomicU64>,
}

impl AiEntry {
    /// How long a search of this AI is likely to take.
    pub fn expected(&self) -> Duration {
        Duration::from_micros(self.cost_micros.load(Ordering::Relaxed))
    }
}

/// Adds a search's duration to the moving average (a weight of 1/8).
fn record_cost(cost: &AtomicU64, took: Duration) {
    let took = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
    let old = cost.load(Ordering::Relaxed);
    let new = if old == 0 {
        took
    } else {
        old - old / 8 + took / 8
    };
    cost.store(new, Ordering::Relaxed);
}

/// The time budget a spec states, if any.
fn stated_millis(spec: &PlayerSpec) -> u64 {
    match spec {
        PlayerSpec::AlphaBeta { millis, .. } => millis.unwrap_or(0),
        PlayerSpec::Mcts(m) => m.millis.unwrap_or(0),
        _ => 0,
    }
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
            public: public_spec(&parsed),
            label: label(&parsed),
            builder: Arc::new(builder),
            tables: None,
            cost_micros: Arc::new(AtomicU64::new(stated_millis(&parsed).saturating_mul(1000))),
        })
    }
}

/// The last component of a path, for people (`runs/big` → `big`).
fn file_name(path: &str) -> String {
    std::path::Path::new(path)
        .file_name()
        .map_or_else(|| "…".to_string(), |n| n.to_string_lossy().into_owned())
}

/// `spec` with the paths it names reduced to their last component: what clients are shown,
/// so the server's directory layout stays its own.
pub fn public_spec(spec: &PlayerSpec) -> String {
    let mut shown = spec.clone();
    match &mut shown {
        PlayerSpec::AlphaBeta { egtb, eval, .. } => {
            if let Some(dir) = egtb.as_mut() {
                *dir = file_name(dir);
            }
            // A weights file's path, not the shipped sets' names.
            if let Some(e) = eval
                .as_mut()
                .filter(|e| !matches!(e.as_str(), "classic" | "tuned"))
            {
                *e = file_name(e);
            }
        }
        PlayerSpec::Mcts(m) => {
            if let MctsEvaluator::Model(path) = &mut m.evaluator {
                *path = file_name(path);
            }
            if let Some(dir) = m.egtb.as_mut() {
                *dir = file_name(dir);
            }
        }
        _ => {}
    }
    shown.to_string()
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
            ..
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
    /// Loads every spec, and the endgame tables of `egtb` (shared by every player) when given;
    /// the first error names its spec or the tables' directory.
    pub fn load(ais: &[String], analysis: &str, egtb: Option<&Path>) -> anyhow::Result<Roster> {
        if ais.is_empty() {
            anyhow::bail!("no AI player to offer");
        }
        let tables = match egtb {
            Some(dir) => Some(Arc::new(Tables::load(dir).with_context(|| {
                format!("--egtb {}: cannot load the endgame tables", dir.display())
            })?)),
            None => None,
        };
        let with_tables = |mut e: AiEntry| {
            e.tables = tables.clone();
            e
        };
        let ais = ais
            .iter()
            .map(|s| AiEntry::load(s).map(with_tables))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let analysis = with_tables(AiEntry::load(analysis).context("--analysis")?);
        if analysis.builder.spec() == &PlayerSpec::Random {
            anyhow::bail!(
                "--analysis random: the review graph needs a player that evaluates positions \
                 (alphabeta or mcts)"
            );
        }
        Ok(Roster { ais, analysis })
    }

    /// The most seeds the loaded endgame tables cover, `None` without tables.
    pub fn table_seeds(&self) -> Option<usize> {
        self.analysis.tables.as_ref().map(|t| t.max_seeds())
    }
}

/// A random seed for a player.
fn seed() -> u64 {
    rand::random()
}

/// A search to run: what `entry` plays in `game`, ending early once `stop` is set.
pub fn choose_job(
    entry: &AiEntry,
    game: Game,
    stop: Arc<AtomicBool>,
) -> impl FnOnce() -> anyhow::Result<Choice> + use<> {
    let builder = entry.builder.clone();
    let cost = entry.cost_micros.clone();
    let tables = entry.tables.clone();
    move || {
        if game.is_over() {
            anyhow::bail!("the game is over");
        }
        if let Some(choice) = tables.as_ref().and_then(|t| table_choice(t, &game)) {
            return Ok(choice);
        }
        let started = Instant::now();
        let mut player = builder.build(seed())?;
        player.set_stop(Some(stop.clone()));
        let choice = player
            .choose(&game, Budget::default())
            .with_context(|| format!("the AI '{}' could not choose a move", player.name()))?;
        if !stop.load(Ordering::Relaxed) {
            record_cost(&cost, started.elapsed());
        }
        Ok(choice)
    }
}

/// The move of perfect play when the tables give the game's position an exact value (with
/// its history) and a move that keeps it can be shown, with its result as the value.
fn table_choice(tables: &Arc<Tables>, game: &Game) -> Option<Choice> {
    let (mv, probe) = perfect_move(tables, game, TABLE_MOVE_PROOF_NODES)?;
    let outcome = probe.outcome()?;
    let (mine, _) = probe.final_seeds();
    Some(Choice {
        mv,
        value: Some(outcome.value()),
        info: format!(
            "endgame tables: a {} with {mine} seeds, perfect play ({} on the board)",
            outcome.name(),
            probe.seeds
        ),
    })
}

/// The mark of `mv` in `game` when the tables prove it threw away a win or a draw: the best
/// result the mover was sure of before it is better than the best the move leaves.
fn table_mark(
    tables: &Tables,
    prover: &mut Prover,
    game: &Game,
    mv: Move,
    number: usize,
) -> Option<TableMark> {
    let (analysis, _) = prove_moves(tables, prover, game, REVIEW_PROOF_NODES, None)?;
    let verdict = judge(&analysis, mv)?;
    if verdict.keeps_result != Some(false) {
        return None;
    }
    let own = u32::from(analysis.probe.captured_own);
    let sure = analysis.secured()?;
    let left = analysis.moves.iter().find(|m| m.mv == mv)?.bounds.hi;
    let (from, to) = (
        Outcome::of_total(own + u32::from(sure)),
        Outcome::of_total(own + u32::from(left)),
    );
    (from > to).then(|| TableMark {
        number,
        letter: mv.letter(),
        from: from.name(),
        to: to.name(),
    })
}

/// South's expected result (-1..1) in every state of the game `moves` make, the start
/// included, by one player of `entry` (finished states score their result), and, with tables,
/// the moves that threw away a result they prove. Each position is one job on the pool, so
/// the AIs' moves pass between them; `stop` ends it ([`Stopped`]).
pub async fn analyse(
    pool: &AiPool,
    ticket: &Ticket,
    stop: &Stop,
    entry: &AiEntry,
    moves: Vec<Move>,
) -> anyhow::Result<(Vec<f32>, Vec<TableMark>)> {
    let builder = entry.builder.clone();
    let flag = stop.flag();
    let mut player = pool
        .run(ticket, stop, Duration::MAX, move || {
            let mut player = builder.build(seed())?;
            player.set_stop(Some(flag));
            Ok(player)
        })
        .await?;
    let tables = entry.tables.clone();
    let mut prover = tables.as_ref().map(|t| Prover::new(Arc::clone(t)));
    let mut game = Game::new();
    let mut evals = Vec::with_capacity(moves.len() + 1);
    let mut marks = Vec::new();
    for i in 0..=moves.len() {
        if stop.is_stopped() {
            return Err(Stopped.into());
        }
        let state = game.clone();
        let next = moves.get(i).copied();
        let tables = tables.clone();
        let (back, prover_back, value, mark) = pool
            .run(ticket, stop, Duration::MAX, move || {
                let value = evaluate_for_south(player.as_mut(), &state);
                let mark = match (tables.as_deref(), prover.as_mut(), next) {
                    (Some(t), Some(p), Some(mv)) => table_mark(t, p, &state, mv, i + 1),
                    _ => None,
                };
                Ok((player, prover, value, mark))
            })
            .await?;
        player = back;
        prover = prover_back;
        evals.push(value?);
        marks.extend(mark);
        if let Some(mv) = next {
            game.play(mv).context("the reviewed game is not legal")?;
        }
    }
    Ok((evals, marks))
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
    use oware_egtb::{Boards, Table, solve_table, table_len};
    use oware_engine::Position;

    /// The tables of 0..=`max` seeds, solved in memory.
    fn tiny_tables(max: u8) -> Arc<Tables> {
        let mut tables: Vec<Table> = Vec::new();
        for n in 0..=max {
            let (t, _) = solve_table(n, &tables, &|_| {});
            tables.push(t);
        }
        Arc::new(Tables::from_tables(Path::new("memory"), tables))
    }

    /// The games of every board of `n` seeds, South to move, the captured seeds split evenly.
    fn games(n: u8) -> impl Iterator<Item = Game> {
        Boards::new(n as usize, 0, table_len(n as usize)).filter_map(move |(_, board)| {
            let south = (48 - n) / 2;
            let pos = Position::from_parts(board, [south, 48 - n - south], Side::South).ok()?;
            let game = Game::from_position(pos, oware_engine::DEFAULT_MAX_PLIES);
            (!game.is_over()).then_some(game)
        })
    }

    #[test]
    fn with_tables_the_ai_plays_a_move_that_keeps_the_exact_value() {
        let tables = tiny_tables(4);
        let mut played = 0;
        for game in games(4) {
            let Some(choice) = table_choice(&tables, &game) else {
                continue;
            };
            let a = tables.analyse(&game).expect("covered");
            assert!(a.probe.bounds.is_exact());
            assert!(choice.info.starts_with("endgame tables"), "{}", choice.info);
            let outcome = a.probe.outcome().expect("exact");
            assert_eq!(choice.value, Some(outcome.value()));
            // The move keeps the result: after it the opponent is not sure of more (and gets
            // exactly the rest where the tables know the child's value).
            let mut child = game.clone();
            child.play(choice.mv).expect("legal");
            if let Some(c) = tables.analyse(&child) {
                let (sure, _) = c.probe.outcomes();
                assert!(sure.value() <= -outcome.value(), "{game:?}");
                if let Some(exact) = c.probe.outcome() {
                    assert_eq!(exact.value(), -outcome.value(), "{game:?}");
                }
            }
            played += 1;
        }
        assert!(played > 100, "only {played} table moves");
        // Through the AI's job too: an exact table position is answered by the tables.
        let mut entry = AiEntry::load("random").expect("spec");
        entry.tables = Some(tables.clone());
        let game = games(4)
            .find(|g| table_choice(&tables, g).is_some())
            .expect("a table position");
        let c = choose_job(&entry, game, Arc::new(AtomicBool::new(false)))().expect("a move");
        assert!(c.info.starts_with("endgame tables"), "{}", c.info);
    }

    #[test]
    fn a_review_marks_the_moves_that_throw_a_proven_result_away() {
        let tables = tiny_tables(4);
        let mut prover = Prover::new(tables.clone());
        let (mut marked, mut kept) = (0, 0);
        for game in games(4) {
            let Some(a) = tables.analyse(&game) else {
                continue;
            };
            for m in &a.moves {
                let mark = table_mark(&tables, &mut prover, &game, m.mv, 7);
                // The proofs only narrow what the tables alone say.
                match judge(&a, m.mv).expect("legal").keeps_result {
                    Some(false) => assert!(mark.is_some(), "{game:?} {}", m.mv),
                    Some(true) => assert!(mark.is_none(), "{game:?} {}", m.mv),
                    None => {}
                }
                match mark {
                    Some(mark) => {
                        assert_eq!((mark.number, mark.letter), (7, m.mv.letter()));
                        assert!(matches!(
                            (mark.from, mark.to),
                            ("win", "draw" | "loss") | ("draw", "loss")
                        ));
                        marked += 1;
                    }
                    None => kept += 1,
                }
            }
        }
        assert!(marked > 20 && kept > 20, "{marked} marked, {kept} not");
    }

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

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn analysis_scores_every_state_from_souths_side() {
        use crate::address::AddressKey;
        use crate::pool::{PoolLimits, Work};
        let entry = AiEntry::load("alphabeta:depth=3").expect("spec");
        let game = Game::replay(["c", "F", "a"]).expect("legal");
        let pool = AiPool::new(PoolLimits {
            threads: 1,
            analysis_threads: 1,
            light_threads: 0,
            light_usage_secs: 2.0,
            max_moves: 4,
            max_analysis: 4,
            analysis_per_address: 2,
        });
        let ticket = pool
            .ticket(AddressKey::V4([127, 0, 0, 1]), Work::Analysis)
            .expect("room");
        let stop = Stop::default();
        let (evals, marks) = analyse(&pool, &ticket, &stop, &entry, game.moves().to_vec())
            .await
            .expect("analysis");
        assert!(marks.is_empty(), "no tables, no marks");
        assert_eq!(evals.len(), 4);
        assert!(evals.iter().all(|v| (-1.0..=1.0).contains(v)));
        stop.stop();
        let e = analyse(&pool, &ticket, &stop, &entry, game.moves().to_vec())
            .await
            .expect_err("stopped");
        assert!(crate::pool::is_stopped(&e));
        let c =
            choose_job(&entry, game.clone(), Arc::new(AtomicBool::new(false)))().expect("a move");
        assert!(game.legal_moves().contains(c.mv));
        assert!(AiEntry::load("human").is_err());
        let refused = Roster::load(&["random".to_string()], "random", None)
            .err()
            .map(|e| e.to_string());
        assert!(refused.is_some_and(|e| e.contains("evaluates")));
        assert!(AiEntry::load("alphabeta:depth=x").is_err());
    }

    #[test]
    fn a_stopped_search_still_gives_a_legal_move_and_quickly() {
        let entry = AiEntry::load("alphabeta:ms=20000").expect("spec");
        let game = Game::new();
        let started = std::time::Instant::now();
        let c =
            choose_job(&entry, game.clone(), Arc::new(AtomicBool::new(true)))().expect("a move");
        assert!(game.legal_moves().contains(c.mv));
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
    }

    #[test]
    fn clients_see_no_paths() {
        let p = |s: &str| public_spec(&s.parse().expect("spec"));
        assert_eq!(
            p("mcts:model=/srv/oware/runs/big,sims=400,egtb=/data/tb"),
            "mcts:model=big,sims=400,egtb=tb"
        );
        assert_eq!(
            p("alphabeta:depth=8,egtb=../tables"),
            "alphabeta:depth=8,egtb=tables"
        );
        assert_eq!(p("alphabeta:ms=1000"), "alphabeta:ms=1000");
    }
}
