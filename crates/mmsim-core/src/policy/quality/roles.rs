//! The `quality` policy in a role queue: its candidate fills take a party
//! only while the set can still be completed to every team's composition
//! (the shared `RoleFill` check the other policies' fills use), and a split
//! it scores is one whose teams each fill their composition, so the match
//! it scores is the match the engine forms. Without `[roles]` nothing here
//! changes a split.

use crate::teams::balanced::members_by_team;
use crate::teams::roles::{balanced_split, split_fits, Composition};

/// A split of a full candidate (each party's team, `None` when the policy's
/// own split got stuck) made role-feasible: kept when every team fills its
/// composition, else the most even role-feasible split of the same parties
/// on the same strengths (`teams::roles::balanced_split`, deterministic).
/// `None` when no role-feasible split exists. Without roles, unchanged.
pub(super) fn role_feasible(
    team_of: Option<Vec<usize>>,
    masks: &[&[u8]],
    strengths: &[f64],
    teams: usize,
    comp: Option<Composition>,
) -> Option<Vec<usize>> {
    let Some(comp) = comp else {
        return team_of;
    };
    if let Some(t) = &team_of {
        if split_fits(masks, &members_by_team(t, teams), comp) {
            return team_of;
        }
    }
    let split = balanced_split(masks, strengths, teams, comp)?;
    let mut out = vec![0; masks.len()];
    for (team, parties) in split.iter().enumerate() {
        for &p in parties {
            out[p] = team;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Player, PlayerId, Rating, SimTime, TicketId};
    use crate::policy::quality::{Quality, QualityOracle, QualityParams};
    use crate::policy::{MatchFormat, Policy, PoolView, Trigger};
    use crate::pool::{Pool, WaitingTicket};
    use rand::SeedableRng;
    use rand_pcg::Pcg64;

    const TANK: u8 = 1;
    const HEALER: u8 = 2;
    const DAMAGE: u8 = 4;

    #[test]
    fn an_uneven_role_split_is_replaced_and_an_even_one_kept() {
        let comp = Some(Composition::new(&[1, 1, 3]));
        // Ten solos: two tanks, two healers, six damage.
        let masks_v: Vec<[u8; 1]> = [TANK, TANK, HEALER, HEALER]
            .into_iter()
            .chain(std::iter::repeat_n(DAMAGE, 6))
            .map(|m| [m])
            .collect();
        let masks: Vec<&[u8]> = masks_v.iter().map(|m| &m[..]).collect();
        let strengths = vec![1.0; 10];
        // Both tanks on team 0: refused, replaced by a split with one each.
        let bad = vec![0, 0, 0, 1, 0, 0, 1, 1, 1, 1];
        let got = role_feasible(Some(bad), &masks, &strengths, 2, comp).unwrap();
        assert_ne!(got[0], got[1], "{got:?}");
        assert_ne!(got[2], got[3], "{got:?}");
        let good = vec![0, 1, 0, 1, 0, 0, 0, 1, 1, 1];
        assert_eq!(
            role_feasible(Some(good.clone()), &masks, &strengths, 2, comp),
            Some(good.clone())
        );
        // Without roles nothing changes, even a split that would be uneven.
        let bad = vec![0, 0, 0, 1, 0, 0, 1, 1, 1, 1];
        assert_eq!(
            role_feasible(Some(bad.clone()), &masks, &strengths, 2, None),
            Some(bad)
        );
    }

    /// The check for the quality policy: 1 tank, 1 healer, 3 damage
    /// per team, a pool of damage players with a few tanks and healers, the
    /// threshold at zero so the policy proposes every match it can: every
    /// proposed team has its tank and its healer, and the search agrees
    /// with its from-scratch oracle.
    #[test]
    fn quality_with_roles_never_forms_a_team_without_its_composition() {
        let comp = Composition::new(&[1, 1, 3]);
        let format = MatchFormat {
            teams: 2,
            team_size: 5,
            roles: Some(comp),
        };
        let mut players = Vec::new();
        let mut pool = Pool::default();
        // 30 solos: tanks at 0 and 9 (two), healers at 4, 13, 22 (three), the
        // rest damage; two damage-or-tank players at 27 and 28.
        for i in 0..30u32 {
            let mask = match i {
                0 | 9 => TANK,
                4 | 13 | 22 => HEALER,
                27 | 28 => TANK | DAMAGE,
                _ => DAMAGE,
            };
            let r = 2000.0 + 10.0 * i as f64;
            let mut p = Player::new(PlayerId(i), r, Rating::new(r, 100.0, 0.06));
            p.roles = mask;
            p.main_role = mask.trailing_zeros() as u8;
            players.push(p);
            pool.insert(WaitingTicket {
                id: TicketId(i),
                players: crate::model::Party::from_slice(&[PlayerId(i)]),
                rating: r,
                enqueued: SimTime::from_ms(u64::from(i) * 1000),
                requeue: false,
                roles: smallvec::smallvec![mask],
            });
        }
        let params = QualityParams {
            threshold: 0.0,
            threshold_floor: 0.0,
            neighbours: 29,
            ..QualityParams::default()
        };
        let view = PoolView {
            now: SimTime::from_ms(600_000),
            pool: &pool,
            players: &players,
            format,
            rerated: 0,
        };
        let (mut fast, mut slow) = (Quality::new(params.clone()), QualityOracle::new(params));
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let mut rng = Pcg64::seed_from_u64(3);
        fast.propose(&view, Trigger::Tick, &mut rng.clone(), &mut a);
        slow.propose(&view, Trigger::Tick, &mut rng, &mut b);
        assert_eq!(a, b);
        // A match needs two tanks and two healers: four tank-capable players
        // but three healers make exactly one.
        assert_eq!(a.len(), 1, "{a:?}");
        for prop in &a {
            let teams = prop.teams.as_ref().expect("quality splits its teams");
            for team in teams {
                let masks: Vec<u8> = team
                    .iter()
                    .map(|id| pool.get(*id).unwrap().roles[0])
                    .collect();
                assert_eq!(masks.len(), 5);
                assert!(
                    crate::teams::roles::team_fits(masks.iter().copied(), comp),
                    "a team without its composition: {masks:?}"
                );
                assert!(masks.iter().any(|m| m & TANK != 0), "no tank: {masks:?}");
                assert!(masks.contains(&HEALER), "no healer: {masks:?}");
            }
        }
    }
}
