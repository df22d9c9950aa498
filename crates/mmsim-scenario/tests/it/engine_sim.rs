//! Moved from mmsim-core's `engine/sim.rs`: these checks build their world from
//! scenario text, which only this crate reads.

#![allow(unused_imports)]
use mmsim_core::engine::sim::*;
use mmsim_core::engine::{Config, Parts, Simulation, TicketLog};
use mmsim_core::metrics::NoRows;
use mmsim_core::metrics::RowSink;
use mmsim_core::model::{PlayerId, SimDuration, SimTime, TicketId};
use mmsim_core::policy::Proposal;
use mmsim_scenario::from_text;
use mmsim_scenario::FromScenario;
use std::path::Path;

/// A simulation of the scenario file `text`, nothing run yet.
fn simulation<'r>(text: &str, seed: u64, rows: &'r mut dyn RowSink) -> Simulation<'r> {
    let s = from_text(text, Path::new("test.toml"), &[])
        .expect("test scenario is valid")
        .scenario;
    Simulation::new(
        Config::from_scenario(&s),
        seed,
        Parts::from_scenario(&s),
        rows,
    )
}

/// The prefetch's look-ahead repeats `on_arrival`'s draws: the players
/// it names are the players of the next arrival that joins. (Were they
/// out of step, nothing would be wrong but the speed-up would be gone.)
#[test]
fn the_look_ahead_names_the_next_arrival_s_players() {
    // Parties of one to five, so a draw out of step would show.
    struct Joined(Vec<Vec<PlayerId>>);
    impl TicketLog for Joined {
        fn enqueued(
            &mut self,
            _: SimTime,
            _: TicketId,
            members: &[mmsim_core::engine::LoggedMember<'_>],
            _: Option<SimDuration>,
            requeue: bool,
        ) {
            assert!(!requeue);
            self.0.push(members.iter().map(|m| m.player).collect());
        }
    }
    let (mut rows, mut joined) = (NoRows, Joined(Vec::new()));
    let text = include_str!("../../../../scenarios/dota2-5v5.toml");
    let mut sim = simulation(text, 7, &mut rows).with_log(&mut joined);
    let mut predicted = Vec::new();
    for _ in 0..300 {
        let next = sim.next_arrival_players();
        let before = sim.next_ticket;
        sim.on_arrival();
        if sim.next_ticket > before {
            predicted.push(next.to_vec());
        }
    }
    drop(sim);
    assert!(predicted.len() > 100, "{} arrivals joined", predicted.len());
    assert!(predicted.iter().any(|p| p.len() > 1), "no party drawn");
    assert_eq!(predicted, joined.0);
}

/// A proposal naming tickets that are no longer waiting (a sub-pool's
/// view a moment behind, a ready check under way) is refused as stale,
/// however many of them there are: no panic, nothing formed.
#[test]
fn a_proposal_of_tickets_gone_from_the_pool_is_refused() {
    let mut rows = NoRows;
    let mut sim = simulation(
        include_str!("../../../../scenarios/smoke.toml"),
        1,
        &mut rows,
    );
    sim.form(Proposal::new((100..110).map(TicketId).collect()));
    assert_eq!(sim.stats.proposals_rejected, 1);
    assert_eq!(sim.stats.matches, 0);
}
