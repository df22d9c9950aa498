//! The EOMM paper's worst-case baseline (Chen et al., WWW 2017, section
//! 5): `eomm` turned round, pairing each round's pool to maximise the
//! summed predicted churn. No one would ship it; it bounds from below what
//! matchmaking can do to engagement, as EOMM bounds it from above.
//!
//! It needs `[engagement]` (its model) and a 1v1 format, as `eomm` does.

use super::eomm::churn_round;
use super::{Policy, PoolView, Proposal, Schedule, Trigger};
use crate::model::churn::{Churn, ChurnModel};
use crate::model::{check, HumanDuration, ParamError};
use rand_pcg::Pcg64;
use serde::{Deserialize, Serialize};

/// Parameters of `kind = "worst"`: the EOMM paper's worst-case baseline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WorstParams {
    /// Time between rounds.
    pub tick: HumanDuration,
    /// Elo scale of the predicted win probability, as `eomm`'s.
    pub rating_scale: f64,
}

impl Default for WorstParams {
    fn default() -> Self {
        WorstParams {
            tick: HumanDuration::from_secs(2),
            rating_scale: 400.0,
        }
    }
}

impl WorstParams {
    /// Where the policy comes from, for `mmsim policies`.
    pub const SOURCE: &str =
        "Chen et al., EOMM (WWW 2017), its worst baseline: each tick, pair the solo tickets to maximise the summed predicted churn (needs [engagement])";
    /// Its keys, for `mmsim policies`.
    pub const PARAMETERS: &str = "tick, rating_scale";

    /// Checks every parameter; keys are relative to `[policy]`.
    pub fn validate(&self) -> Result<(), ParamError> {
        check::interval("tick", self.tick.0)?;
        check::positive("rating_scale", self.rating_scale)?;
        check::finite("rating_scale", self.rating_scale)
    }
}

/// The `worst` policy: its parameters and the churn model it predicts with.
pub struct Worst {
    params: WorstParams,
    model: Churn,
    weights: Vec<f64>,
}

impl Worst {
    /// With the default engagement model (the scenario builds it
    /// `with_model`, from its `[engagement]`).
    pub fn new(params: WorstParams) -> Self {
        Worst::with_model(params, Churn::Logistic(ChurnModel::default()))
    }

    /// The policy for these parameters, predicting churn with `model`.
    pub fn with_model(params: WorstParams, model: Churn) -> Self {
        Worst {
            params,
            model,
            weights: Vec::new(),
        }
    }
}

/// The k-th lowest of `n` with the k-th above the median.
fn lopsided(n: usize) -> Vec<(usize, usize)> {
    (0..n / 2).map(|k| (k, k + n / 2)).collect()
}

impl Policy for Worst {
    fn schedule(&self) -> Schedule {
        Schedule {
            on_join: false,
            tick: Some(self.params.tick.0),
        }
    }

    fn propose(
        &mut self,
        view: &PoolView<'_>,
        trigger: Trigger,
        _rng: &mut Pcg64,
        out: &mut Vec<Proposal>,
    ) {
        if trigger != Trigger::Tick {
            return;
        }
        // Least of the negated churn is most churn. The search starts from
        // the most lopsided pairing (the k-th lowest rating with the k-th
        // above the median), nearer the aim than neighbours.
        let scale = self.params.rating_scale;
        churn_round(&self.model, scale, -1.0, lopsided, &mut self.weights, view, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::churn::{Recent, SequenceChurn};
    use crate::policy::eomm::{Eomm, EommParams, Graph};
    use crate::policy::testkit::{pair, Harness};

    fn table() -> Churn {
        Churn::Sequence(SequenceChurn::new([
            ("W", 0.02),
            ("L", 0.05),
            ("LL", 0.10),
            ("LLL", 0.20),
        ]))
    }

    /// Four players, 1500 and 1490 (player 0 two losses down), 1300 and
    /// 1310. By hand (Elo scale 400; churn p(W) = 0.02, p(L) = 0.05 for the
    /// fresh players, 0.02 and p(LLL) = 0.20 for player 0): (0, 2) (1, 3)
    /// gives player 0 P(win) = 0.760, and the four chances sum to 0.0633,
    /// 0.0428, 0.0279 and 0.0421: 0.176; (0, 3) (1, 2) sums to 0.178; the
    /// rating neighbours (0, 1) (2, 3) to 0.1074, 0.0354 and 0.07: 0.213.
    /// EOMM on the complete graph takes the first, the worst matcher the
    /// last.
    #[test]
    fn eomm_and_worst_pair_the_same_pool_in_opposite_ways() {
        let ratings = [1500.0, 1490.0, 1300.0, 1310.0];
        let run = |policy: Box<dyn Policy>| {
            let mut h = Harness::new(policy);
            h.population(&ratings);
            h.players[0].recent = Recent::parse("LL").unwrap();
            for (i, r) in ratings.into_iter().enumerate() {
                h.join(i as u32, r, 0.0);
            }
            let mut made: Vec<Vec<u32>> = h.tick(2.0).into_iter().map(pair).collect();
            made.sort();
            made
        };
        let eomm = EommParams {
            graph: Graph::Complete,
            ..EommParams::default()
        };
        let best = run(Box::new(Eomm::with_model(eomm, table())));
        assert_eq!(best, vec![vec![0, 2], vec![1, 3]]);
        let worst = run(Box::new(Worst::with_model(WorstParams::default(), table())));
        assert_eq!(worst, vec![vec![0, 1], vec![2, 3]]);
    }
}
