//! mmsim-core cannot read), named after the module they check.
//!
//! The scenario crate's integration tests: one binary. Most modules are
//! checks of mmsim-core that build their world from scenario text (which

mod docs_claims;
mod engine_acceptance;
mod engine_backfill;
mod engine_backfill_ready;
mod engine_backfill_roles;
mod engine_explain;
mod engine_explain_policies;
mod engine_ladders;
mod engine_modes;
mod engine_population;
mod engine_regions;
mod engine_sim;
mod engine_theory;
mod metrics_modes;
mod metrics_oracle;
mod outcome_sections;
mod policy_plugins;
mod policy_quality_cadence;
mod policy_ruleset_memory;
mod policy_widening_kept;
mod rating_ladder;
mod rating_sections;
mod teams_sections;
