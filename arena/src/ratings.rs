//! Ratings of many players from the games between them: maximum-likelihood Bradley–Terry
//! ratings with draws, anchored at one player, with 95% intervals. `oware ladder` prints them.
//!
//! **The model** is Davidson's (1970) extension of Bradley–Terry to draws, one of the two
//! draw models BayesElo and Ordo offer. With `γ = exp(θ)` for each player and one draw
//! parameter `ν ≥ 0` for all games,
//!
//! ```text
//! P(A wins) = γA / D,   P(draw) = ν·√(γA·γB) / D,   P(B wins) = γB / D,   D = γA + γB + ν·√(γA·γB)
//! ```
//!
//! Ratings are `θ` in Elo units (`400/ln 10` per unit of `θ`), so without draws a difference
//! of 400 means 10:1 odds, as in [`crate::elo`]; with draws it is the odds among the decisive
//! games. The model is an exponential family whose sufficient statistic for each player is its
//! points (win 1, draw ½), so at the maximum every player's expected score equals its actual
//! score, as in Ordo; the draw rate between equal players is `ν / (2 + ν)`. With few draws
//! (Oware matches have 1–2%) the ratings match `oware pit`'s score-based Elo closely.
//!
//! **The fit** maximises the log-likelihood by Newton's method (it is concave: an exponential
//! family in its natural parameters) over every rating but the anchor's, which is 0, and
//! `ln ν` (left out, with `ν = 0`, when no game was drawn). A weak prior keeps clean sweeps
//! finite, as BayesElo's virtual draws do: each pair of players that met gets one virtual game,
//! counted as half a win for each side. For two players the rating difference is then
//! `400·log10((W + ½) / (L + ½))`.
//!
//! **The intervals** come from the inverse of the Fisher information (the negated Hessian of
//! the log-likelihood at the maximum, `ln ν` included, so its uncertainty widens them): each
//! player's ±interval is 1.96 standard errors of its rating, that is of its difference from the
//! anchor, whose own interval is 0.

use crate::elo::{ELO_PER_NAT, MatchScore, Z95};
use std::collections::VecDeque;

/// The games between two players, from `a`'s side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pairing {
    /// One player (an index into the player list).
    pub a: usize,
    /// The other player.
    pub b: usize,
    /// Wins, draws and losses of `a` against `b`.
    pub score: MatchScore,
}

/// One player's rating and record.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rating {
    /// Elo relative to the anchor (which is 0).
    pub rating: f64,
    /// Half-width of the 95% interval of the rating (0 for the anchor).
    pub ci95: f64,
    /// The player's wins, draws and losses against everyone (without the prior).
    pub record: MatchScore,
}

/// The fitted ratings of every player.
#[derive(Clone, Debug, PartialEq)]
pub struct Ratings {
    /// One rating per player, in the order of the player list.
    pub players: Vec<Rating>,
    /// The player whose rating is 0.
    pub anchor: usize,
    /// The fitted draw parameter `ν` (0 when no game was drawn).
    pub draw_nu: f64,
    /// Games in all (without the prior).
    pub games: u32,
    /// Drawn games.
    pub draws: u32,
    /// Newton iterations the fit took.
    pub iterations: u32,
}

impl Ratings {
    /// The draw rate the model gives two equal players: `ν / (2 + ν)`.
    pub fn equal_draw_rate(&self) -> f64 {
        self.draw_nu / (2.0 + self.draw_nu)
    }

    /// The players from the highest rating down (ties keep list order).
    pub fn ranking(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.players.len()).collect();
        order.sort_by(|&x, &y| self.players[y].rating.total_cmp(&self.players[x].rating));
        order
    }
}

/// Why ratings cannot be fitted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RatingError {
    /// Fewer than two players.
    #[error("ratings need at least two players, got {0}")]
    TooFewPlayers(usize),
    /// The anchor is not a player.
    #[error("the anchor {anchor} is not one of the {players} players")]
    AnchorOutOfRange {
        /// The anchor asked for.
        anchor: usize,
        /// How many players there are.
        players: usize,
    },
    /// A pairing names a player that does not exist, or a player against itself.
    #[error("a pairing of players {a} and {b} does not fit {players} distinct players")]
    BadPairing {
        /// One side.
        a: usize,
        /// The other side.
        b: usize,
        /// How many players there are.
        players: usize,
    },
    /// Some players are not linked to the anchor by games, so their ratings are unknown.
    #[error("players {0:?} are not linked to the anchor by any chain of games")]
    NotConnected(Vec<usize>),
    /// The fit did not converge (it always should; this is a guard, not an expected case).
    #[error("the rating fit did not converge after {0} iterations")]
    NoConvergence(u32),
}

/// The probabilities of a win, a draw and a loss for a player rated `rating` against one rated
/// `opponent` (Elo), with draw parameter `nu`.
pub fn outcome_probabilities(rating: f64, opponent: f64, nu: f64) -> [f64; 3] {
    let half = (rating - opponent) / ELO_PER_NAT / 2.0;
    // Divided through by √(γA·γB): e^{+h}, ν, e^{-h}.
    let (w, d, l) = (half.exp(), nu.max(0.0), (-half).exp());
    let total = w + d + l;
    [w / total, d / total, l / total]
}

/// The virtual games each pair that met gets, half won by each side.
const PRIOR_GAMES: f64 = 1.0;

/// Most Newton iterations before giving up.
const MAX_ITERATIONS: u32 = 200;

/// The games between one unordered pair, with the prior added.
#[derive(Clone, Copy, Debug)]
struct PairCounts {
    i: usize,
    j: usize,
    wins_i: f64,
    draws: f64,
    wins_j: f64,
}

/// Where each quantity sits in the parameter vector: the free ratings, then `ln ν`.
struct Params {
    index: Vec<Option<usize>>,
    eta: Option<usize>,
    len: usize,
}

impl Params {
    fn new(players: usize, anchor: usize, with_draws: bool) -> Params {
        let mut next = 0;
        let index = (0..players)
            .map(|p| {
                (p != anchor).then(|| {
                    next += 1;
                    next - 1
                })
            })
            .collect();
        let eta = with_draws.then_some(next);
        Params {
            index,
            eta,
            len: next + usize::from(with_draws),
        }
    }

    fn theta(&self, x: &[f64], p: usize) -> f64 {
        self.index[p].map_or(0.0, |k| x[k])
    }

    fn eta(&self, x: &[f64]) -> f64 {
        self.eta.map_or(f64::NEG_INFINITY, |k| x[k])
    }
}

/// Log-likelihood, and with `derivatives` its gradient and Hessian (row-major), at `x`.
fn evaluate(
    params: &Params,
    pairs: &[PairCounts],
    x: &[f64],
    derivatives: bool,
) -> (f64, Vec<f64>, Vec<f64>) {
    let m = params.len;
    let mut grad = vec![0.0; if derivatives { m } else { 0 }];
    let mut hess = vec![0.0; if derivatives { m * m } else { 0 }];
    let mut ll = 0.0;
    for p in pairs {
        let (ti, tj, eta) = (params.theta(x, p.i), params.theta(x, p.j), params.eta(x));
        let n = p.wins_i + p.draws + p.wins_j;
        // Log-sum-exp of the three natural parameters: win ti, loss tj, draw η + (ti+tj)/2.
        let draw = eta + (ti + tj) / 2.0;
        let top = ti.max(tj).max(draw);
        let (ew, el, ed) = ((ti - top).exp(), (tj - top).exp(), (draw - top).exp());
        let sum = ew + el + ed;
        let log_d = top + sum.ln();
        let draw_term = if p.draws > 0.0 { p.draws * draw } else { 0.0 };
        ll += p.wins_i * ti + p.wins_j * tj + draw_term - n * log_d;
        if !derivatives {
            continue;
        }
        let (pw, pl, pd) = (ew / sum, el / sum, ed / sum);
        // The statistics of one game over (θi, θj, η): win (1,0,0), loss (0,1,0), draw (½,½,1).
        let slots = [params.index[p.i], params.index[p.j], params.eta];
        let observed = [p.wins_i + p.draws / 2.0, p.wins_j + p.draws / 2.0, p.draws];
        let mean = [pw + pd / 2.0, pl + pd / 2.0, pd];
        let outcomes = [
            (pw, [1.0, 0.0, 0.0]),
            (pl, [0.0, 1.0, 0.0]),
            (pd, [0.5, 0.5, 1.0]),
        ];
        for (a, slot_a) in slots.iter().enumerate() {
            let Some(ka) = *slot_a else { continue };
            grad[ka] += observed[a] - n * mean[a];
            for (b, slot_b) in slots.iter().enumerate() {
                let Some(kb) = *slot_b else { continue };
                let second: f64 = outcomes.iter().map(|(q, t)| q * t[a] * t[b]).sum();
                hess[ka * m + kb] -= n * (second - mean[a] * mean[b]);
            }
        }
    }
    (ll, grad, hess)
}

/// The Cholesky factor `L` (row-major, lower) of the symmetric positive definite `a`, or
/// `None` when `a` is not positive definite.
fn cholesky(a: &[f64], n: usize) -> Option<Vec<f64>> {
    let mut l = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..=i {
            let dot: f64 = (0..j).map(|k| l[i * n + k] * l[j * n + k]).sum();
            let v = a[i * n + j] - dot;
            if i == j {
                if v <= 0.0 || !v.is_finite() {
                    return None;
                }
                l[i * n + i] = v.sqrt();
            } else {
                l[i * n + j] = v / l[j * n + j];
            }
        }
    }
    Some(l)
}

/// Solves `L·Lᵀ·x = b` for the Cholesky factor `l`.
fn cholesky_solve(l: &[f64], n: usize, b: &[f64]) -> Vec<f64> {
    let mut y = vec![0.0; n];
    for i in 0..n {
        let dot: f64 = (0..i).map(|k| l[i * n + k] * y[k]).sum();
        y[i] = (b[i] - dot) / l[i * n + i];
    }
    let mut x = vec![0.0; n];
    for i in (0..n).rev() {
        let dot: f64 = (i + 1..n).map(|k| l[k * n + i] * x[k]).sum();
        x[i] = (y[i] - dot) / l[i * n + i];
    }
    x
}

/// Every player's totals against everyone, from its own side.
pub fn records(players: usize, pairings: &[Pairing]) -> Vec<MatchScore> {
    let mut out = vec![MatchScore::default(); players];
    for p in pairings {
        let s = p.score;
        if let Some(r) = out.get_mut(p.a) {
            r.wins += s.wins;
            r.draws += s.draws;
            r.losses += s.losses;
        }
        if let Some(r) = out.get_mut(p.b) {
            r.wins += s.losses;
            r.draws += s.draws;
            r.losses += s.wins;
        }
    }
    out
}

/// The players that no chain of games links to `anchor`.
fn unlinked(players: usize, pairs: &[PairCounts], anchor: usize) -> Vec<usize> {
    let mut seen = vec![false; players];
    seen[anchor] = true;
    let mut queue = VecDeque::from([anchor]);
    while let Some(p) = queue.pop_front() {
        for q in pairs {
            for (from, to) in [(q.i, q.j), (q.j, q.i)] {
                if from == p && !seen[to] {
                    seen[to] = true;
                    queue.push_back(to);
                }
            }
        }
    }
    (0..players).filter(|&p| !seen[p]).collect()
}

/// Fits the ratings of `players` players from `pairings` (several pairings of the same two
/// players add up), anchored at `anchor`.
pub fn fit(players: usize, pairings: &[Pairing], anchor: usize) -> Result<Ratings, RatingError> {
    if players < 2 {
        return Err(RatingError::TooFewPlayers(players));
    }
    if anchor >= players {
        return Err(RatingError::AnchorOutOfRange { anchor, players });
    }
    let mut pairs: Vec<PairCounts> = Vec::new();
    let (mut games, mut draws) = (0u32, 0u32);
    for p in pairings {
        if p.a >= players || p.b >= players || p.a == p.b {
            return Err(RatingError::BadPairing {
                a: p.a,
                b: p.b,
                players,
            });
        }
        if p.score.games() == 0 {
            continue;
        }
        games += p.score.games();
        draws += p.score.draws;
        let (i, j, wi, wj) = if p.a < p.b {
            (p.a, p.b, p.score.wins, p.score.losses)
        } else {
            (p.b, p.a, p.score.losses, p.score.wins)
        };
        match pairs.iter_mut().find(|q| q.i == i && q.j == j) {
            Some(q) => {
                q.wins_i += f64::from(wi);
                q.draws += f64::from(p.score.draws);
                q.wins_j += f64::from(wj);
            }
            None => pairs.push(PairCounts {
                i,
                j,
                wins_i: f64::from(wi) + PRIOR_GAMES / 2.0,
                draws: f64::from(p.score.draws),
                wins_j: f64::from(wj) + PRIOR_GAMES / 2.0,
            }),
        }
    }
    let missing = unlinked(players, &pairs, anchor);
    if !missing.is_empty() {
        return Err(RatingError::NotConnected(missing));
    }

    let params = Params::new(players, anchor, draws > 0);
    let m = params.len;
    let mut x = vec![0.0; m];
    if let Some(k) = params.eta {
        // Start from the draw rate of equal players: ν ≈ draws / (decisive games / 2).
        let decisive: f64 = pairs.iter().map(|p| p.wins_i + p.wins_j).sum();
        x[k] = (2.0 * f64::from(draws) / decisive).ln();
    }
    let mut iterations = 0;
    let (mut ll, mut grad, mut hess) = evaluate(&params, &pairs, &x, true);
    loop {
        if iterations >= MAX_ITERATIONS {
            return Err(RatingError::NoConvergence(iterations));
        }
        iterations += 1;
        let info: Vec<f64> = hess.iter().map(|h| -h).collect();
        let Some(l) = cholesky(&info, m) else {
            return Err(RatingError::NoConvergence(iterations));
        };
        let step = cholesky_solve(&l, m, &grad);
        // Halve the Newton step until the likelihood does not fall.
        let mut t = 1.0;
        let mut next = x.clone();
        loop {
            for k in 0..m {
                next[k] = x[k] + t * step[k];
            }
            let (nll, _, _) = evaluate(&params, &pairs, &next, false);
            if nll >= ll - 1e-12 * ll.abs().max(1.0) || t < 1e-6 {
                break;
            }
            t /= 2.0;
        }
        let moved = step.iter().map(|s| (t * s).abs()).fold(0.0, f64::max);
        x.clone_from(&next);
        (ll, grad, hess) = evaluate(&params, &pairs, &x, true);
        if moved < 1e-10 {
            break;
        }
    }

    // The covariance of the estimates: the inverse of the information, column by column.
    let info: Vec<f64> = hess.iter().map(|h| -h).collect();
    let Some(l) = cholesky(&info, m) else {
        return Err(RatingError::NoConvergence(iterations));
    };
    let records = records(players, pairings);
    let ratings = (0..players)
        .map(|p| {
            let ci95 = params.index[p].map_or(0.0, |k| {
                let mut unit = vec![0.0; m];
                unit[k] = 1.0;
                let column = cholesky_solve(&l, m, &unit);
                Z95 * column[k].max(0.0).sqrt() * ELO_PER_NAT
            });
            Rating {
                rating: params.theta(&x, p) * ELO_PER_NAT,
                ci95,
                record: records[p],
            }
        })
        .collect();
    Ok(Ratings {
        players: ratings,
        anchor,
        draw_nu: params.eta.map_or(0.0, |k| x[k].exp()),
        games,
        draws,
        iterations,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    fn pairing(a: usize, b: usize, w: u32, d: u32, l: u32) -> Pairing {
        Pairing {
            a,
            b,
            score: MatchScore::new(w, d, l),
        }
    }

    /// A tournament drawn from the model: `games` games for each listed pair.
    fn simulate(
        truth: &[f64],
        nu: f64,
        pairs: &[(usize, usize)],
        games: u32,
        rng: &mut SmallRng,
    ) -> Vec<Pairing> {
        pairs
            .iter()
            .map(|&(a, b)| {
                let [pw, pd, _] = outcome_probabilities(truth[a], truth[b], nu);
                let mut s = MatchScore::default();
                for _ in 0..games {
                    let u: f64 = rng.random();
                    s.add(if u < pw {
                        1.0
                    } else if u < pw + pd {
                        0.5
                    } else {
                        0.0
                    });
                }
                Pairing { a, b, score: s }
            })
            .collect()
    }

    fn round_robin(n: usize) -> Vec<(usize, usize)> {
        (0..n)
            .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
            .collect()
    }

    #[test]
    fn probabilities_follow_the_model() {
        let [w, d, l] = outcome_probabilities(0.0, 0.0, 0.5);
        assert!(
            (w - l).abs() < 1e-12 && (d - 0.2).abs() < 1e-12,
            "{w} {d} {l}"
        );
        // Without draws, 400 Elo is 10:1.
        let [w, d, l] = outcome_probabilities(400.0, 0.0, 0.0);
        assert!((w / l - 10.0).abs() < 1e-9 && d == 0.0);
        // With draws, 400 Elo is still 10:1 among the decisive games.
        let [w, _, l] = outcome_probabilities(300.0, -100.0, 0.7);
        assert!((w / l - 10.0).abs() < 1e-9);
    }

    #[test]
    fn two_players_have_a_closed_form() {
        let r = fit(2, &[pairing(0, 1, 30, 10, 20)], 1).expect("fits");
        let (w, d, l): (f64, f64, f64) = (30.5, 10.0, 20.5);
        let want = ELO_PER_NAT * (w / l).ln();
        assert!((r.players[0].rating - want).abs() < 1e-6, "{r:?}");
        assert_eq!(r.players[1].rating, 0.0);
        // The saturated model: ν = D / √(W·L); the variance of ln(W/L) is 1/W + 1/L.
        assert!(
            (r.draw_nu - d / (w * l).sqrt()).abs() < 1e-6,
            "{}",
            r.draw_nu
        );
        let ci = Z95 * (1.0 / w + 1.0 / l).sqrt() * ELO_PER_NAT;
        assert!(
            (r.players[0].ci95 - ci).abs() < 1e-4,
            "{} {ci}",
            r.players[0].ci95
        );
        assert_eq!(r.players[1].ci95, 0.0);
        assert_eq!((r.games, r.draws), (60, 10));
        assert_eq!(r.players[1].record, MatchScore::new(20, 10, 30));
        // The same games seen from the other side give the same ratings.
        let back = fit(2, &[pairing(1, 0, 20, 10, 30)], 1).expect("fits");
        assert!((back.players[0].rating - want).abs() < 1e-6);
    }

    #[test]
    fn anchor_is_zero_and_only_shifts_the_scale() {
        let mut rng = SmallRng::seed_from_u64(7);
        let truth = [0.0, 150.0, -100.0, 320.0];
        let games = simulate(&truth, 0.2, &round_robin(4), 300, &mut rng);
        let first = fit(4, &games, 0).expect("fits");
        let third = fit(4, &games, 2).expect("fits");
        assert_eq!(first.players[0].rating, 0.0);
        assert_eq!(third.players[2].rating, 0.0);
        assert_eq!((first.players[0].ci95, third.players[2].ci95), (0.0, 0.0));
        let shift = first.players[2].rating;
        for p in 0..4 {
            let moved = third.players[p].rating + shift;
            assert!((moved - first.players[p].rating).abs() < 1e-6, "player {p}");
            if p != 0 && p != 2 {
                assert!(third.players[p].ci95 > 0.0);
            }
        }
        assert_eq!(first.ranking(), vec![3, 1, 0, 2]);
    }

    #[test]
    fn every_player_scores_what_the_model_expects() {
        // At the maximum the expected points equal the actual points (the prior included).
        let mut rng = SmallRng::seed_from_u64(3);
        let truth = [0.0, 80.0, -200.0, 40.0, 500.0];
        let games = simulate(&truth, 0.1, &round_robin(5), 60, &mut rng);
        let r = fit(5, &games, 0).expect("fits");
        for p in 0..5 {
            let (mut actual, mut expected) = (0.0, 0.0);
            for g in &games {
                let (me, them, s) = if g.a == p {
                    (g.a, g.b, g.score)
                } else if g.b == p {
                    (
                        g.b,
                        g.a,
                        MatchScore::new(g.score.losses, g.score.draws, g.score.wins),
                    )
                } else {
                    continue;
                };
                let n = f64::from(s.games()) + PRIOR_GAMES;
                actual += f64::from(s.wins) + 0.5 * f64::from(s.draws) + PRIOR_GAMES / 2.0;
                let [w, d, _] =
                    outcome_probabilities(r.players[me].rating, r.players[them].rating, r.draw_nu);
                expected += n * (w + d / 2.0);
            }
            assert!(
                (actual - expected).abs() < 1e-6,
                "player {p}: {actual} {expected}"
            );
        }
    }

    #[test]
    fn recovers_known_ratings_from_simulated_games() {
        let truth = [0.0, 120.0, -80.0, 300.0, 450.0, -250.0];
        let nu = 0.25;
        let mut rng = SmallRng::seed_from_u64(2026);
        let games = simulate(&truth, nu, &round_robin(6), 2000, &mut rng);
        let r = fit(6, &games, 0).expect("fits");
        for (p, want) in truth.iter().enumerate() {
            let got = r.players[p];
            assert!(
                (got.rating - want).abs() <= got.ci95,
                "player {p}: {:.1} ± {:.1}, true {want}",
                got.rating,
                got.ci95
            );
            assert!((got.rating - want).abs() < 25.0, "player {p}: {got:?}");
            if p != 0 {
                assert!(got.ci95 > 5.0 && got.ci95 < 40.0, "player {p}: {got:?}");
            }
        }
        assert!((r.draw_nu - nu).abs() < 0.03, "ν {}", r.draw_nu);
        assert_eq!(r.games, 15 * 2000);
    }

    #[test]
    fn intervals_cover_the_truth_95_percent_of_the_time() {
        // Many small tournaments from one model: each interval must hold the true rating in
        // about 95% of them (binomial noise over 400 runs: ±2.2%, so 90%–99% is wide).
        let truth = [0.0, 100.0, -150.0, 250.0];
        let runs = 400;
        let mut rng = SmallRng::seed_from_u64(11);
        let mut covered = [0u32; 4];
        let gauntlet = [(0, 1), (0, 2), (0, 3), (1, 2), (2, 3)];
        for _ in 0..runs {
            let games = simulate(&truth, 0.4, &gauntlet, 150, &mut rng);
            let r = fit(4, &games, 0).expect("fits");
            for (p, want) in truth.iter().enumerate() {
                if (r.players[p].rating - want).abs() <= r.players[p].ci95 {
                    covered[p] += 1;
                }
            }
        }
        assert_eq!(covered[0], runs, "the anchor is exact");
        for (p, &c) in covered.iter().enumerate().skip(1) {
            let rate = f64::from(c) / f64::from(runs);
            assert!((0.90..=0.99).contains(&rate), "player {p}: coverage {rate}");
        }
    }

    #[test]
    fn a_gauntlet_rates_everyone_through_the_first_player() {
        let truth = [0.0, 200.0, -200.0, 50.0];
        let mut rng = SmallRng::seed_from_u64(5);
        let games = simulate(&truth, 0.0, &[(0, 1), (0, 2), (0, 3)], 1500, &mut rng);
        let r = fit(4, &games, 0).expect("fits");
        assert_eq!(r.draw_nu, 0.0);
        for (p, want) in truth.iter().enumerate() {
            assert!(
                (r.players[p].rating - want).abs() <= r.players[p].ci95,
                "{p}"
            );
        }
    }

    #[test]
    fn clean_sweeps_stay_finite() {
        let r = fit(2, &[pairing(0, 1, 50, 0, 0)], 1).expect("fits");
        let top = r.players[0];
        assert!(top.rating.is_finite() && top.rating > 600.0, "{top:?}");
        assert!(top.ci95.is_finite() && top.ci95 > 100.0, "{top:?}");
        // Only draws: equal ratings, a large ν.
        let r = fit(2, &[pairing(0, 1, 0, 20, 0)], 0).expect("fits");
        assert!(
            r.players[1].rating.abs() < 1e-6 && r.draw_nu > 10.0,
            "{r:?}"
        );
        assert!(r.players[1].ci95.is_finite());
    }

    #[test]
    fn bad_input_is_an_error() {
        let one = [pairing(0, 1, 3, 0, 1)];
        assert_eq!(fit(1, &[], 0), Err(RatingError::TooFewPlayers(1)));
        assert_eq!(
            fit(2, &one, 2),
            Err(RatingError::AnchorOutOfRange {
                anchor: 2,
                players: 2
            })
        );
        assert!(matches!(
            fit(2, &[pairing(1, 1, 1, 0, 0)], 0),
            Err(RatingError::BadPairing { .. })
        ));
        assert!(matches!(
            fit(2, &[pairing(0, 5, 1, 0, 0)], 0),
            Err(RatingError::BadPairing { .. })
        ));
        // Two groups that never met, and a player without games.
        let split = [pairing(0, 1, 3, 0, 1), pairing(2, 3, 2, 1, 2)];
        assert_eq!(
            fit(4, &split, 0),
            Err(RatingError::NotConnected(vec![2, 3]))
        );
        let idle = [pairing(0, 1, 3, 0, 1), pairing(0, 2, 0, 0, 0)];
        assert_eq!(fit(3, &idle, 1), Err(RatingError::NotConnected(vec![2])));
    }

    #[test]
    fn cholesky_solves_a_small_system() {
        let a = [4.0, 2.0, 0.6, 2.0, 5.0, 1.0, 0.6, 1.0, 3.0];
        let l = cholesky(&a, 3).expect("positive definite");
        let x = cholesky_solve(&l, 3, &[1.0, 2.0, 3.0]);
        for i in 0..3 {
            let row: f64 = (0..3).map(|j| a[i * 3 + j] * x[j]).sum();
            assert!((row - [1.0, 2.0, 3.0][i]).abs() < 1e-12);
        }
        assert!(cholesky(&[1.0, 2.0, 2.0, 1.0], 2).is_none());
    }
}
