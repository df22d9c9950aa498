//! `mmsim fit`'s library: a live game's ticket log (mmsim's own CSV or
//! Parquet layout, or FlexMatch's event stream) read, fitted into the
//! quantities a scenario needs, written back as a scenario with every
//! fitted key's uncertainty, and checked against a run of that scenario.
//! Kept apart from the command line so the estimators are tested alone;
//! Parquet and plots stay in mmsim-report, which holds polars and plotters.

pub mod check;
pub mod fit;
pub mod flexmatch;
pub mod log;
pub mod scenario;
pub mod survival;

pub use fit::{fit, Fit, Options};
pub use log::{LogError, TicketLog};
