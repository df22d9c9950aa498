//! Team splits with a fixed tie-break order, so a candidate scores the same
//! on every pass.

use super::*;
use crate::model::TicketId;
use crate::teams::balanced::{self};
use smallvec::SmallVec;

/// The team priority of a candidate's split of kind `kind` (0: balanced on
/// MMR, 1: party counts first): the order in which the greedy fill breaks
/// ties between teams of equal strength, `priority[t]` lower first. It is a
/// permutation hashed from the run's `salt` and the candidate's tickets (in
/// the order the candidate lists them), not a draw from the policy's rng,
/// so a candidate's split is the same on every pass and a seed whose
/// candidates did not change need not be looked at until its threshold
/// can accept one. No team is favoured: over candidates the permutation is
/// uniform.
pub(super) fn team_priority(salt: u64, kind: usize, ids: &[TicketId], teams: usize) -> SmallVec<[usize; 4]> {
    pub(super) fn mix(mut z: u64) -> u64 {
        // SplitMix64's finaliser.
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    let mut h = mix(salt ^ kind as u64);
    for id in ids {
        h = mix(h.wrapping_add(0x9e37_79b9_7f4a_7c15) ^ u64::from(id.0));
    }
    let mut priority: SmallVec<[usize; 4]> = (0..teams).collect();
    for i in (1..teams).rev() {
        h = mix(h.wrapping_add(0x9e37_79b9_7f4a_7c15));
        priority.swap(i, (h % (i as u64 + 1)) as usize);
    }
    priority
}

/// `teams::balanced_split_by_priority`, with its feasibility checks
/// answered from `table`. The caller has checked that the parties fill the
/// teams. Returns each party's team.
pub(super) fn split_with_priority(
    table: &mut FillTable,
    sizes: &[usize],
    strengths: &[f64],
    teams: usize,
    team_size: usize,
    max_swaps: u32,
    priority: &[usize],
) -> Option<Inline<usize>> {
    let mut order: Inline<usize> = (0..sizes.len()).collect();
    order.sort_by(balanced::placement_order(sizes, strengths));
    let mut team_of: Inline<usize> = smallvec::smallvec![usize::MAX; sizes.len()];
    let mut sums: SmallVec<[f64; 4]> = smallvec::smallvec![0.0f64; teams];
    let mut remaining: SmallVec<[usize; 16]> = smallvec::smallvec![0usize; team_size + 1];
    for &s in sizes {
        remaining[s] += 1;
    }
    let mut caps: SmallVec<[usize; 4]> = smallvec::smallvec![team_size; teams];
    let mut by_sum: SmallVec<[usize; 4]> = SmallVec::with_capacity(teams);
    for &p in &order {
        let size = sizes[p];
        // The lowest (sum, priority) among the teams the party fits: try
        // them in that order and stop at the first that fits.
        by_sum.clear();
        by_sum.extend(0..teams);
        by_sum.sort_unstable_by(|&a, &b| {
            sums[a]
                .total_cmp(&sums[b])
                .then(priority[a].cmp(&priority[b]))
        });
        let mut pick: Option<usize> = None;
        for &t in &by_sum {
            if caps[t] < size || remaining[size] == 0 {
                continue;
            }
            remaining[size] -= 1;
            caps[t] -= size;
            let ok = table.can_fill(&remaining, &caps);
            remaining[size] += 1;
            caps[t] += size;
            if ok {
                pick = Some(t);
                break;
            }
        }
        let team = pick?;
        remaining[size] -= 1;
        caps[team] -= size;
        team_of[p] = team;
        sums[team] += strengths[p];
    }
    balanced::improve_by_swaps(sizes, strengths, &mut team_of, &mut sums, max_swaps);
    Some(team_of)
}
