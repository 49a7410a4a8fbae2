//! `oware play` driven through stdin, as a script or a person would: full games against the AI,
//! every kind of illegal input, undo, hint, save and load, and games that end by 25 seeds, by
//! no move and by repetition from loaded records.

use oware_engine::{EndReason, Game, Move, PlayError, Side};
use oware_search::{Budget, Player, RandomPlayer};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// The AI the tests play against.
const AI: &str = "alphabeta:depth=2";

use crate::common::BIN;

/// A scratch directory unique to a test, emptied first and removed when dropped.
struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scratch(name: &str) -> Scratch {
    let dir = std::env::temp_dir().join(format!("oware-cli-play-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    Scratch(dir)
}

/// `oware play ARGS` in `dir` with `input` on stdin; its stdout and whether it exited with 0.
fn run_script(dir: &Path, args: &[&str], input: &str) -> (String, bool) {
    let mut child = Command::new(BIN)
        .arg("play")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start oware play");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(input.as_bytes()).expect("write stdin");
    drop(stdin);
    let out = child.wait_with_output().expect("wait for oware play");
    let stdout = String::from_utf8(out.stdout).expect("utf-8 stdout");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stdout.contains('\x1b'),
        "no colour when not on a terminal:\n{stdout}"
    );
    (stdout + &stderr, out.status.success())
}

/// What the program waits for.
#[derive(Debug, PartialEq)]
enum Prompt {
    /// A side to move, with its legal moves.
    ToMove(Side, Vec<Move>),
    /// The game is over.
    Over,
}

/// Parses a prompt line, if `line` is one.
fn prompt_of(line: &str) -> Option<Prompt> {
    if line.starts_with("Game over: new, undo or quit") {
        return Some(Prompt::Over);
    }
    let (side, rest) = line.split_once(" to move, legal: ")?;
    let side = match side {
        "South" => Side::South,
        "North" => Side::North,
        _ => return None,
    };
    let moves = rest
        .trim_end_matches('>')
        .split_whitespace()
        .map(|m| m.parse().expect("legal move in prompt"))
        .collect();
    Some(Prompt::ToMove(side, moves))
}

/// A running `oware play`, answered line by line after reading each prompt.
struct Driver {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    transcript: String,
}

impl Driver {
    fn start(dir: &Path, args: &[&str]) -> Driver {
        let mut child = Command::new(BIN)
            .arg("play")
            .args(args)
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start oware play");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        Driver {
            child,
            stdin,
            stdout,
            transcript: String::new(),
        }
    }

    /// Reads up to the next prompt; the lines before it.
    fn until_prompt(&mut self) -> (Vec<String>, Prompt) {
        let mut lines = Vec::new();
        loop {
            let mut line = String::new();
            let n = self.stdout.read_line(&mut line).expect("read stdout");
            assert!(n > 0, "output ended before a prompt:\n{}", self.transcript);
            self.transcript.push_str(&line);
            let line = line.trim_end().to_string();
            if let Some(p) = prompt_of(&line) {
                return (lines, p);
            }
            lines.push(line);
        }
    }

    fn send(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").expect("write stdin");
        self.stdin.flush().expect("flush stdin");
    }

    /// Sends `quit` and checks the program ends cleanly.
    fn quit(mut self) -> String {
        self.send("quit");
        let mut rest = String::new();
        for line in self.stdout.lines() {
            rest.push_str(&line.expect("read stdout"));
            rest.push('\n');
        }
        self.transcript.push_str(&rest);
        let status = self.child.wait().expect("wait");
        assert!(
            status.success(),
            "exit status {status}:\n{}",
            self.transcript
        );
        assert!(rest.contains("Bye."), "{rest}");
        self.transcript
    }
}

/// The last board drawn in `text`: its six lines from the letters above North to the turn line.
fn last_board(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .rposition(|l| l.trim() == "F   E   D   C   B   A")
        .expect("a board was drawn");
    lines[start..start + 6].join("\n")
}

/// The line after `prefix` in `text` (the last such line).
fn line_after<'a>(text: &'a str, prefix: &str) -> &'a str {
    text.lines()
        .rev()
        .find_map(|l| l.strip_prefix(prefix))
        .unwrap_or_else(|| panic!("no line starting with '{prefix}' in:\n{text}"))
}

/// The AI's name, from the greeting `You play South (a-f) against NAME.`
fn ai_name(text: &str) -> &str {
    let rest = line_after(text, "You play ");
    let (_, name) = rest.split_once(" against ").expect("greeting names the AI");
    name.trim_end_matches('.')
}

/// The moves of a `Moves: 1. c F  2. a` line.
fn moves_of(numbered: &str) -> Vec<String> {
    numbered
        .split_whitespace()
        .filter(|t| !t.ends_with('.'))
        .map(str::to_string)
        .collect()
}

/// A random game with seed `seed`, played to its end.
fn random_game(seed: u64) -> Game {
    let mut player = RandomPlayer::new(seed);
    let mut game = Game::new();
    while !game.is_over() {
        let choice = player.choose(&game, Budget::default()).expect("a move");
        game.play(choice.mv)
            .expect("random player plays legal moves");
    }
    game
}

/// The first random game (by seed) that ends for `reason`.
fn game_ending_by(reason: EndReason) -> Option<Game> {
    (0..3000)
        .map(random_game)
        .find(|g| g.result().map(|r| r.reason) == Some(reason))
}

/// The record of the first `n` moves of `game`.
fn record_prefix(game: &Game, n: usize) -> String {
    game.moves()[..n]
        .iter()
        .map(Move::to_string)
        .collect::<Vec<_>>()
        .join(" ")
}

/// A position from a random game where the side to move must feed and has a non-empty house
/// that does not: the record leading there and that house.
fn must_feed_record() -> (String, Move) {
    for seed in 0..3000 {
        let game = random_game(seed);
        let mut replay = Game::new();
        for (i, &mv) in game.moves().iter().enumerate() {
            let pos = *replay.position();
            for house in 0..12 {
                let m = Move::new(house).expect("house");
                if pos.check(m) == Err(PlayError::MustFeed(m)) {
                    return (record_prefix(&game, i), m);
                }
            }
            replay.play(mv).expect("legal");
        }
    }
    panic!("no must-feed position in 3000 random games");
}

#[test]
fn full_game_against_the_ai() {
    let dir = scratch("full");
    let mut driver = Driver::start(&dir, &["--ai", AI, "--seed", "7"]);
    let mut turns = 0usize;
    loop {
        match driver.until_prompt().1 {
            Prompt::Over => break,
            Prompt::ToMove(side, legal) => {
                assert_eq!(side, Side::South, "the AI plays North");
                assert!(turns < 1000, "game too long");
                let mv = legal[(turns * 7) % legal.len()];
                driver.send(&mv.to_string());
                turns += 1;
            }
        }
    }
    let text = driver.quit();
    assert!(text.contains("You play South (a-f) against"), "{text}");
    assert!(
        text.contains("North (") && text.contains(") plays "),
        "{text}"
    );
    assert!(text.contains("evaluation: "), "{text}");

    // The move list at the end is the game that was played, and it is over as announced.
    let moves = moves_of(line_after(&text, "Moves: "));
    assert!(moves.len() >= turns);
    let game = Game::replay(moves.iter().map(String::as_str)).expect("a legal game");
    let result = game.result().expect("the game is over");
    let score = result.score;
    assert!(
        text.contains(&format!("Result: South {}, North {}", score[0], score[1])),
        "{text}"
    );
    assert!(
        line_after(&text, "Reason: ").ends_with(&format!("({})", result.reason.name())),
        "{text}"
    );
}

#[test]
fn the_ai_opens_when_you_play_north() {
    let dir = scratch("north");
    let mut driver = Driver::start(&dir, &["--ai", AI, "--side", "north", "--seed", "3"]);
    let (before, prompt) = driver.until_prompt();
    let Prompt::ToMove(Side::North, legal) = prompt else {
        panic!("expected North to move, got {prompt:?}");
    };
    assert!(
        before.iter().any(|l| l.starts_with("South (")),
        "{before:?}"
    );
    assert!(
        before
            .iter()
            .any(|l| l.contains("Last move (ply 1): South"))
    );
    driver.send(&legal[0].to_string());
    driver.until_prompt();
    driver.send("undo");
    let (lines, _) = driver.until_prompt();
    assert!(
        lines.iter().any(|l| l.starts_with("Took back ")),
        "{lines:?}"
    );
    // Back to just after the AI's opening move: nothing of ours is left to take back.
    driver.send("moves");
    let (lines, _) = driver.until_prompt();
    assert!(
        lines.iter().any(|l| l.starts_with("Moves (1 ply): 1. ")),
        "{lines:?}"
    );
    driver.send("undo");
    let (lines, _) = driver.until_prompt();
    assert_eq!(lines, ["Nothing to undo."]);
    driver.quit();
}

#[test]
fn illegal_inputs_get_one_line_and_the_prompt_again() {
    let dir = scratch("illegal");
    let (must_feed, bad) = must_feed_record();
    std::fs::write(dir.join("feed.txt"), format!("{must_feed}\n")).expect("write record");
    let over = game_ending_by(EndReason::NoMove).expect("a no-move ending");
    std::fs::write(dir.join("over.txt"), format!("{}\n", over.record())).expect("write record");

    let input = [
        "A",                // the other side's house
        "c",                // fine
        "c",                // South's house while North is to move
        "A",                // fine: A sows B-F, nothing into c
        "c",                // empty house
        "g",                // not a house
        "hello",            // not a command
        "save",             // missing file name
        "load nothing.txt", // missing file
        "load feed.txt",
        &bad.to_string(), // does not feed
        "load over.txt",
        "a", // game over
        "quit",
    ]
    .join("\n");
    let (out, ok) = run_script(&dir, &["--ai", "none"], &input);
    assert!(ok, "{out}");
    let expect = [
        "move A is illegal: house A belongs to north, but south is to move",
        "move c is illegal: house c belongs to south, but north is to move",
        "move c is illegal: house c is empty",
        "'g' is not a move: expected one house letter, a-f (South) or A-F (North); type help for the commands",
        "unknown command 'hello': type a house letter (a-f, A-F) or help",
        "save needs a file name: save FILE",
        &format!(
            "move {bad} is illegal: house {bad} does not reach the opponent's empty row, and a move that feeds it exists"
        ),
        "move a is illegal: the game is over; type new, undo or quit",
    ];
    let lines: Vec<&str> = out.lines().collect();
    for message in expect {
        let at = lines
            .iter()
            .position(|l| *l == message)
            .unwrap_or_else(|| panic!("missing '{message}' in:\n{out}"));
        assert!(
            prompt_of(lines[at + 1]).is_some(),
            "no prompt after '{message}':\n{out}"
        );
    }
    assert!(
        out.lines()
            .any(|l| l.starts_with("error: cannot read game record nothing.txt")),
        "{out}"
    );
}

#[test]
fn illegal_move_in_a_loaded_record_names_line_and_ply() {
    let dir = scratch("badrecord");
    std::fs::write(dir.join("bad.txt"), "# two games\nc F\nc A c\n").expect("write");
    let input = "load bad.txt\nload bad.txt 2\nload bad.txt 3\nload bad.txt 1\nmoves\n";
    let (out, ok) = run_script(&dir, &["--ai", "none"], input);
    assert!(ok, "{out}");
    assert!(
        out.contains("error: bad.txt holds 2 games, one per line: say which, e.g. load bad.txt 1"),
        "{out}"
    );
    assert!(
        out.contains("error: bad.txt line 3: ply 2: move c is illegal: house c is empty"),
        "{out}"
    );
    assert!(out.contains("error: bad.txt holds 2 games, so there is no game 3"));
    assert!(out.contains("Record: c F"), "{out}");
    assert!(
        out.trim_end().ends_with("Bye."),
        "EOF ends the session:\n{out}"
    );
}

#[test]
fn undo_takes_back_your_move_and_the_reply() {
    let dir = scratch("undo");
    let (out, ok) = run_script(
        &dir,
        &["--ai", AI, "--seed", "11"],
        "undo\nc\nmoves\nundo\nmoves\n",
    );
    assert!(ok, "{out}");
    assert!(out.contains("Nothing to undo."), "{out}");
    let record = line_after(&out, "Record: ");
    let moves: Vec<&str> = record.split_whitespace().collect();
    assert_eq!(moves.len(), 2);
    assert_eq!(moves[0], "c");
    assert!(out.contains(&format!("Took back c {}.", moves[1])), "{out}");
    assert!(out.contains("No moves yet."), "{out}");
    assert_eq!(
        last_board(&out),
        "          F   E   D   C   B   A
North     4   4   4   4   4   4    captured  0  (random)
South     4   4   4   4   4   4    captured  0  (you)
          a   b   c   d   e   f
Last move: none yet
South to move (you)"
            .replace("random", ai_name(&out))
    );
}

#[test]
fn two_people_on_one_keyboard() {
    let dir = scratch("none");
    let (out, ok) = run_script(&dir, &["--ai", "none"], "c\nF\nundo\nmoves\nB\nmoves\n");
    assert!(ok, "{out}");
    assert!(out.contains("Two players on one keyboard"), "{out}");
    assert!(out.contains("South plays c: no capture"), "{out}");
    assert!(out.contains("North plays F: no capture"), "{out}");
    assert!(out.contains("Took back F."), "{out}");
    assert!(out.contains("Record: c\n"), "{out}");
    assert!(out.contains("Record: c B\n"), "one ply taken back:\n{out}");
    assert!(!out.contains("(you)"));
}

#[test]
fn hint_suggests_a_legal_move() {
    let dir = scratch("hint");
    let (out, ok) = run_script(&dir, &["--ai", AI, "--seed", "5"], "hint\nmoves\n");
    assert!(ok, "{out}");
    let hint = line_after(&out, "Hint (");
    let (_, rest) = hint.split_once("): play ").expect("hint names a move");
    let (mv, eval) = rest
        .split_once("; evaluation: ")
        .expect("hint has an evaluation");
    assert!(["a", "b", "c", "d", "e", "f"].contains(&mv), "{hint}");
    assert!(!eval.is_empty());
    // A hint does not play the move.
    assert!(out.contains("No moves yet."), "{out}");
}

#[test]
fn save_then_load_reproduces_the_position() {
    let dir = scratch("save");
    let (out, ok) = run_script(
        &dir,
        &["--ai", "none"],
        "c\nF\na\nB\nsave game.txt\nboard\nnew\nload game.txt\n",
    );
    assert!(ok, "{out}");
    assert!(out.contains("Saved 4 plies to game.txt."), "{out}");
    assert!(out.contains("Loaded 4 plies from game.txt."), "{out}");
    let saved = std::fs::read_to_string(dir.join("game.txt")).expect("saved file");
    assert_eq!(saved, "c F a B\n");
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .expect("list dir")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(leftovers.len(), 1, "no temporary files left: {leftovers:?}");

    // The board drawn after loading equals the board drawn before saving.
    let before_new = &out[..out.find("New game.").expect("new")];
    assert_eq!(last_board(&out), last_board(before_new));

    // So does the board of a fresh session started with --load.
    let (fresh, ok) = run_script(&dir, &["--ai", "none", "--load", "game.txt"], "");
    assert!(ok, "{fresh}");
    assert_eq!(last_board(&fresh), last_board(before_new));
    assert!(last_board(&fresh).contains("Last move (ply 4): North B"));
}

/// Loads all of `game` but its last move, plays that move at the prompt and checks the end.
fn check_ending(name: &str, game: &Game) {
    let dir = scratch(name);
    let n = game.moves().len();
    let result = game.result().expect("finished game");
    // A recorded result after a tab is ignored.
    let record = format!(
        "{}\t{} {}\n",
        record_prefix(game, n - 1),
        result.winner.name(),
        result.reason.name()
    );
    std::fs::write(dir.join("game.txt"), record).expect("write record");
    let last = game.moves()[n - 1].to_string();
    let (out, ok) = run_script(
        &dir,
        &["--ai", "none", "--load", "game.txt"],
        &format!("{last}\nhint\n"),
    );
    assert!(ok, "{out}");
    let [south, north] = result.score;
    assert!(
        out.contains(&format!("Result: South {south}, North {north}")),
        "{out}"
    );
    assert!(
        line_after(&out, "Reason: ").ends_with(&format!("({})", result.reason.name())),
        "{out}"
    );
    assert_eq!(moves_of(line_after(&out, "Moves: ")).len(), n);
    assert!(out.contains("Game over: new, undo or quit"), "{out}");
    assert!(out.contains("The game is over: no hint"), "{out}");

    // Loading the whole record shows the result at once.
    std::fs::write(dir.join("whole.txt"), format!("{}\n", game.record())).expect("write");
    let (out, ok) = run_script(&dir, &["--ai", AI, "--load", "whole.txt"], "undo\nmoves\n");
    assert!(ok, "{out}");
    assert!(
        out.contains(&format!("Result: South {south}, North {north}")),
        "{out}"
    );
    // Undo after the end takes the game back into play.
    assert!(out.contains("Took back "), "{out}");
    let left: usize = line_after(&out, "Moves (")
        .split_whitespace()
        .next()
        .and_then(|k| k.parse().ok())
        .expect("ply count");
    assert!(left < n, "{out}");
}

#[test]
fn a_game_ends_by_25_seeds() {
    let game = game_ending_by(EndReason::Captured25).expect("a 25-seed ending");
    check_ending("captured25", &game);
    let out = game.result().expect("over");
    assert!(out.score[0] >= 25 || out.score[1] >= 25);
}

#[test]
fn a_game_ends_by_no_move() {
    let game = game_ending_by(EndReason::NoMove).expect("a no-move ending");
    check_ending("nomove", &game);
}

#[test]
fn a_game_ends_by_repetition() {
    let game = game_ending_by(EndReason::Repetition).expect("a repetition ending");
    check_ending("repetition", &game);
}

#[test]
fn bad_arguments_fail_with_a_message() {
    let dir = scratch("args");
    let (out, ok) = run_script(&dir, &["--ai", "no-such-player"], "");
    assert!(!ok);
    assert!(out.contains("no-such-player"), "{out}");
    let (out, ok) = run_script(&dir, &["--ai", "none", "--load", "missing.txt"], "");
    assert!(!ok);
    assert!(out.contains("missing.txt"), "{out}");
    let (out, ok) = run_script(&dir, &["--side", "east"], "");
    assert!(!ok);
    assert!(out.contains("east"), "{out}");
}

#[test]
fn help_lists_the_commands() {
    let dir = scratch("help");
    let (out, ok) = run_script(&dir, &["--ai", "none"], "help\nquit\nc\n");
    assert!(ok, "{out}");
    for word in [
        "hint",
        "undo",
        "moves",
        "save FILE",
        "load FILE",
        "new",
        "quit",
    ] {
        assert!(out.contains(word), "help lacks {word}:\n{out}");
    }
    // Nothing after quit is read.
    assert!(!out.contains("South plays c"), "{out}");
}
