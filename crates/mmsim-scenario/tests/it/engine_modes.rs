//! Moved from mmsim-core's `engine/sim/modes.rs`: these checks build their world from
//! scenario text, which only this crate reads.

#![allow(unused_imports)]
use mmsim_core::engine::{Config, Parts, Simulation};
use mmsim_core::metrics::{KeepRows, RunRecords, TicketEnd};
use mmsim_core::model::{Party, PlayerId, TicketId};
use mmsim_scenario::from_text;
use mmsim_scenario::FromScenario;
use std::path::Path;

/// Two 1v1 modes, everyone queued for both, matched by any rating.
const TWO_MODES: &str = r#"
[modes]
multi_queue = ["a", "b"]
multi_queue_share = 1.0

[[modes.queues]]
name = "a"
share = 0.5

[[modes.queues]]
name = "b"
share = 0.5

[modes.queues.policy]
kind = "fixed-limit"
limit = 5000
"#;

fn with_sim(check: impl FnOnce(&mut Simulation<'_>)) -> RunRecords {
    let text = format!(
        r#"
[run]
name = "two-modes"
duration = "30m"

[population]
size = 200
skill = {{ dist = "normal", mean = 1500, sd = 350 }}

[arrivals]
rate_per_s = 0.2

[policy]
kind = "fixed-limit"
limit = 5000
{TWO_MODES}"#
    );
    let s = from_text(&text, Path::new("modes.toml"), &[])
        .unwrap()
        .scenario;
    let mut rows = KeepRows(RunRecords::default());
    {
        let mut sim = Simulation::new(
            Config::from_scenario(&s),
            1,
            Parts::from_scenario(&s),
            &mut rows,
        );
        check(&mut sim);
        let out = sim.run(&mut |_, _| {});
        drop(out);
    }
    rows.0
}

fn join(sim: &mut Simulation<'_>, player: u32, mode: u8) -> TicketId {
    let id = TicketId(sim.next_ticket);
    sim.modes.as_mut().unwrap().pending = Some(mode);
    sim.enqueue(Party::from_slice(&[PlayerId(player)]), None, false);
    id
}

#[test]
fn a_multi_queued_ticket_matched_in_one_mode_leaves_the_other_at_once_and_counts_once() {
    let records = with_sim(|sim| {
        // Drawn for b, queued for a too; alone, so it waits in both.
        let first = join(sim, 10, 1);
        let m = sim.modes.as_ref().unwrap();
        assert!(m.pools[0].contains(first) && m.pools[1].contains(first));
        // Drawn for a: offered to a first, where `first` waits: matched
        // there, and both leave b's pool at that instant.
        let second = join(sim, 11, 0);
        assert_eq!(sim.stats.matches, 1);
        let m = sim.modes.as_ref().unwrap();
        assert!(m.pools.iter().all(|p| p.is_empty()));
        assert!(!sim.world.pool.contains(first) && !sim.world.pool.contains(second));
    });
    let mine: Vec<_> = records.tickets.iter().filter(|t| t.ticket.0 < 2).collect();
    // One row each, matched in mode a (index 0), never abandoned in b.
    assert_eq!(mine.len(), 2);
    for t in &mine {
        assert!(matches!(t.end, TicketEnd::Matched(_)), "{t:?}");
        let tm = t.mode.expect("a modes run");
        assert_eq!((tm.mode, tm.multi), (0, true));
    }
    let TicketEnd::Matched(id) = mine[0].end else {
        unreachable!("checked above")
    };
    let m = records
        .matches
        .iter()
        .find(|m| m.id == id)
        .expect("its match");
    assert_eq!(m.mode, Some(0));
    // No ticket of the whole run has two rows.
    let mut ids: Vec<u32> = records.tickets.iter().map(|t| t.ticket.0).collect();
    let n = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), n);
}
