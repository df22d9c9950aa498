//! A captured queue as the engine replays it: players with their first
//! rating and true skill, and tickets with their arrival time, members and
//! abandon time. Read from a file by `scenario::trace`; written back out of
//! any run through a `TicketLog`, so a run can be replayed under another policy.

use crate::model::{Party, PlayerId, SimDuration, SimTime, TicketId};

/// One player of a trace, in order of first appearance (its `PlayerId`).
#[derive(Clone, Debug, PartialEq)]
pub struct TracePlayer {
    /// The rating on the player's first row: where both their solo and
    /// party ratings start.
    pub rating: f64,
    pub true_skill: f64,
}

/// One ticket of a trace: a party joining the queue.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceTicket {
    pub at: SimTime,
    pub members: Party,
    /// How long it waits before giving up; `None`: until matched or the run ends.
    pub abandon_after: Option<SimDuration>,
    /// Whether the trace marks it as a return after a match (kept for the
    /// tables' `requeue` column; the replay treats both kinds alike).
    pub requeue: bool,
}

/// A whole trace, tickets sorted by arrival time (stably: equal times keep
/// the file's order).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Trace {
    pub players: Vec<TracePlayer>,
    pub tickets: Vec<TraceTicket>,
}

/// One member of a ticket as it joined: the rating the queue used for them
/// (solo or party rating, as the ticket's size asks) and their true skill.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LoggedMember {
    pub player: PlayerId,
    pub rating: f64,
    pub true_skill: f64,
}

/// Receives every ticket as it joins the queue, with what the tables do not
/// keep (every member, and the patience the run drew even for tickets that
/// matched first), so `mmsim trace` can write a run out as a trace.
pub trait TicketLog {
    fn enqueued(
        &mut self,
        at: SimTime,
        ticket: TicketId,
        members: &[LoggedMember],
        patience: Option<SimDuration>,
        requeue: bool,
    );
}
