//! The ready check (`[acceptance]`): every player of a formed match answers
//! within a timeout; if anyone declines, the match is cancelled when the
//! last answer is in, the declining tickets leave and queue again after a
//! penalty, and the others go back to the pool under their own ids. As in
//! FlexMatch's player acceptance: tickets whose players all accepted return
//! to the pool, a ticket with a rejection fails.

use super::{timer_key, Event, Simulation};
use crate::metrics::backfill::ReadyCheck;
use crate::metrics::TicketEnd;
use crate::model::{Party, SimDuration, SimTime, TicketId};
use crate::policy::Trigger;
use crate::pool::WaitingTicket;
use rand::Rng;
use rand_pcg::Pcg64;

/// The ready check as the engine runs it.
#[derive(Clone, Debug, PartialEq)]
pub struct Acceptance {
    /// Probability that one player accepts.
    pub accept_prob: f64,
    /// Every answer comes uniformly within this.
    pub timeout: SimDuration,
    /// Whether returned tickets keep their enqueue time (their priority).
    pub keep_wait: bool,
    /// A declining ticket's party queues again this long after the cancel.
    pub decline_penalty: SimDuration,
}

/// A failed check's tickets, out of the pool until the last answer is in:
/// each with its abandon deadline and whether one of its players declined.
#[derive(Default)]
pub(super) struct Held {
    tickets: Vec<(WaitingTicket, Option<SimTime>, bool)>,
}

#[doc(hidden)]
pub struct ReadyChecks {
    config: Acceptance,
    rng: Pcg64,
    held: Vec<Held>,
    free: Vec<u32>,
    declined: Vec<bool>,
}

impl ReadyChecks {
    pub(super) fn new(config: Acceptance, rng: Pcg64) -> Self {
        ReadyChecks {
            config,
            rng,
            held: Vec::new(),
            free: Vec::new(),
            declined: Vec::new(),
        }
    }

    /// The answers of `players` players, drawn as a match's check draws
    /// them (accept, then when): how many accepted, and when the last
    /// answer came (ms after the ask).
    pub(super) fn answers(&mut self, players: usize) -> (usize, u64) {
        let timeout_ms = self.config.timeout.as_ms();
        let (mut accepted, mut last_ms) = (0, 0u64);
        for _ in 0..players {
            accepted += usize::from(self.rng.random::<f64>() < self.config.accept_prob);
            last_ms = last_ms.max(self.rng.random_range(0..=timeout_ms));
        }
        (accepted, last_ms)
    }

    pub(super) fn decline_penalty(&self) -> SimDuration {
        self.config.decline_penalty
    }
}

impl Simulation<'_> {
    /// Asks every player of a match about to form. `Some(delay)`: all
    /// accepted, the last after `delay`, and the match goes on. `None`: the
    /// check fails; its tickets have left the pool and wait for the cancel
    /// (`Event::ReadyFail`). Without `[acceptance]`, `Some(0)` at once.
    #[inline]
    pub(super) fn ready_check(&mut self, team_tickets: &[Vec<TicketId>]) -> Option<SimDuration> {
        if self.ready.is_none() {
            return Some(SimDuration::ZERO);
        }
        self.ready_check_draws(team_tickets)
    }

    /// The ready check proper, when the run has one.
    #[inline(never)]
    fn ready_check_draws(&mut self, team_tickets: &[Vec<TicketId>]) -> Option<SimDuration> {
        let rc = self.ready.as_mut().expect("a ready check");
        let timeout_ms = rc.config.timeout.as_ms();
        let (mut players, mut accepted, mut last_ms) = (0u32, 0u32, 0u64);
        rc.declined.clear();
        for id in team_tickets.iter().flatten() {
            let t = self
                .world
                .pool
                .get(*id)
                .expect("proposal tickets are waiting");
            let mut declined = false;
            for _ in &t.players {
                let yes = rc.rng.random::<f64>() < rc.config.accept_prob;
                let at_ms = rc.rng.random_range(0..=timeout_ms);
                last_ms = last_ms.max(at_ms);
                players += 1;
                if yes {
                    accepted += 1;
                } else {
                    declined = true;
                }
            }
            rc.declined.push(declined);
        }
        let passed = accepted == players;
        self.collector.ready_check(ReadyCheck {
            players,
            accepted,
            tickets: rc.declined.len() as u32,
            declined_tickets: rc.declined.iter().filter(|&&d| d).count() as u32,
            took_ms: last_ms,
            passed,
            in_warmup: self.world.now < self.world.warmup_end,
        });
        if passed {
            return Some(SimDuration::from_ms(last_ms));
        }
        let h = match rc.free.pop() {
            Some(h) => h,
            None => {
                rc.held.push(Held::default());
                rc.held.len() as u32 - 1
            }
        };
        let mut held = std::mem::take(&mut rc.held[h as usize]);
        for (id, &declined) in team_tickets.iter().flatten().zip(&rc.declined) {
            let t = self
                .world
                .pool
                .remove(*id)
                .expect("proposal tickets are waiting");
            // Out of the data centres' pools too, or their policies would
            // keep proposing it while its players answer.
            if let Some(r) = self.regions.as_mut() {
                r.remove(*id);
            }
            let deadline = self.queue.take_timer(timer_key(*id));
            held.tickets.push((t, deadline, declined));
        }
        if self.explain.is_some() {
            let out: Vec<&WaitingTicket> = held.tickets.iter().map(|x| &x.0).collect();
            self.explain_ready_check(&out, true);
        }
        self.ready.as_mut().expect("a ready check").held[h as usize] = held;
        self.queue.schedule(
            self.world.now + SimDuration::from_ms(last_ms),
            Event::ReadyFail(h),
        );
        None
    }

    /// The cancel of a failed check: decliners leave and come back after
    /// the penalty; the others return to the pool with their ids and their
    /// abandon deadlines (moved along with the enqueue time if they do not
    /// keep their wait).
    pub(super) fn on_ready_fail(&mut self, h: u32) {
        let Some(rc) = self.ready.as_mut() else {
            return;
        };
        let (keep, penalty) = (rc.config.keep_wait, rc.config.decline_penalty);
        let mut held = std::mem::take(&mut rc.held[h as usize]);
        rc.free.push(h);
        let now = self.world.now;
        if self.explain.is_some() {
            let back: Vec<&WaitingTicket> =
                held.tickets.iter().filter(|x| !x.2).map(|x| &x.0).collect();
            self.explain_ready_check(&back, false);
        }
        let mut returned: Vec<TicketId> = Vec::new();
        for (mut t, deadline, declined) in held.tickets.drain(..) {
            if declined {
                self.leave(&t, now, TicketEnd::Declined, &[]);
                let back = now + penalty;
                // A replayed trace holds the decliner's return as a ticket
                // of its own, as it holds returns after matches.
                if back <= self.world.end && !self.replaying() {
                    self.schedule_requeue(t.players.clone(), back);
                } else {
                    for p in &t.players {
                        self.world.busy[p.index()] = false;
                    }
                }
                continue;
            }
            let joined = t.enqueued;
            if !keep {
                t.enqueued = now;
            }
            let id = t.id;
            self.world.pool.insert(t);
            if let Some(d) = deadline {
                let d = if keep { d } else { now + d.since(joined) };
                let seq = self.queue.reserve();
                self.queue
                    .schedule_cancellable(timer_key(id), seq, d.max(now), Event::Abandon(id));
            }
            returned.push(id);
        }
        if let Some(rc) = self.ready.as_mut() {
            rc.held[h as usize] = held;
        }
        if self.regions.is_some() {
            // Back in the data centres its wait now allows, offered to
            // their policies as a joining ticket is.
            for id in returned {
                let Some(t) = self.world.pool.get(id) else {
                    continue;
                };
                let r = self.regions.as_mut().expect("checked");
                let next = r.readmit(t, now.since(t.enqueued));
                self.after_admit(id, next);
            }
        } else if self.schedule.on_join {
            for id in returned {
                if self.world.pool.contains(id) {
                    self.run_policy(Trigger::Join(id));
                }
            }
        }
    }

    /// Queues `members` again at `at`, through the returning parties' slots
    /// (a decliner after its penalty; a party back from a match).
    pub(super) fn schedule_requeue(&mut self, members: Party, at: SimTime) {
        let slot = match self.world.returning_free.pop() {
            Some(slot) => {
                self.world.returning[slot as usize] = members;
                slot
            }
            None => {
                self.world.returning.push(members);
                self.world.returning.len() as u32 - 1
            }
        };
        self.queue.schedule(at, Event::Requeue(slot));
    }

    /// Tickets of checks still failing when the run ends are censored like
    /// those waiting in the pool.
    pub(super) fn censor_ready_checks(&mut self, end: SimTime) {
        let Some(rc) = self.ready.as_mut() else {
            return;
        };
        let held: Vec<WaitingTicket> = rc
            .held
            .iter_mut()
            .flat_map(|h| h.tickets.drain(..).map(|(t, _, _)| t))
            .collect();
        for t in held {
            self.leave(&t, end, TicketEnd::Waiting, &[]);
        }
    }
}
