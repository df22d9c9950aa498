//! The role queue's plot: wait by main role, drawn from `summary.json`'s
//! `roles`, so the bars and the summary are the same numbers.

use crate::chart::{Chart, Spec};
use crate::input::ReportInput;

/// Median and p90 wait of matched players by main role; `None` without a
/// role queue or without a matched player.
pub(super) fn wait_by_role(input: &ReportInput) -> Option<Spec> {
    let summary = input.summary;
    let roles = summary.roles.as_ref()?;
    let by = &roles.by_main_role;
    if by.iter().all(|r| r.wait_s.p50.is_none()) {
        return None;
    }
    let pick = |f: fn(&mmsim_core::metrics::summary::Describe) -> Option<f64>| -> Vec<(f64, f64)> {
        by.iter()
            .enumerate()
            .filter_map(|(i, r)| Some((i as f64, f(&r.wait_s)?)))
            .collect()
    };
    Some(Spec {
        name: "wait_by_role",
        title: "Wait by main role".into(),
        caption: format!(
            "Median and 90th-percentile wait of the {} players matched after warm-up, by the role \
             they want first (a party's wait counts once per member); the same figures as \
             roles.by_main_role in summary.json.",
            roles.matched_players
        ),
        x_desc: "main role".into(),
        y_desc: "wait in queue (s)".into(),
        chart: Chart::Bars {
            categories: by.iter().map(|r| r.role.clone()).collect(),
            series: super::wait_series(pick(|d| d.p50), pick(|d| d.p90)),
        },
    })
}
