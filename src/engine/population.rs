//! Drawing the players of a run: hidden true skill from the scenario's
//! distribution, everyone starting at the rating system's initial rating.

use crate::model::{Player, PlayerId, Rating};
use crate::scenario::{SkillDist, DOTA_MMR_TABLE};
use rand::Rng;
use rand_distr::{Distribution, Normal};
use rand_pcg::Pcg64;

pub fn generate(size: u32, dist: &SkillDist, initial: Rating, rng: &mut Pcg64) -> Vec<Player> {
    let mut draw = skill_sampler(dist);
    (0..size)
        .map(|i| Player::new(PlayerId(i), draw(rng), initial))
        .collect()
}

/// A sampler of true skill for a distribution the scenario validated.
pub fn skill_sampler(dist: &SkillDist) -> Box<dyn FnMut(&mut Pcg64) -> f64> {
    match dist {
        &SkillDist::Normal { mean, sd, min, max } => {
            let normal = Normal::new(mean, sd).expect("validated sd > 0");
            let (lo, hi) = (
                min.unwrap_or(f64::NEG_INFINITY),
                max.unwrap_or(f64::INFINITY),
            );
            Box::new(move |rng| {
                // Redraw rather than clamp, so no mass piles up on the bounds;
                // validation keeps the mean near [lo, hi], so this ends fast.
                for _ in 0..1000 {
                    let x = normal.sample(rng);
                    if (lo..=hi).contains(&x) {
                        return x;
                    }
                }
                mean.clamp(lo, hi)
            })
        }
        SkillDist::Quantiles { table } => {
            let table = table.clone();
            Box::new(move |rng| inverse_cdf(&table, rng.random()))
        }
        SkillDist::DotaMmr => Box::new(|rng| inverse_cdf(&DOTA_MMR_TABLE, rng.random())),
    }
}

/// Piecewise-linear inverse CDF through the table's points, extended to
/// probabilities 0 and 1 with the slopes of the first and last segments.
pub fn inverse_cdf(table: &[[f64; 2]], u: f64) -> f64 {
    let n = table.len();
    let seg = |a: [f64; 2], b: [f64; 2], p: f64| a[1] + (b[1] - a[1]) * (p - a[0]) / (b[0] - a[0]);
    if u <= table[0][0] {
        return seg(table[0], table[1], u);
    }
    if u >= table[n - 1][0] {
        return seg(table[n - 2], table[n - 1], u);
    }
    let i = table.partition_point(|row| row[0] <= u);
    seg(table[i - 1], table[i], u)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::streams::{stream, Stream};

    #[test]
    fn inverse_cdf_hits_the_table_and_interpolates() {
        let t = &DOTA_MMR_TABLE;
        assert_eq!(inverse_cdf(t, 0.5), 2250.0);
        assert_eq!(inverse_cdf(t, 0.99), 4100.0);
        assert!((inverse_cdf(t, 0.375) - 2125.0).abs() < 1e-9);
        // Extended with the first segment's slope (400 per 5%) down to p = 0.
        assert!((inverse_cdf(t, 0.0) - 700.0).abs() < 1e-9);
        assert!((inverse_cdf(t, 1.0) - 4150.0).abs() < 1e-9);
    }

    #[test]
    fn sampled_dota_population_reproduces_the_percentiles() {
        let mut rng = stream(3, Stream::Population);
        let mut skills: Vec<f64> = (0..50_000)
            .map(|_| inverse_cdf(&DOTA_MMR_TABLE, rng.random()))
            .collect();
        skills.sort_by(f64::total_cmp);
        for [p, v] in DOTA_MMR_TABLE {
            let got = skills[(p * skills.len() as f64) as usize];
            // Steepest segment: 700 points per 5%; 50k draws put the
            // empirical quantile within ~0.3% of p, i.e. ~40 points.
            assert!((got - v).abs() < 60.0, "p{p}: {got} vs {v}");
        }
    }

    #[test]
    fn bounded_normal_stays_inside_its_bounds() {
        let dist = SkillDist::Normal {
            mean: 1500.0,
            sd: 500.0,
            min: Some(0.0),
            max: Some(3000.0),
        };
        let mut rng = stream(1, Stream::Population);
        let players = generate(20_000, &dist, Rating::new(1500.0, 0.0, 0.0), &mut rng);
        assert!(players
            .iter()
            .all(|p| (0.0..=3000.0).contains(&p.true_skill)));
        let mean = players.iter().map(|p| p.true_skill).sum::<f64>() / 20_000.0;
        assert!((mean - 1500.0).abs() < 15.0, "{mean}");
    }
}
