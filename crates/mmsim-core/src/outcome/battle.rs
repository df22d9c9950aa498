//! Team battles fought exchange by exchange, so every match reports how many
//! of the winners survived: the landslide histogram of the Armored Warfare
//! "Matchmaking 2.0" post (15v15, 28,000 matches: 7 to 9 survivors typical,
//! 10 or more in 28%).
//!
//! # The process
//!
//! Each vehicle has [`BattleParams::hit_points`] hit points. A battle is a run
//! of exchanges; the side that loses an exchange loses one hit point. Both
//! sides focus their fire, so damage piles onto one vehicle until it is
//! destroyed before the next one is hit. A side's state is then just its hit
//! points left, `u`, and its living vehicles are `ceil(u / hit_points)`. Team 0
//! wins an exchange with probability
//!
//! ```text
//! P = w0 / (w0 + w1),   w0 = u0^snowball * 10^edge,   w1 = u1^snowball
//! edge = skill_weight * (strength0 - strength1) / scale     (clamped to +-3)
//! ```
//!
//! so a side ahead in numbers and health wins more exchanges, more so as the
//! gap grows (a stochastic Lanchester square law when `snowball = 1`; above 1
//! the snowball is stronger), and so does the more skilled side. The battle
//! ends when one side has no hit points left.
//!
//! # The landslide shape and which parameters give it
//!
//! Between equal teams the exact survivors distribution (computed by
//! [`Battle::distribution`]) depends only on `hit_points` and `snowball`.
//! The defaults `hit_points = 2`, `snowball = 1.3` give, for 15v15, a mode of 8
//! survivors and 27.8% of battles won with 10 or more, against the post's
//! 7 to 9 and 28%. Nearby settings that also fit: `hit_points = 3,
//! snowball = 1.6` (mode 9, 28.8%) and `hit_points = 1, snowball = 0.9` (mode 8,
//! 28.6%). More snowball or fewer hit points give more landslides.
//!
//! # Why the winner is drawn first
//!
//! The winner comes from the logistic model (the same draw the plain model
//! makes), and the battle is then fought conditioned on that winner, so every
//! battle ends with the drawn winner on top, the winner follows the logistic
//! model exactly whatever the battle parameters, and upsets still look like
//! upsets: an underdog's win is a close, bloody one. Tying the battle's own
//! win probability to the logistic one instead would need a search for
//! `edge` in every match.
//!
//! Conditioning is exact and done in two stages. First up to 8 unconditioned
//! battles are fought and the first one the drawn winner wins is kept
//! (rejection sampling: cheap, a few dozen multiplications an exchange). If
//! none is, the battle is fought under Doob's h-transform: each exchange goes
//! to team 0 with probability `P * h(u0, u1 - 1) / h(u0, u1)`, where `h` is
//! the chance that the drawn winner goes on to win from there, computed by a
//! backward pass over the `(u0 + 1) * (u1 + 1)` states. Either stage yields a
//! draw from the battle's law given its winner, so the mixture does too; the
//! second stage bounds the cost when the drawn winner is a long shot for the
//! battle. `skill_weight = 0.2` makes the unconditioned 15v15 battle's win
//! chance track the logistic one within 2 points up to a 400-point gap (0.537
//! vs 0.536 at 25 points, 0.644 vs 0.640 at 100, 0.770 vs 0.760 at 200, 0.930
//! vs 0.909 at 400), so the first stage nearly always succeeds within two
//! tries.

use crate::model::ParamError;
use rand::Rng;
use rand_pcg::Pcg64;
use serde::{Deserialize, Serialize};

/// The `[outcome.battle]` table: survivors on the winning team of every two-team match.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BattleParams {
    /// Hit points of a vehicle, counted in exchanges lost: a vehicle is
    /// destroyed by the `hit_points`-th exchange its side loses while it is the
    /// target. Higher means battles of attrition with more damaged survivors.
    pub hit_points: u32,
    /// Snowball exponent: a side's weight in each exchange is its hit points
    /// left raised to this power. 0: exchanges are coin flips whatever the
    /// numbers; 1: Lanchester's square law; above 1: a lead snowballs harder.
    pub snowball: f64,
    /// How much the skill gap tilts each exchange: the more skilled team's odds
    /// of winning an exchange are multiplied by
    /// `10^(skill_weight * gap / scale)`, with `gap` the team-strength
    /// difference and `scale` the logistic scale. 0: skill decides only the
    /// winner, not how the battle goes.
    pub skill_weight: f64,
}

impl Default for BattleParams {
    fn default() -> Self {
        BattleParams {
            hit_points: 2,
            snowball: 1.3,
            skill_weight: 0.2,
        }
    }
}

/// Largest accepted `hit_points`: the exact conditioning visits
/// `(team size * hit_points)^2` states per battle.
const MAX_HIT_POINTS: u32 = 10;
const MAX_SNOWBALL: f64 = 8.0;
const MAX_SKILL_WEIGHT: f64 = 10.0;
/// Cap on |edge| in log10 odds per exchange: keeps every conditional
/// probability far from f64 underflow in battles of realistic size; beyond
/// it the logistic model already makes the outcome certain.
const MAX_EDGE: f64 = 3.0;
/// Unconditioned battles tried before falling back to the h-transform.
const FREE_TRIES: u32 = 8;
/// Hit-point weights are tabulated up to this many hit points a side; larger
/// sides compute them on the fly.
const TABLE_UNITS: usize = 256;

impl BattleParams {
    /// Checks the table; keys are relative to `[outcome]` (`battle.snowball`, ...).
    pub fn validate(&self) -> Result<(), ParamError> {
        if !(1..=MAX_HIT_POINTS).contains(&self.hit_points) {
            return Err(ParamError::new(
                "battle.hit_points",
                format!(
                    "must be a whole number from 1 to {MAX_HIT_POINTS}, got {}",
                    self.hit_points
                ),
            ));
        }
        if !(self.snowball.is_finite() && (0.0..=MAX_SNOWBALL).contains(&self.snowball)) {
            return Err(ParamError::new(
                "battle.snowball",
                format!(
                    "must be a number from 0 to {MAX_SNOWBALL} (1 is Lanchester's square law), got {}",
                    self.snowball
                ),
            ));
        }
        if !(self.skill_weight.is_finite() && (0.0..=MAX_SKILL_WEIGHT).contains(&self.skill_weight))
        {
            return Err(ParamError::new(
                "battle.skill_weight",
                format!(
                    "must be a number from 0 to {MAX_SKILL_WEIGHT}, got {}",
                    self.skill_weight
                ),
            ));
        }
        Ok(())
    }
}

/// The exact outcome law of one battle, from [`Battle::distribution`].
#[derive(Clone, Debug, PartialEq)]
pub struct BattleDistribution {
    /// Probability that team 0 wins the unconditioned battle.
    pub p_team0: f64,
    /// `[k]`: probability of `k` survivors given that team 0 wins.
    pub if_team0_wins: Vec<f64>,
    /// `[k]`: probability of `k` survivors given that team 1 wins.
    pub if_team1_wins: Vec<f64>,
}

/// The battle model of a scenario, ready to fight.
#[derive(Clone, Debug)]
pub struct Battle {
    params: BattleParams,
    /// `u^snowball` for `u` hit points left.
    weights: Vec<f64>,
}

impl Battle {
    /// A battle model with these parameters (validated).
    pub fn new(params: BattleParams) -> Self {
        let weights = (0..=TABLE_UNITS)
            .map(|u| (u as f64).powf(params.snowball))
            .collect();
        Battle { params, weights }
    }

    /// The parameters it was built with.
    pub fn params(&self) -> &BattleParams {
        &self.params
    }

    fn weight(&self, units: usize) -> f64 {
        match self.weights.get(units) {
            Some(&w) => w,
            None => (units as f64).powf(self.params.snowball),
        }
    }

    /// The per-exchange edge of team 0, in log10 odds, for a team-strength
    /// difference `strength0 - strength1` on the logistic `scale`.
    pub fn exchange_edge(&self, strength_gap: f64, scale: f64) -> f64 {
        (self.params.skill_weight * strength_gap / scale).clamp(-MAX_EDGE, MAX_EDGE)
    }

    /// Fights a battle of `size0` against `size1` vehicles that `team0_wins`
    /// decides, and returns the number of vehicles left on the winning team.
    /// `edge` is team 0's per-exchange edge (see [`Self::exchange_edge`]).
    pub fn fight(
        &self,
        size0: usize,
        size1: usize,
        edge: f64,
        team0_wins: bool,
        rng: &mut Pcg64,
    ) -> u32 {
        self.fight_with(size0, size1, edge, team0_wins, FREE_TRIES, rng)
    }

    fn fight_with(
        &self,
        size0: usize,
        size1: usize,
        edge: f64,
        team0_wins: bool,
        free_tries: u32,
        rng: &mut Pcg64,
    ) -> u32 {
        let hp = self.params.hit_points as usize;
        let (units0, units1) = (size0 * hp, size1 * hp);
        let winner_units = if team0_wins { units0 } else { units1 };
        let loser_units = if team0_wins { units1 } else { units0 };
        if winner_units == 0 || loser_units == 0 {
            // Nobody to fight (or to survive): the roster decides.
            return winner_units.div_ceil(hp) as u32;
        }
        let odds0 = 10f64.powf(edge.clamp(-MAX_EDGE, MAX_EDGE));
        for _ in 0..free_tries {
            let (a, b) = self.run_free(units0, units1, odds0, rng);
            if (b == 0) == team0_wins {
                return if team0_wins { a } else { b }.div_ceil(hp) as u32;
            }
        }
        let (a, b) = self.run_conditioned(units0, units1, odds0, team0_wins, rng);
        if team0_wins { a } else { b }.div_ceil(hp) as u32
    }

    /// An unconditioned battle; returns the hit points left on each side.
    fn run_free(
        &self,
        units0: usize,
        units1: usize,
        odds0: f64,
        rng: &mut Pcg64,
    ) -> (usize, usize) {
        let (mut a, mut b) = (units0, units1);
        while a > 0 && b > 0 {
            let w0 = self.weight(a) * odds0;
            let w1 = self.weight(b);
            if rng.random::<f64>() * (w0 + w1) < w0 {
                b -= 1;
            } else {
                a -= 1;
            }
        }
        (a, b)
    }

    /// A battle conditioned on its winner by the h-transform.
    fn run_conditioned(
        &self,
        units0: usize,
        units1: usize,
        odds0: f64,
        team0_wins: bool,
        rng: &mut Pcg64,
    ) -> (usize, usize) {
        let h = self.win_chances(units0, units1, odds0, team0_wins);
        let cols = units1 + 1;
        let (mut a, mut b) = (units0, units1);
        while a > 0 && b > 0 {
            let to0 = self.weight(a) * odds0 * h[a * cols + b - 1];
            let to1 = self.weight(b) * h[(a - 1) * cols + b];
            let total = to0 + to1;
            let team0_takes_it = if total > 0.0 {
                rng.random::<f64>() * total < to0
            } else {
                // Both continuations underflowed: only possible past the
                // edge cap in huge battles; let the drawn winner press on.
                team0_wins
            };
            if team0_takes_it {
                b -= 1;
            } else {
                a -= 1;
            }
        }
        (a, b)
    }

    /// `h[a * (units1 + 1) + b]`: chance that the drawn winner wins from team 0
    /// holding `a` hit points and team 1 holding `b`.
    fn win_chances(&self, units0: usize, units1: usize, odds0: f64, team0_wins: bool) -> Vec<f64> {
        let cols = units1 + 1;
        let mut h = vec![0.0; (units0 + 1) * cols];
        let (won0, won1) = if team0_wins { (1.0, 0.0) } else { (0.0, 1.0) };
        for a in 1..=units0 {
            h[a * cols] = won0;
        }
        h[1..cols].fill(won1);
        let w1: Vec<f64> = (0..cols).map(|b| self.weight(b)).collect();
        let mut p0 = vec![0.0; cols];
        for a in 1..=units0 {
            let w0 = self.weight(a) * odds0;
            // The divisions stay out of the recurrence's dependency chain so
            // they can run in parallel.
            for (p, &w) in p0.iter_mut().zip(&w1) {
                *p = w0 / (w0 + w);
            }
            let (done, rest) = h.split_at_mut(a * cols);
            let below = &done[done.len() - cols..];
            let row = &mut rest[..cols];
            for b in 1..cols {
                row[b] = below[b] + p0[b] * (row[b - 1] - below[b]);
            }
        }
        h
    }

    /// The exact law of an unconditioned battle: who wins and how many of
    /// the winners survive. For documentation, calibration and tests: it
    /// costs the same as one `fight`.
    pub fn distribution(&self, size0: usize, size1: usize, edge: f64) -> BattleDistribution {
        let hp = self.params.hit_points as usize;
        let (units0, units1) = (size0 * hp, size1 * hp);
        let odds0 = 10f64.powf(edge.clamp(-MAX_EDGE, MAX_EDGE));
        let cols = units1 + 1;
        let mut mass = vec![0.0; (units0 + 1) * cols];
        mass[units0 * cols + units1] = 1.0;
        let mut won0 = vec![0.0; size0 + 1];
        let mut won1 = vec![0.0; size1 + 1];
        // Every exchange removes one hit point, so sweeping a + b downwards
        // visits each state after all the states that lead into it.
        for total in (0..=units0 + units1).rev() {
            for a in total.saturating_sub(units1)..=total.min(units0) {
                let b = total - a;
                let m = mass[a * cols + b];
                if m == 0.0 {
                    continue;
                }
                if b == 0 {
                    won0[a.div_ceil(hp)] += m;
                } else if a == 0 {
                    won1[b.div_ceil(hp)] += m;
                } else {
                    let w0 = self.weight(a) * odds0;
                    let p = w0 / (w0 + self.weight(b));
                    mass[a * cols + b - 1] += m * p;
                    mass[(a - 1) * cols + b] += m * (1.0 - p);
                }
            }
        }
        let p0: f64 = won0.iter().sum();
        let p1: f64 = won1.iter().sum();
        let normalise = |v: Vec<f64>, total: f64| -> Vec<f64> {
            if total > 0.0 {
                v.into_iter().map(|x| x / total).collect()
            } else {
                v
            }
        };
        BattleDistribution {
            p_team0: p0 / (p0 + p1),
            if_team0_wins: normalise(won0, p0),
            if_team1_wins: normalise(won1, p1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn sample_hist(
        battle: &Battle,
        sizes: (usize, usize),
        edge: f64,
        team0_wins: bool,
        free_tries: u32,
    ) -> Vec<f64> {
        let mut rng = Pcg64::seed_from_u64(21);
        let n = 20_000;
        let winners = if team0_wins { sizes.0 } else { sizes.1 };
        let mut counts = vec![0usize; winners + 1];
        for _ in 0..n {
            let survivors =
                battle.fight_with(sizes.0, sizes.1, edge, team0_wins, free_tries, &mut rng);
            counts[survivors as usize] += 1;
        }
        counts.into_iter().map(|c| c as f64 / n as f64).collect()
    }

    #[test]
    fn defaults_reproduce_the_armored_warfare_landslide_shape_exactly() {
        let d = Battle::new(BattleParams::default()).distribution(15, 15, 0.0);
        assert!((d.p_team0 - 0.5).abs() < 1e-12);
        for (a, b) in d.if_team0_wins.iter().zip(&d.if_team1_wins) {
            assert!(
                (a - b).abs() < 1e-12,
                "even teams are symmetric: {a} vs {b}"
            );
        }
        let mode = (0..=15)
            .max_by(|&i, &j| d.if_team0_wins[i].total_cmp(&d.if_team0_wins[j]))
            .unwrap();
        let ten_plus: f64 = d.if_team0_wins[10..].iter().sum();
        assert_eq!(mode, 8);
        assert!((ten_plus - 0.278).abs() < 0.001, "{ten_plus}");
        assert_eq!(d.if_team0_wins[0], 0.0);
    }

    #[test]
    fn square_law_with_one_hit_point_matches_a_hand_computation() {
        // 2v1, one hit point, snowball 1: team 0 wins the first exchange with
        // 2/3 (done, 2 survivors); else 1v1 and a coin flip (1 survivor).
        let battle = Battle::new(BattleParams {
            hit_points: 1,
            snowball: 1.0,
            skill_weight: 0.0,
        });
        let d = battle.distribution(2, 1, 0.0);
        assert!((d.p_team0 - (2.0 / 3.0 + 1.0 / 6.0)).abs() < 1e-12);
        assert!((d.if_team0_wins[2] - 0.8).abs() < 1e-12);
        assert!((d.if_team0_wins[1] - 0.2).abs() < 1e-12);
        assert!((d.if_team1_wins[1] - 1.0).abs() < 1e-12);
    }

    /// Both conditioning stages against the forward exact law: a mistake in
    /// either shows as a gap larger than sampling noise. Rejection alone
    /// (unbounded tries), the h-transform alone (no tries) and the mix.
    #[test]
    fn conditioned_fights_follow_the_exact_conditional_law() {
        let battle = Battle::new(BattleParams::default());
        for (sizes, edge, team0_wins) in [
            ((15, 15), 0.0, true),
            ((15, 15), 0.15, false),
            ((15, 15), -0.3, false),
            ((5, 7), 0.1, true),
        ] {
            let exact = battle.distribution(sizes.0, sizes.1, edge);
            let want = if team0_wins {
                &exact.if_team0_wins
            } else {
                &exact.if_team1_wins
            };
            for free_tries in [0, FREE_TRIES, u32::MAX] {
                let got = sample_hist(&battle, sizes, edge, team0_wins, free_tries);
                for (k, (&g, &w)) in got.iter().zip(want).enumerate() {
                    let se = (w * (1.0 - w) / 20_000.0).sqrt();
                    assert!(
                        (g - w).abs() <= 4.5 * se + 1e-9,
                        "{sizes:?} edge {edge} team0_wins {team0_wins} tries {free_tries}: \
                         {k} survivors {g} vs {w}"
                    );
                }
            }
        }
    }

    #[test]
    fn favourites_win_bigger_and_upsets_are_close() {
        let battle = Battle::new(BattleParams::default());
        let mean = |v: &[f64]| v.iter().enumerate().map(|(k, p)| k as f64 * p).sum::<f64>();
        let even = battle.distribution(15, 15, 0.0);
        let tilted = battle.distribution(15, 15, battle.exchange_edge(200.0, 400.0));
        assert!(mean(&tilted.if_team0_wins) > mean(&even.if_team0_wins) + 0.5);
        assert!(mean(&tilted.if_team1_wins) < mean(&even.if_team1_wins) - 0.5);
        assert!(
            tilted.p_team0 > 0.75 && tilted.p_team0 < 0.8,
            "{}",
            tilted.p_team0
        );
    }

    #[test]
    fn default_skill_weight_keeps_the_battle_close_to_the_logistic_model() {
        let battle = Battle::new(BattleParams::default());
        for gap in [25.0, 100.0, 200.0, 400.0] {
            let p = 1.0 / (1.0 + 10f64.powf(-gap / 400.0));
            let q = battle
                .distribution(15, 15, battle.exchange_edge(gap, 400.0))
                .p_team0;
            assert!(
                (q - p).abs() < 0.025,
                "gap {gap}: battle {q} vs logistic {p}"
            );
        }
    }

    #[test]
    fn degenerate_rosters_and_extreme_edges_still_end_with_the_drawn_winner() {
        let battle = Battle::new(BattleParams::default());
        let mut rng = Pcg64::seed_from_u64(2);
        assert_eq!(battle.fight(3, 0, 0.0, true, &mut rng), 3);
        assert_eq!(battle.fight(0, 3, 0.0, true, &mut rng), 0);
        assert_eq!(battle.fight(1, 1, 0.0, false, &mut rng), 1);
        for _ in 0..200 {
            let s = battle.fight(30, 30, 50.0, false, &mut rng);
            assert!((1..=30).contains(&s));
        }
        let s = battle.fight(200, 200, -3.0, true, &mut rng);
        assert!((1..=200).contains(&s));
    }

    #[test]
    fn validation_names_the_key() {
        let ok = BattleParams::default();
        assert!(ok.validate().is_ok());
        let key = |p: BattleParams| p.validate().unwrap_err().key;
        assert_eq!(
            key(BattleParams {
                hit_points: 0,
                ..ok.clone()
            }),
            "battle.hit_points"
        );
        assert_eq!(
            key(BattleParams {
                snowball: -1.0,
                ..ok.clone()
            }),
            "battle.snowball"
        );
        assert_eq!(
            key(BattleParams {
                skill_weight: f64::INFINITY,
                ..ok
            }),
            "battle.skill_weight"
        );
    }
}
