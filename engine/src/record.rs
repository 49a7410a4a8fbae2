//! Game records: the one format, its one writer and its one reader.
//!
//! A record is one game per line: the moves in notation separated by spaces (`c F a B`, the
//! start position when there are none), optionally followed by a tab and an annotation. The
//! writer's annotation is the result from South's side (`1-0`, `0-1`, `1/2-1/2`), how the game
//! ended (`captured-25`, `no-move`, `repetition`, `max-plies`), the final seeds `S-N` and, when
//! known, the players: `c F a B ...<TAB>1-0 captured-25 25-13 south=SPEC north=SPEC`.
//!
//! The reader keeps everything before the first tab or `#` and ignores the rest, so a plain
//! move list, a line written here and a line with a `# comment` all read as their moves. Used
//! by `oware pit --record`, self-play's `games.txt`, `oware play` save/load and `oware replay`.

use crate::game::{Game, GameError, GameResult};
use crate::moves::Move;
pub use crate::moves::moves_text;
use crate::position::MoveEffect;
use std::fmt::Write;

/// The characters that end the moves part of a line: a tab (the annotation follows) or `#`
/// (a comment follows).
pub const MOVES_END: [char; 2] = ['\t', '#'];

/// One line of a record, as read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordLine<'a> {
    /// The move tokens, not yet checked.
    pub tokens: Vec<&'a str>,
    /// Everything after the moves part (from the tab or `#` on), if anything.
    pub annotation: Option<&'a str>,
}

impl<'a> RecordLine<'a> {
    /// Reads one line (without its line break).
    pub fn parse(line: &'a str) -> RecordLine<'a> {
        let (moves, annotation) = match line.find(MOVES_END) {
            Some(i) => (&line[..i], Some(&line[i..])),
            None => (line, None),
        };
        RecordLine {
            tokens: moves.split_whitespace().collect(),
            annotation,
        }
    }

    /// Replays the moves from the start position, calling `after_each(game, move, effect)`
    /// after every ply; the error names the first bad ply and why.
    pub fn replay(
        &self,
        after_each: impl FnMut(&Game, Move, MoveEffect),
    ) -> Result<Game, GameError> {
        Game::replay_tokens(self.tokens.iter().copied(), after_each)
    }
}

/// The games of a record file's text: one per line that holds moves (blank lines and lines
/// holding only a comment or an annotation are skipped), with their 1-based line numbers.
pub fn games_in(text: &str) -> Vec<(usize, RecordLine<'_>)> {
    text.lines()
        .enumerate()
        .map(|(i, line)| (i + 1, RecordLine::parse(line)))
        .filter(|(_, r)| !r.tokens.is_empty())
        .collect()
}

/// The result part of a record line: the result from South's side (`1-0`, `0-1` or
/// `1/2-1/2`), how the game ended (`captured-25`, `no-move`, `repetition`, `max-plies`) and
/// the final seeds `S-N`, e.g. `1-0 captured-25 25-11`.
pub fn result_text(result: &GameResult) -> String {
    format!(
        "{} {} {}-{}",
        result.notation(),
        result.reason.name(),
        result.score[0],
        result.score[1]
    )
}

/// The record line of a game (without a line break): its moves and, for a finished game,
/// a tab, the result, the ending, the final seeds and the players (`south`, `north` specs)
/// when given.
pub fn format_line(
    moves: &[Move],
    result: Option<&GameResult>,
    players: Option<(&str, &str)>,
) -> String {
    let mut line = moves_text(moves);
    if let Some(r) = result {
        line.push('\t');
        line.push_str(&result_text(r));
        if let Some((south, north)) = players {
            // Writing to a String cannot fail.
            let _ = write!(line, " south={south} north={north}");
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_plain_lists_annotations_and_comments() {
        let r = RecordLine::parse("c F a\t1-0 captured-25 25-13 south=random north=random");
        assert_eq!(r.tokens, ["c", "F", "a"]);
        assert_eq!(
            r.annotation,
            Some("\t1-0 captured-25 25-13 south=random north=random")
        );
        assert_eq!(RecordLine::parse(" c  F ").tokens, ["c", "F"]);
        assert_eq!(RecordLine::parse(" c  F ").annotation, None);
        assert_eq!(RecordLine::parse("d A # after").tokens, ["d", "A"]);
        assert!(RecordLine::parse("").tokens.is_empty());
        let text = "c F a\t1-0 captured-25\n\n# a comment\nd A # after\n\tonly a note\n";
        let games: Vec<(usize, Vec<&str>)> = games_in(text)
            .into_iter()
            .map(|(n, r)| (n, r.tokens))
            .collect();
        assert_eq!(games, vec![(1, vec!["c", "F", "a"]), (4, vec!["d", "A"])]);
    }

    #[test]
    fn written_lines_read_back_as_the_same_game() {
        let mut game = Game::new();
        while !game.is_over() {
            let legal = game.legal_moves();
            let m = legal.as_slice()[game.ply() as usize % legal.len()];
            game.play(m).expect("legal");
        }
        let result = game.result().expect("over");
        let line = format_line(
            game.moves(),
            Some(&result),
            Some(("random", "alphabeta:depth=2")),
        );
        let (moves, tail) = line.split_once('\t').expect("a tab");
        assert_eq!(moves, game.record());
        assert!(
            tail.ends_with(" south=random north=alphabeta:depth=2"),
            "{tail}"
        );
        assert!(tail.starts_with(result.notation()), "{tail}");
        let mut plies = 0;
        let back = RecordLine::parse(&line)
            .replay(|_, _, _| plies += 1)
            .expect("replays");
        assert_eq!(back.moves(), game.moves());
        assert_eq!(back.result(), Some(result));
        assert_eq!(plies, game.ply());
        assert_eq!(format_line(&[], None, None), "");
    }

    #[test]
    fn replay_errors_name_the_first_bad_ply() {
        let err = RecordLine::parse("c c x")
            .replay(|_, _, _| {})
            .expect_err("bad");
        assert!(
            err.to_string().starts_with("ply 1: move c is illegal"),
            "{err}"
        );
        let err = RecordLine::parse("c F zz")
            .replay(|_, _, _| {})
            .expect_err("bad");
        assert!(
            err.to_string().starts_with("ply 2: 'zz' is not a move"),
            "{err}"
        );
    }
}
