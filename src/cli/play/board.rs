//! Drawing the board as text: North's row on top from `F` to `A` (so `A` sits opposite `f`),
//! South's below from `a` to `f`, with the house letters, both captured totals, the last move and
//! whose turn it is. ANSI colour is optional.

use oware_engine::{Game, Move, MoveEffect, Side};
use std::fmt::Write;

/// A move that was played and what it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LastMove {
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
pub fn title(side: Side) -> &'static str {
    match side {
        Side::South => "South",
        Side::North => "North",
    }
}

/// What a move did: `captured 3 seeds`, `grand slam, the capture was cancelled` or
/// `no capture`.
pub fn effect_text(effect: &MoveEffect) -> String {
    if effect.grand_slam {
        "grand slam, the capture was cancelled".to_string()
    } else if effect.captured > 0 {
        format!("captured {} seeds", effect.captured)
    } else {
        "no capture".to_string()
    }
}

/// One-line description of the last move: who played what and what it captured.
pub fn describe_last(last: &LastMove) -> String {
    format!(
        "{} {}: {}",
        title(last.mv.owner()),
        last.mv,
        effect_text(&last.effect)
    )
}

/// Draws `game` as text. `names` are optional labels for South and North (e.g. `you`, the AI's
/// name); `last` is the move that led here. Colour is used only when `colour` is true.
pub fn render(
    game: &Game,
    last: Option<&LastMove>,
    names: &[Option<String>; 2],
    colour: bool,
) -> String {
    let pos = game.position();
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
