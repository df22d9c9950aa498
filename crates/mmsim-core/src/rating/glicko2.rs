//! Glicko-2 (Glickman, glicko.net/glicko/glicko2.pdf): Glicko with a
//! per-player volatility, so a player whose results swing keeps a wide
//! deviation. The update itself, including the volatility iteration that is
//! easy to get subtly wrong, is skillratings' (it reproduces the paper's
//! worked example); this file adds time, teams and weights around it.
//!
//! As for Glicko-1, each match is one rating period with one game per player,
//! and teams meet a composite opponent (mean rating, root-mean-square RD).
//! Between matches the deviation grows as the paper's idle periods do,
//! RD² + t·(173.7178·σ)² for t periods of `period`, capped at `initial_rd`.
//! The update adds one more σ'² of growth itself (the paper's step 6), so a
//! player who plays many matches within one period gets that step each time:
//! the price of rating every match as it ends.

use super::glicko1::{check_period, idle_rd, team_composite, update_teams, GlickoGame};
use super::{blend, check_finite, check_positive, RatingSystem};
use crate::model::{HumanDuration, ParamError, Rating, SimDuration, SimTime};
use serde::{Deserialize, Serialize};
use skillratings::glicko2::{glicko2_rating_period, Glicko2Config, Glicko2Rating};
use skillratings::Outcomes;

/// The paper's factor between the rating scale and Glicko-2's internal one.
pub const SCALE: f64 = 173.7178;

/// Stopping tolerance of the volatility iteration; the paper's value.
const CONVERGENCE_TOLERANCE: f64 = 1e-6;

/// Parameters of `system = "glicko2"`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Glicko2Params {
    /// Rating of a new player, in rating points. Default 1500.
    pub initial: f64,
    /// RD of a new player, in rating points; also the ceiling RD grows back
    /// to. Default 350.
    pub initial_rd: f64,
    /// Volatility σ of a new player (Glicko-2 units, no rating points):
    /// the expected size of a player's true change per period. Default 0.06.
    pub initial_volatility: f64,
    /// τ, how far volatility may move per update; Glickman suggests 0.3 to
    /// 1.2, smaller for games with fewer upsets. Default 0.5.
    pub tau: f64,
    /// Length of one rating period, as a duration; only the growth of RD
    /// between matches uses it. Default "1d".
    pub period: HumanDuration,
}

impl Default for Glicko2Params {
    fn default() -> Self {
        Glicko2Params {
            initial: 1500.0,
            initial_rd: 350.0,
            initial_volatility: 0.06,
            tau: 0.5,
            period: HumanDuration(SimDuration::from_secs(86_400)),
        }
    }
}

impl Glicko2Params {
    /// Where the rating system comes from, for `mmsim catalogue`.
    pub const SOURCE: &str =
        "Glickman, Glicko-2: Glicko with a per-player volatility; teams meet a composite opponent";
    /// Its keys, for `mmsim catalogue`.
    pub const PARAMETERS: &str = "initial, initial_rd, initial_volatility, tau, period";

    /// Checks every parameter; keys are relative to `[rating]`.
    pub fn validate(&self) -> Result<(), ParamError> {
        check_finite("initial", self.initial)?;
        check_positive("initial_rd", self.initial_rd)?;
        check_positive("initial_volatility", self.initial_volatility)?;
        check_positive("tau", self.tau)?;
        check_period(&self.period)
    }
}

/// Rates one player over a whole rating period against several opponents
/// (the paper's steps 2 to 8), scores rounded to win, draw or loss. `rd`
/// is the deviation at the start of the period, before the step-6 growth,
/// which this function applies. Returns the new (rating, RD, volatility);
/// with no games the player is returned unchanged (the caller grows RD for
/// time away).
pub fn rate_period(
    rating: f64,
    rd: f64,
    volatility: f64,
    games: &[GlickoGame],
    tau: f64,
) -> (f64, f64, f64) {
    if games.is_empty() {
        return (rating, rd, volatility);
    }
    let results: Vec<(Glicko2Rating, Outcomes)> = games
        .iter()
        .map(|game| {
            // The opponent's volatility does not enter a player's update.
            let opponent = Glicko2Rating {
                rating: game.rating,
                deviation: game.rd,
                volatility,
            };
            (opponent, game.outcome())
        })
        .collect();
    let config = Glicko2Config {
        tau,
        convergence_tolerance: CONVERGENCE_TOLERANCE,
    };
    let new = glicko2_rating_period(
        &Glicko2Rating {
            rating,
            deviation: rd,
            volatility,
        },
        &results,
        &config,
    );
    (new.rating, new.deviation, new.volatility)
}

/// Probability that a player (rating, RD) beats another: the paper's
/// expectation with both deviations combined, as in Glicko-1.
pub fn win_probability(r1: f64, rd1: f64, r2: f64, rd2: f64) -> f64 {
    let phi = rd1.hypot(rd2) / SCALE;
    let g = 1.0 / (1.0 + 3.0 * phi * phi / (std::f64::consts::PI.powi(2))).sqrt();
    1.0 / (1.0 + (-g * (r1 - r2) / SCALE).exp())
}

/// The Glicko-2 system with its parameters.
#[derive(Clone, Debug)]
pub struct Glicko2 {
    params: Glicko2Params,
}

impl Glicko2 {
    /// A Glicko-2 system with these parameters (validated).
    pub fn new(params: Glicko2Params) -> Self {
        Glicko2 { params }
    }

    fn rd_now(&self, r: &Rating, now: SimTime) -> f64 {
        let step = SCALE * r.volatility;
        idle_rd(r, now, self.params.period.0, step, self.params.initial_rd)
    }
}

impl RatingSystem for Glicko2 {
    fn initial(&self) -> Rating {
        Rating::new(
            self.params.initial,
            self.params.initial_rd,
            self.params.initial_volatility,
        )
    }

    fn current(&self, r: &Rating, now: SimTime) -> Rating {
        Rating {
            deviation: self.rd_now(r, now),
            ..*r
        }
    }

    fn update(&self, teams: &mut [Vec<Rating>], winner: usize, weight: f64, now: SimTime) {
        let rd_now = |r: &Rating| self.rd_now(r, now);
        update_teams(teams, winner, now, rd_now, |r, rd, games| {
            let (value, new_rd, new_vol) =
                rate_period(r.value, rd, r.volatility, games, self.params.tau);
            r.value = blend(r.value, value, weight);
            r.deviation = blend(rd, new_rd, weight);
            r.volatility = blend(r.volatility, new_vol, weight);
        });
    }

    fn win_probability(&self, a: &[Rating], b: &[Rating], now: SimTime) -> f64 {
        let rd_now = |r: &Rating| self.rd_now(r, now);
        let (ra, rda) = team_composite(a, rd_now);
        let (rb, rdb) = team_composite(b, rd_now);
        win_probability(ra, rda, rb, rdb)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY_MS: u64 = 86_400_000;

    fn paper_games() -> [GlickoGame; 3] {
        super::super::glicko1::PAPER_GAMES
    }

    /// Glickman's Glicko-2 example (glicko2.pdf): 1500 / RD 200 / σ 0.06,
    /// τ = 0.5, beats 1400/30, loses to 1550/100 and 1700/300. The paper
    /// gives v = 1.7785, Δ = -0.4834, σ' = 0.05999, r' = 1464.06,
    /// RD' = 151.52. An independent Python transcription of the paper's
    /// steps (Illinois iteration, ε = 1e-6) gives v = 1.7789770897239976,
    /// Δ = -0.4839332609836549, r' = 1464.0506705393013,
    /// RD' = 151.51652412385727, σ' = 0.059995984286488495; skillratings
    /// matches it. The paper's r' is off by 0.009 because it rounds μ' to
    /// -0.2069 before converting back.
    #[test]
    fn reproduces_glickmans_glicko2_example() {
        let (r, rd, vol) = rate_period(1500.0, 200.0, 0.06, &paper_games(), 0.5);
        assert!((r - 1464.0506705393013).abs() < 1e-6, "{r}");
        assert!((rd - 151.51652412385727).abs() < 1e-6, "{rd}");
        assert!((vol - 0.059995984286488495).abs() < 1e-9, "{vol}");
        assert!((r - 1464.06).abs() < 0.01);
        assert!((rd - 151.52).abs() < 0.01);
        assert!((vol - 0.05999).abs() < 1e-5);
    }

    #[test]
    fn a_one_on_one_match_is_a_one_game_period_and_stamps_both() {
        let system = Glicko2::new(Glicko2Params::default());
        let now = SimTime::from_ms(7);
        let mut teams = vec![
            vec![Rating::new(1500.0, 200.0, 0.06)],
            vec![Rating::new(1700.0, 300.0, 0.06)],
        ];
        system.update(&mut teams, 1, 1.0, now);
        let (r, rd, vol) = rate_period(1500.0, 200.0, 0.06, &[paper_games()[2]], 0.5);
        assert_eq!(
            (
                teams[0][0].value,
                teams[0][0].deviation,
                teams[0][0].volatility
            ),
            (r, rd, vol)
        );
        assert!(teams[1][0].value > 1700.0);
        for r in teams.iter().flatten() {
            assert_eq!((r.games, r.last_played), (1, Some(now)));
        }
    }

    #[test]
    fn rd_grows_by_volatility_per_period_up_to_the_cap() {
        let system = Glicko2::new(Glicko2Params::default());
        let mut r = Rating::new(1500.0, 50.0, 0.06);
        r.last_played = Some(SimTime::ZERO);
        let step: f64 = 173.7178 * 0.06;
        let rd = system.current(&r, SimTime::from_ms(10 * DAY_MS)).deviation;
        assert!((rd - (2500.0 + 10.0 * step * step).sqrt()).abs() < 1e-9);
        let rd = system
            .current(&r, SimTime::from_ms(5000 * DAY_MS))
            .deviation;
        assert_eq!(rd, 350.0);
        let fresh = system.initial();
        assert_eq!(system.current(&fresh, SimTime::from_ms(DAY_MS)), fresh);
    }

    #[test]
    fn weight_scales_every_change() {
        let system = Glicko2::new(Glicko2Params::default());
        let start = vec![
            vec![system.initial()],
            vec![Rating::new(1600.0, 80.0, 0.06)],
        ];
        let mut full = start.clone();
        let mut half = start;
        system.update(&mut full, 0, 1.0, SimTime::ZERO);
        system.update(&mut half, 0, 0.5, SimTime::ZERO);
        let d = |x: &Vec<Vec<Rating>>| x[0][0].value - 1500.0;
        assert!((2.0 * d(&half) - d(&full)).abs() < 1e-9);
        let s = |x: &Vec<Vec<Rating>>| x[1][0].deviation - 80.0;
        assert!((2.0 * s(&half) - s(&full)).abs() < 1e-9);
    }

    #[test]
    fn win_probability_matches_glicko1_on_the_same_numbers() {
        // 173.7178 = 400 / ln 10 to the paper's precision, so both systems
        // predict the same outcome for the same ratings and deviations.
        let p2 = win_probability(1700.0, 300.0, 1500.0, 50.0);
        let p1 = super::super::glicko1::win_probability(1700.0, 300.0, 1500.0, 50.0);
        assert!((p1 - p2).abs() < 1e-6);
        assert!((win_probability(1500.0, 80.0, 1500.0, 200.0) - 0.5).abs() < 1e-15);
    }

    #[test]
    fn bad_parameters_name_their_key() {
        let bad = |p: Glicko2Params| p.validate().unwrap_err().key;
        let d = Glicko2Params::default;
        assert_eq!(bad(Glicko2Params { tau: 0.0, ..d() }), "tau");
        assert_eq!(
            bad(Glicko2Params {
                initial_volatility: -0.1,
                ..d()
            }),
            "initial_volatility"
        );
        assert_eq!(
            bad(Glicko2Params {
                period: HumanDuration::from_secs(0),
                ..d()
            }),
            "period"
        );
    }
}
