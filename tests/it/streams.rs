//! Issue 13, part 4: switching an optional feature on must not shift the
//! random streams of anything else. Attributes (tiers, categories,
//! languages, win rates, games) are drawn after the skills from the
//! population's stream and read by neither the widening policy nor the
//! balanced split, so every match must be identical with them on; a lobby
//! delays starts only, so the arrivals (their stream) must be identical.

use crate::common::scenario;
use std::path::Path;

fn kept(sets: &[&str], seed: u64) -> mmsim::run::KeptRun {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let loaded = mmsim::scenario::load(Path::new(&scenario("ci/teams-3v3.toml")), &sets).unwrap();
    mmsim::run::run_keeping(&loaded.scenario, seed)
}

type MatchRow = (
    u64,
    u64,
    Option<u32>,
    Option<f64>,
    Option<f64>,
    Vec<f64>,
    f64,
);

fn matches(run: &mmsim::run::KeptRun) -> Vec<MatchRow> {
    let mut m: Vec<MatchRow> = run
        .records
        .matches
        .iter()
        .map(|m| {
            (
                m.id.0 as u64,
                m.formed.as_ms(),
                m.winner,
                m.duration_s,
                m.p_team0,
                m.team_rating.to_vec(),
                m.spread_skill,
            )
        })
        .collect();
    m.sort_by_key(|r| r.0);
    m
}

#[test]
fn attributes_switched_on_leave_every_match_and_winner_alone() {
    let attributes = [
        "population.tiers=[{ tier = 5, weight = 1 }, { tier = 6, weight = 2 }]",
        "population.languages=[{ name = \"en\", weight = 3 }, { name = \"ru\", weight = 1 }]",
        "population.extra_language_prob=0.2",
        "population.win_rate={ mean = 0.5, sd = 0.05 }",
        "population.games={ dist = \"uniform\", min = 0, max = 500 }",
        "population.categories={ main-battle-tank = 1, artillery = 1 }",
    ];
    for seed in [23, 24] {
        let short = ["run.duration=\"40m\""];
        let plain = kept(&short, seed);
        let mut sets = short.to_vec();
        sets.extend(attributes);
        let with = kept(&sets, seed);
        // The attributes were drawn: win rates moved off the default 50%.
        assert!(
            with.records
                .matches
                .iter()
                .any(|m| m.team_win_rate_pct.iter().any(|w| (w - 50.0).abs() > 0.01)),
            "attributes not switched on"
        );
        let (a, b) = (matches(&plain), matches(&with));
        assert!(a.len() > 50, "{} matches", a.len());
        assert_eq!(a.len(), b.len(), "seed {seed}");
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x, y, "seed {seed}: match {} differs", x.0);
        }
    }
}

#[test]
fn a_lobby_leaves_the_arrivals_stream_alone() {
    // Nobody requeues and the population is large, so no arrival meets a
    // busy player: the fresh tickets must be the same ones at the same times.
    let base = [
        "run.duration=\"40m\"",
        "arrivals.requeue_prob=0",
        "population.size=100000",
    ];
    let fresh = |run: &mmsim::run::KeptRun| -> Vec<(u64, u32, u32, u64)> {
        let mut t: Vec<_> = run
            .records
            .tickets
            .iter()
            .filter(|t| !t.requeue)
            .map(|t| {
                (
                    t.enqueued.as_ms(),
                    t.lead.0,
                    t.party_size,
                    t.rating.to_bits(),
                )
            })
            .collect();
        t.sort();
        t
    };
    let plain = kept(&base, 23);
    let mut sets = base.to_vec();
    sets.push("match.lobby=\"45s\"");
    let lobby = kept(&sets, 23);
    let (a, b) = (fresh(&plain), fresh(&lobby));
    assert!(a.len() > 1000, "{} tickets", a.len());
    assert_eq!(a, b);
    // The first match forms before any rating moved: the same teams meet,
    // and the winners' stream gives it the same winner, only later.
    let first = |r: &mmsim::run::KeptRun| {
        let m = r.records.matches.iter().min_by_key(|m| m.id).unwrap();
        (m.formed, m.winner, m.p_team0, m.team_rating.to_vec())
    };
    assert_eq!(first(&plain), first(&lobby));
}
