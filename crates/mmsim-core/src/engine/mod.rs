//! The discrete-event engine: one queue of events keyed by (time, sequence),
//! one pool of waiting tickets, one seed split into streams.

mod config;
mod layer;
mod memory;
pub mod modes;
pub mod population;
mod queue;
mod radix;
pub mod regions;
mod roles;
/// The event loop's internals. Public only so that the white-box checks in
/// `mmsim-scenario`'s tests, which build their world from scenario text,
/// can drive single steps; nothing outside the engine may write its state.
#[doc(hidden)]
pub mod sim;
pub mod streams;
pub mod trace;
mod world;

pub use config::{Arrivals, Config, Patience};
pub use modes::{ModeSpec, ModesConfig};
pub use population::Population;
pub use queue::EventQueue;
pub use regions::{Home, LatencyStep, RegionsConfig};
pub use roles::RoleDraw;
pub use sim::{Acceptance, Backfill, EngagementConfig, EngineStats, Parts, SimOutput, Simulation};
pub use trace::{LoggedMember, TicketLog, Trace, TracePlayer, TraceRoles, TraceTicket};
pub use world::World;
