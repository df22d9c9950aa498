//! Matchmaking policies: which waiting tickets form a match. A policy reads
//! the pool and proposes; the engine checks and forms. Adding a policy means
//! one file here and one arm in `PolicyConfig`.

mod fixed_limit;
mod quality;
mod widening;

pub use fixed_limit::{FixedLimit, FixedLimitParams};
pub use quality::{Quality, QualityParams, QualityWeights};
pub use widening::{Widening, WideningParams};

use crate::engine::{Pool, WaitingTicket};
use crate::model::{MatchId, ParamError, Player, SimDuration, SimTime, TicketId};
use rand_pcg::Pcg64;
use serde::{Deserialize, Serialize};

/// What a policy sees: the pool, the players, the format. Read-only.
pub struct PoolView<'a> {
    pub now: SimTime,
    pub pool: &'a Pool,
    pub players: &'a [Player],
    pub format: MatchFormat,
}

/// Teams per match and players per team.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatchFormat {
    pub teams: usize,
    pub team_size: usize,
}

impl MatchFormat {
    pub fn players(&self) -> usize {
        self.teams * self.team_size
    }
}

/// Why the engine is calling the policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trigger {
    /// This ticket just joined the pool.
    Join(TicketId),
    /// The periodic tick or re-check.
    Tick,
}

/// When the engine should call a policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Schedule {
    /// Call with `Trigger::Join` whenever a ticket joins.
    pub on_join: bool,
    /// Call with `Trigger::Tick` at this interval (first call one interval in).
    pub tick: Option<SimDuration>,
}

/// A match a policy wants formed.
#[derive(Clone, Debug, PartialEq)]
pub struct Proposal {
    /// The tickets of the match; their players must fill the format exactly.
    pub tickets: Vec<TicketId>,
    /// Which tickets play together, if the policy decided it; otherwise the
    /// scenario's team-formation method splits them.
    pub teams: Option<Vec<Vec<TicketId>>>,
    /// Scales the rating change of this match (1.0 = a normal match).
    pub rating_weight: f64,
}

impl Proposal {
    pub fn new(tickets: Vec<TicketId>) -> Self {
        Proposal {
            tickets,
            teams: None,
            rating_weight: 1.0,
        }
    }
}

/// A formed match as policies hear of it.
#[derive(Clone, Debug)]
pub struct FormedMatch<'a> {
    pub id: MatchId,
    pub now: SimTime,
    pub tickets: &'a [WaitingTicket],
}

/// A matchmaking policy. The engine calls `propose` when its `schedule` says
/// (a ticket joined, or a tick); the policy pushes proposals whose tickets
/// are waiting and disjoint, best first. Randomness comes only from `rng`,
/// the run's policy stream. It never mutates the world: the engine forms
/// what it accepts and tells the policy through `on_formed`.
pub trait Policy: Send {
    fn schedule(&self) -> Schedule;

    fn propose(
        &mut self,
        view: &PoolView<'_>,
        trigger: Trigger,
        rng: &mut Pcg64,
        out: &mut Vec<Proposal>,
    );

    /// Called after each match the engine formed, for policies that remember
    /// (rematch avoidance, bracket controllers).
    fn on_formed(&mut self, _formed: &FormedMatch<'_>) {}
}

/// Whether a policy reacts to each join or only works on a timer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Re-check when the queue changes (and on `recheck` where windows widen).
    #[default]
    Event,
    /// Only on a fixed tick.
    Tick,
}

/// The `[policy]` section of a scenario, tagged by `kind`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum PolicyConfig {
    FixedLimit(FixedLimitParams),
    Widening(WideningParams),
    Quality(QualityParams),
}

impl PolicyConfig {
    pub fn validate(&self) -> Result<(), ParamError> {
        match self {
            PolicyConfig::FixedLimit(p) => p.validate(),
            PolicyConfig::Widening(p) => p.validate(),
            PolicyConfig::Quality(p) => p.validate(),
        }
    }

    pub fn build(&self) -> Box<dyn Policy> {
        match self {
            PolicyConfig::FixedLimit(p) => Box::new(FixedLimit::new(p.clone())),
            PolicyConfig::Widening(p) => Box::new(Widening::new(p.clone())),
            PolicyConfig::Quality(p) => Box::new(Quality::new(p.clone())),
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            PolicyConfig::FixedLimit(_) => "fixed-limit",
            PolicyConfig::Widening(_) => "widening",
            PolicyConfig::Quality(_) => "quality",
        }
    }
}

/// One line per policy for `mmsim policies`: name, source, parameters.
pub const CATALOGUE: &[(&str, &str, &str)] = &[
    (
        "fixed-limit",
        "gamedev thread, first post: pair tickets whose ratings differ by at most `limit` (150)",
        "limit, mode, tick",
    ),
    (
        "widening",
        "gamedev thread, first replies: the limit grows with time in queue, clamped; both must accept",
        "base, rate_per_s, max, mode, recheck, tick",
    ),
    (
        "quality",
        "Dota 2 post: weighted score of the seven criteria; form when it passes a threshold that falls with wait",
        "threshold, threshold_floor, threshold_fall_per_s, weights.*, balance_tolerance, skill_range, experience_range, top_range, wait_scale, neighbours, tick, party_adjust.*",
    ),
];

pub(crate) fn check_tick(key: &str, d: SimDuration) -> Result<(), ParamError> {
    if d.is_zero() {
        Err(ParamError::new(key, "must be longer than 0s, e.g. \"1s\""))
    } else {
        Ok(())
    }
}

pub(crate) fn check_non_negative(key: &str, v: f64) -> Result<(), ParamError> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(ParamError::new(
            key,
            format!("must be zero or more, got {v}"),
        ))
    }
}

/// Fills a match seeded by `seed`: takes the nearest-rated tickets within
/// `max_distance` that `accept` allows until the format's player count is
/// reached exactly, skipping parties too big for the room left and parties
/// that would leave the chosen set impossible to split into teams (three
/// trios cannot make two teams of five). Returns the tickets, seed first, or
/// `None` if the pool cannot fill it. Cost: O(log n + k) for the k tickets
/// inside the window, plus a small exact-fill check per party of two or more.
pub fn fill_from_nearest(
    view: &PoolView<'_>,
    seed: &WaitingTicket,
    max_distance: f64,
    mut accept: impl FnMut(f64, &WaitingTicket) -> bool,
) -> Option<Vec<TicketId>> {
    let need = view.format.players();
    if seed.size() > need || seed.size() > view.format.team_size {
        return None;
    }
    let mut room = need - seed.size();
    let mut chosen = vec![seed.id];
    let mut sizes = vec![seed.size()];
    if room == 0 {
        return Some(chosen);
    }
    for (distance, t) in view.pool.nearest(seed.rating, seed.id) {
        if distance > max_distance {
            break;
        }
        if t.size() <= room
            && t.size() <= view.format.team_size
            && accept(distance, t)
            && splittable_with(&mut sizes, t.size(), room, view.format)
        {
            chosen.push(t.id);
            room -= t.size();
            if room == 0 {
                return Some(chosen);
            }
        }
    }
    None
}

/// Whether the parties of `sizes` plus one of `size` can still go into the
/// format's teams once the remaining `room - size` places are filled. Solo
/// players fit any gap, so padding with solos asks exactly "can these parties
/// be packed"; on the last place it asks for an exact split. Leaves `sizes`
/// with the new party pushed when true.
pub fn splittable_with(
    sizes: &mut Vec<usize>,
    size: usize,
    room: usize,
    format: MatchFormat,
) -> bool {
    sizes.push(size);
    // Adding a solo never breaks a packing that had a solo's room to spare.
    let ok = size == 1 || {
        let mut padded = sizes.clone();
        padded.extend(std::iter::repeat_n(1, room - size));
        crate::teams::can_fill(&padded, &vec![format.team_size; format.teams])
    };
    if !ok {
        sizes.pop();
    }
    ok
}
