//! Moved from mmsim-core's `teams/mod.rs`: these checks build their world from
//! scenario text, which only this crate reads.

#![allow(unused_imports)]
use mmsim_core::model::Player;
use mmsim_core::teams::*;
use mmsim_scenario::FromScenario;
use rand_pcg::Pcg64;

#[test]
fn toml_picks_the_method_and_fills_defaults() {
    let c: TeamsConfig = toml::from_str("method = \"abba\"\nsmoothing = false\n").unwrap();
    assert_eq!(
        c,
        TeamsConfig::Abba(AbbaParams {
            smoothing: false,
            ..AbbaParams::default()
        })
    );
    let c: TeamsConfig = toml::from_str("method = \"accelbyte\"\nmode = \"greedy\"\n").unwrap();
    assert_eq!(
        c,
        TeamsConfig::Accelbyte(AccelByteParams {
            mode: AccelByteMode::Greedy
        })
    );
    let c: TeamsConfig = toml::from_str("method = \"balanced\"\n[party_adjust]\n").unwrap();
    assert_eq!(
        c,
        TeamsConfig::Balanced(BalancedParams {
            party_adjust: Some(PartyAdjust::default()),
            ..BalancedParams::default()
        })
    );
    assert_eq!(c.name(), "balanced");
    assert_eq!(TeamsConfig::default().name(), "balanced");
}

#[test]
fn unknown_keys_and_methods_are_errors() {
    let e = toml::from_str::<TeamsConfig>("method = \"abba\"\nsmoothin = false\n").unwrap_err();
    assert!(e.to_string().contains("smoothin"), "{e}");
    let e = toml::from_str::<TeamsConfig>("method = \"roulette\"\n").unwrap_err();
    assert!(e.to_string().contains("roulette"), "{e}");
    let e = toml::from_str::<TeamsConfig>("method = \"accelbyte\"\nmode = \"best\"\n").unwrap_err();
    assert!(e.to_string().contains("best"), "{e}");
    let e = toml::from_str::<TeamsConfig>("method = \"balanced\"\n[party_adjust]\nsize = 1.0\n")
        .unwrap_err();
    assert!(e.to_string().contains("size"), "{e}");
}

#[test]
fn round_trips_through_json() {
    let c = TeamsConfig::Abba(AbbaParams::default());
    let text = serde_json::to_string(&c).unwrap();
    assert!(text.contains("\"method\":\"abba\""), "{text}");
    assert_eq!(serde_json::from_str::<TeamsConfig>(&text).unwrap(), c);
}

#[test]
fn validate_checks_the_method_against_the_format() {
    let abba = TeamsConfig::Abba(AbbaParams::default());
    assert!(abba.validate(2, 15).is_ok());
    assert_eq!(abba.validate(3, 5).unwrap_err().key, "method");
    let comb = TeamsConfig::Accelbyte(AccelByteParams {
        mode: AccelByteMode::Combination,
    });
    assert_eq!(comb.validate(2, 6).unwrap_err().key, "mode");
    assert!(TeamsConfig::default().validate(4, 3).is_ok());
    assert!(TeamsConfig::default().validate(2, 0).is_err());
}

#[test]
fn built_formers_split_a_small_match() {
    use mmsim_core::model::{PlayerId, Rating};
    use rand::SeedableRng;
    let players: Vec<Player> = (0..6)
        .map(|i| {
            Player::new(
                PlayerId(i),
                0.0,
                Rating::new(1000.0 + 100.0 * i as f64, 0.0, 0.0),
            )
        })
        .collect();
    let parties: Vec<Vec<&Player>> = vec![
        vec![&players[0], &players[1]],
        vec![&players[2]],
        vec![&players[3]],
        vec![&players[4]],
        vec![&players[5]],
    ];
    for config in [
        TeamsConfig::default(),
        TeamsConfig::Abba(AbbaParams::default()),
        TeamsConfig::Accelbyte(AccelByteParams::default()),
    ] {
        let split = config
            .build()
            .split(&parties, 2, 3, &mut Pcg64::seed_from_u64(1))
            .unwrap();
        let mut all: Vec<usize> = split.concat();
        all.sort_unstable();
        assert_eq!(all, vec![0, 1, 2, 3, 4], "{}", config.name());
        for team in &split {
            assert_eq!(team.iter().map(|&p| parties[p].len()).sum::<usize>(), 3);
        }
    }
}
