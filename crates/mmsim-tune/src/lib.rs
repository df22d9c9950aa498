//! Tuning and guarding: replications with confidence intervals, sweeps
//! over settings (sharded for clusters), the parameter search behind
//! `mmsim tune`, and the metric baselines behind `mmsim check`. Tables and
//! plots of the results are drawn by `report`.

pub mod check;
pub mod replicate;
pub mod resume;
pub mod search;
pub mod stats;
pub mod sweep;

pub use stats::{ci95, pareto_front, Ci};
pub use sweep::{SweepSection, SweepTable};
