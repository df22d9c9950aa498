//! The `--explain` plot: which rule held tickets back, by how long they
//! had waited, from the summary's `explain.by_wait`.

use crate::chart::{Chart, Series, Spec, BLUE, GREEN, ORANGE, VERMILLION};
use crate::input::ReportInput;
use plotters::style::RGBColor;

/// Share of the waiting ticket-seconds each rule held back, by wait bucket
/// (`explain.by_wait`): what holds tickets back early and late in a wait.
pub(super) fn blocked_by_wait(input: &ReportInput) -> Option<Spec> {
    let summary = input.summary;
    let e = summary.explain.as_ref()?;
    let buckets: Vec<_> = e.by_wait.iter().filter(|b| b.ticket_s > 0.0).collect();
    if buckets.is_empty() {
        return None;
    }
    let colors = [
        VERMILLION,
        GREEN,
        ORANGE,
        BLUE,
        RGBColor(204, 121, 167),
        RGBColor(86, 180, 233),
        RGBColor(128, 128, 128),
        // The policies' own rules: a policy names at most three of them, so
        // they share a few colours apart from the seven above.
        RGBColor(240, 228, 66),
        RGBColor(0, 60, 110),
        RGBColor(0, 60, 110),
        RGBColor(120, 60, 160),
        RGBColor(0, 60, 110),
        RGBColor(120, 60, 160),
        RGBColor(0, 60, 110),
        RGBColor(0, 60, 110),
        RGBColor(120, 60, 160),
        RGBColor(150, 100, 50),
    ];
    let series = mmsim_core::metrics::explain::RULES
        .iter()
        .zip(colors)
        .filter(|(r, _)| e.blocked_ticket_s.contains_key(r))
        .map(|(r, color)| Series {
            label: r.name().into(),
            color,
            points: buckets
                .iter()
                .enumerate()
                .map(|(i, b)| (i as f64, b.share.get(r).copied().unwrap_or(0.0)))
                .collect(),
        })
        .collect();
    let categories = buckets
        .iter()
        .map(|b| match b.to_s {
            Some(to) => format!("{:.0}-{:.0} s", b.from_s, to),
            None => format!("{:.0} s +", b.from_s),
        })
        .collect();
    Some(Spec {
        name: "blocked_by_wait",
        title: "What held tickets back, by how long they had waited".into(),
        caption: format!(
            "Of the ticket-seconds spent waiting at each wait (tickets joined after warm-up), \
             the share each rule held back: the rule blocking the ticket's nearest candidate at \
             the last pass that looked at it (fill: some candidate passed every reported rule; \
             alone: nobody else waited). explain.by_wait in summary.json; stories per ticket in \
             explain.jsonl. The policy {}.",
            match (e.policy_reports_window, e.policy_reports_pair_rule) {
                (_, true) => "reports its own pair rule",
                (true, false) => "reports",
                (false, false) => "does not report",
            }
        ),
        x_desc: "wait so far".into(),
        y_desc: "share of waiting ticket-seconds".into(),
        chart: Chart::Bars { categories, series },
    })
}
