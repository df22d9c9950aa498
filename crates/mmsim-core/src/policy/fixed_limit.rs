//! The thread's first implementation: two tickets match when their ratings
//! differ by at most a fixed limit (the original poster used 150).
//!
//! "ratingDifferenceLimit = 150; ... if(abs(t1->rating - t2->rating) <=
//! ratingDifferenceLimit) MatchUp(t1, t2)". As the reply suggests, the pool is
//! walked longest-waiting first, and each ticket takes the nearest-rated
//! partner inside the limit.

use super::Explain;
use super::{propose_windows, Mode, PoolView, Proposal, Rule, Schedule, Stateless, Trigger};
use crate::model::{check, HumanDuration, ParamError, SimTime};
use crate::pool::WaitingTicket;
use rand_pcg::Pcg64;
use serde::{Deserialize, Serialize};

/// Parameters of `kind = "fixed-limit"`: the thread's fixed rating limit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FixedLimitParams {
    /// Largest rating difference allowed inside a match, in rating points.
    pub limit: f64,
    /// `event`: match as tickets join; `tick`: only every `tick`.
    pub mode: Mode,
    /// Interval between matchmaking passes in `tick` mode.
    pub tick: HumanDuration,
}

impl Default for FixedLimitParams {
    fn default() -> Self {
        FixedLimitParams {
            limit: 150.0,
            mode: Mode::Event,
            tick: HumanDuration::from_secs(1),
        }
    }
}

impl FixedLimitParams {
    /// Where the policy comes from, for `mmsim policies`.
    pub const SOURCE: &str =
        "gamedev thread, first post: pair tickets whose ratings differ by at most `limit` (150)";
    /// Its keys, for `mmsim policies`.
    pub const PARAMETERS: &str =
        "limit, mode, tick";

    /// Checks every parameter; keys are relative to `[policy]`.
    pub fn validate(&self) -> Result<(), ParamError> {
        check::non_negative("limit", self.limit)?;
        check::interval("tick", self.tick.0)
    }
}

/// The `fixed-limit` policy: its parameters are all it needs.
pub type FixedLimit = Stateless<FixedLimitParams>;

impl Rule for FixedLimitParams {
    fn schedule(&self) -> Schedule {
        match self.mode {
            // The limit never changes, so a pool that held no match still holds none
            // until someone joins: no timer needed.
            Mode::Event => Schedule {
                on_join: true,
                tick: None,
            },
            Mode::Tick => Schedule {
                on_join: false,
                tick: Some(self.tick.0),
            },
        }
    }

    fn propose(
        &self,
        view: &PoolView<'_>,
        trigger: Trigger,
        _rng: &mut Pcg64,
        out: &mut Vec<Proposal>,
    ) {
        propose_windows(
            view,
            trigger,
            |_| self.limit,
            |_, _, _| true,
            |tickets| out.push(Proposal::new(tickets)),
        )
    }
}

impl Explain for FixedLimitParams {
    fn rating_window(&self, _t: &WaitingTicket, _now: SimTime) -> Option<f64> {
        Some(self.limit)
    }
}
