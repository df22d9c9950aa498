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
            self.queue
                .schedule(self.world.now + tick, Event::ModeTick(mode));
        }
    }

    /// Queues ticket `id` (already in the main pool) in its modes and offers
    /// it to each mode whose policy runs on joins, until one matches it.
    pub(super) fn modes_join(&mut self, id: TicketId) {
        let m = self.modes.as_mut().expect("modes are on");
        let drawn = m.pending.take();
        let t = self.world.pool.get(id).expect("just enqueued");
        // The ticket's rating on each ladder, as `enqueue` rates it on the first.
        let mut ratings: smallvec::SmallVec<[f64; 4]> = smallvec::smallvec![t.rating];
        let solo = t.size() == 1;
        for copy in &m.ladders {
            let sum: f64 = t
                .players
                .iter()
                .map(|p| {
                    let pl = &copy[p.index()];
                    let r = if solo { &pl.rating } else { &pl.party_rating };
                    self.parts.rating.current(r, self.world.now).value
                })
                .sum();
            ratings.push(sum / t.size() as f64);
        }
        let admitted = m.admit(t, drawn, &self.world.players, &ratings);
        if m.refused != 0 && self.world.now >= self.world.warmup_end {
            self.collector.modes_refused(m.refused);
        }
        if !admitted {
            // No mode's teams take this party, or every mode that does is
            // locked to one of its members.
            let t = self.world.pool.remove(id).expect("just enqueued");
            for p in &t.players {
                self.world.busy[p.index()] = false;
            }
            self.stats.arrivals_blocked += 1;
            return;
        }
        let order = std::mem::take(&mut m.order);
        for &mode in &order {
            if !self.world.pool.contains(id) {
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
        let ladder = md.ladder_of(m);
        let crate::engine::modes::Modes {
            pools,
            policies,
            ladders,
            ..
        } = &mut **md;
        // The mode's policy sees its own ladder's ratings.
        let players = if ladder == 0 {
            &self.world.players
        } else {
            &ladders[ladder - 1]
        };
        let view = PoolView {
            now: self.world.now,
            pool: &pools[m],
            players,
            format,
            rerated: self.world.rerated,
        };
        policies[m].propose(&view, trigger, &mut self.rng_policy, &mut proposals);
        md.current = Some(m as u8);
        let base = std::mem::replace(&mut self.world.format, format);
        for p in proposals.drain(..) {
            self.form(p);
        }
        self.world.format = base;
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

    /// The players as the ladder of the mode being run sees them: the
    /// engine's own registry outside a mode's pass or without ladders.
    pub(super) fn rated_players(&self) -> &[crate::model::Player] {
        rated(&self.modes, &self.world.players)
    }

    /// Each ladder's players and figures at the end of the run, the
    /// figures handed to the collector; empty without separate ladders.
    pub(super) fn finish_ladders(&mut self) -> Vec<crate::engine::modes::LadderPlayers> {
        let Some(md) = self.modes.as_mut() else {
            return Vec::new();
        };
        if md.played.is_empty() {
            return Vec::new();
        }
        let mut out = Vec::with_capacity(md.config.ladders.len());
        let mut figures = Vec::with_capacity(md.config.ladders.len());
        let copies = std::mem::take(&mut md.ladders);
        for (l, name) in md.config.ladders.iter().enumerate() {
            let players = if l == 0 {
                self.world.players.clone()
            } else {
                copies[l - 1].clone()
            };
            let modes: Vec<usize> = (0..md.config.modes.len())
                .filter(|&m| md.ladder_of(m) == l)
                .collect();
            figures.push(crate::metrics::modes::LadderFigures::new(
                name.clone(),
                modes
                    .iter()
                    .map(|&m| md.config.modes[m].name.clone())
                    .collect(),
                modes,
                &players,
                &md.played[l],
            ));
            out.push(crate::engine::modes::LadderPlayers {
                name: name.clone(),
                players,
                played: md.played[l].clone(),
            });
        }
        md.ladders = copies;
        self.collector.modes_ladders_end(figures);
        out
    }

    /// Every mode's policy hears of every match: what a policy remembers
    /// (recent opponents, games by rating) is about players, whom all modes share.
    pub(super) fn modes_formed(&mut self, formed: &crate::policy::FormedMatch<'_>) {
        let md = self.modes.as_mut().expect("modes are on");
        md.policies.iter_mut().for_each(|p| p.on_formed(formed));
    }
}

/// `Simulation::rated_players` over the two fields it reads, for callers
/// that hold another of the simulation's fields mutably.
pub(super) fn rated<'a>(
    modes: &'a Option<Box<crate::engine::modes::Modes>>,
    base: &'a [crate::model::Player],
) -> &'a [crate::model::Player] {
    match modes {
        Some(md) => match md.current {
            Some(m) => md.registry(md.ladder_of(usize::from(m)), base),
            None => base,
        },
        None => base,
    }
}
