//! Whether parties can fill teams exactly. Every greedy method here asks this
//! before each placement, so that a choice that looks best now never strands a
//! later party; and the scenario check asks it before a run, so that a
//! party-size mix that can never fill a team fails loudly instead of leaving
//! tickets waiting forever.

use smallvec::SmallVec;

/// True when parties of these `sizes` can be assigned to teams so that team
/// `t` receives exactly `caps[t]` players. Parties are never split.
///
/// Exact bin filling is NP-hard in general, so this works on what a match
/// makes small: the room left per team. Solo players fill any gap once the
/// totals agree, so only parties of two or more are placed, largest first,
/// and the set of reachable room vectors (sorted: teams with the same room
/// are interchangeable) is carried from one party to the next. Two teams
/// reduce to subset sums over the first team's room. Time is polynomial in
/// the team size for a fixed number of teams (a backtracking search with a
/// memo of failed states took a minute for teams of 100 with parties of
/// 1-3; `search_oracle` below keeps it as the tests' reference).
pub fn can_fill(sizes: &[usize], caps: &[usize]) -> bool {
    let total: usize = sizes.iter().sum();
    if total != caps.iter().sum::<usize>() {
        return false;
    }
    let largest_cap = caps.iter().copied().max().unwrap_or(0);
    if sizes.iter().any(|&s| s == 0 || s > largest_cap) {
        return false;
    }
    let mut parties: SmallVec<[usize; 16]> = sizes.iter().copied().filter(|&s| s >= 2).collect();
    parties.sort_unstable_by(|a, b| b.cmp(a));
    can_place_parties(&parties, caps)
}

/// Whether parties of two players or more (`parties_desc`, largest first)
/// go into teams of `caps` rooms with room to spare or exactly: solos fill
/// whatever is left. `can_fill` once its sums and sizes check out; callers
/// that know those hold (a policy adding one party to a fill) call it
/// directly and skip building the padded list.
pub fn can_place_parties(parties_desc: &[usize], caps: &[usize]) -> bool {
    let parties = parties_desc;
    if parties.is_empty() {
        return true;
    }
    if fits_greedily(parties, caps) {
        return true;
    }
    if let [first, second] = caps {
        return two_teams(parties, *first, *second);
    }
    let mut start = caps.to_vec();
    start.sort_unstable();
    let mut frontier = vec![start];
    let mut next = Vec::new();
    for &size in parties {
        next.clear();
        for room in &frontier {
            for t in 0..room.len() {
                // Sorted rooms: equal neighbours give the same state.
                if room[t] < size || (t > 0 && room[t - 1] == room[t]) {
                    continue;
                }
                let mut placed = room.clone();
                placed[t] -= size;
                placed.sort_unstable();
                next.push(placed);
            }
        }
        next.sort_unstable();
        next.dedup();
        std::mem::swap(&mut frontier, &mut next);
        if frontier.is_empty() {
            return false;
        }
    }
    true
}

/// Largest party first onto the team with the most room left: when that
/// places every party the answer is yes without a search, which is nearly
/// every call a policy makes while a match still has solo room to spare.
/// (In place, not on the heap: a three-team ruleset's growths ask it a
/// quarter of a million times.)
fn fits_greedily(parties_desc: &[usize], caps: &[usize]) -> bool {
    let mut room: SmallVec<[usize; 8]> = SmallVec::from_slice(caps);
    parties_desc.iter().all(|&size| {
        let (t, most) = room
            .iter()
            .copied()
            .enumerate()
            .max_by_key(|&(t, r)| (r, std::cmp::Reverse(t)))
            .unwrap_or((0, 0));
        if most < size {
            return false;
        }
        room[t] -= size;
        true
    })
}

/// Two teams: some subset of the parties fits the first team's room and
/// the rest fits the second's (solos make up both differences).
fn two_teams(parties: &[usize], first: usize, second: usize) -> bool {
    let total: usize = parties.iter().sum();
    // reachable[x]: some subset of the parties seen so far has x players.
    let mut reachable: SmallVec<[bool; 64]> = smallvec::smallvec![false; first + 1];
    reachable[0] = true;
    for &size in parties {
        for x in (size..=first).rev() {
            if reachable[x - size] {
                reachable[x] = true;
            }
        }
    }
    (0..=first).any(|x| reachable[x] && total - x <= second)
}

/// The parties a policy has chosen so far for one match, kept so that
/// asking "may this party join too?" costs little: a fill asks it for every
/// candidate it walks past, and with teams of a few hundred players and
/// hundreds of candidates per seed, re-solving the packing from the list
/// each time was nearly all of a run's time.
///
/// Solos always fit (whoever fills the match fills the gaps with them), so
/// only parties of two or more are tracked. For two teams the state is the
/// set of first-team loads the parties reach (a bitset; adding a party is a
/// shift and an OR); for other formats it is the parties themselves, kept
/// largest first, and `can_place_parties` decides. Either way the answer is
/// exactly `can_fill` on the chosen sizes padded with solos
/// (`packing_agrees_with_can_fill_on_the_padded_list`).
#[derive(Clone, Debug)]
pub struct Packing {
    caps: smallvec::SmallVec<[usize; 8]>,
    /// Two teams: bit `x` set when some placement puts `x` players of the
    /// tracked parties on the first team (and the rest fit the second).
    loads: smallvec::SmallVec<[u64; 4]>,
    /// Players in tracked parties.
    tracked: usize,
    /// Other formats: the tracked parties, largest first.
    parties_desc: Vec<usize>,
}

impl Packing {
    /// An empty match of `teams` teams of `team_size`.
    pub fn new(teams: usize, team_size: usize) -> Self {
        let mut loads = smallvec::SmallVec::new();
        if teams == 2 {
            loads.resize(team_size / 64 + 1, 0);
            loads[0] = 1;
        }
        Packing {
            caps: smallvec::smallvec![team_size; teams],
            loads,
            tracked: 0,
            parties_desc: Vec::new(),
        }
    }

    /// Adds a party of `size` if the parties chosen so far and it can still
    /// be placed in the teams without splitting any; false (and nothing
    /// changed) otherwise. The caller keeps the total within the format.
    pub fn try_add(&mut self, size: usize) -> bool {
        let largest = self.caps.iter().copied().max().unwrap_or(0);
        if size == 0 || size > largest {
            return false;
        }
        if size == 1 {
            return true;
        }
        if self.caps.len() == 2 {
            return self.try_add_two(size);
        }
        let at = self.parties_desc.partition_point(|&p| p >= size);
        self.parties_desc.insert(at, size);
        let ok = can_place_parties(&self.parties_desc, &self.caps);
        if !ok {
            self.parties_desc.remove(at);
        }
        ok
    }

    fn try_add_two(&mut self, size: usize) -> bool {
        let (first, second) = (self.caps[0], self.caps[1]);
        let total = self.tracked + size;
        // On the first team: every reachable load moves up by `size`, up to
        // the first team's room. On the second: loads stay, but only those
        // leaving the second team within its room, x >= total - second.
        let low = total.saturating_sub(second);
        let words = self.loads.len();
        let (shift_words, shift_bits) = (size / 64, size % 64);
        let mut next: smallvec::SmallVec<[u64; 4]> = smallvec::smallvec![0; words];
        let mut any = 0u64;
        for (w, out) in next.iter_mut().enumerate() {
            let mut up = 0u64;
            if w >= shift_words {
                let src = w - shift_words;
                up = self.loads[src] << shift_bits;
                if shift_bits > 0 && src > 0 {
                    up |= self.loads[src - 1] >> (64 - shift_bits);
                }
            }
            // Shifted loads are >= low already and kept ones <= first, so
            // one mask over both does.
            let v = (up | self.loads[w]) & range_mask(w, low, first);
            *out = v;
            any |= v;
        }
        if any == 0 {
            return false;
        }
        self.loads = next;
        self.tracked = total;
        true
    }
}

/// The bits of word `w` for loads in `low..=high`.
fn range_mask(w: usize, low: usize, high: usize) -> u64 {
    let (start, end) = (w * 64, w * 64 + 63);
    if high < start || low > end {
        return 0;
    }
    let from = low.saturating_sub(start);
    let to = high.min(end) - start;
    let upper = if to == 63 {
        u64::MAX
    } else {
        (1u64 << (to + 1)) - 1
    };
    upper & !((1u64 << from) - 1)
}

/// The backtracking search `can_fill` replaced: places the largest
/// remaining party first, tries each distinct remaining room once and
/// remembers failed states. Exact, but exponential in the team size with
/// mixed parties; kept as the reference the property test compares with.
#[cfg(test)]
pub(crate) fn search_oracle(sizes: &[usize], caps: &[usize]) -> bool {
    use std::collections::HashSet;
    type State = (Vec<u32>, Vec<usize>);
    fn search(counts: &mut Vec<u32>, caps: &mut [usize], failed: &mut HashSet<State>) -> bool {
        let Some(size) = (2..counts.len()).rev().find(|&s| counts[s] > 0) else {
            return true;
        };
        let mut sorted_caps = caps.to_vec();
        sorted_caps.sort_unstable();
        let key = (counts.clone(), sorted_caps);
        if failed.contains(&key) {
            return false;
        }
        counts[size] -= 1;
        let mut tried: Vec<usize> = Vec::new();
        for t in 0..caps.len() {
            let cap = caps[t];
            if cap < size || tried.contains(&cap) {
                continue;
            }
            tried.push(cap);
            caps[t] -= size;
            let ok = search(counts, caps, failed);
            caps[t] += size;
            if ok {
                counts[size] += 1;
                return true;
            }
        }
        counts[size] += 1;
        failed.insert(key);
        false
    }
    let total: usize = sizes.iter().sum();
    if total != caps.iter().sum::<usize>() {
        return false;
    }
    let largest_cap = caps.iter().copied().max().unwrap_or(0);
    if sizes.iter().any(|&s| s == 0 || s > largest_cap) {
        return false;
    }
    let mut counts = vec![0u32; largest_cap + 1];
    for &s in sizes {
        counts[s] += 1;
    }
    let mut caps = caps.to_vec();
    let mut failed = HashSet::new();
    search(&mut counts, &mut caps, &mut failed)
}

/// What is still to be placed during a greedy fill: lets a method ask
/// whether putting a party on a team keeps an exact fill possible.
#[derive(Clone, Debug)]
pub(crate) struct FillGuard {
    remaining: Vec<usize>,
    caps: Vec<usize>,
}

impl FillGuard {
    /// `sizes` are all parties still to place; `caps` the room left per team.
    pub(crate) fn new(sizes: &[usize], caps: &[usize]) -> Self {
        FillGuard {
            remaining: sizes.to_vec(),
            caps: caps.to_vec(),
        }
    }

    /// Whether the party of `size` fits `team` and the rest can still fill
    /// every team exactly afterwards.
    pub(crate) fn can_place(&self, size: usize, team: usize) -> bool {
        if self.caps[team] < size {
            return false;
        }
        let Some(pos) = self.remaining.iter().position(|&s| s == size) else {
            return false;
        };
        let mut rest = self.remaining.clone();
        rest.swap_remove(pos);
        let mut caps = self.caps.clone();
        caps[team] -= size;
        can_fill(&rest, &caps)
    }

    pub(crate) fn place(&mut self, size: usize, team: usize) {
        if let Some(pos) = self.remaining.iter().position(|&s| s == size) {
            self.remaining.swap_remove(pos);
        }
        self.caps[team] -= size;
    }
}

/// Why an arrival mix cannot fill its teams (`check_fill`); sizes are
/// listed as the scenario writes them (`2, 3`).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum FillError {
    /// No team, or teams of no player.
    #[error("teams and team size must be 1 or more, got {teams} teams of {team_size}")]
    NoTeams {
        /// Teams per match.
        teams: usize,
        /// Players per team.
        team_size: usize,
    },
    /// A weight that is negative or not a number.
    #[error("the weight of party size {size} must be a number, zero or more, got {weight}")]
    BadWeight {
        /// The party size (players) the weight belongs to.
        size: usize,
        /// The weight given.
        weight: f64,
    },
    /// Every weight is zero.
    #[error("no party size has a positive weight; give at least one, e.g. [1.0] for solo players")]
    NoSize,
    /// Party sizes larger than a team.
    #[error("party sizes {sizes} do not fit a team of {team_size}; allowed party sizes are 1 to {team_size} (give the others weight 0)")]
    TooBig {
        /// The sizes that do not fit.
        sizes: String,
        /// Players per team.
        team_size: usize,
    },
    /// No mix of the sizes makes a team exactly.
    #[error("no mix of party sizes {sizes} fills a team of {team_size} exactly; add a size that makes up the difference (size 1 always does)")]
    NoMix {
        /// The sizes with positive weight.
        sizes: String,
        /// Players per team.
        team_size: usize,
    },
    /// Sizes that no full team can hold: their parties would wait forever.
    #[error("parties of size {stranded} can never be placed: the rest of a team of {team_size} cannot be made from sizes {sizes}; give them weight 0 or add a size that completes them")]
    Stranded {
        /// The sizes that can never be placed.
        stranded: String,
        /// Players per team.
        team_size: usize,
        /// The sizes with positive weight.
        sizes: String,
    },
}

/// Checks before a run that the arrival mix can fill teams: `party_size_weights[i]`
/// is the weight of parties of `i + 1` players. Errors when a size with positive
/// weight exceeds the team size, when no mix of those sizes makes a team of
/// exactly `team_size`, or when some size can never be part of a full team (its
/// parties would wait forever).
pub fn check_fill(
    party_size_weights: &[f64],
    teams: usize,
    team_size: usize,
) -> Result<(), FillError> {
    if teams == 0 || team_size == 0 {
        return Err(FillError::NoTeams { teams, team_size });
    }
    if let Some((i, w)) = party_size_weights
        .iter()
        .enumerate()
        .find(|(_, w)| !(w.is_finite() && **w >= 0.0))
    {
        return Err(FillError::BadWeight {
            size: i + 1,
            weight: *w,
        });
    }
    let sizes: Vec<usize> = party_size_weights
        .iter()
        .enumerate()
        .filter(|(_, w)| **w > 0.0)
        .map(|(i, _)| i + 1)
        .collect();
    if sizes.is_empty() {
        return Err(FillError::NoSize);
    }
    let too_big: Vec<usize> = sizes.iter().copied().filter(|&s| s > team_size).collect();
    if !too_big.is_empty() {
        return Err(FillError::TooBig {
            sizes: list(&too_big),
            team_size,
        });
    }
    // reachable[n]: some mix of the sizes (with repetition) has exactly n players.
    let mut reachable = vec![false; team_size + 1];
    reachable[0] = true;
    for n in 1..=team_size {
        reachable[n] = sizes.iter().any(|&s| s <= n && reachable[n - s]);
    }
    if !reachable[team_size] {
        return Err(FillError::NoMix {
            sizes: list(&sizes),
            team_size,
        });
    }
    let stranded: Vec<usize> = sizes
        .iter()
        .copied()
        .filter(|&s| !reachable[team_size - s])
        .collect();
    if !stranded.is_empty() {
        return Err(FillError::Stranded {
            stranded: list(&stranded),
            team_size,
            sizes: list(&sizes),
        });
    }
    Ok(())
}

fn list(sizes: &[usize]) -> String {
    sizes
        .iter()
        .map(|s| s.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_fill_needs_more_than_matching_totals() {
        // 2+2+2 = 6 players but no team of 3 can be made from pairs.
        assert!(!can_fill(&[2, 2, 2], &[3, 3]));
        assert!(can_fill(&[2, 1, 2, 1], &[3, 3]));
        // Totals agree, yet 4+3 = 7 leaves 3+2+2 = 7: only one way works.
        assert!(can_fill(&[4, 3, 3, 2, 2], &[7, 7]));
        assert!(can_fill(&[4, 4, 3, 3], &[7, 7, 0]));
        assert!(!can_fill(&[5, 5, 4], &[7, 7]));
        assert!(!can_fill(&[1, 1], &[3]));
        assert!(can_fill(&[], &[0, 0]));
        assert!(!can_fill(&[4], &[3, 1]));
    }

    #[test]
    fn three_teams_and_many_solos() {
        assert!(can_fill(&[3, 3, 3, 2, 2, 2], &[5, 5, 5]));
        assert!(!can_fill(&[3, 3, 3, 3, 3], &[5, 5, 5]));
        let mut sizes = vec![1; 25];
        sizes.extend([5]);
        assert!(can_fill(&sizes, &[15, 15]));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(400))]
        /// The polynomial fill gives the backtracking search's answer on
        /// every small case, fillable or not.
        #[test]
        fn the_fill_agrees_with_the_backtracking_search(
            caps in proptest::collection::vec(0usize..=9, 1..=4),
            sizes in proptest::collection::vec(1usize..=5, 0..=14),
            padding in 0usize..=6,
        ) {
            // Often make the totals agree, or nearly every case is a trivial no.
            let room: usize = caps.iter().sum();
            let mut sizes = sizes;
            let mut sum: usize = sizes.iter().sum();
            while sum > room {
                sum -= sizes.pop().unwrap();
            }
            if padding > 0 {
                sizes.extend(std::iter::repeat_n(1, room - sum));
            }
            proptest::prop_assert_eq!(can_fill(&sizes, &caps), search_oracle(&sizes, &caps));
        }
    }

    /// Solo padding made explicit: what `Packing::try_add` must answer.
    fn padded_answer(
        sizes: &[usize],
        size: usize,
        room: usize,
        teams: usize,
        team_size: usize,
    ) -> bool {
        let mut padded = sizes.to_vec();
        padded.push(size);
        padded.extend(std::iter::repeat_n(1, room - size));
        can_fill(&padded, &vec![team_size; teams])
    }

    proptest::proptest! {
        /// Matches grown party by party, as a policy grows them, get the
        /// same answers from the packing state as from `can_fill` on the
        /// chosen sizes padded with solos, on formats from 1v1 to three
        /// teams of 40 and two teams of up to 200 (bitsets of several words).
        #[test]
        fn packing_agrees_with_can_fill_on_the_padded_list(
            teams in 1usize..4,
            team_size in 1usize..41,
            wide in proptest::prop_oneof![3 => proptest::strategy::Just(0usize), 1 => 0usize..160],
            parties in proptest::collection::vec(1usize..8, 1..80),
        ) {
            let team_size = if teams == 2 { team_size + wide } else { team_size };
            let need = teams * team_size;
            let mut packing = Packing::new(teams, team_size);
            let mut chosen: Vec<usize> = Vec::new();
            let mut room = need;
            for size in parties {
                if size > room || size > team_size {
                    continue;
                }
                let want = padded_answer(&chosen, size, room, teams, team_size);
                proptest::prop_assert_eq!(packing.try_add(size), want, "adding {} with room {} to {:?}", size, room, chosen);
                if want {
                    chosen.push(size);
                    room -= size;
                }
            }
        }
    }

    #[test]
    fn two_teams_of_five_refuse_a_third_trio() {
        let mut p = Packing::new(2, 5);
        assert!(p.try_add(3));
        assert!(p.try_add(3));
        assert!(!p.try_add(3), "three trios cannot make two teams of five");
        assert!(p.try_add(2), "a pair fits beside either trio");
        assert!(p.try_add(2), "and another beside the other");
        let mut q = Packing::new(2, 5);
        assert!(q.try_add(4) && q.try_add(4));
        assert!(!q.try_add(2), "4 and 4 leave one place per team: no pair");
        assert!(q.try_add(1));
    }

    #[test]
    fn mixed_parties_fill_teams_of_200_at_once() {
        let mut sizes = Vec::new();
        for i in 0..400 {
            sizes.push([1, 2, 3, 2, 1][i % 5]);
        }
        let total: usize = sizes.iter().sum();
        let half = total / 2;
        let t = std::time::Instant::now();
        assert!(can_fill(&sizes, &[half, total - half]));
        assert!(!can_fill(&[3; 134], &[200, 202]));
        assert!(can_fill(&[3; 134], &[201, 201]));
        let three: Vec<usize> = (0..300).map(|i| [3, 2, 1][i % 3]).collect();
        assert!(can_fill(&three, &[200, 200, 200]));
        assert!(t.elapsed().as_secs_f64() < 2.0, "{:?}", t.elapsed());
    }

    #[test]
    fn guard_refuses_a_placement_that_strands_a_party() {
        // Teams of 7 from 4,3,3,2,2: the 4 and a 3 must share a team, so after
        // 4 -> team 0 and 3 -> team 1, the second 3 must go to team 0.
        let mut g = FillGuard::new(&[4, 3, 3, 2, 2], &[7, 7]);
        g.place(4, 0);
        g.place(3, 1);
        assert!(!g.can_place(3, 1));
        assert!(g.can_place(3, 0));
        assert!(!g.can_place(4, 0));
    }

    #[test]
    fn check_fill_names_the_sizes_at_fault() {
        assert!(check_fill(&[0.7, 0.2, 0.1], 2, 5).is_ok());
        let e = check_fill(&[0.0, 1.0], 2, 5).unwrap_err().to_string();
        assert!(
            e.contains("party sizes 2") && e.contains("team of 5"),
            "{e}"
        );
        let e = check_fill(&[0.5, 0.0, 0.0, 0.0, 0.0, 0.5], 2, 5)
            .unwrap_err()
            .to_string();
        assert!(e.contains("party sizes 6") && e.contains("1 to 5"), "{e}");
        // Pairs fill a team of 6, but a trio would need another 3.
        let e = check_fill(&[0.0, 0.8, 0.0, 0.0, 0.2], 2, 6)
            .unwrap_err()
            .to_string();
        assert!(e.contains("size 5") && e.contains("never"), "{e}");
        assert!(check_fill(&[0.0, 0.5, 0.5], 2, 5).is_ok());
        assert!(check_fill(&[0.0, 0.0], 2, 5).is_err());
        assert!(check_fill(&[f64::NAN], 2, 5).is_err());
        assert!(check_fill(&[1.0], 2, 0).is_err());
    }
}
