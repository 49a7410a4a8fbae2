//! Builds the tables of 0..=MAX seeds into DIR with the entry values (`exact_up_to` EXACT,
//! `node_budget` BUDGET) and prints one line of figures per table: positions, exact shares
//! (after every history, entries), open entries, entries searched and settled, search nodes
//! and seconds. `cargo run --release -p oware-egtb --example entry_figures -- DIR MAX EXACT BUDGET`

use oware_egtb::{BuildEvent, SolveOptions, build_tables_with};
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir, max, exact, budget] = args.as_slice() else {
        return Err("usage: entry_figures DIR MAX EXACT_UP_TO NODE_BUDGET".into());
    };
    let options = SolveOptions {
        exact_up_to: exact.parse()?,
        node_budget: budget.parse()?,
        ..SolveOptions::default()
    };
    let (reports, _) = build_tables_with(&PathBuf::from(dir), max.parse()?, &options, &|e| {
        if let BuildEvent::Written { n, stats, .. } = e {
            println!(
                "n={n:2} positions={:>10} entry_exact={:6.2}% entry_open={:>9} searched={:>7} settled={:>7} nodes={:>12} seconds={:8.2}",
                stats.positions,
                100.0 * stats.entry_exact as f64 / stats.positions as f64,
                stats.positions - stats.entry_exact,
                stats.searched,
                stats.settled,
                stats.search_nodes,
                stats.elapsed.as_secs_f64()
            );
        }
    })?;
    for r in &reports {
        println!(
            "table {:2}: {:>10} positions, {:6.2}% exact for every history, {:6.2}% entries exact, {} entries open",
            r.n,
            r.positions,
            100.0 * r.exact as f64 / r.positions as f64,
            100.0 * r.entry_exact as f64 / r.positions as f64,
            r.positions - r.entry_exact
        );
    }
    Ok(())
}
