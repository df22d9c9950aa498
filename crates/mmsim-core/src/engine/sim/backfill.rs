//! Players leaving running matches, and backfill (`[backfill]`). Each
//! player's time to leave is exponential, drawn when the match starts (or
//! when a backfiller joins); a leave opens a slot that is filled from the
//! queue before the policy's own pass, as AccelByte's backfill "takes
//! precedence over new match creation" and FlexMatch's backfill request
//! looks for players who fit the match already playing: here the
//! nearest-rated waiting solo within a window around the leaver's rating
//! that widens while the slot stays open. Who wins is drawn at the start as
//! before; once the teams change, the winner is redrawn (coupled to the
//! first draw, so it changes as rarely as it can) from the win probability
//! averaged over the match's time, each stretch with the teams then playing.
//! With a role queue the slot opens in the leaver's role and only a party
//! that can play it fills it (`backfill_roles.rs`); with a ready check the
//! joiner answers it first (`backfill_ready.rs`).

use super::backfill_roles::{open_counts, party_roles, NO_ROLE};
use super::{timer_key, Event, Simulation, Slot};
use crate::metrics::explain::{BackfillJoin, OpenSlotSeen, SlotBlock};
use crate::metrics::TicketEnd;
use crate::model::{Player, SimDuration, SimTime, TicketId};
use crate::outcome::TeamSkills;
use crate::pool::WaitingTicket;
use crate::teams::roles::MAX_ROLES;
use rand::Rng;
use rand_distr::{Distribution, Exp1};
use rand_pcg::Pcg64;
use smallvec::SmallVec;

/// Leaves and backfill as the engine runs them.
#[derive(Clone, Debug, PartialEq)]
pub struct Backfill {
    /// Probability that a playing player leaves within a given minute.
    pub leave_per_min: f64,
    /// Whether open slots are filled from the queue.
    pub fill: bool,
    /// Rating window (each side of the leaver's rating) when the slot opens.
    pub window: f64,
    pub widen_per_s: f64,
    pub max_window: f64,
    /// Strength a team loses per missing player, in true-skill points.
    pub short_handed_penalty: f64,
}

/// One running match's leaves, by its slot.
#[derive(Default)]
#[doc(hidden)]
pub struct LeaveState {
    /// Per member (in `Active::members` order): whether they left.
    left: Vec<bool>,
    pub end: SimTime,
    start: SimTime,
    /// P(team 0 wins) with the teams playing now, and its integral over
    /// the match so far (probability x milliseconds).
    pub p_now: f64,
    p_integral: f64,
    last_change: SimTime,
    leaves: u32,
}

/// A slot a leaver opened, waiting for a backfiller.
#[derive(Clone, Copy, Debug)]
#[doc(hidden)]
pub struct OpenSlot {
    slot: u32,
    team: u32,
    opened: SimTime,
    pub rating: f64,
    in_warmup: bool,
    /// The role the leaver played (`NO_ROLE` without a role queue).
    pub role: u8,
    /// Not offered before this: a joiner declined its ready check and the
    /// slot waits for that answer (the slot's opening otherwise).
    pub retry_at: SimTime,
}

impl OpenSlot {
    /// Whether `other` is open in the same team of the same match.
    fn same_team(&self, other: &OpenSlot) -> bool {
        self.slot == other.slot && self.team == other.team
    }
}

/// How many slots of each role are open in `o`'s team (`o` among them).
fn team_open_roles(open: &[OpenSlot], o: &OpenSlot, roles: usize) -> [u8; MAX_ROLES] {
    open_counts(
        open.iter().filter(|x| x.same_team(o)).map(|x| x.role),
        roles,
    )
}

/// What one team's open slots can take: as many players as are open, and
/// in a role queue (its number of roles) as many of each role.
struct Room {
    players: usize,
    roles: Option<(usize, [u8; MAX_ROLES])>,
}

impl Room {
    fn of(open: &[OpenSlot], o: &OpenSlot, roles: Option<usize>) -> Room {
        Room {
            players: open.iter().filter(|x| x.same_team(o)).count(),
            roles: roles.map(|n| (n, team_open_roles(open, o, n))),
        }
    }
}

/// What keeps a slot in the leaver's `role`, with its team's `room`, from
/// taking `t`, its window aside; `None` when it could. The one rule for
/// both the backfill pass and `--explain`.
fn misfit(players: &[Player], t: &WaitingTicket, room: &Room, role: u8) -> Option<SlotBlock> {
    if t.size() > room.players {
        return Some(SlotBlock::PartySize);
    }
    match &room.roles {
        Some((n, counts)) if party_roles(players, t, counts, *n, role).is_none() => {
            Some(SlotBlock::Roles)
        }
        _ => None,
    }
}

/// From `t`'s side, the open slot that came nearest to taking it at
/// `now`: the nearest (to the leaver's rating) of the slots its party
/// fits, else the nearest of all; with the rule that kept it.
pub(super) fn nearest_slot(
    bf: &Backfills,
    players: &[Player],
    t: &WaitingTicket,
    roles: Option<usize>,
    role_names: Option<&[String]>,
    now: SimTime,
) -> Option<OpenSlotSeen> {
    let seen = bf.open.iter().map(|o| {
        let room = Room::of(&bf.open, o, roles);
        let distance = (t.rating - o.rating).abs();
        let w = window(&bf.config, o.opened, now);
        let block = misfit(players, t, &room, o.role);
        let block = if o.retry_at > now {
            Some(SlotBlock::ReadyCheck)
        } else {
            block.or((distance > w).then_some(SlotBlock::Window))
        };
        (o, room.players, distance, w, block)
    });
    let fits = |b: &Option<SlotBlock>| !matches!(b, Some(SlotBlock::PartySize | SlotBlock::Roles));
    let (o, team_open, distance, w, block) = seen.min_by(|a, b| {
        (!fits(&a.4), a.2)
            .partial_cmp(&(!fits(&b.4), b.2))
            .unwrap_or(std::cmp::Ordering::Equal)
    })?;
    Some(OpenSlotSeen {
        open_slots: bf.open.len() as u32,
        leaver_rating: o.rating,
        distance,
        window: w,
        team_open: team_open as u32,
        role: role_names.and_then(|n| n.get(o.role as usize).cloned()),
        // The backfill pass before the look takes any ticket a slot can:
        // one it could still take means the pass has not run since.
        blocked_by: block?,
    })
}

#[doc(hidden)]
pub struct Backfills {
    config: Backfill,
    /// Leave rate per second: P(leave within 60 s) = leave_per_min.
    rate_per_s: f64,
    rng: Pcg64,
    pub slots: Vec<LeaveState>,
    /// Oldest first: the slot open longest is filled first.
    pub open: Vec<OpenSlot>,
}

impl OpenSlot {
    pub(super) fn in_warmup(&self) -> bool {
        self.in_warmup
    }
}

impl Backfills {
    pub(super) fn new(config: Backfill, rng: Pcg64) -> Self {
        let rate_per_s = -(1.0 - config.leave_per_min).ln() / 60.0;
        Backfills {
            config,
            rate_per_s,
            rng,
            slots: Vec::new(),
            open: Vec::new(),
        }
    }

    /// When a player who plays from `now` until `end` leaves, if before the end.
    fn draw_leave(&mut self, now: SimTime, end: SimTime) -> Option<SimTime> {
        if self.rate_per_s <= 0.0 {
            return None;
        }
        let x: f64 = Exp1.sample(&mut self.rng);
        let at = now + SimDuration::from_secs_f64(x / self.rate_per_s);
        (at < end).then_some(at)
    }

    fn advance(&mut self, slot: usize, now: SimTime) {
        let st = &mut self.slots[slot];
        st.p_integral += st.p_now * now.since(st.last_change).as_ms() as f64;
        st.last_change = now;
    }
}

/// The window of a slot open since `opened`, at `now`.
pub fn window(c: &Backfill, opened: SimTime, now: SimTime) -> f64 {
    (c.window + c.widen_per_s * now.since(opened).as_secs_f64()).min(c.max_window)
}

/// The slot `o` that `t` fills at `now`, as its story tells it.
fn join_story(
    c: &Backfill,
    o: &OpenSlot,
    t: &WaitingTicket,
    now: SimTime,
    role_names: Option<&[String]>,
) -> BackfillJoin {
    let distance = (t.rating - o.rating).abs();
    // The window widens linearly from the slot's opening; it had reached
    // the ticket when it joined, so the crossing is at most now.
    let after_s = if distance <= c.window || c.widen_per_s <= 0.0 {
        0.0
    } else {
        (distance - c.window) / c.widen_per_s
    };
    let opened_s = o.opened.as_secs_f64();
    BackfillJoin {
        leaver_rating: o.rating,
        slot_opened_s: opened_s,
        distance,
        window: window(c, o.opened, now),
        window_reached_s: (opened_s + after_s).min(now.as_secs_f64()),
        role: role_names.and_then(|n| n.get(o.role as usize).cloned()),
    }
}

/// Redraws the winner of two teams for a final P(team 0) `p1` after it was
/// drawn with `p0`, changing it only as often as the change of probability
/// requires (the maximal coupling): team 0 keeps a win with probability
/// min(1, p1/p0), and a loss turns into a win with probability
/// max(0, (p1 - p0)/(1 - p0)); either way P(team 0 wins) is `p1`.
pub fn redraw_winner(winner: usize, p0: f64, p1: f64, u: f64) -> usize {
    if winner == 0 {
        if p1 >= p0 || u < p1 / p0 {
            0
        } else {
            1
        }
    } else if p1 <= p0 || u >= (p1 - p0) / (1.0 - p0) {
        1
    } else {
        0
    }
}

impl Simulation<'_> {
    /// At a match's start: its leave state, and each player's leave time.
    pub(super) fn draw_leaves(&mut self, slot: Slot, p_team0: f64, duration: SimDuration) {
        let now = self.world.now;
        let active = &self.world.active[slot.0 as usize];
        let n = active.members.len();
        let in_warmup = active.record.as_ref().is_some_and(|r| r.in_warmup);
        let Some(bf) = self.bf.as_mut() else {
            return;
        };
        let s = slot.0 as usize;
        if bf.slots.len() <= s {
            bf.slots.resize_with(s + 1, LeaveState::default);
        }
        let end = now + duration;
        let st = &mut bf.slots[s];
        st.left.clear();
        st.left.resize(n, false);
        st.start = now;
        st.end = end;
        st.p_now = p_team0;
        st.p_integral = 0.0;
        st.last_change = now;
        st.leaves = 0;
        for i in 0..n {
            if let Some(at) = bf.draw_leave(now, end) {
                self.queue.schedule(at, Event::Leave(slot, i as u32));
            }
        }
        if let Some(acc) = self.collector.backfill() {
            acc.started(in_warmup);
        }
    }

    /// Member `i` of the match in `slot` leaves: they are free at once, the
    /// teams' win probability changes, and their slot opens for backfill.
    #[doc(hidden)]
    pub fn on_leave(&mut self, slot: Slot, i: u32) {
        let s = slot.0 as usize;
        let now = self.world.now;
        let Some(bf) = self.bf.as_mut() else {
            return;
        };
        let active = &self.world.active[s];
        if active.id.is_none() || bf.slots[s].left.get(i as usize) != Some(&false) {
            return;
        }
        bf.advance(s, now);
        bf.slots[s].left[i as usize] = true;
        bf.slots[s].leaves += 1;
        let p = active.members[i as usize];
        let team = active
            .parties
            .iter()
            .find(|&&(end, _)| end > i)
            .map_or(0, |&(_, team)| team);
        let in_warmup = active.record.as_ref().is_some_and(|r| r.in_warmup);
        let role = active.roles.get(i as usize).copied().unwrap_or(NO_ROLE);
        let rating = self
            .parts
            .rating
            .current(&self.world.players[p.index()].rating, now)
            .value;
        if bf.config.fill {
            bf.open.push(OpenSlot {
                slot: slot.0,
                team,
                opened: now,
                rating,
                in_warmup,
                role,
                retry_at: now,
            });
        }
        let fill = bf.config.fill;
        self.world.busy[p.index()] = false;
        self.world.in_matches -= 1;
        if let Some(acc) = self.collector.backfill() {
            acc.leave(in_warmup);
            if role != NO_ROLE {
                acc.leave_in_role(role, in_warmup);
            }
        }
        self.recompute_p(s);
        if fill {
            self.fill_open_slots();
        }
    }

    /// Debug builds, in a role queue: the players of `team` still in match
    /// `s` and its open slots hold every role of the composition exactly,
    /// whoever left and joined.
    #[cfg(debug_assertions)]
    fn assert_team_roles(&self, s: usize, team: u32) {
        let (Some(comp), Some(bf)) = (self.world.format.roles, self.bf.as_ref()) else {
            return;
        };
        let active = &self.world.active[s];
        let mut counts = vec![0usize; comp.roles()];
        let mut start = 0;
        for &(end, t) in &active.parties {
            for k in start..end as usize {
                if t == team && !bf.slots[s].left[k] {
                    counts[active.roles[k] as usize] += 1;
                }
            }
            start = end as usize;
        }
        for o in bf
            .open
            .iter()
            .filter(|o| o.slot as usize == s && o.team == team)
        {
            counts[o.role as usize] += 1;
        }
        for (r, &n) in counts.iter().enumerate() {
            assert_eq!(
                n,
                comp.slots(r),
                "match slot {s}, team {team}, role {r}: {counts:?}"
            );
        }
    }

    /// P(team 0 wins) with whoever plays now, short teams paying the penalty.
    fn recompute_p(&mut self, s: usize) {
        let Some(bf) = self.bf.as_mut() else {
            return;
        };
        let active = &self.world.active[s];
        let st = &mut bf.slots[s];
        let teams = self.world.format.teams;
        let mut skills: Vec<TeamSkills> = (0..teams)
            .map(|_| TeamSkills {
                skills: Vec::new(),
                parties: Vec::new(),
            })
            .collect();
        let mut k = 0;
        for (ti, party) in active.parties() {
            let mut here = 0;
            for p in party {
                if !st.left[k] {
                    skills[ti]
                        .skills
                        .push(self.world.players[p.index()].true_skill);
                    here += 1;
                }
                k += 1;
            }
            if here > 0 {
                skills[ti].parties.push(here);
            }
        }
        let missing: Vec<usize> = skills
            .iter()
            .map(|t| self.world.format.team_size.saturating_sub(t.skills.len()))
            .collect();
        if let Some(p) = self.parts.outcome.p_team0_short_handed(
            &skills,
            &missing,
            bf.config.short_handed_penalty,
        ) {
            st.p_now = p;
        }
    }

    /// The backfill pass, before every policy pass: each open slot, oldest
    /// first, takes the nearest-rated waiting ticket within its window that
    /// fits (its team's open slots, and their roles in a role queue) and,
    /// with a ready check, accepts; after a decline the slot waits for the
    /// answer and the next slot is tried.
    pub(super) fn fill_open_slots(&mut self) {
        let now = self.world.now;
        let mut k = 0;
        loop {
            let Some(bf) = self.bf.as_ref() else {
                return;
            };
            let Some(&o) = bf.open.get(k) else {
                return;
            };
            if o.retry_at > now {
                k += 1;
                continue;
            }
            let w = window(&bf.config, o.opened, now);
            // A party fits when its team has as many slots open; in a role
            // queue the ticket asks for the leaver's role, the rest in the
            // team's other open roles.
            let room = Room::of(&bf.open, &o, self.world.format.roles.map(|c| c.roles()));
            let found: Option<TicketId> = self
                .world
                .pool
                .nearest(o.rating, TicketId(u32::MAX))
                .take_while(|(d, _)| *d <= w)
                .find(|(_, t)| misfit(&self.world.players, t, &room, o.role).is_none())
                .map(|(_, t)| t.id);
            match found {
                Some(id) => {
                    if !self.layers.is_empty() && !self.backfill_ready_check(k, id) {
                        continue;
                    }
                    self.join_backfill(k, id);
                }
                None => k += 1,
            }
        }
    }

    /// A waiting ticket joins the running match of open slot `k` in the
    /// leaver's team, taking that slot and, for a party, the team's next
    /// open ones; its players play the rest of the match.
    fn join_backfill(&mut self, k: usize, id: TicketId) {
        let now = self.world.now;
        let t = self.world.pool.remove(id).expect("found waiting");
        self.queue.cancel(timer_key(id));
        let Some(bf) = self.bf.as_ref() else {
            return;
        };
        let o = bf.open[k];
        // In a role queue, the role each member takes (empty otherwise).
        let assigned: SmallVec<[u8; 8]> = match self.world.format.roles {
            Some(comp) => {
                let counts = team_open_roles(&bf.open, &o, comp.roles());
                party_roles(&self.world.players, &t, &counts, comp.roles(), o.role)
                    .expect("the party fits the open roles")
            }
            None => SmallVec::new(),
        };
        let Some(bf) = self.bf.as_mut() else {
            return;
        };
        bf.open.remove(k);
        let s = o.slot as usize;
        let match_id = self.world.active[s]
            .id
            .expect("open slots are in running matches");
        if !self.layers.is_empty() {
            let names = self.config.roles.as_ref().map(|r| &r.names[..]);
            let story = join_story(&bf.config, &o, &t, now, names);
            for l in &mut self.layers {
                l.backfill_join(&t, &story);
            }
        }
        self.leave(&t, now, TicketEnd::Matched(match_id), &assigned);
        let Some(bf) = self.bf.as_mut() else {
            return;
        };
        let mut taken = vec![o];
        if assigned.is_empty() {
            while taken.len() < t.size() {
                let j = bf
                    .open
                    .iter()
                    .position(|x| x.same_team(&o))
                    .expect("the party fits the open slots");
                taken.push(bf.open.remove(j));
            }
        } else {
            // Member by member, the open slot of the role it plays; the
            // first member in the leaver's role takes the slot asked for.
            taken.clear();
            let mut asked = Some(o);
            for &r in &assigned {
                if let Some(a) = asked.filter(|a| a.role == r) {
                    taken.push(a);
                    asked = None;
                    continue;
                }
                let j = bf
                    .open
                    .iter()
                    .position(|x| x.same_team(&o) && x.role == r)
                    .expect("the party fits the open roles");
                taken.push(bf.open.remove(j));
            }
        }
        bf.advance(s, now);
        let active = &mut self.world.active[s];
        let first = active.members.len() as u32;
        active.members.extend_from_slice(&t.players);
        active.roles.extend_from_slice(&assigned);
        active.parties.push((active.members.len() as u32, o.team));
        let end = bf.slots[s].end;
        let mut leaves = Vec::with_capacity(t.size());
        for (j, slot) in taken.iter().enumerate() {
            bf.slots[s].left.push(false);
            if let Some(at) = bf.draw_leave(now, end) {
                leaves.push((at, first + j as u32));
            }
            if let Some(acc) = self.collector.backfill() {
                acc.filled(now.since(slot.opened).as_ms(), slot.in_warmup);
                if slot.role != NO_ROLE {
                    acc.filled_in_role(slot.role, now.since(slot.opened).as_ms(), slot.in_warmup);
                }
            }
        }
        self.world.in_matches += t.size();
        self.recompute_p(s);
        #[cfg(debug_assertions)]
        self.assert_team_roles(s, o.team);
        for (at, i) in leaves {
            self.queue.schedule(at, Event::Leave(Slot(o.slot), i));
        }
    }

    /// At a match's end, before its ratings: closes its open slots, redraws
    /// the winner if the teams changed, counts it, and hands back who left
    /// (by member, empty without `[backfill]`).
    pub(super) fn settle_leaves(&mut self, slot: Slot) -> Vec<bool> {
        let s = slot.0 as usize;
        let now = self.world.now;
        let Some(bf) = self.bf.as_mut() else {
            return Vec::new();
        };
        bf.advance(s, now);
        bf.open.retain(|o| o.slot != slot.0);
        let st = &mut bf.slots[s];
        let active = &mut self.world.active[s];
        // Short-handed: some team has fewer players at the end than it started with.
        let mut present = vec![0usize; self.world.format.teams];
        let mut k = 0;
        for (ti, party) in active.parties() {
            for _ in party {
                present[ti] += usize::from(!st.left[k]);
                k += 1;
            }
        }
        let short = present.iter().any(|&n| n < self.world.format.team_size);
        let rec = active
            .record
            .as_mut()
            .expect("active matches have a record");
        if st.leaves > 0 && self.world.format.teams == 2 {
            let span_ms = st.last_change.since(st.start).as_ms();
            let p1 = if span_ms > 0 {
                st.p_integral / span_ms as f64
            } else {
                st.p_now
            };
            let u: f64 = bf.rng.random();
            if let (Some(w), Some(p0)) = (active.winner, rec.p_team0) {
                active.winner = Some(redraw_winner(w, p0, p1, u));
                rec.p_team0 = Some(p1);
            }
        }
        let (leaves, in_warmup) = (st.leaves, rec.in_warmup);
        let left = std::mem::take(&mut st.left);
        if let Some(acc) = self.collector.backfill() {
            acc.ended(leaves, short, in_warmup);
        }
        left
    }

    /// Gives a finished match's leave flags back for reuse.
    pub(super) fn return_leaves(&mut self, slot: Slot, left: Vec<bool>) {
        if let Some(bf) = self.bf.as_mut() {
            bf.slots[slot.0 as usize].left = left;
        }
    }
}
