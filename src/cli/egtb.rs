//! `oware egtb build|probe|stats`: endgame tables by retrograde analysis (engine `egtb`).

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use oware_egtb::{
    Analysis, BuildEvent, DEFAULT_DIR, DEFAULT_EXACT_UP_TO, DEFAULT_NODE_BUDGET,
    DEFAULT_PROOF_BUDGET, MAX_TABLE_SEEDS, Probe, Proof, Prover, SolveEvent, SolveOptions,
    TableReport, Tables, build_tables_with,
};
use oware_engine::{Game, Position, Side};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::Instant;

/// Arguments of `oware egtb`.
#[derive(clap::Args, Debug)]
pub(super) struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand, Debug)]
enum Command {
    /// Build the tables of 0..=N seeds (tables already built and intact are kept).
    Build(BuildArgs),
    /// Look up a position: its value interval, its result and every move's interval.
    Probe(ProbeArgs),
    /// List the tables of a directory with their sizes and value histograms.
    Stats(StatsArgs),
}

/// Arguments of `oware egtb build`.
#[derive(clap::Args, Debug)]
struct BuildArgs {
    /// The largest seed count to build.
    #[arg(long, value_parser = clap::value_parser!(u32).range(0..=MAX_TABLE_SEEDS as i64))]
    max_seeds: u32,
    /// The table directory (made if missing).
    #[arg(long = "egtb", visible_alias = "out", value_name = "DIR", default_value = DEFAULT_DIR)]
    egtb: PathBuf,
    /// Settle the entry values the fixpoints leave open by an exact search in the tables of up
    /// to this many seeds (larger tables store the fixpoint interval).
    #[arg(long, default_value_t = DEFAULT_EXACT_UP_TO,
          value_parser = clap::value_parser!(u8).range(0..=MAX_TABLE_SEEDS as i64))]
    exact_up_to: u8,
    /// The most nodes the exact search may visit for one entry.
    #[arg(long, default_value_t = DEFAULT_NODE_BUDGET,
          value_parser = clap::value_parser!(u64).range(1..))]
    node_budget: u64,
    /// The most proof-number nodes spent on one entry the exact search left open (0: none).
    #[arg(long, default_value_t = DEFAULT_PROOF_BUDGET)]
    proof_budget: u64,
    /// Threads [default: the number of CPUs].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    threads: Option<u32>,
    /// Print the figures as one JSON object on stdout (progress stays on stderr).
    #[arg(long)]
    json: bool,
}

/// Arguments of `oware egtb probe`.
#[derive(clap::Args, Debug)]
struct ProbeArgs {
    /// Moves from the start position (`c F a B`), as `oware replay` reads them.
    moves: Vec<String>,
    /// A position instead: the 12 house counts a..f A..F, separated by commas or spaces.
    #[arg(long, conflicts_with = "moves")]
    position: Option<String>,
    /// With --position: the captured seeds `SOUTH,NORTH` [default: the rest split evenly].
    #[arg(long, requires = "position")]
    captured: Option<String>,
    /// With --position: the side to move.
    #[arg(long, default_value = "south", requires = "position")]
    to_move: Side,
    /// The table directory.
    #[arg(long = "egtb", visible_alias = "dir", value_name = "DIR", default_value = DEFAULT_DIR)]
    egtb: PathBuf,
    /// The most nodes a proof of the value with the game's history may visit per threshold.
    #[arg(long, default_value_t = 1_000_000, value_parser = clap::value_parser!(u64).range(1..))]
    proof_nodes: u64,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

/// Arguments of `oware egtb stats`.
#[derive(clap::Args, Debug)]
struct StatsArgs {
    /// The table directory.
    #[arg(long = "egtb", visible_alias = "dir", value_name = "DIR", default_value = DEFAULT_DIR)]
    egtb: PathBuf,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

/// Runs `oware egtb`.
pub(super) fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        Command::Build(a) => build(a),
        Command::Probe(a) => probe(a),
        Command::Stats(a) => stats(a),
    }
}

/// The process's peak resident memory in MiB (`VmHWM`), where the system reports it.
pub(super) fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

/// The progress bars of a build: one per table solved, its length the expected positions
/// looked at (positions × the ratio of the table before, about 10 at first).
struct Bars {
    bar: Mutex<Option<ProgressBar>>,
    /// Positions looked at in the passes of the current table finished so far.
    base: Mutex<u64>,
    ratio: Mutex<f64>,
}

impl Bars {
    fn event(&self, e: BuildEvent<'_>) {
        let lock = |m: &Mutex<Option<ProgressBar>>| m.lock().ok().and_then(|g| g.clone());
        match e {
            BuildEvent::Kept { n, positions } => {
                eprintln!("table {n:>2}: kept ({positions} positions)");
            }
            BuildEvent::Replacing { n, error } => {
                eprintln!("table {n:>2}: rebuilding, the file was not usable: {error}");
            }
            BuildEvent::Started { n, positions } => {
                let ratio = self.ratio.lock().map(|r| *r).unwrap_or(10.0);
                let bar = ProgressBar::new((positions as f64 * ratio).max(1.0) as u64);
                let style = ProgressStyle::with_template(
                    "table {prefix:>2} [{bar:40}] {percent:>3}% {msg} elapsed {elapsed} ETA {eta}",
                )
                .map(|s| s.progress_chars("=> "));
                if let Ok(style) = style {
                    bar.set_style(style);
                }
                bar.set_prefix(n.to_string());
                if let Ok(mut b) = self.bar.lock() {
                    *b = Some(bar);
                }
                if let Ok(mut base) = self.base.lock() {
                    *base = 0;
                }
            }
            BuildEvent::Solve(SolveEvent::PassStarted {
                pass, positions, ..
            }) => {
                if let Some(bar) = lock(&self.bar) {
                    let label = if pass == 0 {
                        "capture pass".to_string()
                    } else {
                        format!("components ({positions} live positions)")
                    };
                    bar.set_message(label);
                }
            }
            BuildEvent::Solve(SolveEvent::Progress { done, .. }) => {
                if let (Some(bar), Ok(base)) = (lock(&self.bar), self.base.lock()) {
                    let at = *base + done;
                    if at > bar.length().unwrap_or(0) {
                        bar.set_length(at + at / 10);
                    }
                    bar.set_position(at);
                }
            }
            BuildEvent::Solve(SolveEvent::PassFinished { .. }) => {
                if let (Some(bar), Ok(mut base)) = (lock(&self.bar), self.base.lock()) {
                    *base = bar.position();
                }
            }
            BuildEvent::Written { n, path, stats } => {
                if let Some(bar) = lock(&self.bar) {
                    bar.set_length(bar.position());
                    bar.finish_with_message(format!(
                        "{n} seeds: largest component {}, {} sweeps, {:.1} s, {}",
                        stats.largest,
                        stats.sweeps,
                        stats.elapsed.as_secs_f64(),
                        path.display()
                    ));
                }
                if let Ok(mut r) = self.ratio.lock() {
                    *r = stats.expanded as f64 / stats.positions.max(1) as f64;
                }
            }
        }
    }
}

fn table_json(r: &TableReport) -> Value {
    let mut v = json!({
        "n": r.n,
        "positions": r.positions,
        "exact": r.exact,
        "entry_exact": r.entry_exact,
        "entry_open": r.positions - r.entry_exact,
        "file": r.path.display().to_string(),
        "status": if r.stats.is_some() { "built" } else { "kept" },
    });
    if let Some(s) = &r.stats {
        v["seconds"] = json!(s.elapsed.as_secs_f64());
        v["sweeps"] = json!(s.sweeps);
        v["cyclic_components"] = json!(s.components);
        v["cyclic_positions"] = json!(s.cyclic);
        v["largest_component"] = json!(s.largest);
        v["expanded"] = json!(s.expanded);
        v["threads"] = json!(s.threads);
        v["positions_per_second_per_thread"] = json!(s.positions_per_second_per_thread());
        v["entries_shared_searched"] = json!(s.shared_searched);
        v["entries_shared_settled"] = json!(s.shared_settled);
        v["shared_nodes"] = json!(s.shared_nodes);
        v["shared_reused"] = json!(s.shared_reused);
        v["entries_searched"] = json!(s.searched);
        v["entries_settled"] = json!(s.settled);
        v["search_nodes"] = json!(s.search_nodes);
        v["entries_harvested"] = json!(s.harvested);
        v["entries_settled_past_open"] = json!(s.settled_past_open);
        v["entries_proof_searched"] = json!(s.proof_searched);
        v["entries_proof_settled"] = json!(s.proof_settled);
        v["proof_nodes"] = json!(s.proof_nodes);
    }
    v
}

fn build(args: BuildArgs) -> anyhow::Result<ExitCode> {
    let threads = args
        .threads
        .map(|t| t as usize)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .context("starting the build threads")?;
    let bars = Bars {
        bar: Mutex::new(None),
        base: Mutex::new(0),
        ratio: Mutex::new(10.0),
    };
    let started = Instant::now();
    let options = SolveOptions {
        exact_up_to: args.exact_up_to,
        node_budget: args.node_budget,
        proof_budget: args.proof_budget,
        ..SolveOptions::default()
    };
    let (reports, _) = pool.install(|| {
        build_tables_with(&args.egtb, args.max_seeds as usize, &options, &|e| {
            bars.event(e)
        })
    })?;
    let seconds = started.elapsed().as_secs_f64();
    let peak = peak_rss_mib();
    let positions: u64 = reports.iter().map(|r| r.positions).sum();
    // Two codes per position: the all-history interval and the entry value.
    let bytes = 2 * positions;
    if args.json {
        let out = json!({
            "dir": args.egtb.display().to_string(),
            "max_seeds": args.max_seeds,
            "threads": threads,
            "exact_up_to": args.exact_up_to,
            "node_budget": args.node_budget,
            "proof_budget": args.proof_budget,
            "positions": positions,
            "bytes": bytes,
            "seconds": seconds,
            "peak_rss_mib": peak,
            "tables": reports.iter().map(table_json).collect::<Vec<_>>(),
        });
        println!("{out}");
    } else {
        let built: Vec<_> = reports.iter().filter(|r| r.stats.is_some()).collect();
        println!(
            "tables 0..={} in {}: {} built, {} kept, {:.1} MiB, {seconds:.1} s, peak memory {}",
            args.max_seeds,
            args.egtb.display(),
            built.len(),
            reports.len() - built.len(),
            bytes as f64 / (1 << 20) as f64,
            peak.map_or("unknown".to_string(), |p| format!("{p:.0} MiB")),
        );
        for r in built {
            if let Some(s) = &r.stats {
                println!(
                    "  {:>2} seeds: {:>10} positions, {:>4} sweeps, {:>8.1} s, {:>10.0} positions/s/thread, {:.2}% exact; entries {:.2}% exact (shared proofs: {} searches, {} settled, {} nodes, {} results reused; path search: {} searched, {} settled, {} of them past open entries, {} settled inside other searches, {} nodes; proofs settled {} of {})",
                    r.n,
                    r.positions,
                    s.sweeps,
                    s.elapsed.as_secs_f64(),
                    s.positions_per_second_per_thread(),
                    100.0 * r.exact as f64 / r.positions as f64,
                    100.0 * r.entry_exact as f64 / r.positions as f64,
                    s.shared_searched,
                    s.shared_settled,
                    s.shared_nodes,
                    s.shared_reused,
                    s.searched,
                    s.settled,
                    s.settled_past_open,
                    s.harvested,
                    s.search_nodes,
                    s.proof_settled,
                    s.proof_searched,
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Parses `--position`: 12 counts a..f A..F.
fn parse_board(s: &str) -> anyhow::Result<[u8; 12]> {
    let parts: Vec<&str> = s
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|p| !p.is_empty())
        .collect();
    if parts.len() != 12 {
        anyhow::bail!(
            "--position '{s}': expected 12 house counts a..f A..F, found {}",
            parts.len()
        );
    }
    let mut board = [0u8; 12];
    for (h, p) in board.iter_mut().zip(&parts) {
        *h = p
            .parse()
            .ok()
            .filter(|&x: &u8| x <= 48)
            .with_context(|| format!("--position '{s}': '{p}' is not a seed count 0..=48"))?;
    }
    Ok(board)
}

fn probe_game(args: &ProbeArgs) -> anyhow::Result<Game> {
    match &args.position {
        None => Game::replay(args.moves.iter().map(String::as_str)).context("the moves"),
        Some(text) => {
            let board = parse_board(text)?;
            let n: u32 = board.iter().map(|&x| x as u32).sum();
            if n > 48 {
                anyhow::bail!("--position '{text}': {n} seeds, more than 48");
            }
            let captured = match &args.captured {
                Some(c) => {
                    let (s, no) = c
                        .split_once(',')
                        .with_context(|| format!("--captured '{c}': expected SOUTH,NORTH"))?;
                    let parse = |x: &str| {
                        x.trim()
                            .parse::<u8>()
                            .with_context(|| format!("--captured '{c}': '{x}' is not a count"))
                    };
                    [parse(s)?, parse(no)?]
                }
                None => {
                    let rest = 48 - n as u8;
                    [rest - rest / 2, rest / 2]
                }
            };
            let pos = Position::from_parts(board, captured, args.to_move)
                .map_err(|e| anyhow::anyhow!("--position '{text}': {e}"))?;
            Ok(Game::from_position(pos, oware_engine::DEFAULT_MAX_PLIES))
        }
    }
}

fn interval(lo: u8, hi: u8) -> String {
    if lo == hi {
        lo.to_string()
    } else {
        format!("{lo}..{hi}")
    }
}

fn result_text(p: &Probe) -> String {
    match p.outcome() {
        Some(o) => o.name().to_string(),
        None => {
            let (a, b) = p.outcomes();
            format!("{} to {} (cycle-dependent)", a.name(), b.name())
        }
    }
}

fn probe(args: ProbeArgs) -> anyhow::Result<ExitCode> {
    let game = probe_game(&args)?;
    if let Some(r) = game.result() {
        if args.json {
            println!("{}", json!({ "over": true, "result": r.to_string() }));
        } else {
            println!("{}\nthe game is over: {r}", game.position());
        }
        return Ok(ExitCode::SUCCESS);
    }
    let tables = Tables::load(&args.egtb)
        .with_context(|| format!("loading the endgame tables in {}", args.egtb.display()))?;
    let pos = *game.position();
    let seeds: u32 = pos.board().iter().map(|&x| x as u32).sum();
    let stored = tables.probe(&pos).with_context(|| {
        format!(
            "{seeds} seeds on the board; the tables in {} go up to {}",
            args.egtb.display(),
            tables.max_seeds()
        )
    })?;
    let entry = tables
        .entry(&pos)
        .context("the position is covered, so is its entry")?;
    let analysis: Analysis = tables
        .analyse(&game)
        .context("the position is covered, so are its moves")?;
    let mut here = analysis.probe;
    let fresh = game.seen_since_capture().len() <= 1;
    // The value with the game's real history: right after a capture (or at the start) the
    // entry value; otherwise what bounded proofs from the real history settle.
    let proved = prove_interval(&tables, &game, here.bounds, args.proof_nodes);
    here.bounds = proved;
    let best = analysis.best_moves();
    let optimal = analysis.optimal_moves();
    if args.json {
        let moves: Vec<Value> = analysis
            .moves
            .iter()
            .map(|m| {
                json!({"move": m.mv.to_string(), "lo": m.bounds.lo, "hi": m.bounds.hi,
                       "exact": m.bounds.is_exact(), "repeats": m.repeats})
            })
            .collect();
        let (worst, top) = here.outcomes();
        let out = json!({
            "seeds": seeds,
            "to_move": pos.to_move().name(),
            "captured": pos.captured(),
            "stored": {"lo": stored.bounds.lo, "hi": stored.bounds.hi, "exact": stored.bounds.is_exact()},
            "entry": {"lo": entry.lo, "hi": entry.hi, "exact": entry.is_exact(),
                      "stored": tables.table(seeds as usize).is_some_and(|t| t.has_entries())},
            "history_empty": fresh,
            "value": {"lo": here.bounds.lo, "hi": here.bounds.hi, "exact": here.bounds.is_exact()},
            "result": here.outcome().map(|o| o.name()),
            "results": [worst.name(), top.name()],
            "moves": moves,
            "best": best.iter().map(|m| m.to_string()).collect::<Vec<_>>(),
            "optimal": optimal.iter().map(|m| m.to_string()).collect::<Vec<_>>(),
        });
        println!("{out}");
        return Ok(ExitCode::SUCCESS);
    }
    println!("{pos}");
    println!(
        "{seeds} seeds on the board; {} secures {} of them {} (after an empty history: {}; for any history: {}); result: {}",
        pos.to_move(),
        interval(here.bounds.lo, here.bounds.hi),
        if fresh {
            "with nothing played since the last capture"
        } else {
            "with the game's history"
        },
        interval(entry.lo, entry.hi),
        interval(stored.bounds.lo, stored.bounds.hi),
        result_text(&here)
    );
    for m in &analysis.moves {
        let mark = if optimal.contains(&m.mv) {
            "  optimal"
        } else if best.contains(&m.mv) {
            "  may be best"
        } else {
            ""
        };
        let rep = if m.repeats {
            " (repeats a position)"
        } else {
            ""
        };
        println!(
            "  {}: {}{rep}{mark}",
            m.mv,
            interval(m.bounds.lo, m.bounds.hi)
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The tightest interval of the game's value that bounded proofs from its real history
/// settle, starting from `known` (which already holds after that history): each threshold
/// inside is asked of the [`Prover`] with `nodes` nodes.
fn prove_interval(
    tables: &Tables,
    game: &Game,
    known: oware_egtb::Bounds,
    nodes: u64,
) -> oware_egtb::Bounds {
    let mut b = known;
    if b.is_exact() {
        return b;
    }
    let mut prover = Prover::new(std::sync::Arc::new(tables.clone()));
    let pos = *game.position();
    let seen = game.seen_since_capture();
    // Bisect: each answer moves one end; an unknown one stops.
    let (mut lo, mut hi) = (b.lo, b.hi);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        match prover.secures(
            &pos,
            seen,
            mid as i32,
            oware_egtb::proof_depth(game) + 1,
            nodes,
            None,
        ) {
            Proof::Yes => lo = mid,
            Proof::No => hi = mid - 1,
            Proof::Unknown => break,
        }
    }
    b.lo = lo;
    b.hi = hi;
    b
}

fn stats(args: StatsArgs) -> anyhow::Result<ExitCode> {
    let tables = Tables::load(&args.egtb)
        .with_context(|| format!("loading the endgame tables in {}", args.egtb.display()))?;
    let mut rows = Vec::new();
    for n in 0..=tables.max_seeds() {
        let Some(t) = tables.table(n) else { continue };
        let path = oware_egtb::table_path(&args.egtb, n);
        let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        let h = t.histogram();
        let mut values = vec![0u64; n + 1];
        let mut widths: HashMap<u8, u64> = HashMap::new();
        for (code, &count) in h.iter().enumerate() {
            if count == 0 {
                continue;
            }
            if let Some(b) = oware_egtb::Bounds::from_code(code as u8) {
                match b.value() {
                    Some(v) => values[v as usize] += count,
                    None => *widths.entry(b.hi - b.lo).or_default() += count,
                }
            }
        }
        let mut widths: Vec<(u8, u64)> = widths.into_iter().collect();
        widths.sort();
        rows.push((
            n,
            t.len(),
            bytes,
            t.exact_count(),
            t.entry_exact_count(),
            values,
            widths,
            path,
        ));
    }
    if args.json {
        let list: Vec<Value> = rows
            .iter()
            .map(|(n, len, bytes, exact, entry_exact, values, widths, path)| {
                json!({
                    "n": n, "positions": len, "bytes": bytes, "exact": exact,
                    "entry_exact": entry_exact,
                    "entry_open": entry_exact.map(|e| len - e),
                    "file": path.display().to_string(),
                    "exact_values": values,
                    "interval_widths": widths.iter().map(|(w, c)| json!({"width": w, "count": c})).collect::<Vec<_>>(),
                })
            })
            .collect();
        println!(
            "{}",
            json!({"dir": args.egtb.display().to_string(), "max_seeds": tables.max_seeds(), "tables": list})
        );
        return Ok(ExitCode::SUCCESS);
    }
    let total: u64 = rows.iter().map(|r| r.2).sum();
    println!(
        "{}: tables 0..={}, {:.1} MiB",
        args.egtb.display(),
        tables.max_seeds(),
        total as f64 / (1 << 20) as f64
    );
    for (n, len, bytes, exact, entry_exact, values, widths, _) in &rows {
        let vals: Vec<String> = values.iter().map(|c| c.to_string()).collect();
        let ws: Vec<String> = widths.iter().map(|(w, c)| format!("{w}:{c}")).collect();
        println!(
            "  {n:>2} seeds: {len:>10} positions, {bytes:>10} bytes, {:>6.2}% exact for any history; entries {}; exact values 0..={n}: [{}]; cycle-dependent by width: [{}]",
            100.0 * *exact as f64 / *len as f64,
            match entry_exact {
                Some(e) => format!(
                    "{e} exact ({:.2}%), {} open",
                    100.0 * *e as f64 / *len as f64,
                    len - e
                ),
                None => "not stored (format version 3: rebuild)".to_string(),
            },
            vals.join(" "),
            ws.join(" ")
        );
    }
    Ok(ExitCode::SUCCESS)
}
