//! `oware replay`: move lists on stdin, states out (DESIGN §3).

use anyhow::Context;
use oware_engine::{Game, GameError, Position};
use serde_json::{Value, json};
use std::io::{BufRead, Write};
use std::process::ExitCode;

/// Arguments of `oware replay`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Print one JSON object per input line (the format of DESIGN §3). Without it, the final
    /// position of each game is drawn as text.
    #[arg(long)]
    json: bool,
}

/// The JSON state of a game at its current ply.
pub fn state_json(game: &Game) -> Value {
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

/// The moves of an input line: everything before the first tab. `oware pit --record` writes
/// the result after a tab, so recorded games replay as they are.
pub fn moves_part(line: &str) -> &str {
    line.split_once('\t').map_or(line, |(moves, _)| moves)
}

/// Plays the moves of one line from the start; with `states`, pushes the JSON state after each
/// ply (the start state included). Stops at the first token that is not a legal move.
fn play_line(tokens: &[&str], mut states: Option<&mut Vec<Value>>) -> Result<Game, GameError> {
    let mut game = Game::new();
    if let Some(states) = states.as_deref_mut() {
        states.push(state_json(&game));
    }
    for token in tokens {
        let ply = game.ply();
        let mv = token
            .parse()
            .map_err(|source| GameError::Parse { ply, source })?;
        game.play(mv)?;
        if let Some(states) = states.as_deref_mut() {
            states.push(state_json(&game));
        }
    }
    Ok(game)
}

/// Replays one line: the JSON object for it, and whether it was legal throughout.
pub fn replay_line(line: &str) -> (Value, bool) {
    let tokens: Vec<&str> = moves_part(line).split_whitespace().collect();
    let mut states = Vec::with_capacity(tokens.len() + 1);
    match play_line(&tokens, Some(&mut states)) {
        Ok(_) => (json!({ "moves": tokens, "states": states }), true),
        Err(e) => (json!({ "moves": tokens, "error": e.to_string() }), false),
    }
}

/// Runs `oware replay`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut all_ok = true;
    for (n, line) in stdin.lock().lines().enumerate() {
        let line = line.with_context(|| format!("reading line {} of stdin", n + 1))?;
        if args.json {
            let (value, ok) = replay_line(&line);
            all_ok &= ok;
            writeln!(out, "{value}")?;
            continue;
        }
        let tokens: Vec<&str> = moves_part(&line).split_whitespace().collect();
        match play_line(&tokens, None) {
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
