//! Distributions kept in memory that grows with the range of values, not
//! with how many were seen: a run of ten million tickets summarises its
//! waits in the same few megabytes as a run of one million.
//!
//! - [`MsHist`] counts simulated durations at their own resolution (whole
//!   milliseconds), so its percentiles are exact: the same numbers, to the
//!   bit, as sorting every value.
//! - [`Sketch`] holds any real values in logarithmic buckets (the DDSketch
//!   construction): every quantile it returns lies within [`Sketch::REL_ERR`]
//!   (0.01%) of the exact one, or within [`Sketch::ZERO`] of it for values
//!   nearer zero than that. Minimum and maximum are exact.

use std::collections::BTreeMap;

/// What the summary and the plots read from a distribution.
pub trait Dist {
    /// How many values were added.
    fn n(&self) -> u64;
    /// The `r`-th smallest value (0-based); `r < n`.
    fn at_rank(&self, r: u64) -> f64;
    /// Every distinct value (or bucket representative) ascending, with its count.
    fn for_each(&self, f: &mut dyn FnMut(f64, u64));

    /// Percentile by linear interpolation between order statistics (the
    /// "type 7" rule of R and NumPy, as `stats::percentile`); `q` in [0, 1].
    fn quantile(&self, q: f64) -> Option<f64> {
        let n = self.n();
        if n == 0 {
            return None;
        }
        let pos = q.clamp(0.0, 1.0) * (n - 1) as f64;
        let lo = pos.floor() as u64;
        let hi = pos.ceil() as u64;
        let (a, b) = (self.at_rank(lo), self.at_rank(hi));
        Some(a + (b - a) * (pos - lo as f64))
    }
    /// The least value, if any.
    fn min(&self) -> Option<f64> {
        (self.n() > 0).then(|| self.at_rank(0))
    }
    /// The greatest value, if any.
    fn max(&self) -> Option<f64> {
        (self.n() > 0).then(|| self.at_rank(self.n() - 1))
    }
    /// The mean, summed in ascending order (as the sorted-array summary did).
    fn mean_sorted(&self) -> Option<f64> {
        let n = self.n();
        if n == 0 {
            return None;
        }
        let mut sum = 0.0;
        self.for_each(&mut |v, c| {
            for _ in 0..c {
                sum += v;
            }
        });
        Some(sum / n as f64)
    }
}

/// Values already in memory, sorted: the obvious distribution, used where a
/// handful of values is all there is and as the oracle the others are tested against.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sorted(pub Vec<f64>);

impl Sorted {
    /// The distribution of `v` (sorted here).
    pub fn new(mut v: Vec<f64>) -> Self {
        v.sort_by(f64::total_cmp);
        Sorted(v)
    }
}

impl Dist for Sorted {
    fn n(&self) -> u64 {
        self.0.len() as u64
    }
    fn at_rank(&self, r: u64) -> f64 {
        self.0[r as usize]
    }
    fn for_each(&self, f: &mut dyn FnMut(f64, u64)) {
        self.0.iter().for_each(|&v| f(v, 1));
    }
}

/// Counts per millisecond, in chunks so that a few very long waits cost a
/// chunk each rather than a dense array up to the longest.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MsHist {
    /// Chunks below `NEAR` by their number, so the values of most runs
    /// (waits of seconds to minutes) find their chunk by indexing, not by a
    /// tree search (a tenth of a 1v1 ticket's cost in the collector). Only
    /// grown up to the largest chunk seen, so two histograms of the same
    /// values are equal.
    near: Vec<Option<Chunk>>,
    /// Chunks from `NEAR` up, by number.
    far: BTreeMap<u64, Chunk>,
    n: u64,
    sum_ms: u128,
}

/// One chunk's total (so a rank query skips whole chunks) and its counts.
type Chunk = (u64, Box<[u64; CHUNK]>);

/// Milliseconds a chunk covers. Most runs' waits are sparse over minutes,
/// so most chunks hold a few counts: 2 KB chunks rather than 8 KB took
/// 10-30 MB off the peak of the 5v5 presets (`regions-roles-5v5` 91 ->
/// 62 MB) at the same CPU, `bench-1v1`'s dense waits included.
const CHUNK: usize = 256;

/// Chunks kept by index: the first 4096 (about 17 minutes), 64 KB of
/// index at most.
const NEAR: u64 = 4096;

impl MsHist {
    /// Adds one value, in milliseconds.
    pub fn add_ms(&mut self, ms: u64) {
        let (total, chunk) = self.chunk_mut(ms / CHUNK as u64);
        *total += 1;
        chunk[(ms % CHUNK as u64) as usize] += 1;
        self.n += 1;
        self.sum_ms += u128::from(ms);
    }

    fn chunk_mut(&mut self, k: u64) -> &mut Chunk {
        let new = || (0, Box::new([0; CHUNK]));
        if k < NEAR {
            let k = k as usize;
            if k >= self.near.len() {
                self.near.resize(k + 1, None);
            }
            self.near[k].get_or_insert_with(new)
        } else {
            self.far.entry(k).or_insert_with(new)
        }
    }

    /// Every chunk with its number, ascending.
    fn chunks(&self) -> impl Iterator<Item = (u64, &Chunk)> + '_ {
        let near =
            (self.near.iter().enumerate()).filter_map(|(k, c)| Some((k as u64, c.as_ref()?)));
        near.chain(self.far.iter().map(|(&k, c)| (k, c)))
    }

    /// Adds every count of `other` (histograms of two runs, or of deciles).
    pub fn merge(&mut self, other: &MsHist) {
        for (k, (total, c)) in other.chunks() {
            let (my_total, mine) = self.chunk_mut(k);
            *my_total += total;
            for (m, o) in mine.iter_mut().zip(c.iter()) {
                *m += o;
            }
        }
        self.n += other.n;
        self.sum_ms += other.sum_ms;
    }

    /// The exact mean in seconds, from the integer total.
    pub fn mean_exact_s(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum_ms as f64 / self.n as f64 / 1000.0)
    }

    fn secs(ms: u64) -> f64 {
        // As `SimDuration::as_secs_f64`, so values match the tables to the bit.
        crate::model::SimDuration::from_ms(ms).as_secs_f64()
    }
}

impl Dist for MsHist {
    fn n(&self) -> u64 {
        self.n
    }
    fn at_rank(&self, r: u64) -> f64 {
        let mut seen = 0;
        for (k, &(total, ref c)) in self.chunks() {
            if seen + total <= r {
                seen += total;
                continue;
            }
            for (i, &n) in c.iter().enumerate() {
                seen += n;
                if seen > r {
                    return Self::secs(k * CHUNK as u64 + i as u64);
                }
            }
        }
        panic!("rank {r} out of {} values", self.n)
    }
    fn for_each(&self, f: &mut dyn FnMut(f64, u64)) {
        for (k, (_, c)) in self.chunks() {
            for (i, &n) in c.iter().enumerate() {
                if n > 0 {
                    f(Self::secs(k * CHUNK as u64 + i as u64), n);
                }
            }
        }
    }
}

/// Counts of consecutive bucket indices from `offset`: a dense array,
/// because values cluster and an add must be a few instructions (a tree of
/// buckets cost a seventh of a 1v1 run). Grows by doubling in either
/// direction, so a run of ever smaller values costs amortised O(1) per add.
#[derive(Clone, Debug, Default, PartialEq)]
struct Store {
    offset: i32,
    counts: Vec<u64>,
}

impl Store {
    fn add(&mut self, i: i32) {
        if self.counts.is_empty() {
            self.offset = i;
            self.counts.push(0);
        } else if i < self.offset {
            let need = (self.offset - i) as usize;
            let grow = need.max(self.counts.len());
            self.counts.splice(0..0, std::iter::repeat_n(0, grow));
            self.offset -= grow as i32;
        }
        let k = (i - self.offset) as usize;
        if k >= self.counts.len() {
            let len = (k + 1).max(2 * self.counts.len());
            self.counts.resize(len, 0);
        }
        self.counts[k] += 1;
    }

    /// Occupied buckets as (index, count), ascending.
    fn iter(&self) -> impl DoubleEndedIterator<Item = (i32, u64)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(move |(k, &c)| (self.offset + k as i32, c))
    }

    #[cfg(test)]
    fn occupied(&self) -> usize {
        self.counts.iter().filter(|&&c| c > 0).count()
    }
}

/// `y.ceil() as i32` without `ceil`, a library call on the default x86-64
/// target (no rounding instruction), paid for every value a sketch adds.
/// `as i32` truncates toward zero and saturates (NaN to 0), so one step up
/// when the truncation fell below `y` gives the ceiling, saturated alike.
#[inline]
fn ceil_i32(y: f64) -> i32 {
    let t = y as i32;
    if f64::from(t) < y {
        t.saturating_add(1)
    } else {
        t
    }
}

/// Real values in logarithmic buckets of relative width `2 * REL_ERR`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sketch {
    /// Bucket index of |x| to count, for x > ZERO and for x < -ZERO.
    pos: Store,
    neg: Store,
    zeros: u64,
    n: u64,
    sum: f64,
    min: f64,
    max: f64,
}

impl Sketch {
    /// Largest relative error of any quantile.
    pub const REL_ERR: f64 = 1e-4;
    /// Values this near zero count as zero (absolute error at most this).
    pub const ZERO: f64 = 1e-9;

    fn gamma_ln() -> f64 {
        ((1.0 + Self::REL_ERR) / (1.0 - Self::REL_ERR)).ln()
    }

    fn index(abs: f64) -> i32 {
        ceil_i32(abs.ln() / Self::gamma_ln())
    }

    /// The point of bucket `i` = (gamma^(i-1), gamma^i] nearest, in relative
    /// terms, to everything in it.
    fn representative(i: i32) -> f64 {
        let g = Self::gamma_ln();
        2.0 * (f64::from(i) * g).exp() / (1.0 + g.exp())
    }

    /// Adds one value (NaN is ignored).
    pub fn add(&mut self, x: f64) {
        if x.is_nan() {
            return;
        }
        if self.n == 0 {
            self.min = x;
            self.max = x;
        } else {
            self.min = self.min.min(x);
            self.max = self.max.max(x);
        }
        self.n += 1;
        self.sum += x;
        if x > Self::ZERO {
            self.pos.add(Self::index(x));
        } else if x < -Self::ZERO {
            self.neg.add(Self::index(-x));
        } else {
            self.zeros += 1;
        }
    }

    /// The mean of the values as added (a running sum in arrival order).
    pub fn mean(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum / self.n as f64)
    }

    /// Buckets ascending by value, each as (representative, count), with the
    /// extremes replaced by the exact minimum and maximum.
    fn buckets(&self) -> impl Iterator<Item = (f64, u64)> + '_ {
        let neg = self
            .neg
            .iter()
            .rev()
            .map(|(i, c)| (-Self::representative(i), c));
        let zero = (self.zeros > 0).then_some((0.0, self.zeros));
        let pos = self.pos.iter().map(|(i, c)| (Self::representative(i), c));
        neg.chain(zero).chain(pos)
    }
}

impl Dist for Sketch {
    fn n(&self) -> u64 {
        self.n
    }
    fn at_rank(&self, r: u64) -> f64 {
        if r == 0 {
            return self.min;
        }
        if r + 1 >= self.n {
            return self.max;
        }
        let mut seen = 0;
        for (v, c) in self.buckets() {
            seen += c;
            if seen > r {
                return v.clamp(self.min, self.max);
            }
        }
        self.max
    }
    fn for_each(&self, f: &mut dyn FnMut(f64, u64)) {
        for (v, c) in self.buckets() {
            f(v.clamp(self.min, self.max), c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::stats::percentile;
    use proptest::prelude::*;

    const QS: [f64; 9] = [0.0, 0.01, 0.1, 0.25, 0.5, 0.9, 0.99, 0.999, 1.0];

    /// `ceil_i32` is `f64::ceil` then `as i32` on every value: integers,
    /// halves and their neighbours, both zeros, NaN, infinities and values
    /// past `i32`'s range either side.
    #[test]
    fn ceil_i32_is_ceil_then_cast() {
        let mut ys = vec![
            0.0,
            -0.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MIN_POSITIVE,
            -f64::MIN_POSITIVE,
            f64::MAX,
            f64::MIN,
            f64::from(i32::MAX),
            f64::from(i32::MIN),
            f64::from(i32::MAX) + 0.5,
            f64::from(i32::MAX) - 0.5,
            f64::from(i32::MIN) - 0.5,
            f64::from(i32::MIN) + 0.5,
            1e12,
            -1e12,
        ];
        for k in -2_000..2_000 {
            let x = f64::from(k) / 4.0;
            ys.extend([x, x.next_up(), x.next_down()]);
        }
        for y in ys {
            assert_eq!(ceil_i32(y), y.ceil() as i32, "{y:e}");
        }
    }

    proptest! {
        /// As above, over random bit patterns (every exponent and sign).
        #[test]
        fn ceil_i32_is_ceil_then_cast_on_any_bits(bits in any::<u64>()) {
            let y = f64::from_bits(bits);
            prop_assert_eq!(ceil_i32(y), y.ceil() as i32);
        }

        /// A sketch's bucket index is the one `f64::ceil` gives, over the
        /// positive values a sketch files (above its zero, up to infinity).
        #[test]
        fn sketch_index_is_the_ceil_of_the_log(bits in 0x3E11_2E0B_E826_D695u64..=0x7FF0_0000_0000_0000) {
            let abs = f64::from_bits(bits);
            prop_assert_eq!(Sketch::index(abs), (abs.ln() / Sketch::gamma_ln()).ceil() as i32);
        }

        #[test]
        fn ms_histogram_percentiles_equal_sorting_to_the_bit(ms in proptest::collection::vec(0u64..5_000_000, 1..400)) {
            let mut h = MsHist::default();
            for &m in &ms {
                h.add_ms(m);
            }
            let exact = Sorted::new(ms.iter().map(|&m| MsHist::secs(m)).collect());
            for q in QS {
                prop_assert_eq!(h.quantile(q).unwrap().to_bits(), percentile(&exact.0, q).unwrap().to_bits());
            }
            prop_assert_eq!(h.mean_sorted().unwrap().to_bits(), exact.mean_sorted().unwrap().to_bits());
            let mean = exact.0.iter().sum::<f64>() / exact.0.len() as f64;
            prop_assert!((h.mean_exact_s().unwrap() - mean).abs() <= 1e-9 * mean.abs().max(1.0));
        }

        /// Merging the histograms of two halves gives the histogram of
        /// the whole, chunks near and far alike, equal as values (so the
        /// layout depends only on the values, not on how they arrived).
        #[test]
        fn ms_histogram_merge_equals_adding_everything(
            a in proptest::collection::vec(prop_oneof![0u64..300_000, 0u64..5_000_000], 0..200),
            b in proptest::collection::vec(prop_oneof![0u64..300_000, 0u64..5_000_000], 0..200),
        ) {
            let (mut ha, mut hb, mut all) = (MsHist::default(), MsHist::default(), MsHist::default());
            for &m in &a {
                ha.add_ms(m);
                all.add_ms(m);
            }
            for &m in &b {
                hb.add_ms(m);
                all.add_ms(m);
            }
            ha.merge(&hb);
            prop_assert_eq!(&ha, &all);
            let mut seen = Vec::new();
            all.for_each(&mut |v, c| seen.push((v, c)));
            let mut sorted: Vec<f64> = a.iter().chain(&b).map(|&m| MsHist::secs(m)).collect();
            sorted.sort_by(f64::total_cmp);
            let mut want: Vec<(f64, u64)> = Vec::new();
            for v in sorted {
                match want.last_mut() {
                    Some((w, c)) if *w == v => *c += 1,
                    _ => want.push((v, 1)),
                }
            }
            prop_assert_eq!(seen, want);
        }

        #[test]
        fn sketch_quantiles_are_within_the_stated_relative_error(xs in proptest::collection::vec(prop_oneof![-1e4f64..1e4, 0.0..1.0, Just(0.0), 1e-3..1e7], 1..400)) {
            let mut s = Sketch::default();
            for &x in &xs {
                s.add(x);
            }
            let exact = Sorted::new(xs.clone());
            for q in QS {
                let want = percentile(&exact.0, q).unwrap();
                let got = s.quantile(q).unwrap();
                // Interpolating between two order statistics of the same sign keeps the
                // relative bound; across zero the bound is on each of the two.
                let lo = exact.at_rank((q * (xs.len() - 1) as f64).floor() as u64);
                let hi = exact.at_rank((q * (xs.len() - 1) as f64).ceil() as u64);
                let tol = Sketch::REL_ERR * lo.abs().max(hi.abs()) + Sketch::ZERO;
                prop_assert!((got - want).abs() <= tol * (1.0 + 1e-9), "q {q}: {got} vs {want}");
            }
            prop_assert_eq!(s.min(), exact.min());
            prop_assert_eq!(s.max(), exact.max());
        }
    }

    #[test]
    fn the_sketch_stays_small_however_many_values() {
        let mut s = Sketch::default();
        for i in 0..1_000_000u32 {
            s.add(f64::from(i % 5000) * 0.37 + 0.01);
        }
        // Values span 0.01..1850: ln(185000) / 2e-4 buckets at most.
        assert!(s.pos.occupied() < 61_000, "{}", s.pos.occupied());
        assert!(s.pos.counts.len() < 4 * 61_000, "{}", s.pos.counts.len());
        assert_eq!(s.n(), 1_000_000);
        let p50 = s.quantile(0.5).unwrap();
        assert!((p50 - 2499.5 * 0.37).abs() / p50 < 2e-4, "{p50}");
    }

    #[test]
    fn histogram_merge_adds_counts() {
        let (mut a, mut b) = (MsHist::default(), MsHist::default());
        a.add_ms(5);
        b.add_ms(5_000_000);
        b.add_ms(7);
        a.merge(&b);
        assert_eq!(a.n(), 3);
        assert_eq!(a.at_rank(1), 0.007);
        assert_eq!(a.max(), Some(5000.0));
    }
}
