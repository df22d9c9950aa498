//! Moved from mmsim-core's `engine/sim/acceptance.rs`: these checks build their world from
//! scenario text, which only this crate reads.

#![allow(unused_imports)]
use mmsim_core::metrics::TicketEnd;
use mmsim_scenario::from_text;
use mmsim_scenario::run::run_keeping;
use mmsim_scenario::FromScenario;
use std::path::Path;

/// A 5v5 queue of solos that accepts anyone, so every ready check has
/// ten players answering independently.
fn five_v_five(accept_prob: f64, keep_wait: bool) -> mmsim_scenario::Scenario {
    let text = format!(
        r#"
[run]
name = "ready"
seed = 5
duration = "3h"
[population]
size = 20000
skill = {{ dist = "normal", mean = 1500, sd = 300 }}
[arrivals]
rate_per_s = 1.0
patience = {{ dist = "never" }}
requeue_prob = 0.0
[match]
teams = 2
team_size = 5
[policy]
kind = "fixed-limit"
limit = 1e12
[outcome]
model = "logistic"
duration = "5m"
[acceptance]
accept_prob = {accept_prob}
timeout = "20s"
keep_wait = {keep_wait}
decline_penalty = "1m"
"#
    );
    from_text(&text, Path::new("ready.toml"), &[])
        .expect("valid")
        .scenario
}

/// With ten players accepting each with probability p, a check passes
/// with probability p^10; a failed one lasts until the last of ten
/// uniform answers on [0, T], T·10/11 on average, for ten tickets.
#[test]
fn pass_rate_and_time_lost_match_theory() {
    let p: f64 = 0.9;
    let out = run_keeping(&five_v_five(p, true), 5);
    let a = &out.summary["acceptance"];
    let checks = a["ready_checks"].as_u64().unwrap() as f64;
    assert!(checks > 1000.0, "{checks}");
    let pass = a["accept_rate_match"].as_f64().unwrap();
    let want = p.powi(10);
    let se = (want * (1.0 - want) / checks).sqrt();
    assert!(
        (pass - want).abs() < 4.0 * se,
        "pass {pass} vs {want} (se {se})"
    );
    let per_player = a["accept_rate_player"].as_f64().unwrap();
    assert!((per_player - p).abs() < 0.01, "{per_player}");
    let lost = a["time_lost_per_cancel_ticket_s"].as_f64().unwrap();
    let want_lost = 10.0 * 20.0 * 10.0 / 11.0;
    // The max of ten uniforms has sd about T/12; over hundreds of
    // cancels the mean is within a few percent.
    assert!(
        (lost / want_lost - 1.0).abs() < 0.03,
        "{lost} vs {want_lost}"
    );
    let cancelled = a["matches_cancelled"].as_u64().unwrap() as f64;
    let total = a["time_lost_ticket_s"].as_f64().unwrap();
    assert!((total - lost * cancelled).abs() < 1e-6 * total);
    // A cancelled match leaves no row: match ids are consecutive, and
    // every declined ticket has its row.
    let ids: Vec<u32> = out.records.matches.iter().map(|m| m.id.0).collect();
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    assert!(sorted.iter().enumerate().all(|(i, &id)| i as u32 == id));
    // The summary counts declines by when the match formed (after
    // warm-up), the rows by when the ticket joined; with no warm-up
    // they differ only by checks still open at the run's end.
    let declined = out
        .records
        .tickets
        .iter()
        .filter(|t| t.end == TicketEnd::Declined)
        .count() as u64;
    let counted = a["tickets_declined"].as_u64().unwrap();
    assert!(declined > 100 && declined <= counted && counted - declined <= 10);
}

/// Each ticket has exactly one row whatever happened to it, and a
/// ticket that kept its wait through a failed check waited longer than
/// the check took.
#[test]
fn returned_tickets_keep_their_id_and_wait() {
    for keep in [true, false] {
        let out = run_keeping(&five_v_five(0.95, keep), 6);
        let mut ids: Vec<u32> = out.records.tickets.iter().map(|t| t.ticket.0).collect();
        let n = ids.len();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), n, "a ticket has two rows (keep_wait = {keep})");
        assert!(
            out.summary["acceptance"]["matches_cancelled"]
                .as_u64()
                .unwrap()
                > 0
        );
    }
    let kept = run_keeping(&five_v_five(0.95, true), 6);
    let reset = run_keeping(&five_v_five(0.95, false), 6);
    let mean = |k: &mmsim_scenario::run::KeptRun| k.summary["wait_s"]["mean"].as_f64().unwrap();
    assert!(
        mean(&kept) > mean(&reset),
        "{} vs {}",
        mean(&kept),
        mean(&reset)
    );
}

/// Two data centres, each 30 ms from its own region and 200 ms from the
/// other, with the latency limit widened from 50 ms to 250 ms after 30 s;
/// ready checks that fail often.
fn regional(keep_wait: bool) -> String {
    format!(
        r#"
[run]
name = "ready-regions"
seed = 3
duration = "2h"
[population]
size = 20000
skill = {{ dist = "normal", mean = 1500, sd = 300 }}
[arrivals]
rate_per_s = 0.3
patience = {{ dist = "never" }}
requeue_prob = 0.0
[match]
teams = 2
team_size = 2
[policy]
kind = "fixed-limit"
limit = 1e12
[outcome]
model = "logistic"
duration = "5m"
[acceptance]
accept_prob = 0.8
timeout = "20s"
keep_wait = {keep_wait}
decline_penalty = "1m"
[regions]
data_centres = ["eu", "na"]
max_ping_ms = 50
expansions = [{{ after = "30s", max_ping_ms = 250 }}]
[[regions.homes]]
name = "europe"
share = 0.5
ping_ms = [30, 200]
[[regions.homes]]
name = "america"
share = 0.5
ping_ms = [200, 30]
"#
    )
}

/// A ticket whose players are answering a ready check is out of every data
/// centre's pool, so no data centre's policy proposes it meanwhile (a
/// proposal of it would be refused as stale, and would have kept the
/// policy from proposing a match it could form). Back from a failed check,
/// a ticket is in the data centres its wait allows: with its wait restarted
/// it waits out the 30 s at 50 ms again before it may play 200 ms away,
/// and with its wait kept it may play there at once if it waited 30 s.
#[test]
fn a_ticket_in_a_ready_check_is_out_of_the_data_centres_until_it_returns() {
    for keep in [true, false] {
        let text = regional(keep);
        let s = from_text(&text, Path::new("ready-regions.toml"), &[])
            .expect("valid")
            .scenario;
        let mut rows = mmsim_core::metrics::KeepRows::default();
        let sim = mmsim_core::engine::Simulation::new(
            mmsim_core::engine::Config::from_scenario(&s),
            3,
            mmsim_core::engine::Parts::from_scenario(&s),
            &mut rows,
        );
        let out = sim.run(&mut |_, _| {});
        assert_eq!(
            out.stats.proposals_rejected, 0,
            "proposals naming a ticket out in a ready check (keep_wait = {keep})"
        );
        drop(out);
        let records = rows.0;
        let declined = records
            .tickets
            .iter()
            .filter(|t| t.end == TicketEnd::Declined)
            .count();
        assert!(declined > 100, "{declined} declined (keep_wait = {keep})");
        let far: Vec<_> = records
            .tickets
            .iter()
            .filter(|t| matches!(t.end, TicketEnd::Matched(_)))
            .filter(|t| t.host_ping_ms.expect("a regional run") > 50)
            .collect();
        assert!(
            far.len() > 20,
            "{} played far away (keep_wait = {keep})",
            far.len()
        );
        for t in far {
            assert!(
                t.wait_s() >= 30.0,
                "ticket {} played {} ms away after {} s (keep_wait = {keep})",
                t.ticket.0,
                t.host_ping_ms.unwrap(),
                t.wait_s()
            );
        }
    }
}
