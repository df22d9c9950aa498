//! Small statistics the metrics need: percentiles, summaries, rank correlation.

use serde_json::{json, Value};

/// Percentile by linear interpolation between order statistics (the
/// "type 7" rule of R and NumPy). `sorted` must be ascending; `q` in [0, 1].
pub fn percentile(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let pos = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    Some(sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64))
}

/// The mean of `v`; `None` when empty.
pub fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// `{n, mean, p50, p90, p99, max}` of the values (sorted in place).
pub fn describe(values: &mut [f64]) -> Value {
    values.sort_by(f64::total_cmp);
    json!({
        "n": values.len(),
        "mean": mean(values),
        "p50": percentile(values, 0.5),
        "p90": percentile(values, 0.9),
        "p99": percentile(values, 0.99),
        "max": values.last().copied(),
    })
}

/// `{mean, p50, p90}` of the values (sorted in place): the short form for
/// match-quality distributions.
pub fn mean_p50_p90(values: &mut [f64]) -> Value {
    values.sort_by(f64::total_cmp);
    json!({
        "mean": mean(values),
        "p50": percentile(values, 0.5),
        "p90": percentile(values, 0.9),
    })
}

/// Ranks from 1, ties sharing the mean of their ranks. Sorts (value, index)
/// pairs in place rather than indices through the values: the rank
/// correlation samples rank every player, and the indirect sort's cache
/// misses were most of its cost. Tied values get the same averaged rank
/// whatever order they sort in, so an unstable sort gives the same ranks.
pub fn ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<(f64, u32)> = values
        .iter()
        .enumerate()
        .map(|(i, &v)| (v, i as u32))
        .collect();
    order.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
    let mut ranks = vec![0.0; values.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && order[j + 1].0 == order[i].0 {
            j += 1;
        }
        let rank = (i + j) as f64 / 2.0 + 1.0;
        for &(_, k) in &order[i..=j] {
            ranks[k as usize] = rank;
        }
        i = j + 1;
    }
    ranks
}

/// Pearson's correlation of `x` and `y`; `None` when undefined (fewer than two points, unequal lengths, or no variance).
pub fn pearson(x: &[f64], y: &[f64]) -> Option<f64> {
    let n = x.len();
    if n < 2 || n != y.len() {
        return None;
    }
    let (mx, my) = (mean(x)?, mean(y)?);
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in x.iter().zip(y) {
        sxy += (a - mx) * (b - my);
        sxx += (a - mx) * (a - mx);
        syy += (b - my) * (b - my);
    }
    (sxx > 0.0 && syy > 0.0).then(|| sxy / (sxx * syy).sqrt())
}

/// Spearman's rank correlation: Pearson on tie-averaged ranks.
pub fn spearman(x: &[f64], y: &[f64]) -> Option<f64> {
    pearson(&ranks(x), &ranks(y))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_interpolate_like_numpy() {
        let v = [1.0, 2.0, 3.0, 4.0, 10.0];
        assert_eq!(percentile(&v, 0.5), Some(3.0));
        // numpy.percentile([1,2,3,4,10], 90) == 7.6
        assert!((percentile(&v, 0.9).unwrap() - 7.6).abs() < 1e-12);
        assert_eq!(percentile(&v, 1.0), Some(10.0));
        assert_eq!(percentile(&[], 0.5), None);
    }

    /// The obvious ranking: indices sorted stably through the values.
    fn ranks_oracle(values: &[f64]) -> Vec<f64> {
        let mut order: Vec<usize> = (0..values.len()).collect();
        order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
        let mut ranks = vec![0.0; values.len()];
        let mut i = 0;
        while i < order.len() {
            let mut j = i;
            while j + 1 < order.len() && values[order[j + 1]] == values[order[i]] {
                j += 1;
            }
            for &k in &order[i..=j] {
                ranks[k] = (i + j) as f64 / 2.0 + 1.0;
            }
            i = j + 1;
        }
        ranks
    }

    use proptest::prelude::*;

    proptest! {
        #[test]
        fn ranks_equal_the_obvious_ranking(v in proptest::collection::vec(prop_oneof![0.0f64..10.0, (0u8..5).prop_map(f64::from)], 0..300)) {
            prop_assert_eq!(ranks(&v), ranks_oracle(&v));
        }
    }

    #[test]
    fn spearman_handles_ties_and_monotone_maps() {
        let x = [1.0, 2.0, 3.0, 4.0, 5.0];
        let y = [10.0, 20.0, 30.0, 40.0, 1000.0];
        assert!((spearman(&x, &y).unwrap() - 1.0).abs() < 1e-12);
        assert_eq!(ranks(&[5.0, 1.0, 5.0, 3.0]), vec![3.5, 1.0, 3.5, 2.0]);
        // scipy.stats.spearmanr([1,2,3,4,5],[5,6,7,8,7]).correlation == 0.8207826816681233
        let r = spearman(&x, &[5.0, 6.0, 7.0, 8.0, 7.0]).unwrap();
        assert!((r - 0.820_782_681_668_123_3).abs() < 1e-12, "{r}");
        assert_eq!(spearman(&[1.0, 1.0], &[2.0, 3.0]), None);
    }
}
