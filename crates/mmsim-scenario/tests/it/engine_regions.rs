//! Moved from mmsim-core's `engine/regions.rs`: these checks build their world from
//! scenario text, which only this crate reads.

#![allow(unused_imports)]
use mmsim_core::engine::regions::*;
use mmsim_core::engine::streams::{stream, Stream};
use mmsim_core::model::Party;
use mmsim_core::model::{PlayerId, SimDuration, SimTime, TicketId};
use mmsim_core::policy::Policy;
use mmsim_core::pool::{Pool, WaitingTicket};
use mmsim_scenario::FromScenario;

fn config(spread: f64) -> RegionsConfig {
    RegionsConfig {
        data_centres: vec!["eu".into(), "na".into()],
        homes: vec![
            Home {
                name: "europe".into(),
                share: 3.0,
                ping_ms: vec![30.0, 120.0],
            },
            Home {
                name: "america".into(),
                share: 1.0,
                ping_ms: vec![120.0, 40.0],
            },
        ],
        ping_spread: spread,
        min_ping_ms: 5,
        steps: vec![
            LatencyStep {
                after: SimDuration::ZERO,
                max_ping_ms: 100,
            },
            LatencyStep {
                after: SimDuration::from_secs(20),
                max_ping_ms: 150,
            },
        ],
    }
}

#[test]
fn the_limit_in_force_is_the_last_step_reached() {
    let c = config(0.0);
    assert_eq!(c.limit_at(SimDuration::ZERO), 100);
    assert_eq!(c.limit_at(SimDuration::from_ms(19_999)), 100);
    assert_eq!(c.limit_at(SimDuration::from_secs(20)), 150);
    assert_eq!(c.limit_at(SimDuration::from_secs(3600)), 150);
}

#[test]
fn homes_follow_their_shares_and_pings_their_medians() {
    let c = config(0.3);
    let geo = Geography::draw(&c, 40_000, &mut stream(3, Stream::Regions));
    let europe = geo.home.iter().filter(|&&h| h == 0).count() as f64 / 40_000.0;
    // 3:1 shares; the standard error of the share is 0.002.
    assert!((europe - 0.75).abs() < 0.01, "{europe}");
    // The median of a log-normal factor is 1: half the Europeans are
    // under 30 ms to eu.
    let mut eu: Vec<u16> = (0..40_000)
        .filter(|&i| geo.home[i] == 0)
        .map(|i| geo.ping(PlayerId(i as u32), 0))
        .collect();
    eu.sort_unstable();
    let median = eu[eu.len() / 2];
    assert!((29..=31).contains(&median), "{median}");
    assert!(eu[0] >= 5);
}

#[test]
fn a_party_pings_as_its_worst_member_and_enters_where_allowed() {
    let c = config(0.0);
    let geo = Geography::draw(&c, 200, &mut stream(1, Stream::Regions));
    let eu_player = (0..200).find(|&i| geo.home[i] == 0).unwrap() as u32;
    let na_player = (0..200).find(|&i| geo.home[i] == 1).unwrap() as u32;
    let party: Party = [PlayerId(eu_player), PlayerId(na_player)]
        .into_iter()
        .collect();
    assert_eq!(geo.ticket_ping(&party, 0), 120);
    assert_eq!(geo.ticket_ping(&party, 1), 120);
    let policies: Vec<Box<dyn Policy>> = (0..2)
        .map(|_| mmsim_core::policy::PolicyConfig::FixedLimit(Default::default()).build())
        .collect();
    let mut r = Regions::new(c, geo, policies);
    let t = WaitingTicket {
        id: TicketId(7),
        players: party,
        rating: 1500.0,
        enqueued: SimTime::ZERO + SimDuration::from_secs(5),
        requeue: false,
        roles: Default::default(),
    };
    // Nowhere at 100 ms; both data centres at the 150 ms step, 20 s in.
    assert_eq!(r.admit(&t, 0), Some(1));
    assert!(r.order.is_empty());
    assert_eq!(
        r.step_time(&t, 1),
        SimTime::ZERO + SimDuration::from_secs(25)
    );
    assert_eq!(r.admit(&t, 1), None);
    assert_eq!(r.order, vec![0, 1]);
    assert!(r.allows(
        0,
        &[TicketId(7)],
        SimTime::ZERO + SimDuration::from_secs(25)
    ));
    assert!(!r.allows(
        0,
        &[TicketId(7)],
        SimTime::ZERO + SimDuration::from_secs(24)
    ));
    r.remove(TicketId(7));
    assert!(r.pools.iter().all(Pool::is_empty));
}

/// Runs of whole scenarios, through the engine as the command line does.
mod runs {
    use mmsim_core::metrics::TicketEnd;
    use mmsim_scenario::from_text;
    use mmsim_scenario::run::run_keeping;
    use std::path::Path;

    fn scenario(extra: &str, regions: &str) -> mmsim_scenario::Scenario {
        let text = format!(
            r#"
[run]
name = "regions"
seed = 5
duration = "6h"
[population]
size = 5000
skill = {{ dist = "normal", mean = 1500, sd = 300 }}
{extra}
[policy]
kind = "fixed-limit"
limit = 1e12
[outcome]
model = "logistic"
duration = "1m"
{regions}
"#
        );
        from_text(&text, Path::new("test.toml"), &[])
            .expect("test scenario is valid")
            .scenario
    }

    /// The issue's hand-worked case. Everyone lives where the nearest
    /// data centre is 120 ms away (no spread); the rule allows 100 ms,
    /// then 130 ms after 45 s. Nobody can be hosted anywhere until their
    /// own wait reaches 45 s: a pair forms exactly when the younger of
    /// the two reaches it (it enters the pool that the older one entered
    /// already), at 120 ms, in that data centre, never in the 300 ms one.
    #[test]
    fn a_120_ms_ticket_waits_for_the_step_that_allows_it() {
        let s = scenario(
            "[arrivals]\nrate_per_s = 0.01\npatience = { dist = \"never\" }\nrequeue_prob = 0",
            r#"[regions]
data_centres = ["near", "far"]
ping_spread = 0
max_ping_ms = 100
expansions = [{ after = "45s", max_ping_ms = 130 }]
[[regions.homes]]
name = "home"
share = 1
ping_ms = [120, 300]
"#,
        );
        let out = run_keeping(&s, 5);
        let r = &out.records;
        let matched: Vec<_> = r
            .tickets
            .iter()
            .filter(|t| matches!(t.end, TicketEnd::Matched(_)))
            .collect();
        assert!(matched.len() >= 100, "{}", matched.len());
        for m in &r.matches {
            assert_eq!(m.host_dc, Some(0));
            let pair: Vec<_> = matched
                .iter()
                .filter(|t| t.end == TicketEnd::Matched(m.id))
                .collect();
            assert_eq!(pair.len(), 2);
            let younger = pair.iter().map(|t| t.enqueued).max().unwrap();
            assert_eq!(
                m.formed,
                younger + mmsim_core::model::SimDuration::from_secs(45)
            );
        }
        for t in &matched {
            assert!(t.wait_s() >= 45.0, "{}", t.wait_s());
            assert_eq!(t.host_ping_ms, Some(120));
            assert_eq!(t.region, Some(0));
        }
        let regions = &out.summary["regions"];
        assert_eq!(regions["host_ping_ms"]["mean"], 120.0);
        assert_eq!(regions["by_data_centre"][1]["matches"], 0);
    }

    /// Over a busy run of parties in three regions, every matched ticket
    /// was within its own limit at its wait, at the data centre that
    /// hosted its match, and every match was hosted; runs repeat exactly.
    #[test]
    fn no_match_is_hosted_where_a_ticket_is_over_its_limit() {
        let s = scenario(
            "[arrivals]\nrate_per_s = 2\nparty_sizes = [0.6, 0.25, 0.15]\n[match]\nteam_size = 3",
            r#"[regions]
data_centres = ["eu", "na", "asia"]
ping_spread = 0.3
max_ping_ms = 80
expansions = [{ after = "20s", max_ping_ms = 120 }, { after = "1m", max_ping_ms = 200 }]
[[regions.homes]]
name = "europe"
share = 0.5
ping_ms = [30, 100, 190]
[[regions.homes]]
name = "america"
share = 0.3
ping_ms = [100, 35, 170]
[[regions.homes]]
name = "asia"
share = 0.2
ping_ms = [190, 170, 45]
"#,
        );
        let config = s.regions.as_ref().unwrap().to_engine();
        let out = run_keeping(&s, 9);
        let r = &out.records;
        assert!(r.matches.len() > 1000, "{}", r.matches.len());
        let mut hosted = [0u32; 3];
        for m in &r.matches {
            hosted[usize::from(m.host_dc.expect("every match is hosted"))] += 1;
        }
        assert!(hosted.iter().all(|&h| h > 100), "{hosted:?}");
        let mut waited_for_step = 0;
        for t in &r.tickets {
            if let TicketEnd::Matched(_) = t.end {
                let waited = t.left.since(t.enqueued);
                let ping = t.host_ping_ms.expect("matched tickets have a host ping");
                assert!(ping <= config.limit_at(waited), "{t:?}");
                waited_for_step += usize::from(ping > 80);
            } else {
                assert_eq!(t.host_ping_ms, None);
            }
        }
        // The expansions were used, not only the first limit.
        assert!(waited_for_step > 0);
        let again = run_keeping(&s, 9);
        assert_eq!(out.summary, again.summary);
    }
}
