//! Moved from mmsim-core's `engine/sim/backfill_ready.rs`: these checks build their world from
//! scenario text, which only this crate reads.

#![allow(unused_imports)]
use crate::engine_backfill_roles::{role_queue_2v2, role_ticket, tank_leaves};
use mmsim_core::engine::sim::backfill_ready::*;
use mmsim_core::engine::Simulation;
use mmsim_core::metrics::KeepRows;
use mmsim_core::metrics::TicketEnd;
use mmsim_core::model::SimDuration;
use mmsim_core::model::{PlayerId, SimTime};
use mmsim_core::policy::Trigger;
use mmsim_scenario::FromScenario;

/// A joiner who declines the ready check goes back to the queue after
/// the penalty, counted from its answer, and the slot stays open: not
/// offered to the next ticket until that answer is in, then filled.
#[test]
fn a_backfill_joiner_who_declines_leaves_the_slot_open_and_queues_again() {
    // Nobody accepts: every check this run asks fails.
    let (config, parts) = role_queue_2v2(
        "[acceptance]\naccept_prob = 1e-12\ntimeout = \"20s\"\ndecline_penalty = \"2m\"",
    );
    let mut rows = KeepRows::default();
    let mut sim = Simulation::new(config, 1, parts, &mut rows);
    // The match itself forms without its check (it would fail too).
    let ready = sim.take_layers();
    let r = tank_leaves(&mut sim);
    sim.set_layers(ready);
    const TANK: u8 = 1;
    let first = role_ticket(&mut sim, 10, TANK, r, 5_000);
    let now = SimTime::from_ms(80_000);
    sim.world.now = now;
    sim.run_policy(Trigger::Tick);
    assert!(
        !sim.world.pool.contains(first),
        "the decliner left the queue"
    );
    let open = &sim.bf.as_ref().unwrap().open;
    assert_eq!(open.len(), 1, "the slot stays open");
    let answer = open[0].retry_at;
    assert!(answer >= now && answer <= now + SimDuration::from_secs_f64(20.0));
    // The decliner's party is set to queue again after the penalty,
    // counted from its answer.
    assert!(sim.world.busy[10], "thinking before its requeue, not free");
    assert!(sim
        .world
        .returning
        .iter()
        .any(|p| p.contains(&PlayerId(10))));
    // Before the answer is in, the slot is not offered again.
    let second = role_ticket(&mut sim, 11, TANK, r, 6_000);
    if answer > now {
        sim.run_policy(Trigger::Tick);
        assert!(sim.world.pool.contains(second));
    }
    // Once it is in, the next tank-capable ticket is asked (and, with
    // the ready check gone, joins).
    sim.take_layers();
    sim.world.now = answer;
    sim.run_policy(Trigger::Tick);
    assert!(!sim.world.pool.contains(second));
    assert!(sim.bf.as_ref().unwrap().open.is_empty());
    assert_eq!(sim.world.active[0].members.last(), Some(&PlayerId(11)));
    drop(sim);
    let row = rows.0.tickets.iter().find(|t| t.ticket == first).unwrap();
    assert_eq!(row.end, TicketEnd::Declined);
    assert_eq!(row.left, now);
}
