//! Metric regression checks for CI: committed baselines of key metrics over
//! several seeds, and a rerun that flags any metric that moved further than
//! seed noise explains.
//!
//! Tolerance: a rerun on the same seeds reproduces the baseline exactly, so
//! any movement comes from a code or scenario change. A harmless change (one
//! that reorders random draws, say) moves a mean over n seeds about as much
//! as drawing n fresh seeds would: the difference of two such means has
//! standard deviation sd·√(2/n). A metric fails when it moves more than
//!
//!   tolerance = 4 · sd · √(1/n_baseline + 1/n_now) + 1% · |baseline mean| + floor
//!
//! where sd is the seed-to-seed standard deviation recorded in the
//! baseline and floor is a movement too small for a player to notice: 0.1 s
//! for waits, 0.001 for rates and probabilities, one match, one rating
//! point. Four standard errors keep false alarms rare across the dozen or
//! so metrics checked; the floors keep a metric whose seeds all agree (a
//! median wait of 0 s, say) from failing on a rounding-sized change.

use super::replicate::{par_map, summary_for};
use super::stats::{ci95, metric};
use mmsim_scenario::LoadedScenario;
use serde::{Deserialize, Serialize};

/// Metrics that matter to players and are stable across seeds.
pub const CHECK_METRICS: [&str; 7] = [
    "matches",
    "abandon_rate",
    "wait_s.p50",
    "wait_s.p90",
    "spread_rating.mean",
    "win_prob_gap.mean",
    "upset_rate",
];

pub const K_SD: f64 = 4.0;
pub const REL_FLOOR: f64 = 0.01;
pub const TOLERANCE_RULE: &str =
    "4 * sd * sqrt(1/n_baseline + 1/n_now) + 0.01 * |mean| + floor (0.1 s waits, 0.001 rates, 1 match or rating point)";

/// The smallest movement worth failing CI over, by the metric's unit.
pub fn abs_floor(metric: &str) -> f64 {
    if metric.starts_with("wait_s") || metric.starts_with("queue_time_s") {
        0.1
    } else if metric == "matches" || metric.contains("rating") && !metric.contains("corr") {
        1.0
    } else {
        0.001
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    /// The scenario file, relative to where `mmsim check` runs (the repository root).
    pub scenario: String,
    pub seeds: Vec<u64>,
    pub tolerance_rule: String,
    pub metrics: Vec<BaselineMetric>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BaselineMetric {
    pub name: String,
    pub mean: f64,
    /// Seed-to-seed standard deviation.
    pub sd: f64,
    /// Allowed movement of the mean when rerun on as many seeds.
    pub tolerance: f64,
}

pub fn tolerance(metric: &str, mean: f64, sd: f64, n_base: usize, n_now: usize) -> f64 {
    let paired = (1.0 / n_base.max(1) as f64 + 1.0 / n_now.max(1) as f64).sqrt();
    K_SD * sd * paired + REL_FLOOR * mean.abs() + abs_floor(metric)
}

/// One comparison: a row of the table `check` prints.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckLine {
    pub scenario: String,
    pub metric: String,
    pub baseline: f64,
    /// `None` when the rerun no longer produces the metric.
    pub now: Option<f64>,
    pub tolerance: f64,
}

impl CheckLine {
    pub fn change(&self) -> Option<f64> {
        self.now.map(|v| v - self.baseline)
    }
    pub fn moved(&self) -> bool {
        // NaN counts as moved: a metric that stopped being a number is a regression.
        self.change()
            .is_none_or(|d| d.is_nan() || d.abs() > self.tolerance)
    }
}

/// Runs every (scenario, seed) pair on the cores and returns, per scenario,
/// the summaries in seed order.
pub fn run_all(
    scenarios: &[(&LoadedScenario, Vec<u64>)],
    jobs: Option<usize>,
) -> anyhow::Result<Vec<Vec<serde_json::Value>>> {
    let pairs: Vec<(usize, u64)> = scenarios
        .iter()
        .enumerate()
        .flat_map(|(i, (_, seeds))| seeds.iter().map(move |&s| (i, s)))
        .collect();
    let flat = par_map(
        jobs,
        pairs.len(),
        |j| summary_for(&scenarios[pairs[j].0].0.scenario, pairs[j].1),
        || {},
    )?;
    let mut out = Vec::new();
    let mut it = flat.into_iter();
    for (_, seeds) in scenarios {
        out.push(it.by_ref().take(seeds.len()).collect());
    }
    Ok(out)
}

/// Why a baseline could not be made from the runs' summaries.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BaselineError(pub String);

impl From<String> for BaselineError {
    fn from(message: String) -> Self {
        BaselineError(message)
    }
}

/// A baseline from summaries over `seeds`.
pub fn make_baseline(
    scenario_path: &str,
    seeds: &[u64],
    summaries: &[serde_json::Value],
) -> Result<Baseline, BaselineError> {
    let mut metrics = Vec::new();
    for name in CHECK_METRICS {
        let xs: Vec<f64> = summaries.iter().filter_map(|s| metric(s, name)).collect();
        if xs.len() != summaries.len() {
            // A metric some seeds lack cannot be compared fairly; leave it out.
            continue;
        }
        let c = ci95(&xs);
        let mean = c.mean.unwrap_or(0.0);
        let sd = c.sd.unwrap_or(0.0);
        metrics.push(BaselineMetric {
            name: name.to_string(),
            mean,
            sd,
            tolerance: tolerance(name, mean, sd, seeds.len(), seeds.len()),
        });
    }
    if metrics.is_empty() {
        return Err(BaselineError(format!(
            "{scenario_path}: no checked metric ({}) is present in every seed's summary",
            CHECK_METRICS.join(", ")
        )));
    }
    Ok(Baseline {
        scenario: scenario_path.to_string(),
        seeds: seeds.to_vec(),
        tolerance_rule: TOLERANCE_RULE.to_string(),
        metrics,
    })
}

/// Compares a rerun's summaries with the baseline.
pub fn compare(name: &str, base: &Baseline, summaries: &[serde_json::Value]) -> Vec<CheckLine> {
    base.metrics
        .iter()
        .map(|m| {
            let xs: Vec<f64> = summaries
                .iter()
                .filter_map(|s| metric(s, &m.name))
                .collect();
            let now = (xs.len() == summaries.len() && !xs.is_empty())
                .then(|| xs.iter().sum::<f64>() / xs.len() as f64);
            let tol = if summaries.len() == base.seeds.len() {
                m.tolerance
            } else {
                tolerance(&m.name, m.mean, m.sd, base.seeds.len(), summaries.len())
            };
            CheckLine {
                scenario: name.to_string(),
                metric: m.name.clone(),
                baseline: m.mean,
                now,
                tolerance: tol,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tolerance_follows_the_documented_rule() {
        // sd 10 over 4 seeds each side: 4 * 10 * sqrt(1/4 + 1/4) = 28.284; 1% of 200 = 2; one match.
        let t = tolerance("matches", 200.0, 10.0, 4, 4);
        assert!((t - (40.0 * 0.5f64.sqrt() + 2.0 + 1.0)).abs() < 1e-9, "{t}");
        // More seeds now: the noise term shrinks.
        assert!(tolerance("matches", 200.0, 10.0, 4, 16) < t);
        // No seed noise: only the floors remain (a 0 s median wait may move 0.1 s).
        assert!((tolerance("abandon_rate", 0.05, 0.0, 5, 5) - 0.0015).abs() < 1e-12);
        assert!((tolerance("wait_s.p50", 0.0, 0.0, 5, 5) - 0.1).abs() < 1e-12);
        assert_eq!(abs_floor("spread_rating.mean"), 1.0);
        assert_eq!(abs_floor("win_prob_gap.mean"), 0.001);
    }

    #[test]
    fn a_move_past_the_tolerance_is_flagged_and_a_small_one_is_not() {
        let runs = |v: [f64; 3]| -> Vec<serde_json::Value> {
            v.iter()
                .map(|x| json!({"matches": x, "wait_s": {"p90": x / 10.0}}))
                .collect()
        };
        let base = make_baseline("s.toml", &[1, 2, 3], &runs([100.0, 110.0, 120.0])).unwrap();
        assert_eq!(
            base.metrics.len(),
            2,
            "metrics absent from the summary are left out"
        );
        let m = &base.metrics[0];
        assert_eq!((m.mean, m.sd), (110.0, 10.0));
        // 4 * 10 * sqrt(2/3) + 1.1 + 1 = 34.7599
        assert!((m.tolerance - 34.759_863).abs() < 1e-5, "{}", m.tolerance);
        let same = compare("s", &base, &runs([100.0, 110.0, 120.0]));
        assert!(same.iter().all(|l| !l.moved() && l.change() == Some(0.0)));
        let shifted = compare("s", &base, &runs([130.0, 140.0, 150.0]));
        assert!(!shifted[0].moved(), "a +30 shift is within 34.76");
        let worse = compare("s", &base, &runs([140.0, 150.0, 160.0]));
        assert!(worse[0].moved() && worse[1].moved());
        let gone = compare("s", &base, &[json!({"matches": 1.0})]);
        assert!(gone[1].moved() && gone[1].now.is_none());
    }
}
