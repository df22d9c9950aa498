//! Moved from mmsim-core's `rating/mod.rs`: these checks build their world from
//! scenario text, which only this crate reads.

#![allow(unused_imports)]
use mmsim_core::model::{Rating, SimTime};
use mmsim_core::rating::*;
use mmsim_scenario::FromScenario;

fn parse(text: &str) -> Result<RatingConfig, toml::de::Error> {
    toml::from_str(text)
}

#[test]
fn each_system_is_selected_by_its_kebab_case_name() {
    let cases = [
        ("elo", "system = \"elo\"\nk = 16"),
        ("glicko1", "system = \"glicko1\"\nc = 34.6\nperiod = \"1d\""),
        ("glicko2", "system = \"glicko2\"\ntau = 0.5"),
        (
            "trueskill",
            "system = \"trueskill\"\ncalibration_games = 10",
        ),
        ("win-rate", "system = \"win-rate\"\nprior_games = 20"),
    ];
    // The list above is kept by hand: it must name every declared system.
    let named: Vec<&str> = cases.iter().map(|c| c.0).collect();
    assert_eq!(
        named,
        RatingConfig::NAMES,
        "a rating system is missing here"
    );
    for (name, text) in cases {
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
    use super::*;
    use proptest::prelude::*;

    /// Every declared system with its defaults, by name: a new one is
    /// checked here without being listed.
    fn all_systems() -> Vec<(&'static str, Box<dyn RatingSystem>)> {
        RatingConfig::defaults()
            .iter()
            .map(|c| (c.name(), c.build()))
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
            for (k, system) in all_systems() {
                // A win rate is a percentage; the other systems rate on ~1500.
                let place = |v: &f64| if k == "win-rate" { *v } else { 1000.0 + 10.0 * v };
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

/// A TrueSkill β left out comes from the scenario's outcome model and team
/// size; one given stays; modes of several team sizes must give it.
#[test]
fn a_trueskill_beta_left_out_is_derived_from_the_outcome_model() {
    use mmsim_core::rating::trueskill::logistic_beta;
    let text = include_str!("../../../../scenarios/dota2-5v5.toml");
    let path = std::path::Path::new("dota2-5v5.toml");
    let beta_of = |sets: &[&str]| {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        let s = mmsim_scenario::from_text(text, path, &sets)
            .unwrap()
            .scenario;
        match mmsim_scenario::rating_config(&s) {
            RatingConfig::Trueskill(p) => p.beta.unwrap(),
            other => panic!("{other:?}"),
        }
    };
    assert!((beta_of(&[]) - 438.313).abs() < 1e-3);
    assert_eq!(beta_of(&["outcome.scale=200"]), logistic_beta(200.0, 5));
    assert_eq!(
        beta_of(&["match.team_size=3", "arrivals.party_sizes=[1.0]"]),
        logistic_beta(400.0, 3)
    );
    assert_eq!(beta_of(&["rating.beta=300"]), 300.0);

    let modes = include_str!("../../../../scenarios/modes-ranked-casual.toml");
    let without_beta = modes.replace("beta = 300\n", "");
    assert_ne!(without_beta, modes);
    let err = match mmsim_scenario::from_text(&without_beta, path, &[]) {
        Ok(_) => panic!("modes of 5 and 1 with no beta were accepted"),
        Err(e) => e.to_string(),
    };
    assert!(err.contains("rating.beta"), "{err}");
}
