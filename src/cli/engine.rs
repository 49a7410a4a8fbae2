//! `oware engine [PLAYER]`: the line protocol of DESIGN §3, for referees and GUIs.
//!
//! Commands, one per line: `newgame`, `position startpos [moves m1 m2 ...]`,
//! `go [sims N] [depth N] [ms N]` → `bestmove m`, `isready` → `readyok`, `quit`. Bad input gets
//! one line `error ...`; the engine keeps its last valid position and goes on. Empty lines are
//! ignored; end of input ends the engine like `quit`.

use anyhow::Context;
use oware_engine::alphabeta::MAX_PLY;
use oware_engine::spec::PlayerSpec;
use oware_engine::{Game, GameError, Limits, Player};
use oware_players::build_player;
use std::io::{BufRead, Write};
use std::process::ExitCode;

/// The player used when none is given.
pub const DEFAULT_PLAYER: &str = "alphabeta:ms=1000";

/// Arguments of `oware engine`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The player that answers `go` (any player spec).
    #[arg(default_value = DEFAULT_PLAYER)]
    player: PlayerSpec,
}

/// What a line asks for.
enum Reply {
    /// Nothing to print.
    Silent,
    /// One line to print.
    Line(String),
    /// Stop.
    Quit,
}

/// The engine's state between lines.
struct Engine {
    player: Box<dyn Player>,
    game: Game,
}

/// Parses `position startpos [moves m1 m2 ...]` into a game.
fn parse_position(args: &[&str]) -> Result<Game, String> {
    let Some((&first, rest)) = args.split_first() else {
        return Err("position needs 'startpos' (position startpos [moves m1 m2 ...])".to_string());
    };
    if first != "startpos" {
        return Err(format!(
            "position '{first}' is not supported: use position startpos [moves m1 m2 ...]"
        ));
    }
    match rest.split_first() {
        None => Ok(Game::new()),
        Some((&"moves", moves)) => Game::replay(moves.iter().copied())
            .map_err(|e: GameError| format!("position rejected, kept the previous one: {e}")),
        Some((other, _)) => Err(format!("expected 'moves' after startpos, got '{other}'")),
    }
}

/// Parses the arguments of `go`: pairs `sims N`, `depth N`, `ms N`, each at most once.
fn parse_go(args: &[&str]) -> Result<Limits, String> {
    let mut limits = Limits::default();
    let mut rest = args;
    while let [key, tail @ ..] = rest {
        let Some((value, tail)) = tail.split_first() else {
            return Err(format!("go {key} needs a number"));
        };
        let num = |max: u64| -> Result<u64, String> {
            match value.parse::<u64>() {
                Ok(n) if (1..=max).contains(&n) => Ok(n),
                Ok(_) => Err(format!("go {key} {value}: out of range 1..={max}")),
                Err(_) => Err(format!("go {key} {value}: not a positive integer")),
            }
        };
        let fresh = match *key {
            "sims" => limits.sims.replace(num(u32::MAX as u64)? as u32).is_none(),
            "depth" => limits.depth.replace(num(MAX_PLY as u64)? as u32).is_none(),
            "ms" => limits.millis.replace(num(86_400_000)?).is_none(),
            other => {
                return Err(format!(
                    "unknown go option '{other}' (expected sims N, depth N or ms N)"
                ));
            }
        };
        if !fresh {
            return Err(format!("go {key} is given twice"));
        }
        rest = tail;
    }
    Ok(limits)
}

impl Engine {
    fn handle(&mut self, line: &str) -> Reply {
        let tokens: Vec<&str> = line.split_whitespace().collect();
        let Some((&command, args)) = tokens.split_first() else {
            return Reply::Silent;
        };
        match command {
            "newgame" if args.is_empty() => {
                self.game = Game::new();
                self.player.new_game();
                Reply::Silent
            }
            "isready" if args.is_empty() => Reply::Line("readyok".to_string()),
            "quit" if args.is_empty() => Reply::Quit,
            "newgame" | "isready" | "quit" => {
                Reply::Line(format!("error {command} takes no arguments"))
            }
            "position" => match parse_position(args) {
                Ok(game) => {
                    self.game = game;
                    Reply::Silent
                }
                Err(e) => Reply::Line(format!("error {e}")),
            },
            "go" => match parse_go(args) {
                Ok(_) if self.game.is_over() => match self.game.result() {
                    Some(r) => Reply::Line(format!("error the game is over: {r}")),
                    None => Reply::Line("error the game is over".to_string()),
                },
                Ok(limits) => match self.player.choose(&self.game, limits) {
                    Ok(choice) if self.game.legal_moves().contains(choice.mv) => {
                        Reply::Line(format!("bestmove {}", choice.mv))
                    }
                    Ok(choice) => Reply::Line(format!(
                        "error the player chose an illegal move {}",
                        choice.mv
                    )),
                    Err(e) => Reply::Line(format!("error the player could not move: {e}")),
                },
                Err(e) => Reply::Line(format!("error {e}")),
            },
            other => Reply::Line(format!(
                "error unknown command '{other}' (expected newgame, position, go, isready or quit)"
            )),
        }
    }
}

/// Runs `oware engine`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let player = build_player(&args.player, 1).context("engine player")?;
    let mut engine = Engine {
        player,
        game: Game::new(),
    };
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    for (n, line) in stdin.lock().lines().enumerate() {
        let line = match line {
            Ok(l) => l,
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                // Not UTF-8: say so and go on with the next line.
                writeln!(out, "error line {}: {e}", n + 1)?;
                out.flush()?;
                continue;
            }
            Err(e) => return Err(e).with_context(|| format!("reading line {} of stdin", n + 1)),
        };
        match engine.handle(&line) {
            Reply::Silent => {}
            Reply::Line(text) => {
                writeln!(out, "{text}")?;
                out.flush()?;
            }
            Reply::Quit => break,
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn engine(spec: &str) -> Engine {
        let spec: PlayerSpec = spec.parse().expect("valid spec");
        Engine {
            player: build_player(&spec, 1).expect("buildable"),
            game: Game::new(),
        }
    }

    fn line(reply: Reply) -> String {
        match reply {
            Reply::Line(s) => s,
            Reply::Silent => "(silent)".to_string(),
            Reply::Quit => "(quit)".to_string(),
        }
    }

    #[test]
    fn go_options_parse() {
        assert_eq!(parse_go(&[]), Ok(Limits::default()));
        assert_eq!(
            parse_go(&["depth", "5", "ms", "20"]),
            Ok(Limits {
                depth: Some(5),
                millis: Some(20),
                sims: None
            })
        );
        assert_eq!(parse_go(&["sims", "7"]).map(|l| l.sims), Ok(Some(7)));
        for bad in [
            &["depth"][..],
            &["depth", "0"],
            &["depth", "-1"],
            &["depth", "999"],
            &["ms", "x"],
            &["nodes", "5"],
            &["depth", "3", "depth", "4"],
        ] {
            assert!(parse_go(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn bad_lines_keep_the_position() {
        let mut e = engine("alphabeta:depth=2");
        assert_eq!(line(e.handle("position startpos moves c F")), "(silent)");
        assert!(line(e.handle("position startpos moves c F a a")).starts_with("error "));
        assert!(line(e.handle("position midgame")).starts_with("error "));
        assert!(line(e.handle("position startpos c")).starts_with("error "));
        assert_eq!(e.game.record(), "c F");
        let best = line(e.handle("go"));
        let mv = best.strip_prefix("bestmove ").expect("a move");
        assert!(["a", "b", "c", "d", "e", "f"].contains(&mv), "{best}");
        assert_eq!(line(e.handle("   ")), "(silent)");
        assert_eq!(line(e.handle("isready")), "readyok");
        assert_eq!(line(e.handle("newgame")), "(silent)");
        assert_eq!(e.game.ply(), 0);
        assert_eq!(line(e.handle("quit")), "(quit)");
    }
}
