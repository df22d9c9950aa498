//! Matchmaking policies: which waiting tickets form a match. A policy reads
//! the pool and proposes; the engine checks and forms. Adding a policy means
//! one file here and one line in `plugins!` below.

mod cadence;
mod pair_rule;
mod rounds;
/// A miniature engine that drives one policy with hand-placed tickets: the
/// unit tests' harness, and a plug-in author's.
pub mod testkit;
mod windowed;

pub use batch::draw_linear_rank;
pub use brackets::BracketController;
pub use cadence::{Cadence, DefaultMode, EventFirst, TickFirst};
pub use pair_rule::RuleCheck;
pub use percentile::Percentiles;
pub use quality::QualityWeights;
pub use windowed::{GrowingWindow, Windowed};

use crate::model::{check, MatchId, ParamError, Player, SimDuration, SimTime, TicketId};
use crate::pool::{Pool, WaitingTicket};
use crate::teams::{closed_lanes, hall_subsets, Packing, PoolRoles, RoleFill, RoleWindows};
use rand_pcg::Pcg64;
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

/// The pass positions a fill chose, seed first: what a failed fill
/// reports to a policy that keeps failures.
pub(crate) type Chosen = SmallVec<[usize; 10]>;

/// How a fill of `FreePass::try_fill` failed: what a pass that keeps
/// failures (`Windowed`) needs to know which later changes leave it failing.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Failed {
    /// The positions chosen, the seed's first.
    pub chosen: Chosen,
    /// The lanes the fill had closed when it gave up (`RoleFill::closed`;
    /// 0 without role counts).
    pub closed: u128,
    /// The rating distance of the ticket whose taking closed the last of
    /// them (0 when the seed alone did): every ticket farther than this
    /// met them all, so one whose lanes meet them was turned down first.
    pub closed_from: f64,
}

impl Failed {
    /// The seed alone, nothing closed.
    fn seed(pos: usize) -> Failed {
        Failed {
            chosen: Chosen::from_elem(pos, 1),
            closed: 0,
            closed_from: 0.0,
        }
    }
}

/// What a policy sees: the pool, the players, the format. Read-only.
pub struct PoolView<'a> {
    /// The instant of the pass.
    pub now: SimTime,
    /// The waiting tickets.
    pub pool: &'a Pool,
    /// Every player, by id (ratings, roles, attributes).
    pub players: &'a [Player],
    /// The match format.
    pub format: MatchFormat,
    /// How many match ends so far have rated a player who left the match
    /// early (`[backfill]`'s leavers, who may be waiting in a new ticket
    /// by then): the only way a waiting ticket's members are rated again
    /// while it waits. A policy that keeps what it read of the waiting
    /// tickets reads their members' records again only when this has moved
    /// since its last pass. 0 throughout without `[backfill]`; a caller
    /// that rewrites a waiting player's record must raise it.
    pub rerated: u64,
}

impl PoolView<'_> {
    /// Whether `rerated` moved since `seen`, a policy's copy of it from its
    /// last pass, which this brings up to date.
    pub fn rerated_since(&self, seen: &mut u64) -> bool {
        std::mem::replace(seen, self.rerated) != self.rerated
    }
}

/// Teams per match and players per team.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatchFormat {
    /// Teams per match.
    pub teams: usize,
    /// Players per team.
    pub team_size: usize,
    /// The role queue's slots per team, if the format has one.
    pub roles: Option<crate::teams::Composition>,
}

impl MatchFormat {
    /// Players in a full match.
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
    /// A match of these tickets, teams left to the team former, at the normal rating weight.
    pub fn new(tickets: Vec<TicketId>) -> Self {
        Proposal {
            tickets,
            teams: None,
            rating_weight: 1.0,
        }
    }
}

/// What a policy that searches each seed's neighbourhood, and keeps the
/// search while it stays current (`quality`, `ruleset`, `widening`), did over a run (`perf.json` `search`):
/// the measure of its cost that does not depend on the machine.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SearchWork {
    /// Seeds a pass came to (waiting, and not taken earlier in the pass).
    pub seed_visits: u64,
    /// Visits that searched the neighbourhood: a new seed, or one whose
    /// kept search a change may have altered.
    pub searches: u64,
    /// Searches of a seed searched before that found the same candidates
    /// it had: the most a finer rule for keeping searches could spare.
    /// Counted by `quality` only (0 for `ruleset` and `widening`).
    pub searches_unchanged: u64,
}

/// Two policies' work together (regions and modes run one each).
impl std::ops::Add for SearchWork {
    type Output = SearchWork;

    fn add(self, o: SearchWork) -> SearchWork {
        SearchWork {
            seed_visits: self.seed_visits + o.seed_visits,
            searches: self.searches + o.searches,
            searches_unchanged: self.searches_unchanged + o.searches_unchanged,
        }
    }
}

/// A formed match as policies hear of it.
#[derive(Clone, Debug)]
pub struct FormedMatch<'a> {
    /// The match's id.
    pub id: MatchId,
    /// When it formed.
    pub now: SimTime,
    /// Its tickets, as they waited.
    pub tickets: &'a [WaitingTicket],
}

/// A matchmaking policy: who plays whom.
///
/// Called by the engine only (`engine::sim`, one instance per queue or data
/// centre): `schedule` once at the start, to learn when to call; `propose`
/// when the schedule says (a ticket joined, or a tick), with a read-only
/// view of the pool; `on_formed` after each match the engine formed; `work`
/// once, after the run. `propose` pushes proposals whose tickets are waiting
/// and disjoint, best first; the engine checks each and forms what it
/// accepts. A policy may not mutate the world (it has only views), may draw
/// randomness only from the `rng` it is handed (the run's policy stream),
/// and may not read the clock, the environment or a `HashMap`'s order.
/// What it can say for `--explain` it says through the separate `Explain`
/// trait, which `explain` hands out.
pub trait Policy: Send {
    /// When the engine should call `propose`: on each join, on a tick, or both.
    fn schedule(&self) -> Schedule;

    /// One pass over the pool at `view.now`, caused by `trigger`: pushes onto
    /// `out` the matches this policy would form, best first, each of waiting
    /// and mutually disjoint tickets.
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

    /// For `perf.json`: how much searching a policy that keeps each seed's
    /// search between passes did over the run; `None` (the default) for the
    /// others. The engine reads it once, after the run.
    fn work(&self) -> Option<SearchWork> {
        None
    }

    /// This policy's `--explain` hooks, if it has any: `Some(self)` from a
    /// policy that implements `Explain`, `None` (the default) from one that
    /// cannot say why a ticket waited. With `None` the explain layer reports
    /// only the rules the engine knows itself (party split, roles, latency),
    /// exactly as when every hook answers `None`.
    fn explain(&self) -> Option<&dyn Explain> {
        None
    }
}

/// What a policy can say about why a ticket waited (`--explain`): its
/// rating window, its falling score threshold, its score of a formed match,
/// or a pair rule of its own. Optional: a policy implements it when it has
/// something to say and returns `Some(self)` from `Policy::explain`; each
/// hook it leaves alone answers `None` ("cannot say").
///
/// Called by the engine's explain layer only (`engine/sim/explain.rs`), and
/// never with explain off: after each `propose` pass for the tickets the
/// pass considered and their nearest candidates, and when a match forms, at
/// earlier instants of a ticket's wait (`now` may then precede a
/// candidate's joining), to find when the rule first allowed it. A hook
/// reads the policy's state as it is now; it may not change it, draw
/// randomness or depend on how often it is called, so a run with
/// `--explain` forms exactly the matches of a run without.
pub trait Explain {
    /// The rating window this policy gives ticket `t` at `now` (rating
    /// points each side), if it is a window rule.
    fn rating_window(&self, _t: &WaitingTicket, _now: SimTime) -> Option<f64> {
        None
    }

    /// The score a match seeded by a ticket that waited `waited_s` seconds
    /// needs, for a policy with a falling quality threshold.
    fn score_threshold(&self, _waited_s: f64) -> Option<f64> {
        None
    }

    /// This policy's score of a formed match (its tickets by team, still in
    /// `view`'s pool), for a policy that scores matches.
    fn match_score(&self, _view: &PoolView<'_>, _teams: &[Vec<TicketId>]) -> Option<f64> {
        None
    }

    /// This policy's own rule between ticket `t` and candidate `c` at `now`,
    /// for a policy whose rule `rating_window` cannot express (percentiles,
    /// brackets, a weighted score, intervals, a decayed rating, batches,
    /// predicted churn).
    fn pair_rule(
        &self,
        _t: &WaitingTicket,
        _c: &WaitingTicket,
        _now: SimTime,
    ) -> Option<RuleCheck> {
        None
    }
}

/// A policy that needs nothing but its parameters: it remembers nothing
/// between calls. Its parameter type implements `Rule` and the policy is
/// `Stateless<Params>`, so its file declares no struct, constructor or
/// `Policy` impl of its own. The same contract as `Policy`, whose calls
/// `Stateless` passes on; a rule's `--explain` hooks are its `Explain`
/// impl (an empty `impl Explain for Params {}` when it has nothing to say).
pub trait Rule: Explain + Send {
    /// As `Policy::schedule`.
    fn schedule(&self) -> Schedule;

    /// As `Policy::propose`, with nothing to remember between passes.
    fn propose(
        &self,
        view: &PoolView<'_>,
        trigger: Trigger,
        rng: &mut Pcg64,
        out: &mut Vec<Proposal>,
    );
}

/// The policy of a `Rule`: `pub type Widening = Stateless<WideningParams>`.
pub struct Stateless<P>(P);

impl<P> Stateless<P> {
    /// The policy of this rule.
    pub fn new(params: P) -> Self {
        Stateless(params)
    }
}

impl<P: Rule> Policy for Stateless<P> {
    fn schedule(&self) -> Schedule {
        self.0.schedule()
    }

    fn propose(
        &mut self,
        view: &PoolView<'_>,
        trigger: Trigger,
        rng: &mut Pcg64,
        out: &mut Vec<Proposal>,
    ) {
        self.0.propose(view, trigger, rng, out)
    }

    fn explain(&self) -> Option<&dyn Explain> {
        Some(&self.0)
    }
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

crate::model::registry::plugins! {
    /// The `[policy]` section of a scenario, tagged by `kind`.
    pub enum PolicyConfig tagged "kind" builds Policy, catalogue CATALOGUE {
        "fixed-limit" => FixedLimit(fixed_limit::FixedLimitParams) builds FixedLimit,
        "widening" => Widening(widening::WideningParams) builds Widening,
        "percent-widening" => PercentWidening(percent_widening::PercentWideningParams) builds PercentWidening,
        "percentile-window" => PercentileWindow(percentile::PercentileParams) builds PercentileWindow,
        "adaptive-brackets" => AdaptiveBrackets(brackets::BracketParams) builds AdaptiveBrackets,
        "batch-weighted" => BatchWeighted(batch::BatchParams) builds BatchWeighted,
        "weighted-score" => WeightedScore(weighted_score::WeightedScoreParams) builds WeightedScore,
        "sweep-prune" => SweepPrune(sweep_prune::SweepPruneParams) builds SweepPrune,
        "virtual-decay" => VirtualDecay(decay::DecayParams) builds VirtualDecay,
        "quality" => Quality(quality::QualityParams) builds Quality in "quality/",
        "eomm" => Eomm(eomm::EommParams) builds Eomm,
        "skill" => Skill(skill::SkillParams) builds Skill,
        "random" => Random(random::RandomParams) builds Random,
        "worst" => Worst(worst::WorstParams) builds Worst,
        "ruleset" => Ruleset(ruleset::RulesetParams) builds RulesetPolicy,
    }
}

impl PolicyConfig {
    /// Checks every parameter; the error's key is relative to `[policy]`.
    pub fn validate(&self) -> Result<(), ParamError> {
        self.validate_params()
    }
}

/// Checks a window that starts at `base`, grows `rate_per_s` a second and
/// stops at `max` (widening, sweep-and-prune).
/// The games played by `t`'s members, summed. It grows whenever a match
/// end rewrites a member's record (rating, games, win rate), which is the
/// only way a waiting ticket's attributes change (with `[backfill]` a
/// leaver may queue again before the match they left ends), and it never
/// falls: a policy that keeps what it read of a ticket compares it to see
/// whether to read the ticket again.
pub(crate) fn member_games(view: &PoolView<'_>, t: &crate::pool::WaitingTicket) -> u64 {
    t.players
        .iter()
        .map(|p| u64::from(view.players[p.index()].games))
        .sum()
}

pub(crate) fn check_growing_window(base: f64, rate_per_s: f64, max: f64) -> Result<(), ParamError> {
    check::non_negative("base", base)?;
    check::non_negative("rate_per_s", rate_per_s)?;
    check::non_negative("max", max)?;
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
    if seed.size() > need || seed.size() > view.format.team_size || view.pool.players() < need {
        return None;
    }
    let mut room = need - seed.size();
    // One allocation per join at most: the proposal's own list, sized for
    // the most tickets a match can hold.
    let mut chosen = Vec::with_capacity(room + 1);
    chosen.push(seed.id);
    let mut packing = Packing::new(view.format.teams, view.format.team_size);
    packing.try_add(seed.size());
    if room == 0 {
        return Some(chosen);
    }
    // Only a role queue needs the role fill: without roles it admits every
    // party, and building it (a few hundred bytes, copied into place) was
    // most of a 1v1 join's cost here.
    let mut roles =
        (view.format.roles).map(|comp| RoleFill::new(Some(comp), view.format.teams, &seed.roles));
    // As a pass's walk (`FreePass::try_fill`): a party whose roles are
    // full is turned down before `accept`, and `admits`' answers are
    // remembered until the fill takes.
    let mut answers = SmallVec::new();
    for (distance, t) in view.pool.nearest(seed.rating, seed.id) {
        if distance > max_distance {
            break;
        }
        if t.size() <= room
            && t.size() <= view.format.team_size
            && roles
                .as_ref()
                .is_none_or(|r| t.roles.len() != t.size() || r.lanes_of(&t.roles) & r.closed() == 0)
            && accept(distance, t)
            && (roles.as_mut()).is_none_or(|r| FreePass::admits(r, &mut answers, &t.roles))
            && packing.try_add(t.size())
        {
            if let Some(r) = &mut roles {
                r.take(&t.roles);
                answers.clear();
            }
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
#[derive(Clone)]
pub struct FreePass<'a> {
    sorted: Vec<&'a WaitingTicket>,
    /// Everything else the pass lays down per ticket, in buffers a policy
    /// may keep between passes (`reusing`, `into_frame`).
    buf: PassFrame,
    /// Players in tickets not yet taken: once fewer than a match needs, the
    /// rest of a pass cannot form anything.
    free_players: usize,
    /// Whether `buf.windows` could staff a match from the whole pass: asked
    /// before every seed, changed only by a take.
    all_can_fill: bool,
    /// Whether the pass took a ticket: its counts then no longer describe
    /// the pool, and its frame is not kept as current.
    took: bool,
}

/// A pass's buffers, kept by a policy between its passes
/// (`FreePass::reusing`), and while the pool is as the pass found it, the
/// pass's rating order, seeds and role counts too. A windowed role queue
/// builds a pass on most ticks over the same forty-odd tickets (in
/// `regions-roles-5v5`, half of its passes found the pool as the last one
/// left it), and building it was a tenth of the whole run.
#[derive(Clone, Default)]
pub struct PassFrame {
    /// The pool slot of the ticket at each position: what a kept frame
    /// needs to find its tickets again (empty in a pass from `new`).
    slots: Vec<u32>,
    /// Position in rating order of the ticket in each pool slot.
    position: Vec<u32>,
    /// The ratings in rating order, dense: the walks and window bounds
    /// read them.
    ratings: Vec<f64>,
    /// Positions in rating order, longest-waiting first.
    seeds: Vec<u32>,
    /// `up[i]`: a position >= i that may be free (n: none).
    up: Vec<u32>,
    /// `down[k]`: shifted by one, a position + 1 <= k that may be free (0: none).
    down: Vec<u32>,
    taken: Vec<bool>,
    /// In a role queue, once asked (`track_roles`): the free players by
    /// role mask along the rating axis, to tell when no role-feasible
    /// match is left, in the pool or within a seed's window.
    windows: Option<RoleWindows>,
    /// With `windows`, when the role fill keeps Hall counts: each
    /// position's `closed_lanes` (every lane once taken), so a fill's walk
    /// passes over the tickets its `RoleFill::closed` lanes turn down
    /// without visiting them. In a busy role queue a failed fill's walk
    /// is mostly such tickets (damage players once the damage slots are
    /// full), and it walked every one: a pass grew with the pool's square.
    lanes: Vec<u128>,
    /// The lanes every ticket of each block of `LANE_BLOCK` positions
    /// shares (AND): a block whose shared lanes meet the closed ones is
    /// passed over whole.
    lanes_shared: Vec<u128>,
    /// The subsets `lanes` are over (`hall_subsets`; 0 when none are kept).
    lane_subsets: usize,
    /// Whether the contents describe the pool as it is. The policy that
    /// keeps the frame clears it (`stale`) whenever a ticket joined, left
    /// or moved to another slot since the pass that built it; a pass that
    /// took a ticket leaves it cleared.
    current: bool,
}

impl PassFrame {
    /// Says the pool changed since the frame's pass: the next pass is
    /// built again (in the same buffers).
    pub fn stale(&mut self) {
        self.current = false;
    }
}

impl<'a> FreePass<'a> {
    /// A pass over every ticket of `pool`, none taken yet.
    ///
    /// Built in fresh vectors, each allocated at its size: for a pass
    /// built once, that is cheaper than `reusing`'s refills (+4% on
    /// `backfill-5v5` when `new` went through them). Its `slots` are not
    /// kept, so its frame (`into_frame`) is never current.
    pub fn new(pool: &'a Pool) -> Self {
        // Each ticket's position by rating, found through its pool slot:
        // the seeds in age order without sorting ids on every pass.
        let mut position = vec![0u32; pool.slots()];
        let mut sorted = Vec::with_capacity(pool.len());
        for (slot, t) in pool.by_rating_slots() {
            position[slot as usize] = sorted.len() as u32;
            sorted.push(t);
        }
        let n = sorted.len() as u32;
        let buf = PassFrame {
            seeds: (pool.slots_oldest_first())
                .map(|slot| position[slot as usize])
                .collect(),
            position,
            up: (0..=n).collect(),
            down: (0..=n).collect(),
            taken: vec![false; n as usize],
            windows: None,
            lanes: Vec::new(),
            lanes_shared: Vec::new(),
            lane_subsets: 0,
            ratings: sorted.iter().map(|t| t.rating).collect(),
            slots: Vec::new(),
            current: false,
        };
        FreePass {
            sorted,
            buf,
            free_players: pool.players(),
            all_can_fill: true,
            took: false,
        }
    }

    /// `new` followed by `track_roles(format)`, built in `frame`'s buffers;
    /// when the frame is current (the pool has not changed since the pass
    /// that left it), its rating order, seeds and role counts are taken as
    /// they are. `oldest_first` is `pool.slots_oldest_first()`, or the same
    /// slots as the caller already holds them (a second walk of the pool's
    /// index was a tenth of building a pass). `into_frame` hands the
    /// buffers back.
    pub fn reusing(
        pool: &'a Pool,
        frame: &mut PassFrame,
        format: MatchFormat,
        oldest_first: impl ExactSizeIterator<Item = u32>,
    ) -> Self {
        let (current, windows) = (frame.current, frame.windows.take());
        let mut pass = Self::build(pool, frame, oldest_first);
        if current {
            pass.buf.windows = windows;
            pass.all_can_fill = pass.count_all();
        } else {
            pass.count_roles(format, windows);
        }
        // Debug builds: whether its frame was current or refilled, a pass
        // from kept buffers is the pass built afresh.
        #[cfg(debug_assertions)]
        {
            let mut fresh = FreePass::new(pool);
            fresh.track_roles(format);
            pass.assert_same(&fresh, pool);
        }
        pass
    }

    /// The pass `new` builds, in `frame`'s buffers (left empty until
    /// `into_frame` hands them back): for a policy that builds a pass on
    /// every tick, the vectors are allocated once, not every time
    /// (`weighted-score` spent a third of its run allocating, filling and
    /// freeing them). Nothing of the frame's last pass is read, and no
    /// role counts are kept, as in `new`; debug builds check the pass
    /// against one `new` builds.
    pub fn plain_in(pool: &'a Pool, frame: &mut PassFrame) -> Self {
        frame.stale();
        frame.windows = None;
        let mut pass = Self::build(pool, frame, pool.slots_oldest_first());
        pass.buf.lanes.clear();
        pass.buf.lanes_shared.clear();
        pass.buf.lane_subsets = 0;
        #[cfg(debug_assertions)]
        pass.assert_same(&FreePass::new(pool), pool);
        pass
    }

    /// `new` in `frame`'s buffers (left empty), its order and seeds taken
    /// from the frame when it is current.
    fn build(
        pool: &'a Pool,
        frame: &mut PassFrame,
        oldest_first: impl ExactSizeIterator<Item = u32>,
    ) -> Self {
        let mut f = std::mem::take(frame);
        let mut sorted = Vec::with_capacity(pool.len());
        // A ticket that joined and left between two passes may have added
        // a slot, which no ticket of a current frame is in.
        f.position.resize(pool.slots(), 0);
        if f.current {
            sorted.extend(f.slots.iter().map(|&slot| pool.at(slot)));
        } else {
            // Each ticket's position by rating, found through its pool
            // slot: the seeds in age order without sorting ids. Each
            // vector is filled by one exact-length loop of its own.
            f.slots.clear();
            f.slots.extend(pool.slots_by_rating());
            sorted.extend(f.slots.iter().map(|&slot| pool.at(slot)));
            f.ratings.clear();
            f.ratings.extend(sorted.iter().map(|t| t.rating));
            for (pos, &slot) in f.slots.iter().enumerate() {
                f.position[slot as usize] = pos as u32;
            }
            f.seeds.clear();
            let position = &f.position;
            (f.seeds).extend(oldest_first.map(|slot| position[slot as usize]));
        }
        let n = sorted.len() as u32;
        f.up.clear();
        f.up.extend(0..=n);
        f.down.clear();
        f.down.extend(0..=n);
        f.taken.clear();
        f.taken.resize(n as usize, false);
        f.current = false;
        FreePass {
            sorted,
            buf: f,
            free_players: pool.players(),
            all_can_fill: true,
            took: false,
        }
    }

    /// Hands the pass's buffers back to `frame`, current unless the pass
    /// took a ticket (or came from `new`, which keeps no slots).
    pub fn into_frame(self, frame: &mut PassFrame) {
        let current = !self.took && self.buf.slots.len() == self.sorted.len();
        *frame = PassFrame {
            current,
            ..self.buf
        };
    }

    /// Debug builds: a pass taken from a frame (current or refilled) is
    /// the pass built afresh, order, seeds and role counts alike.
    #[cfg(debug_assertions)]
    fn assert_same(&self, fresh: &FreePass<'_>, pool: &Pool) {
        let ids = |p: &FreePass<'_>| p.sorted.iter().map(|t| t.id).collect::<Vec<_>>();
        assert_eq!(ids(self), ids(fresh), "a kept frame's rating order");
        let slots: Vec<u32> = pool.slots_by_rating().collect();
        assert_eq!(self.buf.slots, slots, "a kept frame's slots");
        assert_eq!(self.buf.seeds, fresh.buf.seeds, "a kept frame's seeds");
        assert_eq!(
            self.buf.ratings, fresh.buf.ratings,
            "a kept frame's ratings"
        );
        for &slot in &self.buf.slots {
            assert_eq!(self.position_of_slot(slot), fresh.position_of_slot(slot));
        }
        assert_eq!(self.free_players, fresh.free_players);
        assert_eq!(
            self.all_can_fill, fresh.all_can_fill,
            "a kept frame's role counts"
        );
        for (lo, hi) in [
            (0, self.len()),
            (0, self.len() / 2),
            (self.len() / 2, self.len()),
        ] {
            assert_eq!(
                self.buf.windows.as_ref().map(|w| w.can_fill(lo, hi)),
                fresh.buf.windows.as_ref().map(|w| w.can_fill(lo, hi)),
                "a kept frame's role counts over {lo}..{hi}"
            );
        }
    }

    /// Starts counting the free players by role mask for a role queue of
    /// `format` (nothing without one, or when a ticket lacks its roles).
    pub fn track_roles(&mut self, format: MatchFormat) {
        self.count_roles(format, None);
    }

    /// `track_roles`, counting in `spare`'s buffer when there is one.
    fn count_roles(&mut self, format: MatchFormat, spare: Option<RoleWindows>) {
        self.buf.lanes.clear();
        self.buf.lanes_shared.clear();
        self.buf.lane_subsets = 0;
        let Some(comp) = format.roles else { return };
        if self.sorted.iter().any(|t| t.roles.len() != t.size()) {
            return;
        }
        let subsets = hall_subsets(comp, format.teams);
        self.buf.lane_subsets = subsets;
        if subsets > 0 {
            let taken = &self.buf.taken;
            (self.buf.lanes).extend(self.sorted.iter().zip(taken).map(|(t, &taken)| {
                if taken {
                    u128::MAX
                } else {
                    closed_lanes(&t.roles, subsets)
                }
            }));
            (self.buf.lanes_shared).extend(
                (self.buf.lanes.chunks(LANE_BLOCK))
                    .map(|block| block.iter().fold(u128::MAX, |all, &l| all & l)),
            );
        }
        let (sorted, taken) = (&self.sorted, &self.buf.taken);
        let rows = spare.map(RoleWindows::into_rows).unwrap_or_default();
        self.buf.windows = RoleWindows::new_in(rows, comp, format.teams, sorted.len(), |i| {
            if taken[i] {
                &[]
            } else {
                &sorted[i].roles[..]
            }
        });
        self.all_can_fill = self.count_all();
    }

    fn count_all(&self) -> bool {
        self.buf
            .windows
            .as_ref()
            .is_none_or(|w| w.can_fill(0, self.sorted.len()))
    }

    /// Whether the free players within `max_distance` of the ticket at
    /// `pos` (the tickets `walk` would visit, and it) could staff one
    /// role-feasible match (always, when roles are not counted): when not,
    /// a fill from it must fail.
    pub fn window_can_fill(&self, pos: usize, max_distance: f64) -> bool {
        let (lo, hi) = self.bounds(pos, max_distance);
        self.can_fill_within(pos, lo, hi)
    }

    /// The positions `lo..hi` of the tickets within `max_distance` of the
    /// ticket at `pos`: the bounds `walk` tests, computed as it computes
    /// them.
    fn bounds(&self, pos: usize, max_distance: f64) -> (usize, usize) {
        let r = self.buf.ratings[pos];
        let lo = self.buf.ratings.partition_point(|&x| r - x > max_distance);
        let hi = self.buf.ratings.partition_point(|&x| x - r <= max_distance);
        (lo, hi)
    }

    /// `window_can_fill` for the window of `bounds`.
    fn can_fill_within(&self, pos: usize, lo: usize, hi: usize) -> bool {
        let Some(w) = self.buf.windows.as_ref() else {
            return true;
        };
        #[cfg(test)]
        if tests::NO_WINDOW_COUNTS.with(std::cell::Cell::get) {
            return true;
        }
        w.can_fill(lo, hi.max(pos + 1))
    }

    /// The rating distance from the ticket at `pos` to the nearest ticket
    /// of the pass (free or not) outside the window of `bounds`: the
    /// window must reach it before `walk` can visit a ticket it did not;
    /// infinite when there is none.
    fn beyond(&self, pos: usize, lo: usize, hi: usize) -> f64 {
        let r = self.buf.ratings[pos];
        let below = lo
            .checked_sub(1)
            .map_or(f64::INFINITY, |i| r - self.buf.ratings[i]);
        let above = self.buf.ratings.get(hi).map_or(f64::INFINITY, |&x| x - r);
        below.min(above)
    }

    /// `beyond`, for a fill that failed with lanes `closed`: the distance
    /// to the nearest free ticket outside the window whose lanes meet none
    /// of them. The window reaching a ticket nearer than that changes
    /// nothing, since the fill walked past `Failed::closed_from` with
    /// those lanes closed and turns such a ticket down first; a ticket
    /// this pass takes comes back to the next one as a join if it stays.
    fn beyond_open(&mut self, pos: usize, lo: usize, hi: usize, closed: u128) -> f64 {
        if closed == 0 || self.buf.lanes.is_empty() {
            return self.beyond(pos, lo, hi);
        }
        let r = self.buf.ratings[pos];
        let below =
            (self.open_below(lo, 0, closed)).map_or(f64::INFINITY, |i| r - self.buf.ratings[i]);
        let above = (hi.checked_sub(1))
            .and_then(|last| self.open_above(last, self.len(), closed))
            .map_or(f64::INFINITY, |i| self.buf.ratings[i] - r);
        below.min(above)
    }

    /// Whether the free players could still staff a full role-feasible
    /// match (always, when roles are not counted): once not, every further
    /// fill of the pass must fail.
    pub fn roles_can_fill(&self) -> bool {
        self.all_can_fill
    }

    /// Players in the tickets still free in this pass.
    pub fn free_players(&self) -> usize {
        self.free_players
    }

    /// Number of tickets in the pass.
    pub fn len(&self) -> usize {
        self.sorted.len()
    }

    /// Whether the pass holds no ticket.
    pub fn is_empty(&self) -> bool {
        self.sorted.is_empty()
    }

    /// The `k`-th ticket by age (longest-waiting first) and its position, if
    /// it is still free.
    pub fn seed(&self, k: usize) -> Option<(usize, &'a WaitingTicket)> {
        let pos = self.buf.seeds[k] as usize;
        (!self.buf.taken[pos]).then(|| (pos, self.sorted[pos]))
    }

    /// The position of the waiting ticket in pool slot `slot`
    /// (`Pool::slot_of`).
    pub fn position_of_slot(&self, slot: u32) -> usize {
        self.buf.position[slot as usize] as usize
    }

    /// The ticket at position `pos` in rating order.
    pub fn ticket(&self, pos: usize) -> &'a WaitingTicket {
        self.sorted[pos]
    }

    /// Marks the ticket at `pos` as matched in this pass.
    pub fn take(&mut self, pos: usize) {
        if !self.buf.taken[pos] {
            self.buf.taken[pos] = true;
            self.took = true;
            self.free_players -= self.sorted[pos].size();
            if let Some(w) = self.buf.windows.as_mut() {
                w.remove(pos);
                self.all_can_fill = self.count_all();
            }
            if !self.buf.lanes.is_empty() {
                self.buf.lanes[pos] = u128::MAX;
                let b = pos / LANE_BLOCK;
                let block = &self.buf.lanes[b * LANE_BLOCK..];
                self.buf.lanes_shared[b] =
                    (block.iter().take(LANE_BLOCK)).fold(u128::MAX, |all, &l| all & l);
            }
            self.buf.up[pos] = pos as u32 + 1;
            self.buf.down[pos + 1] = pos as u32;
        }
    }

    fn free_above(&mut self, pos: usize) -> Option<usize> {
        let mut i = pos + 1;
        while self.buf.up[i] as usize != i {
            let next = self.buf.up[self.buf.up[i] as usize];
            self.buf.up[i] = next;
            i = next as usize;
        }
        (i < self.sorted.len()).then_some(i)
    }

    fn free_below(&mut self, pos: usize) -> Option<usize> {
        let mut k = pos;
        while self.buf.down[k] as usize != k {
            let next = self.buf.down[self.buf.down[k] as usize];
            self.buf.down[k] = next;
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
        let r = self.buf.ratings[pos];
        let (mut below, mut above) = (self.free_below(pos), self.free_above(pos));
        loop {
            let Some((take_below, d, at)) = self.nearer(r, below, above) else {
                return;
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

    /// Of the candidates `below` and `above` a ticket rated `r`, the nearer
    /// (ties to the lower rating): whether it is the one below, its
    /// distance and its position; `None` when there is neither.
    fn nearer(
        &self,
        r: f64,
        below: Option<usize>,
        above: Option<usize>,
    ) -> Option<(bool, f64, usize)> {
        let db = below.map(|b| (r - self.buf.ratings[b], b));
        let da = above.map(|a| (self.buf.ratings[a] - r, a));
        match (db, da) {
            (None, None) => None,
            (Some((d, b)), None) => Some((true, d, b)),
            (None, Some((d, a))) => Some((false, d, a)),
            (Some((x, b)), Some((y, a))) => Some(if x <= y { (true, x, b) } else { (false, y, a) }),
        }
    }

    /// `walk` for a fill with role counts: `visit` answers with the lanes
    /// its fill has closed (`RoleFill::closed`), `None` to stop, and the
    /// walk passes over the free tickets whose lanes meet them without
    /// visiting them (each ticket's lanes are handed to `visit`, 0 when the
    /// pass keeps none). A ticket passed over is one the fill would turn
    /// down before any other check, and the closed lanes only grow, so the
    /// tickets visited are those `walk` visits that the fill does not turn
    /// down so, in the same order. `closed` is the fill's lanes at the start.
    fn walk_open(
        &mut self,
        pos: usize,
        max_distance: f64,
        mut closed: u128,
        mut visit: impl FnMut(f64, usize, &'a WaitingTicket, u128) -> Option<u128>,
    ) {
        if self.buf.lanes.is_empty() {
            self.walk(pos, max_distance, |d, at, t| visit(d, at, t, 0).is_some());
            return;
        }
        #[cfg(test)]
        if tests::plain_walks() {
            let lanes = self.buf.lanes.clone();
            self.walk(pos, max_distance, |d, at, t| {
                visit(d, at, t, lanes[at]).is_some()
            });
            return;
        }
        let r = self.buf.ratings[pos];
        let (lo, hi) = self.bounds(pos, max_distance);
        let (mut below, mut above) = (
            self.open_below(pos, lo, closed),
            self.open_above(pos, hi, closed),
        );
        loop {
            // Both within `max_distance`, as `walk` measures it.
            let Some((take_below, d, at)) = self.nearer(r, below, above) else {
                return;
            };
            let Some(now_closed) = visit(d, at, self.sorted[at], self.buf.lanes[at]) else {
                return;
            };
            closed = now_closed;
            if take_below {
                below = self.open_below(at, lo, closed);
            } else {
                above = self.open_above(at, hi, closed);
            }
        }
    }

    /// The nearest position above `pos` and below `hi` whose ticket is
    /// free and, when lanes are `closed`, meets none of them.
    fn open_above(&mut self, pos: usize, hi: usize, closed: u128) -> Option<usize> {
        if closed == 0 {
            return self.free_above(pos).filter(|&i| i < hi);
        }
        let mut i = pos + 1;
        while i < hi {
            if i.is_multiple_of(LANE_BLOCK) && self.buf.lanes_shared[i / LANE_BLOCK] & closed != 0 {
                i += LANE_BLOCK;
                continue;
            }
            // A taken ticket's lanes are all set.
            if self.buf.lanes[i] & closed == 0 {
                return Some(i);
            }
            i += 1;
        }
        None
    }

    /// `open_above`, below `pos` and from `lo` up.
    fn open_below(&mut self, pos: usize, lo: usize, closed: u128) -> Option<usize> {
        if closed == 0 {
            return self.free_below(pos).filter(|&i| i >= lo);
        }
        // The positions left to look at are lo..k.
        let mut k = pos;
        while k > lo {
            if k.is_multiple_of(LANE_BLOCK)
                && self.buf.lanes_shared[k / LANE_BLOCK - 1] & closed != 0
            {
                k -= LANE_BLOCK;
                continue;
            }
            k -= 1;
            if self.buf.lanes[k] & closed == 0 {
                return Some(k);
            }
        }
        None
    }

    /// `roles.admits(masks)`, answered from `answers` when a party of the
    /// same key was asked since the fill last took.
    fn admits(
        roles: &mut RoleFill<'a>,
        answers: &mut SmallVec<[((u128, bool), bool); 8]>,
        masks: &'a [u8],
    ) -> bool {
        #[cfg(test)]
        if tests::plain_walks() {
            return roles.admits(masks);
        }
        let Some(key) = roles.admits_key(masks) else {
            return roles.admits(masks);
        };
        if let Some(&(_, ok)) = answers.iter().find(|(k, _)| *k == key) {
            #[cfg(test)]
            assert_eq!(ok, roles.admits(masks), "a remembered answer of `admits`");
            return ok;
        }
        let ok = roles.admits(masks);
        // Kept inline: a walk that meets more kinds of party asks again.
        if answers.len() < answers.inline_size() {
            answers.push((key, ok));
        }
        ok
    }

    /// `fill_from_nearest` over the free tickets of this pass: on success the
    /// tickets are taken and returned, seed first.
    pub fn fill(
        &mut self,
        format: MatchFormat,
        pos: usize,
        max_distance: f64,
        accept: impl FnMut(f64, &WaitingTicket) -> bool,
    ) -> Option<Vec<TicketId>> {
        self.try_fill(format, pos, max_distance, accept, |_, _, _| None)
            .ok()
    }

    /// `fill`, saying on failure which positions the fill had chosen (the
    /// seed's first), for a pass that keeps failures (`Windowed`).
    ///
    /// `recorded(distance, position, ticket)` may answer for a ticket what the fill
    /// decided about it before (`Some(true)`: chosen), for a pass that
    /// knows a failed fill's decisions still hold; those tickets are taken
    /// or passed over without the checks. Once a ticket it left to the
    /// checks is chosen, the set chosen differs from the one the answers
    /// were made for, and it is no longer asked.
    fn try_fill(
        &mut self,
        format: MatchFormat,
        pos: usize,
        max_distance: f64,
        mut accept: impl FnMut(f64, &WaitingTicket) -> bool,
        mut recorded: impl FnMut(f64, usize, &WaitingTicket) -> Option<bool>,
    ) -> Result<Vec<TicketId>, Failed> {
        let seed = self.sorted[pos];
        let need = format.players();
        if seed.size() > need || seed.size() > format.team_size {
            return Err(Failed::seed(pos));
        }
        let mut room = need - seed.size();
        // At most one ticket per player; inline up to a 5v5's ten, so a
        // role queue's failed search (most of them) allocates nothing.
        let mut chosen = Chosen::new();
        chosen.push(pos);
        // A party joins only if the set can still be split into full teams
        // (as in `fill_from_nearest`).
        let mut packing = Packing::new(format.teams, format.team_size);
        packing.try_add(seed.size());
        // And only if the set can still be completed to a role-feasible
        // match, when the format has a role queue.
        let mut roles = RoleFill::new(format.roles, format.teams, &seed.roles);
        let mut guided = true;
        let kept_lanes = !self.buf.lanes.is_empty();
        let mut closed = roles.closed();
        let mut closed_from = 0.0;
        // `admits`' answers since the last take, by `admits_key`: most of
        // a failed walk's parties share their roles with one asked before
        // (a party's answer is a placement search), and the fill changes
        // only when it takes.
        let mut answers: SmallVec<[((u128, bool), bool); 8]> = SmallVec::new();
        if room > 0 {
            self.walk_open(pos, max_distance, closed, |d, at, t, lanes| {
                // A ticket whose roles would push a full subset over is
                // turned down first, before `accept` is asked: `admits`
                // would turn it down whatever `accept` said, and one the
                // walk passed over is never asked either.
                let lanes = if kept_lanes {
                    lanes
                } else if t.roles.len() == t.size() {
                    roles.lanes_of(&t.roles)
                } else {
                    0
                };
                #[cfg(test)]
                tests::VISITS.with(|c| c.set(c.get() + 1));
                let known = if guided { recorded(d, at, t) } else { None };
                let take = match known {
                    Some(take) => {
                        if take {
                            let fits = packing.try_add(t.size());
                            debug_assert!(fits, "a recorded choice no longer fits");
                        }
                        take
                    }
                    None => {
                        let open = lanes & roles.closed() == 0;
                        debug_assert!(
                            t.roles.len() != 1 || open == roles.solo_may_fit(t.roles[0]),
                            "closed lanes and the pooled test disagree on a solo"
                        );
                        // The oracle: a party is asked `accept` first, as
                        // before the lanes were kept.
                        #[cfg(test)]
                        let open = open || (t.roles.len() != 1 && tests::plain_walks());
                        let take = t.size() <= room
                            && t.size() <= format.team_size
                            && open
                            && accept(d, t)
                            && Self::admits(&mut roles, &mut answers, &t.roles)
                            && packing.try_add(t.size());
                        guided &= !take;
                        take
                    }
                };
                if take {
                    roles.take(&t.roles);
                    answers.clear();
                    chosen.push(at);
                    room -= t.size();
                    if roles.closed() != closed {
                        closed = roles.closed();
                        closed_from = d;
                    }
                }
                (room > 0).then_some(closed)
            });
        }
        if room > 0 {
            return Err(Failed {
                chosen,
                closed,
                closed_from,
            });
        }
        for &at in &chosen {
            self.take(at);
        }
        Ok(chosen.iter().map(|&at| self.sorted[at].id).collect())
    }
}

/// Positions per block of `PassFrame::lanes_shared`.
const LANE_BLOCK: usize = 16;

/// What a fresh `FreePass` answers to `roles_can_fill` once `track_roles`
/// counted it, tallied ticket by ticket without building the pass: a pass
/// that has taken nothing asks no more of it.
pub struct PoolTally {
    counts: Option<PoolRoles>,
    /// A ticket without a role per player: the pass keeps no counts.
    unroled: bool,
}

impl PoolTally {
    /// No tickets yet, for `format`.
    pub fn new(format: MatchFormat) -> Self {
        PoolTally {
            counts: format.roles.and_then(|c| PoolRoles::new(c, format.teams)),
            unroled: false,
        }
    }

    /// Counts ticket `t` in.
    pub fn add(&mut self, t: &WaitingTicket) {
        if t.roles.len() != t.size() {
            self.unroled = true;
        } else if let Some(counts) = self.counts.as_mut() {
            counts.add(&t.roles);
        }
    }

    /// `FreePass::roles_can_fill` over the tickets counted.
    pub fn can_fill(&self) -> bool {
        self.unroled || self.counts.as_ref().is_none_or(PoolRoles::can_fill)
    }
}

/// The usual tick pass: every ticket, longest-waiting first, fills a match
/// from the nearest free tickets within `window(seed)` that `accept(seed,
/// distance, other)` allows; `emit` receives each match, seed first.
/// O(n log n) plus the candidates `accept` turns down.
pub fn greedy_pass(
    view: &PoolView<'_>,
    window: impl FnMut(&WaitingTicket) -> f64,
    accept: impl FnMut(&WaitingTicket, f64, &WaitingTicket) -> bool,
    emit: impl FnMut(Vec<TicketId>),
) {
    // Too few players for one match: the first seed below would stop the
    // pass, so it is not built (a 1v1 queue rechecked every second spends
    // most of its passes with a ticket or none waiting).
    if view.pool.players() < view.format.players() {
        return;
    }
    with_thread_frame(|frame| greedy_pass_in(view, frame, window, accept, emit))
}

/// Runs `body` over the pass `FreePass::new` builds of `pool`, in this
/// thread's kept buffers (`FreePass::plain_in`): for a policy with no state
/// of its own to keep them in (`batch-weighted`).
pub fn with_plain_pass<'a, R>(pool: &'a Pool, body: impl FnOnce(&mut FreePass<'a>) -> R) -> R {
    with_thread_frame(|frame| {
        let mut pass = FreePass::plain_in(pool, frame);
        let r = body(&mut pass);
        pass.into_frame(frame);
        r
    })
}

/// Runs `f` with this thread's kept pass buffers (`PASS_FRAME`), or with
/// fresh ones when a pass already holds them.
fn with_thread_frame<R>(f: impl FnOnce(&mut PassFrame) -> R) -> R {
    PASS_FRAME.with(|frame| match frame.try_borrow_mut() {
        Ok(mut frame) => f(&mut frame),
        // Only a pass run from inside another's closures gets here.
        Err(_) => f(&mut PassFrame::default()),
    })
}

thread_local! {
    /// `greedy_pass`'s and `with_plain_pass`'s buffers, kept for the next pass on this thread: a
    /// window policy rechecked every second builds a pass over a handful
    /// of tickets some ten times a ticket, and allocating and freeing its
    /// seven vectors each time was a quarter of `engagement-1v1`. Nothing of
    /// a pass is read by the next (each starts `stale`), so which thread
    /// ran a pass before never shows in what it proposes.
    static PASS_FRAME: std::cell::RefCell<PassFrame> = std::cell::RefCell::default();
}

/// `greedy_pass` in `frame`'s buffers.
fn greedy_pass_in(
    view: &PoolView<'_>,
    frame: &mut PassFrame,
    mut window: impl FnMut(&WaitingTicket) -> f64,
    mut accept: impl FnMut(&WaitingTicket, f64, &WaitingTicket) -> bool,
    mut emit: impl FnMut(Vec<TicketId>),
) {
    frame.stale();
    let mut pass = FreePass::reusing(
        view.pool,
        frame,
        view.format,
        view.pool.slots_oldest_first(),
    );
    for k in 0..pass.len() {
        // A pool too small for one more match: every further seed's walk
        // would fail, at a cost of the whole window each (teams of 200 in a
        // pool of 190 players walked it for minutes). Likewise a role queue
        // whose free players can no longer staff a match (the tanks are
        // gone): without this stop every damage seed walked the whole pool,
        // and a tick grew with the pool's square.
        if pass.free_players() < view.format.players() || !pass.roles_can_fill() {
            break;
        }
        let Some((pos, seed)) = pass.seed(k) else {
            continue;
        };
        let w = window(seed);
        // No staff for one match within the window: the walk would fail.
        if !pass.window_can_fill(pos, w) {
            #[cfg(test)]
            tests::SKIPPED.with(|c| c.set(c.get() + 1));
            continue;
        }
        if let Some(tickets) = pass.fill(view.format, pos, w, |d, t| accept(seed, d, t)) {
            emit(tickets);
        }
    }
    pass.into_frame(frame);
}

/// The whole `propose` of a window policy: on a join the newcomer seeds a
/// match from the nearest tickets within `window(seed)` that `accept(seed,
/// distance, other)` allows; on a tick `greedy_pass` seeds one from every
/// ticket, longest-waiting first. `emit` receives each match, seed first.
pub fn propose_windows(
    view: &PoolView<'_>,
    trigger: Trigger,
    mut window: impl FnMut(&WaitingTicket) -> f64,
    mut accept: impl FnMut(&WaitingTicket, f64, &WaitingTicket) -> bool,
    mut emit: impl FnMut(Vec<TicketId>),
) {
    match trigger {
        Trigger::Join(id) => {
            let Some(seed) = view.pool.get(id) else {
                return;
            };
            if let Some(tickets) =
                fill_from_nearest(view, seed, window(seed), |d, t| accept(seed, d, t))
            {
                emit(tickets);
            }
        }
        Trigger::Tick => greedy_pass(view, window, accept, emit),
    }
}

/// A mutual-window policy: a cadence and a window per ticket, and two
/// tickets meet only when each lies inside the other's window. Its
/// parameter type implementing this is a `Rule`, so the policy is
/// `Stateless<Params>` with nothing more to write.
pub trait MutualWindow: Send {
    /// When the policy is called.
    fn cadence(&self) -> &Cadence;

    /// The window of ticket `t` at `now`, in rating points on each side.
    fn window(&self, t: &WaitingTicket, now: SimTime) -> f64;
}

impl<W: MutualWindow> Rule for W {
    fn schedule(&self) -> Schedule {
        self.cadence().schedule()
    }

    fn propose(
        &self,
        view: &PoolView<'_>,
        trigger: Trigger,
        _rng: &mut Pcg64,
        out: &mut Vec<Proposal>,
    ) {
        propose_mutual_windows(view, trigger, |t| self.window(t, view.now), out);
    }
}

/// A mutual window is a window rule: `--explain` reports each ticket's window.
impl<W: MutualWindow> Explain for W {
    fn rating_window(&self, t: &WaitingTicket, now: SimTime) -> Option<f64> {
        Some(self.window(t, now))
    }
}

/// The whole `propose` of a mutual-window policy: two tickets may meet only
/// when each lies inside the other's `window`.
pub fn propose_mutual_windows(
    view: &PoolView<'_>,
    trigger: Trigger,
    window: impl Fn(&WaitingTicket) -> f64,
    out: &mut Vec<Proposal>,
) {
    propose_windows(
        view,
        trigger,
        &window,
        |_, d, t| d <= window(t),
        |tickets| out.push(Proposal::new(tickets)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{PlayerId, Rating};
    use crate::teams::Composition;
    use rand::{Rng, SeedableRng};
    use std::cell::Cell;

    /// `fill_from_nearest` as it was, building the role fill for every
    /// format (one without roles admits every party): the oracle.
    fn fill_from_nearest_plain(
        view: &PoolView<'_>,
        seed: &WaitingTicket,
        max_distance: f64,
        mut accept: impl FnMut(f64, &WaitingTicket) -> bool,
    ) -> Option<Vec<TicketId>> {
        let need = view.format.players();
        if seed.size() > need || seed.size() > view.format.team_size || view.pool.players() < need {
            return None;
        }
        let mut room = need - seed.size();
        let mut chosen = vec![seed.id];
        let mut packing = Packing::new(view.format.teams, view.format.team_size);
        packing.try_add(seed.size());
        if room == 0 {
            return Some(chosen);
        }
        let mut roles = RoleFill::new(view.format.roles, view.format.teams, &seed.roles);
        for (distance, t) in view.pool.nearest(seed.rating, seed.id) {
            if distance > max_distance {
                break;
            }
            if t.size() <= room
                && t.size() <= view.format.team_size
                && accept(distance, t)
                && roles.admits(&t.roles)
                && packing.try_add(t.size())
            {
                roles.take(&t.roles);
                chosen.push(t.id);
                room -= t.size();
                if room == 0 {
                    return Some(chosen);
                }
            }
        }
        None
    }

    /// Random pools of 1v1, 2v2 and 3v3 with parties, with and without a
    /// role queue, every ticket a seed, windows of several widths and an
    /// `accept` that turns some candidates down: `fill_from_nearest`
    /// proposes what the oracle does.
    #[test]
    fn fill_from_nearest_proposes_what_the_plain_fill_does() {
        let mut rng = Pcg64::seed_from_u64(29);
        let (mut filled, mut roled) = (0, 0);
        for round in 0..120 {
            let team_size = [1, 2, 3][round % 3];
            let roles = (round % 2 == 1 && team_size == 3).then(|| Composition::new(&[1, 1, 1]));
            let format = MatchFormat {
                teams: 2,
                team_size,
                roles,
            };
            let n = rng.random_range(0..60);
            let mut players = Vec::new();
            let mut pool = Pool::default();
            for id in 0..n {
                let size = if team_size > 1 && rng.random_bool(0.3) {
                    rng.random_range(2..=team_size + 1)
                } else {
                    1
                };
                let rating = 1500.0 + rng.random_range(-300.0..300.0_f64);
                let mut t = role_ticket(&mut rng, &mut players, id, size, rating, 0.3, 0.3);
                if roles.is_none() {
                    t.roles.clear();
                }
                pool.insert(t);
            }
            let view = PoolView {
                now: SimTime::ZERO,
                pool: &pool,
                players: &players,
                format,
                rerated: 0,
            };
            let turned_down = rng.random_range(0..5u32);
            for width in [10.0, 80.0, f64::INFINITY] {
                for id in 0..n {
                    let seed = pool.get(TicketId(id)).expect("waiting");
                    let accept = |d: f64, t: &WaitingTicket| t.id.0 % 5 != turned_down || d < 5.0;
                    let got = fill_from_nearest(&view, seed, width, accept);
                    let want = fill_from_nearest_plain(&view, seed, width, accept);
                    assert_eq!(got, want, "round {round}, seed {id}, width {width}");
                    filled += usize::from(got.is_some());
                    roled += usize::from(got.is_some() && roles.is_some());
                }
            }
        }
        assert!(
            filled > 1000 && roled > 100,
            "{filled} fills, {roled} with roles"
        );
    }

    thread_local! {
        /// Set: `window_can_fill` says yes without counting (the oracle).
        pub(super) static NO_WINDOW_COUNTS: Cell<bool> = const { Cell::new(false) };
        /// Seeds `greedy_pass` skipped on the window's counts.
        pub(super) static SKIPPED: Cell<u64> = const { Cell::new(0) };
        /// Set: a fill's walk visits every free ticket and asks a party's
        /// `accept` before its closed lanes (the oracle of `walk_open`).
        pub(super) static PLAIN_WALKS: Cell<bool> = const { Cell::new(false) };
        /// Tickets a fill's walk visited.
        pub(super) static VISITS: Cell<u64> = const { Cell::new(0) };
    }

    /// Whether `PLAIN_WALKS` is set.
    pub(super) fn plain_walks() -> bool {
        PLAIN_WALKS.with(Cell::get)
    }

    /// A party of `size` new players rated `rating`, each with a main role
    /// drawn as tank (bit 0) with chance `tank`, else healer (bit 1) with
    /// chance `healer`, else damage (bit 2), and a tenth accepting a second:
    /// its members and their role masks. Shared by the role-queue tests of
    /// `policy` and its submodules.
    pub(super) fn role_members(
        rng: &mut Pcg64,
        players: &mut Vec<Player>,
        size: usize,
        rating: f64,
        tank: f64,
        healer: f64,
    ) -> (crate::model::Party, crate::teams::PartyRoles) {
        let mut members = smallvec::SmallVec::new();
        let mut roles = smallvec::SmallVec::new();
        for _ in 0..size {
            let mut mask = if rng.random_bool(tank) {
                1u8
            } else if rng.random_bool(healer) {
                2
            } else {
                4
            };
            if rng.random_bool(0.1) {
                mask |= 1 << rng.random_range(0..3);
            }
            let pid = PlayerId(players.len() as u32);
            let mut p = Player::new(pid, rating, Rating::new(rating, 50.0, 0.06));
            p.roles = mask;
            players.push(p);
            members.push(pid);
            roles.push(mask);
        }
        (members, roles)
    }

    /// A waiting ticket `id` of `size` members at `rating`, its members'
    /// roles drawn by `role_members`, enqueued at time zero.
    pub(super) fn role_ticket(
        rng: &mut Pcg64,
        players: &mut Vec<Player>,
        id: u32,
        size: usize,
        rating: f64,
        tank: f64,
        healer: f64,
    ) -> WaitingTicket {
        let (members, roles) = role_members(rng, players, size, rating, tank, healer);
        WaitingTicket {
            id: TicketId(id),
            players: members,
            rating,
            enqueued: SimTime::ZERO,
            requeue: false,
            roles,
        }
    }

    /// Random 5v5 role queues (1 tank, 1 healer, 3 damage a team) with
    /// scarce tanks, parties and flexible players, and windows that widen
    /// with the wait: the pass proposes the same whether or not seeds
    /// whose window cannot staff a match are skipped, and it skips some.
    #[test]
    fn skipping_windows_that_cannot_staff_a_match_changes_no_proposal() {
        let mut rng = Pcg64::seed_from_u64(11);
        let format = MatchFormat {
            teams: 2,
            team_size: 5,
            roles: Some(Composition::new(&[1, 1, 3])),
        };
        for _ in 0..40 {
            let n = rng.random_range(20..400);
            let tank_share = rng.random_range(0.02..0.2);
            let mut players = Vec::new();
            let mut pool = Pool::default();
            for id in 0..n {
                let size = if rng.random_bool(0.15) { 2 } else { 1 };
                let rating = 1500.0 + rng.random_range(-600.0..600.0_f64);
                let mut t = role_ticket(&mut rng, &mut players, id, size, rating, tank_share, 0.2);
                t.enqueued = SimTime::from_ms(rng.random_range(0..120_000));
                pool.insert(t);
            }
            let view = PoolView {
                now: SimTime::from_ms(120_000),
                pool: &pool,
                players: &players,
                format,
                rerated: 0,
            };
            let run = |oracle: bool| {
                NO_WINDOW_COUNTS.with(|c| c.set(oracle));
                let mut out = Vec::new();
                greedy_pass(
                    &view,
                    |t| 30.0 + 3.0 * t.age_s(view.now),
                    |_, _, _| true,
                    |m| out.push(m),
                );
                NO_WINDOW_COUNTS.with(|c| c.set(false));
                out
            };
            assert_eq!(run(false), run(true));
        }
        assert!(
            SKIPPED.with(Cell::get) > 100,
            "skipped {}",
            SKIPPED.with(Cell::get)
        );
    }

    /// Random role queues (some with three teams, tanks scarce, parties
    /// of up to four, flexible players): every seed of a pass fills with
    /// the closed lanes' walk (`walk_open`) exactly as with a walk that
    /// visits every free ticket and asks a party's `accept` first (the
    /// oracle), whole failure included, as matches are taken; and the
    /// lanes spare most of the visits.
    #[test]
    fn a_walk_past_closed_lanes_fills_as_the_plain_walk() {
        let mut rng = Pcg64::seed_from_u64(29);
        let (mut asked, mut asked_plain, mut filled, mut closed) = (0u64, 0u64, 0, 0);
        for round in 0..60 {
            let format = MatchFormat {
                teams: if round % 3 == 0 { 3 } else { 2 },
                team_size: 5,
                roles: Some(Composition::new(&[1, 1, 3])),
            };
            let n = rng.random_range(20..500);
            let tank_share = rng.random_range(0.02..0.3);
            let mut players = Vec::new();
            let mut pool = Pool::default();
            for id in 0..n {
                let size = if rng.random_bool(0.3) {
                    rng.random_range(2..=4)
                } else {
                    1
                };
                // Whole ratings: ties between the two sides of a walk.
                let rating = 1500.0 + rng.random_range(-300..300) as f64;
                let mut t = role_ticket(&mut rng, &mut players, id, size, rating, tank_share, 0.15);
                t.enqueued = SimTime::from_ms(rng.random_range(0..120_000));
                pool.insert(t);
            }
            let mut fast = FreePass::new(&pool);
            fast.track_roles(format);
            let mut plain = fast.clone();
            let width = rng.random_range(20.0..400.0);
            for k in 0..fast.len() {
                let Some((pos, _)) = fast.seed(k) else {
                    assert!(plain.seed(k).is_none(), "round {round}");
                    continue;
                };
                let w = width * rng.random_range(0.5..1.5);
                let visits = VISITS.with(Cell::get);
                let got = fast.try_fill(format, pos, w, |_, _| true, |_, _, _| None);
                let mid = VISITS.with(Cell::get);
                asked += mid - visits;
                PLAIN_WALKS.with(|c| c.set(true));
                let want = plain.try_fill(format, pos, w, |_, _| true, |_, _, _| None);
                asked_plain += VISITS.with(Cell::get) - mid;
                PLAIN_WALKS.with(|c| c.set(false));
                assert_eq!(got, want, "round {round}, seed at {pos}");
                filled += usize::from(got.is_ok());
                closed += usize::from(got.as_ref().is_err_and(|f| f.closed != 0));
            }
        }
        assert!(
            filled > 200 && closed > 1000,
            "{filled} fills, {closed} failures with closed lanes"
        );
        assert!(
            asked * 2 < asked_plain,
            "asked {asked} against {asked_plain}"
        );
    }
}
