//! A widening-window policy whose tick pass in a role queue remembers the
//! seeds that could not fill a match, and why, so a pass does not walk them
//! again while nothing that could change the answer has changed.
//!
//! In a role queue most seeds of a pass fail (a pass in
//! `regions-roles-5v5` tries about thirty seeds and fills a match from one
//! in a thousand), and each failed seed walked its whole window again on
//! every pass. A failed greedy fill is a pure function of what it walked:
//! the free tickets within the seed's window, in rating order, each taken
//! or turned down on the set chosen before it. So it fails again, with the
//! same tickets chosen, as long as
//! - no ticket enters the walk: no ticket joined (or came back, or changed)
//!   within the distance of the nearest ticket beyond the window, and the
//!   seed's window has not grown to reach that ticket;
//! - no chosen ticket has gone: each is still in the pool and not taken
//!   earlier in this pass (a ticket turned down or gone otherwise changes
//!   nothing, since the state the walk carries is built from the chosen
//!   alone);
//! - no ticket turned down by its own window (the rule is mutual) has had
//!   its window grow to reach the seed.
//!
//! A ticket whose roles the failed fill had closed (`RoleFill::closed`:
//! every slot they could take already full) before the walk reached its
//! distance is turned down before anything else is asked, so it counts
//! for none of these: a damage player joining, or the window growing to
//! reach one, leaves a fill that lacks a tank failing (`Kept::closed`).
//! Two more joins change nothing: one an earlier seed of the same pass
//! took, and, for a walked seed, one whose own window does not reach the
//! seed (the rule is mutual, so the walk would turn it down); that one only
//! brings nearer the instant at which a turned-down window reaches the
//! seed. At production traffic a scarce role's newcomer lies within most
//! failed seeds' wide windows, and these two cut the searches of
//! `regions-roles-5v5` at 25 times its traffic by 31%.
//!
//! Windows only grow, with time alone (`GrowingWindow`), so each condition
//! has a first instant or is checked against the joins since the last pass.
//! A seed the window's role counts skipped is kept the same way, with
//! nothing chosen: departures only take staff away. A kept failure is
//! checked on every pass (a pass that stops early drops the records of the
//! seeds it did not reach), so the joins since the last pass are all it
//! must look at.
//!
//! When only the first condition breaks (tickets joined within the window,
//! or the window grew to reach new ones) the walk is still redone, but
//! guided: every ticket it walked before is taken or passed over as then,
//! and only the newcomers are checked, until one of them is chosen. A
//! turned-down ticket stays turned down while the chosen set is the same,
//! so only a newcomer can change the walk (half of the role queue's walks
//! were such joins, and the checks were most of a walk's cost).
//!
//! `Stateless<W>`, the plain pass, is the oracle: the test
//! `kept_failures_propose_what_the_plain_pass_proposes` runs both over
//! random role queues as they evolve, and in tests every guided walk is
//! compared with a plain one on a copy of the pass.

use super::{
    propose_mutual_windows, Explain, Failed, FreePass, MutualWindow, PassFrame, Policy, PoolTally,
    PoolView, Proposal, Schedule, SearchWork, Trigger,
};
use crate::model::{SimTime, TicketId};
use crate::pool::{Pool, WaitingTicket};
use crate::teams::{closed_lanes, hall_subsets};
use rand_pcg::Pcg64;
use smallvec::SmallVec;

/// A mutual window that depends on the ticket and the time alone and never
/// shrinks as the ticket waits: what lets a pass keep a failure until a
/// known instant.
pub trait GrowingWindow: MutualWindow {
    /// An instant no later than the first at which `window(t, ·)` reaches
    /// `d` (is at least `d`): `SimTime::MAX` when it never does. Called by
    /// `Windowed`'s pass for the seed and the tickets its fill turned down;
    /// an earlier answer only costs a walk, a later one changes proposals.
    fn reaches(&self, t: &WaitingTicket, d: f64) -> SimTime;
}

/// Why a seed's last fill failed, and how long that answer stands.
struct Kept {
    /// The seed's ticket: the record sits in the pool slot the seed had,
    /// which a later ticket may reuse.
    id: TicketId,
    /// The pass that last confirmed it; only the next pass may use it.
    pass: u64,
    /// Before this instant the seed's own window does not reach `reach`.
    grows: SimTime,
    /// Before this instant no ticket the fill turned down for its own
    /// window has a window that reaches the seed.
    others: SimTime,
    /// Distance to the nearest ticket beyond the seed's window: a join
    /// within it may enter the walk.
    reach: f64,
    /// The tickets the failed fill chose besides the seed, in the order
    /// chosen.
    chosen: SmallVec<[TicketId; 9]>,
    /// Whether the fill walked the window (not skipped on its role counts):
    /// only then are its decisions known for every ticket within `reach`.
    walked: bool,
    /// The lanes the fill had closed when it failed, and the distance
    /// beyond which all of them were (`Failed`): a ticket farther than
    /// that whose lanes meet them would be turned down before anything
    /// else, so its joining changes nothing, and `reach` passes over such
    /// tickets beyond the window. In a busy role queue most joins are
    /// damage players, and a failed seed that lacks a tank no longer
    /// walks again for each of them.
    closed: u128,
    closed_from: f64,
}

/// A ticket that entered the pool (or changed) since the last pass, as
/// the verdicts read it.
#[derive(Clone, Copy)]
struct Join {
    rating: f64,
    /// Its `closed_lanes` (0 when none are kept, and for a changed
    /// ticket's old place).
    lanes: u128,
    id: TicketId,
    /// Its pool slot; `None` for a changed ticket's old place, which no
    /// ticket holds any more.
    slot: Option<u32>,
}

/// What a pass does with a seed that has a kept failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    /// The failure stands: no walk.
    Stands,
    /// Walk again, taking the kept decisions for the tickets walked before
    /// (`FreePass::try_fill`'s `recorded`) and deciding only for the
    /// tickets that joined within the window or that it has grown to
    /// reach: the failure's chosen tickets are all still free and no
    /// turned-down ticket's window has grown to the seed, so every other
    /// decision is what it was.
    Guided,
    /// Walk again from scratch.
    Walk,
}

/// The policy of a `GrowingWindow`: as `Stateless<W>`, with the tick
/// pass's failures kept between passes.
pub struct Windowed<W> {
    rule: W,
    /// Kept failures by the seed's pool slot (`Pool::slot_of`), read at
    /// every seed of every pass: an index, where a hash map by id cost two
    /// lookups a seed. A record is another ticket's when its `id` differs,
    /// and stale when its `pass` is not the last one: a ticket away from
    /// the pool at a pass, or back in another slot, walks again.
    kept: Vec<Option<Kept>>,
    passes: u64,
    /// The pool at the last pass: (id, enqueued, rating, slot), by id.
    last: Vec<(TicketId, SimTime, f64, u32)>,
    /// The snapshot before `last`, kept for its buffer.
    spare: Vec<(TicketId, SimTime, f64, u32)>,
    /// The tickets that entered (or changed) since the last pass, by
    /// rating.
    joins: Vec<Join>,
    /// Those tickets' ids, sorted (a changed ticket's old place is in
    /// `joins` only: it is gone from there, which changes nothing unless
    /// it was chosen).
    joined: Vec<TicketId>,
    /// Tickets that left (or changed) since the last pass, by id.
    gone: Vec<TicketId>,
    /// Tickets proposed in this pass so far; at the next pass's start, any
    /// still waiting did not leave, so they count as joins for the seeds
    /// that walked without them.
    proposed: Vec<TicketId>,
    /// Per position of this pass: whether its ticket joined since the last
    /// (the buffer is kept between passes).
    fresh: Vec<bool>,
    /// Whether the pool at this pass could staff a match by its role
    /// counts (`PoolTally`), tallied as `sync` reads it.
    pool_can_fill: bool,
    /// The last pass built, kept for the next: `sync` marks it stale when
    /// the pool changed.
    frame: PassFrame,
    work: SearchWork,
}

impl<W> Windowed<W> {
    /// The policy of `rule`, with nothing kept yet.
    pub fn new(rule: W) -> Self {
        Windowed {
            rule,
            kept: Vec::new(),
            passes: 0,
            last: Vec::new(),
            spare: Vec::new(),
            joins: Vec::new(),
            joined: Vec::new(),
            gone: Vec::new(),
            proposed: Vec::new(),
            fresh: Vec::new(),
            pool_can_fill: true,
            frame: PassFrame::default(),
            work: SearchWork::default(),
        }
    }
}

impl<W: GrowingWindow> Windowed<W> {
    /// Learns what entered and left the pool since the last pass.
    fn sync(&mut self, view: &PoolView<'_>) {
        self.joins.clear();
        self.joined.clear();
        self.gone.clear();
        // The snapshot is rebuilt in last time's buffer: no allocation.
        let mut now = std::mem::take(&mut self.spare);
        now.clear();
        let (last, mut i) = (&self.last, 0);
        let mut tally = PoolTally::new(view.format);
        let mut moved = false;
        let subsets = view
            .format
            .roles
            .map_or(0, |c| hall_subsets(c, view.format.teams));
        let lanes = |t: &WaitingTicket| {
            if subsets > 0 && t.roles.len() == t.size() {
                closed_lanes(&t.roles, subsets)
            } else {
                0
            }
        };
        let join = |t: &WaitingTicket, slot: u32| Join {
            rating: t.rating,
            lanes: lanes(t),
            id: t.id,
            slot: Some(slot),
        };
        // A departed ticket's record is left where it is: its slot's next
        // ticket has another id, and the ticket itself, if it comes back,
        // finds its record a pass old.
        for (slot, t) in view.pool.oldest_first_slots() {
            tally.add(t);
            while i < last.len() && last[i].0 < t.id {
                self.gone.push(last[i].0);
                i += 1;
            }
            match last.get(i).filter(|l| l.0 == t.id) {
                Some(l) if l.1 == t.enqueued && l.2 == t.rating => {
                    // Back in another slot: the same ticket to a kept
                    // failure, but not to the kept pass.
                    moved |= l.3 != slot;
                    i += 1;
                }
                Some(l) => {
                    // Back with a new wait or rating: a new ticket here and
                    // a departure there.
                    if let Some(k) = self.kept.get_mut(slot as usize) {
                        *k = None;
                    }
                    self.gone.push(t.id);
                    self.joins.extend([
                        Join {
                            rating: l.2,
                            lanes: 0,
                            id: t.id,
                            slot: None,
                        },
                        join(t, slot),
                    ]);
                    self.joined.push(t.id);
                    i += 1;
                }
                None => {
                    self.joins.push(join(t, slot));
                    self.joined.push(t.id);
                }
            }
            now.push((t.id, t.enqueued, t.rating, slot));
        }
        for l in &last[i..] {
            self.gone.push(l.0);
        }
        for &id in &self.proposed {
            if let (Some(t), Some(slot)) = (view.pool.get(id), view.pool.slot_of(id)) {
                self.joins.push(join(t, slot));
                self.joined.push(t.id);
            }
        }
        self.proposed.clear();
        if moved || !self.joined.is_empty() || !self.gone.is_empty() {
            self.frame.stale();
        }
        self.joins
            .sort_unstable_by(|a, b| a.rating.total_cmp(&b.rating));
        self.joined.sort_unstable();
        self.spare = std::mem::replace(&mut self.last, now);
        self.pool_can_fill = tally.can_fill();
        self.kept.resize_with(view.pool.slots(), || None);
    }

    /// What to do with the seed at this point of the pass: its kept
    /// failure stands, or a walk guided by it, or a walk from scratch. Its
    /// chosen tickets were free at the last pass, so they still are unless
    /// they left since or this pass took them. A ticket that entered beyond
    /// the seed's window only brings nearer the instant at which the window
    /// reaches a ticket it has not walked.
    ///
    /// A failure that stands is confirmed for this pass here (a standing
    /// seed has nothing else done to it), saving a second look-up.
    fn verdict(&mut self, pool: &Pool, seed: &WaitingTicket, slot: u32, now: SimTime) -> Verdict {
        let passes = self.passes;
        let (joins, gone, proposed) = (&self.joins, &self.gone, &self.proposed);
        let rule = &self.rule;
        let Some(k) = self.kept[slot as usize]
            .as_mut()
            .filter(|k| k.id == seed.id)
        else {
            return Verdict::Walk;
        };
        // With no departure and nothing proposed since (most passes of a
        // role queue), every chosen ticket is still free.
        let departed = !(gone.is_empty() && proposed.is_empty())
            && k.chosen
                .iter()
                .any(|id| gone.binary_search(id).is_ok() || proposed.contains(id));
        if k.pass + 1 != passes || now >= k.others || departed {
            return Verdict::Walk;
        }
        let guided = if k.walked {
            Verdict::Guided
        } else {
            Verdict::Walk
        };
        let r = seed.rating;
        // Rounding slack: a join this close to an edge counts as inside.
        let slack = 1e-9 * (1.0 + r.abs() + k.reach.min(1e12));
        let (lo, hi) = (r - k.reach - slack, r + k.reach + slack);
        let i = joins.partition_point(|j| j.rating < lo);
        let near = joins[i..].iter().take_while(|j| j.rating <= hi);
        let mut window = None;
        for &Join {
            rating: j,
            lanes,
            id,
            slot,
        } in near
        {
            // Taken earlier in this pass, so not free for this walk; if it
            // is back at the next pass, it joins again there.
            if !proposed.is_empty() && proposed.contains(&id) {
                continue;
            }
            // As `FreePass::walk` measures it.
            let d = if j < r { r - j } else { j - r };
            if lanes & k.closed != 0 && d > k.closed_from {
                continue;
            }
            let w = *window.get_or_insert_with(|| rule.window(seed, now));
            if d <= w + slack {
                // The rule is mutual: a newcomer whose own window does
                // not reach the seed is turned down (by it, or by its
                // roles first), so it changes nothing but the instant
                // its window first could. In a busy role queue most
                // newcomers a failed seed lacks (a tank, a healer) have
                // a young, narrow window. A seed skipped on its window's
                // role counts is not: those count every free ticket.
                if let Some(t) = slot.filter(|_| k.walked).map(|s| pool.at(s)) {
                    if d > rule.window(t, now) + slack {
                        k.others = k.others.min(rule.reaches(t, d));
                        continue;
                    }
                }
                return guided;
            }
            if d < k.reach {
                k.reach = d;
                k.grows = k.grows.min(rule.reaches(seed, d));
            }
        }
        if now < k.grows {
            k.pass = passes;
            Verdict::Stands
        } else {
            guided
        }
    }

    /// The tick pass: `greedy_pass` with mutual windows, skipping seeds
    /// whose kept failure stands.
    fn pass(&mut self, view: &PoolView<'_>, out: &mut Vec<Proposal>) {
        self.sync(view);
        self.passes += 1;
        let (now, format) = (view.now, view.format);
        // As `greedy_pass`: nothing more can form. Until a seed must walk
        // nothing is taken, so this holds for every seed before it, and the
        // pass itself is built only then (a third of the role queue's
        // passes walk no seed).
        #[cfg(test)]
        let mut check = FreePass::new(view.pool);
        #[cfg(test)]
        check.track_roles(format);
        #[cfg(test)]
        assert_eq!(self.pool_can_fill, check.roles_can_fill());
        if view.pool.players() < format.players() || !self.pool_can_fill {
            return;
        }
        let mut first = None;
        for (k, seed) in view.pool.oldest_first().enumerate() {
            self.work.seed_visits += 1;
            let slot = self.last[k].3;
            let verdict = self.verdict(view.pool, seed, slot, now);
            if verdict != Verdict::Stands {
                first = Some((k, verdict));
                break;
            }
            #[cfg(test)]
            {
                let (pos, _) = check.seed(k).expect("nothing is taken yet");
                self.assert_still_fails(&check, pos, slot, now, format);
            }
        }
        let Some((start, first)) = first else {
            return;
        };
        let oldest_first = self.last.iter().map(|l| l.3);
        let mut pass = FreePass::reusing(view.pool, &mut self.frame, format, oldest_first);
        // The positions of the tickets that joined since the last pass: a
        // guided walk decides for them, and looks each ticket up here
        // rather than among the joins.
        let mut fresh = std::mem::take(&mut self.fresh);
        fresh.clear();
        fresh.resize(pass.len(), false);
        for &id in &self.joined {
            if let Some(slot) = view.pool.slot_of(id) {
                fresh[pass.position_of_slot(slot)] = true;
            }
        }
        for k in start..pass.len() {
            if pass.free_players() < format.players() || !pass.roles_can_fill() {
                break;
            }
            let Some((pos, seed)) = pass.seed(k) else {
                continue;
            };
            // The snapshot is the pool's tickets in the order of the
            // pass's seeds.
            let slot = self.last[k].3;
            let verdict = if k == start {
                first
            } else {
                self.work.seed_visits += 1;
                self.verdict(view.pool, seed, slot, now)
            };
            if verdict == Verdict::Stands {
                #[cfg(test)]
                self.assert_still_fails(&pass, pos, slot, now, format);
                continue;
            }
            self.work.searches += 1;
            let rule = &self.rule;
            let w = rule.window(seed, now);
            let (lo, hi) = pass.bounds(pos, w);
            // A guided walk keeps the turned-down tickets' instant: the
            // tickets it does not decide again are turned down as before.
            let before = (verdict == Verdict::Guided).then(|| {
                self.kept[slot as usize]
                    .as_ref()
                    .expect("a guided walk's record")
            });
            let mut others = before.map_or(SimTime::MAX, |k| k.others);
            let fresh = &fresh;
            #[cfg(test)]
            let plain = before.map(|_| Self::plain_fill(rule, &pass, pos, now, format));
            let walked = pass.can_fill_within(pos, lo, hi);
            let fill = if walked {
                pass.try_fill(
                    format,
                    pos,
                    w,
                    |d, t| {
                        let ok = d <= rule.window(t, now);
                        if !ok {
                            others = others.min(rule.reaches(t, d));
                        }
                        ok
                    },
                    |d, at, t| {
                        let k = before?;
                        (d < k.reach && !fresh[at]).then(|| k.chosen.contains(&t.id))
                    },
                )
            } else {
                Err(Failed::seed(pos))
            };
            #[cfg(test)]
            if let Some(plain) = plain {
                let got = (fill.clone()).map_err(|f| {
                    (f.chosen.iter())
                        .map(|&at| pass.ticket(at).id)
                        .collect::<Vec<_>>()
                });
                assert_eq!(got, plain, "a guided walk differs from a plain one");
            }
            match fill {
                Ok(tickets) => {
                    self.kept[slot as usize] = None;
                    self.proposed.extend_from_slice(&tickets);
                    out.push(Proposal::new(tickets));
                }
                Err(failed) => {
                    let chosen = failed.chosen[1..]
                        .iter()
                        .map(|&at| pass.ticket(at).id)
                        .collect();
                    let reach = pass.beyond_open(pos, lo, hi, failed.closed);
                    let grows = rule.reaches(seed, reach);
                    let kept = Kept {
                        id: seed.id,
                        pass: self.passes,
                        grows,
                        others,
                        reach,
                        chosen,
                        walked,
                        closed: failed.closed,
                        closed_from: failed.closed_from,
                    };
                    self.kept[slot as usize] = Some(kept);
                }
            }
        }
        self.fresh = fresh;
        pass.into_frame(&mut self.frame);
    }
}

#[cfg(test)]
impl<W: GrowingWindow> Windowed<W> {
    /// Tests: what a plain walk from the seed at `pos` gives (the ids
    /// chosen, seed first, on failure), on a copy of the pass.
    fn plain_fill(
        rule: &W,
        pass: &FreePass<'_>,
        pos: usize,
        now: SimTime,
        format: super::MatchFormat,
    ) -> Result<Vec<TicketId>, Vec<TicketId>> {
        let mut copy = pass.clone();
        let w = rule.window(pass.ticket(pos), now);
        let (lo, hi) = copy.bounds(pos, w);
        if !copy.can_fill_within(pos, lo, hi) {
            return Err(vec![pass.ticket(pos).id]);
        }
        copy.try_fill(
            format,
            pos,
            w,
            |d, t| d <= rule.window(t, now),
            |_, _, _| None,
        )
        .map_err(|f| f.chosen.iter().map(|&at| pass.ticket(at).id).collect())
    }

    /// Tests: a kept failure must be what the walk finds now, chosen
    /// tickets and all.
    fn assert_still_fails(
        &self,
        pass: &FreePass<'_>,
        pos: usize,
        slot: u32,
        now: SimTime,
        format: super::MatchFormat,
    ) {
        let seed = pass.ticket(pos);
        if !pass.window_can_fill(pos, self.rule.window(seed, now)) {
            return;
        }
        match Self::plain_fill(&self.rule, pass, pos, now, format) {
            Ok(tickets) => panic!("a kept failure fills {tickets:?}"),
            Err(ids) => assert_eq!(
                ids[1..],
                self.kept[slot as usize].as_ref().expect("kept").chosen[..],
                "a kept failure chose other tickets"
            ),
        }
    }
}

impl<W: GrowingWindow> Policy for Windowed<W> {
    fn schedule(&self) -> Schedule {
        self.rule.cadence().schedule()
    }

    fn propose(
        &mut self,
        view: &PoolView<'_>,
        trigger: Trigger,
        _rng: &mut Pcg64,
        out: &mut Vec<Proposal>,
    ) {
        // A join fills from the pool as it is, as the plain policy does.
        // Without a role queue a failed walk is short (the window's few
        // tickets, turned down by their own windows) and its answer rarely
        // stands a pass: keeping it cost `bench-1v1` 4%, so that pass is
        // the plain one too.
        if trigger == Trigger::Tick && view.format.roles.is_some() {
            self.pass(view, out);
        } else {
            propose_mutual_windows(view, trigger, |t| self.rule.window(t, view.now), out);
        }
    }

    fn work(&self) -> Option<SearchWork> {
        (self.work.seed_visits > 0).then_some(self.work)
    }

    fn explain(&self) -> Option<&dyn Explain> {
        Some(&self.rule)
    }
}

/// `GrowingWindow::reaches` for `min(base + rate_per_s * waited_s, max)`:
/// a millisecond and a billionth early, far more than rounding can move it.
pub(crate) fn growing_window_reaches(
    base: f64,
    rate_per_s: f64,
    max: f64,
    t: &WaitingTicket,
    d: f64,
) -> SimTime {
    if d > max || d.is_nan() {
        return SimTime::MAX;
    }
    if d <= base {
        return t.enqueued;
    }
    if rate_per_s <= 0.0 {
        // The window stays at `base`, short of `d`.
        return SimTime::MAX;
    }
    let ms = (d - base) / rate_per_s * 1000.0 * (1.0 - 1e-9) - 2.0;
    if ms <= 0.0 {
        return t.enqueued;
    }
    t.enqueued + crate::model::SimDuration::from_ms(ms.floor() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Player, SimDuration};
    use crate::policy::widening::WideningParams;
    use crate::policy::{MatchFormat, Stateless};
    use crate::pool::Pool;
    use crate::teams::Composition;
    use rand::{Rng, SeedableRng};

    /// A random ticket of a 5v5 role queue with scarce tanks.
    fn ticket(rng: &mut Pcg64, id: u32, now: SimTime, players: &mut Vec<Player>) -> WaitingTicket {
        let size = if rng.random_bool(0.15) { 2 } else { 1 };
        let rating = 1500.0 + rng.random_range(-700.0..700.0_f64).round();
        let mut t = crate::policy::tests::role_ticket(rng, players, id, size, rating, 0.08, 0.25);
        t.enqueued = now;
        t
    }

    /// What both policies propose on the same pool, which must be the same.
    fn both(
        kept: &mut Windowed<WideningParams>,
        plain: &mut Stateless<WideningParams>,
        view: &PoolView<'_>,
        trigger: Trigger,
    ) -> Vec<Proposal> {
        let mut rng = Pcg64::seed_from_u64(1);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        kept.propose(view, trigger, &mut rng, &mut a);
        plain.propose(view, trigger, &mut rng, &mut b);
        assert_eq!(a, b, "{trigger:?} at {:?}", view.now);
        a
    }

    /// Random role queues over many passes, with joins, departures, join
    /// triggers, proposals left unformed (as a failed ready check leaves
    /// them), tickets back with a new wait, and tickets back unchanged
    /// (a ready check that keeps the wait) after some passes away or at
    /// once in each other's pool slots: the pass that keeps its failures
    /// proposes exactly what the plain pass proposes, and keeps most of
    /// them.
    #[test]
    fn kept_failures_propose_what_the_plain_pass_proposes() {
        let mut work = SearchWork::default();
        for case in 0..60u64 {
            let mut rng = Pcg64::seed_from_u64(case);
            let params = WideningParams {
                base: rng.random_range(20.0..200.0),
                rate_per_s: [0.0, 1.0, 5.0, 20.0][rng.random_range(0..4)],
                max: rng.random_range(200.0..1500.0),
                ..WideningParams::default()
            };
            // Mostly role queues; some 5v5 and 1v1 without roles.
            let format = MatchFormat {
                teams: 2,
                team_size: if case % 5 == 1 { 1 } else { 5 },
                roles: (case % 5 > 1).then(|| Composition::new(&[1, 1, 3])),
            };
            let mut kept = Windowed::new(params.clone());
            let mut plain = Stateless::new(params);
            let (mut pool, mut players) = (Pool::default(), Vec::new());
            let mut now = SimTime::ZERO;
            let mut next_id = 0u32;
            // Tickets out of the pool for a few passes, with the pass at
            // which each comes back as it was.
            let mut away: Vec<(usize, WaitingTicket)> = Vec::new();
            for round in 0..300 {
                for (_, t) in away.extract_if(.., |(back, _)| *back <= round) {
                    pool.insert(t);
                }
                now += SimDuration::from_ms(rng.random_range(100..3000));
                for _ in 0..rng.random_range(0..4) {
                    let t = ticket(&mut rng, next_id, now, &mut players);
                    next_id += 1;
                    let id = t.id;
                    pool.insert(t);
                    if rng.random_bool(0.3) {
                        // A join trigger: both policies see the same pool.
                        let view = PoolView {
                            now,
                            pool: &pool,
                            players: &players,
                            format,
                            rerated: 0,
                        };
                        for p in both(&mut kept, &mut plain, &view, Trigger::Join(id)) {
                            for id in p.tickets {
                                pool.remove(id);
                            }
                        }
                    }
                }
                let ids: Vec<TicketId> = pool.oldest_first().map(|t| t.id).collect();
                if ids.len() >= 2 && rng.random_bool(0.3) {
                    // Two tickets out and back as they were: the pool
                    // reuses the last slot freed first, so they swap slots.
                    let (a, b) = (
                        ids[rng.random_range(0..ids.len())],
                        ids[rng.random_range(0..ids.len())],
                    );
                    if a != b {
                        let ta = pool.remove(a).expect("waiting");
                        let tb = pool.remove(b).expect("waiting");
                        pool.insert(ta);
                        pool.insert(tb);
                    }
                }
                for id in ids {
                    if rng.random_bool(0.02) {
                        pool.remove(id);
                    } else if rng.random_bool(0.02) {
                        let t = pool.remove(id).expect("waiting");
                        away.push((round + rng.random_range(1..4), t));
                    } else if rng.random_bool(0.02) {
                        // Back from a failed ready check without its wait,
                        // now and then rated anew (its record, if its slot
                        // kept it, measured distances from the old rating).
                        let mut t = pool.remove(id).expect("waiting");
                        t.enqueued = now;
                        if rng.random_bool(0.5) {
                            t.rating += rng.random_range(-60.0..60.0_f64).round();
                        }
                        pool.insert(t);
                    }
                }
                let view = PoolView {
                    now,
                    pool: &pool,
                    players: &players,
                    format,
                    rerated: 0,
                };
                for p in both(&mut kept, &mut plain, &view, Trigger::Tick) {
                    if rng.random_bool(0.7) {
                        for id in p.tickets {
                            pool.remove(id);
                        }
                    }
                }
            }
            // Only a role queue's pass keeps anything.
            work = work + kept.work().unwrap_or_default();
        }
        // Most seeds' failures stand from one pass to the next, even with
        // a fifth of the tickets changing between passes.
        assert!(work.searches * 4 < work.seed_visits * 3, "{work:?}");
    }
}
