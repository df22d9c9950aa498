//! The wait-by-mode plot, only when the run has `[modes]`, from the
//! summary's own figures (`html.rs` adds the per-mode table).

use crate::chart::{Chart, Spec};
use crate::input::ReportInput;
use mmsim_core::metrics::modes::QueuedFigures;

/// One bar group: its name, wait p50 and p90 (s).
type Row = (String, Option<f64>, Option<f64>);

/// Median and 90th-percentile wait by mode, then of the multi-queued tickets
/// and of the single-queued ones they compare with, from `summary.json`'s
/// `modes`, so the bars are its numbers.
pub(super) fn wait_by_mode(input: &ReportInput) -> Option<Spec> {
    let summary = input.summary;
    let modes = summary.modes.as_ref()?;
    let mut rows: Vec<Row> = modes
        .by_mode
        .iter()
        .map(|m| (m.mode.clone(), m.wait_p50_s, m.wait_p90_s))
        .collect();
    let group = |name: &str, g: &QueuedFigures| (name.to_owned(), g.wait_p50_s, g.wait_p90_s);
    if modes.multi_queued.tickets > 0 {
        rows.push(group("multi-queued", &modes.multi_queued));
        rows.push(group("single-queued", &modes.single_queued));
    }
    if rows.iter().all(|r| r.1.is_none()) {
        return None;
    }
    let bars = |f: fn(&Row) -> Option<f64>| -> Vec<(f64, f64)> {
        rows.iter()
            .enumerate()
            .filter_map(|(i, r)| Some((i as f64, f(r)?)))
            .collect()
    };
    let matched: u64 = modes.by_mode.iter().map(|m| m.matched).sum();
    Some(Spec {
        name: "wait_by_mode",
        title: "Wait by game mode".into(),
        caption: if modes.multi_queued.tickets > 0 {
            format!(
                "Median and 90th-percentile wait of the {matched} matched tickets enqueued after \
                 warm-up, by the mode that matched them; then the tickets that queued for several \
                 modes at once against those that queued for one mode of the same set. The same \
                 figures as modes in summary.json, which also gives each mode's abandon rate, \
                 matches and match quality, and where the multi-queued tickets were matched."
            )
        } else {
            // No ticket queued for several modes: no such bars to explain.
            format!(
                "Median and 90th-percentile wait of the {matched} matched tickets enqueued after \
                 warm-up, by the mode that matched them. The same figures as modes in \
                 summary.json, which also gives each mode's abandon rate, matches and match \
                 quality."
            )
        },
        x_desc: "mode".into(),
        y_desc: "wait in queue (s)".into(),
        chart: Chart::Bars {
            categories: rows.iter().map(|r| r.0.clone()).collect(),
            series: super::wait_series(bars(|r| r.1), bars(|r| r.2)),
        },
    })
}
