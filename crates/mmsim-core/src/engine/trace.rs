//! A captured queue as the engine replays it: players with their first
//! rating and true skill, and tickets with their arrival time, members and
//! abandon time, and, when the trace has them, their home region, pings and
//! roles. Read from a file by `scenario::trace`; written back out of any run
//! through a `TicketLog`, so a run can be replayed under another policy.

use crate::model::{Party, PlayerId, SimDuration, SimTime, TicketId};

/// One player of a trace, in order of first appearance (its `PlayerId`).
#[derive(Clone, Debug, PartialEq)]
pub struct TracePlayer {
    /// The rating on the player's first row: where both their solo and
    /// party ratings start.
    pub rating: f64,
    /// The player's hidden skill, as the trace gives it.
    pub true_skill: f64,
    /// The home region (index into `[regions]` homes) the trace gives;
    /// `None`: drawn by the scenario's shares.
    pub home: Option<u16>,
    /// The ping to each data centre, in `[regions]` order, the trace gives;
    /// empty: drawn around the home's medians.
    pub pings_ms: Vec<u16>,
    /// The roles the trace gives; `None`: drawn by `[roles]`.
    pub roles: Option<TraceRoles>,
}

/// A player's roles as a trace gives them: the first listed is the main role.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TraceRoles {
    /// Index of the main role in `[roles] names`.
    pub main: u8,
    /// Every accepted role's bit, the main one's included.
    pub mask: u8,
}

/// One ticket of a trace: a party joining the queue.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceTicket {
    /// When the party joins the queue.
    pub at: SimTime,
    /// Its players.
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
    /// Every player the trace names, by id.
    pub players: Vec<TracePlayer>,
    /// Every ticket, in arrival order.
    pub tickets: Vec<TraceTicket>,
}

/// One member of a ticket as it joined: the rating the queue used for them
/// (solo or party rating, as the ticket's size asks), their true skill and,
/// in a run with `[regions]` or `[roles]`, their home, pings and roles.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LoggedMember<'a> {
    /// The member's id.
    pub player: PlayerId,
    /// The rating the queue used for them.
    pub rating: f64,
    /// Their hidden skill.
    pub true_skill: f64,
    /// Home region index; `None` without `[regions]`.
    pub home: Option<u16>,
    /// Ping to each data centre; empty without `[regions]`.
    pub pings_ms: &'a [u16],
    /// Main role and accepted roles; `None` without `[roles]`.
    pub roles: Option<TraceRoles>,
}

/// Receives every ticket as it joins the queue, with what the tables do not
/// keep (every member, and the patience the run drew even for tickets that
/// matched first), so `mmsim trace` can write a run out as a trace.
pub trait TicketLog {
    /// Called once per ticket as it joins: `members` as they joined, and the patience drawn for it (`None`: waits until matched).
    fn enqueued(
        &mut self,
        at: SimTime,
        ticket: TicketId,
        members: &[LoggedMember<'_>],
        patience: Option<SimDuration>,
        requeue: bool,
    );
}
