//! The random draws the search needs, from `rand_distr`: Dirichlet root noise for PUCT and
//! Gumbel noise for Gumbel-top-k at the root.

use rand::Rng;
use rand_distr::{Dirichlet, Distribution, Gumbel};

/// Fills `out` (at most six entries, one per legal move) with a draw from the symmetric
/// Dirichlet(`alpha`) distribution; `alpha` is finite and positive (checked by
/// [`super::MctsConfig::validate`]).
pub(crate) fn dirichlet<R: Rng + ?Sized>(alpha: f32, out: &mut [f32], rng: &mut R) {
    match out.len() {
        0 => {}
        // The Dirichlet distribution over one outcome is that outcome.
        1 => out[0] = 1.0,
        2 => fill::<2, R>(alpha, out, rng),
        3 => fill::<3, R>(alpha, out, rng),
        4 => fill::<4, R>(alpha, out, rng),
        5 => fill::<5, R>(alpha, out, rng),
        _ => fill::<6, R>(alpha, &mut out[..6], rng),
    }
}

/// One Dirichlet draw over `N` outcomes into `out` (of length `N`).
fn fill<const N: usize, R: Rng + ?Sized>(alpha: f32, out: &mut [f32], rng: &mut R) {
    match Dirichlet::new([f64::from(alpha); N]) {
        Ok(d) => {
            let draw: [f64; N] = d.sample(rng);
            for (o, x) in out.iter_mut().zip(draw) {
                *o = x as f32;
            }
        }
        // `new` fails only for N < 2 or an alpha that is not finite and positive, both
        // excluded above and by the config's validation.
        Err(e) => unreachable!("Dirichlet({alpha}) over {N} moves: {e}"),
    }
}

/// A standard Gumbel draw (location 0, scale 1). The draw is infinite with probability 2^-53;
/// such a draw is clamped to the largest finite `f32`.
pub(crate) fn gumbel<R: Rng + ?Sized>(rng: &mut R) -> f32 {
    match Gumbel::new(0.0f64, 1.0) {
        Ok(g) => (g.sample(rng) as f32).min(f32::MAX),
        // Location 0 and scale 1 are valid parameters.
        Err(e) => unreachable!("the standard Gumbel distribution: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand::rngs::SmallRng;

    #[test]
    fn dirichlet_marginals_have_the_right_mean_and_variance() {
        // Each marginal of a symmetric Dirichlet(alpha) over k outcomes is
        // Beta(alpha, (k - 1) alpha): mean 1/k, variance (k - 1) / (k^2 (k alpha + 1)).
        let mut rng = SmallRng::seed_from_u64(1);
        for (alpha, k) in [(0.3f32, 6usize), (1.0, 4), (2.5, 2), (0.03, 3)] {
            let n = 20_000;
            let mut out = [0.0f32; 6];
            let xs: Vec<f64> = (0..n)
                .map(|_| {
                    dirichlet(alpha, &mut out[..k], &mut rng);
                    out[0] as f64
                })
                .collect();
            let mean = xs.iter().sum::<f64>() / n as f64;
            let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n as f64;
            let (a, kf) = (alpha as f64, k as f64);
            let want_var = (kf - 1.0) / (kf * kf * (kf * a + 1.0));
            assert!((mean - 1.0 / kf).abs() < 0.02, "{alpha},{k}: mean {mean}");
            assert!(
                (var - want_var).abs() < 0.1 * want_var,
                "{alpha},{k}: var {var}, want {want_var}"
            );
        }
    }

    #[test]
    fn dirichlet_sums_to_one() {
        let mut rng = SmallRng::seed_from_u64(2);
        for k in 1..=6 {
            let mut out = [0.0f32; 6];
            for _ in 0..100 {
                dirichlet(1.0, &mut out[..k], &mut rng);
                let s: f32 = out[..k].iter().sum();
                assert!((s - 1.0).abs() < 1e-5, "{k}: {out:?}");
                assert!(out[..k].iter().all(|&x| x >= 0.0));
                assert!(out[k..].iter().all(|&x| x == 0.0));
            }
        }
    }

    #[test]
    fn gumbel_has_the_euler_mascheroni_mean() {
        let mut rng = SmallRng::seed_from_u64(3);
        let n = 40_000;
        let xs: Vec<f64> = (0..n).map(|_| gumbel(&mut rng) as f64).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n as f64;
        assert!((mean - 0.5772).abs() < 0.03, "mean {mean}");
        // pi^2 / 6
        assert!((var - 1.6449).abs() < 0.08, "variance {var}");
    }
}
