//! Moved from mmsim-core's `engine/sim/backfill.rs`: these checks build their world from
//! scenario text, which only this crate reads.

#![allow(unused_imports)]
use mmsim_core::engine::sim::backfill::*;
use mmsim_core::engine::sim::backfill::{redraw_winner, window};
use mmsim_core::engine::{sim::Slot, Simulation};
use mmsim_core::engine::{Config, Parts};
use mmsim_core::metrics::KeepRows;
use mmsim_core::metrics::TicketEnd;
use mmsim_core::model::{Party, PlayerId};
use mmsim_core::model::{SimTime, TicketId};
use mmsim_core::policy::{Proposal, Trigger};
use mmsim_core::pool::WaitingTicket;
use mmsim_scenario::from_text;
use mmsim_scenario::FromScenario;
use std::path::Path;

/// A 2v2 that accepts anyone (fixed-limit with an endless limit), with
/// backfill whose window starts at 100 points and does not widen.
fn parts_and_config(fill: bool) -> (Config, Parts) {
    let text = format!(
        r#"
[run]
name = "bf"
duration = "10h"
[population]
size = 100
skill = {{ dist = "normal", mean = 1500, sd = 300 }}
[arrivals]
rate_per_s = 0.001
[match]
teams = 2
team_size = 2
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
fill = {fill}
window = 100
widen_per_s = 0
max_window = 100
short_handed_penalty = 150
"#
    );
    let s = from_text(&text, Path::new("bf.toml"), &[])
        .unwrap()
        .scenario;
    (Config::from_scenario(&s), Parts::from_scenario(&s))
}

fn ticket(sim: &mut Simulation<'_>, player: u32, rating: f64, at_ms: u64) -> TicketId {
    let id = TicketId(sim.next_ticket);
    sim.next_ticket += 1;
    sim.world.busy[player as usize] = true;
    sim.world.pool.insert(WaitingTicket {
        id,
        players: Party::from_slice(&[PlayerId(player)]),
        rating,
        enqueued: SimTime::from_ms(at_ms),
        requeue: false,
        roles: Default::default(),
    });
    id
}

/// Forms and starts a 2v2 of players 0-3 at time 0, then player 0 leaves at 60 s.
fn match_with_a_leave(sim: &mut Simulation<'_>) {
    let ids: Vec<TicketId> = (0..4).map(|p| ticket(sim, p, 1500.0, 0)).collect();
    sim.form(Proposal::new(ids));
    assert_eq!(sim.world.pool.len(), 0, "the four formed a match");
    sim.on_match_start(Slot(0));
    sim.world.now = SimTime::from_ms(60_000);
    sim.on_leave(Slot(0), 0);
    assert_eq!(sim.bf.as_ref().unwrap().open.len(), 1);
}

/// The issue's check: the open slot (opened at 60 s) takes its player
/// before the policy pairs two older tickets, so the older normal ticket
/// still waits after the pass.
#[test]
fn a_backfill_ticket_is_filled_before_an_older_normal_ticket() {
    let (config, parts) = parts_and_config(true);
    let mut rows = KeepRows::default();
    let mut sim = Simulation::new(config, 1, parts, &mut rows);
    match_with_a_leave(&mut sim);
    // Two solos who could make a normal match with two more; the
    // nearest to the leaver's rating joins the running match.
    let r = sim.bf.as_ref().unwrap().open[0].rating;
    let old = ticket(&mut sim, 10, r + 200.0, 10_000);
    let near = ticket(&mut sim, 11, r + 10.0, 70_000);
    let far = ticket(&mut sim, 12, r - 300.0, 5_000);
    let older = ticket(&mut sim, 13, r + 150.0, 20_000);
    sim.world.now = SimTime::from_ms(80_000);
    sim.run_policy(Trigger::Tick);
    let members = &sim.world.active[0].members;
    assert_eq!(members.last(), Some(&PlayerId(11)), "{members:?}");
    assert!(!sim.world.pool.contains(near));
    // Without the backfill pass the policy would have taken the four
    // oldest; with it three are left, too few for a 2v2.
    for id in [old, far, older] {
        assert!(sim.world.pool.contains(id));
    }
    assert!(sim.bf.as_ref().unwrap().open.is_empty());
    // Outside the window (100 points each side) nobody is taken.
    sim.world.now = SimTime::from_ms(90_000);
    sim.on_leave(Slot(0), 1);
    sim.run_policy(Trigger::Tick);
    assert_eq!(sim.bf.as_ref().unwrap().open.len(), 1);
    drop(sim);
    let joined = rows.0.tickets.iter().find(|t| t.ticket == near).unwrap();
    assert_eq!(
        joined.end,
        TicketEnd::Matched(mmsim_core::model::MatchId(0))
    );
    assert_eq!(joined.left, SimTime::from_ms(80_000));
}

/// A party fits only where its team has as many open slots, and then
/// takes them all.
#[test]
fn a_party_fills_two_open_slots_of_one_team_but_not_one() {
    let (config, parts) = parts_and_config(true);
    let mut rows = KeepRows::default();
    let mut sim = Simulation::new(config, 1, parts, &mut rows);
    match_with_a_leave(&mut sim);
    let r = sim.bf.as_ref().unwrap().open[0].rating;
    let id = TicketId(sim.next_ticket);
    sim.next_ticket += 1;
    for p in [20, 21] {
        sim.world.busy[p] = true;
    }
    sim.world.pool.insert(WaitingTicket {
        id,
        players: Party::from_slice(&[PlayerId(20), PlayerId(21)]),
        rating: r,
        enqueued: SimTime::from_ms(70_000),
        requeue: false,
        roles: Default::default(),
    });
    sim.world.now = SimTime::from_ms(80_000);
    sim.run_policy(Trigger::Tick);
    assert!(
        sim.world.pool.contains(id),
        "one open slot cannot take a pair"
    );
    // Player 0's teammate leaves too: two slots in one team.
    let team0 = sim.world.active[0].parties[0].1;
    let mate = (1..4)
        .find(|&i| sim.world.active[0].parties[i].1 == team0)
        .unwrap();
    sim.on_leave(Slot(0), mate as u32);
    assert!(!sim.world.pool.contains(id));
    assert!(sim.bf.as_ref().unwrap().open.is_empty());
    let a = &sim.world.active[0];
    assert_eq!(&a.members[4..], &[PlayerId(20), PlayerId(21)]);
    assert_eq!(a.parties.last(), Some(&(6, team0)));
    assert_eq!(sim.world.in_matches, 4);
}

/// A match that ends a player short: P(team 0) is the time average of
/// the even start and the short-handed stretch, which the logistic model
/// plays with the smaller team (four against five, less the penalty).
#[test]
fn a_short_handed_match_is_played_with_the_smaller_team() {
    let (config, parts) = parts_and_config(false);
    let mut rows = KeepRows::default();
    let mut sim = Simulation::new(config, 1, parts, &mut rows);
    let ids: Vec<TicketId> = (0..4).map(|p| ticket(&mut sim, p, 1500.0, 0)).collect();
    sim.form(Proposal::new(ids));
    sim.on_match_start(Slot(0));
    let st = &sim.bf.as_ref().unwrap().slots[0];
    let (p0, end) = (st.p_now, st.end);
    // Player 3 is on some team; find it and make them leave a quarter in.
    let team_of_3 = sim.world.active[0]
        .parties()
        .find(|(_, party)| party.contains(&PlayerId(3)))
        .map(|(t, _)| t)
        .unwrap();
    let i3 = sim.world.active[0]
        .members
        .iter()
        .position(|p| *p == PlayerId(3))
        .unwrap();
    let quarter = SimTime::from_ms(end.as_ms() / 4);
    sim.world.now = quarter;
    sim.on_leave(Slot(0), i3 as u32);
    let p_short = sim.bf.as_ref().unwrap().slots[0].p_now;
    // The short team's strength: its remaining member's skill less 150.
    let skill = |p: u32| sim.world.players[p as usize].true_skill;
    let team: Vec<u32> = sim.world.active[0]
        .parties()
        .filter(|(t, _)| *t == team_of_3)
        .flat_map(|(_, party)| party.iter().map(|p| p.0).collect::<Vec<_>>())
        .collect();
    let other: Vec<u32> = (0..4).filter(|p| !team.contains(p)).collect();
    let stay = *team.iter().find(|&&p| p != 3).unwrap();
    let short = skill(stay) - 150.0;
    let full = (skill(other[0]) + skill(other[1])) / 2.0;
    let p_team_short = mmsim_core::outcome::logistic_win_probability(short, full, 400.0);
    let want = if team_of_3 == 0 {
        p_team_short
    } else {
        1.0 - p_team_short
    };
    assert!((p_short - want).abs() < 1e-12, "{p_short} vs {want}");
    sim.world.now = end;
    sim.on_match_end(Slot(0));
    drop(sim);
    let m = &rows.0.matches[0];
    let p_final = m.p_team0.unwrap();
    let avg = 0.25 * p0 + 0.75 * p_short;
    assert!((p_final - avg).abs() < 1e-6, "{p_final} vs {avg}");
}

#[test]
fn the_redrawn_winner_has_the_new_probability_and_keeps_the_old_when_it_can() {
    // Over a fine grid of u and both first draws weighted by p0, team 0
    // ends up winning with probability p1.
    for (p0, p1) in [(0.5, 0.2), (0.5, 0.8), (0.3, 0.3), (0.9, 0.1), (0.1, 0.95)] {
        let n = 100_000;
        let mut won0 = 0.0;
        let mut kept = 0.0;
        for k in 0..n {
            let u = (k as f64 + 0.5) / n as f64;
            for (w, weight) in [(0usize, p0), (1usize, 1.0 - p0)] {
                let r = redraw_winner(w, p0, p1, u);
                if r == 0 {
                    won0 += weight / n as f64;
                }
                if r == w {
                    kept += weight / n as f64;
                }
            }
        }
        assert!((won0 - p1).abs() < 1e-4, "{p0} -> {p1}: {won0}");
        // The maximal coupling changes the winner with probability |p1 - p0|.
        assert!((1.0 - kept - (p1 - p0).abs()).abs() < 1e-4, "{kept}");
    }
}

#[test]
fn the_window_widens_to_its_cap() {
    let c = Backfill {
        leave_per_min: 0.01,
        fill: true,
        window: 100.0,
        widen_per_s: 5.0,
        max_window: 300.0,
        short_handed_penalty: 150.0,
    };
    let t0 = SimTime::from_ms(1_000);
    assert_eq!(window(&c, t0, t0), 100.0);
    assert_eq!(window(&c, t0, SimTime::from_ms(11_000)), 150.0);
    assert_eq!(window(&c, t0, SimTime::from_ms(1_000_000)), 300.0);
}
