//! Arrivals from a trace instead of the Poisson process: each traced ticket
//! joins at its time with its abandon time, and a ticket whose player is
//! still queued or playing then waits until all its members are free.

use super::{Event, Simulation, ARRIVALS};
use crate::engine::regions::{Geography, RegionsConfig};
use crate::engine::trace::Trace;
use crate::model::{Player, PlayerId, Rating};

/// The players a trace names, in order of first appearance, each starting
/// at their first row's rating (the rating system's other fields as `initial`
/// has them) with the trace's true skill.
pub(super) fn players(trace: &Trace, initial: Rating) -> Vec<Player> {
    crate::engine::memory::collect_on_huge_pages(trace.players.iter().enumerate().map(|(i, p)| {
        let rating = Rating {
            value: p.rating,
            ..initial
        };
        Player::new(PlayerId(i as u32), p.true_skill, rating)
    }))
}

/// Gives the players the roles the trace names, after `roles::draw` drew
/// everyone's (so the population stream stays where it was).
pub(super) fn apply_roles(players: &mut [Player], trace: &Trace) {
    for (p, t) in players.iter_mut().zip(&trace.players) {
        if let Some(r) = t.roles {
            p.main_role = r.main;
            p.roles = r.mask;
        }
    }
}

/// Every player's home and pings with the trace's in place of the draws:
/// a traced home replaces the drawn one (pings then drawn around it), and
/// traced pings replace the drawn pings.
pub(super) fn geography(
    config: &RegionsConfig,
    trace: &Trace,
    rng: &mut rand_pcg::Pcg64,
) -> Geography {
    let mut geo =
        Geography::draw_with_homes(config, trace.players.len(), rng, |i| trace.players[i].home);
    for (i, t) in trace.players.iter().enumerate() {
        if !t.pings_ms.is_empty() {
            geo.set_pings(PlayerId(i as u32), &t.pings_ms);
        }
    }
    geo
}

impl Simulation<'_> {
    /// Schedules the next traced ticket, as the Poisson process schedules
    /// its next arrival: when the previous one is handled, so events due at
    /// the same millisecond keep the order a run of the same tickets had.
    pub(super) fn schedule_trace_arrival(&mut self) {
        let Some(trace) = &self.trace else { return };
        if let Some(t) = trace.tickets.get(self.trace_next) {
            if t.at <= self.world.end {
                let at = t.at.max(self.world.now);
                self.queue.schedule_in(ARRIVALS, at, Event::Arrival);
            }
        }
    }

    pub(super) fn on_trace_arrival(&mut self) {
        let row = self.trace_next as u32;
        self.trace_next += 1;
        self.schedule_trace_arrival();
        // A party no team could take (two tank-only players where a team
        // has one tank) would wait forever: turned away, as a drawn one is.
        let trace = self.trace.as_ref().expect("replaying a trace");
        let members = &trace.tickets[row as usize].members;
        if !crate::engine::roles::party_fits(&self.world.players, members, self.world.format) {
            self.stats.arrivals_blocked += 1;
            return;
        }
        if self.held.is_empty() && self.members_free(row) {
            self.enqueue_traced(row);
        } else {
            // Busy, or behind an earlier held ticket of the same player:
            // it joins when its members are free, in trace order.
            self.held.push(row);
            self.release_held();
            if self.held.last() == Some(&row) {
                self.stats.trace_tickets_delayed += 1;
            }
        }
    }

    fn members_free(&self, row: u32) -> bool {
        let trace = self.trace.as_ref().expect("replaying a trace");
        trace.tickets[row as usize]
            .members
            .iter()
            .all(|p| !self.world.busy[p.index()])
    }

    fn enqueue_traced(&mut self, row: u32) {
        let trace = self.trace.as_ref().expect("replaying a trace");
        let t = &trace.tickets[row as usize];
        let (members, patience, requeue) = (t.members.clone(), t.abandon_after, t.requeue);
        self.enqueue(members, patience, requeue);
    }

    /// Enqueues the held tickets whose members are all free now, oldest
    /// first; one still busy keeps its place without blocking the others.
    pub(super) fn release_held(&mut self) {
        let mut i = 0;
        while i < self.held.len() {
            let row = self.held[i];
            let trace = self.trace.as_ref().expect("replaying a trace");
            let members = &trace.tickets[row as usize].members;
            // An earlier held ticket sharing a member goes first.
            let blocked = self.held[..i].iter().any(|&r| {
                trace.tickets[r as usize]
                    .members
                    .iter()
                    .any(|p| members.contains(p))
            });
            if !blocked && self.members_free(row) {
                self.held.remove(i);
                self.enqueue_traced(row);
            } else {
                i += 1;
            }
        }
    }

    /// Whether this run replays a trace (then the Poisson process is off).
    pub(super) fn replaying(&self) -> bool {
        self.trace.is_some()
    }
}
