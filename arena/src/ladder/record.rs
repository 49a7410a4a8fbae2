//! The record folder of `oware ladder --record DIR`: what the ladder is (`ladder.json`) and
//! every finished game, one file per pairing (`games-AA-BB.txt`, the players' numbers in the
//! list), so that an interrupted ladder resumes and plays only the missing games.
//!
//! Each game is one line in the format of `oware pit --record` (the moves, a tab, the result
//! from South's side, the reason, the final seeds, `south=SPEC north=SPEC`) with ` game=N` (the
//! game's index in its pairing) after it. A pairing's file holds its games in index order and is
//! rewritten atomically (temporary file and rename) after a finished game, at most every
//! [`WRITE_EVERY`] and always at the end of the pairing: a kill loses at most the games of
//! that last moment, which the next run plays again. Reading checks every line: the moves must
//! replay to the recorded result, and the specs and colours must be those of that game of that
//! pairing; a damaged line is an error naming the file and the line.

use anyhow::{Context, bail};
use oware_engine::atomic_file::write_atomic;
use oware_engine::record::{RecordLine, result_text};
use oware_engine::{Game, Move, Position, Side};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A pairing's record file is rewritten at most this often while its games are played.
pub const WRITE_EVERY: Duration = Duration::from_millis(250);

/// What a ladder is: a record folder only resumes a ladder with the same settings (`games`
/// may grow).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// The players' specs, in order.
    pub players: Vec<String>,
    /// The first player against each other one, instead of every pair.
    pub gauntlet: bool,
    /// Games per pairing.
    pub games: u32,
    /// The seed of openings and players.
    pub seed: u64,
    /// Random opening plies (`None`: 2 to 4, drawn per opening).
    pub opening_plies: Option<u32>,
    /// The ply limit of each game.
    pub max_plies: u32,
}

impl Settings {
    /// The differences that keep `self` (recorded) from resuming as `now`, in words.
    fn differences(&self, now: &Settings) -> Vec<String> {
        let mut out = Vec::new();
        if self.players != now.players {
            out.push(format!(
                "players {} (now {})",
                self.players.join(" "),
                now.players.join(" ")
            ));
        }
        if self.gauntlet != now.gauntlet {
            out.push(format!(
                "{} (now {})",
                mode(self.gauntlet),
                mode(now.gauntlet)
            ));
        }
        if self.seed != now.seed {
            out.push(format!("--seed {} (now {})", self.seed, now.seed));
        }
        if self.opening_plies != now.opening_plies {
            let show = |p: Option<u32>| p.map_or("2 to 4".to_string(), |p| p.to_string());
            out.push(format!(
                "--opening-plies {} (now {})",
                show(self.opening_plies),
                show(now.opening_plies)
            ));
        }
        if self.max_plies != now.max_plies {
            out.push(format!(
                "ply limit {} (now {})",
                self.max_plies, now.max_plies
            ));
        }
        out
    }
}

/// `round robin` or `gauntlet`.
pub fn mode(gauntlet: bool) -> &'static str {
    if gauntlet { "gauntlet" } else { "round robin" }
}

/// The file of the pairing of players `a` and `b` (indices into the list).
pub fn pairing_file(dir: &Path, a: usize, b: usize) -> PathBuf {
    dir.join(format!("games-{:02}-{:02}.txt", a + 1, b + 1))
}

/// The settings file of a record folder.
fn settings_file(dir: &Path) -> PathBuf {
    dir.join("ladder.json")
}

/// Opens (or starts) the record folder `dir` for a ladder with `settings`: checks that what it
/// holds belongs to the same ladder, then writes the settings.
pub fn open(dir: &Path, settings: &Settings) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let path = settings_file(dir);
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            let old: Settings = serde_json::from_str(&text)
                .with_context(|| format!("{} is not a ladder's settings", path.display()))?;
            let diff = old.differences(settings);
            if !diff.is_empty() {
                bail!(
                    "{} holds another ladder: {}; use the same settings to resume it, or another \
                     --record folder",
                    dir.display(),
                    diff.join("; ")
                );
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let stray = std::fs::read_dir(dir)
                .with_context(|| format!("reading {}", dir.display()))?
                .filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .find(|n| n.starts_with("games-") && n.ends_with(".txt"));
            if let Some(name) = stray {
                bail!(
                    "{} holds game records ({name}) but no ladder.json: it is not a ladder's \
                     record folder",
                    dir.display()
                );
            }
        }
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    }
    let json = serde_json::to_string_pretty(settings).context("writing the ladder settings")?;
    write_atomic(&path, format!("{json}\n").as_bytes())?;
    Ok(())
}

/// One recorded game: its line and A's points (1, ½, 0).
#[derive(Clone, Debug, PartialEq)]
pub struct Recorded {
    /// The record line (without the newline).
    pub line: String,
    /// Player A's points.
    pub a_points: f64,
}

/// The pairing of `a` (player A) and `b` as the record sees it.
pub struct PairingSpecs<'a> {
    /// Player A's spec.
    pub a: &'a str,
    /// Player B's spec.
    pub b: &'a str,
    /// Games in the pairing.
    pub games: u32,
    /// The ply limit of each game.
    pub max_plies: u32,
}

/// The record line of game `index` of a pairing: [`crate::GameOutcome::record_line`]
/// and ` game=N`.
pub fn line_with_index(record_line: &str, index: u32) -> String {
    format!("{record_line} game={index}")
}

/// Checks one line of a pairing's file; returns the game's index and what it records.
pub fn parse_line(line: &str, pairing: &PairingSpecs<'_>) -> Result<(u32, Recorded), String> {
    let record = RecordLine::parse(line);
    let rest = record
        .annotation
        .and_then(|a| a.strip_prefix('\t'))
        .ok_or("no tab between the moves and the result")?;
    let fields: Vec<&str> = rest.split(' ').collect();
    if fields.len() < 3 {
        return Err("the result, reason and final seeds are missing".into());
    }
    let recorded_result = fields[..3].join(" ");
    let (mut south, mut north, mut index) = (None, None, None);
    for tag in &fields[3..] {
        if let Some(v) = tag.strip_prefix("south=") {
            south = Some(v);
        } else if let Some(v) = tag.strip_prefix("north=") {
            north = Some(v);
        } else if let Some(v) = tag.strip_prefix("game=") {
            index = Some(
                v.parse::<u32>()
                    .map_err(|_| format!("game={v} is not a number"))?,
            );
        } else {
            return Err(format!("unexpected '{tag}' after the result"));
        }
    }
    let (Some(south), Some(north), Some(index)) = (south, north, index) else {
        return Err("south=SPEC, north=SPEC and game=N are all needed after the result".into());
    };
    if index >= pairing.games {
        return Err(format!(
            "game={index} is past the {} games of the pairing (was --games larger?)",
            pairing.games
        ));
    }
    let a_side = if index.is_multiple_of(2) {
        Side::South
    } else {
        Side::North
    };
    let (want_south, want_north) = match a_side {
        Side::South => (pairing.a, pairing.b),
        Side::North => (pairing.b, pairing.a),
    };
    if (south, north) != (want_south, want_north) {
        return Err(format!(
            "south={south} north={north}, but game {index} of this pairing has south={want_south} \
             north={want_north}"
        ));
    }
    let mut moves = Vec::with_capacity(record.tokens.len());
    for (ply, token) in record.tokens.iter().enumerate() {
        let mv: Move = token
            .parse()
            .map_err(|e| format!("move {} '{token}': {e}", ply + 1))?;
        moves.push(mv);
    }
    let game = Game::replay_from(Position::start(), pairing.max_plies, moves, |_, _, _| {})
        .map_err(|e| e.to_string())?;
    let Some(result) = game.result() else {
        return Err(format!(
            "the game is not over after its {} moves",
            game.ply()
        ));
    };
    let replayed = result_text(&result);
    if replayed != recorded_result {
        return Err(format!(
            "the moves end in '{replayed}', not the recorded '{recorded_result}'"
        ));
    }
    let a_points = (f64::from(result.value_for(a_side)) + 1.0) / 2.0;
    Ok((
        index,
        Recorded {
            line: line.to_string(),
            a_points,
        },
    ))
}

/// Reads the recorded games of one pairing (none when its file does not exist yet), by index.
pub fn read_pairing(
    path: &Path,
    pairing: &PairingSpecs<'_>,
) -> anyhow::Result<BTreeMap<u32, Recorded>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let mut games = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let (index, game) = parse_line(line, pairing)
            .map_err(|why| anyhow::anyhow!("{} line {}: {why}", path.display(), n + 1))?;
        if games.insert(index, game).is_some() {
            bail!(
                "{} line {}: game={index} is recorded twice",
                path.display(),
                n + 1
            );
        }
    }
    Ok(games)
}

/// The games of one pairing as they finish, written to its file now and then (see the module
/// docs); without a file, only kept in memory.
pub struct PairingLog {
    path: Option<PathBuf>,
    state: Mutex<LogState>,
}

struct LogState {
    games: BTreeMap<u32, Recorded>,
    written: Instant,
    dirty: bool,
    error: Option<String>,
}

impl PairingLog {
    /// A log that starts from the `recorded` games and writes to `path`, if any.
    pub fn new(path: Option<PathBuf>, recorded: BTreeMap<u32, Recorded>) -> PairingLog {
        PairingLog {
            path,
            state: Mutex::new(LogState {
                games: recorded,
                written: Instant::now(),
                dirty: false,
                error: None,
            }),
        }
    }

    /// Adds a finished game, writing the file when the last write is old enough. A failed
    /// write is kept for [`PairingLog::finish`] to report.
    pub fn add(&self, index: u32, game: Recorded) {
        let Ok(mut s) = self.state.lock() else {
            return;
        };
        s.games.insert(index, game);
        s.dirty = true;
        if s.written.elapsed() >= WRITE_EVERY {
            write_log(self.path.as_deref(), &mut s);
        }
    }

    /// Writes what is not written yet; returns every game of the pairing, or the first write
    /// error.
    pub fn finish(self) -> anyhow::Result<BTreeMap<u32, Recorded>> {
        let mut s = self
            .state
            .into_inner()
            .map_err(|_| anyhow::anyhow!("a match thread panicked while recording a game"))?;
        if s.dirty {
            write_log(self.path.as_deref(), &mut s);
        }
        match s.error {
            Some(e) => bail!("{e}"),
            None => Ok(s.games),
        }
    }
}

/// Writes a pairing's games to `path` (if any), in index order, atomically.
fn write_log(path: Option<&Path>, s: &mut LogState) {
    let Some(path) = path else {
        s.dirty = false;
        return;
    };
    let mut text = String::new();
    for g in s.games.values() {
        text.push_str(&g.line);
        text.push('\n');
    }
    match write_atomic(path, text.as_bytes()) {
        Ok(()) => s.dirty = false,
        Err(e) => {
            if s.error.is_none() {
                s.error = Some(e.to_string());
            }
        }
    }
    s.written = Instant::now();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{MatchOptions, play_match};
    use oware_engine::DEFAULT_MAX_PLIES;
    use oware_search::{Player, RandomPlayer};

    fn settings() -> Settings {
        Settings {
            players: vec!["random".into(), "alphabeta:depth=1".into()],
            gauntlet: false,
            games: 6,
            seed: 3,
            opening_plies: None,
            max_plies: DEFAULT_MAX_PLIES,
        }
    }

    fn lines() -> Vec<String> {
        let factory = |seed: u64| -> Result<Box<dyn Player>, String> {
            Ok(Box::new(RandomPlayer::new(seed)))
        };
        let options = MatchOptions {
            games: 6,
            opening_plies: None,
            seed: 3,
            threads: 1,
            max_plies: DEFAULT_MAX_PLIES,
        };
        play_match(&factory, &factory, &options, &|_| {})
            .expect("plays")
            .iter()
            .map(|g| line_with_index(&g.record_line("random", "alphabeta:depth=1"), g.index))
            .collect()
    }

    fn pairing() -> PairingSpecs<'static> {
        PairingSpecs {
            a: "random",
            b: "alphabeta:depth=1",
            games: 6,
            max_plies: DEFAULT_MAX_PLIES,
        }
    }

    #[test]
    fn recorded_lines_read_back() {
        for (i, line) in lines().iter().enumerate() {
            let (index, game) = parse_line(line, &pairing()).expect("valid");
            assert_eq!(index as usize, i);
            assert_eq!(&game.line, line);
            assert!([0.0, 0.5, 1.0].contains(&game.a_points));
        }
    }

    #[test]
    fn damaged_lines_say_what_is_wrong() {
        let good = lines().remove(1);
        let err = |l: &str| parse_line(l, &pairing()).expect_err("damaged");
        assert!(err("a b c").contains("no tab"));
        let (moves, rest) = good.split_once('\t').expect("tab");
        assert!(err(&format!("{moves}\t1-0")).contains("missing"));
        assert!(err(&format!("{moves} z\t{rest}")).contains("'z'"));
        let short: Vec<&str> = moves.split(' ').collect();
        let cut = short[..short.len() - 1].join(" ");
        assert!(err(&format!("{cut}\t{rest}")).contains("not over"));
        let swapped = rest
            .replace("1-0", "X")
            .replace("0-1", "1-0")
            .replace('X', "0-1");
        if swapped != rest {
            assert!(err(&format!("{moves}\t{swapped}")).contains("not the recorded"));
        }
        assert!(err(&good.replace("game=1", "game=9")).contains("past the 6 games"));
        assert!(err(&good.replace("game=1", "game=x")).contains("not a number"));
        assert!(err(&good.replace("game=1", "game=0")).contains("but game 0"));
        assert!(err(&good.replace(" game=1", "")).contains("game=N are all needed"));
        assert!(err(&format!("{good} extra")).contains("unexpected 'extra'"));
    }

    #[test]
    fn a_folder_keeps_one_ladder() {
        let dir = std::env::temp_dir().join(format!("oware-ladder-rec-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        open(&dir, &settings()).expect("starts");
        open(&dir, &settings()).expect("resumes");
        let more = Settings {
            games: 10,
            ..settings()
        };
        open(&dir, &more).expect("more games resume too");
        let other = Settings {
            seed: 4,
            gauntlet: true,
            ..more.clone()
        };
        let msg = format!("{:#}", open(&dir, &other).expect_err("another ladder"));
        assert!(msg.contains("--seed 3 (now 4)") && msg.contains("round robin (now gauntlet)"));
        std::fs::write(dir.join("ladder.json"), "{oops").expect("damage");
        let msg = format!("{:#}", open(&dir, &more).expect_err("damaged"));
        assert!(msg.contains("ladder.json"), "{msg}");
        std::fs::remove_file(dir.join("ladder.json")).expect("remove");
        std::fs::write(pairing_file(&dir, 0, 1), "").expect("games");
        let msg = format!("{:#}", open(&dir, &more).expect_err("no settings"));
        assert!(
            msg.contains("games-01-02.txt") && msg.contains("no ladder.json"),
            "{msg}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_log_writes_in_index_order_and_reads_back() {
        let dir = std::env::temp_dir().join(format!("oware-ladder-log-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("dir");
        let path = pairing_file(&dir, 0, 1);
        let all = lines();
        let log = PairingLog::new(Some(path.clone()), BTreeMap::new());
        for i in [4usize, 0, 5, 2] {
            let (index, game) = parse_line(&all[i], &pairing()).expect("valid");
            log.add(index, game);
        }
        let games = log.finish().expect("writes");
        assert_eq!(games.keys().copied().collect::<Vec<_>>(), vec![0, 2, 4, 5]);
        let text = std::fs::read_to_string(&path).expect("written");
        let want: Vec<&str> = [0, 2, 4, 5].iter().map(|&i| all[i].as_str()).collect();
        assert_eq!(text, want.join("\n") + "\n");
        let back = read_pairing(&path, &pairing()).expect("reads");
        assert_eq!(back, games);
        // A damaged line names the file and the line; so does a game recorded twice.
        std::fs::write(&path, format!("{}\n{}\nnonsense\n", all[0], all[2])).expect("damage");
        let msg = format!(
            "{:#}",
            read_pairing(&path, &pairing()).expect_err("damaged")
        );
        assert!(msg.contains("games-01-02.txt line 3"), "{msg}");
        std::fs::write(&path, format!("{}\n\n{}\n", all[2], all[2])).expect("twice");
        let msg = format!("{:#}", read_pairing(&path, &pairing()).expect_err("twice"));
        assert!(msg.contains("line 3: game=2 is recorded twice"), "{msg}");
        assert!(
            read_pairing(&dir.join("none.txt"), &pairing())
                .expect("empty")
                .is_empty()
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
