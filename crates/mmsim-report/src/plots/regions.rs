//! The plot regions add to a run's report: wait by home region, drawn only
//! when the run has `[regions]`, from the summary's own figures.

use crate::chart::{Chart, Spec};
use crate::input::ReportInput;

/// Median and 90th-percentile wait by the lead player's home region, from
/// `summary.json`'s `regions.by_home_region`, so the bars are its numbers.
pub(super) fn wait_by_region(input: &ReportInput) -> Option<Spec> {
    let summary = input.summary;
    let homes = &summary.regions.as_ref()?.by_home_region;
    if homes.iter().all(|h| h.wait_p50_s.is_none()) {
        return None;
    }
    let bars =
        |f: fn(&mmsim_core::metrics::regions::HomeFigures) -> Option<f64>| -> Vec<(f64, f64)> {
            homes
                .iter()
                .enumerate()
                .filter_map(|(i, h)| Some((i as f64, f(h)?)))
                .collect()
        };
    let matched: u64 = homes.iter().map(|h| h.matched).sum();
    Some(Spec {
        name: "wait_by_region",
        title: "Wait by home region".into(),
        caption: format!(
            "Median and 90th-percentile wait of the {matched} matched tickets enqueued after \
             warm-up, by their lead player's home region; the same figures as \
             regions.by_home_region in summary.json, which also gives each region's abandon rate."
        ),
        x_desc: "home region".into(),
        y_desc: "wait in queue (s)".into(),
        chart: Chart::Bars {
            categories: homes.iter().map(|h| h.region.clone()).collect(),
            series: super::wait_series(bars(|h| h.wait_p50_s), bars(|h| h.wait_p90_s)),
        },
    })
}
