//! Moved from mmsim-core's `outcome/mod.rs`: these checks build their world from
//! scenario text, which only this crate reads.

#![allow(unused_imports)]
use mmsim_core::outcome::*;
use mmsim_scenario::FromScenario;

#[test]
fn the_outcome_section_parses_with_gold_and_battle_tables() {
    let text = r#"
        model = "logistic"
        scale = 400.0
        duration = "35m"

        [gold]
        step = "1m"
        volatility = 700
        snowball = 0.04

        [battle]
        hit_points = 3
    "#;
    let config: OutcomeConfig = toml::from_str(text).unwrap();
    let OutcomeConfig::Logistic(p) = &config;
    assert_eq!(p.duration.secs(), 2100.0);
    let gold = p.gold.as_ref().unwrap();
    assert_eq!(gold.step.secs(), 60.0);
    assert_eq!(gold.volatility, 700.0);
    assert_eq!(gold.snowball, 0.04);
    let battle = p.battle.as_ref().unwrap();
    assert_eq!(battle.hit_points, 3);
    // Keys left out take their defaults.
    assert_eq!(battle.snowball, BattleParams::default().snowball);
    assert!(config.validate().is_ok());

    // Without the tables, no timeline and no battle.
    let plain: OutcomeConfig = toml::from_str("model = \"logistic\"").unwrap();
    assert_eq!(plain, OutcomeConfig::default());
}

#[test]
fn the_outcome_section_reads_as_a_scenario_writes_it() {
    #[derive(serde::Deserialize)]
    struct Scenario {
        outcome: OutcomeConfig,
    }
    let text = "[outcome]\nmodel = \"logistic\"\n\n[outcome.gold]\nsnowball = 0.1\n\n[outcome.battle]\nsnowball = 1.6\n";
    let s: Scenario = toml::from_str(text).unwrap();
    let OutcomeConfig::Logistic(p) = s.outcome;
    assert_eq!(p.gold.unwrap().snowball, 0.1);
    assert_eq!(p.battle.unwrap().snowball, 1.6);
}

#[test]
fn unknown_keys_inside_the_tables_are_refused_by_name() {
    let err = toml::from_str::<OutcomeConfig>("model = \"logistic\"\n[gold]\nsnowbal = 0.1\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("snowbal"), "{err}");
    let err = toml::from_str::<OutcomeConfig>("model = \"logistic\"\n[battle]\nhitpoints = 2\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("hitpoints"), "{err}");
}

#[test]
fn out_of_range_sub_table_values_are_reported_with_their_dotted_key() {
    let config: OutcomeConfig =
        toml::from_str("model = \"logistic\"\n[gold]\nsnowball = 3.0\n").unwrap();
    assert_eq!(config.validate().unwrap_err().key, "gold.snowball");
    let config: OutcomeConfig =
        toml::from_str("model = \"logistic\"\n[battle]\nhit_points = 0\n").unwrap();
    assert_eq!(config.validate().unwrap_err().key, "battle.hit_points");
}

#[test]
fn the_tables_serialise_back_to_what_was_read() {
    let config = OutcomeConfig::Logistic(LogisticParams {
        gold: Some(GoldParams::default()),
        battle: Some(BattleParams::default()),
        ..LogisticParams::default()
    });
    let text = toml::to_string(&config).unwrap();
    assert_eq!(toml::from_str::<OutcomeConfig>(&text).unwrap(), config);
    let plain = toml::to_string(&OutcomeConfig::default()).unwrap();
    assert!(
        !plain.contains("gold") && !plain.contains("battle"),
        "{plain}"
    );
}
