//! Why tickets waited (`--explain`, `[metrics] explain = true`): the rule
//! that held each ticket back, the stories the run writes to
//! `explain.jsonl`, and the summary's `explain` object. The engine decides
//! what blocked whom (`engine/sim/explain.rs`); this module only counts.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub use crate::model::{BlockRule, RULES};

/// One of a ticket's nearest candidates at a look, and what blocked it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// The candidate's `ticket_id`.
    pub ticket_id: u32,
    /// Its rating.
    pub rating: f64,
    /// Rating points between the two tickets.
    pub distance: f64,
    /// `None`: every reported rule allowed this candidate.
    pub blocked_by: Option<BlockRule>,
    /// The seed's rating window at that look, if the policy reports one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<f64>,
    /// The candidate's own window (windows are mutual).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub their_window: Option<f64>,
    /// The policy's own pair rule (`Explain::pair_rule`): the measure it
    /// compares and the bound it must be within (both in the rule's units).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule_value: Option<f64>,
    /// The bound `rule_value` must be within.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule_limit: Option<f64>,
}

/// One ticket's story: a line of `explain.jsonl`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TicketStory {
    /// The `ticket_id` of `tickets.parquet`.
    pub ticket_id: u32,
    /// Players in the party.
    pub party_size: u32,
    /// Its rating when it joined.
    pub rating: f64,
    /// When it joined, in seconds.
    pub enqueued_s: f64,
    /// When it left (or the run ended), in seconds.
    pub left_s: f64,
    /// `matched`, `abandoned`, `declined` or `waiting` (still queued at the
    /// end), as the tickets table's `outcome`.
    pub outcome: String,
    /// Its match, if it matched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub match_id: Option<u32>,
    /// Policy passes that considered it (ticks, and its own join).
    pub looks: u32,
    /// The blocker at its first and at its last look.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_blocker: Option<BlockRule>,
    /// The blocker at its last look.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_blocker: Option<BlockRule>,
    /// The score its match would have needed at the last look (a policy
    /// with a quality threshold).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
    /// Its nearest candidates at the last look.
    pub candidates: Vec<Candidate>,
    /// Seconds of its wait each rule held it back (rules that never did are left out).
    pub blocked_s: BTreeMap<BlockRule, f64>,
    /// Matched: the largest rating gap to the match's other tickets.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub match_gap: Option<f64>,
    /// Matched: the wait at which its rating window first reached `match_gap`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_allowed_at_s: Option<f64>,
    /// Matched under a quality threshold: the match's score by the policy's
    /// criteria, and the wait at which the ticket's falling threshold first
    /// reached it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub match_score: Option<f64>,
    /// The wait at which its falling threshold first reached `match_score`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threshold_allowed_at_s: Option<f64>,
    /// Matched in a regional run: the wait at which its latency limit first
    /// allowed the data centre that hosted it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_allowed_at_s: Option<f64>,
    /// Matched under a policy with a pair rule of its own: that rule, and
    /// the wait at which it first allowed every other ticket of the match
    /// (absent when the rule does not loosen with waiting).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_rule: Option<BlockRule>,
    /// The wait at which `policy_rule` first allowed every other ticket of its match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_rule_allowed_at_s: Option<f64>,
    /// In a role queue, at the last look: for each role, the waiting
    /// players who accept it and one match's slots for it; the ticket's
    /// own role in surplus shows here as many waiting for few slots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roles_waiting: Option<BTreeMap<String, RoleCount>>,
    /// In a role queue, when the waiting players could not staff one
    /// match's roles at the last look: the role they were shortest of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub short_role: Option<String>,
    /// Under a vendor's ruleset: each expansion step of each rule that the
    /// ticket's own wait reached before it left, in order of the wait.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expansions: Vec<crate::model::ExpansionStep>,
    /// With `[backfill]`, a ticket that joined a running match: the slot
    /// it filled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backfill: Option<BackfillJoin>,
    /// With `[backfill]`, at the last look: the open slot that came
    /// nearest to taking the ticket, and what kept it from doing so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_slot: Option<OpenSlotSeen>,
}

/// The slot of a running match a ticket filled by backfill.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BackfillJoin {
    /// The rating of the player whose leave opened the slot.
    pub leaver_rating: f64,
    /// When the slot opened, in seconds of simulated time.
    pub slot_opened_s: f64,
    /// Rating points between the ticket and the leaver.
    pub distance: f64,
    /// The slot's window (each side of the leaver's rating) when the
    /// ticket joined.
    pub window: f64,
    /// When the slot's widening window first reached the ticket's rating,
    /// in seconds of simulated time (the slot took the nearest fitting
    /// ticket from then on, so a later join means nearer ones came first).
    pub window_reached_s: f64,
    /// In a role queue, the leaver's role, which the ticket took.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
}

/// Open slots of running matches at one look, from one waiting ticket's
/// side: the slot that came nearest to taking it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpenSlotSeen {
    /// Slots open at that look.
    pub open_slots: u32,
    /// The slot reported: the nearest (to the leaver's rating) of those
    /// the ticket's party fits, else the nearest of all.
    pub leaver_rating: f64,
    /// Rating points between the leaver and the ticket.
    pub distance: f64,
    /// The slot's window at that look.
    pub window: f64,
    /// Open slots in the leaver's team: a party fits only as many.
    pub team_open: u32,
    /// In a role queue, the leaver's role.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// What kept that slot from taking the ticket.
    pub blocked_by: SlotBlock,
}

/// Why an open backfill slot did not take a waiting ticket.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SlotBlock {
    /// The ticket is further from the leaver's rating than the slot's window.
    Window,
    /// The party has more players than its team has open slots.
    PartySize,
    /// In a role queue: nobody in the party plays the leaver's role, or the
    /// rest do not fit the team's other open roles.
    Roles,
    /// The slot waits for the answer of a joiner who declined its ready check.
    ReadyCheck,
}

/// Waiting players who accept a role, and one match's slots for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoleCount {
    /// Waiting players who accept the role.
    pub waiting: u32,
    /// One match's slots for it.
    pub slots: u32,
}

/// Upper edges of the wait buckets of `by_wait`, in seconds (the last is open).
pub const WAIT_EDGES_S: [f64; 6] = [10.0, 30.0, 60.0, 120.0, 300.0, 600.0];

/// The summary's `explain` object.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExplainSummary {
    /// Whether the policy reports its rating window (otherwise a window
    /// rule's blocks show as `fill`).
    pub policy_reports_window: bool,
    /// Whether it reports a quality threshold (otherwise its refusals show as `fill`).
    pub policy_reports_threshold: bool,
    /// Whether it reports a pair rule of its own (`Explain::pair_rule`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub policy_reports_pair_rule: bool,
    /// Tickets (joined after warm-up) whose stories were counted.
    pub tickets: u64,
    /// Ticket-seconds of waiting each rule held back.
    pub blocked_ticket_s: BTreeMap<BlockRule, f64>,
    /// The same as shares of all waiting ticket-seconds.
    pub blocked_share: BTreeMap<BlockRule, f64>,
    /// Per wait bucket, the share of the ticket-seconds spent at that wait
    /// that each rule held back.
    pub by_wait: Vec<WaitBucket>,
    /// Matched tickets with a window: mean seconds waited after the window
    /// had reached the gap of the match they got.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean_wait_after_window_allowed_s: Option<f64>,
    /// Stories not written because the run had more than `MAX_STORIES`.
    pub stories_dropped: u64,
}

/// One wait bucket of `explain.by_wait`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WaitBucket {
    /// Its lower edge, in seconds of waiting.
    pub from_s: f64,
    /// `None`: open-ended.
    pub to_s: Option<f64>,
    /// Ticket-seconds spent waiting within the bucket.
    pub ticket_s: f64,
    /// The share of them each rule held back.
    pub share: BTreeMap<BlockRule, f64>,
}

/// At most this many stories are kept for `explain.jsonl` (about 45 MB);
/// the summary counts every ticket.
pub const MAX_STORIES: usize = 100_000;

/// The explain accumulators.
#[derive(Clone, Debug, Default)]
pub struct ExplainAcc {
    policy_reports_window: bool,
    policy_reports_threshold: bool,
    policy_reports_pair_rule: bool,
    tickets: u64,
    /// `[bucket][rule]` ticket-seconds, warm-up excluded.
    by_wait: [[f64; RULES.len()]; WAIT_EDGES_S.len() + 1],
    after_window_s: (f64, u64),
    stories: Vec<TicketStory>,
    dropped: u64,
}

impl ExplainAcc {
    /// Accumulators for a policy that reports (or not) a window and a threshold.
    pub fn new(policy_reports_window: bool, policy_reports_threshold: bool) -> Self {
        ExplainAcc {
            policy_reports_window,
            policy_reports_threshold,
            ..Default::default()
        }
    }

    /// Marks the policy as one that reports its own pair rule.
    pub fn with_pair_rule(mut self, reports: bool) -> Self {
        self.policy_reports_pair_rule = reports;
        self
    }

    /// `rule` held a ticket back from wait `from_s` to `to_s`.
    pub fn blocked(&mut self, rule: BlockRule, from_s: f64, to_s: f64) {
        let mut lo = from_s;
        for (b, row) in self.by_wait.iter_mut().enumerate() {
            if lo >= to_s {
                break;
            }
            let hi = WAIT_EDGES_S.get(b).copied().unwrap_or(f64::INFINITY);
            if lo < hi {
                row[rule.index()] += to_s.min(hi) - lo;
                lo = to_s.min(hi);
            }
        }
    }

    /// A finished story; `counted` when its ticket joined after warm-up.
    pub fn story(&mut self, s: TicketStory, counted: bool) {
        if counted {
            self.tickets += 1;
            if let (Some(at), "matched") = (s.window_allowed_at_s, s.outcome.as_str()) {
                self.after_window_s.0 += (s.left_s - s.enqueued_s - at).max(0.0);
                self.after_window_s.1 += 1;
            }
        }
        if self.stories.len() < MAX_STORIES {
            self.stories.push(s);
        } else {
            self.dropped += 1;
        }
    }

    /// The stories, by ticket id, for `explain.jsonl`.
    pub fn take_stories(&mut self) -> Vec<TicketStory> {
        let mut s = std::mem::take(&mut self.stories);
        s.sort_by_key(|s| s.ticket_id);
        s
    }

    /// The `explain` block of `summary.json`.
    pub fn summary(&self) -> ExplainSummary {
        let mut total = [0.0; RULES.len()];
        for row in &self.by_wait {
            for (t, v) in total.iter_mut().zip(row) {
                *t += v;
            }
        }
        let all: f64 = total.iter().sum();
        let nonzero = |vals: &[f64; RULES.len()], scale: f64| -> BTreeMap<BlockRule, f64> {
            RULES
                .iter()
                .zip(vals)
                .filter(|(_, v)| **v > 0.0)
                .map(|(r, v)| (*r, v / scale))
                .collect()
        };
        let by_wait = self
            .by_wait
            .iter()
            .enumerate()
            .map(|(b, row)| {
                let s: f64 = row.iter().sum();
                WaitBucket {
                    from_s: if b == 0 { 0.0 } else { WAIT_EDGES_S[b - 1] },
                    to_s: WAIT_EDGES_S.get(b).copied(),
                    ticket_s: s,
                    share: if s > 0.0 {
                        nonzero(row, s)
                    } else {
                        BTreeMap::new()
                    },
                }
            })
            .collect();
        ExplainSummary {
            policy_reports_window: self.policy_reports_window,
            policy_reports_threshold: self.policy_reports_threshold,
            policy_reports_pair_rule: self.policy_reports_pair_rule,
            tickets: self.tickets,
            blocked_ticket_s: nonzero(&total, 1.0),
            blocked_share: if all > 0.0 {
                nonzero(&total, all)
            } else {
                BTreeMap::new()
            },
            by_wait,
            mean_wait_after_window_allowed_s: (self.after_window_s.1 > 0)
                .then(|| self.after_window_s.0 / self.after_window_s.1 as f64),
            stories_dropped: self.dropped,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocked_time_is_split_across_wait_buckets() {
        let mut acc = ExplainAcc::new(true, false);
        // 5 s to 35 s: 5 s in [0,10), 20 s in [10,30), 5 s in [30,60).
        acc.blocked(BlockRule::RatingWindow, 5.0, 35.0);
        acc.blocked(BlockRule::Latency, 700.0, 800.0);
        let s = acc.summary();
        assert_eq!(s.by_wait[0].ticket_s, 5.0);
        assert_eq!(s.by_wait[1].ticket_s, 20.0);
        assert_eq!(s.by_wait[2].ticket_s, 5.0);
        assert_eq!(s.by_wait[6].ticket_s, 100.0);
        assert_eq!(s.blocked_ticket_s[&BlockRule::RatingWindow], 30.0);
        assert_eq!(s.blocked_share[&BlockRule::Latency], 100.0 / 130.0);
        assert_eq!(s.by_wait[6].to_s, None);
    }
}
