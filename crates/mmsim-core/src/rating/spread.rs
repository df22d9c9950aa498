//! The spread of a ladder's settled ratings, kept as the ladder's games move
//! them, so that a rating system can read a teammate's or opponent's rating
//! as the skill expected of it (TrueSkill's `shrink_others`) without the
//! engine recounting every player after every match.

use crate::model::Rating;

/// Count, sum and sum of squares of the ratings that have played at least
/// `settled_games` games on one ladder: its settled players.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LadderSpread {
    settled_games: u32,
    count: u64,
    sum: f64,
    sum_sq: f64,
}

impl LadderSpread {
    /// The spread of `ratings`, counting those with `settled_games` games
    /// or more.
    pub fn of<'a>(settled_games: u32, ratings: impl IntoIterator<Item = &'a Rating>) -> Self {
        let mut spread = LadderSpread {
            settled_games,
            ..LadderSpread::default()
        };
        for r in ratings {
            spread.add(r, 1.0);
        }
        spread
    }

    fn add(&mut self, r: &Rating, sign: f64) {
        if r.games >= self.settled_games {
            if sign > 0.0 {
                self.count += 1;
            } else {
                self.count -= 1;
            }
            self.sum += sign * r.value;
            self.sum_sq += sign * r.value * r.value;
        }
    }

    /// A rating moved from `old` to `new` (a match rated it).
    pub fn moved(&mut self, old: &Rating, new: &Rating) {
        self.add(old, -1.0);
        self.add(new, 1.0);
    }

    /// How many ratings are settled.
    pub fn settled(&self) -> u64 {
        self.count
    }

    /// Mean and (population) variance of the settled ratings; `None` with
    /// fewer than two.
    pub fn mean_variance(&self) -> Option<(f64, f64)> {
        if self.count < 2 {
            return None;
        }
        let n = self.count as f64;
        let mean = self.sum / n;
        Some((mean, (self.sum_sq / n - mean * mean).max(0.0)))
    }

    /// The skill expected of a settled player rated `value`, if the
    /// ladder's ratings are unbiased guesses at skills that spread with
    /// standard deviation `skill_sd`: the regression of skill on rating,
    /// mean + (value − mean)·skill_sd² / variance. A ladder wider than the
    /// skills reads its players nearer its mean, a narrower one farther.
    /// `value` itself when the ladder has no spread yet.
    pub fn expected_skill(&self, value: f64, skill_sd: f64) -> f64 {
        match self.mean_variance() {
            Some((mean, variance)) if variance > 0.0 => {
                mean + (value - mean) * skill_sd * skill_sd / variance
            }
            _ => value,
        }
    }

    /// Whether a rating counts among the settled.
    pub fn is_settled(&self, r: &Rating) -> bool {
        r.games >= self.settled_games
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn r(value: f64, games: u32) -> Rating {
        Rating {
            games,
            ..Rating::new(value, 100.0, 0.0)
        }
    }

    proptest! {
        /// Moving ratings one at a time keeps the spread the recount of
        /// the ratings as they end.
        #[test]
        fn moves_keep_the_recount(
            start in prop::collection::vec((500.0f64..4000.0, 0u32..20), 2..40),
            moves in prop::collection::vec((0usize..40, -300.0f64..300.0), 0..200),
        ) {
            let mut ratings: Vec<Rating> = start.iter().map(|&(v, g)| r(v, g)).collect();
            let mut spread = LadderSpread::of(10, &ratings);
            for (i, d) in moves {
                let i = i % ratings.len();
                let old = ratings[i];
                let new = Rating { value: old.value + d, games: old.games + 1, ..old };
                spread.moved(&old, &new);
                ratings[i] = new;
            }
            let recount = LadderSpread::of(10, &ratings);
            prop_assert_eq!(spread.settled(), recount.settled());
            match (spread.mean_variance(), recount.mean_variance()) {
                (Some((m, v)), Some((m2, v2))) => {
                    prop_assert!((m - m2).abs() < 1e-6, "{} {}", m, m2);
                    prop_assert!((v - v2).abs() < 1e-3 * v2.max(1.0), "{} {}", v, v2);
                }
                (a, b) => prop_assert_eq!(a, b),
            }
        }
    }

    /// Worked by hand: settled ratings 1000, 2000, 3000 (mean 2000,
    /// variance 2/3·10⁶); a skill sd of 500 reads 3000 as
    /// 2000 + 1000·250000/666667 = 2375 and leaves the mean where it is.
    #[test]
    fn a_wide_ladder_reads_its_players_nearer_its_mean() {
        let ratings = [r(1000.0, 10), r(2000.0, 12), r(3000.0, 30), r(9000.0, 3)];
        let spread = LadderSpread::of(10, &ratings);
        assert_eq!(spread.settled(), 3);
        assert!((spread.expected_skill(3000.0, 500.0) - 2375.0).abs() < 1e-9);
        assert!((spread.expected_skill(2000.0, 500.0) - 2000.0).abs() < 1e-9);
        // A narrower ladder (skill sd 1000 against a rating sd of 816)
        // reads its players farther out: 2000 + 1000·1.5.
        assert!((spread.expected_skill(3000.0, 1000.0) - 3500.0).abs() < 1e-9);
        assert_eq!(
            LadderSpread::of(10, &ratings[3..]).expected_skill(42.0, 500.0),
            42.0
        );
    }
}
