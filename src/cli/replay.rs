//! `oware replay`: move lists on stdin, states out (the JSON of `docs/file-formats.md`).

use anyhow::Context;
use oware_engine::bounded_lines::BoundedLines;
use oware_engine::bounds::MAX_LINE_BYTES;
use oware_engine::record::RecordLine;
use oware_engine::{Game, Position};
use serde_json::{Value, json};
use std::io::Write;
use std::process::ExitCode;

/// Arguments of `oware replay`.
#[derive(clap::Args, Debug)]
pub(super) struct Args {
    /// Print one JSON object per input line (the format of `docs/file-formats.md`). Without it, the final
    /// position of each game is drawn as text.
    #[arg(long)]
    json: bool,
}

/// The JSON state of a game at its current ply.
pub(super) fn state_json(game: &Game) -> Value {
    let pos: &Position = game.position();
    let legal: Vec<String> = game.legal_moves().iter().map(|m| m.to_string()).collect();
    let result = game
        .result()
        .map(|r| json!({ "winner": r.winner.name(), "reason": r.reason.name() }));
    json!({
        "board": pos.board(),
        "captured": pos.captured(),
        "to_move": pos.to_move().name(),
        "ply": game.ply(),
        "legal": legal,
        "terminal": game.is_over(),
        "result": result,
    })
}

/// Replays one line (a record line: moves, then anything after a tab or `#`): the JSON object
/// for it, and whether it was legal throughout.
pub(super) fn replay_line(line: &str) -> (Value, bool) {
    let record = RecordLine::parse(line);
    let mut states = vec![state_json(&Game::new())];
    match record.replay(|game, _, _| states.push(state_json(game))) {
        Ok(_) => (json!({ "moves": record.tokens, "states": states }), true),
        Err(e) => (
            json!({ "moves": record.tokens, "error": e.to_string() }),
            false,
        ),
    }
}

/// Runs `oware replay`.
pub(super) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut all_ok = true;
    for item in BoundedLines::new(stdin.lock(), MAX_LINE_BYTES) {
        let (n, line) = item.context("reading stdin")?;
        let line = match line.text(n) {
            Ok(text) => text,
            Err(e) => {
                all_ok = false;
                if args.json {
                    writeln!(out, "{}", json!({ "moves": [], "error": e }))?;
                } else {
                    writeln!(out, "{e}")?;
                }
                continue;
            }
        };
        if args.json {
            let (value, ok) = replay_line(&line);
            all_ok &= ok;
            writeln!(out, "{value}")?;
            continue;
        }
        match RecordLine::parse(&line).replay(|_, _, _| {}) {
            Ok(game) => {
                writeln!(out, "{}", game.position())?;
                match game.result() {
                    Some(r) => writeln!(out, "{r}")?,
                    None => writeln!(out, "ply {}, {} to move", game.ply(), game.to_move())?,
                }
            }
            Err(e) => {
                all_ok = false;
                writeln!(out, "line {}: {e}", n + 1)?;
            }
        }
    }
    out.flush()?;
    Ok(if all_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
