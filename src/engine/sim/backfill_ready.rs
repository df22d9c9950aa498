//! The ready check of a backfill joiner (`[acceptance]` with `[backfill]`).
//! FlexMatch's backfill "assigns the new players to teams, manages player
//! acceptance" (Amazon GameLift FlexMatch guide, "Backfill existing games
//! with FlexMatch"): the players a backfill proposal brings must accept it,
//! as a new match's must; the players already playing are not asked again.
//! (AccelByte sends a backfill proposal to the game server, which accepts
//! or rejects it; the ready check stands for that answer too.) Here the
//! joiner's players answer as a match's players do; a decline sends its
//! party out under the ready check's decline rules (a `Declined` row, back
//! in the queue after the penalty, counted from the decliner's answer) and
//! the slot stays open, offered again once that answer is in. A joiner whose
//! players all accept joins at once: the running match does not wait.

use super::{timer_key, Simulation};
use crate::metrics::TicketEnd;
use crate::model::{SimDuration, TicketId};

impl Simulation<'_> {
    /// Asks the players of waiting ticket `id`, chosen to fill open slot
    /// `k`. True: all accepted. False: the ticket has left as declined and
    /// the slot waits for the answer before it is offered again.
    pub(super) fn backfill_ready_check(&mut self, k: usize, id: TicketId) -> bool {
        let now = self.now;
        let Some(rc) = self.ready.as_mut() else {
            return true;
        };
        let size = self.pool.get(id).map_or(0, |t| t.size());
        let (accepted, last_ms) = rc.answers(size);
        let penalty = rc.decline_penalty();
        let declined = accepted < size;
        let Some(bf) = self.bf.as_mut() else {
            return true;
        };
        let in_warmup = bf.open[k].in_warmup();
        if declined {
            bf.open[k].retry_at = now + SimDuration::from_ms(last_ms);
        }
        if let Some(acc) = self.collector.backfill() {
            acc.joiner_check(declined, in_warmup);
        }
        if !declined {
            return true;
        }
        let t = self.pool.remove(id).expect("found waiting");
        self.queue.cancel(timer_key(id));
        self.leave(&t, now, TicketEnd::Declined, &[]);
        let back = now + SimDuration::from_ms(last_ms) + penalty;
        if back <= self.end {
            self.schedule_requeue(t.players.clone(), back);
        } else {
            for p in &t.players {
                self.busy[p.index()] = false;
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::super::backfill_roles::{role_queue_2v2, role_ticket, tank_leaves};
    use super::*;
    use crate::metrics::KeepRows;
    use crate::model::{PlayerId, SimTime};
    use crate::policy::Trigger;

    /// A joiner who declines the ready check goes back to the queue after
    /// the penalty, counted from its answer, and the slot stays open: not
    /// offered to the next ticket until that answer is in, then filled.
    #[test]
    fn a_backfill_joiner_who_declines_leaves_the_slot_open_and_queues_again() {
        // Nobody accepts: every check this run asks fails.
        let (config, parts) = role_queue_2v2(
            "[acceptance]\naccept_prob = 1e-12\ntimeout = \"20s\"\ndecline_penalty = \"2m\"",
        );
        let mut rows = KeepRows::default();
        let mut sim = Simulation::new(config, 1, parts, &mut rows);
        // The match itself forms without its check (it would fail too).
        let ready = sim.ready.take();
        let r = tank_leaves(&mut sim);
        sim.ready = ready;
        const TANK: u8 = 1;
        let first = role_ticket(&mut sim, 10, TANK, r, 5_000);
        let now = SimTime::from_ms(80_000);
        sim.now = now;
        sim.run_policy(Trigger::Tick);
        assert!(!sim.pool.contains(first), "the decliner left the queue");
        let open = &sim.bf.as_ref().unwrap().open;
        assert_eq!(open.len(), 1, "the slot stays open");
        let answer = open[0].retry_at;
        assert!(answer >= now && answer <= now + SimDuration::from_secs_f64(20.0));
        // The decliner's party is set to queue again after the penalty,
        // counted from its answer.
        assert!(sim.busy[10], "thinking before its requeue, not free");
        assert!(sim.returning.iter().any(|p| p.contains(&PlayerId(10))));
        // Before the answer is in, the slot is not offered again.
        let second = role_ticket(&mut sim, 11, TANK, r, 6_000);
        if answer > now {
            sim.run_policy(Trigger::Tick);
            assert!(sim.pool.contains(second));
        }
        // Once it is in, the next tank-capable ticket is asked (and, with
        // the ready check gone, joins).
        sim.ready = None;
        sim.now = answer;
        sim.run_policy(Trigger::Tick);
        assert!(!sim.pool.contains(second));
        assert!(sim.bf.as_ref().unwrap().open.is_empty());
        assert_eq!(sim.active[0].members.last(), Some(&PlayerId(11)));
        drop(sim);
        let row = rows.0.tickets.iter().find(|t| t.ticket == first).unwrap();
        assert_eq!(row.end, TicketEnd::Declined);
        assert_eq!(row.left, now);
    }
}
