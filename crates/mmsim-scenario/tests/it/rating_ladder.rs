//! The Dota preset's ranked ladder run until its ratings settle, checked against
//! the true skills they measure: the ratings must end on the skills' scale,
//! neither stretched past them (a calibration boost, a β the outcome model
//! disagrees with) nor left off-centre (a start away from the skills' mean).

use mmsim_core::model::Player;
use std::path::Path;

/// The `q` quantile of `values` (nearest rank).
fn quantile(values: &mut [f64], q: f64) -> f64 {
    values.sort_by(f64::total_cmp);
    values[((values.len() - 1) as f64 * q).round() as usize]
}

/// Least-squares slope of rating on true skill: 1 when the ratings are on
/// the skills' scale.
fn slope(players: &[Player]) -> f64 {
    let n = players.len() as f64;
    let mx = players.iter().map(|p| p.true_skill).sum::<f64>() / n;
    let my = players.iter().map(|p| p.rating.value).sum::<f64>() / n;
    let sxy: f64 = players
        .iter()
        .map(|p| (p.true_skill - mx) * (p.rating.value - my))
        .sum();
    let sxx: f64 = players.iter().map(|p| (p.true_skill - mx).powi(2)).sum();
    sxy / sxx
}

/// The Dota preset's ranked ladder with `extra` overrides, on a third of
/// its players and arrivals (the same traffic per player) for 32 days:
/// ranked takes about half the games (normal, on its own ladder, the
/// rest), so twice the 16 days one shared ladder needed gives it about as
/// many (some 270 a player). Its players with at least 50 solo games on it
/// are checked (all but a handful, whatever their skill: how many ranked
/// solo games a player gets depends on the mode and party size draws and
/// on when they unlocked ranked, not on skill). About a minute in a debug
/// build.
fn dota_ladder(extra: &[&str]) -> Vec<Player> {
    let text = include_str!("../../../../scenarios/dota2-5v5.toml");
    let sets: Vec<String> = [
        "run.duration=32d",
        "population.size=1000",
        "arrivals.rate_per_s=0.2",
    ]
    .iter()
    .chain(extra)
    .map(|s| s.to_string())
    .collect();
    let scenario = mmsim_scenario::from_text(text, Path::new("dota2-5v5.toml"), &sets)
        .unwrap()
        .scenario;
    let out = mmsim_scenario::run::run_summary(&scenario, scenario.run.seed, &mut |_, _| {});
    let ranked = out
        .ladders
        .into_iter()
        .find(|l| l.name == "ranked")
        .expect("the preset has a ranked ladder");
    let settled: Vec<Player> = ranked
        .players
        .into_iter()
        .filter(|p| p.rating.games >= 50)
        .collect();
    assert!(settled.len() >= 500, "not settled: {}", settled.len());
    settled
}

/// The preset as shipped ends on the skills' scale. With a calibration
/// boost of 2 (the old default) the same run ends with its 5th percentile
/// at 599 against the skills' 1111.
#[test]
fn the_dota_ladder_settles_on_the_skills_scale() {
    let players = dota_ladder(&[]);
    let mut skills: Vec<f64> = players.iter().map(|p| p.true_skill).collect();
    let mut ratings: Vec<f64> = players.iter().map(|p| p.rating.value).collect();
    let mut report = String::new();
    let mut worst: f64 = 0.0;
    for q in [0.05, 0.10, 0.25, 0.50, 0.75, 0.90, 0.95, 0.99] {
        let (s, r) = (quantile(&mut skills, q), quantile(&mut ratings, q));
        worst = worst.max((r / s - 1.0).abs());
        report += &format!(" p{}: {r:.0} vs {s:.0};", (q * 100.0) as u32);
    }
    // Measured (seed 1): p5 1003 against 1111 (9.7% low), p10 and p25
    // about 6% low, the rest within 3%; slope 0.999.
    assert!(worst < 0.10, "rating vs skill percentiles:{report}");
    let b = slope(&players);
    assert!((b - 1.0).abs() < 0.05, "slope {b}:{report}");
    // Width: the middle 90% of ratings spans what the skills' does, within 5%.
    let width = |v: &mut Vec<f64>| quantile(v, 0.95) - quantile(v, 0.05);
    let (ws, wr) = (width(&mut skills), width(&mut ratings));
    assert!(
        (wr / ws - 1.0).abs() < 0.05,
        "p95 - p5: {wr:.0} vs {ws:.0}:{report}"
    );
}

/// docs/scenarios.md: a calibration boost of 2 stretches the same ladder
/// for good (slope 1.47, seed 1).
#[test]
fn a_calibration_boost_stretches_the_dota_ladder() {
    let b = slope(&dota_ladder(&["rating.calibration_boost=2"]));
    assert!(b > 1.3, "{b}");
}

/// docs/scenarios.md: a surprise gain of 0.5 stretches it too, less (slope
/// 1.16, seed 1).
#[test]
fn a_surprise_gain_stretches_the_dota_ladder() {
    let b = slope(&dota_ladder(&["rating.surprise_gain=0.5"]));
    assert!(b > 1.08 && b < 1.25, "{b}");
}
