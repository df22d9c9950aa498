//! The figures that turn several seeds into one answer: the Student-t 95%
//! interval of a mean, the Pareto front of settings, and dotted metric paths
//! into a `summary.json`.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// A metric over seeds: the mean, its two-sided 95% Student-t interval and
/// the seed-to-seed standard deviation. Bounds and `sd` are `None` below two
/// seeds, where no interval exists; everything is `None` with no values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ci {
    pub mean: Option<f64>,
    pub ci95_low: Option<f64>,
    pub ci95_high: Option<f64>,
    pub n: usize,
    pub sd: Option<f64>,
}

/// The 97.5% quantile of Student's t with `df` degrees of freedom.
pub fn t975(df: usize) -> f64 {
    StudentsT::new(0.0, 1.0, df as f64)
        .expect("df >= 1 gives a valid t distribution")
        .inverse_cdf(0.975)
}

pub fn ci95(values: &[f64]) -> Ci {
    let n = values.len();
    if n == 0 {
        return Ci {
            mean: None,
            ci95_low: None,
            ci95_high: None,
            n,
            sd: None,
        };
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    if n == 1 {
        return Ci {
            mean: Some(mean),
            ci95_low: None,
            ci95_high: None,
            n,
            sd: None,
        };
    }
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let sd = var.sqrt();
    let half = t975(n - 1) * sd / (n as f64).sqrt();
    Ci {
        mean: Some(mean),
        ci95_low: Some(mean - half),
        ci95_high: Some(mean + half),
        n,
        sd: Some(sd),
    }
}

/// Which points lie on the Pareto front when both coordinates are
/// minimised: no other point is at least as good in both and better in one.
/// Points with a missing or NaN coordinate are never on it.
pub fn pareto_front(points: &[(Option<f64>, Option<f64>)]) -> Vec<bool> {
    let ok = |p: &(Option<f64>, Option<f64>)| match p {
        (Some(x), Some(y)) if x.is_finite() && y.is_finite() => Some((*x, *y)),
        _ => None,
    };
    points
        .iter()
        .map(|p| {
            let Some((x, y)) = ok(p) else { return false };
            !points
                .iter()
                .filter_map(ok)
                .any(|(ox, oy)| ox <= x && oy <= y && (ox < x || oy < y))
        })
        .collect()
}

/// Looks up `wait_s.p90` or `wait_s_by_skill_decile.9.p90` in a summary;
/// `None` when the path is absent or the value is not a number.
pub fn metric(summary: &Value, path: &str) -> Option<f64> {
    lookup(summary, path)?.as_f64()
}

/// The node at a dotted path (array elements by index), if any.
pub fn lookup<'a>(summary: &'a Value, path: &str) -> Option<&'a Value> {
    let mut node = summary;
    for part in path.split('.') {
        node = match node {
            Value::Object(m) => m.get(part)?,
            Value::Array(a) => a.get(part.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(node)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-6
    }

    #[test]
    fn student_t_interval_matches_a_hand_computation() {
        // mean 3, sd sqrt(2.5), se sqrt(0.5); t(0.975, 4) = 2.776445 from tables.
        let c = ci95(&[1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!(c.n, 5);
        assert!(close(c.mean.unwrap(), 3.0));
        assert!(close(c.sd.unwrap(), 2.5f64.sqrt()));
        let half = 2.776_445_105 * 0.5f64.sqrt();
        assert!(close(c.ci95_low.unwrap(), 3.0 - half), "{c:?}");
        assert!(close(c.ci95_high.unwrap(), 3.0 + half), "{c:?}");
        // Two seeds: t(0.975, 1) = 12.7062, so the interval is wide.
        let c = ci95(&[10.0, 12.0]);
        let half = 12.706_204_736 * 2f64.sqrt() / 2f64.sqrt();
        assert!(close(c.ci95_high.unwrap() - 11.0, half), "{c:?}");
    }

    #[test]
    fn one_seed_has_a_mean_but_no_interval() {
        let c = ci95(&[7.0]);
        assert_eq!(c.mean, Some(7.0));
        assert_eq!((c.ci95_low, c.ci95_high, c.sd), (None, None, None));
        assert_eq!(ci95(&[]).mean, None);
    }

    #[test]
    fn pareto_front_keeps_only_undominated_points() {
        let p = |x: f64, y: f64| (Some(x), Some(y));
        let pts = [
            p(1.0, 5.0), // best x
            p(2.0, 2.0), // a trade-off
            p(3.0, 3.0), // dominated by (2, 2)
            p(5.0, 1.0), // best y
            p(2.0, 4.0), // dominated by (2, 2): equal x, worse y
            (None, Some(0.0)),
            p(5.0, 1.0), // a tie with a front point stays on the front
        ];
        assert_eq!(
            pareto_front(&pts),
            vec![true, true, false, true, false, false, true]
        );
    }

    #[test]
    fn metric_paths_reach_nested_values_and_array_elements() {
        let s = json!({"wait_s": {"p90": 12.5}, "d": [{"x": 1}, {"x": 2}], "name": "a"});
        assert_eq!(metric(&s, "wait_s.p90"), Some(12.5));
        assert_eq!(metric(&s, "d.1.x"), Some(2.0));
        assert_eq!(metric(&s, "wait_s.p99"), None);
        assert_eq!(metric(&s, "name"), None);
    }
}
