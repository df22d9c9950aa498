//! Why a ticket was not matched (`--explain`): after each policy pass the
//! engine looks at the tickets it considered (every waiting ticket after a
//! tick, the newcomer after a join), finds each one's nearest candidates by
//! rating and names the rule that blocked each: party split, role queue,
//! `[regions]` latency, or the policy's own rules (a policy reports them
//! through its optional `policy::Explain`: a rating window, a falling score
//! threshold, a pair rule; one that implements none is asked nothing). Once matched, it works out the wait at which the
//! window would first have allowed the match the ticket got. One record per
//! ticket, updated in place, so the cost is per look, not per pass kept; the
//! run never looks in here when explain is off (it is a layer,
//! `engine::layer`, present only with `--explain`).

use crate::engine::layer::{Layer, Peers};
use crate::engine::regions::Regions;
use crate::engine::world::World;
use crate::metrics::explain::{
    BackfillJoin, BlockRule, Candidate, OpenSlotSeen, RoleCount, TicketStory, RULES,
};
use crate::metrics::{Collector, TicketEnd};
use crate::model::{SimDuration, SimTime, TicketId};
use crate::policy::{self, MatchFormat, Policy, RuleCheck, Trigger};
use crate::pool::{Pool, WaitingTicket};
use crate::teams::{Packing, PoolRoles, RoleFill};
use std::collections::HashMap;

/// Candidates examined per look.
pub const CANDIDATES: usize = 3;

/// What a look has found so far about one waiting ticket.
#[derive(Clone, Debug, Default)]
struct Live {
    looks: u32,
    last_look: SimTime,
    first: Option<BlockRule>,
    current: Option<BlockRule>,
    blocked_s: [f64; RULES.len()],
    candidates: Vec<Candidate>,
    threshold: Option<f64>,
    gap: Option<f64>,
    window_at: Option<SimDuration>,
    score: Option<f64>,
    threshold_at: Option<SimDuration>,
    latency_at: Option<SimDuration>,
    rule: Option<BlockRule>,
    rule_at: Option<SimDuration>,
    /// The blocker before a failed ready check took it out of the pool.
    before_check: Option<BlockRule>,
    /// In a role queue: the waiting players' roles at the last look.
    roles: Option<RoleSupply>,
    /// With `[backfill]`: the open slot nearest to taking it at the last
    /// look, and the slot it filled if it joined a running match.
    slot: Option<OpenSlotSeen>,
    joined: Option<BackfillJoin>,
}

/// In a role queue, the supply of each role around one ticket at one look:
/// how many of the players a match with it could draw on accept the role,
/// against the slots of one match; and whether they could staff a match
/// at all (Hall's condition over every set of roles, necessary for any
/// match). When they could not, no policy could have matched the ticket,
/// and the role they are shortest of is the reason.
#[derive(Clone, Debug, PartialEq)]
pub struct RoleSupply {
    pub waiting: Vec<u32>,
    pub slots: Vec<u32>,
    pub staffable: bool,
}

impl RoleSupply {
    /// Counted over `t` and the waiting tickets no pair rule keeps from it
    /// (party split, roles, latency, its rating window), walked nearest
    /// first and no further than its window reaches; `None` without a
    /// role queue. These are the players a match with `t` could draw on.
    pub fn around(
        pool: &Pool,
        format: MatchFormat,
        policy: Says<'_>,
        regions: Option<&Regions>,
        t: &WaitingTicket,
        now: SimTime,
    ) -> Option<RoleSupply> {
        let comp = format.roles?;
        let mut hall = PoolRoles::new(comp, format.teams);
        let mut waiting = vec![0u32; comp.roles()];
        let mut add = |masks: &[u8]| {
            for &m in masks {
                for (r, w) in waiting.iter_mut().enumerate() {
                    *w += u32::from(m >> r & 1);
                }
            }
            if let Some(h) = hall.as_mut() {
                h.add(masks);
            }
        };
        add(&t.roles);
        let reach = policy.rating_window(t, now);
        for (d, c) in pool.nearest(t.rating, t.id) {
            if reach.is_some_and(|w| d > w) {
                break;
            }
            if blocker(format, policy, regions, t, c, now).0.is_none() {
                add(&c.roles);
            }
        }
        let slots: Vec<u32> = (0..comp.roles())
            .map(|r| (comp.slots(r) * format.teams) as u32)
            .collect();
        // Beyond the subset-counting size, each role on its own.
        let staffable = hall.map_or_else(
            || waiting.iter().zip(&slots).all(|(w, s)| w >= s),
            |h| h.can_fill(),
        );
        Some(RoleSupply {
            waiting,
            slots,
            staffable,
        })
    }

    /// When the waiting players cannot staff a match, the role they are
    /// shortest of, relative to its slots.
    pub fn short_role(&self) -> Option<usize> {
        if self.staffable {
            return None;
        }
        (0..self.slots.len())
            .filter(|&r| self.slots[r] > 0)
            .min_by(|&a, &b| {
                let share = |r: usize| f64::from(self.waiting[r]) / f64::from(self.slots[r]);
                share(a).total_cmp(&share(b))
            })
    }
}

/// The explain state of a run: the waiting tickets' records. Looked up by
/// ticket id, never iterated into output.
#[derive(Default)]
pub(super) struct Explain {
    live: HashMap<TicketId, Live>,
    /// The role queue's role names (`[roles]`), for the stories.
    role_names: Option<Vec<String>>,
    /// The scenario's expansion steps, each story listing those its wait reached.
    expansions: Vec<crate::model::ExpansionStep>,
}

impl Explain {
    /// The explain layer of a run with these roles and expansion steps.
    pub(super) fn new(
        role_names: Option<Vec<String>>,
        expansions: Vec<crate::model::ExpansionStep>,
    ) -> Self {
        Explain {
            live: HashMap::new(),
            role_names,
            expansions,
        }
    }
}

/// The policy's `--explain` hooks, or none: a policy without an `Explain`
/// impl answers every question `None`, as one that leaves a hook alone.
#[derive(Clone, Copy)]
pub struct Says<'a>(Option<&'a dyn policy::Explain>);

impl<'a> Says<'a> {
    /// What `policy` can say (`Policy::explain`).
    pub fn of(policy: &'a dyn Policy) -> Self {
        Says(policy.explain())
    }

    fn rating_window(self, t: &WaitingTicket, now: SimTime) -> Option<f64> {
        self.0?.rating_window(t, now)
    }

    fn score_threshold(self, waited_s: f64) -> Option<f64> {
        self.0?.score_threshold(waited_s)
    }

    fn match_score(self, view: &policy::PoolView<'_>, teams: &[Vec<TicketId>]) -> Option<f64> {
        self.0?.match_score(view, teams)
    }

    fn pair_rule(self, t: &WaitingTicket, c: &WaitingTicket, now: SimTime) -> Option<RuleCheck> {
        self.0?.pair_rule(t, c, now)
    }
}

/// Whether `policy` reports a rating window (asked of a ticket that has
/// just joined) and a quality threshold.
pub fn reports_window(policy: &dyn Policy) -> (bool, bool) {
    let policy = Says::of(policy);
    let t = probe_ticket();
    (
        policy.rating_window(&t, SimTime::ZERO).is_some(),
        policy.score_threshold(0.0).is_some(),
    )
}

/// Whether `policy` reports a pair rule of its own (asked of two tickets
/// that have just joined).
pub fn reports_pair_rule(policy: &dyn Policy) -> bool {
    let policy = Says::of(policy);
    let t = probe_ticket();
    policy.pair_rule(&t, &t, SimTime::ZERO).is_some()
}

/// An empty ticket that has just joined, to ask a policy what it reports.
fn probe_ticket() -> WaitingTicket {
    WaitingTicket {
        id: TicketId(0),
        players: Default::default(),
        rating: 0.0,
        enqueued: SimTime::ZERO,
        requeue: false,
        roles: Default::default(),
    }
}

/// What blocks `t` from candidate `c` at `now`, in the order the rules are
/// checked; `None` when every rule the engine knows allows the pair.
pub fn blocker(
    format: MatchFormat,
    policy: Says<'_>,
    regions: Option<&Regions>,
    t: &WaitingTicket,
    c: &WaitingTicket,
    now: SimTime,
) -> (Option<BlockRule>, Option<f64>, Option<f64>) {
    let mut packing = Packing::new(format.teams, format.team_size);
    let fits = t.size() + c.size() <= format.players()
        && t.size() <= format.team_size
        && c.size() <= format.team_size
        && packing.try_add(t.size())
        && packing.try_add(c.size());
    let (w, wc) = (policy.rating_window(t, now), policy.rating_window(c, now));
    if !fits {
        return (Some(BlockRule::PartySplit), w, wc);
    }
    if !RoleFill::new(format.roles, format.teams, &t.roles).admits(&c.roles) {
        return (Some(BlockRule::Roles), w, wc);
    }
    if let Some(r) = regions {
        let ok = |x: &WaitingTicket, dc: usize| {
            r.geo.ticket_ping(&x.players, dc) <= r.config.limit_at(now.since(x.enqueued))
        };
        if !(0..r.config.data_centres.len()).any(|dc| ok(t, dc) && ok(c, dc)) {
            return (Some(BlockRule::Latency), w, wc);
        }
    }
    let d = (t.rating - c.rating).abs();
    if w.is_some_and(|w| d > w) || wc.is_some_and(|w| d > w) {
        return (Some(BlockRule::RatingWindow), w, wc);
    }
    (None, w, wc)
}

/// `t`'s nearest candidates at `now` with their blockers, and the ticket's
/// blocker: the nearest candidate's; when some candidate passes every pair
/// rule, `QualityThreshold` under a policy with one and a pool that holds a
/// match's players, else `Fill`; `Alone` when nobody else waits.
// The world's parts one by one, as `blocker` takes them, plus the two
// out-parameters a look fills: a bundle would be a type for one cold path.
#[allow(clippy::too_many_arguments)]
pub fn look(
    pool: &Pool,
    format: MatchFormat,
    policy: Says<'_>,
    regions: Option<&Regions>,
    t: &WaitingTicket,
    now: SimTime,
    roles: Option<&mut Option<RoleSupply>>,
    out: &mut Vec<Candidate>,
) -> BlockRule {
    out.clear();
    for (distance, c) in pool.nearest(t.rating, t.id).take(CANDIDATES) {
        let (blocked_by, window, their_window) = blocker(format, policy, regions, t, c, now);
        // The policy's own rule comes after the rules the engine knows.
        let own = policy.pair_rule(t, c, now);
        out.push(Candidate {
            ticket_id: c.id.0,
            rating: c.rating,
            distance,
            blocked_by: blocked_by.or(own.filter(|r| !r.allows).map(|r| r.rule)),
            window: window.or(own.and_then(|r| r.window)),
            their_window: their_window.or(own.and_then(|r| r.their_window)),
            rule_value: own.and_then(|r| r.value),
            rule_limit: own.and_then(|r| r.limit),
        });
    }
    // In a role queue, the players a match with `t` could draw on: when
    // they cannot staff one match's roles, that is why it waits, whatever
    // the policy.
    let supply = roles.map(|slot| {
        *slot = RoleSupply::around(pool, format, policy, regions, t, now);
        slot.as_ref().is_some_and(|s| !s.staffable)
    });
    match out.first() {
        None => BlockRule::Alone,
        Some(_) if supply == Some(true) && out.iter().any(|c| c.blocked_by.is_none()) => {
            BlockRule::Roles
        }
        Some(_) if out.iter().any(|c| c.blocked_by.is_none()) => {
            if pool.players() >= format.players() && policy.score_threshold(t.age_s(now)).is_some()
            {
                BlockRule::QualityThreshold
            } else {
                BlockRule::Fill
            }
        }
        Some(c) => c.blocked_by.unwrap_or(BlockRule::Fill),
    }
}

/// The least wait (to the ms, at most `waited`) at which `policy`'s window
/// for `t` reaches `gap`; `None` if it never did by then or the policy
/// reports no window. Windows never narrow with the wait, so a bisection
/// finds it.
pub fn window_allowed_at(
    policy: Says<'_>,
    t: &WaitingTicket,
    gap: f64,
    waited: SimDuration,
) -> Option<SimDuration> {
    first_wait(waited, |ms| {
        policy
            .rating_window(t, t.enqueued + SimDuration::from_ms(ms))
            .is_some_and(|w| w + 1e-9 >= gap)
    })
}

/// The least wait (to the ms, at most `waited`) at which `policy`'s falling
/// quality threshold reaches `score`; `None` if it had not by then.
pub fn threshold_allowed_at(
    policy: Says<'_>,
    score: f64,
    waited: SimDuration,
) -> Option<SimDuration> {
    first_wait(waited, |ms| {
        policy
            .score_threshold(ms as f64 / 1000.0)
            // A threshold computed as 0.8 - 0.002 * 50 lands a rounding
            // error above 0.7: equal to within 1e-9 is reached.
            .is_some_and(|th| th <= score + 1e-9)
    })
}

/// The rule `policy` applies between `t` and the other tickets of its
/// match (the first the policy names), and the least wait (to the ms, at
/// most `waited`) at which it allowed every one of them; no wait when the
/// rule does not stay allowing as waits grow (brackets, rematches,
/// predicted churn) or had not allowed them by then.
pub fn rule_allowed_at(
    policy: Says<'_>,
    t: &WaitingTicket,
    others: &[&WaitingTicket],
    waited: SimDuration,
) -> (Option<BlockRule>, Option<SimDuration>) {
    let now = t.enqueued + waited;
    let checks: Vec<_> = others
        .iter()
        .filter_map(|o| policy.pair_rule(t, o, now))
        .collect();
    let Some(first) = checks.first() else {
        return (None, None);
    };
    if !checks.iter().all(|c| c.monotone) {
        return (Some(first.rule), None);
    }
    let at = first_wait(waited, |ms| {
        let then = t.enqueued + SimDuration::from_ms(ms);
        others
            .iter()
            .all(|o| policy.pair_rule(t, o, then).is_none_or(|c| c.allows))
    });
    (Some(first.rule), at)
}

/// The least ms in `0..=waited` where `reaches` holds, for a `reaches`
/// that stays true once true.
fn first_wait(waited: SimDuration, reaches: impl Fn(u64) -> bool) -> Option<SimDuration> {
    let (mut lo, mut hi) = (0u64, waited.as_ms());
    if !reaches(hi) {
        return None;
    }
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if reaches(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Some(SimDuration::from_ms(lo))
}

impl Layer for Explain {
    /// After a policy pass: looks at the tickets it considered.
    #[cold]
    #[inline(never)]
    fn after_pass(
        &mut self,
        world: &World,
        out: &mut Collector<'_>,
        peers: Peers<'_>,
        trigger: Trigger,
    ) {
        let now = world.now;
        let policy = Says::of(peers.policy);
        let regions = peers.regions;
        let mut acc = (world.warmup_end, out.explain());
        let (pool, format) = (&world.pool, world.format);
        let (bf, players) = (peers.backfill, &world.players[..]);
        let role_names = self.role_names.as_deref();
        let live_map = &mut self.live;
        let mut look_at = |t: &WaitingTicket| {
            let live = live_map.entry(t.id).or_insert_with(|| Live {
                last_look: t.enqueued,
                ..Default::default()
            });
            let rule = look(
                pool,
                format,
                policy,
                regions,
                t,
                now,
                Some(&mut live.roles),
                &mut live.candidates,
            );
            if live.current.is_none() && trigger == Trigger::Tick {
                // Not looked at when it joined (a batch or tick-mode
                // policy): until this pass it waited for the pass itself.
                live.current = Some(BlockRule::BatchDue);
            }
            settle(live, t, now, &mut acc);
            live.looks += 1;
            live.first.get_or_insert(rule);
            live.current = Some(rule);
            live.threshold = policy.score_threshold(t.age_s(now));
            live.slot = bf.and_then(|bf| {
                super::backfill::nearest_slot(
                    bf,
                    players,
                    t,
                    format.roles.map(|c| c.roles()),
                    role_names,
                    now,
                )
            });
        };
        match trigger {
            Trigger::Join(id) => {
                if let Some(t) = pool.get(id) {
                    look_at(t);
                }
            }
            Trigger::Tick => pool.oldest_first().for_each(look_at),
        }
    }

    /// Before a match's tickets leave: each one's gap to the others and the
    /// waits at which its window and latency limit would have allowed it.
    #[cold]
    #[inline(never)]
    fn forming(
        &mut self,
        world: &World,
        _out: &mut Collector<'_>,
        peers: Peers<'_>,
        teams: &[Vec<TicketId>],
    ) {
        let policy = Says::of(peers.policy);
        let view = crate::policy::PoolView {
            now: world.now,
            pool: &world.pool,
            players: &world.players,
            format: world.format,
            rerated: world.rerated,
        };
        let score = policy.match_score(&view, teams);
        let tickets: Vec<TicketId> = teams.iter().flatten().copied().collect();
        let tickets = &tickets[..];
        for id in tickets {
            let Some(t) = world.pool.get(*id) else {
                continue;
            };
            let gap = tickets
                .iter()
                .filter_map(|o| world.pool.get(*o))
                .map(|o| (o.rating - t.rating).abs())
                .fold(0.0, f64::max);
            let waited = world.now.since(t.enqueued);
            let live = self.live.entry(t.id).or_insert_with(|| Live {
                last_look: t.enqueued,
                ..Default::default()
            });
            live.gap = Some(gap);
            live.window_at = window_allowed_at(policy, t, gap, waited);
            let others: Vec<&WaitingTicket> = tickets
                .iter()
                .filter(|o| *o != id)
                .filter_map(|o| world.pool.get(*o))
                .collect();
            (live.rule, live.rule_at) = rule_allowed_at(policy, t, &others, waited);
            live.score = score;
            live.threshold_at = score.and_then(|s| threshold_allowed_at(policy, s, waited));
            if let (Some(r), Some(dc)) = (peers.regions, peers.host) {
                let ping = r.geo.ticket_ping(&t.players, dc as usize);
                live.latency_at = r
                    .config
                    .steps
                    .iter()
                    .find(|s| s.max_ping_ms >= ping)
                    .map(|s| s.after);
            }
        }
    }

    /// A failed ready check holds `tickets` out of the pool (`into`), or its
    /// cancel returns them (not `into`; before their wait may restart): the
    /// time in between is the check's, and the blocker found before it
    /// stands again until the next look.
    #[cold]
    #[inline(never)]
    fn tickets_held(
        &mut self,
        world: &World,
        out: &mut Collector<'_>,
        tickets: &[&WaitingTicket],
        into: bool,
    ) {
        let mut acc = (world.warmup_end, out.explain());
        for t in tickets {
            let live = self.live.entry(t.id).or_insert_with(|| Live {
                last_look: t.enqueued,
                ..Default::default()
            });
            settle(live, t, world.now, &mut acc);
            if into {
                live.before_check = live.current.replace(BlockRule::ReadyCheck);
            } else {
                live.current = live.before_check.take();
            }
        }
    }

    /// `t` is about to join a running match by backfill, into `slot`.
    #[cold]
    #[inline(never)]
    fn backfill_join(&mut self, t: &WaitingTicket, slot: &BackfillJoin) {
        self.live
            .entry(t.id)
            .or_insert_with(|| Live {
                last_look: t.enqueued,
                ..Default::default()
            })
            .joined = Some(slot.clone());
    }

    /// A ticket leaves the queue: its story goes to the collector.
    #[cold]
    #[inline(never)]
    fn ticket_left(
        &mut self,
        world: &World,
        out: &mut Collector<'_>,
        t: &WaitingTicket,
        left: SimTime,
        end: TicketEnd,
    ) {
        let mut live = self.live.remove(&t.id).unwrap_or(Live {
            last_look: t.enqueued,
            ..Default::default()
        });
        let counted = t.enqueued >= world.warmup_end;
        let mut acc = (world.warmup_end, out.explain());
        if live.current.is_none() && left > t.enqueued {
            // Gone (matched at a tick, or gave up) before any look: it
            // waited for a pass that does not look at joiners.
            live.current = Some(BlockRule::BatchDue);
        }
        settle(&mut live, t, left, &mut acc);
        let secs = |d: SimDuration| d.as_secs_f64();
        let (end_name, match_id) = match end {
            TicketEnd::Matched(m) => ("matched", Some(m.0)),
            TicketEnd::Abandoned => ("abandoned", None),
            TicketEnd::Declined => ("declined", None),
            TicketEnd::Waiting => ("waiting", None),
        };
        let waited_s = left.since(t.enqueued).as_secs_f64();
        let story = TicketStory {
            expansions: self
                .expansions
                .iter()
                .filter(|e| e.at_s <= waited_s)
                .cloned()
                .collect(),
            ticket_id: t.id.0,
            party_size: t.size() as u32,
            rating: t.rating,
            enqueued_s: t.enqueued.as_secs_f64(),
            left_s: left.as_secs_f64(),
            outcome: end_name.to_owned(),
            match_id,
            looks: live.looks,
            first_blocker: live.first,
            last_blocker: live.current,
            candidates: live.candidates,
            blocked_s: RULES
                .iter()
                .zip(live.blocked_s)
                .filter(|(_, s)| *s > 0.0)
                .map(|(r, s)| (*r, s))
                .collect(),
            match_gap: live.gap,
            window_allowed_at_s: live.window_at.map(secs),
            threshold: live.threshold,
            match_score: live.score,
            threshold_allowed_at_s: live.threshold_at.map(secs),
            latency_allowed_at_s: live.latency_at.map(secs),
            policy_rule: live.rule,
            policy_rule_allowed_at_s: live.rule_at.map(secs),
            roles_waiting: live.roles.as_ref().and_then(|r| {
                let names = self.role_names.as_ref()?;
                Some(
                    (names.iter().zip(r.waiting.iter().zip(&r.slots)))
                        .map(|(n, (&waiting, &slots))| (n.clone(), RoleCount { waiting, slots }))
                        .collect(),
                )
            }),
            short_role: live.roles.as_ref().and_then(|r| {
                let names = self.role_names.as_ref()?;
                r.short_role().and_then(|i| names.get(i).cloned())
            }),
            // A joiner's story is the slot it filled, not one it missed before.
            open_slot: live.slot.filter(|_| live.joined.is_none()),
            backfill: live.joined,
        };
        if let Some(acc) = acc.1 {
            acc.story(story, counted);
        }
    }
}

/// Charges the time since the last look to the blocker found then.
fn settle(
    live: &mut Live,
    t: &WaitingTicket,
    now: SimTime,
    acc: &mut (SimTime, Option<&mut crate::metrics::explain::ExplainAcc>),
) {
    if let Some(rule) = live.current {
        let from = live.last_look.since(t.enqueued).as_secs_f64();
        let to = now.since(t.enqueued).as_secs_f64();
        if to > from {
            live.blocked_s[rule.index()] += to - from;
            if let (true, Some(a)) = (t.enqueued >= acc.0, acc.1.as_deref_mut()) {
                a.blocked(rule, from, to);
            }
        }
    }
    live.last_look = now;
}
