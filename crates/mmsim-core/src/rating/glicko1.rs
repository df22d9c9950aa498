//! Glicko-1 (Glickman, "The Glicko system", glicko.net/glicko/glicko.pdf):
//! the system the gamedev 1v1 thread runs on. A rating carries a deviation
//! (RD) that shrinks as games are played and grows back while a player is
//! away, so returning and new players move fast and regulars move slowly.
//!
//! mmsim treats every match as one rating period in which each player plays
//! one game, applied at once when the match ends. Time between games is what
//! the paper's step 1 accounts for: RD grows by `c² · t` where `t` is the time
//! since `last_played` in units of `period`, fractions included, capped at
//! the initial RD.
//!
//! Teams use the composite-opponent method: each player is rated, with their
//! own rating and RD, against one opponent standing for the other team, whose
//! rating is the team's mean rating and whose RD is the root mean square of
//! its members' RDs (so a team of uncertain players is an uncertain
//! opponent). In 1v1 this is exactly Glickman's update.
//!
//! The update and the prediction are skillratings' (`glicko`), which
//! reproduces the paper's worked example; this file adds time, teams and
//! weights around it, and holds what Glicko-2 shares with it.

use super::{
    blend, check_finite, check_non_negative, check_positive, games_of, stamp, RatingSystem,
};
use crate::model::{HumanDuration, ParamError, Rating, SimDuration, SimTime};
use serde::{Deserialize, Serialize};
use skillratings::glicko::{expected_score, glicko_rating_period, GlickoConfig, GlickoRating};
use skillratings::Outcomes;

/// The RD of an unrated player in Glickman's paper. skillratings' Glicko-1
/// never lets the RD entering an update exceed it, so neither may ours.
pub const MAX_RD: f64 = 350.0;

/// Parameters of `system = "glicko1"`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Glicko1Params {
    /// Rating of a new player, in rating points. Default 1500.
    pub initial: f64,
    /// RD of a new player, in rating points; also the ceiling RD grows back
    /// to. At most 350 (the paper's unrated RD). Default 350.
    pub initial_rd: f64,
    /// How fast RD grows while a player does not play, in rating points per
    /// square root of a period: RD_now = min(sqrt(RD² + c²·t), initial_rd)
    /// with t in periods. Default 34.6, Glickman's example value, which takes
    /// an RD of 50 back to 350 after 100 periods.
    pub c: f64,
    /// Length of one rating period, as a duration ("1d", "12h"). Only the
    /// RD growth uses it. Default "1d".
    pub period: HumanDuration,
}

impl Default for Glicko1Params {
    fn default() -> Self {
        Glicko1Params {
            initial: 1500.0,
            initial_rd: MAX_RD,
            c: 34.6,
            period: HumanDuration(SimDuration::from_secs(86_400)),
        }
    }
}

impl Glicko1Params {
    /// Where the rating system comes from, for `mmsim catalogue`.
    pub const SOURCE: &str =
        "Glickman, The Glicko system (the gamedev thread's system): a deviation that shrinks with games and grows back with time away";
    /// Its keys, for `mmsim catalogue`.
    pub const PARAMETERS: &str = "initial, initial_rd, c, period";

    /// Checks every parameter; keys are relative to `[rating]`.
    pub fn validate(&self) -> Result<(), ParamError> {
        check_finite("initial", self.initial)?;
        check_positive("initial_rd", self.initial_rd)?;
        if self.initial_rd > MAX_RD {
            return Err(ParamError::new(
                "initial_rd",
                format!(
                    "must be at most {MAX_RD} (the paper's RD of an unrated player, which the update never exceeds), got {}",
                    self.initial_rd
                ),
            ));
        }
        check_non_negative("c", self.c)?;
        check_period(&self.period)
    }
}

/// `period` of Glicko-1 and Glicko-2: time away is counted in it.
pub(crate) fn check_period(period: &HumanDuration) -> Result<(), ParamError> {
    if period.0.is_zero() {
        return Err(ParamError::new(
            "period",
            "must be a duration above zero, like \"1d\" or \"12h\", got 0s",
        ));
    }
    Ok(())
}

/// One game of a rating period, seen from the player being rated.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GlickoGame {
    /// The opponent's rating, in rating points.
    pub rating: f64,
    /// The opponent's RD at the time of the game, in rating points.
    pub rd: f64,
    /// 1 for a win, 0.5 for a draw, 0 for a loss.
    pub score: f64,
}

impl GlickoGame {
    /// The score as skillratings takes it: win, draw or loss, the nearest.
    pub fn outcome(&self) -> Outcomes {
        if self.score > 0.75 {
            Outcomes::WIN
        } else if self.score < 0.25 {
            Outcomes::LOSS
        } else {
            Outcomes::DRAW
        }
    }
}

/// The paper's predicted outcome of a game between two rated players: the
/// probability that player 1 beats player 2, with both deviations combined.
pub fn win_probability(r1: f64, rd1: f64, r2: f64, rd2: f64) -> f64 {
    let one = GlickoRating {
        rating: r1,
        deviation: rd1,
    };
    let two = GlickoRating {
        rating: r2,
        deviation: rd2,
    };
    expected_score(&one, &two).0
}

/// RD after `periods` rating periods without a game: the paper's step 1,
/// min(sqrt(RD² + c²·t), max_rd), fractional `periods` allowed.
pub fn grown_rd(rd: f64, c: f64, periods: f64, max_rd: f64) -> f64 {
    (rd * rd + c * c * periods.max(0.0)).sqrt().min(max_rd)
}

/// Rates one player over a whole rating period (the paper's step 2), with
/// skillratings: all games are taken at once against the opponents' ratings
/// as they were at the start of the period. `rd` must already include the
/// growth for the time away (step 1), so the crate's own one-period growth
/// is turned off (`c = 0`); it caps `rd` at [`MAX_RD`]. Returns the new
/// (rating, RD); with no games the player is unchanged.
pub fn rate_period(rating: f64, rd: f64, games: &[GlickoGame]) -> (f64, f64) {
    if games.is_empty() {
        return (rating, rd);
    }
    let results: Vec<(GlickoRating, Outcomes)> = games
        .iter()
        .map(|game| {
            let opponent = GlickoRating {
                rating: game.rating,
                deviation: game.rd,
            };
            (opponent, game.outcome())
        })
        .collect();
    let player = GlickoRating {
        rating,
        deviation: rd,
    };
    let new = glicko_rating_period(&player, &results, &GlickoConfig { c: 0.0 });
    (new.rating, new.deviation)
}

/// Rating and RD of the one opponent that stands for a team: mean rating,
/// root-mean-square RD.
pub fn composite(team: &[(f64, f64)]) -> (f64, f64) {
    if team.is_empty() {
        return (0.0, 0.0);
    }
    let n = team.len() as f64;
    let rating = team.iter().map(|&(r, _)| r).sum::<f64>() / n;
    let rd = (team.iter().map(|&(_, d)| d * d).sum::<f64>() / n).sqrt();
    (rating, rd)
}

/// A player's RD at `now` in a Glicko system: grown for the time since
/// `last_played`, counted in `period`s with fractions, by `step` per root
/// period (Glicko-1's `c`, Glicko-2's 173.7178·σ), up to `max_rd`. A
/// deviation already above the cap (set by hand) is kept, never pulled down
/// by the mere passing of time.
pub(crate) fn idle_rd(
    r: &Rating,
    now: SimTime,
    period: SimDuration,
    step: f64,
    max_rd: f64,
) -> f64 {
    match r.last_played {
        None => r.deviation,
        Some(then) => {
            let periods = now.since(then).as_ms() as f64 / period.as_ms() as f64;
            grown_rd(r.deviation, step, periods, max_rd.max(r.deviation))
        }
    }
}

/// The composite opponent a team makes at `now`, members' RDs grown by
/// `rd_now`.
pub(crate) fn team_composite(team: &[Rating], rd_now: impl Fn(&Rating) -> f64) -> (f64, f64) {
    let members: Vec<(f64, f64)> = team.iter().map(|r| (r.value, rd_now(r))).collect();
    composite(&members)
}

/// One match through a Glicko system, shared by Glicko-1 and Glicko-2: each
/// team plays `games_of` against the other teams' composite opponents (all
/// taken before anyone moves); `rate` rewrites each member of a team that
/// played, given their RD at `now` and those games; then the member is
/// stamped.
pub(crate) fn update_teams(
    teams: &mut [Vec<Rating>],
    winner: usize,
    now: SimTime,
    rd_now: impl Fn(&Rating) -> f64,
    rate: impl Fn(&mut Rating, f64, &[GlickoGame]),
) {
    let composites: Vec<(f64, f64)> = teams.iter().map(|t| team_composite(t, &rd_now)).collect();
    let n = teams.len();
    for (i, team) in teams.iter_mut().enumerate() {
        let games: Vec<GlickoGame> = games_of(i, winner, n)
            .into_iter()
            .map(|(j, score)| GlickoGame {
                rating: composites[j].0,
                rd: composites[j].1,
                score,
            })
            .collect();
        if games.is_empty() {
            continue;
        }
        for r in team.iter_mut() {
            let rd = rd_now(r);
            rate(r, rd, &games);
            stamp(r, now);
        }
    }
}

/// Glickman's worked example, shared by both systems' tests: a 1500 / RD
/// 200 player beats 1400/30, loses to 1550/100 and to 1700/300.
#[cfg(test)]
pub(crate) const PAPER_GAMES: [GlickoGame; 3] = [
    GlickoGame {
        rating: 1400.0,
        rd: 30.0,
        score: 1.0,
    },
    GlickoGame {
        rating: 1550.0,
        rd: 100.0,
        score: 0.0,
    },
    GlickoGame {
        rating: 1700.0,
        rd: 300.0,
        score: 0.0,
    },
];

/// The Glicko-1 system with its parameters.
#[derive(Clone, Debug)]
pub struct Glicko1 {
    params: Glicko1Params,
}

impl Glicko1 {
    /// A Glicko-1 system with these parameters (validated).
    pub fn new(params: Glicko1Params) -> Self {
        Glicko1 { params }
    }

    fn rd_now(&self, r: &Rating, now: SimTime) -> f64 {
        idle_rd(
            r,
            now,
            self.params.period.0,
            self.params.c,
            self.params.initial_rd,
        )
    }
}

impl RatingSystem for Glicko1 {
    fn initial(&self) -> Rating {
        Rating::new(self.params.initial, self.params.initial_rd, 0.0)
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
            let (value, new_rd) = rate_period(r.value, rd, games);
            r.value = blend(r.value, value, weight);
            r.deviation = blend(rd, new_rd, weight);
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
        PAPER_GAMES
    }

    /// The paper's g(RD), transcribed, for checking the intermediate values.
    fn g(rd: f64) -> f64 {
        let q = std::f64::consts::LN_10 / 400.0;
        1.0 / (1.0 + 3.0 * q * q * rd * rd / (std::f64::consts::PI.powi(2))).sqrt()
    }

    /// The paper's E against one opponent: skillratings' prediction with
    /// the player's own RD at 0 (so only the opponent's RD dampens it).
    fn expected_score(rating: f64, opponent: f64, opponent_rd: f64) -> f64 {
        win_probability(rating, 0.0, opponent, opponent_rd)
    }

    /// Glickman's worked example (glicko.pdf, section 3): a 1500/RD 200
    /// player beats 1400/30, loses to 1550/100 and to 1700/300. The paper
    /// gives g = 0.9955, 0.9531, 0.7242; E = 0.639, 0.432, 0.303;
    /// d² = 53670.85 (from rounded intermediates); r' = 1464, RD' = 151.4.
    ///
    /// Full precision, recomputed in Python straight from the paper's
    /// formulas with q = ln 10 / 400:
    /// g = 0.9954980060779481, 0.953148974234587, 0.7242354637384434
    /// E = 0.639467736007921, 0.43184235355955686, 0.30284072524764
    /// d² = 53685.74290197874
    /// r' = 1464.1064627569112, RD' = 151.39890244796933.
    #[test]
    fn reproduces_glickmans_worked_example() {
        assert!((g(30.0) - 0.9954980060779481).abs() < 1e-12);
        assert!((g(300.0) - 0.7242354637384434).abs() < 1e-12);
        assert!((expected_score(1500.0, 1550.0, 100.0) - 0.43184235355955686).abs() < 1e-12);

        let (r, rd) = rate_period(1500.0, 200.0, &paper_games());
        assert!((r - 1464.1064627569112).abs() < 1e-6, "{r}");
        assert!((rd - 151.39890244796933).abs() < 1e-6, "{rd}");
        // The paper's rounded figures.
        assert!((r - 1464.1).abs() < 0.1, "{r}");
        assert!((rd - 151.4).abs() < 0.1, "{rd}");
    }

    /// The update used to be hand-written from the paper; it is now
    /// skillratings'. This is the old formula, kept as the oracle: on the
    /// paper's example and on one-game periods across the range the two
    /// agree to rounding.
    fn papers_formula(rating: f64, rd: f64, games: &[GlickoGame]) -> (f64, f64) {
        let q = std::f64::consts::LN_10 / 400.0;
        let mut inv_d2 = 0.0;
        let mut surprise = 0.0;
        for game in games {
            let g = g(game.rd);
            let e = 1.0 / (1.0 + 10f64.powf(-g * (rating - game.rating) / 400.0));
            inv_d2 += g * g * e * (1.0 - e);
            surprise += g * (game.score - e);
        }
        inv_d2 *= q * q;
        let precision = 1.0 / (rd * rd) + inv_d2;
        (rating + q / precision * surprise, (1.0 / precision).sqrt())
    }

    #[test]
    fn skillratings_agrees_with_the_papers_formula() {
        let (r, rd) = rate_period(1500.0, 200.0, &paper_games());
        let (r0, rd0) = papers_formula(1500.0, 200.0, &paper_games());
        assert!((r - r0).abs() < 1e-9 && (rd - rd0).abs() < 1e-9);
        for rating in [900.0, 1500.0, 2300.0] {
            for rd in [30.0, 120.0, 350.0] {
                for game in paper_games() {
                    for score in [0.0, 0.5, 1.0] {
                        let game = [GlickoGame { score, ..game }];
                        let (r, d) = rate_period(rating, rd, &game);
                        let (r0, d0) = papers_formula(rating, rd, &game);
                        assert!((r - r0).abs() < 1e-9, "{rating} {rd} {game:?}");
                        assert!((d - d0).abs() < 1e-9, "{rating} {rd} {game:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_one_on_one_match_is_the_papers_one_game_period() {
        let system = Glicko1::new(Glicko1Params::default());
        let now = SimTime::from_ms(3 * DAY_MS);
        let mut teams = vec![
            vec![Rating::new(1500.0, 200.0, 0.0)],
            vec![Rating::new(1400.0, 30.0, 0.0)],
        ];
        system.update(&mut teams, 0, 1.0, now);
        let (r, rd) = rate_period(1500.0, 200.0, &[paper_games()[0]]);
        assert!((teams[0][0].value - r).abs() < 1e-12);
        assert!((teams[0][0].deviation - rd).abs() < 1e-12);
        let (r2, rd2) = rate_period(
            1400.0,
            30.0,
            &[GlickoGame {
                rating: 1500.0,
                rd: 200.0,
                score: 0.0,
            }],
        );
        assert!((teams[1][0].value - r2).abs() < 1e-12);
        assert!((teams[1][0].deviation - rd2).abs() < 1e-12);
        for r in teams.iter().flatten() {
            assert_eq!(r.games, 1);
            assert_eq!(r.last_played, Some(now));
        }
    }

    /// Glickman: c = sqrt((350² - 50²) / 100) = 34.6 brings a typical RD of
    /// 50 back to the 350 of a new player in 100 periods:
    /// sqrt(50² + 34.6² · 100) = 349.59405029262155.
    #[test]
    fn rd_grows_back_to_350_in_100_periods_and_stops_there() {
        assert!(((350f64 * 350.0 - 50.0 * 50.0) / 100.0).sqrt() - 34.64 < 0.01);
        let system = Glicko1::new(Glicko1Params::default());
        let mut r = Rating::new(1700.0, 50.0, 0.0);
        r.last_played = Some(SimTime::from_ms(DAY_MS));
        let later = |days: f64| SimTime::from_ms(DAY_MS + (days * DAY_MS as f64) as u64);

        assert_eq!(system.current(&r, later(0.0)).deviation, 50.0);
        let rd = system.current(&r, later(100.0)).deviation;
        assert!((rd - 349.59405029262155).abs() < 1e-9, "{rd}");
        assert_eq!(system.current(&r, later(101.0)).deviation, 350.0);
        assert_eq!(system.current(&r, later(10_000.0)).deviation, 350.0);
        // Half a period counts as half: sqrt(50² + 34.6² / 2).
        let rd = system.current(&r, later(0.5)).deviation;
        assert!((rd - (2500.0f64 + 34.6 * 34.6 / 2.0).sqrt()).abs() < 1e-9);
        // current() leaves everything but the deviation alone.
        let c = system.current(&r, later(3.0));
        assert_eq!(
            (c.value, c.games, c.last_played),
            (r.value, r.games, r.last_played)
        );
    }

    #[test]
    fn the_period_sets_the_time_unit_of_growth() {
        let system = Glicko1::new(Glicko1Params {
            period: HumanDuration(SimDuration::from_secs(3_600)),
            ..Glicko1Params::default()
        });
        let mut r = Rating::new(1500.0, 50.0, 0.0);
        r.last_played = Some(SimTime::ZERO);
        // 100 hours is 100 periods of one hour.
        let rd = system
            .current(&r, SimTime::from_ms(100 * 3_600_000))
            .deviation;
        assert!((rd - 349.59405029262155).abs() < 1e-9);
    }

    #[test]
    fn update_uses_the_grown_rd() {
        let system = Glicko1::new(Glicko1Params::default());
        let mut stale = Rating::new(1500.0, 50.0, 0.0);
        stale.last_played = Some(SimTime::ZERO);
        let now = SimTime::from_ms(100 * DAY_MS);
        let mut teams = vec![vec![stale], vec![Rating::new(1500.0, 50.0, 0.0)]];
        system.update(&mut teams, 0, 1.0, now);
        let opponent = GlickoGame {
            rating: 1500.0,
            rd: 50.0,
            score: 1.0,
        };
        let (r, rd) = rate_period(1500.0, 349.59405029262155, &[opponent]);
        assert!((teams[0][0].value - r).abs() < 1e-6);
        assert!((teams[0][0].deviation - rd).abs() < 1e-6);
        // A player back after 100 days moves far more than a regular.
        assert!(teams[0][0].value - 1500.0 > 10.0 * (1500.0 - teams[1][0].value));
    }

    #[test]
    fn teams_meet_a_composite_opponent() {
        assert_eq!(
            composite(&[(1400.0, 30.0), (1600.0, 40.0)]),
            (1500.0, 1250f64.sqrt())
        );
        let system = Glicko1::new(Glicko1Params::default());
        let mut teams = vec![
            vec![
                Rating::new(1450.0, 100.0, 0.0),
                Rating::new(1550.0, 300.0, 0.0),
            ],
            vec![
                Rating::new(1400.0, 30.0, 0.0),
                Rating::new(1600.0, 40.0, 0.0),
            ],
        ];
        system.update(&mut teams, 1, 1.0, SimTime::ZERO);
        let opp = GlickoGame {
            rating: 1500.0,
            rd: 1250f64.sqrt(),
            score: 0.0,
        };
        let (r, rd) = rate_period(1550.0, 300.0, &[opp]);
        assert!((teams[0][1].value - r).abs() < 1e-12);
        assert!((teams[0][1].deviation - rd).abs() < 1e-12);
        // The uncertain member loses more than the settled one.
        assert!(1550.0 - teams[0][1].value > 1450.0 - teams[0][0].value);
        let opp = GlickoGame {
            rating: 1500.0,
            rd: 50_000f64.sqrt(),
            score: 1.0,
        };
        let (r, _) = rate_period(1400.0, 30.0, &[opp]);
        assert!((teams[1][0].value - r).abs() < 1e-12);
    }

    #[test]
    fn weight_scales_both_rating_and_rd_changes() {
        let system = Glicko1::new(Glicko1Params::default());
        let start = vec![vec![system.initial()], vec![system.initial()]];
        let mut full = start.clone();
        let mut half = start;
        system.update(&mut full, 0, 1.0, SimTime::ZERO);
        system.update(&mut half, 0, 0.5, SimTime::ZERO);
        assert!(((half[0][0].value - 1500.0) * 2.0 - (full[0][0].value - 1500.0)).abs() < 1e-9);
        assert!(
            ((350.0 - half[1][0].deviation) * 2.0 - (350.0 - full[1][0].deviation)).abs() < 1e-9
        );
        // skillratings' own first game from 1500/350 each: 1662.2 after a win (it rounds to 1662).
        assert!(
            (full[0][0].value - 1662.2120026057648).abs() < 1e-6,
            "{}",
            full[0][0].value
        );
    }

    #[test]
    fn win_probability_is_the_papers_prediction_and_sums_to_one() {
        let system = Glicko1::new(Glicko1Params::default());
        let a = [Rating::new(1700.0, 300.0, 0.0)];
        let b = [Rating::new(1500.0, 50.0, 0.0)];
        let p = system.win_probability(&a, &b, SimTime::ZERO);
        let q = system.win_probability(&b, &a, SimTime::ZERO);
        assert!((p + q - 1.0).abs() < 1e-12);
        let expected = 1.0 / (1.0 + 10f64.powf(-g(304.138_126_514_911) * 200.0 / 400.0));
        assert!((p - expected).abs() < 1e-9);
        // Uncertainty pulls the prediction toward a coin flip.
        let sure = [Rating::new(1700.0, 30.0, 0.0)];
        assert!(system.win_probability(&sure, &b, SimTime::ZERO) > p);
    }

    #[test]
    fn bad_parameters_name_their_key() {
        let bad = |p: Glicko1Params| p.validate().unwrap_err().key;
        let d = Glicko1Params::default;
        assert_eq!(bad(Glicko1Params { c: -1.0, ..d() }), "c");
        assert_eq!(
            bad(Glicko1Params {
                initial_rd: 351.0,
                ..d()
            }),
            "initial_rd"
        );
        assert_eq!(
            bad(Glicko1Params {
                initial_rd: 0.0,
                ..d()
            }),
            "initial_rd"
        );
        assert_eq!(
            bad(Glicko1Params {
                period: HumanDuration::from_secs(0),
                ..d()
            }),
            "period"
        );
        assert_eq!(
            bad(Glicko1Params {
                initial: f64::NAN,
                ..d()
            }),
            "initial"
        );
        assert!(Glicko1Params { c: 0.0, ..d() }.validate().is_ok());
    }
}
