//! A play session: the game, who plays which side, and what each command does to them.

use super::board::{self, LastMove, title};
use super::command::{self, Command, HELP};
use super::record;
use super::thinking::think;
use oware_engine::bounded_lines::{BoundedLines, Line};
use oware_engine::bounds::MAX_LINE_BYTES;
use oware_engine::{EndReason, Game, GameError, Move, Side, Winner};
use oware_search::Player;
use std::io::{BufRead, Write};

/// How the session talks to the person.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Terminal {
    /// ANSI colour in the board.
    pub colour: bool,
    /// A spinner on stderr while the AI thinks.
    pub spinner: bool,
    /// Prompts end without a newline (a person at a terminal); otherwise every prompt is a line.
    pub interactive: bool,
}

/// Where hints come from when there is no AI opponent.
pub(super) struct HintSource {
    /// The spec to build the hint player from, on the first `hint`.
    pub spec: String,
    /// Seed for that player.
    pub seed: u64,
    /// Builds a player from a spec and a seed.
    pub build: fn(&str, u64) -> anyhow::Result<Box<dyn Player>>,
}

/// The state of one play session.
pub(super) struct Session<W: Write> {
    game: Game,
    last: Option<LastMove>,
    /// The person's side when playing the AI; `None` when two people share the keyboard.
    human: Option<Side>,
    ai: Option<Box<dyn Player>>,
    hint_player: Option<Box<dyn Player>>,
    hint_source: Option<HintSource>,
    term: Terminal,
    out: W,
    /// The board changed since it was last drawn.
    dirty: bool,
    /// The end of the current game has been announced.
    announced: bool,
}

/// Whether the session goes on after a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flow {
    Continue,
    Quit,
}

/// Moves numbered by South–North pairs: `1. c F  2. a B  3. d`.
pub(super) fn numbered(moves: &[Move]) -> String {
    moves
        .chunks(2)
        .enumerate()
        .map(|(i, pair)| {
            let pair: Vec<String> = pair.iter().map(Move::to_string).collect();
            format!("{}. {}", i + 1, pair.join(" "))
        })
        .collect::<Vec<_>>()
        .join("  ")
}

/// `1 ply`, `2 plies`.
fn plies(n: u32) -> String {
    if n == 1 {
        "1 ply".to_string()
    } else {
        format!("{n} plies")
    }
}

/// Replays the first `keep` moves of `game` from its start.
fn truncated(game: &Game, keep: usize) -> (Game, Option<LastMove>) {
    let (replayed, last) = game.truncated(keep);
    (replayed, last.map(|(mv, effect)| LastMove { mv, effect }))
}

impl<W: Write> Session<W> {
    /// A session on `game` (with `last` the move that led to it). `ai` plays the side that is
    /// not `human`; with `ai` `None` both sides are typed in and `hints` supplies hints.
    pub(super) fn new(
        game: Game,
        last: Option<LastMove>,
        human: Side,
        ai: Option<Box<dyn Player>>,
        hints: Option<HintSource>,
        term: Terminal,
        out: W,
    ) -> Session<W> {
        Session {
            game,
            last,
            human: ai.as_ref().map(|_| human),
            ai,
            hint_player: None,
            hint_source: hints,
            term,
            out,
            dirty: true,
            announced: false,
        }
    }

    /// The label of `side`: `you` and the AI's name, or nothing with two people.
    fn names(&self) -> [Option<String>; 2] {
        let mut names = [None, None];
        if let (Some(human), Some(ai)) = (self.human, &self.ai) {
            names[human.index()] = Some("you".to_string());
            names[(!human).index()] = Some(ai.name());
        }
        names
    }

    fn who(&self, side: Side) -> String {
        match &self.names()[side.index()] {
            Some(name) => format!("{} ({name})", title(side)),
            None => title(side).to_string(),
        }
    }

    /// Prints the opening lines.
    pub(super) fn greet(&mut self) -> std::io::Result<()> {
        writeln!(
            self.out,
            "Oware (Abapa rules). South owns a-f and moves first; North owns A-F."
        )?;
        match (self.human, &self.ai) {
            (Some(human), Some(ai)) => {
                let houses = if human == Side::South { "a-f" } else { "A-F" };
                writeln!(
                    self.out,
                    "You play {} ({houses}) against {}.",
                    title(human),
                    ai.name()
                )?;
            }
            _ => writeln!(
                self.out,
                "Two players on one keyboard: each types the moves of the side to move."
            )?,
        }
        writeln!(
            self.out,
            "Type a house letter to move, or help for the commands."
        )
    }

    /// Runs the session, reading commands from `input` until `quit` or the end of input.
    pub(super) fn run(&mut self, input: impl BufRead) -> anyhow::Result<()> {
        self.greet()?;
        let mut lines = BoundedLines::new(input, MAX_LINE_BYTES);
        loop {
            if self.ai_to_move() {
                self.ai_move()?;
                continue;
            }
            self.prompt()?;
            let line = match lines.next() {
                None => {
                    if self.term.interactive {
                        writeln!(self.out)?;
                    }
                    writeln!(self.out, "Bye.")?;
                    return Ok(());
                }
                Some(Err(e)) => anyhow::bail!("reading a command from stdin: {e}"),
                Some(Ok((_, Line::Text(text)))) => text,
                // Bytes that are not UTF-8 become a typo to explain, not a failure.
                Some(Ok((_, Line::NotUtf8(text)))) => text,
                Some(Ok((number, long @ Line::TooLong { .. }))) => {
                    if let Err(msg) = long.text(number) {
                        writeln!(self.out, "{msg}")?;
                    }
                    continue;
                }
            };
            match command::parse(&line) {
                Ok(None) => {}
                Ok(Some(cmd)) => {
                    if self.execute(cmd)? == Flow::Quit {
                        writeln!(self.out, "Bye.")?;
                        return Ok(());
                    }
                }
                Err(msg) => writeln!(self.out, "{msg}")?,
            }
        }
    }

    fn ai_to_move(&self) -> bool {
        matches!(self.human, Some(h) if !self.game.is_over() && self.game.to_move() != h)
    }

    /// Draws the board if it changed, announces a finished game once, then prompts.
    fn prompt(&mut self) -> std::io::Result<()> {
        if self.dirty {
            let text = board::render(
                &self.game,
                self.last.as_ref(),
                &self.names(),
                self.term.colour,
            );
            write!(self.out, "\n{text}")?;
            self.dirty = false;
        }
        if self.game.is_over() && !self.announced {
            self.announce_end()?;
            self.announced = true;
        }
        let prompt = if self.game.is_over() {
            "Game over: new, undo or quit >".to_string()
        } else {
            let legal: Vec<String> = self
                .game
                .legal_moves()
                .iter()
                .map(|m| m.to_string())
                .collect();
            format!(
                "{} to move, legal: {} >",
                title(self.game.to_move()),
                legal.join(" ")
            )
        };
        if self.term.interactive {
            write!(self.out, "{prompt} ")?;
        } else {
            writeln!(self.out, "{prompt}")?;
        }
        self.out.flush()
    }

    fn announce_end(&mut self) -> std::io::Result<()> {
        let Some(result) = self.game.result() else {
            return Ok(());
        };
        let [south, north] = result.score;
        let verdict = match (result.winner, self.human) {
            (Winner::Draw, _) => "a draw".to_string(),
            (Winner::Side(s), Some(h)) if s == h => format!("{} wins: you win!", title(s)),
            (Winner::Side(s), Some(_)) => format!("{} wins: the AI wins.", title(s)),
            (Winner::Side(s), None) => format!("{} wins.", title(s)),
        };
        let reason = match result.reason {
            EndReason::Captured25 => "a side captured 25 seeds".to_string(),
            EndReason::NoMove => {
                "the side to move had no legal move; each side took the seeds on its row"
                    .to_string()
            }
            EndReason::Repetition => {
                "a position repeated; each side took the seeds on its row".to_string()
            }
            EndReason::MaxPlies => format!(
                "the limit of {} plies was reached; each side took the seeds on its row",
                self.game.max_plies()
            ),
        };
        writeln!(self.out, "Result: South {south}, North {north}: {verdict}")?;
        writeln!(self.out, "Reason: {reason} ({})", result.reason.name())?;
        writeln!(self.out, "Moves: {}", numbered(self.game.moves()))?;
        writeln!(
            self.out,
            "Type new for another game, undo to take back your last move, or quit."
        )
    }

    fn changed(&mut self, game: Game, last: Option<LastMove>) {
        self.game = game;
        self.last = last;
        self.dirty = true;
        self.announced = false;
        if let Some(ai) = &mut self.ai {
            ai.new_game();
        }
        if let Some(hints) = &mut self.hint_player {
            hints.new_game();
        }
    }

    fn ai_move(&mut self) -> anyhow::Result<()> {
        let side = self.game.to_move();
        let label = self.who(side);
        let Some(ai) = self.ai.as_mut() else {
            return Ok(());
        };
        let choice = think(ai.as_mut(), &self.game, self.term.spinner, &label)
            .map_err(|e| anyhow::anyhow!("the AI ({}) could not move: {e}", ai.name()))?;
        let effect = self
            .game
            .play(choice.mv)
            .map_err(|e| anyhow::anyhow!("the AI ({}) chose an illegal move: {e}", ai.name()))?;
        self.last = Some(LastMove {
            mv: choice.mv,
            effect,
        });
        self.dirty = true;
        writeln!(
            self.out,
            "{label} plays {}: {}",
            choice.mv,
            board::effect_text(&effect)
        )?;
        let eval = evaluation(side, choice.value, &choice.info);
        writeln!(self.out, "  evaluation: {eval}")?;
        Ok(())
    }

    fn execute(&mut self, cmd: Command) -> anyhow::Result<Flow> {
        match cmd {
            Command::Play(mv) => self.play(mv)?,
            Command::Hint => self.hint()?,
            Command::Undo => self.undo()?,
            Command::Moves => {
                if self.game.moves().is_empty() {
                    writeln!(self.out, "No moves yet.")?;
                } else {
                    writeln!(
                        self.out,
                        "Moves ({}): {}",
                        plies(self.game.ply()),
                        numbered(self.game.moves())
                    )?;
                    writeln!(self.out, "Record: {}", self.game.record())?;
                }
            }
            Command::Board => self.dirty = true,
            Command::Save(path) => match record::save(&path, &self.game) {
                Ok(()) => writeln!(
                    self.out,
                    "Saved {} to {}.",
                    plies(self.game.ply()),
                    path.display()
                )?,
                Err(e) => writeln!(self.out, "error: {e:#}")?,
            },
            Command::Load(path, which) => match record::load(&path, which) {
                Ok((game, last)) => {
                    writeln!(
                        self.out,
                        "Loaded {} from {}.",
                        plies(game.ply()),
                        path.display()
                    )?;
                    self.changed(game, last);
                }
                Err(e) => writeln!(self.out, "error: {e:#}")?,
            },
            Command::New => {
                writeln!(self.out, "New game.")?;
                self.changed(Game::with_max_plies(self.game.max_plies()), None);
            }
            Command::Help => {
                writeln!(self.out, "{HELP}")?;
                if let Some(h) = self.human {
                    writeln!(self.out, "You play {}.", title(h))?;
                }
            }
            Command::Quit => return Ok(Flow::Quit),
        }
        Ok(Flow::Continue)
    }

    fn play(&mut self, mv: Move) -> std::io::Result<()> {
        let side = self.game.to_move();
        match self.game.play(mv) {
            Ok(effect) => {
                let last = LastMove { mv, effect };
                self.last = Some(last);
                self.dirty = true;
                let label = self.who(side);
                writeln!(
                    self.out,
                    "{label} plays {mv}: {}",
                    board::effect_text(&last.effect)
                )
            }
            Err(GameError::Illegal { mv, source, .. }) => {
                let tail = if self.game.is_over() {
                    "; type new, undo or quit"
                } else {
                    ""
                };
                writeln!(self.out, "move {mv} is illegal: {source}{tail}")
            }
            Err(e) => writeln!(self.out, "{e}"),
        }
    }

    fn hint(&mut self) -> anyhow::Result<()> {
        if self.game.is_over() {
            writeln!(
                self.out,
                "The game is over: no hint; type new, undo or quit."
            )?;
            return Ok(());
        }
        if self.ai.is_none()
            && self.hint_player.is_none()
            && let Some(source) = &self.hint_source
        {
            match (source.build)(&source.spec, source.seed) {
                Ok(p) => self.hint_player = Some(p),
                Err(e) => {
                    writeln!(self.out, "No hint available from {}: {e:#}", source.spec)?;
                    return Ok(());
                }
            }
        }
        let side = self.game.to_move();
        let spinner = self.term.spinner;
        let player = match (&mut self.ai, &mut self.hint_player) {
            (Some(p), _) | (None, Some(p)) => p,
            (None, None) => {
                writeln!(self.out, "No hint available: no AI to ask.")?;
                return Ok(());
            }
        };
        let name = player.name();
        let choice = think(
            player.as_mut(),
            &self.game,
            spinner,
            &format!("{name} (hint)"),
        )
        .map_err(|e| anyhow::anyhow!("the hint player ({name}) could not move: {e}"))?;
        let eval = evaluation(side, choice.value, &choice.info);
        writeln!(
            self.out,
            "Hint ({name}): play {}; evaluation: {eval}",
            choice.mv
        )?;
        Ok(())
    }

    fn undo(&mut self) -> std::io::Result<()> {
        let moves = self.game.moves();
        let keep = match self.human {
            // Back to just before the person's last move, taking the AI's reply with it.
            Some(h) => moves.iter().rposition(|m| m.owner() == h),
            None => moves.len().checked_sub(1),
        };
        let Some(keep) = keep else {
            return writeln!(self.out, "Nothing to undo.");
        };
        let taken: Vec<String> = moves[keep..].iter().map(Move::to_string).collect();
        let (game, last) = truncated(&self.game, keep);
        writeln!(self.out, "Took back {}.", taken.join(" "))?;
        self.changed(game, last);
        Ok(())
    }
}

/// The evaluation line: the value from `side`'s point of view, then the player's summary.
fn evaluation(side: Side, value: Option<f32>, info: &str) -> String {
    let mut s = match value {
        Some(v) => format!("{v:+.2} for {}", title(side)),
        None => "none given".to_string(),
    };
    if !info.is_empty() {
        s.push_str(&format!(" ({info})"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_move_pairs() {
        let moves: Vec<Move> = ["c", "F", "a", "B", "d"]
            .iter()
            .map(|s| s.parse().expect("move"))
            .collect();
        assert_eq!(numbered(&moves), "1. c F  2. a B  3. d");
        assert_eq!(numbered(&[]), "");
    }

    #[test]
    fn truncation_keeps_the_last_effect() {
        let game = Game::replay(["c", "F", "a"]).expect("legal");
        let (short, last) = truncated(&game, 2);
        assert_eq!(short.record(), "c F");
        assert_eq!(last.map(|l| l.mv.to_string()), Some("F".to_string()));
        let (empty, none) = truncated(&game, 0);
        assert_eq!(empty.ply(), 0);
        assert!(none.is_none());
    }
}
