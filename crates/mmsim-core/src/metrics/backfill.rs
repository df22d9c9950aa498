//! The ready check's and the backfill's figures (`[acceptance]`,
//! `[backfill]`): counters the engine feeds as checks pass or fail and as
//! players leave and join running matches, kept apart from the other
//! accumulators so a run without either section carries none of them and
//! its `summary.json` is byte-for-byte what it was.

use super::dist::{Dist, MsHist};
use serde::{Deserialize, Serialize};

/// One ready check, as the engine saw it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReadyCheck {
    /// Players asked, and of them those who accepted.
    pub players: u32,
    /// Players who accepted.
    pub accepted: u32,
    /// Tickets in the match.
    pub tickets: u32,
    /// Tickets that left because one of theirs declined (0 when it passed).
    pub declined_tickets: u32,
    /// From the match forming to the last answer, in milliseconds.
    pub took_ms: u64,
    /// Whether every player accepted.
    pub passed: bool,
    /// Whether the match formed during warm-up; left out of every figure.
    pub in_warmup: bool,
}

/// Accumulators of the ready checks after warm-up.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AcceptanceAcc {
    checks: u64,
    passed: u64,
    players: u64,
    accepted: u64,
    declined_tickets: u64,
    lost_ticket_ms: u128,
    ready_ms: MsHist,
}

impl AcceptanceAcc {
    /// Counts one ready check.
    pub fn add(&mut self, c: ReadyCheck) {
        if c.in_warmup {
            return;
        }
        self.checks += 1;
        self.players += u64::from(c.players);
        self.accepted += u64::from(c.accepted);
        if c.passed {
            self.passed += 1;
            self.ready_ms.add_ms(c.took_ms);
        } else {
            self.declined_tickets += u64::from(c.declined_tickets);
            self.lost_ticket_ms += u128::from(c.took_ms) * u128::from(c.tickets);
        }
    }

    /// The `acceptance` block of `summary.json`.
    pub fn summary(&self) -> AcceptanceSummary {
        let lost_s = self.lost_ticket_ms as f64 / 1000.0;
        let failed = self.checks - self.passed;
        AcceptanceSummary {
            ready_checks: self.checks,
            accept_rate_player: ratio(self.accepted, self.players),
            accept_rate_match: ratio(self.passed, self.checks),
            matches_cancelled: failed,
            tickets_declined: self.declined_tickets,
            time_lost_ticket_s: lost_s,
            time_lost_per_cancel_ticket_s: (failed > 0).then(|| lost_s / failed as f64),
            ready_p50_s: self.ready_ms.quantile(0.5),
            ready_p90_s: self.ready_ms.quantile(0.9),
        }
    }
}

/// `acceptance` in `summary.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AcceptanceSummary {
    /// Matches formed that went to a ready check (every one, after warm-up).
    pub ready_checks: u64,
    /// Share of asked players who accepted.
    pub accept_rate_player: Option<f64>,
    /// Share of ready checks every player accepted (the match started).
    pub accept_rate_match: Option<f64>,
    /// Ready checks that failed: the match never started and has no row.
    pub matches_cancelled: u64,
    /// Tickets that left the queue because one of their players declined.
    pub tickets_declined: u64,
    /// Ticket-seconds spent in failed ready checks (each ticket of a
    /// cancelled match, from forming to the last answer).
    pub time_lost_ticket_s: f64,
    /// The same per cancelled match.
    pub time_lost_per_cancel_ticket_s: Option<f64>,
    /// From forming to the last acceptance, for matches that passed.
    pub ready_p50_s: Option<f64>,
    /// The same, 90th percentile (seconds).
    pub ready_p90_s: Option<f64>,
}

/// Accumulators of leaves and backfills, by the match's warm-up flag.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BackfillAcc {
    started: u64,
    ended: u64,
    leaves: u64,
    filled: u64,
    ended_short: u64,
    matches_with_leave: u64,
    fill_ms: MsHist,
    /// With a role queue, per role (the scenario's order): leaves and fills.
    by_role: Option<(Vec<String>, Vec<RoleFills>)>,
    /// With a ready check, backfill joiners asked and those who declined.
    joiner_checks: Option<(u64, u64)>,
}

#[derive(Clone, Debug, Default, PartialEq)]
struct RoleFills {
    leaves: u64,
    filled: u64,
    fill_ms: MsHist,
}

impl BackfillAcc {
    /// Also counts leaves and fills by the role of the open slot.
    pub fn with_roles(&mut self, names: Vec<String>) {
        let per = vec![RoleFills::default(); names.len()];
        self.by_role = Some((names, per));
    }
    /// Also counts backfill joiners' ready checks.
    pub fn with_ready_check(&mut self) {
        self.joiner_checks = Some((0, 0));
    }
    /// A player of role `role` left a running match.
    pub fn leave_in_role(&mut self, role: u8, in_warmup: bool) {
        if let (false, Some((_, per))) = (in_warmup, &mut self.by_role) {
            if let Some(r) = per.get_mut(role as usize) {
                r.leaves += 1;
            }
        }
    }
    /// A slot of role `role` was filled `waited_ms` after its player left.
    pub fn filled_in_role(&mut self, role: u8, waited_ms: u64, in_warmup: bool) {
        if let (false, Some((_, per))) = (in_warmup, &mut self.by_role) {
            if let Some(r) = per.get_mut(role as usize) {
                r.filled += 1;
                r.fill_ms.add_ms(waited_ms);
            }
        }
    }
    /// A backfill joiner's ready check, in a match formed after warm-up or not.
    pub fn joiner_check(&mut self, declined: bool, in_warmup: bool) {
        if let (false, Some((asked, no))) = (in_warmup, &mut self.joiner_checks) {
            *asked += 1;
            *no += u64::from(declined);
        }
    }
    /// A match started.
    pub fn started(&mut self, in_warmup: bool) {
        if !in_warmup {
            self.started += 1;
        }
    }
    /// A player left a running match.
    pub fn leave(&mut self, in_warmup: bool) {
        if !in_warmup {
            self.leaves += 1;
        }
    }
    /// An open slot filled `waited_ms` after its player left.
    pub fn filled(&mut self, waited_ms: u64, in_warmup: bool) {
        if !in_warmup {
            self.filled += 1;
            self.fill_ms.add_ms(waited_ms);
        }
    }
    /// A match that ended, with how many players left it and whether a slot
    /// was still open at the end.
    pub fn ended(&mut self, leaves: u32, short: bool, in_warmup: bool) {
        if !in_warmup {
            self.ended += 1;
            self.matches_with_leave += u64::from(leaves > 0);
            self.ended_short += u64::from(short);
        }
    }

    /// The `backfill` block of `summary.json`.
    pub fn summary(&self) -> BackfillSummary {
        BackfillSummary {
            matches_started: self.started,
            leaves: self.leaves,
            leaves_per_match: (self.started > 0).then(|| self.leaves as f64 / self.started as f64),
            matches_with_leave_share: ratio(self.matches_with_leave, self.ended),
            backfills: self.filled,
            filled_share: ratio(self.filled, self.leaves),
            time_to_backfill_p50_s: self.fill_ms.quantile(0.5),
            time_to_backfill_p90_s: self.fill_ms.quantile(0.9),
            finished_short_handed_share: ratio(self.ended_short, self.ended),
            joiner_ready_checks: self.joiner_checks.map(|(asked, _)| asked),
            joiner_declines: self.joiner_checks.map(|(_, no)| no),
            by_role: self.by_role.as_ref().map(|(names, per)| {
                names
                    .iter()
                    .zip(per)
                    .map(|(name, r)| BackfillByRole {
                        role: name.clone(),
                        leaves: r.leaves,
                        backfills: r.filled,
                        filled_share: ratio(r.filled, r.leaves),
                        time_to_backfill_p50_s: r.fill_ms.quantile(0.5),
                        time_to_backfill_p90_s: r.fill_ms.quantile(0.9),
                    })
                    .collect()
            }),
        }
    }
}

/// `backfill` in `summary.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BackfillSummary {
    /// Matches that started after warm-up (leaves are counted against these).
    pub matches_started: u64,
    /// Players who left a running match.
    pub leaves: u64,
    /// Leaves per started match.
    pub leaves_per_match: Option<f64>,
    /// Share of ended matches at least one player left.
    pub matches_with_leave_share: Option<f64>,
    /// Open slots filled from the queue.
    pub backfills: u64,
    /// Share of leaves whose slot was filled before the match ended.
    pub filled_share: Option<f64>,
    /// From a player leaving to the slot's filling, for filled slots.
    pub time_to_backfill_p50_s: Option<f64>,
    /// The same, 90th percentile (seconds).
    pub time_to_backfill_p90_s: Option<f64>,
    /// Share of ended matches that ended with a slot still open.
    pub finished_short_handed_share: Option<f64>,
    /// With `[acceptance]`: backfill joiners asked to accept, and those
    /// with a player who declined (their slot stayed open).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub joiner_ready_checks: Option<u64>,
    /// Of those, the ones a player declined.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub joiner_declines: Option<u64>,
    /// With `[roles]`: leaves and fills by the role of the open slot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by_role: Option<Vec<BackfillByRole>>,
}

/// One role's open slots in `backfill.by_role`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BackfillByRole {
    /// The role's name.
    pub role: String,
    /// Players who left a running match while playing this role.
    pub leaves: u64,
    /// Slots of this role filled from the queue.
    pub backfills: u64,
    /// Share of this role's leaves whose slot was filled.
    pub filled_share: Option<f64>,
    /// Median seconds from a leave to its slot's filling.
    pub time_to_backfill_p50_s: Option<f64>,
    /// The same, 90th percentile.
    pub time_to_backfill_p90_s: Option<f64>,
}

fn ratio(num: u64, den: u64) -> Option<f64> {
    (den > 0).then(|| num as f64 / den as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_lost_counts_each_ticket_of_a_failed_check_and_warmup_is_left_out() {
        let mut a = AcceptanceAcc::default();
        let check = |passed, took_ms, in_warmup| ReadyCheck {
            players: 10,
            accepted: if passed { 10 } else { 9 },
            tickets: 4,
            declined_tickets: u32::from(!passed),
            took_ms,
            passed,
            in_warmup,
        };
        a.add(check(true, 5_000, false));
        a.add(check(false, 12_000, false));
        a.add(check(false, 99_000, true));
        let s = a.summary();
        assert_eq!(s.ready_checks, 2);
        assert_eq!(s.matches_cancelled, 1);
        assert_eq!(s.accept_rate_match, Some(0.5));
        assert_eq!(s.accept_rate_player, Some(19.0 / 20.0));
        assert_eq!(s.time_lost_ticket_s, 48.0);
        assert_eq!(s.ready_p50_s, Some(5.0));
    }

    #[test]
    fn backfill_shares_use_their_own_denominators() {
        let mut b = BackfillAcc::default();
        for _ in 0..4 {
            b.started(false);
        }
        b.leave(false);
        b.leave(false);
        b.filled(3_000, false);
        b.ended(2, true, false);
        b.ended(0, false, false);
        let s = b.summary();
        assert_eq!(s.leaves_per_match, Some(0.5));
        assert_eq!(s.filled_share, Some(0.5));
        assert_eq!(s.finished_short_handed_share, Some(0.5));
        assert_eq!(s.matches_with_leave_share, Some(0.5));
        assert_eq!(s.time_to_backfill_p90_s, Some(3.0));
        assert_eq!(s.by_role, None);
        assert_eq!(s.joiner_ready_checks, None);
    }

    #[test]
    fn fills_by_role_and_joiner_checks_count_after_warmup_only() {
        let mut b = BackfillAcc::default();
        b.with_roles(vec!["tank".into(), "damage".into()]);
        b.with_ready_check();
        b.leave_in_role(0, false);
        b.leave_in_role(1, false);
        b.leave_in_role(1, false);
        b.leave_in_role(1, true);
        b.filled_in_role(1, 4_000, false);
        b.filled_in_role(0, 9_000, true);
        b.joiner_check(true, false);
        b.joiner_check(false, false);
        b.joiner_check(true, true);
        let s = b.summary();
        let by = s.by_role.unwrap();
        assert_eq!((by[0].leaves, by[0].backfills), (1, 0));
        assert_eq!(by[0].filled_share, Some(0.0));
        assert_eq!((by[1].leaves, by[1].backfills), (2, 1));
        assert_eq!(by[1].time_to_backfill_p50_s, Some(4.0));
        assert_eq!(s.joiner_ready_checks, Some(2));
        assert_eq!(s.joiner_declines, Some(1));
    }
}
