//! Players who quit and come back (`[engagement]`): after each match every
//! player may stop for a while or for good, with a probability from the
//! churn model (`model::churn`): the logistic one of the result, the losing
//! streak, the match's lopsidedness and the wait, or the table of recent
//! results; an absent player is never picked
//! by a fresh arrival, so a policy that drives players away empties its own
//! queue. Its draws come from their own stream, so a run without the section
//! draws every other number as before.

use super::{Active, Simulation};
use crate::metrics::engagement::{Decision, EngagementAcc};
use crate::model::churn::{Churn, ChurnInputs, MAX_STREAK};
use crate::model::{Party, PlayerId, SimDuration, SimTime};
use crate::pool::WaitingTicket;
use rand::Rng;
use rand_distr::{Distribution, Exp1};
use rand_pcg::Pcg64;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The engagement model as the engine runs it.
#[derive(Clone, Debug, PartialEq)]
pub struct EngagementConfig {
    pub model: Churn,
    /// Of the players who stop, the share who never come back.
    pub for_good_share: f64,
    /// Mean (exponential) time away of a player who stops for a while.
    pub away_mean: SimDuration,
}

/// A player who never comes back.
const GONE: u64 = u64::MAX;

pub(super) struct Engagement {
    config: EngagementConfig,
    rng: Pcg64,
    /// When each player is back, in ms since the start (0: here; `GONE`).
    away_until: Vec<u64>,
    /// Return times of the players away, to count who is engaged each hour.
    returns: BinaryHeap<Reverse<(u64, u32)>>,
    away: u64,
    gone: u64,
    /// Each player's wait for the match now being played, ms.
    wait_ms: Vec<u64>,
    /// The current session: its first ticket's enqueue, its matches, the end
    /// of its last match (ms since the start).
    session_start: Vec<u64>,
    session_matches: Vec<u32>,
    last_end: Vec<u64>,
    /// The next hour whose engaged count is still to be recorded.
    next_hour: u32,
    hours: u32,
    warmup_end: SimTime,
}

impl Engagement {
    pub(super) fn new(
        config: EngagementConfig,
        rng: Pcg64,
        n: usize,
        end: SimTime,
        warmup_end: SimTime,
    ) -> Self {
        Engagement {
            config,
            rng,
            away_until: vec![0; n],
            returns: BinaryHeap::new(),
            away: 0,
            gone: 0,
            wait_ms: vec![0; n],
            session_start: vec![0; n],
            session_matches: vec![0; n],
            last_end: vec![0; n],
            next_hour: 0,
            hours: hours(end),
            warmup_end,
        }
    }

    fn present(&self, p: PlayerId, now: SimTime) -> bool {
        self.away_until[p.index()] <= now.as_ms()
    }

    /// Records the engaged count at every hour boundary up to `now`.
    fn advance(&mut self, now: SimTime, acc: &mut EngagementAcc) {
        while self.next_hour < self.hours && u64::from(self.next_hour) * 3_600_000 <= now.as_ms() {
            let at = u64::from(self.next_hour) * 3_600_000;
            while let Some(&Reverse((t, _))) = self.returns.peek() {
                if t > at {
                    break;
                }
                self.returns.pop();
                self.away -= 1;
            }
            let n = self.away_until.len() as u64;
            acc.engaged(self.next_hour, n - self.away - self.gone);
            self.next_hour += 1;
        }
    }

    /// Closes player `i`'s session, if it had a match.
    fn close_session(&mut self, i: usize, acc: &mut EngagementAcc) {
        if self.session_matches[i] > 0 {
            let start = self.session_start[i];
            acc.session(
                self.session_matches[i],
                self.last_end[i] - start,
                start < self.warmup_end.as_ms(),
            );
            self.session_matches[i] = 0;
        }
    }
}

/// Hours the run covers, a started hour included.
pub(super) fn hours(end: SimTime) -> u32 {
    end.as_ms().div_ceil(3_600_000).max(1) as u32
}

impl Simulation<'_> {
    /// Whether every member of a fresh arrival is here (not away, not gone);
    /// if not, the arrival makes no ticket and is counted as absent.
    pub(super) fn engagement_admits(&mut self, members: &Party) -> bool {
        let e = self.engagement.as_deref().expect("engagement is on");
        if members.iter().all(|p| e.present(*p, self.world.now)) {
            return true;
        }
        if let Some(acc) = self.collector.engagement() {
            acc.arrival_absent();
        }
        false
    }

    /// A ticket of a forming match: its members' wait, a fresh ticket's new
    /// session, and who played when.
    pub(super) fn engagement_formed(&mut self, t: &WaitingTicket) {
        let e = self.engagement.as_deref_mut().expect("engagement is on");
        let acc = self.collector.engagement().expect("engagement is on");
        let now = self.world.now.as_ms();
        for p in &t.players {
            let i = p.index();
            e.wait_ms[i] = now - t.enqueued.as_ms();
            if !t.requeue {
                e.close_session(i, acc);
                e.session_start[i] = t.enqueued.as_ms();
            }
            acc.played(p.0, now);
        }
    }

    /// Each member's decision after a finished match (leavers aside), in
    /// member order: true if the player stopped. Updates losing streaks;
    /// those who stop are free and away.
    pub(super) fn engagement_after_match(
        &mut self,
        active: &Active,
        winner: usize,
        left: &[bool],
        p_team0: Option<f64>,
        in_warmup: bool,
    ) -> Vec<bool> {
        let e = self.engagement.as_deref_mut().expect("engagement is on");
        let acc = self.collector.engagement().expect("engagement is on");
        e.advance(self.world.now, acc);
        // Lopsidedness from the true-skill win probability, as the players
        // lived it; formats of more than two teams count as even.
        let gap = match (self.world.format.teams, p_team0) {
            (2, Some(p)) => (2.0 * p - 1.0).abs(),
            _ => 0.0,
        };
        let now = self.world.now.as_ms();
        let mut quit = vec![false; active.members.len()];
        let mut k = 0;
        for (ti, party) in active.parties() {
            for p in party {
                let i = k;
                k += 1;
                if left.get(i) == Some(&true) {
                    continue;
                }
                let pl = &mut self.world.players[p.index()];
                let lost = ti != winner;
                pl.losing_streak = if lost {
                    (pl.losing_streak + 1).min(MAX_STREAK)
                } else {
                    0
                };
                pl.recent = pl.recent.push(lost);
                let terms = e.config.model.terms(&ChurnInputs {
                    lost,
                    streak: pl.losing_streak,
                    gap,
                    wait_s: e.wait_ms[p.index()] as f64 / 1000.0,
                    recent: pl.recent,
                });
                let u: f64 = e.rng.random();
                let stops = u < crate::model::churn::sigmoid(terms.logit());
                let mut for_good = false;
                let j = p.index();
                e.session_matches[j] += 1;
                e.last_end[j] = now;
                if stops {
                    quit[i] = true;
                    for_good = e.rng.random::<f64>() < e.config.for_good_share;
                    if for_good {
                        e.away_until[j] = GONE;
                        e.gone += 1;
                    } else {
                        let x: f64 = Exp1.sample(&mut e.rng);
                        let back = now
                            + SimDuration::from_secs_f64(x * e.config.away_mean.as_secs_f64())
                                .as_ms()
                                .max(1);
                        e.away_until[j] = back;
                        e.returns.push(Reverse((back, p.0)));
                        e.away += 1;
                    }
                    e.close_session(j, acc);
                    self.world.busy[j] = false;
                }
                acc.decision(Decision {
                    player: p.0,
                    terms,
                    quit: stops,
                    for_good,
                    in_warmup,
                });
            }
        }
        quit
    }

    /// At the run's end: the last hours' engaged counts, the sessions that
    /// ended (players free) and those cut off (still queued, playing or
    /// about to queue again), and who is engaged and gone.
    pub(super) fn engagement_finish(&mut self) {
        let e = self.engagement.as_deref_mut().expect("engagement is on");
        let acc = self.collector.engagement().expect("engagement is on");
        e.advance(self.world.end, acc);
        for i in 0..e.session_matches.len() {
            if e.session_matches[i] == 0 {
                continue;
            }
            if self.world.busy[i] {
                acc.session_censored();
            } else {
                e.close_session(i, acc);
            }
        }
        let end = self.world.end.as_ms();
        let n = e.away_until.len() as u64;
        let away = e
            .away_until
            .iter()
            .filter(|&&t| t > end && t != GONE)
            .count() as u64;
        acc.at_end(n - away - e.gone, e.gone);
    }
}

/// Each player's skill decile (0 = lowest tenth) from the players' indices
/// by ascending true skill.
pub(super) fn deciles(by_skill: &[u32]) -> Vec<u8> {
    let n = by_skill.len().max(1);
    let mut out = vec![0; by_skill.len()];
    for (rank, &i) in by_skill.iter().enumerate() {
        out[i as usize] = (rank * 10 / n) as u8;
    }
    out
}
