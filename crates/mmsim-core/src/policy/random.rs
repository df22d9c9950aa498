//! The EOMM paper's random baseline (Chen et al., WWW 2017, section 5):
//! each tick the waiting solo tickets are shuffled (with the run's policy
//! stream) and paired in that order. What matching without any rule does:
//! the floor `skill` and `eomm` are measured against.

use super::Explain;
use super::{rounds, PoolView, Proposal, Rule, Schedule, Stateless, Trigger};
use crate::model::{check, HumanDuration, ParamError};
use rand::seq::SliceRandom;
use rand_pcg::Pcg64;
use serde::{Deserialize, Serialize};

/// Parameters of `kind = "random"`: the EOMM paper's random baseline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RandomParams {
    /// Time between rounds.
    pub tick: HumanDuration,
}

impl Default for RandomParams {
    fn default() -> Self {
        RandomParams {
            tick: HumanDuration::from_secs(2),
        }
    }
}

impl RandomParams {
    /// Where the policy comes from, for `mmsim policies`.
    pub const SOURCE: &str =
        "Chen et al., EOMM (WWW 2017), its random baseline: each tick, pair the solo tickets in a random order";
    /// Its keys, for `mmsim policies`.
    pub const PARAMETERS: &str = "tick";

    /// Checks every parameter; keys are relative to `[policy]`.
    pub fn validate(&self) -> Result<(), ParamError> {
        check::interval("tick", self.tick.0)
    }
}

/// The `random` policy: its parameters are all it needs.
pub type Random = Stateless<RandomParams>;

impl Rule for RandomParams {
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
        rng: &mut Pcg64,
        out: &mut Vec<Proposal>,
    ) {
        if trigger != Trigger::Tick {
            return;
        }
        // Shuffled from the rating order, which the pool keeps whatever the
        // joins' order, so a seed gives the same pairs.
        let mut sorted = rounds::round_tickets(view);
        sorted.shuffle(rng);
        rounds::emit(&sorted, &rounds::neighbours(sorted.len()), out);
    }
}

/// Nothing to say for `--explain` beyond the rules the engine knows.
impl Explain for RandomParams {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testkit::{pair, Harness};

    /// Every ticket of an even pool is paired once, and over many rounds
    /// the pairs are not the rating neighbours': of 200 rounds of 10
    /// tickets, the neighbour pairs (0, 1) ... are about 1 in 9 of all
    /// pairs, not all of them.
    #[test]
    fn pairs_everyone_in_a_random_order() {
        let ratings: Vec<f64> = (0..10).map(|i| 1000.0 + 100.0 * f64::from(i)).collect();
        let mut neighbour_pairs = 0;
        let mut h = Harness::new(Box::new(Random::new(RandomParams::default())));
        h.population(&ratings);
        for round in 0..200 {
            for (i, &r) in ratings.iter().enumerate() {
                h.join_player(round * 10 + i as u32, i as u32, r, f64::from(round) * 2.0);
            }
            let made: Vec<Vec<u32>> = h
                .tick(f64::from(round) * 2.0 + 1.0)
                .into_iter()
                .map(pair)
                .collect();
            assert_eq!(made.len(), 5);
            let mut seen: Vec<u32> = made.iter().flatten().map(|t| t % 10).collect();
            seen.sort_unstable();
            assert_eq!(seen, (0..10).collect::<Vec<_>>());
            neighbour_pairs += made
                .iter()
                .filter(|m| m[0] % 10 % 2 == 0 && m[1] == m[0] + 1)
                .count();
        }
        // 1000 pairs; a pair is one of the 5 neighbour pairs with chance 1/9.
        assert!((60..170).contains(&neighbour_pairs), "{neighbour_pairs}");
    }
}
