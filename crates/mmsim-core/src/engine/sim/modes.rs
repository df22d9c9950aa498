//! The event loop's side of game modes (`[modes]`, `engine::modes`): a
//! fresh arrival draws its mode before its party size, a joining ticket is
//! offered to each of its modes' policies in turn (its drawn mode first)
//! until one matches it, each mode's policy ticks on its own schedule, and
//! a ticket leaving the queue leaves every mode's pool at that instant.
//! Kept here so the loop itself only tests one `Option`.

use super::{Event, Simulation};
use crate::metrics::modes::TicketMode;
use crate::metrics::TicketEnd;
use crate::model::TicketId;
use crate::policy::{PoolView, Trigger};

impl Simulation<'_> {
    /// A fresh arrival's mode (one draw from the modes' stream, whatever
    /// becomes of the arrival) and its party size by that mode's sizes, from
    /// the arrival's own size draw `u_size`.
    pub(super) fn arrival_mode(&mut self, u_size: f64) -> (u8, usize) {
        let m = self.modes.as_mut().expect("modes are on");
        let drawn = m.draw_fresh();
        let size = super::party_size(&m.config.modes[drawn].party_size_cdf, u_size);
        (drawn as u8, size)
    }

    /// Schedules each mode's first periodic pass.
    pub(super) fn start_mode_ticks(&mut self) {
        let m = self.modes.as_ref().expect("modes are on");
        let ticks: Vec<_> = m.schedules.iter().map(|s| s.tick).collect();
        for (i, tick) in ticks.into_iter().enumerate() {
            if let Some(tick) = tick {
                self.queue.schedule(
                    crate::model::SimTime::ZERO + tick,
                    Event::ModeTick(i as u16),
                );
            }
        }
    }

    pub(super) fn on_mode_tick(&mut self, mode: u16) {
        let m = usize::from(mode);
        self.run_mode(m, Trigger::Tick);
        let tick = self.modes.as_ref().expect("modes are on").schedules[m].tick;
        if let Some(tick) = tick {
            self.queue.schedule(self.now + tick, Event::ModeTick(mode));
        }
    }

    /// Queues ticket `id` (already in the main pool) in its modes and offers
    /// it to each mode whose policy runs on joins, until one matches it.
    pub(super) fn modes_join(&mut self, id: TicketId) {
        let m = self.modes.as_mut().expect("modes are on");
        let drawn = m.pending.take();
        let t = self.pool.get(id).expect("just enqueued");
        if !m.admit(t, drawn) {
            // No mode's teams take this party (a returning party always fits
            // the mode it played, so this is a guard, not a path).
            let t = self.pool.remove(id).expect("just enqueued");
            for p in &t.players {
                self.busy[p.index()] = false;
            }
            self.stats.arrivals_blocked += 1;
            return;
        }
        let order = std::mem::take(&mut m.order);
        for &mode in &order {
            if !self.pool.contains(id) {
                // Matched by a mode offered it before.
                break;
            }
            let on_join =
                self.modes.as_ref().expect("modes are on").schedules[usize::from(mode)].on_join;
            if on_join {
                self.run_mode(usize::from(mode), Trigger::Join(id));
            }
        }
        self.modes.as_mut().expect("modes are on").order = order;
    }

    /// Runs mode `m`'s policy on its own pool and forms what it proposes in
    /// that mode's format.
    fn run_mode(&mut self, m: usize, trigger: Trigger) {
        let mut proposals = std::mem::take(&mut self.proposals);
        proposals.clear();
        let md = self.modes.as_mut().expect("modes are on");
        let format = md.config.modes[m].format;
        let view = PoolView {
            now: self.now,
            pool: &md.pools[m],
            players: &self.players,
            format,
        };
        md.policies[m].propose(&view, trigger, &mut self.rng_policy, &mut proposals);
        md.current = Some(m as u8);
        let base = std::mem::replace(&mut self.format, format);
        for p in proposals.drain(..) {
            self.form(p);
        }
        self.format = base;
        self.modes.as_mut().expect("modes are on").current = None;
        self.proposals = proposals;
    }

    /// Whether a proposal of the mode being run names only tickets waiting
    /// in that mode: the engine's own guard, whatever the policy said.
    pub(super) fn mode_allows(&self, tickets: &[TicketId]) -> bool {
        let md = self.modes.as_ref().expect("modes are on");
        md.current
            .is_some_and(|m| md.allows(usize::from(m), tickets))
    }

    /// The mode layer's part of a ticket's leaving: out of every mode's
    /// pool, and the mode it is counted in (the one matching it now, else
    /// the one it drew).
    #[cold]
    #[inline(never)]
    pub(super) fn leave_modes(&mut self, id: TicketId, end: TicketEnd) -> Option<TicketMode> {
        let md = self.modes.as_mut().expect("modes are on");
        let q = md.remove(id)?;
        let mode = match (end, md.current) {
            (TicketEnd::Matched(_), Some(m)) => m,
            _ => q.drawn,
        };
        Some(TicketMode {
            mode,
            multi: q.multi(),
        })
    }

    /// Every mode's policy hears of every match: what a policy remembers
    /// (recent opponents, games by rating) is about players, whom all modes share.
    pub(super) fn modes_formed(&mut self, formed: &crate::policy::FormedMatch<'_>) {
        let md = self.modes.as_mut().expect("modes are on");
        md.policies.iter_mut().for_each(|p| p.on_formed(formed));
    }
}
