//! The limit that widens with time in queue, from the thread's first replies:
//! "add time_in_queue (in seconds) to ratingDifferenceLimit ... clamp this to
//! a maximum" (the poster's suggestion 1, "Limiting it at 500").
//!
//! A ticket's window is `min(base + rate_per_s * waited_s, max)`. A pair forms
//! only when each lies inside the other's window, so a newcomer is not pulled
//! into an old ticket's wide window before its own has grown. Longest-waiting
//! tickets choose first; each takes the nearest-rated ticket that accepts it.

use super::{
    check_growing_window, check_tick, growing_window, propose_mutual_windows, Mode, Policy,
    PoolView, Proposal, Schedule, Trigger,
};
use crate::model::{HumanDuration, ParamError, SimTime};
use crate::pool::WaitingTicket;
use rand_pcg::Pcg64;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WideningParams {
    /// Window at entry, in rating points on each side.
    pub base: f64,
    /// Rating points the window grows per second waited.
    pub rate_per_s: f64,
    /// The window never grows past this (the thread: 500).
    pub max: f64,
    /// `event`: match on joins and re-check every `recheck`; `tick`: only every `tick`.
    pub mode: Mode,
    /// How often windows are re-checked in `event` mode as they widen.
    pub recheck: HumanDuration,
    /// Interval between matchmaking passes in `tick` mode.
    pub tick: HumanDuration,
}

impl Default for WideningParams {
    fn default() -> Self {
        WideningParams {
            base: 150.0,
            rate_per_s: 5.0,
            max: 500.0,
            mode: Mode::Event,
            recheck: HumanDuration::from_secs(1),
            tick: HumanDuration::from_secs(1),
        }
    }
}

impl WideningParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        check_growing_window(self.base, self.rate_per_s, self.max)?;
        check_tick("recheck", self.recheck.0)?;
        check_tick("tick", self.tick.0)
    }

    /// The window of a ticket at `now`.
    pub fn window(&self, t: &WaitingTicket, now: SimTime) -> f64 {
        growing_window(self.base, self.rate_per_s, self.max, t, now)
    }
}

pub struct Widening {
    params: WideningParams,
}

impl Widening {
    pub fn new(params: WideningParams) -> Self {
        Widening { params }
    }
}

impl Policy for Widening {
    fn schedule(&self) -> Schedule {
        Schedule::for_mode(self.params.mode, self.params.recheck.0, self.params.tick.0)
    }

    fn propose(
        &mut self,
        view: &PoolView<'_>,
        trigger: Trigger,
        _rng: &mut Pcg64,
        out: &mut Vec<Proposal>,
    ) {
        let (p, now) = (&self.params, view.now);
        propose_mutual_windows(view, trigger, |t| p.window(t, now), out);
    }
}
