//! Scenario files: the schema a designer writes and the loader that checks it.

mod attributes;
mod config;
mod load;
pub mod provenance;
mod to_engine;

pub use config::*;
pub use load::{from_text, line_of_key, load, LoadedScenario, ScenarioError};
pub use provenance::Provenance;
