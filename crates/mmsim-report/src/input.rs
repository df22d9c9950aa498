//! What the output layer is given about a finished run; the run page and
//! its plots read it.

use mmsim_core::metrics::{RunView, Summary};

/// What the output layer needs to know about a finished run.
#[derive(Clone, Copy, Debug)]
pub struct ReportInput<'a> {
    pub scenario_name: &'a str,
    /// The scenario file as given (after `--set` overrides), shown verbatim in the report.
    pub scenario_toml: &'a str,
    pub seed: u64,
    /// What the plots draw, from the same accumulators as the summary.
    pub view: &'a RunView,
    pub summary: &'a Summary,
    /// Rows written to `tickets.parquet` and `matches.parquet` (warm-up
    /// included), or `None` when the run wrote no row tables.
    pub table_rows: Option<(u64, u64)>,
    pub warmup_s: f64,
    pub duration_s: f64,
    /// With `--explain`: every ticket's story (empty otherwise); the report
    /// shows the longest wait's.
    pub stories: &'a [mmsim_core::metrics::explain::TicketStory],
}
