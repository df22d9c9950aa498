//! Moved from mmsim-core's `engine/sim/explain.rs`: these checks build their world from
//! scenario text, which only this crate reads.

#![allow(unused_imports)]
use mmsim_core::engine::sim::explain::*;
use mmsim_core::metrics::explain::BlockRule;
use mmsim_core::model::PlayerId;
use mmsim_core::model::{SimDuration, SimTime, TicketId};
use mmsim_core::policy::PolicyConfig;
use mmsim_core::policy::{MatchFormat, Policy};
use mmsim_core::pool::{Pool, WaitingTicket};
use mmsim_scenario::FromScenario;

fn ticket(id: u32, rating: f64, size: u32, enqueued_s: u64) -> WaitingTicket {
    WaitingTicket {
        id: TicketId(id),
        players: (0..size).map(|k| PlayerId(id * 10 + k)).collect(),
        rating,
        enqueued: SimTime::ZERO + SimDuration::from_secs(enqueued_s),
        requeue: false,
        roles: Default::default(),
    }
}

fn widening() -> Box<dyn Policy> {
    let cfg: PolicyConfig =
        toml::from_str("kind = \"widening\"\nbase = 150.0\nrate_per_s = 5.0\nmax = 500.0")
            .expect("a widening policy");
    cfg.build()
}

const ONE_V_ONE: MatchFormat = MatchFormat {
    teams: 2,
    team_size: 1,
    roles: None,
};

#[test]
fn a_widening_window_is_named_and_the_second_it_would_allow_the_match_is_found() {
    // A at 1000 and B at 1300 both joined at 0: 300 points apart, and
    // the window is 150 + 5/s, so it reaches 300 at exactly 30 s.
    let policy = widening();
    let pool = Pool::from_tickets([ticket(1, 1000.0, 1, 0), ticket(2, 1300.0, 1, 0)]);
    let a = pool.get(TicketId(1)).expect("waiting");
    let at = |s: u64| SimTime::ZERO + SimDuration::from_secs(s);
    let mut cands = Vec::new();
    let rule = look(
        &pool,
        ONE_V_ONE,
        Says::of(policy.as_ref()),
        None,
        a,
        at(10),
        None,
        &mut cands,
    );
    assert_eq!(rule, BlockRule::RatingWindow);
    assert_eq!(cands.len(), 1);
    assert_eq!(cands[0].ticket_id, 2);
    assert_eq!(cands[0].distance, 300.0);
    assert_eq!(cands[0].window, Some(200.0));
    // At 30 s the window allows it: nothing the engine knows blocks it.
    let rule = look(
        &pool,
        ONE_V_ONE,
        Says::of(policy.as_ref()),
        None,
        a,
        at(30),
        None,
        &mut cands,
    );
    assert_eq!(rule, BlockRule::Fill);
    assert_eq!(cands[0].blocked_by, None);
    // Matched at 45 s: the window first reached the 300-point gap at 30 s.
    let first = window_allowed_at(
        Says::of(policy.as_ref()),
        a,
        300.0,
        SimDuration::from_secs(45),
    );
    assert_eq!(first, Some(SimDuration::from_secs(30)));
    // A gap the window had not reached when the match formed: none.
    assert_eq!(
        window_allowed_at(
            Says::of(policy.as_ref()),
            a,
            480.0,
            SimDuration::from_secs(45)
        ),
        None
    );
}

#[test]
fn a_quality_threshold_is_named_and_the_second_it_falls_to_the_score_is_found() {
    // Threshold 0.8 falling 0.002/s to a floor of 0.5: it reaches a
    // score of 0.7 after 50 s, and never reaches 0.4.
    let cfg: PolicyConfig = toml::from_str(
        "kind = \"quality\"\nthreshold = 0.8\nthreshold_fall_per_s = 0.002\nthreshold_floor = 0.5",
    )
    .expect("a quality policy");
    let policy = cfg.build();
    assert_eq!(reports_window(policy.as_ref()), (false, true));
    let waited = SimDuration::from_secs(120);
    assert_eq!(
        threshold_allowed_at(Says::of(policy.as_ref()), 0.7, waited),
        Some(SimDuration::from_secs(50))
    );
    assert_eq!(
        threshold_allowed_at(Says::of(policy.as_ref()), 0.4, waited),
        None
    );
    // Two solos in 1v1 that every pair rule allows: the threshold held them.
    let pool = Pool::from_tickets([ticket(1, 1000.0, 1, 0), ticket(2, 1400.0, 1, 0)]);
    let a = pool.get(TicketId(1)).expect("waiting");
    let mut cands = Vec::new();
    let now = SimTime::ZERO + SimDuration::from_secs(5);
    let rule = look(
        &pool,
        ONE_V_ONE,
        Says::of(policy.as_ref()),
        None,
        a,
        now,
        None,
        &mut cands,
    );
    assert_eq!(rule, BlockRule::QualityThreshold);
    assert_eq!(cands[0].window, None);
    // A 5v5 pool of two players cannot hold a match: that is `fill`.
    let five = MatchFormat {
        teams: 2,
        team_size: 5,
        roles: None,
    };
    let rule = look(
        &pool,
        five,
        Says::of(policy.as_ref()),
        None,
        a,
        now,
        None,
        &mut cands,
    );
    assert_eq!(rule, BlockRule::Fill);
}

#[test]
fn a_mutual_window_blocks_from_the_newcomers_side_too() {
    // A waited 60 s (window 450), B just joined (window 150): B's side blocks.
    let policy = widening();
    let pool = Pool::from_tickets([ticket(1, 1000.0, 1, 0), ticket(2, 1300.0, 1, 60)]);
    let a = pool.get(TicketId(1)).expect("waiting");
    let now = SimTime::ZERO + SimDuration::from_secs(60);
    let mut cands = Vec::new();
    let rule = look(
        &pool,
        ONE_V_ONE,
        Says::of(policy.as_ref()),
        None,
        a,
        now,
        None,
        &mut cands,
    );
    assert_eq!(rule, BlockRule::RatingWindow);
    assert_eq!(cands[0].window, Some(450.0));
    assert_eq!(cands[0].their_window, Some(150.0));
}

#[test]
fn parties_that_cannot_share_a_split_are_named_before_the_window() {
    // Two trios in 3v3... fit as opponents; two trios in a 2x4 format cannot.
    let policy = widening();
    let format = MatchFormat {
        teams: 2,
        team_size: 4,
        roles: None,
    };
    let pool = Pool::from_tickets([ticket(1, 1000.0, 3, 0), ticket(2, 1001.0, 3, 0)]);
    let a = pool.get(TicketId(1)).expect("waiting");
    let mut cands = Vec::new();
    let rule = look(
        &pool,
        format,
        Says::of(policy.as_ref()),
        None,
        a,
        SimTime::ZERO,
        None,
        &mut cands,
    );
    // 3 + 3 players pack as one trio per team: no split problem, and the
    // window allows 1 point, so nothing named blocks it.
    assert_eq!(rule, BlockRule::Fill);
    let pool = Pool::from_tickets([ticket(1, 1000.0, 3, 0), ticket(2, 1001.0, 5, 0)]);
    let a = pool.get(TicketId(1)).expect("waiting");
    let rule = look(
        &pool,
        format,
        Says::of(policy.as_ref()),
        None,
        a,
        SimTime::ZERO,
        None,
        &mut cands,
    );
    assert_eq!(rule, BlockRule::PartySplit);
    // Alone in the pool.
    let pool = Pool::from_tickets([ticket(1, 1000.0, 1, 0)]);
    let a = pool.get(TicketId(1)).expect("waiting");
    let rule = look(
        &pool,
        ONE_V_ONE,
        Says::of(policy.as_ref()),
        None,
        a,
        SimTime::ZERO,
        None,
        &mut cands,
    );
    assert_eq!(rule, BlockRule::Alone);
}
