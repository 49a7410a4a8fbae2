//! Fitting the evaluation's weights to game results (the Texel method): every position of
//! recorded games, labelled with the game's result for its side to move (1 win, ½ draw, 0
//! loss), and a logistic regression of that result on the evaluation's terms — the captured
//! difference and the [`FEATURES`] — so that `σ(evaluation / scale)` predicts it. The fitted
//! coefficients, scaled so that a captured seed is worth [`SEED`], are the weights
//! (`oware tune-eval`, `docs/alphabeta.md#fitting-the-evaluation`).
//!
//! The fit is Newton's method on the mean log-loss with a small ridge penalty (the features
//! are not independent: weak houses are the empty ones plus the vulnerable ones, and mobility
//! counts the non-empty ones), from zero, in a fixed order: the same records give the same
//! weights on every machine.

use super::eval::{EvalWeights, FEATURES, MAX_WEIGHT, SEED, features, material};
use oware_engine::record::games_in;
use oware_engine::{Game, Side};

/// The terms of one position: the captured difference, then the [`FEATURES`].
pub const TERMS: usize = FEATURES + 1;

/// One labelled position.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    /// The captured difference and the features, for the side to move.
    pub terms: [i16; TERMS],
    /// The game's result for the side to move: 1 a win, 0.5 a draw, 0 a loss.
    pub result: f32,
}

/// Which positions of a game become samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SampleOptions {
    /// Positions before this ply are left out (the opening, often random in match records).
    pub skip_plies: u32,
}

impl Default for SampleOptions {
    fn default() -> Self {
        SampleOptions { skip_plies: 8 }
    }
}

/// The terms of `pos` for its side to move.
fn terms_of(pos: &oware_engine::Position) -> [i16; TERMS] {
    let f = features(pos);
    let mut t = [0i16; TERMS];
    // Every term is at most 48 in absolute value (the seeds of the game).
    t[0] = material(pos) as i16;
    for (slot, v) in t[1..].iter_mut().zip(f) {
        *slot = v as i16;
    }
    t
}

/// The result of a record line's annotation for South (1, ½ or 0), if it states one.
fn south_result(annotation: Option<&str>) -> Option<f32> {
    let first = annotation?
        .trim_start_matches(['\t', '#'])
        .split_whitespace()
        .next()?;
    match first {
        "1-0" => Some(1.0),
        "0-1" => Some(0.0),
        "1/2-1/2" => Some(0.5),
        _ => None,
    }
}

/// The samples of a record file's text (`oware pit --record`, self-play's `games.txt`): every
/// live position from ply [`SampleOptions::skip_plies`] on. `source` names the text in
/// errors; a line that does not replay or states no result is an error naming its line.
pub fn samples_from_records(
    text: &str,
    source: &str,
    options: SampleOptions,
) -> Result<Vec<Sample>, String> {
    let mut out = Vec::new();
    for (line, record) in games_in(text) {
        let south = south_result(record.annotation).ok_or_else(|| {
            format!(
                "{source} line {line}: no result after the moves \
                 (expected a tab, then 1-0, 0-1 or 1/2-1/2)"
            )
        })?;
        let mut positions = Vec::new();
        let game = record
            .replay(|g: &Game, _, _| positions.push((g.ply(), *g.position())))
            .map_err(|e| format!("{source} line {line}: {e}"))?;
        // The replay hands over the positions after each move; the start comes first.
        positions.insert(0, (0, *Game::new().position()));
        if let Some(r) = game.result() {
            // A finished game's stated result must be its real one.
            let real = match r.margin_for(Side::South) {
                m if m > 0 => 1.0,
                m if m < 0 => 0.0,
                _ => 0.5,
            };
            if real != south {
                return Err(format!(
                    "{source} line {line}: the result stated is not the game's"
                ));
            }
        }
        for (ply, pos) in positions {
            if ply < options.skip_plies || pos.has_winning_capture() || pos.legal_moves().is_empty()
            {
                continue;
            }
            let result = if pos.to_move() == Side::South {
                south
            } else {
                1.0 - south
            };
            out.push(Sample {
                terms: terms_of(&pos),
                result,
            });
        }
    }
    Ok(out)
}

/// What a fit found.
#[derive(Clone, Debug, PartialEq)]
pub struct Fit {
    /// The weights (rounded, within ±[`MAX_WEIGHT`]).
    pub weights: EvalWeights,
    /// The raw coefficients of the terms (per unit of each term, before scaling).
    pub coefficients: [f64; TERMS],
    /// The scale of the evaluation: `σ(evaluation / scale)` predicts the result.
    pub scale: f64,
    /// The mean log-loss of the fitted prediction.
    pub log_loss: f64,
    /// Newton iterations run.
    pub iterations: u32,
}

/// The ridge penalty per sample: small against the data, enough to split collinear features.
pub const RIDGE: f64 = 1e-3;

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

fn loss_term(p: f64, y: f64) -> f64 {
    let p = p.clamp(1e-12, 1.0 - 1e-12);
    -(y * p.ln() + (1.0 - y) * (1.0 - p).ln())
}

/// Solves `a · x = b` by Gaussian elimination with partial pivoting.
#[allow(clippy::needless_range_loop)] // matrix indices read better than iterator chains
fn solve(mut a: [[f64; TERMS]; TERMS], mut b: [f64; TERMS]) -> Option<[f64; TERMS]> {
    for col in 0..TERMS {
        let pivot = (col..TERMS).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[pivot][col].abs() < 1e-300 {
            return None;
        }
        a.swap(col, pivot);
        b.swap(col, pivot);
        for row in col + 1..TERMS {
            let f = a[row][col] / a[col][col];
            for k in col..TERMS {
                a[row][k] -= f * a[col][k];
            }
            b[row] -= f * b[col];
        }
    }
    let mut x = [0.0; TERMS];
    for row in (0..TERMS).rev() {
        let mut s = b[row];
        for k in row + 1..TERMS {
            s -= a[row][k] * x[k];
        }
        x[row] = s / a[row][row];
    }
    Some(x)
}

/// The mean log-loss of predicting each sample's result by `σ(Σ coefficientᵢ · termᵢ)`.
pub fn mean_log_loss(samples: &[Sample], coefficients: &[f64; TERMS]) -> f64 {
    let total: f64 = samples
        .iter()
        .map(|s| {
            let z: f64 = coefficients
                .iter()
                .zip(s.terms)
                .map(|(c, t)| c * f64::from(t))
                .sum();
            loss_term(sigmoid(z), f64::from(s.result))
        })
        .sum();
    total / samples.len().max(1) as f64
}

/// The terms' coefficients of given weights at a given scale.
fn coefficients_of(weights: &EvalWeights, scale: f64) -> [f64; TERMS] {
    let mut c = [0.0; TERMS];
    c[0] = f64::from(SEED) / scale;
    for (slot, w) in c[1..].iter_mut().zip(weights.to_array()) {
        *slot = f64::from(w) / scale;
    }
    c
}

/// The mean log-loss of given weights at the scale that suits them best (a golden-section
/// search over 10..10000 centiseeds), and that scale: how well an existing evaluation, such
/// as [`EvalWeights::CLASSIC`], predicts the same results.
pub fn weights_log_loss(samples: &[Sample], weights: &EvalWeights) -> (f64, f64) {
    let f = |ln_scale: f64| mean_log_loss(samples, &coefficients_of(weights, ln_scale.exp()));
    let (mut lo, mut hi) = (10f64.ln(), 10_000f64.ln());
    let g = (5f64.sqrt() - 1.0) / 2.0;
    for _ in 0..60 {
        let a = hi - g * (hi - lo);
        let b = lo + g * (hi - lo);
        if f(a) < f(b) {
            hi = b;
        } else {
            lo = a;
        }
    }
    let s = (lo + hi) / 2.0;
    (f(s), s.exp())
}

/// Fits the weights to `samples` (see the module docs). An error when there are no samples,
/// when the fitted captured difference does not count in favour of its side (the records say
/// nothing about winning), or when the system is singular.
#[allow(clippy::needless_range_loop)] // matrix indices read better than iterator chains
pub fn fit(samples: &[Sample]) -> Result<Fit, String> {
    if samples.is_empty() {
        return Err("no positions to fit (no games, or all shorter than the plies skipped)".into());
    }
    let n = samples.len() as f64;
    let mut beta = [0.0f64; TERMS];
    let mut iterations = 0;
    for _ in 0..100 {
        iterations += 1;
        let mut grad = [0.0f64; TERMS];
        let mut hess = [[0.0f64; TERMS]; TERMS];
        for s in samples {
            let x: [f64; TERMS] = s.terms.map(f64::from);
            let z: f64 = beta.iter().zip(x).map(|(b, x)| b * x).sum();
            let p = sigmoid(z);
            let r = p - f64::from(s.result);
            let w = p * (1.0 - p);
            for i in 0..TERMS {
                grad[i] += r * x[i];
                if x[i] != 0.0 {
                    for j in i..TERMS {
                        hess[i][j] += w * x[i] * x[j];
                    }
                }
            }
        }
        for i in 0..TERMS {
            grad[i] = grad[i] / n + RIDGE * beta[i];
            for j in i..TERMS {
                hess[i][j] /= n;
                hess[j][i] = hess[i][j];
            }
            hess[i][i] += RIDGE;
        }
        let step = solve(hess, grad).ok_or("the fit's system is singular")?;
        let mut largest = 0.0f64;
        for i in 0..TERMS {
            beta[i] -= step[i];
            largest = largest.max(step[i].abs());
        }
        if largest < 1e-9 {
            break;
        }
    }
    if beta.iter().any(|b| !b.is_finite()) {
        return Err("the fit diverged".into());
    }
    if beta[0] <= 1e-6 {
        return Err(format!(
            "captured seeds do not predict winning in these records (coefficient {:.3e}): \
             not results of real games?",
            beta[0]
        ));
    }
    let scale = f64::from(SEED) / beta[0];
    let mut w = [0i32; FEATURES];
    for (slot, b) in w.iter_mut().zip(&beta[1..]) {
        *slot = (b * scale)
            .round()
            .clamp(f64::from(-MAX_WEIGHT), f64::from(MAX_WEIGHT)) as i32;
    }
    Ok(Fit {
        weights: EvalWeights::from_array(w),
        coefficients: beta,
        scale,
        log_loss: mean_log_loss(samples, &beta),
        iterations,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alphabeta::AlphaBetaPlayer;
    use crate::player::{Budget, Player};
    use oware_engine::record::format_line;

    /// A fixed small data set: games of depth-2 and depth-1 alpha-beta from random openings.
    fn records() -> String {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::SmallRng::seed_from_u64(17);
        let mut text = String::new();
        for g in 0..40u64 {
            let mut game = Game::new();
            let mut moves = Vec::new();
            for _ in 0..6 {
                let legal: Vec<_> = game.legal_moves().iter().collect();
                let m = legal[rng.random_range(0..legal.len())];
                game.play(m).expect("legal");
                moves.push(m);
            }
            let mut players = [
                AlphaBetaPlayer::new(Some(1 + (g % 2) as u32), None, g),
                AlphaBetaPlayer::new(Some(2 - (g % 2) as u32), None, g + 1),
            ];
            while game.result().is_none() {
                let who = usize::from(game.to_move() != Side::South);
                let c = players[who]
                    .choose(&game, Budget::default())
                    .expect("a move");
                game.play(c.mv).expect("legal");
                moves.push(c.mv);
            }
            text.push_str(&format_line(&moves, game.result().as_ref(), None));
            text.push('\n');
        }
        text
    }

    #[test]
    fn the_fit_reproduces_and_predicts_better_than_material() {
        let text = records();
        let samples = samples_from_records(&text, "test", SampleOptions::default()).expect("ok");
        assert!(samples.len() > 1000, "{}", samples.len());
        let a = fit(&samples).expect("fit");
        let b = fit(&samples).expect("fit");
        assert_eq!(a, b, "the same data give the same fit");
        assert!(a.iterations < 100, "converged: {a:?}");
        // The fitted weights predict at least as well as the classic ones and as material.
        let (classic, _) = weights_log_loss(&samples, &EvalWeights::CLASSIC);
        let (own, _) = weights_log_loss(&samples, &a.weights);
        let zero = EvalWeights::from_array([0; FEATURES]);
        let (material_only, _) = weights_log_loss(&samples, &zero);
        assert!(own <= classic + 1e-3, "{own} vs classic {classic}");
        assert!(own < material_only, "{own} vs material {material_only}");
        assert!(a.log_loss <= own + 1e-3);
        // The weights are those of the coefficients, scaled to a seed of 100.
        assert!((a.coefficients[0] * a.scale - f64::from(SEED)).abs() < 1e-9);
        assert!(
            samples
                .iter()
                .all(|s| s.result == 0.0 || s.result == 0.5 || s.result == 1.0)
        );
    }

    #[test]
    fn a_known_model_is_recovered() {
        // Results drawn from σ(0.02·material + 0.3·tempo-free feature): the fit finds it.
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::SmallRng::seed_from_u64(1);
        let samples: Vec<Sample> = (0..20_000)
            .map(|_| {
                let mut terms = [0i16; TERMS];
                terms[0] = rng.random_range(-20..=20);
                terms[1] = rng.random_range(-10..=10);
                terms[TERMS - 1] = 1;
                let p = sigmoid(0.05 * f64::from(terms[0]) + 0.1 * f64::from(terms[1]));
                let result = if rng.random::<f64>() < p { 1.0 } else { 0.0 };
                Sample { terms, result }
            })
            .collect();
        let f = fit(&samples).expect("fit");
        // row_seed = 100 · 0.1 / 0.05 = 200 (within sampling error).
        assert!((f.weights.row_seed - 200).abs() <= 30, "{:?}", f.weights);
        assert!(f.weights.tempo.abs() <= 30, "{:?}", f.weights);
        assert!((f.scale - 2000.0).abs() < 300.0, "{}", f.scale);
    }

    #[test]
    fn bad_records_name_their_line() {
        let o = SampleOptions::default();
        let e = samples_from_records("a b c\n", "x.txt", o).expect_err("no result");
        assert!(e.contains("x.txt line 1") && e.contains("no result"), "{e}");
        let e = samples_from_records("\na Z\t1-0\n", "x.txt", o).expect_err("bad move");
        assert!(e.contains("x.txt line 2"), "{e}");
        let e = fit(&[]).expect_err("empty");
        assert!(e.contains("no positions"), "{e}");
        // Results unrelated to captures: no fit.
        let text = records();
        let mut lines: Vec<String> = Vec::new();
        for l in text.lines() {
            let moves = l.split('\t').next().unwrap_or("");
            // An unfinished game (its last move dropped) with a made-up result.
            let cut: Vec<&str> = moves.split(' ').collect();
            let cut = cut[..cut.len() - 1].join(" ");
            lines.push(format!("{cut}\t1/2-1/2"));
        }
        let samples = samples_from_records(&lines.join("\n"), "draws", o).expect("samples");
        let e = fit(&samples).expect_err("all draws");
        assert!(e.contains("do not predict winning"), "{e}");
    }
}
