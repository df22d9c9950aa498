//! The one way an optional feature plugs into the event loop: a layer hears
//! the run's moments through the hooks of one small trait, so a new feature
//! adds a layer instead of a branch in `form` or `on_match_end`, and a run
//! without optional features pays one empty-list check per moment.

use super::regions::Regions;
use super::sim::backfill::Backfills;
use super::world::World;
use crate::metrics::explain::BackfillJoin;
use crate::metrics::{Collector, TicketEnd};
use crate::model::{PlayerId, SimDuration, SimTime, TicketId};
use crate::policy::{Policy, Trigger};
use crate::pool::WaitingTicket;

/// What a layer may read of the parts of the engine that are not layers
/// (yet): the scenario's policy (for what it can say of its rules), and
/// the regional and backfill features, which still live in the loop.
#[derive(Clone, Copy)]
pub(crate) struct Peers<'a> {
    /// The scenario's policy (one instance; with `[regions]` or `[modes]`
    /// its instances share its parameters).
    pub policy: &'a dyn Policy,
    /// The regional feature, with `[regions]`.
    pub regions: Option<&'a Regions>,
    /// Leaves and backfill, with `[backfill]`.
    pub backfill: Option<&'a Backfills>,
    /// The data centre hosting the match being formed, while a regional
    /// pass forms it.
    pub host: Option<u16>,
}

/// A match that has just ended, as `Layer::match_ended` hears of it.
pub(crate) struct Ended<'a> {
    /// Its slot in `World::active` (still holding its members).
    pub slot: usize,
    /// The winning team, after any redraw.
    pub winner: usize,
    /// Per member (in `Active::members` order): whether they left it
    /// before the end (`[backfill]`); empty when nobody could leave.
    pub left: &'a [bool],
    /// P(team 0 wins) from true skill, as played.
    pub p_team0: Option<f64>,
    /// Whether it formed in the warm-up.
    pub in_warmup: bool,
}

/// A layer's answer to a ready check (`Layer::ready_check`).
pub(crate) enum Check {
    /// Everyone accepted, the last answer after this.
    Pass(SimDuration),
    /// Someone declined: the engine holds the match's tickets out of the
    /// pool until the last answer, `after`; then the tickets flagged as
    /// declining leave (`TicketEnd::Declined`) and their parties queue
    /// again `penalty` later, and the others return to the pool, keeping
    /// their enqueue time if `keep_wait`.
    Fail {
        after: SimDuration,
        keep_wait: bool,
        penalty: SimDuration,
    },
}

/// A backfill joiner that declined its check (`Layer::joiner_check`).
pub(crate) struct Declined {
    /// When its last answer came, after the ask: the slot is offered again then.
    pub answered: SimDuration,
    /// Its party queues again this long after the answer.
    pub penalty: SimDuration,
}

/// An optional feature of the run, called by the engine at fixed moments.
///
/// Who calls: only `engine::sim` (the event loop), once per moment for
/// each layer, in the order the run built them (`Simulation::new`). Every
/// hook has a no-op default; a layer implements the moments it cares about.
///
/// What a layer may do: change its own state, draw from the random stream
/// it owns (split from the seed for its feature alone, so a run without it
/// draws every other number as before), write to the collector, and change
/// the world only where a hook hands it `&mut World` and its doc allows.
///
/// What a layer may not do: draw from any other stream, schedule events,
/// form or cancel matches, insert or remove tickets, or depend on how many
/// other layers there are: the engine's core (forming, match end, requeue)
/// reads only what the hooks return.
pub(crate) trait Layer {
    /// A fresh party drawn from the population (kept by the hourly rate,
    /// before the busy check): false turns it away with no ticket, and the
    /// layers after it are not asked.
    fn admits(&mut self, _world: &World, _out: &mut Collector<'_>, _members: &[PlayerId]) -> bool {
        true
    }

    /// A policy pass has ended (every proposal formed or refused): on a
    /// join, `Trigger::Join` names the ticket that joined.
    fn after_pass(
        &mut self,
        _world: &World,
        _out: &mut Collector<'_>,
        _peers: Peers<'_>,
        _trigger: Trigger,
    ) {
    }

    /// May the match of `teams` (its tickets still in the pool, every
    /// engine check passed) form, and after how long? A layer that asks
    /// pushes one flag per ticket (in `teams` order) into `declined`, which
    /// the engine hands it empty. The first layer that fails the check
    /// decides, and the layers after it are not asked; otherwise the match
    /// starts after the longest delay.
    fn ready_check(
        &mut self,
        _world: &World,
        _out: &mut Collector<'_>,
        _teams: &[Vec<TicketId>],
        _declined: &mut Vec<bool>,
    ) -> Check {
        Check::Pass(SimDuration::ZERO)
    }

    /// A waiting ticket of `size` players is about to fill an open slot of
    /// a running match (`[backfill]`; `in_warmup`: of a warm-up match):
    /// `Some` when it declines, and the engine sends it away as a declined
    /// ticket. The first layer that declines decides.
    fn joiner_check(
        &mut self,
        _world: &World,
        _out: &mut Collector<'_>,
        _size: usize,
        _in_warmup: bool,
    ) -> Option<Declined> {
        None
    }

    /// A match is about to form from `teams` (its ready check passed): its
    /// tickets are still in the pool.
    fn forming(
        &mut self,
        _world: &World,
        _out: &mut Collector<'_>,
        _peers: Peers<'_>,
        _teams: &[Vec<TicketId>],
    ) {
    }

    /// One ticket of a forming match, just out of the pool, its row written.
    fn ticket_matched(&mut self, _world: &World, _out: &mut Collector<'_>, _t: &WaitingTicket) {}

    /// Tickets step out of the pool without leaving the queue (`held`: a
    /// failed ready check holds them until its cancel) or come back to it
    /// (not `held`, before their wait may restart).
    fn tickets_held(
        &mut self,
        _world: &World,
        _out: &mut Collector<'_>,
        _tickets: &[&WaitingTicket],
        _held: bool,
    ) {
    }

    /// `t` is about to join a running match by backfill, into `slot`.
    fn backfill_join(&mut self, _t: &WaitingTicket, _slot: &BackfillJoin) {}

    /// A ticket leaves the queue (matched, abandoned, declined, or still
    /// waiting at the run's end), before its row goes to the collector.
    fn ticket_left(
        &mut self,
        _world: &World,
        _out: &mut Collector<'_>,
        _t: &WaitingTicket,
        _left: SimTime,
        _end: TicketEnd,
    ) {
    }

    /// A match has ended, its ratings and records updated, before its
    /// parties decide whether to queue again. A layer may change the
    /// players' records and `busy`, and stop members from queuing again:
    /// `quit` is empty or one flag per member (`Active::members` order); a
    /// layer that stops someone first resizes it to the members, then sets
    /// their flags (never clears another layer's).
    fn match_ended(
        &mut self,
        _world: &mut World,
        _out: &mut Collector<'_>,
        _ended: &Ended<'_>,
        _quit: &mut Vec<bool>,
    ) {
    }

    /// The run has ended: every ticket has left and every running match is
    /// handed over.
    fn finish(&mut self, _world: &World, _out: &mut Collector<'_>) {}
}

#[cfg(test)]
mod tests {
    /// The optional fields `Simulation` may hold: the features not yet
    /// moved behind `Layer` (ARCHITECTURE.md says how each moves), the
    /// trace, the ticket log and the data centre of the match being formed.
    const NOT_YET_LAYERS: [&str; 6] = ["trace", "log", "bf", "regions", "host", "modes"];

    /// A new feature is a layer, not an `Option` field of the loop with a
    /// branch at every moment it cares about: `Simulation` gains no
    /// optional field beyond those of the features not moved yet.
    #[test]
    fn simulation_grows_no_feature_fields() {
        let src = include_str!("sim.rs");
        let start = src
            .find("pub struct Simulation<'r> {")
            .expect("sim.rs defines Simulation");
        let body = &src[start..start + src[start..].find("\n}\n").expect("its end")];
        let optional: Vec<&str> = body
            .lines()
            .filter_map(|l| {
                let l = l.trim().trim_start_matches("pub ");
                let (name, ty) = l.split_once(':')?;
                ty.trim().starts_with("Option<").then_some(name.trim())
            })
            .collect();
        let extra: Vec<&&str> = optional
            .iter()
            .filter(|f| !NOT_YET_LAYERS.contains(f))
            .collect();
        assert!(
            extra.is_empty(),
            "Simulation has optional fields {extra:?}: an optional feature is a \
             Layer (engine/layer.rs), pushed in Simulation::new, not a field \
             with branches in the loop"
        );
        assert!(
            optional.len() >= 4,
            "the reader lost Simulation's fields: {optional:?}"
        );
    }
}
