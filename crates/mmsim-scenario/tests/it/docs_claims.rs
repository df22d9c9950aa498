//! Figures the docs state about the presets, checked on the presets' own
//! runs, so a doc cannot keep a number the simulator no longer gives.

use std::path::Path;

/// docs/policies.md: in the percentile-window preset's day, about a third
/// of the population never plays and keeps exactly the initial 1500, so
/// for a player at 1500 (every newcomer) the ±5-percentile window at entry
/// spans no rating points at all.
#[test]
fn the_percentile_window_at_1500_spans_no_points() {
    let text = include_str!("../../../../scenarios/gamedev-policies/percentile-window.toml");
    let scenario = mmsim_scenario::from_text(text, Path::new("percentile-window.toml"), &[])
        .unwrap()
        .scenario;
    let out = mmsim_scenario::run::run_summary(&scenario, scenario.run.seed, &mut |_, _| {});
    let n = out.players.len();
    let never = out.players.iter().filter(|p| p.rating.games == 0).count();
    let share = never as f64 / n as f64;
    // The docs say 36%.
    assert!((share - 0.36).abs() < 0.01, "{share}");
    assert!(out
        .players
        .iter()
        .filter(|p| p.rating.games == 0)
        .all(|p| p.rating.value == 1500.0));
    let mut ratings: Vec<f64> = out.players.iter().map(|p| p.rating.value).collect();
    ratings.sort_by(f64::total_cmp);
    let lo = ratings.partition_point(|&r| r < 1500.0);
    let hi = ratings.partition_point(|&r| r <= 1500.0);
    // The policy's percentile of a rating is its mid-rank.
    let mid = (lo + hi) as f64 / 2.0 / n as f64;
    let at = |p: f64| ratings[((p * n as f64) as usize).min(n - 1)];
    assert_eq!((at(mid - 0.05), at(mid + 0.05)), (1500.0, 1500.0));
}
