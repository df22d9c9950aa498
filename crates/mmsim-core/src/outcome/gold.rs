//! Gold-difference timelines and the Dota balance measure, so analysts can
//! judge match closeness the way the Dota 2 matchmaking post does: by the area
//! under |gold difference| since the curve last crossed zero.
//!
//! # The process
//!
//! The gold difference `X(t)` (team 0 minus team 1, in gold; `t` in minutes)
//! follows the linear stochastic differential equation
//!
//! ```text
//! dX = (mu + kappa * X) dt + sigma dW,    X(0) = 0
//! ```
//!
//! `sigma` is [`GoldParams::volatility`]; `kappa` is [`GoldParams::snowball`]: a
//! lead of `L` gold adds `kappa * L` gold a minute to the expected gain, so
//! leads feed on themselves. The drift `mu` follows the teams' true-skill gap
//! through the logistic win probability `p`: it is set so that, unconditioned,
//! `P(X(T) > 0) = p` exactly at the final whistle `T`. Because the process is
//! Gaussian, that needs no search: `X(T)` is normal with mean `mu * G(T)` and
//! standard deviation `sigma * sqrt(V(T))` (formulas below), so
//! `mu = Phi^-1(p) * sigma * sqrt(V(T)) / G(T)`.
//!
//! # Why the winner is drawn first
//!
//! The match winner is drawn from the logistic model with the same random
//! number the plain logistic model uses, and the timeline is then drawn
//! conditioned on ending with that winner ahead: first `X(T)` from its normal
//! law truncated to the winner's side, then the path from 0 to `X(T)` as the
//! exact bridge of the process. Since the unconditioned process ends with
//! team 0 ahead with probability exactly `p`, this two-stage draw has exactly
//! the law of the unconditioned process; drawing the winner first buys two
//! things on top: turning the gold timeline on or off never changes who wins
//! (paired comparisons stay paired), and the sign of the final difference is
//! guaranteed rather than left to rounding.
//!
//! The bridge is sampled forward in one pass, without storing the path, so
//! `play` can fold the balance measure as the samples come and never allocate.
//!
//! # Formulas
//!
//! Over a step of length `d`: `X(t+d) = E(d) X(t) + mu G(d) + sigma sqrt(V(d)) Z`
//! with `E(d) = exp(kappa d)`, `G(d) = (exp(kappa d) - 1) / kappa`,
//! `V(d) = (exp(2 kappa d) - 1) / (2 kappa)` (both `d` when `kappa = 0`). Given
//! `X(t) = x` and the end value `X(T) = y`, the next sample at `t' = t + d1`
//! (with `d2 = T - t'` left) is normal with
//!
//! ```text
//! M    = E(d1) x + mu G(d1)                          (prior mean)
//! Q    = V(d2) + E(d2)^2 V(d1)                       (= V(T - t))
//! mean = M + V(d1) E(d2) / Q * (y - mu G(d2) - E(d2) M)
//! var  = sigma^2 V(d1) V(d2) / Q
//! ```

use crate::model::{HumanDuration, ParamError, SimDuration};
use rand::distr::Open01;
use rand::Rng;
use rand_distr::StandardNormal;
use rand_pcg::Pcg64;
use serde::{Deserialize, Serialize};
use statrs::function::erf::erfc_inv;

/// The `[outcome.gold]` table: a gold-difference timeline for every two-team match.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GoldParams {
    /// Time between samples of the gold difference (the last sample falls on
    /// the end of the match, so the last step may be shorter). Finer steps see
    /// more of the crossings the balance measure looks for.
    pub step: HumanDuration,
    /// Standard deviation, in gold, of the gold difference one minute into a
    /// game between equal teams without snowball; the noise grows with the
    /// square root of time.
    pub volatility: f64,
    /// Snowball rate per minute: a lead of L gold adds `snowball * L` gold a
    /// minute to the leader's expected gain (0.05: a lead grows about 5% a
    /// minute on its own). Negative values model catch-up mechanics.
    pub snowball: f64,
}

impl Default for GoldParams {
    fn default() -> Self {
        GoldParams {
            step: HumanDuration::from_secs(30),
            volatility: 600.0,
            snowball: 0.05,
        }
    }
}

/// Shortest step between samples: a 40-minute match at 1 ms is 2.4 million
/// samples, which made a run of a few thousand matches take half a minute.
const MIN_STEP: SimDuration = SimDuration::from_secs(1);
/// Largest |snowball| accepted, per minute.
const MAX_SNOWBALL: f64 = 1.0;
/// Largest |kappa * T| used in a match: exp(2 * 300) is still a finite f64,
/// so the bridge never overflows however long a match runs.
const MAX_KAPPA_T: f64 = 300.0;
/// The win probability is clamped to [P_MIN, 1 - P_MIN] before setting the
/// drift, so a certain winner still gives a finite drift.
const P_MIN: f64 = 1e-12;
/// Shortest timeline, in minutes: a zero-length match still gets a final
/// sample with the winner ahead.
const MIN_MINUTES: f64 = 1.0 / 60.0;

impl GoldParams {
    /// Checks the table; keys are relative to `[outcome]` (`gold.step`, ...).
    pub fn validate(&self) -> Result<(), ParamError> {
        if self.step.0 < MIN_STEP {
            return Err(ParamError::new(
                "gold.step",
                format!(
                    "must be at least 1s (for example \"30s\" or \"1m\"): a sample a second \
                     already sees every lead change a player could, and each match costs one \
                     sample a step; got {}",
                    self.step.0
                ),
            ));
        }
        if !(self.volatility.is_finite() && self.volatility > 0.0) {
            return Err(ParamError::new(
                "gold.volatility",
                format!(
                    "must be a number of gold above 0 (for example 600), got {}",
                    self.volatility
                ),
            ));
        }
        if !(self.snowball.is_finite() && self.snowball.abs() <= MAX_SNOWBALL) {
            return Err(ParamError::new(
                "gold.snowball",
                format!(
                    "must be a rate per minute between -{MAX_SNOWBALL} and {MAX_SNOWBALL} \
                     (for example 0.05), got {}",
                    self.snowball
                ),
            ));
        }
        Ok(())
    }
}

/// A sampled gold-difference timeline: `diff[i]` is team 0's gold minus team
/// 1's at `minutes[i]`. Starts at (0, 0) and ends at the match end.
#[derive(Clone, Debug, PartialEq)]
pub struct GoldTimeline {
    /// Sample times in minutes from the start: 0, step, 2 step, ..., end.
    pub minutes: Vec<f64>,
    /// Team 0's gold minus team 1's at each sample time, in gold.
    pub diff: Vec<f64>,
}

impl GoldTimeline {
    /// The Dota balance measure of this timeline, in gold-minutes.
    pub fn integral(&self) -> f64 {
        gold_integral(&self.minutes, &self.diff)
    }
}

/// The Dota balance measure: the time integral of |gold difference| from the
/// last time the difference was zero to the end of the match, in units of
/// `times` times `diffs` (gold-minutes for [`GoldTimeline`]).
///
/// The samples are joined by straight lines, and the integral is exact for
/// that piecewise-linear curve: where two neighbouring samples have opposite
/// signs the crossing is placed by linear interpolation,
/// `t* = t0 + (t1 - t0) * d0 / (d0 - d1)`, and only the triangle after it
/// counts; a sample that is exactly zero is itself the last zero. If the
/// difference is never zero and never changes sign, the integral runs from the
/// first sample. `times` must be increasing and as long as `diffs`.
pub fn gold_integral(times: &[f64], diffs: &[f64]) -> f64 {
    assert_eq!(
        times.len(),
        diffs.len(),
        "gold_integral needs one time per gold difference"
    );
    let mut acc = IntegralSinceZero::default();
    for (&t, &d) in times.iter().zip(diffs) {
        acc.push(t, d);
    }
    acc.value()
}

/// The balance measure folded one sample at a time, so a match can be scored
/// while its timeline is generated, without storing it.
#[derive(Clone, Copy, Debug, Default)]
struct IntegralSinceZero {
    last: Option<(f64, f64)>,
    area: f64,
}

impl IntegralSinceZero {
    fn push(&mut self, t: f64, d: f64) {
        if let Some((t0, d0)) = self.last {
            if d == 0.0 {
                self.area = 0.0;
            } else if (d0 < 0.0 && d > 0.0) || (d0 > 0.0 && d < 0.0) {
                let crossing = t0 + (t - t0) * d0 / (d0 - d);
                self.area = 0.5 * (t - crossing) * d.abs();
            } else {
                // Same sign, or rising from an exact zero: a trapezoid.
                self.area += 0.5 * (t - t0) * (d0.abs() + d.abs());
            }
        }
        self.last = Some((t, d));
    }

    fn value(&self) -> f64 {
        self.area
    }
}

/// Standard normal quantile, accurate far into both tails.
fn normal_quantile(p: f64) -> f64 {
    -std::f64::consts::SQRT_2 * erfc_inv(2.0 * p)
}

/// `(exp(k d) - 1) / k`, read as `d` when `k = 0`.
fn growth(kappa: f64, em1: f64, d: f64) -> f64 {
    if kappa == 0.0 {
        d
    } else {
        em1 / kappa
    }
}

/// `(exp(2 k d) - 1) / (2 k)` from `em1 = exp(k d) - 1`, read as `d` when `k = 0`.
fn variance(kappa: f64, em1: f64, d: f64) -> f64 {
    if kappa == 0.0 {
        d
    } else {
        em1 * (em1 + 2.0) / (2.0 * kappa)
    }
}

/// The gold process of a scenario, ready to sample.
#[derive(Clone, Debug)]
pub struct GoldProcess {
    params: GoldParams,
}

impl GoldProcess {
    /// A gold process with these parameters (validated).
    pub fn new(params: GoldParams) -> Self {
        GoldProcess { params }
    }

    /// The parameters it was built with.
    pub fn params(&self) -> &GoldParams {
        &self.params
    }

    /// Samples a timeline for a match of `duration` in which team 0 wins with
    /// probability `p_team0`, conditioned on the winner (`team0_wins`) being
    /// ahead at the end.
    pub fn sample_timeline(
        &self,
        p_team0: f64,
        team0_wins: bool,
        duration: SimDuration,
        rng: &mut Pcg64,
    ) -> GoldTimeline {
        let mut minutes = Vec::new();
        let mut diff = Vec::new();
        self.walk(p_team0, team0_wins, duration, rng, |t, d| {
            minutes.push(t);
            diff.push(d);
        });
        GoldTimeline { minutes, diff }
    }

    /// The balance measure of a freshly sampled timeline, without keeping the
    /// timeline; consumes the same random numbers as [`Self::sample_timeline`].
    pub fn sample_integral(
        &self,
        p_team0: f64,
        team0_wins: bool,
        duration: SimDuration,
        rng: &mut Pcg64,
    ) -> f64 {
        let mut acc = IntegralSinceZero::default();
        self.walk(p_team0, team0_wins, duration, rng, |t, d| acc.push(t, d));
        acc.value()
    }

    /// Generates the conditioned timeline and hands each sample to `visit`.
    fn walk(
        &self,
        p_team0: f64,
        team0_wins: bool,
        duration: SimDuration,
        rng: &mut Pcg64,
        mut visit: impl FnMut(f64, f64),
    ) {
        let end = (duration.as_secs_f64() / 60.0).max(MIN_MINUTES);
        let step = self.params.step.secs() / 60.0;
        let sigma = self.params.volatility;
        let bound = MAX_KAPPA_T / end;
        let kappa = self.params.snowball.clamp(-bound, bound);

        // The drift that makes P(X(T) > 0) = p for the unconditioned process.
        let p = p_team0.clamp(P_MIN, 1.0 - P_MIN);
        let z = normal_quantile(p);
        let em1_end = (kappa * end).exp_m1();
        let sd_end = sigma * variance(kappa, em1_end, end).sqrt();
        let mu = z * sd_end / growth(kappa, em1_end, end);

        // X(T) = sd_end * (z + q), q standard normal, truncated to the winner's
        // side by inverting the CDF on the small tail so extreme p stays exact.
        let v: f64 = rng.sample(Open01);
        let y = if team0_wins {
            sd_end * (z - normal_quantile(v * p))
        } else {
            sd_end * (z + normal_quantile(v * (1.0 - p)))
        };
        // Rounding can land exactly on zero when v is within 1e-16 of 1;
        // the winner must still end ahead.
        let y = match (team0_wins, y) {
            (true, y) if y <= 0.0 => f64::MIN_POSITIVE,
            (false, y) if y >= 0.0 => -f64::MIN_POSITIVE,
            (_, y) => y,
        };

        visit(0.0, 0.0);
        let steps = (end / step).ceil().max(1.0) as u64;
        let em1_step = (kappa * step).exp_m1();
        let e_step = 1.0 + em1_step;
        let g_step = growth(kappa, em1_step, step);
        let v_step = variance(kappa, em1_step, step);
        // Hot loop: one expm1, one division, one square root and one normal
        // draw per sample.
        let inv_kappa = if kappa == 0.0 { 0.0 } else { 1.0 / kappa };
        let mut x = 0.0;
        for k in 1..steps {
            let t = k as f64 * step;
            let left = end - t;
            let em1_left = (kappa * left).exp_m1();
            let e_left = 1.0 + em1_left;
            let (g_left, v_left) = if kappa == 0.0 {
                (left, left)
            } else {
                (
                    em1_left * inv_kappa,
                    0.5 * em1_left * (em1_left + 2.0) * inv_kappa,
                )
            };
            let prior = e_step * x + mu * g_step;
            let inv_total = 1.0 / (v_left + e_left * e_left * v_step);
            let expected_end = mu * g_left + e_left * prior;
            let mean = prior + v_step * e_left * inv_total * (y - expected_end);
            let sd = sigma * (v_step * v_left * inv_total).sqrt();
            let noise: f64 = rng.sample(StandardNormal);
            x = mean + sd * noise;
            visit(t, x);
        }
        visit(end, y);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * (1.0 + b.abs())
    }

    #[test]
    fn a_game_that_never_crosses_zero_counts_from_the_start() {
        // Trapezoids: (0+100)/2 + (100+300)/2 + (300+200)/2 = 50 + 200 + 250.
        let v = gold_integral(&[0.0, 1.0, 2.0, 3.0], &[0.0, 100.0, 300.0, 200.0]);
        assert!(close(v, 500.0), "{v}");
        // Never zero at all: from the first sample.
        let v = gold_integral(&[5.0, 7.0, 8.0], &[-100.0, -300.0, -100.0]);
        assert!(close(v, 400.0 + 200.0), "{v}");
    }

    #[test]
    fn a_late_swing_scores_as_close() {
        // Team 0 led by 10k at minute 20, then lost. The curve crosses zero
        // between 4000 at minute 30 and -1000 at minute 35, at 30 + 5 * 4/5 = 34;
        // only the area after minute 34 counts: 1 * 1000 / 2 + 5 * (1000 + 3000) / 2.
        let times = [0.0, 10.0, 20.0, 30.0, 35.0, 40.0];
        let diffs = [0.0, 5000.0, 10000.0, 4000.0, -1000.0, -3000.0];
        let v = gold_integral(&times, &diffs);
        assert!(close(v, 10_500.0), "{v}");
        // The same game without the swing is a landslide by this measure.
        let one_sided = [0.0, 5000.0, 10000.0, 4000.0, 1000.0, 3000.0];
        // 25_000 + 75_000 + 70_000 + 12_500 + 10_000.
        assert!(close(gold_integral(&times, &one_sided), 192_500.0));
    }

    #[test]
    fn an_exact_zero_sample_is_the_last_zero_and_a_crossing_is_interpolated() {
        let v = gold_integral(&[0.0, 1.0, 2.0, 3.0], &[0.0, 500.0, 0.0, -200.0]);
        assert!(close(v, 100.0), "{v}");
        // Crossing a third of the way between minutes 2 and 5 (300 to -600):
        // at minute 3, then a triangle to -600 at 5 and a trapezoid to -900 at 6.
        let v = gold_integral(&[0.0, 2.0, 5.0, 6.0], &[0.0, 300.0, -600.0, -900.0]);
        assert!(close(v, 0.5 * 2.0 * 600.0 + 0.5 * (600.0 + 900.0)), "{v}");
        // A match ending level scores zero; an empty timeline too.
        assert_eq!(gold_integral(&[0.0, 1.0, 2.0], &[0.0, 800.0, 0.0]), 0.0);
        assert_eq!(gold_integral(&[], &[]), 0.0);
    }

    proptest! {
        #[test]
        fn the_measure_is_symmetric_and_bounded_by_the_whole_area(
            diffs in prop::collection::vec(-5000.0f64..5000.0, 1..40)
        ) {
            let times: Vec<f64> = (0..diffs.len()).map(|i| i as f64 * 0.5).collect();
            let v = gold_integral(&times, &diffs);
            let flipped: Vec<f64> = diffs.iter().map(|d| -d).collect();
            let abs: Vec<f64> = diffs.iter().map(|d| d.abs()).collect();
            let whole = gold_integral(&times, &abs);
            prop_assert!(v >= 0.0);
            prop_assert!((v - gold_integral(&times, &flipped)).abs() <= 1e-9 * (1.0 + v));
            prop_assert!(v <= whole + 1e-9 * (1.0 + whole));
        }
    }

    #[test]
    fn timelines_start_level_sample_each_step_and_end_with_the_winner_ahead() {
        let gold = GoldProcess::new(GoldParams::default());
        let mut rng = Pcg64::seed_from_u64(3);
        let duration = SimDuration::from_secs(40 * 60 + 10);
        for i in 0..200 {
            let team0_wins = i % 2 == 0;
            let p = [0.02, 0.5, 0.97][i % 3];
            let tl = gold.sample_timeline(p, team0_wins, duration, &mut rng);
            // 30 s steps over 40m10s: 0, 0.5, ..., 40.0, then 40.1667.
            assert_eq!(tl.minutes.len(), 82);
            assert_eq!((tl.minutes[0], tl.diff[0]), (0.0, 0.0));
            assert!(close(tl.minutes[1], 0.5));
            assert!(close(*tl.minutes.last().unwrap(), 40.0 + 10.0 / 60.0));
            let last = *tl.diff.last().unwrap();
            assert_eq!(last > 0.0, team0_wins, "final diff {last}");
            assert!(tl.diff.iter().all(|d| d.is_finite()));
        }
    }

    #[test]
    fn the_integral_while_sampling_equals_the_integral_of_the_sample() {
        let gold = GoldProcess::new(GoldParams::default());
        let d = SimDuration::from_secs(1800);
        let tl = gold.sample_timeline(0.6, false, d, &mut Pcg64::seed_from_u64(9));
        let folded = gold.sample_integral(0.6, false, d, &mut Pcg64::seed_from_u64(9));
        assert_eq!(tl.integral(), folded);
    }

    /// Drawing the winner from p and then the conditioned path must give the
    /// unconditioned process: at mid-game, mean mu G(t) and variance sigma^2 V(t).
    /// A wrong bridge formula shifts both.
    #[test]
    fn winner_first_then_bridge_reproduces_the_unconditioned_process() {
        for (snowball, p) in [(0.05, 0.7), (0.0, 0.3), (-0.05, 0.85)] {
            let params = GoldParams {
                step: HumanDuration::from_secs(60),
                volatility: 500.0,
                snowball,
            };
            let gold = GoldProcess::new(params);
            let mut rng = Pcg64::seed_from_u64(11);
            let (end, mid) = (40.0, 20.0);
            let duration = SimDuration::from_secs(40 * 60);
            let n = 20_000;
            let (mut sum, mut sum2) = (0.0, 0.0);
            for _ in 0..n {
                let team0_wins = rng.random::<f64>() < p;
                let tl = gold.sample_timeline(p, team0_wins, duration, &mut rng);
                let x = tl.diff[20];
                assert_eq!(tl.minutes[20], mid);
                sum += x;
                sum2 += x * x;
            }
            let mean = sum / n as f64;
            let var = sum2 / n as f64 - mean * mean;
            let k: f64 = snowball;
            let (em_end, em_mid) = ((k * end).exp_m1(), (k * mid).exp_m1());
            let mu = normal_quantile(p) * 500.0 * variance(k, em_end, end).sqrt()
                / growth(k, em_end, end);
            let want_mean = mu * growth(k, em_mid, mid);
            let want_var = 500.0 * 500.0 * variance(k, em_mid, mid);
            let se_mean = (want_var / n as f64).sqrt();
            assert!(
                (mean - want_mean).abs() < 4.0 * se_mean,
                "snowball {snowball}: mean {mean} vs {want_mean}"
            );
            // Var of a sample variance of a normal: 2 sigma^4 / n.
            let se_var = want_var * (2.0 / n as f64).sqrt();
            assert!(
                (var - want_var).abs() < 4.0 * se_var,
                "snowball {snowball}: var {var} vs {want_var}"
            );
        }
    }

    #[test]
    fn snowball_widens_the_final_leads() {
        let duration = SimDuration::from_secs(40 * 60);
        let mean_abs_end = |snowball: f64| {
            let gold = GoldProcess::new(GoldParams {
                snowball,
                ..GoldParams::default()
            });
            let mut rng = Pcg64::seed_from_u64(5);
            let n = 2000;
            (0..n)
                .map(|i| {
                    let tl = gold.sample_timeline(0.5, i % 2 == 0, duration, &mut rng);
                    tl.diff.last().unwrap().abs()
                })
                .sum::<f64>()
                / n as f64
        };
        // E|X(T)| = sd sqrt(2/pi); sd is 600 sqrt(40) = 3795 without snowball
        // and 600 sqrt((e^4 - 1) / 0.1) = 13_900 at 0.05 a minute.
        let flat = mean_abs_end(0.0);
        let snow = mean_abs_end(0.05);
        assert!((flat - 3795.0 * 0.7979).abs() < 150.0, "{flat}");
        assert!((snow - 13_900.0 * 0.7979).abs() < 550.0, "{snow}");
    }

    #[test]
    fn extreme_probabilities_and_tiny_matches_stay_finite() {
        let gold = GoldProcess::new(GoldParams {
            snowball: 1.0,
            ..GoldParams::default()
        });
        let mut rng = Pcg64::seed_from_u64(1);
        for (p, w) in [(1.0, false), (0.0, true), (1.0, true), (1e-300, true)] {
            for secs in [0, 1, 20_000] {
                let tl = gold.sample_timeline(p, w, SimDuration::from_secs(secs), &mut rng);
                assert!(tl.diff.iter().all(|d| d.is_finite()), "p {p} {secs}s");
                assert_eq!(*tl.diff.last().unwrap() > 0.0, w);
            }
        }
    }

    #[test]
    fn validation_names_the_key() {
        let bad = |g: GoldParams| g.validate().unwrap_err().key;
        let ok = GoldParams::default();
        assert!(ok.validate().is_ok());
        for step in [
            SimDuration::ZERO,
            SimDuration::from_ms(1),
            SimDuration::from_ms(999),
        ] {
            let e = GoldParams {
                step: HumanDuration(step),
                ..ok.clone()
            }
            .validate()
            .unwrap_err();
            assert_eq!(e.key, "gold.step");
            assert!(e.to_string().contains("at least 1s"), "{e}");
        }
        assert!(GoldParams {
            step: HumanDuration::from_secs(1),
            ..ok.clone()
        }
        .validate()
        .is_ok());
        assert_eq!(
            bad(GoldParams {
                volatility: -1.0,
                ..ok.clone()
            }),
            "gold.volatility"
        );
        assert_eq!(
            bad(GoldParams {
                snowball: f64::NAN,
                ..ok
            }),
            "gold.snowball"
        );
    }
}
