//! Moved from mmsim-core's `engine/sim/backfill_roles.rs`: these checks build their world from
//! scenario text, which only this crate reads.

#![allow(unused_imports)]
use mmsim_core::engine::sim::backfill_roles::*;
use mmsim_core::engine::sim::backfill_roles::{joiner_roles, open_counts};
use mmsim_core::engine::Simulation;
use mmsim_core::metrics::{KeepRows, TicketEnd};
use mmsim_core::model::{MatchId, PlayerId, SimTime};
use mmsim_core::policy::Trigger;
use mmsim_core::pool::WaitingTicket;
use mmsim_core::teams::roles::MAX_ROLES;
use mmsim_scenario::FromScenario;

const TANK: u8 = 1;
const HEALER: u8 = 2;
const DAMAGE: u8 = 4;

fn open(roles: &[u8]) -> [u8; MAX_ROLES] {
    open_counts(roles.iter().copied(), 3)
}

#[test]
fn a_tank_slot_takes_a_tank_capable_player_only() {
    let tank_slot = open(&[0]);
    assert_eq!(joiner_roles(&[DAMAGE], &[2], &tank_slot, 3, 0), None);
    assert_eq!(joiner_roles(&[HEALER], &[1], &tank_slot, 3, 0), None);
    assert_eq!(
        joiner_roles(&[TANK | DAMAGE], &[2], &tank_slot, 3, 0).as_deref(),
        Some(&[0][..])
    );
    // A pair cannot take one slot, whatever it plays.
    assert_eq!(joiner_roles(&[TANK, TANK], &[0, 0], &tank_slot, 3, 0), None);
}

#[test]
fn a_party_must_fit_the_open_roles_as_a_whole() {
    // A tank and a damage slot open in one team.
    let two = open(&[0, 2]);
    // Tank-only and damage-only: the tank takes the tank slot.
    assert_eq!(
        joiner_roles(&[DAMAGE, TANK], &[2, 0], &two, 3, 0).as_deref(),
        Some(&[2, 0][..])
    );
    // Two tank-only players: one slot of tank only.
    assert_eq!(joiner_roles(&[TANK, TANK], &[0, 0], &two, 3, 0), None);
    // A flexible pair: the one whose main is tank takes it.
    assert_eq!(
        joiner_roles(&[TANK | DAMAGE, TANK | DAMAGE], &[2, 0], &two, 3, 0).as_deref(),
        Some(&[2, 0][..])
    );
    // A healer slot is not open: a healer-only member blocks the pair.
    assert_eq!(joiner_roles(&[TANK, HEALER], &[0, 1], &two, 3, 0), None);
}

/// The issue's check: a tank leaving opens a tank slot; a damage-only
/// ticket cannot fill it, though it is older and nearer the leaver's
/// rating, while a tank-capable one can, and plays tank.
#[test]
fn a_tank_slot_is_filled_by_a_tank_capable_ticket_not_an_older_damage_one() {
    const DAMAGE_2V2: u8 = 2;
    let (config, parts) = role_queue_2v2("");
    let mut rows = KeepRows::default();
    let mut sim = Simulation::new(config, 1, parts, &mut rows);
    let r = tank_leaves(&mut sim);
    let damage = role_ticket(&mut sim, 10, DAMAGE_2V2, r, 5_000);
    let flex = role_ticket(&mut sim, 11, TANK | DAMAGE_2V2, r + 50.0, 70_000);
    sim.world.now = SimTime::from_ms(80_000);
    sim.run_policy(Trigger::Tick);
    assert!(
        sim.world.pool.contains(damage),
        "a damage-only player cannot take a tank slot"
    );
    assert!(!sim.world.pool.contains(flex));
    assert!(sim.bf.as_ref().unwrap().open.is_empty());
    let a = &sim.world.active[0];
    assert_eq!(a.members.last(), Some(&PlayerId(11)));
    assert_eq!(a.roles.last(), Some(&0), "the joiner plays tank");
    // Its damage teammate's slot opens next: now the damage ticket fits.
    let mate = (0..4)
        .find(|&k| a.roles[k] == 1 && a.parties[k].1 == a.parties.last().unwrap().1)
        .unwrap();
    sim.world.now = SimTime::from_ms(90_000);
    sim.on_leave(mmsim_core::engine::sim::Slot(0), mate as u32);
    assert!(!sim.world.pool.contains(damage));
    assert_eq!(sim.world.active[0].roles.last(), Some(&1));
    drop(sim);
    let row = rows.0.tickets.iter().find(|t| t.ticket == flex).unwrap();
    assert_eq!(row.end, TicketEnd::Matched(MatchId(0)));
    let roles = row.roles.as_ref().unwrap();
    assert_eq!(
        &roles.assigned[..],
        &[0],
        "its row records the role it plays"
    );
}

pub fn role_queue_2v2(extra: &str) -> (mmsim_core::engine::Config, mmsim_core::engine::Parts) {
    let text = format!(
        r#"
[run]
name = "bf-roles"
duration = "10h"
[population]
size = 100
skill = {{ dist = "normal", mean = 1500, sd = 300 }}
[arrivals]
rate_per_s = 0.001
[match]
teams = 2
team_size = 2
[roles]
names = ["tank", "damage"]
shares = [0.5, 0.5]
composition = {{ tank = 1, damage = 1 }}
[policy]
kind = "fixed-limit"
limit = 1e12
[outcome]
model = "logistic"
duration = "30m"
duration_sd = "1s"
duration_min = "29m"
[backfill]
leave_per_min = 0
window = 100
widen_per_s = 0
max_window = 100
{extra}
"#
    );
    let s = mmsim_scenario::from_text(&text, std::path::Path::new("bf.toml"), &[])
        .unwrap()
        .scenario;
    (
        mmsim_core::engine::Config::from_scenario(&s),
        mmsim_core::engine::Parts::from_scenario(&s),
    )
}

/// Tests' ticket: solo `player` with role mask `mask` (main role its lowest
/// bit), waiting since `at_ms` at `rating`.
pub fn role_ticket(
    sim: &mut Simulation<'_>,
    player: u32,
    mask: u8,
    rating: f64,
    at_ms: u64,
) -> mmsim_core::model::TicketId {
    use mmsim_core::model::{Party, PlayerId, SimTime, TicketId};
    let id = TicketId(sim.next_ticket);
    sim.next_ticket += 1;
    let p = &mut sim.world.players[player as usize];
    p.roles = mask;
    p.main_role = mask.trailing_zeros() as u8;
    sim.world.busy[player as usize] = true;
    sim.world.pool.insert(WaitingTicket {
        id,
        players: Party::from_slice(&[PlayerId(player)]),
        rating,
        enqueued: SimTime::from_ms(at_ms),
        requeue: false,
        roles: smallvec::smallvec![mask],
    });
    id
}

/// Forms a 2v2 of tanks 0 and 1 and damage 2 and 3 at time 0, starts it,
/// and makes tank 0 leave at 60 s; returns the leaver's rating.
pub fn tank_leaves(sim: &mut Simulation<'_>) -> f64 {
    use mmsim_core::model::{PlayerId, SimTime};
    use mmsim_core::policy::Proposal;
    const TANK: u8 = 1;
    const DAMAGE: u8 = 2;
    let ids = vec![
        role_ticket(sim, 0, TANK, 1500.0, 0),
        role_ticket(sim, 1, TANK, 1500.0, 0),
        role_ticket(sim, 2, DAMAGE, 1500.0, 0),
        role_ticket(sim, 3, DAMAGE, 1500.0, 0),
    ];
    sim.form(Proposal::new(ids));
    assert_eq!(sim.world.pool.len(), 0, "the four formed a match");
    sim.on_match_start(mmsim_core::engine::sim::Slot(0));
    sim.world.now = SimTime::from_ms(60_000);
    let i = sim.world.active[0]
        .members
        .iter()
        .position(|p| *p == PlayerId(0))
        .unwrap();
    assert_eq!(sim.world.active[0].roles[i], 0, "player 0 plays tank");
    sim.on_leave(mmsim_core::engine::sim::Slot(0), i as u32);
    let open = &sim.bf.as_ref().unwrap().open;
    assert_eq!(open.len(), 1);
    assert_eq!(open[0].role, 0, "the slot opens in the tank role");
    open[0].rating
}
