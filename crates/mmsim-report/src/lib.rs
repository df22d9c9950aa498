//! The output layer: turns a finished run's records and summary into the files
//! an analyst reads (Parquet tables, plots, one HTML page) and compares two
//! runs' summaries. Everything here is a pure function returning bytes, so the
//! same run always gives the same files and only `cli::write_artifacts` touches disk.
//!
//! Layers, lowest first, with no loop between files (`tests/it/architecture.rs`):
//! `number` (every number's text), `artifact` and `input` (what comes in and
//! goes out), `chart` (the one chart model and its drawing), `page` (what
//! every HTML page shares); then the plots' registry (`plots`), the pages
//! (`html`, `replicated`, `compare`, `sweep`, `fit_page`), `text` for the
//! terminal, and `run_page`, a run's whole set of files.

pub mod artifact;
pub mod chart;
pub mod compare;
pub mod explain;
pub mod fit_page;
pub mod headline;
pub mod html;
pub mod input;
pub mod number;
pub mod page;
pub mod plots;
pub mod replicated;
pub mod run_page;
pub mod sweep;
pub mod tables;
#[cfg(test)]
mod testdata;
pub mod text;
pub mod trace_file;

pub use artifact::Artifact;
pub use input::ReportInput;
pub use run_page::{run_artifacts, run_artifacts_with, Tables};
