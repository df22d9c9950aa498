//! The limit that widens with time in queue, from the thread's first replies:
//! "add time_in_queue (in seconds) to ratingDifferenceLimit ... clamp this to
//! a maximum" (the poster's suggestion 1, "Limiting it at 500").
//!
//! A ticket's window is `min(base + rate_per_s * waited_s, max)`. A pair forms
//! only when each lies inside the other's window, so a newcomer is not pulled
//! into an old ticket's wide window before its own has grown. Longest-waiting
//! tickets choose first; each takes the nearest-rated ticket that accepts it.

use super::windowed::growing_window_reaches;
use super::{check_growing_window, growing_window, Cadence, GrowingWindow, MutualWindow, Windowed};
use crate::pool::WaitingTicket;
use crate::model::{ParamError, SimTime};
use serde::{Deserialize, Serialize};

/// Parameters of `kind = "widening"`: a window that widens with the time in queue.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WideningParams {
    /// Window at entry, in rating points on each side.
    pub base: f64,
    /// Rating points the window grows per second waited.
    pub rate_per_s: f64,
    /// The window never grows past this (the thread: 500).
    pub max: f64,
    /// When the policy runs (`mode`, `recheck`, `tick`).
    #[serde(flatten)]
    pub cadence: Cadence,
}

impl Default for WideningParams {
    fn default() -> Self {
        WideningParams {
            base: 150.0,
            rate_per_s: 5.0,
            max: 500.0,
            cadence: Cadence::default(),
        }
    }
}

impl WideningParams {
    /// Where the policy comes from, for `mmsim policies`.
    pub const SOURCE: &str =
        "gamedev thread, first replies: the limit grows with time in queue, clamped; both must accept";
    /// Its keys, for `mmsim policies`.
    pub const PARAMETERS: &str =
        "base, rate_per_s, max, mode, recheck, tick";

    /// Checks every parameter; keys are relative to `[policy]`.
    pub fn validate(&self) -> Result<(), ParamError> {
        check_growing_window(self.base, self.rate_per_s, self.max)?;
        self.cadence.validate()
    }
}

/// The `widening` policy. Its tick pass keeps its failures between passes
/// (`Windowed`); `Stateless<WideningParams>` is the same policy without,
/// its oracle.
pub type Widening = Windowed<WideningParams>;

impl MutualWindow for WideningParams {
    fn cadence(&self) -> &Cadence {
        &self.cadence
    }

    fn window(&self, t: &WaitingTicket, now: SimTime) -> f64 {
        growing_window(self.base, self.rate_per_s, self.max, t, now)
    }
}

impl GrowingWindow for WideningParams {
    fn reaches(&self, t: &WaitingTicket, d: f64) -> SimTime {
        growing_window_reaches(self.base, self.rate_per_s, self.max, t, d)
    }
}
