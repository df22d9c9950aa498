//! Elo: the simplest rating system, and the baseline every other one is
//! compared against. One number per player, moved by K times the surprise.
//!
//! Teams: a team plays as one player whose rating is the mean of its members;
//! every member receives the team's change, so a team's mean moves exactly as
//! a single player's rating would.

use super::{blend, check_finite, check_positive, games_of, mean_value, stamp, RatingSystem};
use crate::model::{ParamError, PerTeam, Rating, SimTime};
use serde::{Deserialize, Serialize};

/// Parameters of `system = "elo"`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EloParams {
    /// K factor: rating points a player gains for a win that was certain to
    /// be a loss (the largest possible change per game). Default 32.
    pub k: f64,
    /// Rating points for a tenfold change in odds: a player `scale` points
    /// above another is expected to win 10 games to 1. Default 400.
    pub scale: f64,
    /// Rating of a new player, in rating points. Default 1500.
    pub initial: f64,
}

impl Default for EloParams {
    fn default() -> Self {
        EloParams {
            k: 32.0,
            scale: 400.0,
            initial: 1500.0,
        }
    }
}

impl EloParams {
    /// Where the rating system comes from, for `mmsim catalogue`.
    pub const SOURCE: &str =
        "Elo: one number moved by K times the surprise; a team plays as its mean rating";
    /// Its keys, for `mmsim catalogue`.
    pub const PARAMETERS: &str = "k, scale, initial";

    /// Checks every parameter; keys are relative to `[rating]`.
    pub fn validate(&self) -> Result<(), ParamError> {
        check_positive("k", self.k)?;
        check_positive("scale", self.scale)?;
        check_finite("initial", self.initial)
    }
}

/// Expected score of a player rated `rating` against one rated `opponent`:
/// `1 / (1 + 10^((opponent - rating) / scale))`.
pub fn expected_score(rating: f64, opponent: f64, scale: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf((opponent - rating) / scale))
}

/// New rating after a batch of games, each `(opponent rating, score)` with
/// score 1 for a win, 0.5 for a draw, 0 for a loss. Batch, as FIDE and the
/// Wikipedia tournament example do it: every expected score uses the rating
/// the player had before the first game, and the sum of surprises is applied
/// once. (Updating after each game instead gives a slightly different
/// number, because later expectations see the moved rating.)
pub fn rate_period(rating: f64, results: &[(f64, f64)], k: f64, scale: f64) -> f64 {
    let surprise: f64 = results
        .iter()
        .map(|&(opponent, score)| score - expected_score(rating, opponent, scale))
        .sum();
    rating + k * surprise
}

/// The Elo system with its parameters.
#[derive(Clone, Debug)]
pub struct Elo {
    params: EloParams,
}

impl Elo {
    /// An Elo system with these parameters (validated).
    pub fn new(params: EloParams) -> Self {
        Elo { params }
    }
}

impl RatingSystem for Elo {
    fn initial(&self) -> Rating {
        Rating::new(self.params.initial, 0.0, 0.0)
    }

    fn update(&self, teams: &mut [Vec<Rating>], winner: usize, weight: f64, now: SimTime) {
        if let ([a, b], 0..=1) = (&mut *teams, winner) {
            #[cfg(debug_assertions)]
            let plain = {
                let mut copy = vec![a.clone(), b.clone()];
                self.update_plain(&mut copy, winner, weight, now);
                copy
            };
            self.update_two(a, b, winner, weight, now);
            #[cfg(debug_assertions)]
            debug_assert!(same_bits(&plain, teams), "two teams' update differs");
            return;
        }
        self.update_plain(teams, winner, weight, now);
    }

    fn win_probability(&self, a: &[Rating], b: &[Rating], _now: SimTime) -> f64 {
        expected_score(mean_value(a), mean_value(b), self.params.scale)
    }
}

impl Elo {
    /// `update` for two teams and a winner among them (every 1v1 and team
    /// match), with the same arithmetic in the same order as
    /// `update_plain` (its oracle), without gathering each team's games
    /// and means into buffers first: that bookkeeping cost twice the two
    /// `powf` calls on `bench-1v1`.
    fn update_two(
        &self,
        a: &mut [Rating],
        b: &mut [Rating],
        winner: usize,
        weight: f64,
        now: SimTime,
    ) {
        let means = [mean_value(a), mean_value(b)];
        let (k, scale) = (self.params.k, self.params.scale);
        for (i, team) in [a, b].into_iter().enumerate() {
            let score = if i == winner { 1.0 } else { 0.0 };
            let game = [(means[1 - i], score)];
            let team_change = rate_period(means[i], &game, k, scale) - means[i];
            for r in team.iter_mut() {
                r.value = blend(r.value, r.value + team_change, weight);
                stamp(r, now);
            }
        }
    }

    /// `update` for any number of teams: the general rule, and the oracle
    /// of `update_two`.
    fn update_plain(&self, teams: &mut [Vec<Rating>], winner: usize, weight: f64, now: SimTime) {
        // Per-team buffers inline (two teams fit).
        let means: PerTeam<f64> = teams.iter().map(|t| mean_value(t)).collect();
        let n = teams.len();
        for (i, team) in teams.iter_mut().enumerate() {
            let games: PerTeam<(f64, f64)> = games_of(i, winner, n)
                .into_iter()
                .map(|(j, score)| (means[j], score))
                .collect();
            if games.is_empty() {
                continue;
            }
            let team_change =
                rate_period(means[i], &games, self.params.k, self.params.scale) - means[i];
            for r in team.iter_mut() {
                r.value = blend(r.value, r.value + team_change, weight);
                stamp(r, now);
            }
        }
    }
}

/// Whether two lists of teams' ratings are equal to the bit (the oracle
/// checks; `==` would call -0.0 and 0.0 the same).
#[cfg(any(test, debug_assertions))]
fn same_bits(a: &[Vec<Rating>], b: &[Vec<Rating>]) -> bool {
    let bits = |r: &Rating| (r.value.to_bits(), r.deviation.to_bits(), r.volatility.to_bits(), r.games, r.last_played);
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            x.len() == y.len() && x.iter().zip(y).all(|(r, s)| bits(r) == bits(s))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use skillratings::elo::{elo_rating_period, EloConfig, EloRating};
    use skillratings::Outcomes;

    fn rated(value: f64) -> Rating {
        Rating::new(value, 0.0, 0.0)
    }

    /// Wikipedia, "Elo rating system", worked example: a player rated 1613
    /// meets 1609 (loss), 1477 (draw), 1388 (win), 1586 (win), 1720 (loss).
    /// Expected scores 0.506 + 0.686 + 0.785 + 0.539 + 0.351 = 2.867, actual
    /// 2.5, new rating 1613 + 32 * (2.5 - 2.867) = 1601.27 ("1601"). Batch.
    /// Full-precision figures computed independently in Python with
    /// 1 / (1 + 10 ** ((o - r) / 400)): sum of expectations
    /// 2.866566348038837, new rating 1601.2698768627572.
    #[test]
    fn reproduces_the_wikipedia_tournament_example_in_batch() {
        let games = [
            (1609.0, 0.0),
            (1477.0, 0.5),
            (1388.0, 1.0),
            (1586.0, 1.0),
            (1720.0, 0.0),
        ];
        let expected: f64 = games
            .iter()
            .map(|&(o, _)| expected_score(1613.0, o, 400.0))
            .sum();
        assert!((expected - 2.866566348038837).abs() < 1e-9, "{expected}");
        assert!((expected - 2.867).abs() < 5e-4);
        let new = rate_period(1613.0, &games, 32.0, 400.0);
        assert!((new - 1601.2698768627572).abs() < 1e-6, "{new}");
        assert_eq!(new.round(), 1601.0);

        // skillratings' rating period moves the rating after every game, so
        // it disagrees with the batch figure; this is why mmsim keeps its own.
        let results: Vec<(EloRating, Outcomes)> = [
            (1609.0, Outcomes::LOSS),
            (1477.0, Outcomes::DRAW),
            (1388.0, Outcomes::WIN),
            (1586.0, Outcomes::WIN),
            (1720.0, Outcomes::LOSS),
        ]
        .into_iter()
        .map(|(o, s)| (EloRating { rating: o }, s))
        .collect();
        let sequential = elo_rating_period(
            &EloRating { rating: 1613.0 },
            &results,
            &EloConfig { k: 32.0 },
        )
        .rating;
        assert!((sequential - new).abs() > 0.01, "{sequential} vs {new}");
    }

    #[test]
    fn one_game_matches_skillratings_and_is_zero_sum() {
        let elo = Elo::new(EloParams::default());
        let mut teams = vec![vec![rated(1400.0)], vec![rated(1600.0)]];
        elo.update(&mut teams, 0, 1.0, SimTime::from_ms(5));
        let (a, b) = skillratings::elo::elo(
            &EloRating { rating: 1400.0 },
            &EloRating { rating: 1600.0 },
            &Outcomes::WIN,
            &EloConfig { k: 32.0 },
        );
        assert!((teams[0][0].value - a.rating).abs() < 1e-9);
        assert!((teams[1][0].value - b.rating).abs() < 1e-9);
        // The underdog's win: 32 * (1 - 1/(1 + 10^0.5)) = 24.3119...
        assert!((teams[0][0].value - 1424.3119016527346).abs() < 1e-6);
        assert!((teams[0][0].value + teams[1][0].value - 3000.0).abs() < 1e-9);
        for r in teams.iter().flatten() {
            assert_eq!(r.games, 1);
            assert_eq!(r.last_played, Some(SimTime::from_ms(5)));
        }
    }

    #[test]
    fn team_members_share_the_change_computed_from_team_means() {
        let elo = Elo::new(EloParams::default());
        // Means 1500 and 1500: an even game, so the change is K/2 = 16 each.
        let mut teams = vec![
            vec![rated(1300.0), rated(1700.0)],
            vec![rated(1500.0), rated(1500.0)],
        ];
        elo.update(&mut teams, 1, 1.0, SimTime::ZERO);
        assert_eq!(teams[0][0].value, 1284.0);
        assert_eq!(teams[0][1].value, 1684.0);
        assert_eq!(teams[1][0].value, 1516.0);
        assert_eq!(teams[1][1].value, 1516.0);
    }

    #[test]
    fn weight_scales_the_change() {
        let elo = Elo::new(EloParams::default());
        let mut full = vec![vec![rated(1500.0)], vec![rated(1500.0)]];
        let mut half = full.clone();
        elo.update(&mut full, 0, 1.0, SimTime::ZERO);
        elo.update(&mut half, 0, 0.5, SimTime::ZERO);
        assert_eq!(full[0][0].value, 1516.0);
        assert_eq!(half[0][0].value, 1508.0);
        assert_eq!(half[1][0].value, 1492.0);
        assert_eq!(half[0][0].games, 1, "a partial game is still a game");
    }

    #[test]
    fn win_probability_follows_the_scale() {
        let elo = Elo::new(EloParams::default());
        let p = elo.win_probability(&[rated(1900.0)], &[rated(1500.0)], SimTime::ZERO);
        assert!((p - 10.0 / 11.0).abs() < 1e-12);
        let q = elo.win_probability(&[rated(1500.0)], &[rated(1900.0)], SimTime::ZERO);
        assert!((p + q - 1.0).abs() < 1e-12);
        let wide = Elo::new(EloParams {
            scale: 800.0,
            ..EloParams::default()
        });
        let p = wide.win_probability(&[rated(2300.0)], &[rated(1500.0)], SimTime::ZERO);
        assert!((p - 10.0 / 11.0).abs() < 1e-12);
    }

    /// Two teams of one to five, random ratings (some equal, some far
    /// apart), weights and parameters: the two-team path moves every
    /// rating to the same bits as the general rule. Release builds run the
    /// check too (no debug assertion there).
    #[test]
    fn two_teams_update_as_the_general_rule_does() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(25);
        for round in 0..2000 {
            let elo = Elo::new(EloParams {
                k: [32.0, 16.0, 40.5][round % 3],
                scale: [400.0, 173.7, 1000.0][round % 3],
                initial: 1500.0,
            });
            let team = |rng: &mut rand_pcg::Pcg64| -> Vec<Rating> {
                (0..rng.random_range(1..=5))
                    .map(|_| {
                        let mut r = rated(match rng.random_range(0..4) {
                            0 => 1500.0,
                            1 => rng.random_range(-500.0..4000.0),
                            2 => rng.random_range(1400.0..1600.0),
                            _ => -0.0,
                        });
                        r.games = rng.random_range(0..100);
                        r
                    })
                    .collect()
            };
            let teams = vec![team(&mut rng), team(&mut rng)];
            let winner = rng.random_range(0..3);
            let weight = [1.0, 0.5, rng.random_range(0.01..1.0)][round % 3];
            let now = SimTime::from_ms(rng.random_range(0..1u64 << 40));
            let (mut fast, mut plain) = (teams.clone(), teams);
            elo.update(&mut fast, winner, weight, now);
            elo.update_plain(&mut plain, winner, weight, now);
            assert!(same_bits(&fast, &plain), "{fast:?} vs {plain:?}");
        }
    }

    #[test]
    fn three_teams_winner_beats_each_and_losers_only_meet_the_winner() {
        let elo = Elo::new(EloParams::default());
        let mut teams = vec![
            vec![rated(1500.0)],
            vec![rated(1500.0)],
            vec![rated(1500.0)],
        ];
        elo.update(&mut teams, 2, 1.0, SimTime::ZERO);
        assert_eq!(teams[2][0].value, 1532.0);
        assert_eq!(teams[0][0].value, 1484.0);
        assert_eq!(teams[1][0].value, 1484.0);
    }

    #[test]
    fn bad_parameters_name_their_key() {
        let bad = |p: EloParams| p.validate().unwrap_err().key;
        assert_eq!(
            bad(EloParams {
                k: 0.0,
                ..Default::default()
            }),
            "k"
        );
        assert_eq!(
            bad(EloParams {
                scale: f64::NAN,
                ..Default::default()
            }),
            "scale"
        );
        assert_eq!(
            bad(EloParams {
                initial: f64::INFINITY,
                ..Default::default()
            }),
            "initial"
        );
    }
}
