//! mmsim: a discrete-event simulator of online-game matchmaking.
//!
//! A scenario (`scenario`) fixes a population, traffic, a matchmaking policy
//! (`policy`), team formation (`teams`), an outcome model (`outcome`) and a
//! rating system (`rating`); the engine (`engine`) plays it event by event;
//! `metrics` turns the records into figures and `report` into files people
//! read. `cli` is the command line over all of it.

pub mod cli;
pub mod engine;
pub mod metrics;
pub mod model;
pub mod outcome;
pub mod policy;
pub mod pool;
pub mod rating;
pub mod rebalance;
pub mod report;
pub mod ruleset;
pub mod run;
pub mod scenario;
pub mod teams;
pub mod tune;
