//! Game records on disk, in the engine's one record format ([`oware_engine::record`]): moves
//! separated by spaces on one line, anything after a tab or `#` ignored when loading.

use super::board::LastMove;
use anyhow::Context;
use oware_engine::Game;
use oware_engine::bounds::MAX_RECORD_FILE_BYTES;
use oware_engine::record::{RecordLine, games_in};
use std::io::Read;
use std::path::Path;

/// Replays a record line's moves from the start position; the game and the last move with its
/// effect.
fn replay(record: &RecordLine<'_>) -> Result<(Game, Option<LastMove>), oware_engine::GameError> {
    let mut last = None;
    let game = record.replay(|_, mv, effect| last = Some(LastMove { mv, effect }))?;
    Ok((game, last))
}

/// The text of a record file of at most [`MAX_RECORD_FILE_BYTES`].
fn read_bounded(path: &Path) -> anyhow::Result<String> {
    let file = std::fs::File::open(path)
        .with_context(|| format!("cannot read game record {}", path.display()))?;
    let mut text = String::new();
    file.take(MAX_RECORD_FILE_BYTES + 1)
        .read_to_string(&mut text)
        .with_context(|| format!("cannot read game record {}", path.display()))?;
    if text.len() as u64 > MAX_RECORD_FILE_BYTES {
        anyhow::bail!(
            "{} is larger than {MAX_RECORD_FILE_BYTES} bytes: not a game record",
            path.display()
        );
    }
    Ok(text)
}

/// Loads game `which` (1-based; needed only when the file holds several) from `path`. A file
/// with no moves at all is the start position.
pub(super) fn load(path: &Path, which: Option<usize>) -> anyhow::Result<(Game, Option<LastMove>)> {
    let text = read_bounded(path)?;
    let games = games_in(&text);
    let (line, record) = match (games.len(), which) {
        (0, None | Some(1)) => (1, RecordLine::parse("")),
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
    replay(&record).map_err(|e| anyhow::anyhow!("{} line {line}: {e}", path.display()))
}

/// The temporary name `save` writes before renaming: hidden, next to the target.
/// Writes the game's record (one line, moves separated by spaces) to `path` atomically.
pub(super) fn save(path: &Path, game: &Game) -> anyhow::Result<()> {
    oware_engine::atomic_file::write_atomic(path, format!("{}\n", game.record()).as_bytes())
        .with_context(|| format!("cannot save the game to {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replay_reports_the_bad_ply_and_the_last_move() {
        let err = replay(&RecordLine::parse("c c")).expect_err("c twice is illegal");
        assert!(err.to_string().contains("ply 1"), "{err}");
        let (game, last) = replay(&RecordLine::parse("c F\t1-0 # note")).expect("legal");
        assert_eq!(game.record(), "c F");
        assert_eq!(last.map(|l| l.mv.to_string()), Some("F".to_string()));
    }
}
