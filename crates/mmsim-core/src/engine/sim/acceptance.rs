//! The ready check (`[acceptance]`): every player of a formed match answers
//! within a timeout; if anyone declines, the match is cancelled when the
//! last answer is in, the declining tickets leave and queue again after a
//! penalty, and the others go back to the pool under their own ids. As in
//! FlexMatch's player acceptance: tickets whose players all accepted return
//! to the pool, a ticket with a rejection fails. The answers and their
//! record are a layer (`ReadyChecks`); holding a failed check's tickets
//! and returning them is the loop's (`Holds`), since only the loop moves
//! tickets.

use super::{timer_key, Event, Simulation};
use crate::engine::layer::{Check, Declined, Layer};
use crate::engine::world::World;
use crate::metrics::backfill::ReadyCheck;
use crate::metrics::{Collector, TicketEnd};
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
/// each with its abandon deadline and whether one of its players declined;
/// and what the check said of their return.
#[derive(Default)]
pub(super) struct Held {
    tickets: Vec<(WaitingTicket, Option<SimTime>, bool)>,
    keep_wait: bool,
    penalty: SimDuration,
}

/// The engine's side of failed checks: the held tickets by slot, reused.
#[derive(Default)]
pub(super) struct Holds {
    held: Vec<Held>,
    free: Vec<u32>,
    /// Per ticket of the check being asked: whether one of its players declined.
    declined: Vec<bool>,
}

/// The ready check as a layer: its answers, drawn from its own stream.
pub(super) struct ReadyChecks {
    config: Acceptance,
    rng: Pcg64,
}

impl ReadyChecks {
    pub(super) fn new(config: Acceptance, rng: Pcg64) -> Self {
        ReadyChecks { config, rng }
    }

    /// The answers of `players` players, drawn as a match's check draws
    /// them (accept, then when): how many accepted, and when the last
    /// answer came (ms after the ask).
    fn answers(&mut self, players: usize) -> (usize, u64) {
        let timeout_ms = self.config.timeout.as_ms();
        let (mut accepted, mut last_ms) = (0, 0u64);
        for _ in 0..players {
            accepted += usize::from(self.rng.random::<f64>() < self.config.accept_prob);
            last_ms = last_ms.max(self.rng.random_range(0..=timeout_ms));
        }
        (accepted, last_ms)
    }
}

impl Layer for ReadyChecks {
    /// Asks every player of the match, ticket by ticket, and records the
    /// check.
    fn ready_check(
        &mut self,
        world: &World,
        out: &mut Collector<'_>,
        teams: &[Vec<TicketId>],
        declined: &mut Vec<bool>,
    ) -> Check {
        let timeout_ms = self.config.timeout.as_ms();
        let (mut players, mut accepted, mut last_ms) = (0u32, 0u32, 0u64);
        for id in teams.iter().flatten() {
            let t = world.pool.get(*id).expect("proposal tickets are waiting");
            let mut no = false;
            for _ in &t.players {
                let yes = self.rng.random::<f64>() < self.config.accept_prob;
                let at_ms = self.rng.random_range(0..=timeout_ms);
                last_ms = last_ms.max(at_ms);
                players += 1;
                if yes {
                    accepted += 1;
                } else {
                    no = true;
                }
            }
            declined.push(no);
        }
        let passed = accepted == players;
        out.ready_check(ReadyCheck {
            players,
            accepted,
            tickets: declined.len() as u32,
            declined_tickets: declined.iter().filter(|&&d| d).count() as u32,
            took_ms: last_ms,
            passed,
            in_warmup: world.now < world.warmup_end,
        });
        let after = SimDuration::from_ms(last_ms);
        if passed {
            return Check::Pass(after);
        }
        Check::Fail {
            after,
            keep_wait: self.config.keep_wait,
            penalty: self.config.decline_penalty,
        }
    }

    /// A backfill joiner's players answer as a match's do.
    fn joiner_check(
        &mut self,
        _world: &World,
        out: &mut Collector<'_>,
        size: usize,
        in_warmup: bool,
    ) -> Option<Declined> {
        let (accepted, last_ms) = self.answers(size);
        let declined = accepted < size;
        if let Some(acc) = out.backfill() {
            acc.joiner_check(declined, in_warmup);
        }
        declined.then_some(Declined {
            answered: SimDuration::from_ms(last_ms),
            penalty: self.config.decline_penalty,
        })
    }
}

impl Simulation<'_> {
    /// Asks the layers' ready checks of a match about to form.
    /// `Some(delay)`: all accepted, the last after `delay`, and the match
    /// goes on. `None`: the check fails; its tickets have left the pool
    /// and wait for the cancel (`Event::ReadyFail`). Without layers,
    /// `Some(0)` at once.
    #[inline]
    pub(super) fn ready_check(&mut self, team_tickets: &[Vec<TicketId>]) -> Option<SimDuration> {
        if self.layers.is_empty() {
            return Some(SimDuration::ZERO);
        }
        self.layers_ready_check(team_tickets)
    }

    /// The layers' checks proper, and holding a failed check's tickets.
    #[inline(never)]
    fn layers_ready_check(&mut self, team_tickets: &[Vec<TicketId>]) -> Option<SimDuration> {
        let mut declined = std::mem::take(&mut self.holds.declined);
        let (mut delay, mut failed) = (SimDuration::ZERO, None);
        for l in &mut self.layers {
            declined.clear();
            match l.ready_check(
                &self.world,
                &mut self.collector,
                team_tickets,
                &mut declined,
            ) {
                Check::Pass(d) => delay = delay.max(d),
                fail @ Check::Fail { .. } => {
                    failed = Some(fail);
                    break;
                }
            }
        }
        let Some(Check::Fail {
            after,
            keep_wait,
            penalty,
        }) = failed
        else {
            self.holds.declined = declined;
            return Some(delay);
        };
        let h = match self.holds.free.pop() {
            Some(h) => h,
            None => {
                self.holds.held.push(Held::default());
                self.holds.held.len() as u32 - 1
            }
        };
        let mut held = std::mem::take(&mut self.holds.held[h as usize]);
        (held.keep_wait, held.penalty) = (keep_wait, penalty);
        for (id, &declined) in team_tickets.iter().flatten().zip(&declined) {
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
        self.holds.declined = declined;
        let out: Vec<&WaitingTicket> = held.tickets.iter().map(|x| &x.0).collect();
        self.layers_held(&out, true);
        self.holds.held[h as usize] = held;
        self.queue
            .schedule(self.world.now + after, Event::ReadyFail(h));
        None
    }

    /// The cancel of a failed check: decliners leave and come back after
    /// the penalty; the others return to the pool with their ids and their
    /// abandon deadlines (moved along with the enqueue time if they do not
    /// keep their wait).
    pub(super) fn on_ready_fail(&mut self, h: u32) {
        let mut held = std::mem::take(&mut self.holds.held[h as usize]);
        self.holds.free.push(h);
        let (keep, penalty) = (held.keep_wait, held.penalty);
        let now = self.world.now;
        if !self.layers.is_empty() {
            let back: Vec<&WaitingTicket> =
                held.tickets.iter().filter(|x| !x.2).map(|x| &x.0).collect();
            self.layers_held(&back, false);
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
        self.holds.held[h as usize] = held;
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
        let held: Vec<WaitingTicket> = self
            .holds
            .held
            .iter_mut()
            .flat_map(|h| h.tickets.drain(..).map(|(t, _, _)| t))
            .collect();
        for t in held {
            self.leave(&t, end, TicketEnd::Waiting, &[]);
        }
    }
}
