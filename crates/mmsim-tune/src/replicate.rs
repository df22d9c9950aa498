//! Replications: one scenario over seeds seed..seed+N-1, spread over cores,
//! and the per-seed summaries folded into one with a mean and a 95% interval
//! for every number.

use super::stats::ci95;
use mmsim_scenario::Scenario;
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
    mmsim_scenario::run::run_summary(scenario, seed, &mut |_, _| {})
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
///
/// The batch fold, kept as the reference `Aggregator` (what runs use) is
/// tested against.
#[cfg(test)]
pub fn aggregate(seeds: &[u64], summaries: &[Value]) -> Value {
    head(seeds, fold(&summaries.iter().collect::<Vec<_>>()))
}

#[cfg(test)]
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

/// `aggregate` fed one summary at a time, so a replicated run holds each
/// seed's numbers (eight bytes each) rather than every seed's whole summary
/// until the end. The result is the same value, bit for bit: numbers are
/// kept in seed order and folded by the same `ci95`
/// (`the_streaming_fold_is_the_batch_fold`).
#[derive(Debug, Default)]
pub struct Aggregator {
    root: Acc,
}

/// One node of the summaries' common shape, as the first present value
/// fixed it (the batch fold's rule).
#[derive(Debug, Default)]
enum Acc {
    /// No value other than null yet.
    #[default]
    Empty,
    Numbers(Vec<f64>),
    /// Keys of the first object, in its order.
    Object(Vec<(String, Acc)>),
    Array(Vec<Acc>),
    /// Text or booleans: every present value, in order.
    Other(Vec<Value>),
}

impl Aggregator {
    pub fn new() -> Self {
        Self::default()
    }

    /// Folds in the next seed's summary.
    pub fn add(&mut self, summary: &Value) {
        self.root.add(summary);
    }

    /// The folded summary, as `aggregate(seeds, all summaries)` gives it.
    pub fn finish(&self, seeds: &[u64]) -> Value {
        head(seeds, self.root.finish())
    }
}

impl Acc {
    fn add(&mut self, v: &Value) {
        if v.is_null() {
            return;
        }
        if let Acc::Empty = self {
            *self = match v {
                Value::Number(_) => Acc::Numbers(Vec::new()),
                Value::Object(m) => {
                    Acc::Object(m.keys().map(|k| (k.clone(), Acc::Empty)).collect())
                }
                Value::Array(_) => Acc::Array(Vec::new()),
                _ => Acc::Other(Vec::new()),
            };
        }
        match self {
            Acc::Empty => {}
            Acc::Numbers(xs) => xs.extend(v.as_f64()),
            Acc::Object(children) => {
                for (key, child) in children {
                    if let Some(c) = v.get(key.as_str()) {
                        child.add(c);
                    }
                }
            }
            Acc::Array(children) => {
                if let Some(items) = v.as_array() {
                    if items.len() > children.len() {
                        children.resize_with(items.len(), Acc::default);
                    }
                    for (child, item) in children.iter_mut().zip(items) {
                        child.add(item);
                    }
                }
            }
            Acc::Other(all) => all.push(v.clone()),
        }
    }

    fn finish(&self) -> Value {
        match self {
            Acc::Empty => Value::Null,
            Acc::Numbers(xs) => {
                let c = ci95(xs);
                json!({"mean": c.mean, "ci95_low": c.ci95_low, "ci95_high": c.ci95_high, "n": c.n})
            }
            Acc::Object(children) => Value::Object(
                children
                    .iter()
                    .map(|(k, c)| (k.clone(), c.finish()))
                    .collect(),
            ),
            Acc::Array(children) => Value::Array(children.iter().map(Acc::finish).collect()),
            Acc::Other(all) => {
                if all.iter().all(|v| v == &all[0]) {
                    all[0].clone()
                } else {
                    Value::Array(all.clone())
                }
            }
        }
    }
}

fn head(seeds: &[u64], folded: Value) -> Value {
    let mut out = match folded {
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

    /// Summaries of several shapes: nulls, missing keys, arrays of
    /// different lengths, text that differs, a number where an object was.
    fn ragged() -> Vec<Value> {
        vec![
            json!({"seed": 1, "name": "a", "w": {"p50": 1.0, "p90": null}, "h": [1, 2], "x": null, "t": true}),
            json!({"seed": 2, "name": "a", "w": {"p50": 3.5, "p90": 9.0, "extra": 1}, "h": [4, 5, 6], "x": {"k": 2}, "t": false}),
            json!({"seed": 3, "name": "b", "w": 7, "h": [], "x": {"k": 5, "j": 1}, "t": true}),
            json!({"seed": 4, "name": "a", "w": {"p50": -2.25}, "h": [0.1, null, 3e9], "x": {"k": 0.3}}),
        ]
    }

    #[test]
    fn the_streaming_fold_is_the_batch_fold() {
        let all = ragged();
        for n in 1..=all.len() {
            let seeds: Vec<u64> = (1..=n as u64).collect();
            let mut agg = Aggregator::new();
            for s in &all[..n] {
                agg.add(s);
            }
            let streamed = serde_json::to_string(&agg.finish(&seeds)).unwrap();
            let batch = serde_json::to_string(&aggregate(&seeds, &all[..n])).unwrap();
            assert_eq!(streamed, batch, "{n} summaries");
        }
    }

    #[test]
    fn the_streaming_fold_of_real_summaries_is_the_batch_fold() {
        let (_, scenario) = mmsim_scenario::run::short_smoke();
        let seeds = [3, 4, 5];
        let summaries: Vec<Value> = seeds.iter().map(|&s| summary_for(&scenario, s)).collect();
        let mut agg = Aggregator::new();
        summaries.iter().for_each(|s| agg.add(s));
        assert_eq!(
            serde_json::to_string(&agg.finish(&seeds)).unwrap(),
            serde_json::to_string(&aggregate(&seeds, &summaries)).unwrap()
        );
    }

    #[test]
    fn results_come_back_in_job_order_on_any_thread_count() {
        let one = par_map(Some(1), 20, |i| i * i, || {}).unwrap();
        let two = par_map(Some(2), 20, |i| i * i, || {}).unwrap();
        assert_eq!(one, two);
        assert_eq!(one[7], 49);
    }
}
