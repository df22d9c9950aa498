//! Rating systems: how the matchmaker's estimate of each player moves after
//! a game. The engine owns the ratings; a system only rewrites the copies it
//! is handed.

use crate::model::{ParamError, PerTeam, Rating, SimTime};

/// A rating system. The engine calls `update` once per finished match, after
/// the outcome is known, with the pre-match ratings of every player grouped by
/// team; the system rewrites them in place. It must not depend on anything but
/// its arguments and its own parameters (no randomness, no hidden state), so a
/// rerun gives the same ratings.
pub trait RatingSystem: Send + Sync {
    /// Rating of a player who has never played.
    fn initial(&self) -> Rating;

    /// The rating as the matchmaker should see it at `now` (Glicko grows the
    /// deviation with time since the last game). Does not change `r`.
    fn current(&self, r: &Rating, _now: SimTime) -> Rating {
        *r
    }

    /// Rewrites `teams[i][j]`, the rating of member j of team i, after a match
    /// that team `winner` won. `weight` in (0, 1] scales every change (a match
    /// made by relaxing a rating, as in virtual-rating decay, counts for less).
    fn update(&self, teams: &mut [Vec<Rating>], winner: usize, weight: f64, now: SimTime);

    /// The system's own prediction that team `a` beats team `b`.
    fn win_probability(&self, a: &[Rating], b: &[Rating], now: SimTime) -> f64;
}

crate::model::registry::plugins! {
    /// The `[rating]` section of a scenario: which system, and its parameters
    /// beside the `system` key, e.g. `system = "glicko1"`, `c = 34.6`,
    /// `period = "1d"`.
    pub enum RatingConfig tagged "system" builds RatingSystem, catalogue CATALOGUE {
        "elo" => Elo(elo::EloParams) builds Elo,
        "glicko1" => Glicko1(glicko1::Glicko1Params) builds Glicko1,
        "glicko2" => Glicko2(glicko2::Glicko2Params) builds Glicko2,
        "trueskill" => Trueskill(trueskill::TrueSkillParams) builds TrueSkill,
        "win-rate" => WinRate(win_rate::WinRateParams) builds WinRate,
    }
}

/// Glicko-1 with its defaults, because it is what the gamedev 1v1 thread uses.
impl Default for RatingConfig {
    fn default() -> Self {
        RatingConfig::Glicko1(Glicko1Params::default())
    }
}

impl RatingConfig {
    /// Checks every parameter; the error's key is relative to `[rating]`.
    pub fn validate(&self) -> Result<(), ParamError> {
        self.validate_params()
    }
}

/// Marks a rating as having played one more game, at `now`.
pub(crate) fn stamp(r: &mut Rating, now: SimTime) {
    r.games = r.games.saturating_add(1);
    r.last_played = Some(now);
}

/// `old + weight * (new - old)`: how every system applies a partial weight.
pub(crate) fn blend(old: f64, new: f64, weight: f64) -> f64 {
    old + weight * (new - old)
}

/// The games a match stands for, seen from team `i`: `(opponent team,
/// score)`. Two teams play one game. With more, the winner is taken to have
/// beaten every other team and each other team to have lost to the winner;
/// losers are not ranked among themselves because the engine reports only a
/// winner. An out-of-range `winner` yields no games, so nothing moves.
pub(crate) fn games_of(i: usize, winner: usize, n_teams: usize) -> PerTeam<(usize, f64)> {
    if winner >= n_teams || i >= n_teams {
        PerTeam::new()
    } else if i == winner {
        (0..n_teams).filter(|&j| j != i).map(|j| (j, 1.0)).collect()
    } else {
        smallvec::smallvec![(winner, 0.0)]
    }
}

/// Mean of the ratings' values; 0 for an empty team so a malformed match
/// cannot produce NaN.
pub(crate) fn mean_value(team: &[Rating]) -> f64 {
    if team.is_empty() {
        0.0
    } else {
        team.iter().map(|r| r.value).sum::<f64>() / team.len() as f64
    }
}

/// The shared range checks, under the names the systems' files use.
pub(crate) use crate::model::check::{
    finite as check_finite, non_negative as check_non_negative, positive as check_positive,
};

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<RatingConfig, toml::de::Error> {
        toml::from_str(text)
    }

    #[test]
    fn each_system_is_selected_by_its_kebab_case_name() {
        for (name, text) in [
            ("elo", "system = \"elo\"\nk = 16"),
            ("glicko1", "system = \"glicko1\"\nc = 34.6\nperiod = \"1d\""),
            ("glicko2", "system = \"glicko2\"\ntau = 0.5"),
            (
                "trueskill",
                "system = \"trueskill\"\ncalibration_games = 10",
            ),
            ("win-rate", "system = \"win-rate\"\nprior_games = 20"),
        ] {
            let cfg = parse(text).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(cfg.name(), name);
            cfg.validate().unwrap();
            let system = cfg.build();
            let r = system.initial();
            assert_eq!(r.games, 0);
            assert!(r.last_played.is_none());
        }
    }

    #[test]
    fn a_section_with_only_the_system_key_takes_every_default() {
        assert_eq!(
            parse("system = \"glicko1\"").unwrap(),
            RatingConfig::Glicko1(Glicko1Params::default())
        );
        assert_eq!(
            parse("system = \"elo\"").unwrap(),
            RatingConfig::Elo(EloParams::default())
        );
    }

    #[test]
    fn unknown_keys_and_systems_are_refused() {
        let err = parse("system = \"elo\"\nkfactor = 16").unwrap_err();
        assert!(err.to_string().contains("kfactor"), "{err}");
        // A key of another system is as unknown as a typo.
        assert!(parse("system = \"elo\"\nc = 34.6").is_err());
        assert!(parse("system = \"glicko3\"").is_err());
        assert!(parse("k = 16").is_err());
    }

    #[test]
    fn config_round_trips_through_toml() {
        let cfg = parse("system = \"glicko1\"\nc = 20.0\nperiod = \"12h\"").unwrap();
        let text = toml::to_string(&cfg).unwrap();
        assert_eq!(parse(&text).unwrap(), cfg);
    }

    #[test]
    fn validate_names_the_key_relative_to_the_section() {
        let cfg = parse("system = \"elo\"\nk = -1").unwrap();
        let err = cfg.validate().unwrap_err();
        assert_eq!(err.key, "k");
        assert!(err.message.contains("-1"), "{}", err.message);
    }

    mod properties {
        use super::super::*;
        use proptest::prelude::*;

        fn all_systems() -> Vec<Box<dyn RatingSystem>> {
            [
                RatingConfig::Elo(EloParams::default()),
                RatingConfig::Glicko1(Glicko1Params::default()),
                RatingConfig::Glicko2(Glicko2Params::default()),
                RatingConfig::Trueskill(TrueSkillParams::default()),
                RatingConfig::WinRate(WinRateParams::default()),
            ]
            .iter()
            .map(|c| c.build())
            .collect()
        }

        fn team(values: &[f64], last: u64) -> Vec<Rating> {
            values
                .iter()
                .map(|&v| Rating {
                    value: v,
                    deviation: 50.0 + v % 250.0,
                    volatility: 0.06,
                    games: (v as u32) % 15,
                    last_played: Some(SimTime::from_ms(last)),
                })
                .collect()
        }

        proptest! {
            /// For every system: predictions are probabilities that sum to
            /// one over the two orders, winners never lose rating and losers
            /// never gain, every player is stamped, and a rerun gives the
            /// same bits.
            #[test]
            fn every_system_behaves(
                a in prop::collection::vec(1.0f64..99.0, 1..6),
                b in prop::collection::vec(1.0f64..99.0, 1..6),
                winner in 0usize..2,
                weight in 0.05f64..=1.0,
                last in 0u64..1_000_000,
                gap in 0u64..1_000_000_000,
            ) {
                // Values in (1, 99) are valid win rates; the other systems
                // get them spread onto the 1000-2000 rating scale.
                let now = SimTime::from_ms(last + gap);
                for (k, system) in all_systems().into_iter().enumerate() {
                    let place = |v: &f64| if k == 4 { *v } else { 1000.0 + 10.0 * v };
                    let a: Vec<f64> = a.iter().map(place).collect();
                    let b: Vec<f64> = b.iter().map(place).collect();
                    let start = vec![team(&a, last), team(&b, last)];
                    let p = system.win_probability(&start[0], &start[1], now);
                    let q = system.win_probability(&start[1], &start[0], now);
                    prop_assert!((0.0..=1.0).contains(&p));
                    prop_assert!((p + q - 1.0).abs() < 1e-9, "system {k}: {p} + {q}");

                    let mut once = start.clone();
                    let mut twice = start.clone();
                    system.update(&mut once, winner, weight, now);
                    system.update(&mut twice, winner, weight, now);
                    prop_assert_eq!(&once, &twice);
                    for (i, t) in once.iter().enumerate() {
                        for (r, before) in t.iter().zip(&start[i]) {
                            prop_assert_eq!(r.games, before.games + 1);
                            prop_assert_eq!(r.last_played, Some(now));
                            prop_assert!(r.value.is_finite() && r.deviation.is_finite());
                            if i == winner {
                                prop_assert!(r.value >= before.value, "system {k}");
                            } else {
                                prop_assert!(r.value <= before.value, "system {k}");
                            }
                        }
                    }
                }
            }
        }
    }
}
