//! The engine line protocol of `docs/engine-protocol.md` (`oware engine`), for referees and GUIs, on any reader
//! and writer, so that the binary, tests and fuzzing drive the same loop.
//!
//! Commands, one per line: `newgame`, `position startpos [moves m1 m2 ...]`,
//! `go [sims N] [depth N] [ms N]` → `bestmove m`, `isready` → `readyok`, `quit`. Before
//! `bestmove`, `go` prints `info` lines as the search goes ([`SearchInfo`]: alpha-beta one per
//! completed iteration, MCTS about every [`oware_search::PROGRESS_MILLIS`] and once at the
//! end); a reader that ignores them sees the protocol unchanged. Bad input gets
//! one line `error ...`; the engine keeps its last valid position and goes on. Empty lines are
//! ignored; end of input ends the engine like `quit`. A line longer than
//! [`MAX_LINE_BYTES`] or not UTF-8 is answered with an error and skipped.

use oware_engine::bounded_lines::BoundedLines;
use oware_engine::bounds::{MAX_DEPTH, MAX_LINE_BYTES, MAX_MILLIS, MAX_SIMS};
use oware_engine::{Game, GameError};
use oware_search::{Budget, Player, SearchInfo};
use std::io::{self, BufRead, Write};

/// What a line asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// Nothing to print.
    Silent,
    /// One line to print.
    Line(String),
    /// Stop.
    Quit,
}

/// The engine's state between lines: the player and the current game.
pub struct Engine {
    player: Box<dyn Player>,
    game: Game,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("player", &self.player.name())
            .field("game", &self.game.record())
            .finish()
    }
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

/// Parses the arguments of `go`: pairs `sims N`, `depth N`, `ms N`, each at most once and each
/// within its bound ([`MAX_SIMS`], [`MAX_DEPTH`], [`MAX_MILLIS`]).
pub fn parse_go(args: &[&str]) -> Result<Budget, String> {
    let mut limits = Budget::default();
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
        // The bounds fit in u32, so the narrowing casts below are exact.
        let fresh = match *key {
            "sims" => limits.sims.replace(num(MAX_SIMS.into())? as u32).is_none(),
            "depth" => limits
                .depth
                .replace(num(MAX_DEPTH.into())? as u32)
                .is_none(),
            "ms" => limits.millis.replace(num(MAX_MILLIS)?).is_none(),
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
    /// An engine at the start position answering `go` with `player`.
    pub fn new(player: Box<dyn Player>) -> Engine {
        Engine {
            player,
            game: Game::new(),
        }
    }

    /// The current game.
    pub fn game(&self) -> &Game {
        &self.game
    }

    /// Answers one line of input, dropping `go`'s `info` lines.
    pub fn handle(&mut self, line: &str) -> Reply {
        self.handle_reporting(line, &mut |_| {})
    }

    /// Answers one line of input; `go` hands each `info` line of its search to `info` as it
    /// comes, before the reply.
    pub fn handle_reporting(&mut self, line: &str, info: &mut dyn FnMut(&SearchInfo)) -> Reply {
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
                Ok(limits) => match self.player.choose_reporting(&self.game, limits, info) {
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

    /// Runs the protocol: reads commands from `input` until `quit` or the end of input,
    /// writing (and flushing) each answer to `output`. Only I/O errors end it early.
    pub fn serve<R: BufRead, W: Write>(&mut self, input: R, mut output: W) -> io::Result<()> {
        for item in BoundedLines::new(input, MAX_LINE_BYTES) {
            let (number, line) = item?;
            let mut failed = None;
            let reply = match line.text(number) {
                Ok(text) => self.handle_reporting(&text, &mut |info| {
                    if failed.is_none()
                        && let Err(e) = writeln!(output, "{info}").and_then(|()| output.flush())
                    {
                        failed = Some(e);
                    }
                }),
                Err(e) => Reply::Line(format!("error {e}")),
            };
            if let Some(e) = failed {
                return Err(e);
            }
            match reply {
                Reply::Silent => {}
                Reply::Line(text) => {
                    writeln!(output, "{text}")?;
                    output.flush()?;
                }
                Reply::Quit => break,
            }
        }
        output.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oware_search::AlphaBetaPlayer;

    fn engine() -> Engine {
        Engine::new(Box::new(AlphaBetaPlayer::new(Some(2), None, 1)))
    }

    fn line(reply: Reply) -> String {
        match reply {
            Reply::Line(s) => s,
            Reply::Silent => "(silent)".to_string(),
            Reply::Quit => "(quit)".to_string(),
        }
    }

    #[test]
    fn go_options_parse_within_their_bounds() {
        assert_eq!(parse_go(&[]), Ok(Budget::default()));
        assert_eq!(
            parse_go(&["depth", "5", "ms", "20"]),
            Ok(Budget {
                depth: Some(5),
                millis: Some(20),
                sims: None
            })
        );
        assert_eq!(parse_go(&["sims", "7"]).map(|l| l.sims), Ok(Some(7)));
        let max_sims = MAX_SIMS.to_string();
        assert_eq!(
            parse_go(&["sims", &max_sims]).map(|l| l.sims),
            Ok(Some(MAX_SIMS))
        );
        for (bad, why) in [
            (&["depth"][..], "needs a number"),
            (&["depth", "0"], "out of range"),
            (&["depth", "-1"], "not a positive integer"),
            (&["depth", "999"], "out of range 1..=120"),
            (&["sims", "1000001"], "out of range 1..=1000000"),
            (&["sims", "4294967296"], "out of range"),
            (&["ms", "86400001"], "out of range 1..=86400000"),
            (&["ms", "x"], "not a positive integer"),
            (&["nodes", "5"], "unknown go option 'nodes'"),
            (&["depth", "3", "depth", "4"], "twice"),
        ] {
            match parse_go(bad) {
                Ok(l) => panic!("{bad:?} gave {l:?}"),
                Err(e) => assert!(e.contains(why), "{bad:?}: {e}"),
            }
        }
    }

    /// Checks one `info` line: `info (depth D | sims N) score (cp S | mate P) nodes N time MS
    /// pv m...`, whose moves replay from `game`; returns the depth or simulations.
    fn check_info(line: &str, game: &Game, key: &str) -> u64 {
        let words: Vec<&str> = line.split(' ').collect();
        let [
            info,
            k,
            count,
            score,
            unit,
            value,
            nodes,
            n,
            time,
            ms,
            pv,
            moves @ ..,
        ] = &words[..]
        else {
            panic!("short info line {line:?}");
        };
        assert_eq!(
            (*info, *k, *score, *nodes, *time, *pv),
            ("info", key, "score", "nodes", "time", "pv"),
            "{line}"
        );
        assert!(["cp", "mate"].contains(unit), "{line}");
        value.parse::<i32>().expect("an integer score");
        n.parse::<u64>().expect("a node count");
        ms.parse::<u64>().expect("milliseconds");
        assert!(!moves.is_empty(), "{line}");
        let mut g = game.clone();
        for m in moves {
            let mv: oware_engine::Move = m.parse().expect("a move");
            g.play(mv).expect("the pv is legal");
        }
        count.parse().expect("a count")
    }

    /// Runs `script` and returns its output lines.
    fn session(player: Box<dyn Player>, script: &str) -> Vec<String> {
        let mut out = Vec::new();
        Engine::new(player)
            .serve(script.as_bytes(), &mut out)
            .expect("in memory");
        String::from_utf8(out)
            .expect("text")
            .lines()
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn go_prints_info_lines_then_one_bestmove() {
        let game = Game::replay(["c", "F"]).expect("legal");
        // Alpha-beta: one line per completed iteration, depths 1..=5 in order.
        let got = session(
            Box::new(AlphaBetaPlayer::new(Some(9), None, 1)),
            "position startpos moves c F\ngo depth 5\nisready\n",
        );
        assert_eq!(got.len(), 5 + 2, "{got:#?}");
        for (i, l) in got[..5].iter().enumerate() {
            assert_eq!(check_info(l, &game, "depth"), i as u64 + 1, "{got:#?}");
        }
        let best = got[5].strip_prefix("bestmove ").expect("bestmove");
        assert_eq!(
            got[4]
                .split(" pv ")
                .nth(1)
                .and_then(|pv| pv.split(' ').next()),
            Some(best)
        );
        assert_eq!(got[6], "readyok");
        // MCTS (rollouts and a uniform evaluator): at least the closing report, whose count is
        // the simulations asked and whose first move is the best move.
        let uniform = oware_search::mcts::MctsConfig {
            sims: 50,
            ..oware_search::mcts::MctsConfig::default()
        };
        let players: [Box<dyn Player>; 2] = [
            Box::new(oware_search::RolloutMctsPlayer::new(
                50,
                oware_search::mcts::DEFAULT_UCT_C,
                3,
            )),
            Box::new(
                oware_search::MctsPlayer::new(oware_search::UniformEvaluator, uniform, 3)
                    .expect("config"),
            ),
        ];
        for player in players {
            let got = session(player, "position startpos moves c F\ngo sims 300\n");
            let (last, infos) = got.split_last().expect("lines");
            assert!(!infos.is_empty(), "{got:#?}");
            for l in infos {
                check_info(l, &game, "sims");
            }
            let closing = infos.last().expect("a closing info");
            assert_eq!(check_info(closing, &game, "sims"), 300, "{got:#?}");
            let best = last.strip_prefix("bestmove ").expect("bestmove");
            assert!(closing.contains(&format!(" pv {best}")), "{got:#?}");
        }
    }

    #[test]
    fn bad_lines_keep_the_position() {
        let mut e = engine();
        assert_eq!(line(e.handle("position startpos moves c F")), "(silent)");
        assert!(line(e.handle("position startpos moves c F a a")).starts_with("error "));
        assert!(line(e.handle("position midgame")).starts_with("error "));
        assert!(line(e.handle("position startpos c")).starts_with("error "));
        assert_eq!(e.game().record(), "c F");
        let best = line(e.handle("go"));
        let mv = best.strip_prefix("bestmove ").expect("a move");
        assert!(["a", "b", "c", "d", "e", "f"].contains(&mv), "{best}");
        assert_eq!(line(e.handle("   ")), "(silent)");
        assert_eq!(line(e.handle("isready")), "readyok");
        assert_eq!(line(e.handle("newgame")), "(silent)");
        assert_eq!(e.game().ply(), 0);
        assert_eq!(line(e.handle("quit")), "(quit)");
    }

    #[test]
    fn serve_answers_each_line_and_refuses_long_or_binary_ones() {
        let mut input = b"isready\n\xff\xfe\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', MAX_LINE_BYTES + 1));
        input.extend_from_slice(b"\nposition startpos moves c\ngo depth 1\nquit\nisready\n");
        let mut out = Vec::new();
        engine().serve(&input[..], &mut out).expect("in memory");
        let out = String::from_utf8(out).expect("text");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 5, "{out}");
        assert_eq!(lines[0], "readyok");
        assert!(lines[1].starts_with("error line 2 is not UTF-8"), "{out}");
        assert!(lines[2].starts_with("error line 3 is 65537 bytes"), "{out}");
        assert!(lines[3].starts_with("info depth 1 score "), "{out}");
        assert!(lines[4].starts_with("bestmove "), "{out}");
        let mv = lines[4].trim_start_matches("bestmove ");
        assert!(["A", "B", "C", "D", "E", "F"].contains(&mv), "{out}");
    }
}
