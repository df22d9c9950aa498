//! Backfill in a role queue: a leaver's slot opens in the role they played,
//! and only a waiting party that can take that role, with its other members
//! in the team's other open roles, may fill it. The feasibility is the role
//! queue's own (`teams::roles`), asked of the open slots instead of a whole
//! team's composition.

use crate::model::Player;
use crate::pool::WaitingTicket;
use crate::teams::roles::{assign_roles, Composition, MAX_ROLES};
use smallvec::SmallVec;

/// The role of an open slot in a queue without roles.
pub(super) const NO_ROLE: u8 = u8::MAX;

/// Open slots per role of one team, from the roles of its open slots.
pub fn open_counts(open_roles: impl Iterator<Item = u8>, roles: usize) -> [u8; MAX_ROLES] {
    let mut counts = [0u8; MAX_ROLES];
    for r in open_roles {
        if (r as usize) < roles {
            counts[r as usize] = counts[r as usize].saturating_add(1);
        }
    }
    counts
}

/// The role each member of a joining party plays (members in order) when
/// the party fills open slots `open` (per role) of one team, one member
/// taking `role`, the slot being filled; the most members in their main
/// role among the ways that exist. `None` when the party cannot: more
/// members than open slots, nobody able to play `role`, or the rest not
/// fitting the other open roles.
pub fn joiner_roles(
    masks: &[u8],
    mains: &[u8],
    open: &[u8; MAX_ROLES],
    roles: usize,
    role: u8,
) -> Option<SmallVec<[u8; 8]>> {
    let r = role as usize;
    let slots: usize = open[..roles].iter().map(|&c| c as usize).sum();
    if r >= roles || open[r] == 0 || masks.len() > slots {
        return None;
    }
    let mut rest = *open;
    rest[r] -= 1;
    let comp = Composition::new(&rest[..roles]);
    // Who takes the slot: a member whose main role it is first, so that the
    // answer keeps players in their main role where it can.
    let mut order: SmallVec<[usize; 8]> = (0..masks.len())
        .filter(|&i| masks[i] & (1 << r) != 0)
        .collect();
    order.sort_by_key(|&i| (mains[i] != role, i));
    for i in order {
        let others: SmallVec<[u8; 8]> = (0..masks.len())
            .filter(|&j| j != i)
            .map(|j| masks[j])
            .collect();
        let other_mains: SmallVec<[u8; 8]> = (0..masks.len())
            .filter(|&j| j != i)
            .map(|j| mains[j])
            .collect();
        if let Some(got) = assign_roles(&others, &other_mains, comp) {
            let mut out: SmallVec<[u8; 8]> = SmallVec::with_capacity(masks.len());
            let mut it = got.into_iter();
            for j in 0..masks.len() {
                out.push(if j == i { role } else { it.next()? });
            }
            return Some(out);
        }
    }
    None
}

/// `joiner_roles` for a waiting ticket, its members' main roles read from
/// the population.
pub(super) fn party_roles(
    players: &[Player],
    t: &WaitingTicket,
    open: &[u8; MAX_ROLES],
    roles: usize,
    role: u8,
) -> Option<SmallVec<[u8; 8]>> {
    let mains: SmallVec<[u8; 8]> = t
        .players
        .iter()
        .map(|p| players[p.index()].main_role)
        .collect();
    joiner_roles(&t.roles, &mains, open, roles, role)
}
