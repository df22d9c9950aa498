//! Simulated time as integers, so event order never depends on float rounding.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// Milliseconds since the start of a run.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct SimTime(u64);

/// A span of simulated time, in milliseconds.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct SimDuration(u64);

impl SimTime {
    /// The start of the run.
    pub const ZERO: SimTime = SimTime(0);
    /// Later than any event: "never".
    pub const MAX: SimTime = SimTime(u64::MAX);

    /// The instant `ms` milliseconds after the start.
    pub const fn from_ms(ms: u64) -> Self {
        SimTime(ms)
    }
    /// The instant `s` seconds after the start, to the millisecond.
    pub fn from_secs_f64(s: f64) -> Self {
        SimTime(secs_to_ms(s))
    }
    /// Milliseconds since the start.
    pub const fn as_ms(self) -> u64 {
        self.0
    }
    /// Seconds since the start.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1000.0
    }
    /// Time elapsed since `earlier`; zero if `earlier` is later.
    pub fn since(self, earlier: SimTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(earlier.0))
    }
}

impl SimDuration {
    /// No time at all.
    pub const ZERO: SimDuration = SimDuration(0);

    /// A span of `ms` milliseconds.
    pub const fn from_ms(ms: u64) -> Self {
        SimDuration(ms)
    }
    /// A span of `s` whole seconds.
    pub const fn from_secs(s: u64) -> Self {
        SimDuration(s * 1000)
    }
    /// Rounds to the nearest millisecond; negative and NaN inputs become zero.
    pub fn from_secs_f64(s: f64) -> Self {
        SimDuration(secs_to_ms(s))
    }
    /// The span in milliseconds.
    pub const fn as_ms(self) -> u64 {
        self.0
    }
    /// The span in seconds.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1000.0
    }
    /// Whether the span is empty.
    pub const fn is_zero(self) -> bool {
        self.0 == 0
    }
}

fn secs_to_ms(s: f64) -> u64 {
    if s.is_nan() || s <= 0.0 {
        0
    } else if s >= u64::MAX as f64 / 1000.0 {
        u64::MAX
    } else {
        round_ms(s * 1000.0)
    }
}

/// `x.round() as u64` for `x >= 0`, in integer arithmetic: `f64::round` is a
/// software call on the default x86-64 target (no rounding instruction), and
/// every event's delay goes through here. Below 2^52 the fraction
/// `x - trunc(x)` is exact, so comparing it with one half rounds halves away
/// from zero as `round` does; from 2^52 up every `f64` is a whole number.
#[inline]
fn round_ms(x: f64) -> u64 {
    const WHOLE: f64 = 4_503_599_627_370_496.0; // 2^52
    if x < WHOLE {
        let t = x as i64;
        let up = x - t as f64 >= 0.5;
        (t + i64::from(up)) as u64
    } else {
        x as u64
    }
}

impl Add<SimDuration> for SimTime {
    type Output = SimTime;
    fn add(self, d: SimDuration) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
}

impl AddAssign<SimDuration> for SimTime {
    fn add_assign(&mut self, d: SimDuration) {
        self.0 = self.0.saturating_add(d.0);
    }
}

impl Sub<SimTime> for SimTime {
    type Output = SimDuration;
    fn sub(self, rhs: SimTime) -> SimDuration {
        self.since(rhs)
    }
}

impl Add for SimDuration {
    type Output = SimDuration;
    fn add(self, d: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_add(d.0))
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.3}s", self.as_secs_f64())
    }
}

impl fmt::Display for SimDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.3}s", self.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The obvious version `round_ms` replaces.
    fn round_ms_plain(x: f64) -> u64 {
        x.round() as u64
    }

    #[test]
    fn integer_rounding_matches_round_at_the_edges() {
        let edges = [
            0.0,
            0.49999999999999994,
            0.5,
            1.5,
            2.5,
            1234.5,
            4_503_599_627_370_495.5,
            4_503_599_627_370_496.0,
            4_503_599_627_370_497.0,
            9_007_199_254_740_993.0,
            1.8e19,
            f64::MIN_POSITIVE,
        ];
        for x in edges {
            for v in [
                x,
                f64::from_bits(x.to_bits().saturating_sub(1)),
                f64::from_bits(x.to_bits() + 1),
            ] {
                assert_eq!(round_ms(v), round_ms_plain(v), "{v:e}");
            }
        }
    }

    proptest! {
        /// Bit patterns over every magnitude, halves (n + 0.5) and their
        /// neighbours one ulp either side, near and above 2^52.
        #[test]
        fn integer_rounding_matches_round(
            bits in 0u64..0x43F0_0000_0000_0000,
            n in 0u64..(1 << 53),
            ulps in -2i64..=2,
        ) {
            let x = f64::from_bits(bits);
            prop_assert_eq!(round_ms(x), round_ms_plain(x));
            let half = n as f64 + 0.5;
            let near = f64::from_bits((half.to_bits() as i64 + ulps) as u64);
            prop_assert_eq!(round_ms(half), round_ms_plain(half));
            prop_assert_eq!(round_ms(near), round_ms_plain(near));
        }
    }

    #[test]
    fn seconds_round_to_milliseconds_and_clamp_at_zero() {
        assert_eq!(SimDuration::from_secs_f64(1.2345).as_ms(), 1235);
        assert_eq!(SimDuration::from_secs_f64(-3.0).as_ms(), 0);
        assert_eq!(SimDuration::from_secs_f64(f64::NAN).as_ms(), 0);
        let t = SimTime::from_ms(5_000) + SimDuration::from_secs(2);
        assert_eq!(t.as_ms(), 7_000);
        assert_eq!(
            SimTime::from_ms(3).since(SimTime::from_ms(10)),
            SimDuration::ZERO
        );
    }
}
