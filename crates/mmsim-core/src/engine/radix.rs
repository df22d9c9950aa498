//! The event queue's heap: a radix heap over (time, sequence) keys.
//!
//! A simulation pops events in non-decreasing key order and schedules new
//! ones at or after the key it just popped, which is the one condition a
//! radix heap needs. It sorts an event by the highest 4-bit digit in which
//! its key differs from the last key popped, and by the key's value of that
//! digit; a push is an append to one of 512 vectors, and a pop rescans only
//! the smallest non-empty one. On `bench-1v1` (a few thousand running
//! matches and returning parties) the binary heap's sift-down took a tenth
//! of a sampling profile's samples. A heap of one bucket per differing
//! *bit* moved each event through about twenty buckets before it popped (a
//! tenth of the simulation's instructions); one bucket per digit value moves
//! it through about five (docs/performance.md, session 24).
//!
//! A key below the last one popped (possible when the caller pops from a
//! lane of `EventQueue` whose head was earlier, then schedules between that
//! head and the heap's minimum) goes to a small binary heap beside it, so the
//! order never depends on the caller keeping the condition. That is rare
//! (fewer than 500 of `bench-1v1`'s 2.5 million pushes), though such keys
//! can wait there a while (a few hundred at most at once).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Bits per digit: 128-bit keys have 32 digits.
const DIGIT: u32 = 4;
/// Bucket `level * 16 + d` holds keys whose highest digit differing from
/// the last key popped is digit `level`, where the key's digit is `d`; `d`
/// is then above the last key's digit, so never 0, which leaves bucket 0
/// for the key equal to the last one popped. A lower bucket holds only
/// smaller keys.
const BUCKETS: usize = 128 / DIGIT as usize * (1 << DIGIT);
/// 64-bit words of the occupancy mask.
const WORDS: usize = BUCKETS / 64;
/// Entries an emptied bucket's vector may keep room for (16 KB).
const KEEP: usize = 512;

pub(super) struct RadixHeap<E> {
    buckets: Vec<Vec<(u128, E)>>,
    /// The key every bucket is relative to: the smallest key in the heap
    /// after the last `normalise`, never greater than any bucketed key.
    last: u128,
    /// Bit b of word w set when bucket 64 w + b (1 and up) holds a key, so
    /// the smallest occupied bucket is a few instructions away, not a scan.
    occupied: [u64; WORDS],
    /// Bit w set when word w of `occupied` is not zero.
    words: u8,
    /// Keys pushed below `last`, ordered among themselves.
    early: BinaryHeap<Early<E>>,
    len: usize,
}

/// An early entry, ordered by key alone (keys are unique).
struct Early<E>(Reverse<u128>, E);

impl<E> PartialEq for Early<E> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}
impl<E> Eq for Early<E> {}
impl<E> PartialOrd for Early<E> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Early<E> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.cmp(&other.0)
    }
}

impl<E> Default for RadixHeap<E> {
    fn default() -> Self {
        RadixHeap {
            buckets: (0..BUCKETS).map(|_| Vec::new()).collect(),
            last: 0,
            occupied: [0; WORDS],
            words: 0,
            early: BinaryHeap::new(),
            len: 0,
        }
    }
}

#[inline]
fn bucket(key: u128, last: u128) -> usize {
    let diff = key ^ last;
    if diff == 0 {
        return 0;
    }
    let level = (127 - diff.leading_zeros()) / DIGIT;
    let shift = level * DIGIT;
    let digit = ((key >> shift) & ((1 << DIGIT) - 1)) as usize;
    ((level as usize) << DIGIT) | digit
}

impl<E> RadixHeap<E> {
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub fn push(&mut self, key: u128, event: E) {
        self.len += 1;
        if key < self.last {
            self.early.push(Early(Reverse(key), event));
        } else {
            self.put(key, event, self.last);
        }
    }

    #[inline]
    fn put(&mut self, key: u128, event: E, last: u128) {
        let b = bucket(key, last);
        if b > 0 {
            self.occupied[b / 64] |= 1 << (b % 64);
            self.words |= 1 << (b / 64);
        }
        self.buckets[b].push((key, event));
    }

    /// Moves the smallest bucketed key into bucket 0 (making it `last`), so
    /// it can be read and popped; false when no key is bucketed.
    #[inline]
    fn normalise(&mut self) -> bool {
        if !self.buckets[0].is_empty() {
            return true;
        }
        if self.words == 0 {
            return false;
        }
        let w = self.words.trailing_zeros() as usize;
        let i = w * 64 + self.occupied[w].trailing_zeros() as usize;
        self.occupied[w] &= !(1 << (i % 64));
        if self.occupied[w] == 0 {
            self.words &= !(1 << w);
        }
        let mut moving = std::mem::take(&mut self.buckets[i]);
        let min = moving.iter().map(|e| e.0).min().expect("non-empty");
        self.last = min;
        // Every key in bucket i shares its digit and the digits above it
        // with the new last, so each lands in a lower bucket.
        for (key, event) in moving.drain(..) {
            self.put(key, event, min);
        }
        // Keep the emptied vector's capacity for the next time this bucket
        // fills, unless it is large: 512 buckets each keeping the most it
        // ever held came to 7.5 MB of bench-1v1's peak, for 0.5% of its
        // instructions.
        if moving.capacity() <= KEEP {
            self.buckets[i] = moving;
        }
        true
    }

    /// The smallest key, if any.
    #[inline]
    pub fn peek_key(&mut self) -> Option<u128> {
        let early = self.early.peek().map(|e| (e.0).0);
        if self.normalise() {
            // Every early key is below `last`, the bucketed minimum.
            Some(early.unwrap_or(self.last))
        } else {
            early
        }
    }

    /// The event of the smallest bucketed key, if any (keys pushed early
    /// are left out: they are rare, and this only serves look-ahead hints).
    #[inline]
    pub fn peek_bucketed(&mut self) -> Option<&E> {
        if self.normalise() {
            self.buckets[0].last().map(|e| &e.1)
        } else {
            None
        }
    }

    /// Removes the entry with the smallest key.
    #[inline]
    pub fn pop(&mut self) -> Option<(u128, E)> {
        let entry = match self.early.pop() {
            Some(Early(Reverse(key), event)) => Some((key, event)),
            None if self.normalise() => self.buckets[0].pop(),
            None => None,
        };
        if entry.is_some() {
            self.len -= 1;
        }
        entry
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Pushes interleaved with pops come out in the order a binary heap
        /// gives, including pushes below the last key popped.
        #[test]
        fn pops_in_the_order_of_a_binary_heap(
            ops in proptest::collection::vec((0u8..4, 0u64..1000, 0u32..4, any::<bool>()), 1..400)
        ) {
            let mut radix = RadixHeap::default();
            let mut oracle = BinaryHeap::new();
            let mut floor = 0u128;
            for (i, (op, dt, scale, below)) in ops.into_iter().enumerate() {
                if op == 0 {
                    let got = radix.pop();
                    let want = oracle.pop().map(|Reverse(e)| e);
                    prop_assert_eq!(got, want);
                    if let Some((k, _)) = got {
                        floor = k;
                    }
                } else {
                    // Keys after the last popped, or now and then below it,
                    // by gaps from a millisecond to years so every digit of
                    // the time differs somewhere; the low 64 bits keep keys
                    // unique and, scattered by an odd multiplier, make
                    // keys of one time differ in every digit of the sequence.
                    let dt = dt << (scale * 12);
                    let time = (floor >> 64) as u64;
                    let time = if below { time.saturating_sub(dt) } else { time + dt };
                    let seq = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                    let key = (u128::from(time) << 64) | u128::from(seq);
                    radix.push(key, i);
                    oracle.push(Reverse((key, i)));
                }
                prop_assert_eq!(radix.len(), oracle.len());
                // The look-ahead names the next event whenever no key was
                // pushed early, and looking never changes what pops next.
                if radix.early.is_empty() {
                    prop_assert_eq!(radix.peek_bucketed().copied(), oracle.peek().map(|Reverse(e)| e.1));
                }
                prop_assert_eq!(radix.peek_key(), oracle.peek().map(|Reverse(e)| e.0));
            }
            while let Some(Reverse(want)) = oracle.pop() {
                prop_assert_eq!(radix.pop(), Some(want));
            }
            prop_assert!(radix.pop().is_none());
        }
    }
}
