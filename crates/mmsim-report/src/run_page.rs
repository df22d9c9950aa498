//! A run's files besides `summary.json`, `perf.json` and the streamed
//! row tables: the queue table, the column reference, the plots and
//! `report.html`.

use crate::artifact::Artifact;
use crate::input::ReportInput;
use crate::{html, tables};

/// Every file a run produces besides `summary.json`, `perf.json` and the
/// streamed row tables, in a fixed order: the queue table and the column
/// reference, then each plot as PNG and SVG, then `report.html`.
pub fn run_artifacts(input: &ReportInput) -> anyhow::Result<Vec<Artifact>> {
    run_artifacts_with(input, Tables::All, &[])
}

/// Whether a run writes its per-row Parquet tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tables {
    All,
    /// Plots, report and summary only: for sweeps and tuning, which read
    /// summaries, and for runs too large to want a row per ticket.
    None,
}

/// `run_artifacts`, choosing whether the per-row tables are written, with
/// `meta` (the run's provenance) in the Parquet files' key-value metadata.
pub fn run_artifacts_with(
    input: &ReportInput,
    tables: Tables,
    meta: &tables::FileMetadata,
) -> anyhow::Result<Vec<Artifact>> {
    let mut out = Vec::new();
    if tables == Tables::All {
        out = tables::table_artifacts(&input.view.queue, &input.summary.by_hour, meta)?;
        // The column reference travels with the tables, so a copied run folder explains itself.
        out.push(Artifact {
            name: "COLUMNS.md".to_string(),
            bytes: tables::COLUMNS_MD.as_bytes().to_vec(),
        });
    }
    let plots = crate::plots::run_plots(input)?;
    out.extend(crate::chart::plot_artifacts(&plots));
    out.push(Artifact {
        name: "report.html".to_string(),
        bytes: html::report_html(input, &plots).into_bytes(),
    });
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata;

    #[test]
    fn artifacts_come_in_a_fixed_order_and_repeat_byte_for_byte() {
        let r = testdata::team_run();
        let a = run_artifacts(&r.input()).unwrap();
        let b = run_artifacts(&r.input()).unwrap();
        assert_eq!(a, b);
        let names: Vec<&str> = a.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(
            &names[..3],
            &["queue.parquet", "by_hour.parquet", "COLUMNS.md"]
        );
        assert_eq!(names.last(), Some(&"report.html"));
        assert!(names.contains(&"plots/wait_hist.png"));
        assert!(names.contains(&"plots/survivors_hist.svg"));
    }

    #[test]
    fn duel_run_has_no_team_or_landslide_plots() {
        let r = testdata::duel_run();
        let a = run_artifacts(&r.input()).unwrap();
        let names: Vec<&str> = a.iter().map(|x| x.name.as_str()).collect();
        for absent in ["team_gap", "survivors", "gold_integral", "rank_corr"] {
            assert!(
                !names.iter().any(|n| n.contains(absent)),
                "{absent} in {names:?}"
            );
        }
        assert!(names.contains(&"plots/queue_length.svg"));
    }

    // Moved from mmsim-core (metrics::collect), where no hand-made records are.

    #[test]
    fn background_rows_reach_the_inner_sink_in_order() {
        use mmsim_core::metrics::RowSink;
        let records = testdata::team_records();
        let mut inline = mmsim_core::metrics::KeepRows::default();
        let mut behind = mmsim_core::metrics::KeepRows::default();
        std::thread::scope(|scope| {
            let mut bg = mmsim_core::metrics::BackgroundRows::spawn(scope, &mut behind);
            // Enough rows for several hand-overs, interleaved as a run interleaves them.
            for k in 0..(3 * mmsim_core::metrics::HANDOFF_ROWS / records.tickets.len() + 1) {
                for (i, t) in records.tickets.iter().enumerate() {
                    let mut t = t.clone();
                    t.ticket = mmsim_core::model::TicketId((k * 1000 + i) as u32);
                    inline.ticket(t.clone());
                    bg.ticket(t);
                    if let Some(m) = records.matches.get(i) {
                        inline.match_row(m.clone());
                        bg.match_row(m.clone());
                    }
                }
            }
            bg.finish().unwrap();
        });
        assert_eq!(inline.0, behind.0);
        assert!(behind.0.tickets.len() > 3 * mmsim_core::metrics::HANDOFF_ROWS);
    }
}
