//! Scenario files: the schema a designer writes and the loader that checks it.

mod attributes;
mod backfill;
mod config;
mod engagement;
mod ladder;
mod load;
mod locate;
mod modes;
pub mod provenance;
mod regions;
mod roles;
pub mod ruleset;
mod to_engine;
pub mod trace;

pub use backfill::{AcceptanceSection, BackfillSection};
pub use config::*;
pub use engagement::EngagementSection;
pub use load::{
    from_text, gb, line_of_key, load, read_bounded, Budget, LoadedScenario, ScenarioError,
    BYTES_PER_PLAYER, MAX_SCENARIO_BYTES,
};
pub use modes::{ModesSection, QueueSection};
pub use provenance::Provenance;
pub use regions::{ExpansionSection, HomeSection, RegionsSection, SeasonedSection};
pub use roles::RolesSection;
pub use ruleset::RulesetSection;
