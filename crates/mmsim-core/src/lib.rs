//! mmsim-core: the simulation itself, with nothing of files, command lines,
//! tables, plots or thread pools.
//!
//! A validated configuration (`engine::Config` and its `Parts`: a policy
//! (`policy`), a team former (`teams`), an outcome model (`outcome`) and a
//! rating system (`rating`)) is played event by event by `engine` over the
//! waiting `pool`; `metrics` folds the finished tickets and matches into a
//! `Summary`; `ruleset` holds vendors' rulesets as plain domain types;
//! `model` the types they all share. Reading scenario files is
//! `mmsim-scenario`'s work, drawing results `mmsim-report`'s: the crate
//! boundary keeps the engine from reaching either.

#![warn(missing_docs)]

pub mod engine;
pub mod metrics;
pub mod model;
pub mod outcome;
pub mod policy;
pub mod pool;
pub mod rating;
pub mod ruleset;
pub mod teams;
