//! Game records on disk: the format `oware replay` reads, moves separated by spaces on one line.
//! Anything after a tab or `#` on a line (a recorded result, a comment) is ignored when loading.

use super::board::LastMove;
use anyhow::Context;
use oware_engine::{Game, GameError, Move};
use std::path::Path;

/// The games in a record file's text: one per non-blank line, comments and results removed.
/// Each entry is the 1-based line number and the move tokens.
pub fn games_in(text: &str) -> Vec<(usize, Vec<&str>)> {
    text.lines()
        .enumerate()
        .filter_map(|(i, line)| {
            let end = line.find(['\t', '#']).unwrap_or(line.len());
            let tokens: Vec<&str> = line[..end].split_whitespace().collect();
            (!tokens.is_empty()).then_some((i + 1, tokens))
        })
        .collect()
}

/// Replays `tokens` from the start position; the game and the last move with its effect.
pub fn replay(tokens: &[&str]) -> Result<(Game, Option<LastMove>), GameError> {
    let mut game = Game::new();
    let mut last = None;
    for token in tokens {
        let ply = game.ply();
        let mv: Move = token
            .parse()
            .map_err(|source| GameError::Parse { ply, source })?;
        let effect = game.play(mv)?;
        last = Some(LastMove { mv, effect });
    }
    Ok((game, last))
}

/// Loads game `which` (1-based; needed only when the file holds several) from `path`. A file
/// with no moves at all is the start position.
pub fn load(path: &Path, which: Option<usize>) -> anyhow::Result<(Game, Option<LastMove>)> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read game record {}", path.display()))?;
    let games = games_in(&text);
    let (line, tokens) = match (games.len(), which) {
        (0, None | Some(1)) => (1, Vec::new()),
        (1, None) => games[0].clone(),
        (n, None) => anyhow::bail!(
            "{} holds {n} games, one per line: say which, e.g. load {} 1",
            path.display(),
            path.display()
        ),
        (n, Some(k)) => match games.get(k - 1) {
            Some(g) => g.clone(),
            None => anyhow::bail!(
                "{} holds {n} games, so there is no game {k}",
                path.display()
            ),
        },
    };
    // The engine's error already says which ply and why; one line, no repeated cause.
    replay(&tokens).map_err(|e| anyhow::anyhow!("{} line {line}: {e}", path.display()))
}

/// The temporary name `save` writes before renaming: hidden, next to the target.
/// Writes the game's record (one line, moves separated by spaces) to `path` atomically.
pub fn save(path: &Path, game: &Game) -> anyhow::Result<()> {
    oware_engine::atomic::write_atomic(path, format!("{}\n", game.record()).as_bytes())
        .with_context(|| format!("cannot save the game to {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_results_and_comments() {
        let text = "c F a\t1-0 captured-25\n\n# a comment\nd A # after\n";
        let games = games_in(text);
        assert_eq!(games, vec![(1, vec!["c", "F", "a"]), (4, vec!["d", "A"])]);
    }

    #[test]
    fn replay_reports_the_bad_ply() {
        let err = replay(&["c", "c"]).expect_err("c twice is illegal");
        assert!(err.to_string().contains("ply 1"), "{err}");
        let (game, last) = replay(&["c", "F"]).expect("legal");
        assert_eq!(game.record(), "c F");
        assert_eq!(last.map(|l| l.mv.to_string()), Some("F".to_string()));
    }
}
