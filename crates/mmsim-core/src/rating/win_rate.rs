//! Win rate as skill, as Armored Warfare's team split uses it: the share of
//! games a player has won, smoothed toward 50% so that a player with three
//! games is not rated 100%.
//!
//! value = 100 · (wins + prior_games / 2) / (games + prior_games), in
//! percent. The rating does not store wins: since `value` and `games` fix
//! them, each result updates the value incrementally,
//! value' = (value · (games + prior_games) + 100 · score) / (games + prior_games + 1).

use super::{blend, check_non_negative, games_of, stamp, RatingSystem};
use crate::model::{ParamError, Rating, SimTime};
use serde::{Deserialize, Serialize};

/// Parameters of `system = "win-rate"`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WinRateParams {
    /// Phantom games at 50% every player starts with, so early results move
    /// the win rate gradually; 0 gives the raw win rate. Default 20.
    pub prior_games: f64,
}

impl Default for WinRateParams {
    fn default() -> Self {
        WinRateParams { prior_games: 20.0 }
    }
}

impl WinRateParams {
    /// Where the rating system comes from, for `mmsim catalogue`.
    pub const SOURCE: &str =
        "Armored Warfare's skill: the share of games won, smoothed toward 50% by `prior_games` phantom games";
    /// Its keys, for `mmsim catalogue`.
    pub const PARAMETERS: &str = "prior_games";

    /// Checks every parameter; keys are relative to `[rating]`.
    pub fn validate(&self) -> Result<(), ParamError> {
        check_non_negative("prior_games", self.prior_games)
    }
}

/// The smoothed win rate in percent after `wins` out of `games`.
pub fn smoothed_win_rate(wins: f64, games: f64, prior_games: f64) -> f64 {
    let n = games + prior_games;
    if n <= 0.0 {
        50.0
    } else {
        100.0 * (wins + prior_games * 0.5) / n
    }
}

/// Log5 (Bill James): the chance that a side winning a share `pa` of its
/// games beats one winning `pb`, both measured against the same field:
/// pa(1-pb) / (pa(1-pb) + pb(1-pa)). Monotone in each, 0.5 when they are
/// equal, and it needs no tuning constant, which a win rate has no scale
/// to supply. Shares are clamped into [0.001, 0.999] so raw 0% and 100%
/// rates stay finite.
pub fn log5(pa: f64, pb: f64) -> f64 {
    let pa = pa.clamp(0.001, 0.999);
    let pb = pb.clamp(0.001, 0.999);
    let a = pa * (1.0 - pb);
    a / (a + pb * (1.0 - pa))
}

/// The win-rate system with its parameters.
#[derive(Clone, Debug)]
pub struct WinRate {
    params: WinRateParams,
}

impl WinRate {
    /// A win-rate system with these parameters (validated).
    pub fn new(params: WinRateParams) -> Self {
        WinRate { params }
    }
}

fn mean_share(team: &[Rating]) -> f64 {
    if team.is_empty() {
        0.5
    } else {
        team.iter().map(|r| r.value).sum::<f64>() / team.len() as f64 / 100.0
    }
}

impl RatingSystem for WinRate {
    fn initial(&self) -> Rating {
        Rating::new(50.0, 0.0, 0.0)
    }

    fn update(&self, teams: &mut [Vec<Rating>], winner: usize, weight: f64, now: SimTime) {
        let n = teams.len();
        for (i, team) in teams.iter_mut().enumerate() {
            // Several opponents (more than two teams) still make one game
            // in a win-rate count: won or lost.
            let Some(&(_, score)) = games_of(i, winner, n).first() else {
                continue;
            };
            for r in team.iter_mut() {
                let seen = r.games as f64 + self.params.prior_games;
                let value = if seen + 1.0 > 0.0 {
                    (r.value * seen + 100.0 * score) / (seen + 1.0)
                } else {
                    r.value
                };
                r.value = blend(r.value, value, weight);
                stamp(r, now);
            }
        }
    }

    /// Log5 on the teams' mean win rates.
    fn win_probability(&self, a: &[Rating], b: &[Rating], _now: SimTime) -> f64 {
        log5(mean_share(a), mean_share(b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn play(system: &WinRate, r: &mut Rating, won: bool) {
        let mut teams = vec![vec![*r], vec![Rating::new(50.0, 0.0, 0.0)]];
        system.update(&mut teams, if won { 0 } else { 1 }, 1.0, SimTime::ZERO);
        *r = teams[0][0];
    }

    #[test]
    fn incremental_updates_equal_the_closed_form() {
        let system = WinRate::new(WinRateParams::default());
        let mut r = system.initial();
        let results = [true, true, false, true, true, true, false, true, true, true];
        for won in results {
            play(&system, &mut r, won);
        }
        // 8 wins in 10 games with 20 phantom games at 50%:
        // 100 · (8 + 10) / 30 = 60%.
        assert_eq!(r.games, 10);
        assert!((r.value - 60.0).abs() < 1e-12, "{}", r.value);
        assert!((smoothed_win_rate(8.0, 10.0, 20.0) - 60.0).abs() < 1e-12);
    }

    #[test]
    fn no_prior_is_the_raw_win_rate() {
        let system = WinRate::new(WinRateParams { prior_games: 0.0 });
        let mut r = system.initial();
        play(&system, &mut r, true);
        assert_eq!(r.value, 100.0);
        play(&system, &mut r, false);
        play(&system, &mut r, false);
        play(&system, &mut r, true);
        assert!((r.value - 50.0).abs() < 1e-12);
    }

    #[test]
    fn weight_scales_the_change_and_every_member_moves() {
        let system = WinRate::new(WinRateParams::default());
        let mut teams = vec![
            vec![system.initial(), system.initial()],
            vec![system.initial()],
        ];
        system.update(&mut teams, 0, 0.5, SimTime::from_ms(9));
        // A full win from 50% over 20 phantom games: 100 · 11 / 21.
        let full = 1100.0 / 21.0;
        assert!((teams[0][1].value - (50.0 + 0.5 * (full - 50.0))).abs() < 1e-12);
        assert!(teams[1][0].value < 50.0);
        for r in teams.iter().flatten() {
            assert_eq!((r.games, r.last_played), (1, Some(SimTime::from_ms(9))));
        }
    }

    #[test]
    fn log5_is_even_for_equal_teams_and_grows_with_the_gap() {
        let system = WinRate::new(WinRateParams::default());
        let t = |v: f64| vec![Rating::new(v, 0.0, 0.0)];
        assert_eq!(
            system.win_probability(&t(47.0), &t(47.0), SimTime::ZERO),
            0.5
        );
        // 60% against 40%: 0.36 / (0.36 + 0.16) = 9/13.
        let p = system.win_probability(&t(60.0), &t(40.0), SimTime::ZERO);
        assert!((p - 9.0 / 13.0).abs() < 1e-12);
        let q = system.win_probability(&t(40.0), &t(60.0), SimTime::ZERO);
        assert!((p + q - 1.0).abs() < 1e-12);
        let mut last = 0.0;
        for v in [40.0, 45.0, 50.0, 52.0, 55.0, 70.0] {
            let p = system.win_probability(&t(v), &t(50.0), SimTime::ZERO);
            assert!(p > last);
            last = p;
        }
        let p = system.win_probability(&t(100.0), &t(0.0), SimTime::ZERO);
        assert!(p.is_finite() && p < 1.0);
    }

    #[test]
    fn negative_prior_is_refused() {
        let err = WinRateParams { prior_games: -1.0 }.validate().unwrap_err();
        assert_eq!(err.key, "prior_games");
    }
}
