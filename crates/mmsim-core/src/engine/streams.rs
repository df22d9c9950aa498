//! One seed, several independent random streams, one per purpose. Two
//! policies run on the same seed draw arrivals from the same stream, so
//! their comparison is paired (common random numbers).

use rand_pcg::Pcg64;

/// The purposes that each get their own stream of a run's seed; the number keys the split, so it never changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    /// Players' skill, ratings and attributes.
    Population = 1,
    /// Fresh arrivals: when they come and who they are.
    Arrivals = 2,
    /// Requeue decisions, think times and patience of returning players.
    Behaviour = 3,
    /// Match winners and durations.
    Outcomes = 4,
    /// The policy's own draws (`Policy::propose`'s `rng`).
    Policy = 5,
    /// The team former's draws.
    Teams = 6,
    /// The optional outcome processes, apart from the winners' `Outcomes`
    /// so that switching one on shifts no winner.
    Gold = 7,
    /// The battle model's draws (`[outcome.battle]`).
    Battle = 8,
    /// The ready check's answers (`[acceptance]`): its own stream, so a run
    /// without one draws every other number as before.
    Acceptance = 9,
    /// Leave times of players in running matches (`[backfill]`) and the
    /// redraw of a winner whose teams changed.
    Backfill = 10,
    /// Home regions and pings (`[regions]`), apart from the population's
    /// stream so that switching regions on changes no skill.
    Regions = 11,
    /// Who stops playing after a match and for how long (`[engagement]`).
    Engagement = 12,
    /// Each ticket's game mode and whether it queues for several
    /// (`[modes]`): its own stream, so the arrivals stay as they were.
    Modes = 13,
}

/// SplitMix64: spreads neighbouring seeds (1, 2, 3) far apart.
fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The generator for one purpose: same state for every stream of a seed,
/// a different PCG increment per stream, which makes the sequences distinct.
pub fn stream(seed: u64, which: Stream) -> Pcg64 {
    let hi = splitmix64(seed) as u128;
    let lo = splitmix64(seed ^ 0xD1B5_4A32_D192_ED03) as u128;
    let salt = splitmix64(which as u64 ^ hi as u64) as u128;
    Pcg64::new((hi << 64) | lo, (salt << 1) | 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let draw = |seed, s| -> Vec<u64> {
            let mut r = stream(seed, s);
            (0..4).map(|_| r.random()).collect()
        };
        assert_eq!(draw(7, Stream::Arrivals), draw(7, Stream::Arrivals));
        assert_ne!(draw(7, Stream::Arrivals), draw(7, Stream::Outcomes));
        assert_ne!(draw(7, Stream::Arrivals), draw(8, Stream::Arrivals));
    }
}
