//! mmsim: a discrete-event simulator of online-game matchmaking.
//!
//! This package is the `mmsim` command line: glue over the workspace's
//! library crates, which it re-exports under their concepts' names so the
//! whole library reads as one (`mmsim::scenario::load`, `mmsim::run`,
//! `mmsim::engine`):
//!
//! - `mmsim-core`: `model`, `engine`, `pool`, `policy`, `teams`, `outcome`,
//!   `rating`, `metrics`, `ruleset`: the simulation, with no file format,
//!   command line, table, plot or thread pool;
//! - `mmsim-scenario`: `scenario` (the file schema and its loading) and
//!   `run` (one scenario and seed to a summary);
//! - `mmsim-tune`: `tune` (replications, sweeps, shards, tune, check);
//! - `mmsim-report`: `report` (Parquet, plots, HTML, text);
//! - `mmsim-fit`: `fit` (a ticket log fitted into a scenario).
//!
//! Here live only `cli` (arguments, progress, exit codes, the one file
//! writer), `rebalance` (`mmsim rebalance`) and `serve` (`mmsim serve`'s
//! what-if page).

pub mod cli;
pub mod rebalance;
pub mod serve;

pub use mmsim_core::{engine, metrics, model, outcome, policy, pool, rating, ruleset, teams};
pub use mmsim_fit as fit;
pub use mmsim_report as report;
pub use mmsim_scenario as scenario;
pub use mmsim_scenario::run;
pub use mmsim_tune as tune;
