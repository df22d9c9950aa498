//! The integration tests: one binary, one module per concern (as ripgrep
//! and nexosim do), so the real `mmsim` binary and the library are linked
//! once for all of them. Each module drives the real binary on real
//! scenario files, or the library's public API.

mod common;

mod architecture;
mod backfill_roles;
mod cli;
mod compare;
mod docs_catalogue;
mod engagement;
mod explain;
mod fit;
mod fuzz;
#[cfg(unix)]
mod kill;
mod modes;
mod rebalance_cli;
mod refusals;
mod reliability;
mod report_figures;
mod rulesets;
mod scale;
mod serve;
mod streams;
mod team_matches;
mod trace;
mod tuning;
