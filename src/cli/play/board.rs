//! Drawing the board as text: North's row on top from `F` to `A` (so `A` sits opposite `f`),
//! South's below from `a` to `f`, with the house letters, both captured totals, the last move and
//! whose turn it is. ANSI colour is optional.

use oware_engine::{EndReason, Game, Move, MoveEffect, Position, Side};
use std::fmt::Write;

/// A move that was played and what it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct LastMove {
    /// The move.
    pub mv: Move,
    /// Its captures, or the cancelled grand slam.
    pub effect: MoveEffect,
}

/// Width of the row label column ("North", "South").
const LABEL: usize = 7;
/// Width of one house column.
const CELL: usize = 4;

const BOLD: &str = "1";
const DIM: &str = "2";
const REVERSE: &str = "7";
const SOUTH_COLOUR: &str = "36";
const NORTH_COLOUR: &str = "33";

/// Wraps `text` in the ANSI codes `codes` when `colour` is on.
fn paint(text: &str, codes: &[&str], colour: bool) -> String {
    if colour && !codes.is_empty() {
        format!("\x1b[{}m{text}\x1b[0m", codes.join(";"))
    } else {
        text.to_string()
    }
}

/// `text` right-aligned in `width` columns, painted without painting the padding.
fn cell(text: &str, width: usize, codes: &[&str], colour: bool) -> String {
    let pad = width.saturating_sub(text.chars().count());
    format!("{}{}", " ".repeat(pad), paint(text, codes, colour))
}

fn side_colour(side: Side) -> &'static str {
    match side {
        Side::South => SOUTH_COLOUR,
        Side::North => NORTH_COLOUR,
    }
}

/// `"South"` or `"North"`.
pub(super) fn title(side: Side) -> &'static str {
    match side {
        Side::South => "South",
        Side::North => "North",
    }
}

/// What a move did: `captured 3 seeds`, `grand slam, the capture was cancelled` or
/// `no capture`.
pub(super) fn effect_text(effect: &MoveEffect) -> String {
    if effect.grand_slam {
        "grand slam, the capture was cancelled".to_string()
    } else if effect.captured > 0 {
        format!("captured {} seeds", effect.captured)
    } else {
        "no capture".to_string()
    }
}

/// One-line description of the last move: who played what and what it captured.
pub(super) fn describe_last(last: &LastMove) -> String {
    format!(
        "{} {}: {}",
        title(last.mv.owner()),
        last.mv,
        effect_text(&last.effect)
    )
}

/// The position to draw: the current one, except after an ending that collects the board (no
/// move, repetition, ply limit), where it is the position the last move made, seeds still on
/// the rows, so the person sees what was collected.
pub(super) fn board_before_settling(game: &Game) -> Position {
    let settles = game
        .result()
        .is_some_and(|r| r.reason != EndReason::Captured25);
    match game.moves().last() {
        Some(&last) if settles => {
            // Every move but the last was played in a live game; none of them settles the board.
            let (before, _) = game.truncated(game.moves().len() - 1);
            let mut pos = *before.position();
            pos.play_unchecked(last);
            pos
        }
        _ => *game.position(),
    }
}

/// Draws `game` as text. `names` are optional labels for South and North (e.g. `you`, the AI's
/// name); `last` is the move that led here. Colour is used only when `colour` is true.
pub(super) fn render(
    game: &Game,
    last: Option<&LastMove>,
    names: &[Option<String>; 2],
    colour: bool,
) -> String {
    let pos = board_before_settling(game);
    let board = pos.board();
    let captured = pos.captured();
    let highlight = last.map(|l| l.mv.house());
    let mut out = String::new();

    let letters = |houses: &[usize]| -> String {
        let mut s = " ".repeat(LABEL);
        for &h in houses {
            let letter = Move::new(h).map_or('?', Move::letter).to_string();
            s.push_str(&cell(&letter, CELL, &[DIM], colour));
        }
        s
    };
    let row = |side: Side, houses: &[usize]| -> String {
        let mut s = format!("{:<LABEL$}", title(side));
        s = paint(&s, &[side_colour(side), BOLD], colour);
        for &h in houses {
            let count = board[h].to_string();
            let mut codes = vec![side_colour(side)];
            if board[h] == 0 {
                codes.push(DIM);
            }
            if highlight == Some(h) {
                codes.push(REVERSE);
            }
            s.push_str(&cell(&count, CELL, &codes, colour));
        }
        let total = format!("{:>2}", captured[side.index()]);
        // Writing into a String cannot fail; here and below.
        let _ = write!(s, "    captured {}", paint(&total, &[BOLD], colour));
        if let Some(name) = &names[side.index()] {
            let _ = write!(s, "  ({name})");
        }
        s
    };

    let north: Vec<usize> = (6..12).rev().collect();
    let south: Vec<usize> = (0..6).collect();
    let _ = writeln!(out, "{}", letters(&north).trim_end());
    let _ = writeln!(out, "{}", row(Side::North, &north));
    let _ = writeln!(out, "{}", row(Side::South, &south));
    let _ = writeln!(out, "{}", letters(&south).trim_end());
    match last {
        Some(l) => {
            let _ = writeln!(out, "Last move (ply {}): {}", game.ply(), describe_last(l));
        }
        None => {
            let _ = writeln!(out, "Last move: none yet");
        }
    }
    match game.result() {
        Some(r) => {
            let _ = writeln!(
                out,
                "{}",
                paint(&format!("Game over: {r}"), &[BOLD], colour)
            );
            if r.reason != EndReason::Captured25 && pos.board().iter().any(|&s| s > 0) {
                let _ = writeln!(out, "(the seeds left on each row went to its owner)");
            }
        }
        None => {
            let side = game.to_move();
            let mut line = format!("{} to move", title(side));
            if let Some(name) = &names[side.index()] {
                let _ = write!(line, " ({name})");
            }
            let _ = writeln!(out, "{}", paint(&line, &[side_colour(side), BOLD], colour));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use oware_search::{Budget, Player, RandomPlayer};

    /// Removes ANSI escape sequences.
    fn strip_ansi(s: &str) -> String {
        let mut out = String::new();
        let mut chars = s.chars();
        while let Some(c) = chars.next() {
            if c == '\x1b' {
                for d in chars.by_ref() {
                    if d == 'm' {
                        break;
                    }
                }
            } else {
                out.push(c);
            }
        }
        out
    }

    fn game_after(moves: &str) -> (Game, Option<LastMove>) {
        let mut last = None;
        let game = Game::replay_tokens(moves.split_whitespace(), |_, mv, effect| {
            last = Some(LastMove { mv, effect })
        })
        .expect("legal");
        (game, last)
    }

    /// South `f` sows one seed into `A`, which then holds 2, with `north_rest` seeds on `B`.
    fn capture_position(north_rest: u8) -> Game {
        let mut board = [0u8; 12];
        board[5] = 1;
        board[6] = 1;
        board[7] = north_rest;
        let on_board = 2 + north_rest;
        let south = (48 - on_board) / 2;
        let captured = [south, 48 - on_board - south];
        let pos = Position::from_parts(board, captured, Side::South).expect("48 seeds");
        Game::from_position(pos, 1000)
    }

    #[test]
    fn start_position_plain() {
        let names = [Some("you".to_string()), Some("random".to_string())];
        let text = render(&Game::new(), None, &names, false);
        let expected = "          F   E   D   C   B   A
North     4   4   4   4   4   4    captured  0  (random)
South     4   4   4   4   4   4    captured  0  (you)
          a   b   c   d   e   f
Last move: none yet
South to move (you)
";
        assert_eq!(text, expected);
    }

    #[test]
    fn a_sits_opposite_f_and_counts_follow_the_letters() {
        let (game, last) = game_after("c");
        let text = render(&game, last.as_ref(), &[None, None], false);
        let lines: Vec<&str> = text.lines().collect();
        let col = |line: &str, c: char| line.find(c).expect("letter present");
        assert_eq!(col(lines[0], 'A'), col(lines[3], 'f'));
        assert_eq!(col(lines[0], 'F'), col(lines[3], 'a'));
        // c sows into d, e, f, A: North reads F..A = 4 4 4 4 4 5.
        let north: Vec<&str> = lines[1].split_whitespace().collect();
        assert_eq!(&north[..7], ["North", "4", "4", "4", "4", "4", "5"]);
        let south: Vec<&str> = lines[2].split_whitespace().collect();
        assert_eq!(&south[..7], ["South", "4", "4", "0", "5", "5", "5"]);
        assert_eq!(lines[4], "Last move (ply 1): South c: no capture");
        assert_eq!(lines[5], "North to move");
    }

    #[test]
    fn shows_captures_and_cancelled_grand_slams() {
        let f: Move = "f".parse().expect("move");

        let mut game = capture_position(5);
        let effect = game.play(f).expect("legal");
        assert_eq!(effect.captured, 2);
        let text = render(
            &game,
            Some(&LastMove { mv: f, effect }),
            &[None, None],
            false,
        );
        assert!(
            text.contains("Last move (ply 1): South f: captured 2 seeds"),
            "{text}"
        );

        let mut game = capture_position(0);
        let effect = game.play(f).expect("legal");
        assert!(effect.grand_slam);
        let text = render(
            &game,
            Some(&LastMove { mv: f, effect }),
            &[None, None],
            false,
        );
        assert!(
            text.contains("South f: grand slam, the capture was cancelled"),
            "{text}"
        );
    }

    #[test]
    fn shows_both_captured_totals_and_the_result() {
        let mut game = capture_position(5);
        let before = game.position().captured();
        let text = render(&game, None, &[None, None], false);
        assert!(text.contains(&format!("captured {:>2}", before[0])));
        assert!(text.contains(&format!("captured {:>2}", before[1])));
        // Play on (first legal move each time) until the game ends.
        while !game.is_over() {
            let mv = game.legal_moves().as_slice()[0];
            game.play(mv).expect("legal");
        }
        let result = game.result().expect("over");
        let text = render(&game, None, &[None, None], false);
        assert!(text.contains(&format!("Game over: {result}")), "{text}");
        assert!(!text.contains("to move"));
    }

    #[test]
    fn colour_only_when_asked_and_same_text_underneath() {
        let (game, last) = game_after("c F");
        let names = [Some("you".to_string()), None];
        let plain = render(&game, last.as_ref(), &names, false);
        let coloured = render(&game, last.as_ref(), &names, true);
        assert!(!plain.contains('\x1b'));
        assert!(coloured.contains("\x1b["));
        assert_eq!(strip_ansi(&coloured), plain);
    }

    #[test]
    fn a_settled_ending_shows_the_seeds_before_collection() {
        // Random games until one ends with seeds left on the board.
        for seed in 0..500 {
            let mut player = RandomPlayer::new(seed);
            let mut game = Game::new();
            while !game.is_over() {
                let mv = player.choose(&game, Budget::default()).expect("a move").mv;
                game.play(mv).expect("legal");
            }
            let result = game.result().expect("over");
            let shown = board_before_settling(&game);
            if result.reason == EndReason::Captured25 {
                assert_eq!(shown, *game.position());
                continue;
            }
            let left: u32 = shown.board().iter().map(|&s| s as u32).sum();
            let kept: u32 = shown.captured().iter().map(|&s| s as u32).sum();
            assert_eq!(left + kept, 48);
            for side in Side::BOTH {
                assert_eq!(
                    shown.captured()[side.index()] + shown.row_seeds(side),
                    result.score[side.index()]
                );
            }
            if left > 0 {
                let text = render(&game, None, &[None, None], false);
                assert!(text.contains("went to its owner"), "{text}");
                return;
            }
        }
        panic!("no random game ended with seeds on the board");
    }
}
