//! The engine's side of a role queue: drawing players' roles, refusing a
//! party that no team could take, keeping a formed match role-feasible
//! whoever split it, and choosing each player's role. The feasibility
//! itself lives in `teams::roles`, which the policies' fills share.

use crate::metrics::TicketRoles;
use crate::model::{Party, Player, TicketId};
use crate::policy::MatchFormat;
use crate::pool::Pool;
use crate::teams::roles::{self, Composition};
use rand::Rng;
use rand_pcg::Pcg64;
use smallvec::SmallVec;

/// How players' roles are drawn.
#[derive(Clone, Debug, PartialEq)]
pub struct RoleDraw {
    /// Role names; a role's bit in `Player::roles` is its index.
    pub names: Vec<String>,
    /// Weight of each role as a main (first-choice) role.
    pub shares: Vec<f64>,
    /// Probability of accepting a second role, drawn by the same weights.
    pub second_prob: f64,
}

/// Gives every player a main role by the shares and, with `second_prob`, a
/// second accepted role by the same shares among the others.
pub(super) fn draw(players: &mut [Player], d: &RoleDraw, rng: &mut Pcg64) {
    for p in players.iter_mut() {
        let main = super::population::pick(&d.shares, rng);
        p.main_role = main as u8;
        p.roles = 1 << main;
        let u: f64 = rng.random();
        if u < d.second_prob {
            let mut others = d.shares.clone();
            others[main] = 0.0;
            if others.iter().any(|w| *w > 0.0) {
                p.roles |= 1 << super::population::pick(&others, rng);
            }
        }
    }
}

/// The members' role masks for a ticket: empty without a role queue.
pub(super) fn masks(players: &[Player], party: &Party, format: MatchFormat) -> SmallVec<[u8; 5]> {
    match format.roles {
        Some(_) => party.iter().map(|p| players[p.index()].roles).collect(),
        None => SmallVec::new(),
    }
}

/// Whether a party could ever play: its members fit one team's composition
/// (two tank-only players never can when a team has one tank). Always true
/// without a role queue.
pub(super) fn party_fits(players: &[Player], party: &Party, format: MatchFormat) -> bool {
    match format.roles {
        Some(comp) => roles::team_fits(party.iter().map(|p| players[p.index()].roles), comp),
        None => true,
    }
}

/// Makes a split (ticket ids per team) role-feasible: kept when every team
/// already fits its composition, else replaced by the most even
/// role-feasible split of the same tickets. False when none exists.
pub(super) fn make_feasible(
    pool: &Pool,
    tickets: &[TicketId],
    comp: Composition,
    out: &mut [Vec<TicketId>],
) -> bool {
    if teams_fit(pool, out, comp) {
        return true;
    }
    let parties: Vec<&[u8]> = tickets
        .iter()
        .map(|id| pool.get(*id).map_or(&[][..], |t| &t.roles[..]))
        .collect();
    let strengths: Vec<f64> = tickets
        .iter()
        .map(|id| pool.get(*id).map_or(0.0, |t| t.rating * t.size() as f64))
        .collect();
    let Some(split) = roles::balanced_split(&parties, &strengths, out.len(), comp) else {
        return false;
    };
    for (o, team) in out.iter_mut().zip(split) {
        o.clear();
        o.extend(team.into_iter().map(|i| tickets[i]));
    }
    true
}

/// Whether every team of ticket ids fills its composition exactly.
pub(super) fn teams_fit(pool: &Pool, teams: &[Vec<TicketId>], comp: Composition) -> bool {
    teams.iter().all(|team| {
        let masks = team
            .iter()
            .filter_map(|id| pool.get(*id))
            .flat_map(|t| t.roles.iter().copied());
        masks.clone().count() == comp.team_size() && roles::team_fits(masks, comp)
    })
}

/// Each player's role on a feasible team, in ticket then member order:
/// the most players in their main role.
pub(super) fn assign(
    players: &[Player],
    pool: &Pool,
    team: &[TicketId],
    comp: Composition,
) -> SmallVec<[u8; 8]> {
    let members = team
        .iter()
        .filter_map(|id| pool.get(*id))
        .flat_map(|t| t.players.iter());
    let masks: SmallVec<[u8; 8]> = members.clone().map(|p| players[p.index()].roles).collect();
    let mains: SmallVec<[u8; 8]> = members.map(|p| players[p.index()].main_role).collect();
    roles::assign_roles(&masks, &mains, comp).expect("the engine forms role-feasible teams only")
}

/// A ticket's role columns: each member's main role and accepted roles,
/// and the role each plays (`assigned`, empty unless matched).
pub(super) fn record(players: &[Player], party: &Party, assigned: &[u8]) -> TicketRoles {
    TicketRoles {
        main: party.iter().map(|p| players[p.index()].main_role).collect(),
        accepted: party.iter().map(|p| players[p.index()].roles).collect(),
        assigned: assigned.iter().copied().collect(),
    }
}
