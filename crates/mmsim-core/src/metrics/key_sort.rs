//! A radix sort of (value, index) pairs: each rank-correlation sample's
//! moved ratings (up to 200k on `bench-1v1`) were a comparison sort costing
//! several hundred instructions a pair; sorting by digits of the value's
//! `total_cmp` key costs fewer and gives the same order.

/// Pairs shorter than this are sorted by comparison: the radix passes'
/// fixed cost (six histograms of 2,048 counts, zeroed and summed) is not
/// worth it for them (at 256, `dota2-5v5`'s samples of a few hundred
/// moved ratings cost 0.02% more than by comparison).
const SMALL: usize = 1024;

/// A value and the index that breaks its ties.
type Pair = (f64, u32);

/// Bits per digit: six passes cover the 64 bits of a key, and a digit's
/// histogram (2,048 counts) stays small beside the lists sorted.
const BITS: usize = 11;
const RADIX: usize = 1 << BITS;
const DIGITS: usize = 64_usize.div_ceil(BITS);

/// Digit `d` (0 the lowest) of key `k`.
#[inline]
fn digit(k: u64, d: usize) -> usize {
    ((k >> (BITS * d)) as usize) & (RADIX - 1)
}

/// `v`'s bits as an unsigned number ordered as `f64::total_cmp` orders the
/// values (negative values' bits reversed, the sign bit flipped).
#[inline]
fn ordered_bits(v: f64) -> u64 {
    let b = v.to_bits();
    // All ones for a negative value (reverses its order), else the sign bit.
    let mask = (((b as i64) >> 63) as u64) | (1 << 63);
    b ^ mask
}

/// Sorts `pairs` by value (`f64::total_cmp`), then by index: the order
/// `sort_pairs_plain` (the comparison sort, kept as the oracle) gives.
/// `buf` is scratch at least as long as `pairs`, which the caller already
/// holds: the rank correlation sorts its moved ratings in the room it is
/// about to merge them into, so the sort costs no memory (a scratch list
/// allocated and freed here raised `bench-1v1`'s peak by some 7 MB).
///
/// A stable least-significant-digit radix sort by 11-bit digits of the
/// value's `total_cmp` key, so pairs of one value keep the order they came
/// in: for the index to break ties, the pairs must come in ascending index
/// order (every caller builds them so).
pub fn sort_pairs_in(pairs: &mut [(f64, u32)], buf: &mut [(f64, u32)]) {
    debug_assert!(pairs.windows(2).all(|w| w[0].1 < w[1].1));
    if pairs.len() < SMALL {
        return sort_pairs_plain(pairs);
    }
    let buf = &mut buf[..pairs.len()];
    // Every digit's histogram in one read of the pairs.
    let mut counts = [[0u32; RADIX]; DIGITS];
    for &(v, _) in pairs.iter() {
        let k = ordered_bits(v);
        for (d, c) in counts.iter_mut().enumerate() {
            c[digit(k, d)] += 1;
        }
    }
    let n = pairs.len() as u32;
    // Whether the pairs, as last scattered, are in `buf`.
    let mut in_buf = false;
    for (d, c) in counts.iter_mut().enumerate() {
        // A digit every pair shares orders nothing.
        if c.contains(&n) {
            continue;
        }
        let mut start = 0;
        for x in c.iter_mut() {
            (*x, start) = (start, start + *x);
        }
        let (from, to): (&[Pair], &mut [Pair]) = if in_buf {
            (&*buf, &mut *pairs)
        } else {
            (&*pairs, &mut *buf)
        };
        for &p in from {
            let b = digit(ordered_bits(p.0), d);
            to[c[b] as usize] = p;
            c[b] += 1;
        }
        in_buf = !in_buf;
    }
    if in_buf {
        pairs.copy_from_slice(buf);
    }
    debug_assert!(pairs.windows(2).all(|w| w[0]
        .0
        .total_cmp(&w[1].0)
        .then(w[0].1.cmp(&w[1].1))
        .is_lt()));
}

/// The comparison sort `sort_pairs` replaces: by value (`total_cmp`), then
/// by index. Its oracle, and its path for short lists.
pub fn sort_pairs_plain(pairs: &mut [(f64, u32)]) {
    pairs.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Values with many ties, both zeros, infinities, NaNs of both signs
    /// and payloads, subnormals, values that differ in one low bit, and
    /// values that differ from a few others in one 11-bit digit only.
    fn value() -> impl Strategy<Value = f64> {
        prop_oneof![
            (0u8..6).prop_map(|k| f64::from(k) * 250.0),
            Just(0.0),
            Just(-0.0),
            Just(f64::INFINITY),
            Just(f64::NEG_INFINITY),
            Just(f64::NAN),
            Just(-f64::NAN),
            Just(f64::from_bits(0x7FF0_0000_0000_0001)),
            Just(f64::from_bits(0xFFF8_0000_0000_0007)),
            Just(f64::MIN_POSITIVE / 4.0),
            Just(-f64::MIN_POSITIVE / 4.0),
            Just(1500.0),
            Just(f64::from_bits(1500f64.to_bits() + 1)),
            Just(f64::from_bits(1500f64.to_bits() + 256)),
            any::<f64>(),
            -3000.0..3000.0f64,
            // Values alike but in one digit of the key, so every pass matters.
            (0u64..6, 0u64..0x800)
                .prop_map(|(d, r)| f64::from_bits(1500f64.to_bits() ^ (r << (11 * d)))),
            (0u64..6, 0u64..0x800)
                .prop_map(|(d, r)| f64::from_bits((-2.5f64).to_bits() ^ (r << (11 * d)))),
        ]
    }

    proptest! {
        /// The radix sort puts the pairs in the comparison sort's order, bit
        /// for bit, above and below the length where it hands over.
        #[test]
        fn radix_order_is_the_comparison_order(
            values in proptest::collection::vec(value(), 0..3000),
        ) {
            let pairs: Vec<(f64, u32)> =
                values.iter().enumerate().map(|(i, &v)| (v, i as u32 * 3)).collect();
            let mut want = pairs.clone();
            sort_pairs_plain(&mut want);
            let mut got = pairs;
            let mut buf = vec![(0.0, 0); got.len()];
            sort_pairs_in(&mut got, &mut buf);
            let bits = |p: &[(f64, u32)]| -> Vec<(u64, u32)> {
                p.iter().map(|&(v, i)| (v.to_bits(), i)).collect()
            };
            prop_assert_eq!(bits(&got), bits(&want));
        }
    }

    /// Values that differ only in their lowest `d` digits take `d` passes,
    /// so the sorted pairs end in the scratch half the time and must be
    /// copied back.
    #[test]
    fn every_count_of_passes_ends_in_the_pairs() {
        for d in 1..=4u32 {
            let bits = 11 * d - 1;
            let pairs: Vec<(f64, u32)> = (0..2_000u64)
                .map(|i| {
                    let low = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits);
                    (f64::from_bits(1.0f64.to_bits() | low), i as u32)
                })
                .collect();
            let mut want = pairs.clone();
            sort_pairs_plain(&mut want);
            let mut got = pairs;
            let mut buf = vec![(0.0, 0); got.len() + 7];
            sort_pairs_in(&mut got, &mut buf);
            assert_eq!(got, want, "{d} digits");
        }
    }

    #[test]
    fn ordered_bits_orders_as_total_cmp() {
        let vs = [
            f64::NEG_INFINITY,
            -1e300,
            -1.0,
            -f64::MIN_POSITIVE / 4.0,
            -0.0,
            0.0,
            f64::MIN_POSITIVE / 4.0,
            1.0,
            1e300,
            f64::INFINITY,
            f64::NAN,
        ];
        for a in vs {
            for b in vs {
                assert_eq!(
                    ordered_bits(a).cmp(&ordered_bits(b)),
                    a.total_cmp(&b),
                    "{a} {b}"
                );
            }
        }
    }
}
