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
use crate::engine::layer::Declined;
use crate::metrics::TicketEnd;
use crate::model::TicketId;

impl Simulation<'_> {
    /// Asks the players of waiting ticket `id`, chosen to fill open slot
    /// `k`. True: all accepted. False: the ticket has left as declined and
    /// the slot waits for the answer before it is offered again.
    pub(super) fn backfill_ready_check(&mut self, k: usize, id: TicketId) -> bool {
        let now = self.world.now;
        let size = self.world.pool.get(id).map_or(0, |t| t.size());
        let Some(bf) = self.bf.as_mut() else {
            return true;
        };
        let in_warmup = bf.open[k].in_warmup();
        let mut declined = None;
        for l in &mut self.layers {
            declined = l.joiner_check(&self.world, &mut self.collector, size, in_warmup);
            if declined.is_some() {
                break;
            }
        }
        let Some(Declined { answered, penalty }) = declined else {
            return true;
        };
        bf.open[k].retry_at = now + answered;
        let t = self.world.pool.remove(id).expect("found waiting");
        self.queue.cancel(timer_key(id));
        self.leave(&t, now, TicketEnd::Declined, &[]);
        let back = now + answered + penalty;
        if back <= self.world.end {
            self.schedule_requeue(t.players.clone(), back);
        } else {
            for p in &t.players {
                self.world.busy[p.index()] = false;
            }
        }
        false
    }
}
