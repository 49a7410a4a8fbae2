//! `oware report`: the evaluation curve of a run as a PNG, and a table of its evaluations.

use oware_report::run_report::{eval_table, report};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `oware report`.
#[derive(clap::Args, Debug)]
pub(super) struct Args {
    /// The run directory (holding `eval.jsonl`), or an `eval.jsonl` file itself.
    run: PathBuf,
    /// Where to write the PNG [default: RUN/eval.png].
    #[arg(long, short, value_name = "FILE.png")]
    out: Option<PathBuf>,
}

/// Runs `oware report`: prints the evaluations as a table and draws the score against each
/// opponent over training time (minutes), with 95% bands, to the PNG; and, when the log has
/// them, the network's Elo against the anchor over training time to `<png stem>-elo.png`.
pub(super) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let done = report(&args.run, args.out.as_deref())?;
    print!("{}", eval_table(&done.lines));
    println!("wrote {}", done.png.display());
    if let Some(elo) = &done.elo_png {
        println!("wrote {}", elo.display());
    }
    Ok(ExitCode::SUCCESS)
}
