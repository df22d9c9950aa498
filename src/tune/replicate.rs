//! Replications: one scenario over seeds seed..seed+N-1, spread over cores,
//! and the per-seed summaries folded into one with a mean and a 95% interval
//! for every number.

use super::stats::ci95;
use crate::scenario::Scenario;
use serde_json::{json, Map, Value};

/// Runs `count` jobs on `jobs` threads (all cores when `None`) and returns
/// the results in job order, whatever order they finish in, so outputs do
/// not depend on the thread count. `tick` is called once per finished job.
pub fn par_map<T: Send>(
    jobs: Option<usize>,
    count: usize,
    work: impl Fn(usize) -> T + Sync,
    tick: impl Fn() + Sync,
) -> anyhow::Result<Vec<T>> {
    use rayon::prelude::*;
    let mut builder = rayon::ThreadPoolBuilder::new();
    if let Some(n) = jobs {
        builder = builder.num_threads(n);
    }
    let pool = builder.build()?;
    Ok(pool.install(|| {
        (0..count)
            .into_par_iter()
            .map(|i| {
                let out = work(i);
                tick();
                out
            })
            .collect()
    }))
}

/// The summary of one seed; records are dropped as soon as it is made.
pub fn summary_for(scenario: &Scenario, seed: u64) -> Value {
    crate::run::run_summary(scenario, seed, &mut |_, _| {})
        .summary
        .to_value()
}

/// The seeds a scenario's replications use: common to every setting of a
/// sweep, so differences between settings are paired.
pub fn seeds(first: u64, replications: u32) -> Vec<u64> {
    (0..replications as u64).map(|i| first + i).collect()
}

/// Folds per-seed summaries into one with the same nesting: every number
/// becomes `{mean, ci95_low, ci95_high, n}` over the seeds that have it
/// (nulls are skipped), text that agrees across seeds stays as it is, and
/// arrays fold element by element. `seed` becomes `seeds`.
pub fn aggregate(seeds: &[u64], summaries: &[Value]) -> Value {
    let mut out = match fold(&summaries.iter().collect::<Vec<_>>()) {
        Value::Object(m) => m,
        other => return other,
    };
    out.shift_remove("seed");
    let mut head = Map::new();
    head.insert("seeds".into(), json!(seeds));
    head.insert("replications".into(), json!(seeds.len()));
    head.extend(out);
    Value::Object(head)
}

fn fold(nodes: &[&Value]) -> Value {
    let present: Vec<&Value> = nodes.iter().copied().filter(|v| !v.is_null()).collect();
    let Some(first) = present.first() else {
        return Value::Null;
    };
    match first {
        Value::Number(_) => {
            let xs: Vec<f64> = present.iter().filter_map(|v| v.as_f64()).collect();
            let c = ci95(&xs);
            json!({"mean": c.mean, "ci95_low": c.ci95_low, "ci95_high": c.ci95_high, "n": c.n})
        }
        Value::Object(m) => {
            let mut out = Map::new();
            for key in m.keys() {
                let children: Vec<&Value> = present
                    .iter()
                    .map(|v| v.get(key).unwrap_or(&Value::Null))
                    .collect();
                out.insert(key.clone(), fold(&children));
            }
            Value::Object(out)
        }
        Value::Array(_) => {
            let len = present
                .iter()
                .filter_map(|v| v.as_array().map(Vec::len))
                .max()
                .unwrap_or(0);
            Value::Array(
                (0..len)
                    .map(|i| {
                        let children: Vec<&Value> = present
                            .iter()
                            .map(|v| v.get(i).unwrap_or(&Value::Null))
                            .collect();
                        fold(&children)
                    })
                    .collect(),
            )
        }
        other => {
            if present.iter().all(|v| v == &*other) {
                (*other).clone()
            } else {
                Value::Array(present.iter().map(|v| (*v).clone()).collect())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aggregation_keeps_the_nesting_and_skips_nulls() {
        let a = json!({"scenario": "s", "seed": 1, "wait_s": {"p90": 10.0, "p99": null}, "d": [{"x": 1}, {"x": 3}]});
        let b = json!({"scenario": "s", "seed": 2, "wait_s": {"p90": 14.0, "p99": 5.0}, "d": [{"x": 3}, {"x": 3}]});
        let s = aggregate(&[1, 2], &[a, b]);
        assert_eq!(s["seeds"], json!([1, 2]));
        assert!(s.get("seed").is_none());
        assert_eq!(s["scenario"], json!("s"));
        assert_eq!(s["wait_s"]["p90"]["mean"], json!(12.0));
        assert_eq!(s["wait_s"]["p90"]["n"], json!(2));
        // 12 ± 12.7062 * sd(2.828) / sqrt(2)
        let high = s["wait_s"]["p90"]["ci95_high"].as_f64().unwrap();
        assert!(
            (high - (12.0 + 12.706_204_736 * 2.0)).abs() < 1e-6,
            "{high}"
        );
        assert_eq!(s["wait_s"]["p99"]["n"], json!(1));
        assert_eq!(s["wait_s"]["p99"]["ci95_low"], Value::Null);
        assert_eq!(s["d"][0]["x"]["mean"], json!(2.0));
        assert_eq!(s["d"][1]["x"]["ci95_low"], json!(3.0));
    }

    #[test]
    fn results_come_back_in_job_order_on_any_thread_count() {
        let one = par_map(Some(1), 20, |i| i * i, || {}).unwrap();
        let two = par_map(Some(2), 20, |i| i * i, || {}).unwrap();
        assert_eq!(one, two);
        assert_eq!(one[7], 49);
    }
}
