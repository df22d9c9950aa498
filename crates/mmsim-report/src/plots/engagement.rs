//! The plots engagement adds to a run's report (`[engagement]` only), drawn
//! from the summary's own figures: players active and engaged hour by hour,
//! and churn by skill decile.

use crate::chart::{Chart, Series, Spec, BLUE, ORANGE, VERMILLION};
use crate::input::ReportInput;

/// Distinct players in a match formed each hour, and players engaged (not
/// away, not gone) as the hour began: `engagement.by_hour`.
pub(super) fn active_players(input: &ReportInput) -> Option<Spec> {
    let summary = input.summary;
    let e = summary.engagement.as_ref()?;
    if e.by_hour.is_empty() {
        return None;
    }
    let hours = e.by_hour.len() as f64;
    let engaged: Vec<(f64, f64)> = e
        .by_hour
        .iter()
        .map(|h| (f64::from(h.hour), h.engaged_players as f64))
        .collect();
    let active: Vec<(f64, f64)> = e
        .by_hour
        .iter()
        .map(|h| (f64::from(h.hour), h.active_players as f64))
        .collect();
    let top = engaged
        .iter()
        .chain(&active)
        .map(|p| p.1)
        .fold(1.0, f64::max);
    let warm_h = summary.warmup_s / 3600.0;
    Some(Spec {
        name: "active_players",
        title: "Players active and engaged, hour by hour".into(),
        caption: format!(
            "Per hour since the start: distinct players in a match formed that hour, and players \
             neither away nor gone for good as the hour began (of {} in the population). \
             engagement.by_hour in summary.json; the mean over whole days after warm-up of \
             distinct players per day is engagement.daily_active_mean ({}).",
            e.players,
            e.daily_active_mean
                .map_or("no whole day".to_string(), |d| format!("{d:.0}"))
        ),
        x_desc: "hour since the start".into(),
        y_desc: "players".into(),
        chart: Chart::Lines {
            series: vec![
                Series {
                    label: "engaged".into(),
                    color: BLUE,
                    points: engaged,
                },
                Series {
                    label: "active in the hour".into(),
                    color: ORANGE,
                    points: active,
                },
            ],
            x_range: (0.0, hours),
            y_range: (0.0, top * 1.05),
            markers: vec![],
            shade: (warm_h > 0.0).then(|| (0.0, warm_h, "warm-up".to_string())),
        },
    })
}

/// Share of matches after which the player stopped, by skill decile:
/// `engagement.churn_by_skill_decile`.
pub(super) fn churn_by_decile(input: &ReportInput) -> Option<Spec> {
    let summary = input.summary;
    let e = summary.engagement.as_ref()?;
    let points: Vec<(f64, f64)> = e
        .churn_by_skill_decile
        .iter()
        .enumerate()
        .filter_map(|(i, d)| Some((i as f64, d.quit_rate?)))
        .collect();
    if points.is_empty() {
        return None;
    }
    Some(Spec {
        name: "churn_by_decile",
        title: "Churn by skill decile".into(),
        caption: format!(
            "Share of a player's finished matches after which the player stopped (for a while \
             or for good), by decile of true skill, after warm-up: {} stops in {} player-matches. \
             engagement.churn_by_skill_decile in summary.json.",
            e.quits, e.player_matches
        ),
        x_desc: "skill decile (1 = lowest)".into(),
        y_desc: "stops per player-match".into(),
        chart: Chart::Bars {
            categories: (1..=10).map(|d| d.to_string()).collect(),
            series: vec![Series {
                label: "quit rate".into(),
                color: VERMILLION,
                points,
            }],
        },
    })
}
