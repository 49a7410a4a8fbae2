//! The heuristic evaluation of a live position, in centiseeds (100 = one captured seed), from
//! the point of view of the side to move: the captured difference plus a weighted sum of
//! features ([`FEATURE_NAMES`]), each the side to move's count minus the opponent's unless
//! said otherwise.
//!
//! The features are those known from Awari programs: seeds in hand on each row, large houses
//! (12+ seeds) that lap the board, weak houses (0–2 seeds) and vulnerable ones (1–2 seeds,
//! which a sowing ending there captures), the best capture available right now and the one the
//! opponent threatens, mobility (non-empty houses), the seeds a sowing would carry into the
//! opponent's row, and the move itself (tempo).
//!
//! The weights are data: [`EvalWeights::CLASSIC`] (the hand-made set, `eval=classic`) and
//! [`EvalWeights::TUNED`] (fitted to game results by `oware tune-eval`, `eval=tuned`, the
//! default) ship in `models/alphabeta/`, and [`EvalWeights::parse`] reads other files
//! (`docs/alphabeta.md#evaluation-weights-files`).

use oware_engine::Position;
use oware_engine::Side;
use std::fmt::Write;
use std::path::Path;

/// One captured seed, in evaluation units.
pub const SEED: i32 = 100;

/// The number of weighted features.
pub const FEATURES: usize = 10;

/// The features' names, in the order of [`EvalWeights::to_array`] and [`features`]: the keys
/// of a weights file.
pub const FEATURE_NAMES: [&str; FEATURES] = [
    "row_seed",
    "big_house",
    "big_house_seed",
    "mobility",
    "weak_house",
    "capture_now",
    "capture_threat",
    "reach_seed",
    "vulnerable",
    "tempo",
];

/// The first line of every weights file (after comments): the format and its version.
pub const EVAL_FILE_HEADER: &str = "oware-eval 1";

/// The largest weight a file may give (in absolute value).
pub const MAX_WEIGHT: i32 = 1_000;

/// The evaluation never goes beyond this (in absolute value), so it stays far from the
/// decisive scores (see [`super::WIN_THRESHOLD`]) whatever the weights.
pub const EVAL_LIMIT: i32 = 15_000;

/// The text of the shipped hand-made weights, `models/alphabeta/eval-classic.txt`.
pub const CLASSIC_FILE: &str = include_str!("../../../models/alphabeta/eval-classic.txt");

/// The text of the shipped fitted weights, `models/alphabeta/eval-tuned.txt`.
pub const TUNED_FILE: &str = include_str!("../../../models/alphabeta/eval-tuned.txt");

/// The weights of the evaluation features, in evaluation units. Penalties (`weak_house`,
/// `capture_threat`, `vulnerable`) are subtracted: a positive weight makes the feature bad
/// for the side that has it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EvalWeights {
    /// Per seed on the side's own row.
    pub row_seed: i32,
    /// Per house holding 12 or more seeds (it laps the board and can capture widely).
    pub big_house: i32,
    /// Per seed above 12 in such a house.
    pub big_house_seed: i32,
    /// Per non-empty house (mobility).
    pub mobility: i32,
    /// Per own house holding 0–2 seeds (a future target); subtracted.
    pub weak_house: i32,
    /// Per seed of the best capture the side to move can make now (the side to move only).
    pub capture_now: i32,
    /// Per seed of the best capture the opponent threatens (could make if it were to move);
    /// subtracted (the opponent only).
    pub capture_threat: i32,
    /// Per seed a sowing from one of the side's houses would carry into the other row (at
    /// most 6 per house): how far the side can reach the opponent.
    pub reach_seed: i32,
    /// Per own house holding 1 or 2 seeds (a sowing ending there makes 2 or 3: a capture);
    /// subtracted.
    pub vulnerable: i32,
    /// For having the move (the side to move only).
    pub tempo: i32,
}

impl EvalWeights {
    /// The hand-made weights, tuned by matches of depth-6 and depth-4 searches against each
    /// other (material alone scores about 5% against them at depth 4); the evaluation of
    /// builds before the fitted one, `eval=classic` (`models/alphabeta/eval-classic.txt`).
    pub const CLASSIC: EvalWeights = EvalWeights {
        row_seed: 12,
        big_house: 60,
        big_house_seed: 6,
        mobility: 20,
        weak_house: 6,
        capture_now: 35,
        capture_threat: 0,
        reach_seed: 0,
        vulnerable: 0,
        tempo: 0,
    };

    /// The weights fitted by `oware tune-eval` (`models/alphabeta/eval-tuned.txt`; a unit test
    /// checks that the file and this constant agree), `eval=tuned`.
    pub const TUNED: EvalWeights = EvalWeights {
        row_seed: 38,
        big_house: 100,
        big_house_seed: -50,
        mobility: 68,
        weak_house: 13,
        capture_now: 89,
        capture_threat: 39,
        reach_seed: -62,
        vulnerable: -55,
        tempo: -38,
    };

    /// The weights a searcher uses unless told otherwise.
    pub const DEFAULT: EvalWeights = EvalWeights::TUNED;

    /// The weights in the order of [`FEATURE_NAMES`].
    pub const fn to_array(&self) -> [i32; FEATURES] {
        [
            self.row_seed,
            self.big_house,
            self.big_house_seed,
            self.mobility,
            self.weak_house,
            self.capture_now,
            self.capture_threat,
            self.reach_seed,
            self.vulnerable,
            self.tempo,
        ]
    }

    /// The weights from an array in the order of [`FEATURE_NAMES`].
    pub const fn from_array(w: [i32; FEATURES]) -> EvalWeights {
        EvalWeights {
            row_seed: w[0],
            big_house: w[1],
            big_house_seed: w[2],
            mobility: w[3],
            weak_house: w[4],
            capture_now: w[5],
            capture_threat: w[6],
            reach_seed: w[7],
            vulnerable: w[8],
            tempo: w[9],
        }
    }

    /// Reads a weights file's text: comment lines (`#`) and blank lines anywhere, then
    /// [`EVAL_FILE_HEADER`] as the first other line, then every key of [`FEATURE_NAMES`]
    /// exactly once as `key value` (an integer within ±[`MAX_WEIGHT`]). The error says what
    /// is wrong and on which line.
    pub fn parse(text: &str) -> Result<EvalWeights, String> {
        let mut lines = text
            .lines()
            .enumerate()
            .map(|(i, l)| (i + 1, l.split('#').next().unwrap_or("").trim()))
            .filter(|(_, l)| !l.is_empty());
        match lines.next() {
            Some((_, l)) if l.split_whitespace().eq(EVAL_FILE_HEADER.split_whitespace()) => {}
            Some((n, l)) => {
                return Err(format!(
                    "line {n}: '{}' is not an evaluation weights file's first line \
                     (expected '{EVAL_FILE_HEADER}')",
                    shorten(l)
                ));
            }
            None => {
                return Err(format!(
                    "empty: an evaluation weights file starts with '{EVAL_FILE_HEADER}'"
                ));
            }
        }
        let mut values: [Option<i32>; FEATURES] = [None; FEATURES];
        for (n, line) in lines {
            let mut words = line.split_whitespace();
            let (Some(key), Some(value), None) = (words.next(), words.next(), words.next()) else {
                return Err(format!("line {n}: '{}' is not 'key value'", shorten(line)));
            };
            let Some(i) = FEATURE_NAMES.iter().position(|&k| k == key) else {
                return Err(format!(
                    "line {n}: unknown feature '{}' (expected one of {})",
                    shorten(key),
                    FEATURE_NAMES.join(", ")
                ));
            };
            let v: i32 = match value.parse() {
                Ok(v) if (-MAX_WEIGHT..=MAX_WEIGHT).contains(&v) => v,
                Ok(_) => {
                    return Err(format!(
                        "line {n}: {key} {value} is out of range -{MAX_WEIGHT}..={MAX_WEIGHT}"
                    ));
                }
                Err(_) => {
                    return Err(format!(
                        "line {n}: {key} {} is not an integer",
                        shorten(value)
                    ));
                }
            };
            if values[i].replace(v).is_some() {
                return Err(format!("line {n}: {key} is given twice"));
            }
        }
        let missing: Vec<&str> = FEATURE_NAMES
            .iter()
            .zip(values)
            .filter(|(_, v)| v.is_none())
            .map(|(k, _)| *k)
            .collect();
        if !missing.is_empty() {
            return Err(format!("missing feature(s): {}", missing.join(", ")));
        }
        Ok(EvalWeights::from_array(values.map(|v| v.unwrap_or(0))))
    }

    /// Reads the weights file at `path` (see [`EvalWeights::parse`]); the error names the file.
    pub fn load(path: &Path) -> Result<EvalWeights, String> {
        let text =
            super::data_file::read_text(path, "evaluation weights", "an evaluation weights file")?;
        EvalWeights::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// The weights as a file's text (which [`EvalWeights::parse`] reads back), after the
    /// given comment lines (each written with a `# ` in front).
    pub fn to_file_text(&self, comments: &[String]) -> String {
        let mut s = super::data_file::comment_lines(comments);
        s.push_str(EVAL_FILE_HEADER);
        s.push('\n');
        for (k, v) in FEATURE_NAMES.iter().zip(self.to_array()) {
            let _ = writeln!(s, "{k} {v}");
        }
        s
    }
}

/// At most 40 characters of what a file holds, for an error message.
fn shorten(s: &str) -> String {
    let mut out: String = s.chars().take(40).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    out
}

impl Default for EvalWeights {
    fn default() -> Self {
        EvalWeights::DEFAULT
    }
}

/// The seeds that sowing from `house` (which must hold fewer than 12 seeds and belong to the side
/// to move in `pos`, or to the side given) would capture, computed without playing the move.
/// Exact for moves that do not lap the board, grand slam included; 0 for lapping moves.
#[inline]
pub fn capture_gain(board: &[u8; 12], side: Side, house: usize) -> u32 {
    let s = board[house] as usize;
    if s == 0 || s >= 12 {
        return 0;
    }
    let t = house + s;
    let (opp_start, last) = match side {
        Side::South if (6..12).contains(&t) => (6, t),
        Side::North if (12..18).contains(&t) => (0, t - 12),
        _ => return 0,
    };
    // Every opponent house from `opp_start` to `last` received one seed.
    let mut total = 0u32;
    let mut k = last;
    loop {
        let after = board[k] + 1;
        if after != 2 && after != 3 {
            break;
        }
        total += after as u32;
        if k == opp_start {
            break;
        }
        k -= 1;
    }
    if total == 0 {
        return 0;
    }
    let opp_row: u32 = board[opp_start..opp_start + 6]
        .iter()
        .map(|&x| x as u32)
        .sum::<u32>()
        + (last - opp_start + 1) as u32;
    if total == opp_row { 0 } else { total }
}

/// Per-side features gathered in one pass.
#[derive(Clone, Copy, Default)]
struct SideFeatures {
    row: i32,
    big: i32,
    big_seeds: i32,
    non_empty: i32,
    weak: i32,
    vulnerable: i32,
    reach: i32,
    best_capture: i32,
}

#[inline]
fn side_features(board: &[u8; 12], side: Side, captures: bool) -> SideFeatures {
    let start = side.row_start();
    let mut f = SideFeatures::default();
    for (r, house) in (start..start + 6).enumerate() {
        let s = board[house] as i32;
        f.row += s;
        if s > 0 {
            f.non_empty += 1;
        }
        if s <= 2 {
            f.weak += 1;
            if s > 0 {
                f.vulnerable += 1;
            }
        }
        if s >= 12 {
            f.big += 1;
            f.big_seeds += s - 12;
        }
        // Houses after this one on the own row: 5 - r; the seeds past them land on the other
        // row (at most 6 of them on one lap).
        f.reach += (s - (5 - r as i32)).clamp(0, 6);
        if captures {
            let g = capture_gain(board, side, house) as i32;
            if g > f.best_capture {
                f.best_capture = g;
            }
        }
    }
    f
}

/// The captured difference of `pos` for the side to move, in seeds.
#[inline]
pub fn material(pos: &Position) -> i32 {
    let me = pos.to_move();
    let cap = pos.captured();
    cap[me.index()] as i32 - cap[(!me).index()] as i32
}

/// The features of `pos` for the side to move, in the order of [`FEATURE_NAMES`], so that the
/// evaluation is `SEED · material + Σ weightᵢ · featureᵢ` (before the clamp to
/// ±[`EVAL_LIMIT`]); the penalties are given negated. For fitting the weights.
pub fn features(pos: &Position) -> [i32; FEATURES] {
    let me = pos.to_move();
    let board = pos.board();
    let a = side_features(board, me, true);
    let b = side_features(board, !me, true);
    [
        a.row - b.row,
        a.big - b.big,
        a.big_seeds - b.big_seeds,
        a.non_empty - b.non_empty,
        -(a.weak - b.weak),
        a.best_capture,
        -b.best_capture,
        a.reach - b.reach,
        -(a.vulnerable - b.vulnerable),
        1,
    ]
}

/// The evaluation of `pos` for the side to move with the given weights. `pos` should be live
/// (not a finished game); finished games are scored exactly by the search instead.
#[inline]
pub fn evaluate_with(pos: &Position, w: &EvalWeights) -> i32 {
    let me = pos.to_move();
    let them = !me;
    let board = pos.board();
    let a = side_features(board, me, w.capture_now != 0);
    let b = side_features(board, them, w.capture_threat != 0);
    let e = SEED * material(pos)
        + w.row_seed * (a.row - b.row)
        + w.big_house * (a.big - b.big)
        + w.big_house_seed * (a.big_seeds - b.big_seeds)
        + w.mobility * (a.non_empty - b.non_empty)
        - w.weak_house * (a.weak - b.weak)
        + w.capture_now * a.best_capture
        - w.capture_threat * b.best_capture
        + w.reach_seed * (a.reach - b.reach)
        - w.vulnerable * (a.vulnerable - b.vulnerable)
        + w.tempo;
    e.clamp(-EVAL_LIMIT, EVAL_LIMIT)
}

/// The evaluation of `pos` for the side to move with the default weights.
#[inline]
pub fn evaluate(pos: &Position) -> i32 {
    evaluate_with(pos, &EvalWeights::DEFAULT)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn play_gain(pos: &Position, house: usize) -> u32 {
        let mut p = *pos;
        let m = oware_engine::Move::new(house).expect("house in range");
        p.play_unchecked(m).captured as u32
    }

    /// Positions reached by random play from the start.
    fn random_positions(seed: u64, n: usize) -> Vec<Position> {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
        let mut out = Vec::new();
        for _ in 0..n {
            let mut pos = Position::start();
            for _ in 0..rng.random_range(0..80) {
                let moves = pos.legal_moves();
                if moves.is_empty() || pos.has_winning_capture() {
                    break;
                }
                let m = moves.as_slice()[rng.random_range(0..moves.len())];
                pos.play_unchecked(m);
            }
            out.push(pos);
        }
        out
    }

    #[test]
    fn capture_gain_matches_playing_the_move() {
        // Random positions reached by play: the predicted gain equals the real one for every
        // non-lapping move.
        let mut checked = 0;
        for pos in random_positions(3, 300) {
            for m in &pos.legal_moves() {
                if pos.board()[m.house()] < 12 {
                    assert_eq!(
                        capture_gain(pos.board(), pos.to_move(), m.house()),
                        play_gain(&pos, m.house()),
                        "{pos}\nmove {m}"
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked > 500);
    }

    /// The evaluation of the builds before the weights became data, word for word.
    fn old_evaluate(pos: &Position) -> i32 {
        #[derive(Default)]
        struct F {
            row: i32,
            big: i32,
            big_seeds: i32,
            non_empty: i32,
            weak: i32,
            best_capture: i32,
        }
        fn f(board: &[u8; 12], side: Side, captures: bool) -> F {
            let start = side.row_start();
            let mut f = F::default();
            for house in start..start + 6 {
                let s = board[house] as i32;
                f.row += s;
                if s > 0 {
                    f.non_empty += 1;
                }
                if s <= 2 {
                    f.weak += 1;
                }
                if s >= 12 {
                    f.big += 1;
                    f.big_seeds += s - 12;
                }
                if captures {
                    let g = capture_gain(board, side, house) as i32;
                    f.best_capture = f.best_capture.max(g);
                }
            }
            f
        }
        let me = pos.to_move();
        let them = !me;
        let cap = pos.captured();
        let a = f(pos.board(), me, true);
        let b = f(pos.board(), them, false);
        SEED * (cap[me.index()] as i32 - cap[them.index()] as i32)
            + 12 * (a.row - b.row)
            + 60 * (a.big - b.big)
            + 6 * (a.big_seeds - b.big_seeds)
            + 20 * (a.non_empty - b.non_empty)
            - 6 * (a.weak - b.weak)
            + 35 * a.best_capture
    }

    #[test]
    fn classic_reproduces_the_hand_made_evaluation() {
        assert_eq!(EvalWeights::parse(CLASSIC_FILE), Ok(EvalWeights::CLASSIC));
        for pos in random_positions(11, 2000) {
            assert_eq!(
                evaluate_with(&pos, &EvalWeights::CLASSIC),
                old_evaluate(&pos),
                "{pos}"
            );
        }
    }

    #[test]
    fn the_shipped_tuned_file_is_the_tuned_constant() {
        assert_eq!(EvalWeights::parse(TUNED_FILE), Ok(EvalWeights::TUNED));
        assert_eq!(EvalWeights::DEFAULT, EvalWeights::TUNED);
    }

    #[test]
    fn evaluation_is_material_plus_weighted_features() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(5);
        for pos in random_positions(7, 500) {
            let w: [i32; FEATURES] = std::array::from_fn(|_| rng.random_range(-50..=50));
            let weights = EvalWeights::from_array(w);
            let f = features(&pos);
            let dot: i32 = w.iter().zip(f).map(|(a, b)| a * b).sum();
            assert_eq!(
                evaluate_with(&pos, &weights),
                (SEED * material(&pos) + dot).clamp(-EVAL_LIMIT, EVAL_LIMIT),
                "{pos}"
            );
        }
    }

    #[test]
    fn weights_files_round_trip_and_bad_ones_say_why() {
        let w = EvalWeights::from_array(std::array::from_fn(|i| i as i32 * 7 - 30));
        let text = w.to_file_text(&["fitted on nothing".to_string()]);
        assert!(text.starts_with("# fitted on nothing\noware-eval 1\n"));
        assert_eq!(EvalWeights::parse(&text), Ok(w));
        let body: String = FEATURE_NAMES.iter().map(|k| format!("{k} 1\n")).collect();
        let good = format!("{EVAL_FILE_HEADER}\n{body}");
        assert!(EvalWeights::parse(&good).is_ok());
        for (text, why) in [
            (String::new(), "empty"),
            ("# only a comment\n".to_string(), "empty"),
            (
                format!("oware-eval 2\n{body}"),
                "line 1: 'oware-eval 2' is not",
            ),
            (
                format!("{{\"json\": 1}}\n{body}"),
                "is not an evaluation weights file",
            ),
            (format!("{good}row_seed 3\n"), "row_seed is given twice"),
            (format!("{good}depth 3\n"), "unknown feature 'depth'"),
            (format!("{good}tempo\n"), "is not 'key value'"),
            (format!("{good}tempo 1 2\n"), "is not 'key value'"),
            (
                good.replace("tempo 1", "tempo x"),
                "tempo x is not an integer",
            ),
            (good.replace("tempo 1", "tempo 1.5"), "not an integer"),
            (
                good.replace("tempo 1", "tempo 1001"),
                "out of range -1000..=1000",
            ),
            (good.replace("tempo 1\n", ""), "missing feature(s): tempo"),
        ] {
            match EvalWeights::parse(&text) {
                Ok(w) => panic!("{text:?} parsed as {w:?}"),
                Err(e) => assert!(e.contains(why), "{text:?}: {e}"),
            }
        }
        // A file: the error names it.
        let dir = std::env::temp_dir().join(format!("oware-eval-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let damaged = dir.join("damaged.txt");
        std::fs::write(&damaged, &good[..good.len() - 9]).expect("write");
        let e = EvalWeights::load(&damaged).expect_err("damaged");
        assert!(e.contains("damaged.txt") && e.contains("missing"), "{e}");
        let binary = dir.join("net.bin");
        std::fs::write(&binary, [0xFFu8, 0xFE, 0, 1]).expect("write");
        let e = EvalWeights::load(&binary).expect_err("binary");
        assert!(e.contains("net.bin") && e.contains("not text"), "{e}");
        let e = EvalWeights::load(&dir.join("absent.txt")).expect_err("absent");
        assert!(e.contains("absent.txt") && e.contains("cannot read"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn start_is_balanced_and_captures_count() {
        for w in [EvalWeights::CLASSIC, EvalWeights::TUNED] {
            let tempo = w.tempo;
            assert_eq!(evaluate_with(&Position::start(), &w), tempo);
            let ahead = Position::from_parts([4; 12], [0, 0], Side::South).expect("valid");
            assert_eq!(evaluate_with(&ahead, &w), tempo);
            let mut board = [4u8; 12];
            board[0] = 0;
            board[1] = 0;
            let up = Position::from_parts(board, [8, 0], Side::South).expect("valid");
            // 8 seeds captured, 8 fewer on the own row (and two empty houses): still ahead.
            assert!(evaluate_with(&up, &w) > 2 * SEED, "{}", evaluate(&up));
            let down = Position::from_parts(board, [0, 8], Side::South).expect("valid");
            assert!(evaluate_with(&down, &w) < -5 * SEED);
        }
    }
}
