//! Players who quit and come back (`[engagement]`): after each match every
//! player may stop for a while or for good, with a probability from the
//! churn model (`model::churn`): the logistic one of the result, the losing
//! streak, the match's lopsidedness and the wait, or the table of recent
//! results; an absent player is never picked
//! by a fresh arrival, so a policy that drives players away empties its own
//! queue. Its draws come from their own stream, so a run without the section
//! draws every other number as before. A layer (`engine::layer`): it hears
//! arrivals, formed tickets, ended matches and the run's end.

use crate::engine::layer::{Ended, Layer};
use crate::engine::world::World;
use crate::metrics::engagement::{Decision, EngagementAcc};
use crate::metrics::Collector;
use crate::model::churn::{Churn, ChurnInputs, MAX_STREAK};
use crate::model::{PlayerId, SimDuration, SimTime};
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

impl Layer for Engagement {
    /// Every member of a fresh arrival must be here (not away, not gone);
    /// if not, the arrival makes no ticket and is counted as absent.
    fn admits(&mut self, world: &World, out: &mut Collector<'_>, members: &[PlayerId]) -> bool {
        if members.iter().all(|p| self.present(*p, world.now)) {
            return true;
        }
        if let Some(acc) = out.engagement() {
            acc.arrival_absent();
        }
        false
    }

    /// A ticket of a forming match: its members' wait, a fresh ticket's new
    /// session, and who played when.
    fn ticket_matched(&mut self, world: &World, out: &mut Collector<'_>, t: &WaitingTicket) {
        let acc = out.engagement().expect("engagement is on");
        let now = world.now.as_ms();
        for p in &t.players {
            let i = p.index();
            self.wait_ms[i] = now - t.enqueued.as_ms();
            if !t.requeue {
                self.close_session(i, acc);
                self.session_start[i] = t.enqueued.as_ms();
            }
            acc.played(p.0, now);
        }
    }

    /// Each member's decision after a finished match (leavers aside):
    /// those who stop are flagged in `quit`, free and away. Updates losing
    /// streaks and recent results.
    fn match_ended(
        &mut self,
        world: &mut World,
        out: &mut Collector<'_>,
        ended: &Ended<'_>,
        quit: &mut Vec<bool>,
    ) {
        let acc = out.engagement().expect("engagement is on");
        self.advance(world.now, acc);
        // Lopsidedness from the true-skill win probability, as the players
        // lived it; formats of more than two teams count as even.
        let gap = match (world.format.teams, ended.p_team0) {
            (2, Some(p)) => (2.0 * p - 1.0).abs(),
            _ => 0.0,
        };
        let now = world.now.as_ms();
        let World {
            active,
            players,
            busy,
            ..
        } = world;
        let active = &active[ended.slot];
        quit.resize(active.members.len(), false);
        let mut k = 0;
        for (ti, party) in active.parties() {
            for p in party {
                let i = k;
                k += 1;
                if ended.left.get(i) == Some(&true) {
                    continue;
                }
                let pl = &mut players[p.index()];
                let lost = ti != ended.winner;
                pl.losing_streak = if lost {
                    (pl.losing_streak + 1).min(MAX_STREAK)
                } else {
                    0
                };
                pl.recent = pl.recent.push(lost);
                let terms = self.config.model.terms(&ChurnInputs {
                    lost,
                    streak: pl.losing_streak,
                    gap,
                    wait_s: self.wait_ms[p.index()] as f64 / 1000.0,
                    recent: pl.recent,
                });
                let u: f64 = self.rng.random();
                let stops = u < crate::model::churn::sigmoid(terms.logit());
                let mut for_good = false;
                let j = p.index();
                self.session_matches[j] += 1;
                self.last_end[j] = now;
                if stops {
                    quit[i] = true;
                    for_good = self.rng.random::<f64>() < self.config.for_good_share;
                    if for_good {
                        self.away_until[j] = GONE;
                        self.gone += 1;
                    } else {
                        let x: f64 = Exp1.sample(&mut self.rng);
                        let back = now
                            + SimDuration::from_secs_f64(x * self.config.away_mean.as_secs_f64())
                                .as_ms()
                                .max(1);
                        self.away_until[j] = back;
                        self.returns.push(Reverse((back, p.0)));
                        self.away += 1;
                    }
                    self.close_session(j, acc);
                    busy[j] = false;
                }
                acc.decision(Decision {
                    player: p.0,
                    terms,
                    quit: stops,
                    for_good,
                    in_warmup: ended.in_warmup,
                });
            }
        }
    }

    /// At the run's end: the last hours' engaged counts, the sessions that
    /// ended (players free) and those cut off (still queued, playing or
    /// about to queue again), and who is engaged and gone.
    fn finish(&mut self, world: &World, out: &mut Collector<'_>) {
        let acc = out.engagement().expect("engagement is on");
        self.advance(world.end, acc);
        for i in 0..self.session_matches.len() {
            if self.session_matches[i] == 0 {
                continue;
            }
            if world.busy[i] {
                acc.session_censored();
            } else {
                self.close_session(i, acc);
            }
        }
        let end = world.end.as_ms();
        let n = self.away_until.len() as u64;
        let away = self
            .away_until
            .iter()
            .filter(|&&t| t > end && t != GONE)
            .count() as u64;
        acc.at_end(n - away - self.gone, self.gone);
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
