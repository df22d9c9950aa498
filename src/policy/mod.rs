//! Matchmaking policies: which waiting tickets form a match. A policy reads
//! the pool and proposes; the engine checks and forms. Adding a policy means
//! one file here and one arm in `PolicyConfig`.

mod batch;
mod brackets;
mod decay;
mod fixed_limit;
mod percent_widening;
mod percentile;
mod quality;
mod sweep_prune;
#[cfg(test)]
mod testkit;
#[cfg(test)]
mod tests;
mod weighted_score;
mod widening;

pub use batch::{draw_linear_rank, BatchParams, BatchWeighted};
pub use brackets::{AdaptiveBrackets, BracketController, BracketParams};
pub use decay::{DecayParams, VirtualDecay};
pub use fixed_limit::{FixedLimit, FixedLimitParams};
pub use percent_widening::{PercentWidening, PercentWideningParams};
pub use percentile::{PercentileParams, PercentileWindow, Percentiles};
pub use quality::{Quality, QualityParams, QualityWeights};
pub use sweep_prune::{SweepPrune, SweepPruneParams};
pub use weighted_score::{WeightedScore, WeightedScoreParams};
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

impl Schedule {
    /// The usual schedule of a window policy: in `event` mode react to every
    /// join and re-check every `recheck` (windows widen with time); in `tick`
    /// mode only tick.
    pub fn for_mode(mode: Mode, recheck: SimDuration, tick: SimDuration) -> Schedule {
        match mode {
            Mode::Event => Schedule {
                on_join: true,
                tick: Some(recheck),
            },
            Mode::Tick => Schedule {
                on_join: false,
                tick: Some(tick),
            },
        }
    }
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

    /// Called by the engine right after `ticket` joined the pool, before any
    /// `propose` that sees it, for policies that keep per-ticket state
    /// between passes. It may not propose: the engine decides when to ask.
    fn on_join(&mut self, _ticket: &WaitingTicket) {}

    /// Called by the engine right after `ticket` left the pool unmatched (its
    /// player gave up). Matched tickets are reported through `on_formed`.
    fn on_abandon(&mut self, _ticket: &WaitingTicket) {}
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
    PercentWidening(PercentWideningParams),
    PercentileWindow(PercentileParams),
    AdaptiveBrackets(BracketParams),
    BatchWeighted(BatchParams),
    WeightedScore(WeightedScoreParams),
    SweepPrune(SweepPruneParams),
    VirtualDecay(DecayParams),
    Quality(QualityParams),
}

impl PolicyConfig {
    pub fn validate(&self) -> Result<(), ParamError> {
        match self {
            PolicyConfig::FixedLimit(p) => p.validate(),
            PolicyConfig::Widening(p) => p.validate(),
            PolicyConfig::PercentWidening(p) => p.validate(),
            PolicyConfig::PercentileWindow(p) => p.validate(),
            PolicyConfig::AdaptiveBrackets(p) => p.validate(),
            PolicyConfig::BatchWeighted(p) => p.validate(),
            PolicyConfig::WeightedScore(p) => p.validate(),
            PolicyConfig::SweepPrune(p) => p.validate(),
            PolicyConfig::VirtualDecay(p) => p.validate(),
            PolicyConfig::Quality(p) => p.validate(),
        }
    }

    pub fn build(&self) -> Box<dyn Policy> {
        match self {
            PolicyConfig::FixedLimit(p) => Box::new(FixedLimit::new(p.clone())),
            PolicyConfig::Widening(p) => Box::new(Widening::new(p.clone())),
            PolicyConfig::PercentWidening(p) => Box::new(PercentWidening::new(p.clone())),
            PolicyConfig::PercentileWindow(p) => Box::new(PercentileWindow::new(p.clone())),
            PolicyConfig::AdaptiveBrackets(p) => Box::new(AdaptiveBrackets::new(p.clone())),
            PolicyConfig::BatchWeighted(p) => Box::new(BatchWeighted::new(p.clone())),
            PolicyConfig::WeightedScore(p) => Box::new(WeightedScore::new(p.clone())),
            PolicyConfig::SweepPrune(p) => Box::new(SweepPrune::new(p.clone())),
            PolicyConfig::VirtualDecay(p) => Box::new(VirtualDecay::new(p.clone())),
            PolicyConfig::Quality(p) => Box::new(Quality::new(p.clone())),
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            PolicyConfig::FixedLimit(_) => "fixed-limit",
            PolicyConfig::Widening(_) => "widening",
            PolicyConfig::PercentWidening(_) => "percent-widening",
            PolicyConfig::PercentileWindow(_) => "percentile-window",
            PolicyConfig::AdaptiveBrackets(_) => "adaptive-brackets",
            PolicyConfig::BatchWeighted(_) => "batch-weighted",
            PolicyConfig::WeightedScore(_) => "weighted-score",
            PolicyConfig::SweepPrune(_) => "sweep-prune",
            PolicyConfig::VirtualDecay(_) => "virtual-decay",
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
        "percent-widening",
        "gamedev thread, hplus0603's last reply: +/-5% of rating at entry, +5% every 10 s, no bound unless set; both must include each other",
        "step_pct, step, max_pct, mode, recheck, tick",
    ),
    (
        "percentile-window",
        "gamedev thread, Hazerider: the top 10% plays 5% to 15%; a window in population percentiles, re-sorted every `refresh`",
        "half_width_pct, widen_pct_per_s, max_half_width_pct, refresh, mode, recheck, tick",
    ),
    (
        "adaptive-brackets",
        "gamedev thread, the poster's suggestion 3: brackets split at 6 games an interval, merge after 2 intervals under 3; same or nearest bracket only",
        "min, brackets, width, min_width, split_at, merge_below, merge_after, interval, mode, tick",
    ),
    (
        "batch-weighted",
        "gamedev thread, the poster's suggestion 2: every 2 min each ticket draws an opponent, probability falling linearly with rating-difference rank, within a limit",
        "tick, limit, candidates, mode (tick only)",
    ),
    (
        "weighted-score",
        "gamedev thread, BTownTKD's weights (rating gap, both waits, fading recency of a pairing) and Hazerider's no repeat of the last X opponents",
        "rating_weight, wait_weight, recent_weight, fade_matches, avoid_last, threshold, candidates, mode, recheck, tick",
    ),
    (
        "sweep-prune",
        "gamedev thread, hplus0603: intervals on the rating axis growing with age, one sorted sweep per tick, each takes its best partner as it leaves",
        "base, rate_per_s, max, mode, recheck, tick",
    ),
    (
        "virtual-decay",
        "gamedev thread, the first reply: a waiting ticket's virtual rating decays toward the players below; the rating change is scaled by the decay used",
        "limit, rate_per_s, max_decay, min_weight, mode, recheck, tick",
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

/// Checks a window that starts at `base`, grows `rate_per_s` a second and
/// stops at `max` (widening, sweep-and-prune).
pub(crate) fn check_growing_window(base: f64, rate_per_s: f64, max: f64) -> Result<(), ParamError> {
    check_non_negative("base", base)?;
    check_non_negative("rate_per_s", rate_per_s)?;
    check_non_negative("max", max)?;
    if max < base {
        return Err(ParamError::new(
            "max",
            format!("must be at least `base` ({base}), got {max}"),
        ));
    }
    Ok(())
}

/// `min(base + rate_per_s * waited_s, max)` for ticket `t` at `now`.
pub(crate) fn growing_window(
    base: f64,
    rate_per_s: f64,
    max: f64,
    t: &WaitingTicket,
    now: SimTime,
) -> f64 {
    (base + rate_per_s * t.age_s(now)).min(max)
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

/// One matchmaking pass over the whole pool: the tickets sorted by rating,
/// with those taken earlier in the pass skipped in amortised near-constant
/// time (union-find with path halving, one structure per direction). A pass
/// that walks outward from every seed would otherwise re-walk the tickets
/// already matched around it, which late in a pass over a dense pool costs
/// far more than the matching itself. Building it is O(n log n).
pub struct FreePass<'a> {
    sorted: Vec<&'a WaitingTicket>,
    /// Positions in `sorted`, longest-waiting first.
    seeds: Vec<u32>,
    /// `up[i]`: a position >= i that may be free (n: none).
    up: Vec<u32>,
    /// `down[k]`: shifted by one, a position + 1 <= k that may be free (0: none).
    down: Vec<u32>,
    taken: Vec<bool>,
}

impl<'a> FreePass<'a> {
    pub fn new(pool: &'a Pool) -> Self {
        let sorted: Vec<&WaitingTicket> = pool.by_rating().collect();
        let n = sorted.len() as u32;
        let mut by_id: Vec<(TicketId, u32)> = sorted
            .iter()
            .enumerate()
            .map(|(i, t)| (t.id, i as u32))
            .collect();
        // Ticket ids grow with enqueue order: by id is longest-waiting first,
        // the order of `Pool::oldest_first`.
        by_id.sort_unstable();
        FreePass {
            seeds: by_id.into_iter().map(|(_, i)| i).collect(),
            up: (0..=n).collect(),
            down: (0..=n).collect(),
            taken: vec![false; n as usize],
            sorted,
        }
    }

    /// Number of tickets in the pass.
    pub fn len(&self) -> usize {
        self.sorted.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sorted.is_empty()
    }

    /// The `k`-th ticket by age (longest-waiting first) and its position, if
    /// it is still free.
    pub fn seed(&self, k: usize) -> Option<(usize, &'a WaitingTicket)> {
        let pos = self.seeds[k] as usize;
        (!self.taken[pos]).then(|| (pos, self.sorted[pos]))
    }

    pub fn ticket(&self, pos: usize) -> &'a WaitingTicket {
        self.sorted[pos]
    }

    /// Marks the ticket at `pos` as matched in this pass.
    pub fn take(&mut self, pos: usize) {
        if !self.taken[pos] {
            self.taken[pos] = true;
            self.up[pos] = pos as u32 + 1;
            self.down[pos + 1] = pos as u32;
        }
    }

    fn free_above(&mut self, pos: usize) -> Option<usize> {
        let mut i = pos + 1;
        while self.up[i] as usize != i {
            let next = self.up[self.up[i] as usize];
            self.up[i] = next;
            i = next as usize;
        }
        (i < self.sorted.len()).then_some(i)
    }

    fn free_below(&mut self, pos: usize) -> Option<usize> {
        let mut k = pos;
        while self.down[k] as usize != k {
            let next = self.down[self.down[k] as usize];
            self.down[k] = next;
            k = next as usize;
        }
        (k > 0).then(|| k - 1)
    }

    /// Visits the free tickets other than the one at `pos`, nearest rating
    /// first (ties to the lower rating), up to `max_distance`, until `visit`
    /// returns false.
    pub fn walk(
        &mut self,
        pos: usize,
        max_distance: f64,
        mut visit: impl FnMut(f64, usize, &'a WaitingTicket) -> bool,
    ) {
        let r = self.sorted[pos].rating;
        let (mut below, mut above) = (self.free_below(pos), self.free_above(pos));
        loop {
            let db = below.map(|b| r - self.sorted[b].rating);
            let da = above.map(|a| self.sorted[a].rating - r);
            let take_below = match (db, da) {
                (None, None) => return,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (Some(x), Some(y)) => x <= y,
            };
            let (d, at) = if take_below {
                (db.unwrap_or(f64::INFINITY), below.unwrap_or(0))
            } else {
                (da.unwrap_or(f64::INFINITY), above.unwrap_or(0))
            };
            if d > max_distance || !visit(d, at, self.sorted[at]) {
                return;
            }
            if take_below {
                below = self.free_below(at);
            } else {
                above = self.free_above(at);
            }
        }
    }

    /// `fill_from_nearest` over the free tickets of this pass: on success the
    /// tickets are taken and returned, seed first.
    pub fn fill(
        &mut self,
        format: MatchFormat,
        pos: usize,
        max_distance: f64,
        mut accept: impl FnMut(f64, &WaitingTicket) -> bool,
    ) -> Option<Vec<TicketId>> {
        let seed = self.sorted[pos];
        let need = format.players();
        if seed.size() > need || seed.size() > format.team_size {
            return None;
        }
        let mut room = need - seed.size();
        let mut chosen = vec![pos];
        // Party sizes chosen so far: a party joins only if the set can still
        // be split into full teams (as in `fill_from_nearest`).
        let mut sizes = vec![seed.size()];
        if room > 0 {
            self.walk(pos, max_distance, |d, at, t| {
                if t.size() <= room
                    && t.size() <= format.team_size
                    && accept(d, t)
                    && splittable_with(&mut sizes, t.size(), room, format)
                {
                    chosen.push(at);
                    room -= t.size();
                }
                room > 0
            });
        }
        if room > 0 {
            return None;
        }
        for &at in &chosen {
            self.take(at);
        }
        Some(chosen.iter().map(|&at| self.sorted[at].id).collect())
    }
}

/// The usual tick pass: every ticket, longest-waiting first, fills a match
/// from the nearest free tickets within `window(seed)` that `accept(seed,
/// distance, other)` allows; `emit` receives each match, seed first.
/// O(n log n) plus the candidates `accept` turns down.
pub fn greedy_pass(
    view: &PoolView<'_>,
    mut window: impl FnMut(&WaitingTicket) -> f64,
    mut accept: impl FnMut(&WaitingTicket, f64, &WaitingTicket) -> bool,
    mut emit: impl FnMut(Vec<TicketId>),
) {
    let mut pass = FreePass::new(view.pool);
    for k in 0..pass.len() {
        let Some((pos, seed)) = pass.seed(k) else {
            continue;
        };
        let w = window(seed);
        if let Some(tickets) = pass.fill(view.format, pos, w, |d, t| accept(seed, d, t)) {
            emit(tickets);
        }
    }
}

/// The whole `propose` of a mutual-window policy: two tickets may meet only
/// when each lies inside the other's `window`. On a join the newcomer seeds a
/// match; on a tick `greedy_pass` seeds one from every ticket, longest-waiting
/// first.
pub fn propose_mutual_windows(
    view: &PoolView<'_>,
    trigger: Trigger,
    window: impl Fn(&WaitingTicket) -> f64,
    out: &mut Vec<Proposal>,
) {
    match trigger {
        Trigger::Join(id) => {
            let Some(seed) = view.pool.get(id) else {
                return;
            };
            if let Some(tickets) =
                fill_from_nearest(view, seed, window(seed), |d, t| d <= window(t))
            {
                out.push(Proposal::new(tickets));
            }
        }
        Trigger::Tick => greedy_pass(
            view,
            &window,
            |_, d, t| d <= window(t),
            |tickets| out.push(Proposal::new(tickets)),
        ),
    }
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
