//! The random draws the search needs: Gamma and Dirichlet (root noise for PUCT) and Gumbel
//! (Gumbel-top-k at the root), written here so the engine needs only `rand`.

use rand::Rng;

/// A uniform draw in the open interval (0, 1).
#[inline]
fn open01<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    loop {
        let u: f64 = rng.random();
        if u > 0.0 {
            return u;
        }
    }
}

/// A standard normal draw (Box–Muller; one of the pair is used).
fn normal<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    let u1 = open01(rng);
    let u2: f64 = rng.random();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// A Gamma(`alpha`, 1) draw, `alpha > 0`, by Marsaglia and Tsang's method (with the
/// `U^(1/alpha)` boost for `alpha < 1`).
pub(crate) fn gamma<R: Rng + ?Sized>(alpha: f64, rng: &mut R) -> f64 {
    if alpha < 1.0 {
        let boost = open01(rng).powf(1.0 / alpha);
        return gamma(alpha + 1.0, rng) * boost;
    }
    let d = alpha - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = normal(rng);
        let v = 1.0 + c * x;
        if v <= 0.0 {
            continue;
        }
        let v = v * v * v;
        let u = open01(rng);
        if u < 1.0 - 0.0331 * x * x * x * x || u.ln() < 0.5 * x * x + d * (1.0 - v + v.ln()) {
            return d * v;
        }
    }
}

/// Fills `out` with a draw from the symmetric Dirichlet(`alpha`) distribution.
pub(crate) fn dirichlet<R: Rng + ?Sized>(alpha: f32, out: &mut [f32], rng: &mut R) {
    let mut sum = 0.0f64;
    let mut draws = [0.0f64; 6];
    for d in draws.iter_mut().take(out.len()) {
        *d = gamma(alpha as f64, rng);
        sum += *d;
    }
    let n = out.len();
    for (o, d) in out.iter_mut().zip(draws) {
        *o = if sum > 0.0 {
            (d / sum) as f32
        } else {
            1.0 / n as f32
        };
    }
}

/// A standard Gumbel draw: `-ln(-ln U)`.
pub(crate) fn gumbel<R: Rng + ?Sized>(rng: &mut R) -> f32 {
    let u = open01(rng);
    (-(-u.ln()).ln()) as f32
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand::rngs::SmallRng;

    #[test]
    fn gamma_has_the_right_mean_and_variance() {
        let mut rng = SmallRng::seed_from_u64(1);
        for alpha in [0.3, 1.0, 2.5] {
            let n = 40_000;
            let xs: Vec<f64> = (0..n).map(|_| gamma(alpha, &mut rng)).collect();
            let mean = xs.iter().sum::<f64>() / n as f64;
            let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n as f64;
            assert!(
                (mean - alpha).abs() < 0.05 * alpha.max(1.0),
                "{alpha}: mean {mean}"
            );
            assert!(
                (var - alpha).abs() < 0.1 * alpha.max(1.0),
                "{alpha}: var {var}"
            );
        }
    }

    #[test]
    fn dirichlet_sums_to_one() {
        let mut rng = SmallRng::seed_from_u64(2);
        let mut out = [0.0f32; 4];
        for _ in 0..100 {
            dirichlet(1.0, &mut out, &mut rng);
            let s: f32 = out.iter().sum();
            assert!((s - 1.0).abs() < 1e-5);
            assert!(out.iter().all(|&x| x >= 0.0));
        }
    }

    #[test]
    fn gumbel_has_the_euler_mascheroni_mean() {
        let mut rng = SmallRng::seed_from_u64(3);
        let n = 40_000;
        let mean = (0..n).map(|_| gumbel(&mut rng) as f64).sum::<f64>() / n as f64;
        assert!((mean - 0.5772).abs() < 0.03, "mean {mean}");
    }
}
