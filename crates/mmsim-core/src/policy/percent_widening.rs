//! hplus0603's rules from the thread's last reply: "When you enter the queue,
//! you will match someone who is within +/- 5% of your skill grade. After
//! waiting 10 seconds ... 10%. After waiting 20 seconds ... 15%", with no
//! upper bound ("you could keep incrementing above 100%"), and "you will need
//! for both players to have waited long enough to include each other in
//! their match range".
//!
//! A ticket's window is `rating * step_pct% * (1 + floor(waited / step))`,
//! clamped at `max_pct`% of its rating when one is set. Windows only change at
//! step boundaries, so event mode re-checks on a timer (`recheck`), which is
//! the reply's "re-check the queue at regular intervals" rather than a timer
//! per ticket.

use super::{Cadence, MutualWindow, Stateless};
use crate::pool::WaitingTicket;
use crate::model::{check, HumanDuration, ParamError, SimTime};
use serde::{Deserialize, Serialize};

/// Parameters of `kind = "percent-widening"`: a window in percent of the ticket's own rating that widens in steps.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PercentWideningParams {
    /// Window at entry and growth per step, in percent of the ticket's own
    /// rating on each side (the thread: 5).
    pub step_pct: f64,
    /// Time between steps (the thread: 10 s).
    pub step: HumanDuration,
    /// Largest window in percent of rating; absent means no bound, as in the
    /// thread.
    pub max_pct: Option<f64>,
    /// When the policy runs (`mode`, `recheck`, `tick`).
    #[serde(flatten)]
    pub cadence: Cadence,
}

impl Default for PercentWideningParams {
    fn default() -> Self {
        PercentWideningParams {
            step_pct: 5.0,
            step: HumanDuration::from_secs(10),
            max_pct: None,
            cadence: Cadence::default(),
        }
    }
}

impl PercentWideningParams {
    /// Where the policy comes from, for `mmsim policies`.
    pub const SOURCE: &str =
        "gamedev thread, hplus0603's last reply: +/-5% of rating at entry, +5% every 10 s, no bound unless set; both must include each other";
    /// Its keys, for `mmsim policies`.
    pub const PARAMETERS: &str =
        "step_pct, step, max_pct, mode, recheck, tick";

    /// Checks every parameter; keys are relative to `[policy]`.
    pub fn validate(&self) -> Result<(), ParamError> {
        check::non_negative("step_pct", self.step_pct)?;
        check::interval("step", self.step.0)?;
        if let Some(m) = self.max_pct {
            check::non_negative("max_pct", m)?;
            if m < self.step_pct {
                return Err(ParamError::new(
                    "max_pct",
                    format!("must be at least `step_pct` ({}), got {m}", self.step_pct),
                ));
            }
        }
        self.cadence.validate()
    }
}

/// The `percent-widening` policy: its parameters are all it needs.
pub type PercentWidening = Stateless<PercentWideningParams>;

impl MutualWindow for PercentWideningParams {
    fn cadence(&self) -> &Cadence {
        &self.cadence
    }

    fn window(&self, t: &WaitingTicket, now: SimTime) -> f64 {
        let steps = (now.since(t.enqueued).as_ms() / self.step.0.as_ms()) as f64;
        let mut pct = self.step_pct * (1.0 + steps);
        if let Some(m) = self.max_pct {
            pct = pct.min(m);
        }
        // Ratings can sit at or below zero on some scales; the window never
        // shrinks below nothing.
        t.rating.abs() * pct / 100.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testkit::{pair, Harness};

    fn harness() -> Harness {
        Harness::new(Box::new(PercentWidening::new(
            PercentWideningParams::default(),
        )))
    }

    #[test]
    fn a_fresh_2000_is_not_yet_a_match_for_an_800_who_waited_300s() {
        let mut h = harness();
        assert!(h.join(0, 800.0, 0.0).is_empty());
        // The 800 has waited 300 s: 31 steps of 5% = 155% of 800 = 1240 >= 1200,
        // so the 800 accepts the 2000 ...
        let p = PercentWideningParams::default();
        let now = SimTime::from_secs_f64(300.0);
        let t800 = h.pool.get(crate::model::TicketId(0)).unwrap().clone();
        assert!(p.window(&t800, now) >= 1200.0);
        // ... but the 2000 who just joined accepts only 5% = 100 points.
        assert!(h.join(1, 2000.0, 300.0).is_empty());
        assert!(h.tick(301.0).is_empty());
        // It needs 60% = 12 steps: 110 s of waiting.
        assert!(h.tick(409.0).is_empty());
        assert_eq!(h.tick(410.0), vec![vec![0, 1]]);
    }

    #[test]
    fn the_closer_pair_forms_before_the_far_one_in_the_thread_example() {
        // Team0 at 2300 and Team1 at 2000 queue; after one step Team2 at 2050
        // and Team3 at 1900 arrive; Team1/Team2 must match first.
        let mut h = harness();
        h.join(0, 2300.0, 0.0);
        h.join(1, 2000.0, 0.0);
        for s in 1..=10 {
            assert!(h.tick(s as f64).is_empty(), "nothing within 10% at {s}s");
        }
        assert_eq!(pair(h.join(2, 2050.0, 10.0).concat()), vec![1, 2]);
        assert!(h.join(3, 1900.0, 10.0).is_empty());
        // 2300 vs 1900 is 400 apart: 1900 needs 25% (4 steps after joining),
        // 2300 needs 20%: they meet at 50 s, not before.
        let mut met = None;
        for s in 11..=120 {
            if !h.tick(s as f64).is_empty() {
                met = Some(s);
                break;
            }
        }
        assert_eq!(met, Some(50));
        assert_eq!(h.formed[0].tickets.len(), 2);
        assert_eq!(pair(h.formed[1].tickets.clone()), vec![0, 3]);
    }

    #[test]
    fn max_pct_bounds_the_window() {
        let p = PercentWideningParams {
            max_pct: Some(20.0),
            ..Default::default()
        };
        let t = WaitingTicket {
            id: crate::model::TicketId(0),
            players: smallvec::smallvec![crate::model::PlayerId(0)],
            rating: 2000.0,
            enqueued: SimTime::ZERO,
            requeue: false,
            roles: Default::default(),
        };
        assert_eq!(p.window(&t, SimTime::from_secs_f64(9.999)), 100.0);
        assert_eq!(p.window(&t, SimTime::from_secs_f64(10.0)), 200.0);
        assert_eq!(p.window(&t, SimTime::from_secs_f64(1000.0)), 400.0);
    }
}
