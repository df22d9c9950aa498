//! Outcome models: play a formed match on the players' hidden true skill.

mod battle;
mod gold;

pub use battle::{Battle, BattleDistribution, BattleParams};
pub use gold::{gold_integral, GoldParams, GoldProcess, GoldTimeline};
pub use logistic::{logistic_win_probability, team_strength, team_win_probabilities};

use crate::model::{ParamError, SimDuration};
use rand_pcg::Pcg64;

/// One team as the outcome model sees it: hidden skills and party sizes.
#[derive(Clone, Debug)]
pub struct TeamSkills {
    /// True skill of each member.
    pub skills: Vec<f64>,
    /// Sizes of the parties on this team (sums to the team size).
    pub parties: Vec<usize>,
}

/// What happened in a match.
#[derive(Clone, Debug, PartialEq)]
pub struct MatchResult {
    /// Index of the winning team.
    pub winner: usize,
    /// The model's probability that team 0 wins (the truth, not a rating's guess).
    pub p_team0: f64,
    pub duration: SimDuration,
    /// Players left alive on the winning team, for models that fight battles.
    pub survivors: Option<u32>,
    /// The Dota balance measure: integral of |gold difference| since it last
    /// crossed zero, in gold-minutes.
    pub gold_integral: Option<f64>,
}

/// The outcome model's random streams, one per process: the winner and the
/// duration draw from `winner`, the gold timeline from `gold`, the battle
/// from `battle`. An optional process switched on or off consumes only its
/// own stream, so it changes no winner or duration, in its match or any
/// later one, for a seed.
pub struct OutcomeRngs {
    pub winner: Pcg64,
    pub gold: Pcg64,
    pub battle: Pcg64,
}

impl OutcomeRngs {
    /// Three distinct generators from one seed, for tests and tools (the
    /// engine passes its own per-purpose streams).
    pub fn from_seed(seed: u64) -> OutcomeRngs {
        use rand::SeedableRng;
        let mut seeder = Pcg64::seed_from_u64(seed);
        OutcomeRngs {
            winner: Pcg64::from_rng(&mut seeder),
            gold: Pcg64::from_rng(&mut seeder),
            battle: Pcg64::from_rng(&mut seeder),
        }
    }
}

/// An outcome model. The engine calls `play` once when a match starts, with
/// the outcome streams; the model may use only those streams and its
/// parameters, never the world.
pub trait OutcomeModel: Send + Sync {
    fn play(&self, teams: &[TeamSkills], rngs: &mut OutcomeRngs) -> MatchResult;

    /// The model's probability that team 0 wins once players have left or
    /// joined a running match: `teams` holds who is playing now and
    /// `missing[i]` how many players team i is short, each costing it
    /// `penalty` points of strength. `None` for a model that cannot say; the
    /// engine then keeps the winner it drew when the match started.
    fn p_team0_short_handed(
        &self,
        _teams: &[TeamSkills],
        _missing: &[usize],
        _penalty: f64,
    ) -> Option<f64> {
        None
    }
}

crate::model::registry::plugins! {
    /// The `[outcome]` section of a scenario.
    pub enum OutcomeConfig tagged "model" builds OutcomeModel, catalogue CATALOGUE {
        /// Winner by the logistic (Elo) model on true skill.
        "logistic" => Logistic(logistic::LogisticParams) builds LogisticOutcome,
    }
}

impl Default for OutcomeConfig {
    fn default() -> Self {
        OutcomeConfig::Logistic(LogisticParams::default())
    }
}

impl OutcomeConfig {
    /// Checks every parameter; the error's key is relative to `[outcome]`.
    pub fn validate(&self) -> Result<(), ParamError> {
        self.validate_params()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let err =
            toml::from_str::<OutcomeConfig>("model = \"logistic\"\n[battle]\nhitpoints = 2\n")
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
}
