//! When a window policy runs: the `mode`, `recheck` and `tick` keys the
//! policies whose windows widen with time share, flattened into each
//! policy's parameters so the scenario keys stay at the top of `[policy]`.

use super::{Mode, Schedule};
use crate::model::{check, HumanDuration, ParamError};
use serde::{Deserialize, Serialize};
use std::marker::PhantomData;

/// The matching cadence. `D` gives the default mode: `EventFirst` (most
/// policies) or `TickFirst` (sweep-and-prune is a tick algorithm first).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, bound(deserialize = "D: DefaultMode", serialize = ""))]
pub struct Cadence<D = EventFirst> {
    /// `event`: match on joins and re-check every `recheck`; `tick`: only
    /// every `tick`.
    pub mode: Mode,
    /// How often the pool is re-checked in `event` mode, as windows widen
    /// with time.
    pub recheck: HumanDuration,
    /// Interval between matchmaking passes in `tick` mode.
    pub tick: HumanDuration,
    /// Which mode a scenario's omitted `mode` means (a type, not a value).
    #[serde(skip)]
    pub default_mode: PhantomData<D>,
}

/// The mode a cadence takes when the scenario leaves `mode` out.
pub trait DefaultMode {
    /// The mode when the scenario leaves `mode` out.
    const MODE: Mode;
}

/// `mode = "event"` unless the scenario says otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventFirst;

/// `mode = "tick"` unless the scenario says otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TickFirst;

impl DefaultMode for EventFirst {
    const MODE: Mode = Mode::Event;
}

impl DefaultMode for TickFirst {
    const MODE: Mode = Mode::Tick;
}

impl<D: DefaultMode> Default for Cadence<D> {
    fn default() -> Self {
        Cadence {
            mode: D::MODE,
            recheck: HumanDuration::from_secs(1),
            tick: HumanDuration::from_secs(1),
            default_mode: PhantomData,
        }
    }
}

impl<D: DefaultMode> Cadence<D> {
    /// The default cadence in `mode`.
    pub fn in_mode(mode: Mode) -> Self {
        Cadence {
            mode,
            ..Default::default()
        }
    }
}

impl<D> Cadence<D> {
    /// Checks every parameter; keys are relative to `[policy]`.
    pub fn validate(&self) -> Result<(), ParamError> {
        check::interval("recheck", self.recheck.0)?;
        check::interval("tick", self.tick.0)
    }

    /// In `event` mode react to every join and re-check every `recheck`; in
    /// `tick` mode only tick.
    pub fn schedule(&self) -> Schedule {
        Schedule::for_mode(self.mode, self.recheck.0, self.tick.0)
    }
}
