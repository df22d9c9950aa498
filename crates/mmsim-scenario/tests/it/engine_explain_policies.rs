//! The seven policies that report a pair rule of their own, each on a
//! hand-built pool: the look names the policy's rule with its figures, and
//! for the rules that loosen with waiting, the second at which the rule
//! first allowed the match is found (and agrees with the policy's own
//! `propose` where the harness can show it).
//!
//! Moved from mmsim-core's `engine/sim/explain/policy_tests.rs`: these checks build their world from
//! scenario text, which only this crate reads.

#![allow(unused_imports)]
use mmsim_scenario::FromScenario;

use mmsim_core::engine::sim::explain::{look, rule_allowed_at, window_allowed_at, Says};
use mmsim_core::metrics::explain::{BlockRule, Candidate};
use mmsim_core::model::{SimDuration, SimTime, TicketId};
use mmsim_core::policy::testkit::Harness;
use mmsim_core::policy::{Policy, PolicyConfig};
use mmsim_core::pool::WaitingTicket;

fn policy(toml_text: &str) -> Box<dyn Policy> {
    let cfg: PolicyConfig = toml::from_str(toml_text).expect("a policy");
    cfg.validate().expect("valid parameters");
    cfg.build()
}

fn at(s: f64) -> SimTime {
    SimTime::from_secs_f64(s)
}

/// The look at ticket `id` at `now_s`: its blocker and its nearest candidates.
fn look_at(h: &Harness, id: u32, now_s: f64) -> (BlockRule, Vec<Candidate>) {
    let t = h.pool.get(TicketId(id)).expect("waiting");
    let mut cands = Vec::new();
    let rule = look(
        &h.pool,
        h.format,
        Says::of(h.policy.as_ref()),
        None,
        t,
        at(now_s),
        None,
        &mut cands,
    );
    (rule, cands)
}

/// The policy's rule for ticket `id` matched with `others` after `waited_s`.
fn allowed(
    h: &Harness,
    id: u32,
    others: &[u32],
    waited_s: u64,
) -> (Option<BlockRule>, Option<f64>) {
    let t = h.pool.get(TicketId(id)).expect("waiting");
    let others: Vec<&WaitingTicket> = others
        .iter()
        .map(|o| h.pool.get(TicketId(*o)).expect("waiting"))
        .collect();
    let (rule, at) = rule_allowed_at(
        Says::of(h.policy.as_ref()),
        t,
        &others,
        SimDuration::from_secs(waited_s),
    );
    (rule, at.map(|d| d.as_secs_f64()))
}

#[test]
fn percentile_window_names_the_percentile_gap_and_the_second_the_half_width_reaches_it() {
    // 100 players rated 0, 10, ..., 990: rating 10k sits at percentile k + 0.5.
    // A at 500 and B at 600 are 10 percentiles apart; half-widths start at
    // 5 and grow 0.5 a second, so they reach 10 at exactly 10 s.
    let mut h = Harness::new(policy(
        "kind = \"percentile-window\"\nhalf_width_pct = 5.0\nwiden_pct_per_s = 0.5\nrecheck = \"1s\"",
    ));
    h.population(&(0..100).map(|i| i as f64 * 10.0).collect::<Vec<_>>());
    assert!(h.join(1, 500.0, 0.0).is_empty());
    assert!(h.join(2, 600.0, 0.0).is_empty());
    let (rule, cands) = look_at(&h, 1, 4.0);
    assert_eq!(rule, BlockRule::PercentileWindow);
    let c = &cands[0];
    assert_eq!(c.blocked_by, Some(BlockRule::PercentileWindow));
    assert!((c.rule_value.unwrap() - 10.0).abs() < 1e-9, "{c:?}");
    assert_eq!(c.rule_limit, Some(7.0));
    // Half-width 7 percentiles of this table, in points: 430 to 570 around 500.
    assert_eq!(c.window, Some(70.0));
    assert_eq!(
        allowed(&h, 1, &[2], 15),
        (Some(BlockRule::PercentileWindow), Some(10.0))
    );
    // The policy itself agrees: nothing at 9.9 s, the pair at 10 s.
    assert!(h.tick(9.9).is_empty());
    assert_eq!(h.tick(10.0), vec![vec![1, 2]]);
}

#[test]
fn adaptive_brackets_name_the_boundary_or_the_width_and_give_no_second() {
    // Starting brackets 0-500, 500-1000, 1000-1500, ... each 500 wide.
    let mut h = Harness::new(policy("kind = \"adaptive-brackets\""));
    assert!(h.join(1, 400.0, 0.0).is_empty());
    assert!(h.join(2, 1600.0, 0.0).is_empty());
    let (rule, cands) = look_at(&h, 1, 30.0);
    assert_eq!(rule, BlockRule::Bracket);
    assert_eq!(
        (cands[0].rule_value, cands[0].rule_limit),
        (Some(3.0), Some(1.0))
    );
    // Adjacent brackets, 550 apart: more than a bracket's 500 width.
    assert!(h.join(3, 950.0, 0.0).is_empty());
    let (rule, cands) = look_at(&h, 1, 30.0);
    assert_eq!(rule, BlockRule::BracketWidth);
    assert_eq!(cands[0].ticket_id, 3);
    assert_eq!(
        (cands[0].rule_value, cands[0].rule_limit),
        (Some(550.0), Some(500.0))
    );
    assert_eq!(cands[1].blocked_by, Some(BlockRule::Bracket));
    // Brackets move on the controller's timer, not with the wait: the rule
    // is named but no second is given.
    assert_eq!(
        allowed(&h, 1, &[3], 90),
        (Some(BlockRule::BracketWidth), None)
    );
}

#[test]
fn batch_weighted_names_the_batch_not_yet_due_and_the_first_batch_after_both_joined() {
    // Batches every 120 s from the start of the run; limit 500.
    let mut h = Harness::new(policy("kind = \"batch-weighted\""));
    assert!(h.join(1, 1500.0, 10.0).is_empty());
    assert!(h.join(2, 1600.0, 50.0).is_empty());
    assert!(h.join(3, 2200.0, 60.0).is_empty());
    let (rule, cands) = look_at(&h, 1, 100.0);
    assert_eq!(rule, BlockRule::BatchDue);
    assert_eq!(cands[0].ticket_id, 2);
    assert_eq!(cands[0].window, Some(500.0));
    // 3 is 700 from 1: outside the limit, named as the rating window.
    let far = cands
        .iter()
        .find(|c| c.ticket_id == 3)
        .expect("a candidate");
    assert_eq!(far.blocked_by, Some(BlockRule::RatingWindow));
    // The first batch after 2 joined (at 50 s) runs at 120 s: 110 s into
    // 1's wait, 70 s into 2's.
    assert_eq!(
        allowed(&h, 1, &[2], 110),
        (Some(BlockRule::BatchDue), Some(110.0))
    );
    assert_eq!(
        allowed(&h, 2, &[1], 70),
        (Some(BlockRule::BatchDue), Some(70.0))
    );
    assert_eq!(allowed(&h, 1, &[2], 109), (Some(BlockRule::BatchDue), None));
    // The limit allowed the 100-point gap at once.
    let t = h.pool.get(TicketId(1)).expect("waiting");
    let first = window_allowed_at(
        Says::of(h.policy.as_ref()),
        t,
        100.0,
        SimDuration::from_secs(110),
    );
    assert_eq!(first, Some(SimDuration::ZERO));
    // And the batch at 120 s pairs 1 with 2 (3 is too far from either).
    assert!(h.tick(120.0).contains(&vec![1, 2]));
}

#[test]
fn weighted_score_names_the_cost_above_its_threshold_and_the_second_it_falls_to_it() {
    // Cost = gap - 1.5 * (wait_a + wait_b); threshold 150. 300 apart, both
    // joined at 0: 300 - 3 s <= 150 from 50 s.
    let mut h = Harness::new(policy("kind = \"weighted-score\"\nrecheck = \"1s\""));
    assert!(h.join(1, 1000.0, 0.0).is_empty());
    assert!(h.join(2, 1300.0, 0.0).is_empty());
    let (rule, cands) = look_at(&h, 1, 10.0);
    assert_eq!(rule, BlockRule::WeightedScore);
    assert_eq!(
        (cands[0].rule_value, cands[0].rule_limit),
        (Some(270.0), Some(150.0))
    );
    assert_eq!(
        allowed(&h, 1, &[2], 60),
        (Some(BlockRule::WeightedScore), Some(50.0))
    );
    assert!(h.tick(49.0).is_empty());
    assert_eq!(h.tick(50.0), vec![vec![1, 2]]);
    // Players 1 and 2 queue again at once: the last opponent is refused
    // (avoid_last = 1), whatever the wait.
    assert!(h.join_player(3, 1, 1000.0, 60.0).is_empty());
    assert!(h.join_player(4, 2, 1005.0, 60.0).is_empty());
    let (rule, cands) = look_at(&h, 3, 70.0);
    assert_eq!(rule, BlockRule::Rematch);
    assert_eq!(cands[0].ticket_id, 4);
    assert_eq!(allowed(&h, 3, &[4], 100), (Some(BlockRule::Rematch), None));
}

#[test]
fn sweep_prune_names_intervals_that_do_not_overlap_and_the_second_they_touch() {
    // Half-widths 75 + 1.5/s each: A (0 s) and B (20 s) 300 apart overlap
    // when 75 + 1.5 s + 75 + 1.5 (s - 20) >= 300, at A's 60 s.
    let mut h = Harness::new(policy("kind = \"sweep-prune\""));
    assert!(h.join(1, 1000.0, 0.0).is_empty());
    assert!(h.join(2, 1300.0, 20.0).is_empty());
    let (rule, cands) = look_at(&h, 1, 30.0);
    assert_eq!(rule, BlockRule::SweepInterval);
    let c = &cands[0];
    assert_eq!((c.window, c.their_window), (Some(120.0), Some(90.0)));
    assert_eq!((c.rule_value, c.rule_limit), (Some(300.0), Some(210.0)));
    assert_eq!(
        allowed(&h, 1, &[2], 75),
        (Some(BlockRule::SweepInterval), Some(60.0))
    );
    assert_eq!(
        allowed(&h, 2, &[1], 55),
        (Some(BlockRule::SweepInterval), Some(40.0))
    );
    assert!(h.tick(59.0).is_empty());
    assert_eq!(h.tick(60.0).len(), 1);
}

#[test]
fn virtual_decay_names_the_decayed_rating_and_the_second_the_higher_one_reaches_down() {
    // limit 150, decay 3/s: the higher ticket (1300, joined at 0) reaches
    // 1000 when 150 + 3 s >= 300, at 50 s; the lower one joined at 30 s, so
    // for it the rule allowed the match at 20 s of its own wait.
    let mut h = Harness::new(policy("kind = \"virtual-decay\"\nrecheck = \"1s\""));
    assert!(h.join(1, 1300.0, 0.0).is_empty());
    assert!(h.join(2, 1000.0, 30.0).is_empty());
    let (rule, cands) = look_at(&h, 2, 40.0);
    assert_eq!(rule, BlockRule::VirtualRating);
    let c = &cands[0];
    assert_eq!((c.rule_value, c.rule_limit), (Some(300.0), Some(270.0)));
    assert_eq!((c.window, c.their_window), (Some(180.0), Some(270.0)));
    assert_eq!(
        allowed(&h, 2, &[1], 30),
        (Some(BlockRule::VirtualRating), Some(20.0))
    );
    assert_eq!(
        allowed(&h, 1, &[2], 60),
        (Some(BlockRule::VirtualRating), Some(50.0))
    );
    assert!(h.tick(49.0).is_empty());
    assert_eq!(h.tick(50.0).len(), 1);
}

#[test]
fn eomm_names_max_gap_as_its_window_and_predicted_churn_without_a_second() {
    let mut h = Harness::new(policy("kind = \"eomm\""));
    assert!(h.join(1, 1000.0, 0.0).is_empty());
    assert!(h.join(2, 1500.0, 0.0).is_empty());
    // 500 apart, beyond max_gap 400: no edge links them.
    let (rule, cands) = look_at(&h, 1, 10.0);
    assert_eq!(rule, BlockRule::RatingWindow);
    assert_eq!(cands[0].window, Some(400.0));
    // Within max_gap, a pair a tick left waiting is one it did not take.
    assert!(h.join(3, 1300.0, 0.0).is_empty());
    let (rule, cands) = look_at(&h, 1, 10.0);
    assert_eq!(rule, BlockRule::PredictedChurn);
    assert_eq!(cands[0].ticket_id, 3);
    assert_eq!(cands[0].rule_value, None);
    // Which pairs are lightest moves with every wait in the pool: no second.
    assert_eq!(
        allowed(&h, 1, &[3], 10),
        (Some(BlockRule::PredictedChurn), None)
    );
}
