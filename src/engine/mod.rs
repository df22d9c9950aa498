//! The discrete-event engine: one queue of events keyed by (time, sequence),
//! one pool of waiting tickets, one seed split into streams.

mod config;
pub mod population;
mod queue;
pub mod regions;
mod sim;
pub mod streams;

pub use config::{Arrivals, Config, Patience};
pub use population::Population;
pub use queue::EventQueue;
pub use regions::{Home, LatencyStep, RegionsConfig};
pub use sim::{EngineStats, Parts, SimOutput, Simulation};

#[cfg(test)]
mod tests;
