//! Memos of which party sizes can fill the teams (`FillTable`) and of a
//! fill's splits, so a pass does not ask the same packing twice.

use super::*;
use crate::model::{SimTime, TicketId};
use smallvec::SmallVec;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Per-party (or per-team) values of one candidate, inline up to ten: a
/// seed's fills and splits are made and dropped by the thousand every pass
/// in a busy pool, and the heap allocator was a third of the policy's time.
pub(super) type Inline<T> = SmallVec<[T; 10]>;

/// One distinct fill of a seed, with the splits found for it so far.
pub(super) struct FillMemo {
    /// Seed first, then the chosen neighbours in nearest-first order: the
    /// order the oracle lists them in.
    pub(super) ids: Inline<TicketId>,
    pub(super) slots: Inline<u32>,
    /// When each party joined, for the wait criterion.
    pub(super) enqueued: Inline<SimTime>,
    /// The criteria that do not depend on the split, with those that do at
    /// the best any split can reach (`top_player_bound`, `parties_bound`,
    /// `team_language_bound`; balance at 1) and the wait at 0: scores are
    /// monotone in every criterion, so with the wait of the pass this
    /// bounds every split's score, and a fill whose bound misses the
    /// threshold needs no split.
    pub(super) bound: Criteria,
    /// `bound` scored with the wait criterion at its cap of 1: no split
    /// of the fill scores more at any time, so a pass whose threshold (or
    /// best so far) it misses needs neither the fill's mean wait nor its
    /// splits.
    pub(super) ceiling: f64,
    /// Per split kind (0: balanced on MMR, 1: party counts first), the
    /// split once computed: its team priority comes from the fill's tickets
    /// (`team_priority`), so it holds as long as the fill does. Boxed, and
    /// only once a split is asked for: a search builds and moves fills by
    /// the million, and splits only the few whose bound clears the
    /// threshold (2% of them on `dota2-one-queue`), so two splits held in
    /// place doubled every fill's size and every move's copy.
    pub(super) splits: Option<Box<Splits>>,
}

/// A fill's two splits, each once computed.
pub(super) type Splits = [Option<SplitMemo>; 2];

impl FillMemo {
    /// The split of kind `kind`, if computed.
    pub(super) fn split(&self, kind: usize) -> Option<&SplitMemo> {
        self.splits.as_ref().and_then(|s| s[kind].as_ref())
    }

    /// The parties' mean wait at `now`, with the oracle's arithmetic.
    pub(super) fn mean_wait_s(&self, now: SimTime) -> f64 {
        self.enqueued
            .iter()
            .map(|&at| now.since(at).as_secs_f64())
            .sum::<f64>()
            / self.enqueued.len().max(1) as f64
    }
}

pub(super) struct SplitMemo {
    /// Team of each party, or `None` when the greedy fill got stuck.
    pub(super) team_of: Option<Inline<usize>>,
    /// The criteria but the wait (which moves with time; set per pass).
    pub(super) criteria: Criteria,
}

/// `can_fill` answers keyed by the size counts and the team rooms: the same
/// few questions come up in every fill and split.
#[derive(Default)]
pub(super) struct FillTable {
    pub(super) packed: HashMap<u64, bool, BuildHasherDefault<FxHasher>>,
    pub(super) known: HashMap<Box<[u8]>, bool, BuildHasherDefault<FxHasher>>,
    pub(super) key: Vec<u8>,
    pub(super) sizes: Vec<usize>,
}

impl FillTable {
    /// `can_fill` of the multiset with `counts[s]` parties of size `s`.
    pub(super) fn can_fill(&mut self, counts: &[usize], caps: &[usize]) -> bool {
        if counts.iter().skip(2).all(|&c| c == 0) {
            // Solos only: `can_fill` asks that the totals agree and that
            // some team has room for one.
            let solos = counts.get(1).copied().unwrap_or(0);
            let largest = caps.iter().copied().max().unwrap_or(0);
            return solos == caps.iter().sum::<usize>() && (solos == 0 || largest >= 1);
        }
        if let Some(ok) = two_teams(counts, caps) {
            return ok;
        }
        // Small formats (every count and room under 16, 15 numbers in all)
        // pack into one word; others use a byte key.
        if counts.len() + caps.len() < 16 && counts.iter().chain(caps).all(|&c| c < 16) {
            let packed = counts
                .iter()
                .chain(std::iter::once(&15))
                .chain(caps)
                .fold(0u64, |k, &c| (k << 4) | c as u64);
            if let Some(&ok) = self.packed.get(&packed) {
                return ok;
            }
            let ok = crate::teams::can_fill(expand(counts, &mut self.sizes), caps);
            self.packed.insert(packed, ok);
            return ok;
        }
        if counts.iter().chain(caps).any(|&c| c > u8::MAX as usize) {
            return crate::teams::can_fill(expand(counts, &mut self.sizes), caps);
        }
        self.key.clear();
        self.key.extend(counts.iter().map(|&c| c as u8));
        self.key.push(u8::MAX);
        self.key.extend(caps.iter().map(|&c| c as u8));
        if let Some(&ok) = self.known.get(&self.key[..]) {
            return ok;
        }
        let ok = crate::teams::can_fill(expand(counts, &mut self.sizes), caps);
        self.known.insert(self.key.clone().into_boxed_slice(), ok);
        ok
    }
}

/// `teams::can_fill` for two teams of at most 127 players together, by the
/// subset sums of the parties as a bit set: a few shifts where a table
/// lookup hashes the key (a fill asks this for every party it tries).
/// `None` when the question is outside that range.
pub(super) fn two_teams(counts: &[usize], caps: &[usize]) -> Option<bool> {
    let &[first, second] = caps else {
        return None;
    };
    let room = first + second;
    if room > 127 || counts.first().is_some_and(|&c| c > 0) {
        return None;
    }
    let total: usize = counts.iter().enumerate().map(|(s, &c)| s * c).sum();
    if total != room {
        return Some(false);
    }
    let largest = first.max(second);
    // Subset sums of the parties of two or more; solos fill the rest.
    let mut sums: u128 = 1;
    let mut parties = 0;
    for (size, &c) in counts.iter().enumerate().skip(2) {
        if c == 0 {
            continue;
        }
        if size > largest {
            return Some(false);
        }
        parties += size * c;
        for _ in 0..c {
            sums |= sums << size;
        }
    }
    // Some sum S of parties in the first team with S <= first and the rest,
    // parties - S, at most second.
    let lo = parties.saturating_sub(second);
    if lo > first {
        return Some(false);
    }
    let window = (u128::MAX >> (127 - (first - lo))) << lo;
    Some(sums & window != 0)
}

/// `two_teams` asked of a greedy fill as it grows one party at a time:
/// the subset sums of its parties of two or more are kept between asks,
/// so admitting a party is one shift and one mask, where `can_fill`
/// rebuilt the sums from the size counts on every ask (a fill asks for
/// each party it tries; the fills' packing checks were the largest part
/// of a search after the walk). Subset sums do not depend on the order the
/// parties came in, so every answer is `two_teams`' answer for the counts
/// the fill holds, padded with solos (`an_incremental_two_team_fill_answers_as_can_fill_does`).
#[derive(Clone, Copy, Debug)]
pub(super) struct TwoTeamFill {
    /// Bit `s` set when some of the parties of two or more sum to `s`.
    sums: u128,
    /// Players in those parties.
    parties: usize,
    first: usize,
    second: usize,
}

impl TwoTeamFill {
    /// The fill's state holding only the seed, a party of `seed_size`
    /// players; `None` when `two_teams` does not answer for these rooms.
    pub(super) fn new(caps: &[usize], seed_size: usize) -> Option<Self> {
        let &[first, second] = caps else {
            return None;
        };
        if first + second > 127 || seed_size > first.max(second) {
            return None;
        }
        let mut fill = TwoTeamFill { sums: 1, parties: 0, first, second };
        fill.take(seed_size);
        Some(fill)
    }

    /// The state with a party of `size` players added, if solos can then
    /// make up the rest of both teams: the answer `two_teams` gives for
    /// the size counts with that party and the room left in solos.
    pub(super) fn with(&self, size: usize) -> Option<Self> {
        if size < 2 {
            return Some(*self);
        }
        if size > self.first.max(self.second) {
            return None;
        }
        let sums = self.sums | (self.sums << size);
        let parties = self.parties + size;
        // Some sum S with S <= first and parties - S <= second.
        let lo = parties.saturating_sub(self.second);
        if lo > self.first {
            return None;
        }
        let window = (u128::MAX >> (127 - (self.first - lo))) << lo;
        (sums & window != 0).then_some(TwoTeamFill { sums, parties, ..*self })
    }

    /// Adds a party of `size` players the fill took.
    pub(super) fn take(&mut self, size: usize) {
        if size >= 2 {
            self.sums |= self.sums << size;
            self.parties += size;
        }
    }
}

pub(super) fn expand<'a>(counts: &[usize], sizes: &'a mut Vec<usize>) -> &'a [usize] {
    sizes.clear();
    for (s, &c) in counts.iter().enumerate() {
        sizes.extend(std::iter::repeat_n(s, c));
    }
    sizes
}

/// A small multiplicative hash for the short byte keys of `FillTable`.
#[derive(Default)]
pub(super) struct FxHasher(u64);

impl Hasher for FxHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
}
