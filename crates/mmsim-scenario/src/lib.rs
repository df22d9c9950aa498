//! Scenario files: the schema a designer writes and the loader that checks it,
//! and `run`, one scenario and seed played through `mmsim-core` to a summary.
//!
//! This crate sits on `mmsim-core` and below the tuning, report and command
//! line crates: it may read TOML, `mmsim-core` may not, so the engine only
//! ever sees the validated domain types `to_engine` builds.

mod attributes;
mod backfill;
mod config;
mod engagement;
pub mod estimate;
mod ladder;
mod load;
mod locate;
mod modes;
pub mod provenance;
mod regions;
mod roles;
pub mod ruleset;
pub mod run;
mod schema_error;
mod to_engine;
pub mod trace;

pub use backfill::{AcceptanceSection, BackfillSection};
pub use config::*;
pub use engagement::EngagementSection;
pub use load::{
    from_text, gb, line_of_key, load, read_bounded, Budget, LoadedScenario, ScenarioError,
    WithRunError, BYTES_PER_PLAYER, MAX_SCENARIO_BYTES,
};
pub use modes::{ModesSection, QueueSection};
pub use provenance::Provenance;
pub use regions::{ExpansionSection, HomeSection, RegionsSection, SeasonedSection};
pub use roles::RolesSection;
pub use ruleset::RulesetSection;
pub use to_engine::{rating_config, FromScenario};
