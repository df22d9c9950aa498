//! The state every part of a run reads: the clock, the players, the pool
//! and the running matches. Kept apart from the event loop and the
//! optional features so a feature (a layer, `layer.rs`) can be handed the
//! world alone, with the loop's own machinery (queue, streams, plug-ins)
//! out of its reach.

use super::sim::Active;
use crate::model::{MatchId, Party, Player, SimTime};
use crate::policy::MatchFormat;
use crate::pool::Pool;

/// The world of one run. The engine changes it in event order; a layer
/// may change it only inside a hook, as that hook's contract allows.
#[doc(hidden)]
pub struct World {
    /// The simulated time of the event being handled.
    pub now: SimTime,
    /// The run's end: nothing is scheduled after it.
    pub end: SimTime,
    /// Tickets and matches before this are the warm-up's, counted apart.
    pub warmup_end: SimTime,
    /// The match format in force: `[match]`'s, or the mode's while a mode's
    /// pass forms its matches (`[modes]`).
    pub format: MatchFormat,
    /// Every player, indexed by `PlayerId`.
    pub players: Vec<Player>,
    /// Queued, playing, or thinking before a requeue: not free to arrive afresh.
    pub busy: Vec<bool>,
    /// Each player's previous match, for the rematch measure.
    pub last_match: Vec<Option<MatchId>>,
    /// The waiting tickets.
    pub pool: Pool,
    /// Running matches (between forming and ending), by slot; `free` lists
    /// the slots to reuse.
    pub active: Vec<Active>,
    /// Slots of `active` free for the next match.
    pub free: Vec<u32>,
    /// Players in running matches, for the queue samples.
    pub in_matches: usize,
    /// Match ends so far that rated a player who had left the match
    /// (`PoolView::rerated`).
    pub rerated: u64,
    /// Parties thinking before they queue again; `returning_free` lists
    /// the slots to reuse.
    pub returning: Vec<Party>,
    /// Slots of `returning` free for the next party.
    pub returning_free: Vec<u32>,
}
