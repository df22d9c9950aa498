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
    /// How long the match lasted, in simulated time.
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
    /// Draws the winner and the duration.
    pub winner: Pcg64,
    /// Draws the gold timeline (`[outcome.gold]`).
    pub gold: Pcg64,
    /// Draws the battle (`[outcome.battle]`).
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
    /// Plays one match between `teams` (their members' skills), drawing only from `rngs`.
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
