//! Match statistics: score, Elo difference and its 95% confidence interval from wins, draws
//! and losses.
//!
//! The Elo difference of a score `s` is `400·log10(s / (1 − s))`. Its interval maps the score's
//! interval `s ± 1.96·σ/√n` through the same function, where σ² is the per-game variance of the
//! results (1, ½, 0), draws included. A score of 0% or 100% has no finite Elo: scores are
//! clamped to half a game away from the ends (`[½/n, 1 − ½/n]`), and the per-game variance is at
//! least that of a score half a game from the ends, so a clean sweep still gets a finite, honest interval.

/// Wins, draws and losses from one player's side.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct MatchScore {
    /// Games won.
    pub wins: u32,
    /// Games drawn.
    pub draws: u32,
    /// Games lost.
    pub losses: u32,
}

/// The z value of a two-sided 95% interval.
pub const Z95: f64 = 1.959_963_984_540_054;

/// Elo points per unit of the logistic scale (natural log of the odds): `400 / ln 10`.
pub const ELO_PER_NAT: f64 = 400.0 / std::f64::consts::LN_10;

/// The Elo difference that an expected score `s` (strictly between 0 and 1) means.
pub fn elo_from_score(s: f64) -> f64 {
    400.0 * (s / (1.0 - s)).log10()
}

/// The expected score against an opponent `elo` points weaker.
pub fn score_from_elo(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

impl MatchScore {
    /// A score from its counts.
    pub const fn new(wins: u32, draws: u32, losses: u32) -> MatchScore {
        MatchScore {
            wins,
            draws,
            losses,
        }
    }

    /// Adds one game: `result` 1.0 win, 0.5 draw, 0.0 loss (anything between rounds to the
    /// nearest of these).
    pub fn add(&mut self, result: f64) {
        if result > 0.75 {
            self.wins += 1;
        } else if result < 0.25 {
            self.losses += 1;
        } else {
            self.draws += 1;
        }
    }

    /// Games played.
    pub const fn games(&self) -> u32 {
        self.wins + self.draws + self.losses
    }

    /// The score: (wins + draws/2) / games; 0.5 with no games.
    pub fn score(&self) -> f64 {
        let n = self.games();
        if n == 0 {
            0.5
        } else {
            (self.wins as f64 + 0.5 * self.draws as f64) / n as f64
        }
    }

    /// The score clamped to half a game from 0 and 1, so its Elo is finite.
    fn clamped_score(&self) -> f64 {
        let n = self.games().max(1) as f64;
        let lo = 0.5 / n;
        self.score().clamp(lo, 1.0 - lo).clamp(1e-9, 1.0 - 1e-9)
    }

    /// The Elo difference the score means (0 with no games; finite at 0% and 100%).
    pub fn elo(&self) -> f64 {
        if self.games() == 0 {
            return 0.0;
        }
        elo_from_score(self.clamped_score())
    }

    /// The standard error of the score: per-game standard deviation (draws included) over √n.
    pub fn score_std_error(&self) -> f64 {
        let n = self.games();
        if n == 0 {
            return 0.5;
        }
        let nf = n as f64;
        let s = self.score();
        let mean_sq = (self.wins as f64 + 0.25 * self.draws as f64) / nf;
        let var = (mean_sq - s * s).max(0.0);
        // At least the variance of a score half a game from 0 or 1, so sweeps keep an error.
        let edge = 0.5 / nf;
        (var.max(edge * (1.0 - edge)) / nf).sqrt()
    }

    /// The 95% confidence interval of the Elo difference, `(low, high)`. With no games it is
    /// the widest finite interval, `(-elo_from_score(1−ε), +…)`, here ±1200.
    pub fn elo_ci95(&self) -> (f64, f64) {
        let n = self.games();
        if n == 0 {
            return (-1200.0, 1200.0);
        }
        let lo_clamp = 0.5 / n as f64;
        let s = self.score();
        let se = self.score_std_error();
        let clamp = |x: f64| x.clamp(lo_clamp, 1.0 - lo_clamp).clamp(1e-9, 1.0 - 1e-9);
        let lo = elo_from_score(clamp(s - Z95 * se));
        let hi = elo_from_score(clamp(s + Z95 * se));
        (lo.min(self.elo()), hi.max(self.elo()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn even_score_is_zero_elo() {
        let m = MatchScore::new(40, 20, 40);
        assert_eq!(m.games(), 100);
        assert!(close(m.score(), 0.5, 1e-12));
        assert!(close(m.elo(), 0.0, 1e-9));
        let (lo, hi) = m.elo_ci95();
        assert!(lo < 0.0 && hi > 0.0);
        assert!(close(lo, -hi, 1e-9), "symmetric: {lo} {hi}");
    }

    #[test]
    fn known_values() {
        // 75% is +190.8 Elo; 10:1 odds is +400.
        assert!(close(elo_from_score(0.75), 190.848, 1e-3));
        assert!(close(elo_from_score(10.0 / 11.0), 400.0, 1e-9));
        assert!(close(score_from_elo(elo_from_score(0.3)), 0.3, 1e-12));
        let m = MatchScore::new(70, 10, 20);
        assert!(close(m.score(), 0.75, 1e-12));
        assert!(close(m.elo(), 190.848, 1e-3));
        // Per-game variance: E[x²] − s² = (70 + 2.5)/100 − 0.5625 = 0.1625.
        assert!(close(
            m.score_std_error(),
            (0.1625f64 / 100.0).sqrt(),
            1e-12
        ));
        let (lo, hi) = m.elo_ci95();
        let se = (0.1625f64 / 100.0).sqrt();
        assert!(close(lo, elo_from_score(0.75 - 1.959964 * se), 1e-2));
        assert!(close(hi, elo_from_score(0.75 + 1.959964 * se), 1e-2));
    }

    #[test]
    fn draws_narrow_the_interval() {
        let decisive = MatchScore::new(50, 0, 50);
        let drawish = MatchScore::new(10, 80, 10);
        let w = |m: MatchScore| {
            let (lo, hi) = m.elo_ci95();
            hi - lo
        };
        assert!(w(drawish) < w(decisive));
        // More games narrow it too.
        assert!(w(MatchScore::new(500, 0, 500)) < w(decisive));
    }

    #[test]
    fn sweeps_are_finite_and_ordered() {
        let all = MatchScore::new(200, 0, 0);
        let e = all.elo();
        assert!(e.is_finite() && e > 800.0, "{e}");
        let (lo, hi) = all.elo_ci95();
        assert!(lo.is_finite() && hi.is_finite());
        assert!(lo < e && e <= hi, "{lo} {e} {hi}");
        let none = MatchScore::new(0, 0, 200);
        assert!(close(none.elo(), -e, 1e-9));
        let (nlo, nhi) = none.elo_ci95();
        assert!(close(nlo, -hi, 1e-9) && close(nhi, -lo, 1e-9));
        let empty = MatchScore::default();
        assert_eq!(empty.elo(), 0.0);
        assert_eq!(empty.score(), 0.5);
    }

    #[test]
    fn add_counts_results() {
        let mut m = MatchScore::default();
        for r in [1.0, 0.5, 0.0, 1.0] {
            m.add(r);
        }
        assert_eq!(m, MatchScore::new(2, 1, 1));
    }
}
