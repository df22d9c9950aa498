//! Armored Warfare's 15v15 team split (Matchmaking 2.0 developer diary), step
//! by step as the post describes it, so that a scenario can reproduce its
//! before/after win-rate table by switching smoothing off and on.
//!
//! 1. Platoons (parties of two or more) are split against each other first,
//!    by combined tier, then combined skill (win rate); platoons with
//!    artillery go first, as artillery does in every pass.
//! 2. Everyone is sorted: artillery at the very top, then tier (high first),
//!    category (main battle tank, light tank, tank destroyer, armoured
//!    fighting vehicle), skill (high first). Walking that list, platoon
//!    members are force-placed on their platoon's team; every other player
//!    goes by the first rule that decides: a team with `category_margin` (2)
//!    more of the player's category makes the other team take them; else the
//!    team with fewer tier points; else the team with fewer players; else a
//!    coin flip. This is what makes the "ABBA" pattern.
//! 3. Sanity rebalance: while a team has too many players, its solo player
//!    lowest in the sorted order moves across (platoons are never split).
//! 4. Win-rate smoothing: while the teams' average win rates differ by at
//!    least the threshold (1 point), take the overweight team's solo players
//!    best first and the underweight team's worst first, and swap the first
//!    pair with the same tier and category whose swap narrows the gap without
//!    flipping it; stop when no such pair exists.
//!
//! Where the post is silent we chose: ties in the sort go by input order;
//! "move inward" tries, for each overweight player from the best, every
//! underweight player from the worst; smoothing swaps solo players only
//! (swapping a platoon member would split the platoon); players without a
//! category are never counted by the category rule.

use super::fill::{can_fill, FillGuard};
use super::TeamFormer;
use crate::model::{Category, ParamError, Player};
use rand::Rng;
use rand_pcg::Pcg64;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `[teams]` with `method = "abba"`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AbbaParams {
    /// Run the win-rate smoothing pass (the post's table compares off and on).
    pub smoothing: bool,
    /// Smoothing runs while the teams' average win rates differ by at least
    /// this many percentage points.
    pub smoothing_threshold_pp: f64,
    /// A team with this many more players of a category than the other makes
    /// the other team take the next player of that category (the post uses 2:
    /// "we don't do 1 more because category balance would out-weigh tier").
    pub category_margin: u32,
}

impl Default for AbbaParams {
    fn default() -> Self {
        AbbaParams {
            smoothing: true,
            smoothing_threshold_pp: 1.0,
            category_margin: 2,
        }
    }
}

impl AbbaParams {
    /// Where the team former comes from, for `mmsim catalogue`.
    pub const SOURCE: &str =
        "Armored Warfare, Matchmaking 2.0 diary: platoons first, then players by artillery, tier, category and win rate, with win-rate smoothing";
    /// Its keys, for `mmsim catalogue`.
    pub const PARAMETERS: &str = "smoothing, smoothing_threshold_pp, category_margin";

    /// The smoothing settings, and that the format has exactly 2 teams.
    pub fn validate(&self, teams: usize, _team_size: usize) -> Result<(), ParamError> {
        if teams != 2 {
            return Err(ParamError::new(
                "method",
                format!("\"abba\" splits a pool into exactly 2 teams, got {teams} teams; use \"balanced\" or \"accelbyte\""),
            ));
        }
        let t = self.smoothing_threshold_pp;
        if !(t.is_finite() && t > 0.0 && t <= 100.0) {
            return Err(ParamError::new(
                "smoothing_threshold_pp",
                format!("percentage points above 0 and at most 100, got {t}"),
            ));
        }
        if self.category_margin == 0 {
            return Err(ParamError::new(
                "category_margin",
                "1 or more (the post uses 2), got 0",
            ));
        }
        Ok(())
    }

    fn options(&self, team_size: usize) -> AbbaOptions {
        AbbaOptions {
            team_size,
            category_margin: self.category_margin as usize,
            smoothing: self.smoothing,
            threshold: self.smoothing_threshold_pp / 100.0,
        }
    }
}

/// What the split needs to know about one player.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AbbaPlayer {
    /// Vehicle tier; teams get the same tiers.
    pub tier: u8,
    /// Vehicle class; `None` where the game has none.
    pub category: Option<Category>,
    /// Skill as the post uses it, in [0, 1].
    pub win_rate: f64,
    /// Players with the same `Some(id)` are one platoon; a platoon of one is
    /// a solo player.
    pub platoon: Option<usize>,
}

/// Settings of one split.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AbbaOptions {
    /// Players per team.
    pub team_size: usize,
    /// How many more of a class one team may have than the other.
    pub category_margin: usize,
    /// Whether to smooth the teams' mean win rates towards each other.
    pub smoothing: bool,
    /// Smoothing threshold as a fraction (0.01 = one percentage point).
    pub threshold: f64,
}

/// The result of a split, with what each pass did.
#[derive(Clone, Debug, PartialEq)]
pub struct AbbaOutcome {
    /// Player indices of each team, in sorted (placement) order.
    pub teams: [Vec<usize>; 2],
    /// Players the sanity rebalance moved.
    pub sanity_moves: usize,
    /// Swaps the smoothing made.
    pub smoothing_swaps: usize,
    /// Team A's average win rate minus team B's, before smoothing.
    pub win_rate_gap_before: f64,
    /// The same after smoothing (equal to `before` when smoothing is off).
    pub win_rate_gap_after: f64,
}

/// The post's split of `2 * team_size` players into two teams; `None` when
/// the count is wrong or the platoons cannot fill two teams exactly.
pub fn abba_split(
    players: &[AbbaPlayer],
    opts: &AbbaOptions,
    rng: &mut Pcg64,
) -> Option<AbbaOutcome> {
    let ts = opts.team_size;
    if players.len() != 2 * ts {
        return None;
    }
    let mut members: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (i, p) in players.iter().enumerate() {
        if let Some(id) = p.platoon {
            members.entry(id).or_default().push(i);
        }
    }
    let platoons: Vec<Vec<usize>> = members.into_values().filter(|m| m.len() >= 2).collect();
    let mut platoon_of = vec![None; players.len()];
    for (k, m) in platoons.iter().enumerate() {
        for &i in m {
            platoon_of[i] = Some(k);
        }
    }
    let solos = platoon_of.iter().filter(|p| p.is_none()).count();
    let mut sizes: Vec<usize> = platoons.iter().map(Vec::len).collect();
    sizes.extend(std::iter::repeat_n(1, solos));
    if !can_fill(&sizes, &[ts, ts]) {
        return None;
    }

    let platoon_side = split_platoons(players, &platoons, &sizes, ts, rng);

    // Pass 2: walk the sorted list.
    let order = placement_order(players);
    let mut side = vec![0usize; players.len()];
    let mut cat_count = [[0usize; 5]; 2];
    let mut tier_points = [0u32; 2];
    let mut count = [0usize; 2];
    for &i in &order {
        let p = &players[i];
        let s = match platoon_of[i] {
            Some(k) => platoon_side[k],
            None => choose_side(
                p,
                &cat_count,
                &tier_points,
                &count,
                opts.category_margin,
                rng,
            ),
        };
        side[i] = s;
        if let Some(c) = p.category {
            cat_count[s][c as usize] += 1;
        }
        tier_points[s] += p.tier as u32;
        count[s] += 1;
    }

    // Pass 3: sanity rebalance. Pass 1 kept each side's platoons within the
    // team size, so the overweight team always has enough solo players.
    let mut sanity_moves = 0;
    for over in 0..2 {
        for &i in order.iter().rev() {
            if count[over] <= ts {
                break;
            }
            if side[i] == over && platoon_of[i].is_none() {
                side[i] = 1 - over;
                count[over] -= 1;
                count[1 - over] += 1;
                sanity_moves += 1;
            }
        }
    }

    let win_rate_gap_before = win_rate_gap(players, &side);
    let smoothing_swaps = if opts.smoothing {
        smooth(players, &mut side, &platoon_of, ts, opts.threshold)
    } else {
        0
    };
    let win_rate_gap_after = win_rate_gap(players, &side);

    let mut teams = [Vec::with_capacity(ts), Vec::with_capacity(ts)];
    for &i in &order {
        teams[side[i]].push(i);
    }
    Some(AbbaOutcome {
        teams,
        sanity_moves,
        smoothing_swaps,
        win_rate_gap_before,
        win_rate_gap_after,
    })
}

/// The pass-2 order: artillery first, then tier (high first), category, win
/// rate (high first), input order.
///
/// Each player's place is packed once into one integer key, ordered as the
/// post's comparison orders players (`placement_order_plain`, the oracle in
/// the tests). The last field is the input index, so no two keys tie and an
/// unstable sort gives the same order a stable one would. Comparing five
/// fields through the player indices at every step was a third of the
/// split's time on `armored-warfare-15v15`.
pub fn placement_order(players: &[AbbaPlayer]) -> Vec<usize> {
    let mut keys: Vec<u128> = (players.iter().enumerate())
        .map(|(i, p)| {
            (u128::from(!is_arty(p)) << 107)
                | (u128::from(u8::MAX - p.tier) << 99)
                | ((category_rank(p) as u128) << 96)
                | (u128::from(!total_order_key(p.win_rate)) << 32)
                | i as u128
        })
        .collect();
    keys.sort_unstable();
    let order: Vec<usize> = keys.iter().map(|&k| k as u32 as usize).collect();
    #[cfg(debug_assertions)]
    if players.len() <= 64 {
        debug_assert_eq!(order, placement_order_plain(players));
    }
    order
}

/// The post's comparison, player by player: the oracle of `placement_order`.
#[cfg(any(test, debug_assertions))]
fn placement_order_plain(players: &[AbbaPlayer]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..players.len()).collect();
    order.sort_by(|&a, &b| {
        let (pa, pb) = (&players[a], &players[b]);
        is_arty(pb)
            .cmp(&is_arty(pa))
            .then(pb.tier.cmp(&pa.tier))
            .then(category_rank(pa).cmp(&category_rank(pb)))
            .then(pb.win_rate.total_cmp(&pa.win_rate))
            .then(a.cmp(&b))
    });
    order
}

/// `x` as an unsigned integer ordered as `f64::total_cmp` orders floats.
fn total_order_key(x: f64) -> u64 {
    let bits = x.to_bits();
    // As `total_cmp`: negative floats have their magnitude bits flipped, so
    // that the bits compare as signed integers; the sign bit flipped then
    // makes them compare as unsigned ones.
    (bits ^ ((((bits as i64) >> 63) as u64) >> 1)) ^ (1 << 63)
}

fn is_arty(p: &AbbaPlayer) -> bool {
    p.category == Some(Category::Artillery)
}

/// Position of a category in the post's sort; players without one sort last.
fn category_rank(p: &AbbaPlayer) -> usize {
    p.category.map_or(5, |c| c as usize)
}

/// Pass 1: platoons against each other. Sorted by artillery, combined tier,
/// combined skill; each goes to the side with fewer platoon tier points,
/// then less platoon skill, then fewer platoon players, then a coin flip,
/// unless that side would leave the teams impossible to fill exactly.
fn split_platoons(
    players: &[AbbaPlayer],
    platoons: &[Vec<usize>],
    sizes: &[usize],
    ts: usize,
    rng: &mut Pcg64,
) -> Vec<usize> {
    let tier = |k: usize| {
        platoons[k]
            .iter()
            .map(|&i| players[i].tier as u32)
            .sum::<u32>()
    };
    let skill = |k: usize| {
        platoons[k]
            .iter()
            .map(|&i| players[i].win_rate)
            .sum::<f64>()
    };
    let arty = |k: usize| platoons[k].iter().any(|&i| is_arty(&players[i]));
    let mut order: Vec<usize> = (0..platoons.len()).collect();
    order.sort_by(|&a, &b| {
        arty(b)
            .cmp(&arty(a))
            .then(tier(b).cmp(&tier(a)))
            .then(skill(b).total_cmp(&skill(a)))
            .then(a.cmp(&b))
    });
    let mut guard = FillGuard::new(sizes, &[ts, ts]);
    let mut side_tier = [0u32; 2];
    let mut side_skill = [0.0f64; 2];
    let mut side_n = [0usize; 2];
    let mut out = vec![0; platoons.len()];
    for k in order {
        let n = platoons[k].len();
        let preferred = if side_tier[0] != side_tier[1] {
            usize::from(side_tier[1] < side_tier[0])
        } else if side_skill[0] != side_skill[1] {
            usize::from(side_skill[1] < side_skill[0])
        } else if side_n[0] != side_n[1] {
            usize::from(side_n[1] < side_n[0])
        } else {
            usize::from(rng.random::<bool>())
        };
        let s = if guard.can_place(n, preferred) {
            preferred
        } else {
            1 - preferred
        };
        guard.place(n, s);
        side_tier[s] += tier(k);
        side_skill[s] += skill(k);
        side_n[s] += n;
        out[k] = s;
    }
    out
}

/// The four rules of pass 2, in order; the first that decides wins.
fn choose_side(
    p: &AbbaPlayer,
    cat_count: &[[usize; 5]; 2],
    tier_points: &[u32; 2],
    count: &[usize; 2],
    margin: usize,
    rng: &mut Pcg64,
) -> usize {
    if let Some(c) = p.category {
        let (a, b) = (cat_count[0][c as usize], cat_count[1][c as usize]);
        if a >= b + margin {
            return 1;
        }
        if b >= a + margin {
            return 0;
        }
    }
    if tier_points[0] != tier_points[1] {
        return usize::from(tier_points[1] < tier_points[0]);
    }
    if count[0] != count[1] {
        return usize::from(count[1] < count[0]);
    }
    usize::from(rng.random::<bool>())
}

/// Team 0's average win rate minus team 1's.
fn win_rate_gap(players: &[AbbaPlayer], side: &[usize]) -> f64 {
    let mut sum = [0.0; 2];
    let mut n = [0usize; 2];
    for (p, &s) in players.iter().zip(side) {
        sum[s] += p.win_rate;
        n[s] += 1;
    }
    let avg = |s: usize| if n[s] == 0 { 0.0 } else { sum[s] / n[s] as f64 };
    avg(0) - avg(1)
}

/// Pass 4, on teams of `ts` players each; returns the number of swaps.
/// Each swap narrows the gap without flipping it, so the loop ends.
pub fn smooth(
    players: &[AbbaPlayer],
    side: &mut [usize],
    platoon_of: &[Option<usize>],
    ts: usize,
    threshold: f64,
) -> usize {
    let mut swaps = 0;
    // Both lists are rebuilt at every swap, in buffers kept across swaps.
    // Sorted by (win rate, index) packed as one key: the index breaks every
    // tie, so the unstable sort gives the stable one's order.
    let (mut best_first, mut worst_first) = (Vec::new(), Vec::new());
    loop {
        let gap = win_rate_gap(players, side);
        if gap.abs() < threshold - SMOOTH_EPS {
            return swaps;
        }
        let over = if gap > 0.0 { 0 } else { 1 };
        let solos_on = |s: usize, out: &mut Vec<usize>| {
            out.clear();
            out.extend((0..players.len()).filter(|&i| side[i] == s && platoon_of[i].is_none()));
        };
        solos_on(over, &mut best_first);
        best_first.sort_unstable_by_key(|&i| (!total_order_key(players[i].win_rate), i));
        solos_on(1 - over, &mut worst_first);
        worst_first.sort_unstable_by_key(|&i| (total_order_key(players[i].win_rate), i));
        #[cfg(debug_assertions)]
        {
            let mut plain = best_first.clone();
            plain.sort_by(|&a, &b| {
                (players[b].win_rate.total_cmp(&players[a].win_rate)).then(a.cmp(&b))
            });
            debug_assert_eq!(plain, best_first);
            plain.clone_from(&worst_first);
            plain.sort_by(|&a, &b| {
                (players[a].win_rate.total_cmp(&players[b].win_rate)).then(a.cmp(&b))
            });
            debug_assert_eq!(plain, worst_first);
        }
        let Some((i, j)) = first_swap(players, &best_first, &worst_first, gap, ts) else {
            return swaps;
        };
        side.swap(i, j);
        swaps += 1;
    }
}

/// Rounding must not stop a gap of exactly one point from being worked on.
const SMOOTH_EPS: f64 = 1e-12;

/// `smooth`'s swap: the first pair, best of the team over first and worst
/// of the other first, of the same tier and category whose swap narrows
/// the win-rate `gap` without overshooting it.
fn first_swap(
    players: &[AbbaPlayer],
    best_first: &[usize],
    worst_first: &[usize],
    gap: f64,
    ts: usize,
) -> Option<(usize, usize)> {
    best_first.iter().find_map(|&i| {
        worst_first
            .iter()
            .find(|&&j| {
                let (a, b) = (&players[i], &players[j]);
                let narrowed = gap.abs() - 2.0 * (a.win_rate - b.win_rate) / ts as f64;
                a.tier == b.tier
                    && a.category == b.category
                    && a.win_rate > b.win_rate
                    && narrowed >= -SMOOTH_EPS
            })
            .map(|&j| (i, j))
    })
}

/// The Armored Warfare former; two teams only.
#[derive(Clone, Debug)]
pub struct Abba {
    /// Its parameters (`[teams]`).
    pub params: AbbaParams,
}

impl Abba {
    /// The former for these parameters (validated).
    pub fn new(params: AbbaParams) -> Self {
        Abba { params }
    }
}

impl TeamFormer for Abba {
    fn split(
        &self,
        parties: &[Vec<&Player>],
        teams: usize,
        team_size: usize,
        rng: &mut Pcg64,
    ) -> Option<Vec<Vec<usize>>> {
        if teams != 2 {
            return None;
        }
        // Sized up front: growing them a player at a time was most of the
        // split's allocations (30 players each).
        let n = parties.iter().map(Vec::len).sum();
        let mut players = Vec::with_capacity(n);
        let mut party_of = Vec::with_capacity(n);
        for (k, party) in parties.iter().enumerate() {
            for p in party {
                players.push(AbbaPlayer {
                    tier: p.tier,
                    category: p.category,
                    win_rate: p.win_rate,
                    platoon: (party.len() >= 2).then_some(k),
                });
                party_of.push(k);
            }
        }
        let outcome = abba_split(&players, &self.params.options(team_size), rng)?;
        let mut out = vec![
            Vec::with_capacity(parties.len()),
            Vec::with_capacity(parties.len()),
        ];
        for (s, team) in outcome.teams.iter().enumerate() {
            for &i in team {
                let k = party_of[i];
                if !out[s].contains(&k) {
                    out[s].push(k);
                }
            }
            out[s].sort_unstable();
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use Category::*;

    fn solo(tier: u8, category: Category, win_rate: f64) -> AbbaPlayer {
        AbbaPlayer {
            tier,
            category: Some(category),
            win_rate,
            platoon: None,
        }
    }

    fn opts(team_size: usize, margin: usize, smoothing: bool) -> AbbaOptions {
        AbbaOptions {
            team_size,
            category_margin: margin,
            smoothing,
            threshold: 0.01,
        }
    }

    fn side_of(out: &AbbaOutcome, i: usize) -> usize {
        usize::from(out.teams[1].contains(&i))
    }

    fn same_side(out: &AbbaOutcome, group: &[usize]) -> bool {
        group
            .iter()
            .all(|&i| side_of(out, i) == side_of(out, group[0]))
    }

    #[test]
    fn category_rule_overrides_tier_points() {
        // a: T10 MBT alone on one side; b, c, d: T3 MBTs pile on the other by
        // tier points, which then has 3 MBTs to 1. e is a T2 MBT: the other
        // side has fewer tier points (9 < 10), but with margin 2 the category
        // rule sends e to a's side. With margin 3, e follows tier points.
        let pool = [
            solo(10, MainBattleTank, 0.5),
            solo(3, MainBattleTank, 0.5),
            solo(3, MainBattleTank, 0.5),
            solo(3, MainBattleTank, 0.5),
            solo(2, MainBattleTank, 0.5),
            solo(2, LightTank, 0.5),
            solo(1, LightTank, 0.5),
            solo(1, LightTank, 0.5),
        ];
        for seed in 0..8 {
            let mut rng = Pcg64::seed_from_u64(seed);
            let two = abba_split(&pool, &opts(4, 2, false), &mut rng).unwrap();
            // Placement: a | b c d, e -> a (category), f -> b's side (9 < 12),
            // g -> b's side (11 < 12), h -> a's side (LT 0 vs 2), then the
            // sanity move sends g, the bottom solo of the 5-player side, over.
            assert!(same_side(&two, &[0, 4, 7, 6]), "{two:?}");
            assert!(same_side(&two, &[1, 2, 3, 5]), "{two:?}");
            assert_eq!(two.sanity_moves, 1);
            let mut rng = Pcg64::seed_from_u64(seed);
            let three = abba_split(&pool, &opts(4, 3, false), &mut rng).unwrap();
            assert!(same_side(&three, &[0, 5, 7, 6]), "{three:?}");
            assert!(same_side(&three, &[1, 2, 3, 4]), "{three:?}");
        }
    }

    #[test]
    fn tier_points_come_before_player_count() {
        // After a (T10) and b (T4) split, c and d (T4) both join b: b's side
        // already has more players, but fewer tier points decides first.
        let pool = [
            solo(10, MainBattleTank, 0.5),
            solo(4, MainBattleTank, 0.5),
            solo(4, LightTank, 0.5),
            solo(4, TankDestroyer, 0.5),
            solo(1, ArmouredFighter, 0.5),
            solo(1, ArmouredFighter, 0.5),
        ];
        let out = abba_split(&pool, &opts(3, 2, false), &mut Pcg64::seed_from_u64(3)).unwrap();
        assert!(same_side(&out, &[1, 2, 3]), "{out:?}");
        assert!(same_side(&out, &[0, 4, 5]), "{out:?}");
        assert_eq!(out.sanity_moves, 0);
    }

    #[test]
    fn artillery_sorts_to_the_top_then_tier_category_skill() {
        let pool = [
            solo(8, LightTank, 0.5),
            solo(8, MainBattleTank, 0.4),
            solo(5, Artillery, 0.5),
            solo(8, MainBattleTank, 0.6),
            solo(9, TankDestroyer, 0.5),
            solo(6, Artillery, 0.4),
        ];
        assert_eq!(placement_order(&pool), vec![5, 2, 4, 3, 1, 0]);
    }

    #[test]
    fn platoons_stay_whole_and_face_each_other() {
        // Two T9 pairs (18 tier points each) and a T5 trio (15): the pairs
        // are split first and land on opposite teams.
        let mut pool: Vec<AbbaPlayer> = (0..10)
            .map(|i| solo(7, MainBattleTank, 0.45 + 0.01 * i as f64))
            .collect();
        for (i, platoon, tier) in [
            (0, 1, 9),
            (1, 1, 9),
            (2, 2, 9),
            (3, 2, 9),
            (4, 3, 5),
            (5, 3, 5),
            (6, 3, 5),
        ] {
            pool[i].platoon = Some(platoon);
            pool[i].tier = tier;
        }
        for seed in 0..16 {
            let out =
                abba_split(&pool, &opts(5, 2, true), &mut Pcg64::seed_from_u64(seed)).unwrap();
            assert!(
                same_side(&out, &[0, 1]) && same_side(&out, &[2, 3]) && same_side(&out, &[4, 5, 6])
            );
            assert_ne!(side_of(&out, 0), side_of(&out, 2), "{out:?}");
            assert_eq!(out.teams[0].len(), 5);
            assert_eq!(out.teams[1].len(), 5);
        }
        // A platoon bigger than a team cannot be placed.
        let mut big = pool.clone();
        for p in big.iter_mut().take(6) {
            p.platoon = Some(4);
        }
        assert!(abba_split(&big, &opts(5, 2, true), &mut Pcg64::seed_from_u64(0)).is_none());
    }

    #[test]
    fn smoothing_swaps_same_tier_and_category_without_flipping() {
        // Sides given: A = a .70 T8, c .55 T6, e .60 T4; B = b .40 T8,
        // d .50 T6, f .45 T4 (all MBT). Gap 16.67 points. Swapping a and b
        // would flip it (-3.33), so e<->f (gap 6.67), then c<->d (3.33);
        // then no pair narrows without flipping.
        let pool = [
            solo(8, MainBattleTank, 0.70),
            solo(8, MainBattleTank, 0.40),
            solo(6, MainBattleTank, 0.55),
            solo(6, MainBattleTank, 0.50),
            solo(4, MainBattleTank, 0.60),
            solo(4, MainBattleTank, 0.45),
        ];
        let mut side = vec![0, 1, 0, 1, 0, 1];
        let swaps = smooth(&pool, &mut side, &[None; 6], 3, 0.01);
        assert_eq!(swaps, 2);
        assert_eq!(side, vec![0, 1, 1, 0, 1, 0]);
        assert!((win_rate_gap(&pool, &side) - 0.05 / 1.5).abs() < 1e-12);
        // A gap under the threshold is left alone.
        let mut side = vec![0, 1, 0, 1, 0, 1];
        let flat = [
            solo(8, MainBattleTank, 0.504),
            solo(8, MainBattleTank, 0.50),
            solo(6, MainBattleTank, 0.50),
            solo(6, MainBattleTank, 0.50),
            solo(4, MainBattleTank, 0.50),
            solo(4, MainBattleTank, 0.48),
        ];
        assert_eq!(smooth(&flat, &mut side, &[None; 6], 3, 0.01), 0);
    }

    #[test]
    fn smoothing_never_moves_platoon_members() {
        let pool = [
            AbbaPlayer {
                platoon: Some(9),
                ..solo(8, MainBattleTank, 0.70)
            },
            solo(8, MainBattleTank, 0.40),
        ];
        let mut side = vec![0, 1];
        assert_eq!(smooth(&pool, &mut side, &[Some(0), None], 1, 0.01), 0);
    }

    #[test]
    fn smoothing_narrows_random_pools() {
        let mut rng = Pcg64::seed_from_u64(11);
        let cats = [
            MainBattleTank,
            LightTank,
            TankDestroyer,
            ArmouredFighter,
            Artillery,
        ];
        let mut within_one = [0, 0];
        for _ in 0..200 {
            let pool: Vec<AbbaPlayer> = (0..30)
                .map(|_| {
                    solo(
                        rng.random_range(7..=8),
                        cats[rng.random_range(0..5)],
                        rng.random_range(0.40..0.60),
                    )
                })
                .collect();
            for (k, smoothing) in [false, true].into_iter().enumerate() {
                let out = abba_split(&pool, &opts(15, 2, smoothing), &mut rng.clone()).unwrap();
                assert!(out.win_rate_gap_after.abs() <= out.win_rate_gap_before.abs() + 1e-12);
                if out.win_rate_gap_after.abs() < 0.01 {
                    within_one[k] += 1;
                }
            }
        }
        assert!(within_one[1] > within_one[0] + 50, "{within_one:?}");
    }

    /// `smooth` as it was, sorting both lists by the post's comparison
    /// at every swap: the oracle of the packed-key sorts (the swap chosen
    /// from the sorted lists is the same `first_swap`).
    fn smooth_plain(
        players: &[AbbaPlayer],
        side: &mut [usize],
        platoon_of: &[Option<usize>],
        ts: usize,
        threshold: f64,
    ) -> usize {
        let mut swaps = 0;
        loop {
            let gap = win_rate_gap(players, side);
            if gap.abs() < threshold - SMOOTH_EPS {
                return swaps;
            }
            let over = if gap > 0.0 { 0 } else { 1 };
            let solos_on = |s: usize| -> Vec<usize> {
                (0..players.len())
                    .filter(|&i| side[i] == s && platoon_of[i].is_none())
                    .collect()
            };
            let mut best_first = solos_on(over);
            best_first.sort_by(|&a, &b| {
                (players[b].win_rate.total_cmp(&players[a].win_rate)).then(a.cmp(&b))
            });
            let mut worst_first = solos_on(1 - over);
            worst_first.sort_by(|&a, &b| {
                (players[a].win_rate.total_cmp(&players[b].win_rate)).then(a.cmp(&b))
            });
            let Some((i, j)) = first_swap(players, &best_first, &worst_first, gap, ts) else {
                return swaps;
            };
            side.swap(i, j);
            swaps += 1;
        }
    }

    /// Random pools of up to 30 players with many ties (few tiers and win
    /// rates, both zeros, platoons), where the order's tie-breaks decide.
    fn random_pool(rng: &mut Pcg64, n: usize) -> Vec<AbbaPlayer> {
        let rates = [0.0, -0.0, 0.25, 0.5, 0.5000000000000001, 0.75, 1.0];
        (0..n)
            .map(|_| AbbaPlayer {
                tier: rng.random_range(7..=9),
                category: match rng.random_range(0..6) {
                    0 => None,
                    c => Some(
                        [
                            Category::MainBattleTank,
                            Category::LightTank,
                            Category::TankDestroyer,
                            Category::ArmouredFighter,
                            Category::Artillery,
                        ][c - 1],
                    ),
                },
                win_rate: if rng.random_bool(0.5) {
                    rates[rng.random_range(0..rates.len())]
                } else {
                    rng.random_range(0.4..0.6)
                },
                platoon: rng.random_bool(0.2).then(|| rng.random_range(0..4)),
            })
            .collect()
    }

    #[test]
    fn packed_orders_are_the_comparisons_orders() {
        let mut rng = Pcg64::seed_from_u64(29);
        for round in 0..500 {
            let n = 1 + round % 30;
            let pool = random_pool(&mut rng, n);
            assert_eq!(placement_order(&pool), placement_order_plain(&pool), "{pool:?}");
            let mut side: Vec<usize> = (0..n).map(|_| rng.random_range(0..2)).collect();
            let platoon_of: Vec<Option<usize>> = pool.iter().map(|p| p.platoon).collect();
            let mut plain_side = side.clone();
            let threshold = [0.001, 0.01, 0.05][round % 3];
            let swaps = smooth(&pool, &mut side, &platoon_of, n.div_ceil(2), threshold);
            let plain = smooth_plain(&pool, &mut plain_side, &platoon_of, n.div_ceil(2), threshold);
            assert_eq!((swaps, &side), (plain, &plain_side), "{pool:?}");
        }
    }

    #[test]
    fn params_refuse_other_team_counts() {
        let p = AbbaParams::default();
        assert!(p.validate(2, 15).is_ok());
        let e = p.validate(3, 5).unwrap_err();
        assert_eq!(e.key, "method");
        assert!(e.message.contains("exactly 2"));
        let bad = AbbaParams {
            smoothing_threshold_pp: 0.0,
            ..p
        };
        assert_eq!(bad.validate(2, 15).unwrap_err().key, "smoothing_threshold_pp");
    }
}
