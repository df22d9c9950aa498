//! The thread's first reply: "use time in the queue to decay a player's
//! actual rating to a virtual rating. The longer they are in the queue the
//! more likely they will be matched up with whomever is the best player below
//! them ... virtual ratings would be compared to actual ratings when
//! determining a match. At the end of the match the participants ratings are
//! adjusted by the amount of time based decay that occurred to make the match
//! occur."
//!
//! A waiting ticket's virtual rating is `rating - min(rate_per_s * waited,
//! max_decay)`: it only drifts down, so the top of the ladder reaches the
//! players below it while a low ticket never reaches up. A pair forms when
//! the higher ticket's virtual rating is within `limit` of the lower's actual
//! rating. The decay the match used is what the gap exceeded the limit by,
//! and the match's rating change is scaled by
//! `1 - (1 - min_weight) * used / max_decay`. The engine applies one weight
//! to both sides; the reply's asymmetric version (the top player keeps the
//! full loss on a defeat) would need a weight per side.

use super::Explain;
use super::{propose_windows, Cadence, PoolView, Proposal, Rule, RuleCheck, Schedule, Stateless, Trigger};
use crate::model::BlockRule;
use crate::pool::WaitingTicket;
use crate::model::{check, ParamError, SimTime, TicketId};
use rand_pcg::Pcg64;
use serde::{Deserialize, Serialize};

/// Parameters of `kind = "virtual-decay"`: a virtual rating that decays with waiting.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DecayParams {
    /// Largest gap between a virtual and an actual rating in a match.
    pub limit: f64,
    /// Rating points a waiting ticket's virtual rating falls per second.
    pub rate_per_s: f64,
    /// The virtual rating never falls more than this below the rating.
    pub max_decay: f64,
    /// Rating-change weight of a match that used all of `max_decay` (a match
    /// that used none has weight 1).
    pub min_weight: f64,
    /// When the policy runs (`mode`, `recheck`, `tick`).
    #[serde(flatten)]
    pub cadence: Cadence,
}

impl Default for DecayParams {
    fn default() -> Self {
        DecayParams {
            limit: 150.0,
            rate_per_s: 3.0,
            max_decay: 1000.0,
            min_weight: 0.1,
            cadence: Cadence::default(),
        }
    }
}

impl DecayParams {
    /// Where the policy comes from, for `mmsim policies`.
    pub const SOURCE: &str =
        "gamedev thread, the first reply: a waiting ticket's virtual rating decays toward the players below; the rating change is scaled by the decay used";
    /// Its keys, for `mmsim policies`.
    pub const PARAMETERS: &str =
        "limit, rate_per_s, max_decay, min_weight, mode, recheck, tick";

    /// Checks every parameter; keys are relative to `[policy]`.
    pub fn validate(&self) -> Result<(), ParamError> {
        check::non_negative("limit", self.limit)?;
        check::non_negative("rate_per_s", self.rate_per_s)?;
        check::non_negative("max_decay", self.max_decay)?;
        if self.max_decay == 0.0 {
            return Err(ParamError::new(
                "max_decay",
                "must be more than 0 rating points (use fixed-limit for no decay), got 0",
            ));
        }
        if !(self.min_weight > 0.0 && self.min_weight <= 1.0) {
            return Err(ParamError::new(
                "min_weight",
                format!("must be more than 0 and at most 1, got {}", self.min_weight),
            ));
        }
        self.cadence.validate()
    }

    /// How far a ticket's virtual rating has fallen at `now`.
    pub fn decay(&self, t: &WaitingTicket, now: SimTime) -> f64 {
        (self.rate_per_s * t.age_s(now)).min(self.max_decay)
    }

    /// Whether `a` and `b` may play: the higher one's virtual rating against
    /// the lower one's actual rating.
    pub fn accepts(&self, a: &WaitingTicket, b: &WaitingTicket, now: SimTime) -> bool {
        let (hi, lo) = if a.rating >= b.rating { (a, b) } else { (b, a) };
        hi.rating - lo.rating <= self.limit + self.decay(hi, now)
    }

    /// Rating-change weight of a match whose widest gap is `gap`.
    pub fn weight(&self, gap: f64) -> f64 {
        let used = (gap - self.limit).clamp(0.0, self.max_decay);
        1.0 - (1.0 - self.min_weight) * used / self.max_decay
    }
}

/// The `virtual-decay` policy: its parameters are all it needs.
pub type VirtualDecay = Stateless<DecayParams>;

impl Rule for DecayParams {
    fn schedule(&self) -> Schedule {
        self.cadence.schedule()
    }

    fn propose(
        &self,
        view: &PoolView<'_>,
        trigger: Trigger,
        _rng: &mut Pcg64,
        out: &mut Vec<Proposal>,
    ) {
        let (p, now) = (self, view.now);
        // Higher tickets reach down by their own decay, which is at most the
        // oldest ticket's.
        let top_decay = view
            .pool
            .oldest_first()
            .next()
            .map_or(0.0, |t| p.decay(t, now));
        let reach = p.limit + top_decay;
        let accept = |seed: &WaitingTicket, _: f64, t: &WaitingTicket| p.accepts(seed, t, now);
        let emit = |tickets: Vec<TicketId>| {
            let rating = |id: &TicketId| view.pool.get(*id).map_or(0.0, |t| t.rating);
            let seed = rating(&tickets[0]);
            let gap = tickets
                .iter()
                .map(|id| (rating(id) - seed).abs())
                .fold(0.0, f64::max);
            out.push(Proposal {
                rating_weight: p.weight(gap),
                ..Proposal::new(tickets)
            });
        };
        propose_windows(view, trigger, |_| reach, accept, emit)
    }
}

impl Explain for DecayParams {
    /// The gap against `limit` plus the higher ticket's decay; the decay
    /// only grows with waiting: monotone. Windows: how far each reaches
    /// down (`limit` plus its own decay).
    fn pair_rule(&self, t: &WaitingTicket, c: &WaitingTicket, now: SimTime) -> Option<RuleCheck> {
        let hi = if t.rating >= c.rating { t } else { c };
        Some(
            RuleCheck::within(
                BlockRule::VirtualRating,
                (t.rating - c.rating).abs(),
                self.limit + self.decay(hi, now),
                true,
            )
            .windows(
                self.limit + self.decay(t, now),
                self.limit + self.decay(c, now),
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testkit::{pair, Harness};

    fn params() -> DecayParams {
        DecayParams {
            limit: 150.0,
            rate_per_s: 5.0,
            max_decay: 1000.0,
            min_weight: 0.1,
            ..Default::default()
        }
    }

    #[test]
    fn the_top_player_decays_down_to_the_best_player_below() {
        // The reply's numbers: 2655 against 2044, 611 apart. With a limit of
        // 150, the 2655 needs 461 points of decay: 92.2 s at 5 points a second.
        let mut h = Harness::new(Box::new(VirtualDecay::new(params())));
        h.join(0, 2655.0, 0.0);
        h.join(1, 2044.0, 0.0);
        assert!(h.tick(92.0).is_empty());
        assert_eq!(pair(h.tick(93.0).concat()), vec![0, 1]);
        // The match used 461 of 1000 points of decay: its rating change is
        // scaled to 1 - 0.9 * 0.461.
        let w = h.formed[0].rating_weight;
        assert!((w - (1.0 - 0.9 * 0.461)).abs() < 1e-9, "{w}");
    }

    #[test]
    fn a_long_wait_low_in_the_ladder_does_not_reach_up() {
        // The 2044 waited 1000 s; its virtual rating fell, away from the 2655.
        let mut h = Harness::new(Box::new(VirtualDecay::new(params())));
        h.join(0, 2044.0, 0.0);
        assert!(h.join(1, 2655.0, 1000.0).is_empty());
        assert!(h.tick(1092.0).is_empty());
        assert_eq!(pair(h.tick(1093.0).concat()), vec![0, 1]);
    }

    #[test]
    fn a_match_within_the_limit_keeps_the_full_rating_change() {
        let mut h = Harness::new(Box::new(VirtualDecay::new(params())));
        h.join(0, 1500.0, 0.0);
        assert_eq!(h.join(1, 1640.0, 0.0).len(), 1);
        assert_eq!(h.formed[0].rating_weight, 1.0);
        let p = params();
        assert!((p.weight(150.0 + 1000.0) - 0.1).abs() < 1e-12);
        assert_eq!(
            p.weight(5000.0),
            p.weight(1150.0),
            "decay beyond the cap weighs no less"
        );
        assert!((p.weight(650.0) - 0.55).abs() < 1e-12);
    }
}
