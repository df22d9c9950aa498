//! Issue 14: backfill in a role queue. A short run of the shipped
//! `regions-roles-5v5` (roles, regions, a ready check and backfill
//! together): every match's own tickets fill each team's composition,
//! every backfill joiner plays a role they accept, and the joiners' roles
//! are the roles of the slots the summary counts as filled, role by role,
//! never more than left in that role. (Debug builds also check, at every
//! join, that each team's players still playing plus its open slots hold
//! the composition exactly.)

use crate::common::scenario;
use mmsim::metrics::TicketEnd;
use std::collections::BTreeMap;
use std::path::Path;

#[test]
fn backfilled_matches_keep_their_composition() {
    let sets: Vec<String> = ["run.duration=\"3h\"", "run.warmup=\"1h\""]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let loaded =
        mmsim::scenario::load(Path::new(&scenario("regions-roles-5v5.toml")), &sets).unwrap();
    let kept = mmsim::run::run_keeping(&loaded.scenario, 1);
    // tank, healer, damage per team, two teams.
    let per_match = [2usize, 2, 6];
    let formed: BTreeMap<u32, (u64, bool)> = kept
        .records
        .matches
        .iter()
        .map(|m| (m.id.0, (m.formed.as_ms(), m.in_warmup)))
        .collect();
    let mut own: BTreeMap<u32, [usize; 3]> = BTreeMap::new();
    let mut joined = [0u64; 3];
    let mut joiners = 0;
    for t in &kept.records.tickets {
        let TicketEnd::Matched(id) = t.end else {
            continue;
        };
        let roles = t.roles.as_ref().expect("a role queue's tickets have roles");
        assert_eq!(roles.assigned.len(), t.party_size as usize, "{t:?}");
        for (i, &r) in roles.assigned.iter().enumerate() {
            assert!(
                roles.accepted[i] & (1 << r) != 0,
                "ticket {:?} plays a role it does not accept",
                t.ticket
            );
        }
        let (at_ms, in_warmup) = formed[&id.0];
        if t.left.as_ms() == at_ms {
            let c = own.entry(id.0).or_default();
            for &r in &roles.assigned {
                c[r as usize] += 1;
            }
        } else {
            assert!(
                t.left.as_ms() > at_ms,
                "a ticket left before its match formed"
            );
            joiners += 1;
            if !in_warmup {
                for &r in &roles.assigned {
                    joined[r as usize] += 1;
                }
            }
        }
    }
    assert!(joiners > 20, "too few backfills to check: {joiners}");
    for (id, c) in &own {
        assert_eq!(c, &per_match, "match {id}: its own tickets' roles");
    }
    let by_role = kept.summary["backfill"]["by_role"]
        .as_array()
        .expect("backfill by role with a role queue");
    for (r, role) in by_role.iter().enumerate() {
        let filled = role["backfills"].as_u64().unwrap();
        let leaves = role["leaves"].as_u64().unwrap();
        assert_eq!(filled, joined[r], "{role}");
        assert!(filled <= leaves, "{role}");
    }
    // Joiners count in the role figures now: every matched player after
    // warm-up has a role.
    let roles = &kept.summary["roles"];
    let played: u64 = roles["by_main_role"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["played"].as_u64().unwrap())
        .sum();
    assert_eq!(played, roles["matched_players"].as_u64().unwrap());
    // The ready check asks backfill joiners too.
    let checks = kept.summary["backfill"]["joiner_ready_checks"]
        .as_u64()
        .unwrap();
    assert!(checks > 0 && checks >= joined.iter().sum::<u64>() / 5);
}
