//! What a person can type at the `play` prompt, and its parser.

use oware_engine::Move;
use std::path::PathBuf;

/// One command typed at the prompt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Command {
    /// Sow from a house (`a`–`f`, `A`–`F`).
    Play(Move),
    /// Ask the AI for a suggestion.
    Hint,
    /// Take back the last move (and the AI's reply).
    Undo,
    /// Show the moves so far.
    Moves,
    /// Draw the board again.
    Board,
    /// Write the game record to a file.
    Save(PathBuf),
    /// Read a game record from a file; the number picks one game of a file holding several.
    Load(PathBuf, Option<usize>),
    /// Start a new game.
    New,
    /// Show the commands.
    Help,
    /// Leave.
    Quit,
}

/// The help text listing every command.
pub(super) const HELP: &str = "\
Commands:
  a-f / A-F    sow from that house (South owns a-f, North owns A-F)
  hint         ask the AI for a move, with its evaluation
  undo         take back your last move and the AI's reply
  moves        show the game so far in notation
  board        draw the board again
  save FILE    write the game record (moves on one line, as `oware replay` reads)
  load FILE [N] read a game record (game N of a file holding several, one per line)
  new          start a new game
  help         show this list
  quit         leave (end of input does the same)";

/// Parses one line. `Ok(None)` for a blank line; `Err` holds a one-line explanation.
pub(super) fn parse(line: &str) -> Result<Option<Command>, String> {
    let mut words = line.split_whitespace();
    let Some(word) = words.next() else {
        return Ok(None);
    };
    let rest: Vec<&str> = words.collect();
    let no_args = |cmd: Command| -> Result<Option<Command>, String> {
        if rest.is_empty() {
            Ok(Some(cmd))
        } else {
            Err(format!(
                "'{word}' takes no arguments (got '{}')",
                rest.join(" ")
            ))
        }
    };
    match word.to_ascii_lowercase().as_str() {
        "hint" => no_args(Command::Hint),
        "undo" => no_args(Command::Undo),
        "moves" => no_args(Command::Moves),
        "board" => no_args(Command::Board),
        "new" => no_args(Command::New),
        "help" | "?" => no_args(Command::Help),
        "quit" | "exit" => no_args(Command::Quit),
        "save" => match rest.as_slice() {
            [file] => Ok(Some(Command::Save(PathBuf::from(file)))),
            [] => Err("save needs a file name: save FILE".to_string()),
            _ => Err("save takes one file name (no spaces): save FILE".to_string()),
        },
        "load" => match rest.as_slice() {
            [file] => Ok(Some(Command::Load(PathBuf::from(file), None))),
            [file, n] => match n.parse::<usize>() {
                Ok(n) if n >= 1 => Ok(Some(Command::Load(PathBuf::from(file), Some(n)))),
                _ => Err(format!("load: '{n}' is not a game number (1, 2, ...)")),
            },
            [] => Err("load needs a file name: load FILE [N]".to_string()),
            _ => {
                Err("load takes a file name and an optional game number: load FILE [N]".to_string())
            }
        },
        _ if word.chars().count() == 1 => match word.parse::<Move>() {
            Ok(m) if rest.is_empty() => Ok(Some(Command::Play(m))),
            Ok(_) => Err("one move at a time, please".to_string()),
            Err(e) => Err(format!("{e}; type help for the commands")),
        },
        _ => Err(format!(
            "unknown command '{word}': type a house letter (a-f, A-F) or help"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_moves_and_commands() {
        assert_eq!(
            parse("c"),
            Ok(Some(Command::Play("c".parse().expect("move"))))
        );
        assert_eq!(
            parse("  F  "),
            Ok(Some(Command::Play("F".parse().expect("move"))))
        );
        assert_eq!(parse(""), Ok(None));
        assert_eq!(parse("   "), Ok(None));
        assert_eq!(parse("HINT"), Ok(Some(Command::Hint)));
        assert_eq!(parse("undo"), Ok(Some(Command::Undo)));
        assert_eq!(parse("quit"), Ok(Some(Command::Quit)));
        assert_eq!(
            parse("save game.txt"),
            Ok(Some(Command::Save(PathBuf::from("game.txt"))))
        );
        assert_eq!(
            parse("load g.txt 3"),
            Ok(Some(Command::Load(PathBuf::from("g.txt"), Some(3))))
        );
    }

    #[test]
    fn explains_bad_input() {
        let e = parse("g").expect_err("g is no move");
        assert!(e.contains("'g' is not a move"), "{e}");
        let e = parse("foo").expect_err("foo is no command");
        assert!(e.contains("unknown command 'foo'"), "{e}");
        assert!(parse("save").expect_err("needs file").contains("file name"));
        assert!(
            parse("load x 0")
                .expect_err("bad number")
                .contains("game number")
        );
        assert!(
            parse("undo now")
                .expect_err("no args")
                .contains("takes no arguments")
        );
        assert!(parse("c d").is_err());
    }
}
