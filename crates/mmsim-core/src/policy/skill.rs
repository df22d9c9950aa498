//! The EOMM paper's skill-based baseline (Chen et al., WWW 2017, section
//! 5): each tick the waiting solo tickets are sorted by rating and paired
//! with their neighbours, (1st, 2nd), (3rd, 4th), ...: the closest ratings
//! the whole pool allows at once, with no window and no wait. Beside
//! `eomm`, `random` and `worst` it is the paper's comparison.

use super::Explain;
use super::{rounds, PoolView, Proposal, Rule, Schedule, Stateless, Trigger};
use crate::model::{check, HumanDuration, ParamError};
use rand_pcg::Pcg64;
use serde::{Deserialize, Serialize};

/// Parameters of `kind = "skill"`: the EOMM paper's skill-based baseline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SkillParams {
    /// Time between rounds.
    pub tick: HumanDuration,
}

impl Default for SkillParams {
    fn default() -> Self {
        SkillParams {
            tick: HumanDuration::from_secs(2),
        }
    }
}

impl SkillParams {
    /// Where the policy comes from, for `mmsim policies`.
    pub const SOURCE: &str =
        "Chen et al., EOMM (WWW 2017), its skill baseline: each tick, sort the solo tickets by rating and pair neighbours";
    /// Its keys, for `mmsim policies`.
    pub const PARAMETERS: &str = "tick";

    /// Checks every parameter; keys are relative to `[policy]`.
    pub fn validate(&self) -> Result<(), ParamError> {
        check::interval("tick", self.tick.0)
    }
}

/// The `skill` policy: its parameters are all it needs.
pub type Skill = Stateless<SkillParams>;

impl Rule for SkillParams {
    fn schedule(&self) -> Schedule {
        Schedule {
            on_join: false,
            tick: Some(self.tick.0),
        }
    }

    fn propose(
        &self,
        view: &PoolView<'_>,
        trigger: Trigger,
        _rng: &mut Pcg64,
        out: &mut Vec<Proposal>,
    ) {
        if trigger != Trigger::Tick {
            return;
        }
        let sorted = rounds::round_tickets(view);
        rounds::emit(&sorted, &rounds::neighbours(sorted.len()), out);
    }
}

/// Nothing to say for `--explain` beyond the rules the engine knows.
impl Explain for SkillParams {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testkit::{pair, Harness};

    /// Neighbours in rating order, whatever the gap (300 and 500 points
    /// here); with an odd pool the newest ticket (4, rated 1010) waits,
    /// not the top or bottom one.
    #[test]
    fn neighbours_by_rating_pair_and_the_newest_odd_one_waits() {
        let mut h = Harness::new(Box::new(Skill::new(SkillParams::default())));
        let ratings = [1000.0, 2400.0, 1300.0, 1900.0, 1010.0];
        h.population(&ratings);
        for (i, r) in ratings.into_iter().enumerate() {
            h.join(i as u32, r, i as f64 * 0.1);
        }
        let mut made: Vec<Vec<u32>> = h.tick(2.0).into_iter().map(pair).collect();
        made.sort();
        assert_eq!(made, vec![vec![0, 2], vec![1, 3]]);
    }
}
