//! The default split for team matches: a greedy fill that is good almost
//! always, then a short local search that fixes the cases where greed leaves
//! a gap. Works for any number of teams and any party mix that can fill them.

use super::dota::{self, PartyAdjust};
use super::fill::{can_fill, FillGuard};
use super::TeamFormer;
use crate::model::{ParamError, Player};
use rand::seq::SliceRandom;
use rand_pcg::Pcg64;
use serde::{Deserialize, Serialize};

/// Which of a player's ratings the balanced split adds up.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RatingSource {
    /// Everyone's solo rating.
    #[default]
    Solo,
    /// The party rating for members of parties of two or more, the solo
    /// rating for solo players (the Dota post keeps both).
    Party,
}

/// `[teams]` with `method = "balanced"`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BalancedParams {
    /// Most party swaps the local improvement makes after the greedy fill;
    /// 0 keeps the greedy result.
    pub max_swaps: u32,
    /// Which rating is balanced: `"solo"` or `"party"`.
    pub rating: RatingSource,
    /// When present (`[teams.party_adjust]`, possibly empty for the
    /// defaults), party members count with the Dota party-adjusted MMR.
    pub party_adjust: Option<PartyAdjust>,
}

impl Default for BalancedParams {
    fn default() -> Self {
        BalancedParams {
            max_swaps: 64,
            rating: RatingSource::Solo,
            party_adjust: None,
        }
    }
}

impl BalancedParams {
    /// Where the team former comes from, for `mmsim catalogue`.
    pub const SOURCE: &str =
        "mmsim's default: a greedy fill by rating, then party swaps that narrow the gap between team means; any number of teams";
    /// Its keys, for `mmsim catalogue`.
    pub const PARAMETERS: &str = "max_swaps, rating, party_adjust.*";

    /// The party adjustment's coefficients; any match format will do.
    pub fn validate(&self, _teams: usize, _team_size: usize) -> Result<(), ParamError> {
        if let Some(adj) = &self.party_adjust {
            adj.validate("party_adjust")?;
        }
        Ok(())
    }
}

/// The balanced former; see [`balanced_split`].
#[derive(Clone, Debug)]
pub struct Balanced {
    /// Its parameters (`[teams]`).
    pub params: BalancedParams,
}

impl Balanced {
    /// The former for these parameters (validated).
    pub fn new(params: BalancedParams) -> Self {
        Balanced { params }
    }

    /// A party's strength: the sum of its members' (possibly adjusted) ratings.
    fn strength(&self, party: &[&Player]) -> f64 {
        let ratings: Vec<f64> = party
            .iter()
            .map(|p| match self.params.rating {
                RatingSource::Solo => p.rating.value,
                RatingSource::Party => dota::member_mmr(p, party.len()),
            })
            .collect();
        match &self.params.party_adjust {
            Some(adj) => dota::adjusted_mmrs(&ratings, adj).iter().sum(),
            None => ratings.iter().sum(),
        }
    }
}

impl TeamFormer for Balanced {
    fn split(
        &self,
        parties: &[Vec<&Player>],
        teams: usize,
        team_size: usize,
        rng: &mut Pcg64,
    ) -> Option<Vec<Vec<usize>>> {
        let sizes: Vec<usize> = parties.iter().map(Vec::len).collect();
        let strengths: Vec<f64> = parties.iter().map(|p| self.strength(p)).collect();
        balanced_split(
            &sizes,
            &strengths,
            teams,
            team_size,
            self.params.max_swaps,
            rng,
        )
    }
}

/// Splits parties of `sizes` and summed ratings `strengths` into `teams`
/// teams of exactly `team_size`, returning party indices per team (ascending),
/// or `None` when no exact fill exists.
///
/// Parties go largest first (strongest first among equal sizes, since big
/// parties are the hard ones to fit and strong ones the hard ones to
/// offset), each to the team with the lowest rating sum that has room and
/// still leaves an exact fill possible. Teams with equal sums are ordered by
/// a random permutation drawn once from `rng`, so no team index is favoured.
/// Then, at most `max_swaps` times, the swap of two equal-sized parties on
/// different teams that most lowers the gap between the highest and lowest
/// team mean is made (with more than two teams, a swap that leaves the gap
/// but evens the middle teams also counts, so the search keeps moving).
pub fn balanced_split(
    sizes: &[usize],
    strengths: &[f64],
    teams: usize,
    team_size: usize,
    max_swaps: u32,
    rng: &mut Pcg64,
) -> Option<Vec<Vec<usize>>> {
    // Checked before the draw, so a party set no teams can take draws nothing.
    if !splittable(sizes, strengths, teams, team_size) {
        return None;
    }
    let mut priority: Vec<usize> = (0..teams).collect();
    priority.shuffle(rng);
    split_by_priority(sizes, strengths, teams, team_size, max_swaps, &priority)
}

/// Whether the parties can be split at all: as many strengths as sizes, and
/// an exact fill of `teams` teams of `team_size`.
fn splittable(sizes: &[usize], strengths: &[f64], teams: usize, team_size: usize) -> bool {
    teams > 0 && sizes.len() == strengths.len() && can_fill(sizes, &vec![team_size; teams])
}

/// The order in which a split places parties: largest first, strongest
/// first among equal sizes, then by index. Shared with the `quality`
/// policy's split, which must agree with this one bit for bit.
pub(crate) fn placement_order<'a>(
    sizes: &'a [usize],
    strengths: &'a [f64],
) -> impl Fn(&usize, &usize) -> std::cmp::Ordering + 'a {
    move |&a, &b| {
        sizes[b]
            .cmp(&sizes[a])
            .then(strengths[b].total_cmp(&strengths[a]))
            .then(a.cmp(&b))
    }
}

/// `balanced_split` with the teams' tie-break order given (`priority[t]`,
/// lower first) instead of drawn: for a caller whose draws must not depend
/// on how many splits it makes (the `quality` policy derives it from the
/// candidate's tickets). `None` when no exact fill exists.
pub fn balanced_split_by_priority(
    sizes: &[usize],
    strengths: &[f64],
    teams: usize,
    team_size: usize,
    max_swaps: u32,
    priority: &[usize],
) -> Option<Vec<Vec<usize>>> {
    if priority.len() != teams || !splittable(sizes, strengths, teams, team_size) {
        return None;
    }
    split_by_priority(sizes, strengths, teams, team_size, max_swaps, priority)
}

/// The split itself, once `splittable` holds.
fn split_by_priority(
    sizes: &[usize],
    strengths: &[f64],
    teams: usize,
    team_size: usize,
    max_swaps: u32,
    priority: &[usize],
) -> Option<Vec<Vec<usize>>> {
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    order.sort_by(placement_order(sizes, strengths));

    let mut team_of = vec![usize::MAX; sizes.len()];
    let mut sums = vec![0.0f64; teams];
    let mut guard = FillGuard::new(sizes, &vec![team_size; teams]);
    for &p in &order {
        let team = (0..teams)
            .filter(|&t| guard.can_place(sizes[p], t))
            .min_by(|&a, &b| {
                sums[a]
                    .total_cmp(&sums[b])
                    .then(priority[a].cmp(&priority[b]))
            })?;
        guard.place(sizes[p], team);
        team_of[p] = team;
        sums[team] += strengths[p];
    }

    improve_by_swaps(sizes, strengths, &mut team_of, &mut sums, max_swaps);
    Some(members_by_team(&team_of, teams))
}

/// The swap phase of `balanced_split`: at most `max_swaps` times, the swap of
/// two equal-sized parties on different teams that most lowers the spread of
/// the team sums. `team_of[p]` is party p's team and `sums` the teams' sums;
/// both are updated. Shared with the `quality` policy's split, which must
/// agree with this one bit for bit.
pub(crate) fn improve_by_swaps(
    sizes: &[usize],
    strengths: &[f64],
    team_of: &mut [usize],
    sums: &mut [f64],
    max_swaps: u32,
) {
    // Two teams, the common case, through an array: the same arithmetic
    // in the same order, with `spread`'s loops unrolled (a third of the
    // swap phase went to walking slices of two).
    match <&mut [f64; 2]>::try_from(&mut *sums) {
        Ok(two) => swaps(sizes, strengths, team_of, two, max_swaps),
        Err(_) => swaps(sizes, strengths, team_of, sums, max_swaps),
    }
}

/// `improve_by_swaps` on the team sums `sums`.
#[inline(always)]
fn swaps<S: AsMut<[f64]> + ?Sized>(
    sizes: &[usize],
    strengths: &[f64],
    team_of: &mut [usize],
    sums: &mut S,
    max_swaps: u32,
) {
    let sums = sums.as_mut();
    for _ in 0..max_swaps {
        let current = spread(sums);
        let mut best: Option<((f64, f64), usize, usize)> = None;
        for p in 0..sizes.len() {
            for q in (p + 1)..sizes.len() {
                let (tp, tq) = (team_of[p], team_of[q]);
                if tp == tq || sizes[p] != sizes[q] || strengths[p] == strengths[q] {
                    continue;
                }
                let delta = strengths[q] - strengths[p];
                sums[tp] += delta;
                sums[tq] -= delta;
                let score = spread(sums);
                sums[tp] -= delta;
                sums[tq] += delta;
                if better(score, best.map_or(current, |b| b.0)) {
                    best = Some((score, p, q));
                }
            }
        }
        let Some((_, p, q)) = best else { break };
        let (tp, tq) = (team_of[p], team_of[q]);
        let delta = strengths[q] - strengths[p];
        sums[tp] += delta;
        sums[tq] -= delta;
        team_of.swap(p, q);
    }
}

/// Party indices per team, ascending, from each party's team.
pub(crate) fn members_by_team(team_of: &[usize], teams: usize) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new(); teams];
    for (p, &t) in team_of.iter().enumerate() {
        out[t].push(p);
    }
    out
}

/// Teams are all full, so comparing sums is comparing means. The range is
/// what the method minimises; the sum of squares breaks ties between
/// splits with the same range.
#[inline(always)]
fn spread(sums: &[f64]) -> (f64, f64) {
    let hi = sums.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let lo = sums.iter().copied().fold(f64::INFINITY, f64::min);
    let mean = sums.iter().sum::<f64>() / sums.len() as f64;
    (hi - lo, sums.iter().map(|s| (s - mean).powi(2)).sum())
}

/// Strictly better by more than rounding noise, so the search cannot cycle.
fn better(a: (f64, f64), b: (f64, f64)) -> bool {
    const EPS: f64 = 1e-9;
    let scale = 1.0 + b.0.abs();
    if a.0 < b.0 - EPS * scale {
        return true;
    }
    a.0 <= b.0 + EPS * scale && a.1 < b.1 - EPS * (1.0 + b.1.abs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{PlayerId, Rating};
    use rand::SeedableRng;

    fn rng() -> Pcg64 {
        Pcg64::seed_from_u64(7)
    }

    fn sums(split: &[Vec<usize>], strengths: &[f64]) -> Vec<f64> {
        split
            .iter()
            .map(|t| t.iter().map(|&p| strengths[p]).sum())
            .collect()
    }

    /// Two teams take the array path of the swap phase; the slice path
    /// (any number of teams) is its plain form. Over random parties, with
    /// equal strengths, equal sizes and sums that do not restore exactly
    /// after a trial swap, both end on the same teams and the same sums,
    /// bit for bit.
    #[test]
    fn the_two_team_swap_phase_is_the_slice_one() {
        use rand::Rng;
        let mut g = rng();
        for _ in 0..3000 {
            let n = g.random_range(2..12usize);
            let sizes: Vec<usize> = (0..n).map(|_| g.random_range(1..3)).collect();
            let strengths: Vec<f64> = (0..n)
                .map(|_| match g.random_range(0..4) {
                    0 => 1500.0,
                    1 => g.random_range(0.0..1.0) * 1e-3,
                    _ => g.random_range(500.0..4000.0),
                })
                .collect();
            let team_of: Vec<usize> = (0..n).map(|p| p % 2).collect();
            let mut sums = [0.0f64; 2];
            for (p, &t) in team_of.iter().enumerate() {
                sums[t] += strengths[p];
            }
            let (mut fast_teams, mut fast_sums) = (team_of.clone(), sums);
            improve_by_swaps(&sizes, &strengths, &mut fast_teams, &mut fast_sums, 5);
            let (mut plain_teams, mut plain_sums) = (team_of, sums.to_vec());
            swaps(&sizes, &strengths, &mut plain_teams, &mut plain_sums[..], 5);
            assert_eq!(fast_teams, plain_teams, "{sizes:?} {strengths:?}");
            let bits = |x: &[f64]| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&fast_sums), bits(&plain_sums));
        }
    }

    #[test]
    fn swaps_fix_what_greed_leaves() {
        // Greedy ends 23 (10+7+6) against 21 (9+8+4); swapping the 10 and
        // the 9 gives 22 against 22.
        let strengths = [10.0, 9.0, 8.0, 7.0, 6.0, 4.0];
        let sizes = [1; 6];
        let greedy = balanced_split(&sizes, &strengths, 2, 3, 0, &mut rng()).unwrap();
        let s = sums(&greedy, &strengths);
        assert!((s[0] - s[1]).abs() > 0.5, "greedy alone {s:?}");
        let improved = balanced_split(&sizes, &strengths, 2, 3, 64, &mut rng()).unwrap();
        let s = sums(&improved, &strengths);
        assert_eq!(s[0], s[1], "{improved:?}");
    }

    #[test]
    fn large_parties_go_first_and_stay_whole() {
        // A party of 3 (total 300) and solos: the trio anchors one team, the
        // strongest solos go to the other.
        let sizes = [1, 3, 1, 1, 1, 1];
        let strengths = [150.0, 300.0, 140.0, 90.0, 60.0, 50.0];
        let split = balanced_split(&sizes, &strengths, 2, 4, 64, &mut rng()).unwrap();
        let trio_team = split.iter().position(|t| t.contains(&1)).unwrap();
        assert_eq!(split[trio_team].iter().map(|&p| sizes[p]).sum::<usize>(), 4);
        assert_eq!(split[1 - trio_team].len(), 4);
        let s = sums(&split, &strengths);
        // Best possible: 300 + 90 = 390 vs 150 + 140 + 60 + 50 = 400.
        assert!((s[0] - s[1]).abs() <= 10.0 + 1e-9, "{s:?}");
    }

    #[test]
    fn never_strands_a_party() {
        // Teams of 7 from 4,3,3,2,2: lowest-sum alone would put both 3s apart.
        let sizes = [4, 3, 3, 2, 2];
        let strengths = [400.0, 310.0, 300.0, 200.0, 190.0];
        let split = balanced_split(&sizes, &strengths, 2, 7, 64, &mut rng()).unwrap();
        for team in &split {
            assert_eq!(team.iter().map(|&p| sizes[p]).sum::<usize>(), 7);
        }
        assert!(balanced_split(&[2, 2, 2], &[1.0; 3], 2, 3, 64, &mut rng()).is_none());
    }

    #[test]
    fn three_teams_end_close() {
        let strengths: Vec<f64> = (0..12).map(|i| 1000.0 + 37.0 * i as f64).collect();
        let split = balanced_split(&[1; 12], &strengths, 3, 4, 64, &mut rng()).unwrap();
        let s = sums(&split, &strengths);
        let range =
            s.iter().copied().fold(f64::MIN, f64::max) - s.iter().copied().fold(f64::MAX, f64::min);
        assert!(range <= 37.0 + 1e-9, "{s:?}");
    }

    #[test]
    fn former_uses_the_chosen_rating_and_adjustment() {
        let mk = |id: u32, solo: f64, party: f64| {
            let mut p = Player::new(PlayerId(id), 0.0, Rating::new(solo, 0.0, 0.0));
            p.party_rating.value = party;
            p
        };
        let players = [
            mk(0, 1000.0, 1500.0),
            mk(1, 1000.0, 500.0),
            mk(2, 1400.0, 0.0),
        ];
        let pair = vec![&players[0], &players[1]];
        let former = Balanced {
            params: BalancedParams::default(),
        };
        assert_eq!(former.strength(&pair), 2000.0);
        let former = Balanced {
            params: BalancedParams {
                rating: RatingSource::Party,
                party_adjust: Some(PartyAdjust::default()),
                ..BalancedParams::default()
            },
        };
        // Party ratings 1500 and 500: variance 250_000, bonus 0.25 + 22.5 each.
        assert!((former.strength(&pair) - (2000.0 + 2.0 * 22.75)).abs() < 1e-9);
        assert_eq!(former.strength(&[&players[2]]), 1400.0);
    }
}
