//! The waiting pool: tickets indexed both by age (oldest first) and by
//! rating (sorted), so a policy finds neighbours in O(log n) instead of
//! comparing every pair. Its own module because the engine (which inserts
//! and removes) and the policies (which read) both depend on it.

mod window;

use crate::model::{Party, SimTime, TicketId};
use std::collections::BTreeSet;
use std::ops::Bound;

/// A rating usable as a sort key: total order on f64 (ratings are never NaN).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RatingKey(pub f64);
impl Eq for RatingKey {}
impl PartialOrd for RatingKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for RatingKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// A party waiting in the queue.
#[derive(Clone, Debug, PartialEq)]
pub struct WaitingTicket {
    /// The ticket's id.
    pub id: TicketId,
    /// The party's players.
    pub players: Party,
    /// Matchmaking rating of the party (mean of its members' current ratings).
    pub rating: f64,
    /// When the ticket joined the queue.
    pub enqueued: SimTime,
    /// Whether this stay follows a match (a return to the queue), not a fresh arrival.
    pub requeue: bool,
    /// The members' preferred-role masks, in member order, when the match
    /// format has a role queue (empty otherwise).
    pub roles: smallvec::SmallVec<[u8; 5]>,
}

impl WaitingTicket {
    /// Players in the party.
    pub fn size(&self) -> usize {
        self.players.len()
    }
    /// Seconds this ticket has waited at `now`.
    pub fn age_s(&self, now: SimTime) -> f64 {
        now.since(self.enqueued).as_secs_f64()
    }
}

/// The tickets themselves sit in a slab; the indexes hold only slots (the
/// rating B-tree, keys and a slot), so the tree's nodes stay small (a node
/// of whole tickets is a dozen cache lines, moved on every insert and
/// remove) and a walk by rating reads each ticket directly instead of
/// looking its id up again. By id, a slot is found by index
/// (`window::IdWindow`) and the age order is a list linked through the
/// slots: neither searches on a join or a departure.
pub struct Pool {
    /// Ticket id → slot in `slab`, read by index.
    ids: window::IdWindow,
    /// The waiting tickets in id (enqueue) order, linked through their
    /// slots: the order a pass seeds in. The engine numbers tickets as
    /// they arrive, so a ticket joins at the end and leaves from anywhere
    /// in constant time, where a B-tree of ids cost a search and a node
    /// shift each way.
    links: Vec<Link>,
    /// The slots of the longest- and the latest-waiting ticket (`NIL`
    /// when none waits).
    first: u32,
    last: u32,
    /// (rating, id) is unique, so the slot never decides the order.
    by_rating: BTreeSet<(RatingKey, TicketId, u32)>,
    slab: Vec<Option<WaitingTicket>>,
    /// Empty slots, reused last-freed first.
    free: Vec<u32>,
    players: usize,
}

impl Default for Pool {
    fn default() -> Self {
        Pool {
            ids: Default::default(),
            links: Vec::new(),
            first: NIL,
            last: NIL,
            by_rating: BTreeSet::new(),
            slab: Vec::new(),
            free: Vec::new(),
            players: 0,
        }
    }
}

impl Pool {
    /// Tickets waiting.
    pub fn len(&self) -> usize {
        self.by_rating.len()
    }
    /// Whether no ticket waits.
    pub fn is_empty(&self) -> bool {
        self.by_rating.is_empty()
    }
    /// Players waiting, counting every member of every party.
    pub fn players(&self) -> usize {
        self.players
    }
    /// The waiting ticket `id`, if it still waits.
    pub fn get(&self, id: TicketId) -> Option<&WaitingTicket> {
        self.ids.get(id.0).map(|slot| self.at(slot))
    }
    /// Whether ticket `id` still waits.
    pub fn contains(&self, id: TicketId) -> bool {
        self.ids.get(id.0).is_some()
    }

    /// The ticket in `slot`, which must hold one (`by_rating_slots`).
    pub(crate) fn at(&self, slot: u32) -> &WaitingTicket {
        self.slab[slot as usize]
            .as_ref()
            .expect("indexed slots hold a ticket")
    }

    /// Waiting tickets, longest-waiting first.
    pub fn oldest_first(&self) -> impl Iterator<Item = &WaitingTicket> + '_ {
        self.slots_oldest_first().map(|slot| self.at(slot))
    }

    /// Waiting tickets in ascending rating order.
    pub fn by_rating(&self) -> impl DoubleEndedIterator<Item = &WaitingTicket> + '_ {
        self.by_rating.iter().map(|&(_, _, slot)| self.at(slot))
    }

    /// Waiting tickets in ascending rating order, each with its slot: a
    /// dense index below `slots()`, the same for a ticket as long as it
    /// waits, so a pass can map tickets to its own positions without
    /// hashing or sorting ids.
    pub fn by_rating_slots(&self) -> impl Iterator<Item = (u32, &WaitingTicket)> + '_ {
        self.by_rating
            .iter()
            .map(|&(_, _, slot)| (slot, self.at(slot)))
    }

    /// The slots (`by_rating_slots`) of the waiting tickets in ascending
    /// rating order.
    pub fn slots_by_rating(&self) -> impl ExactSizeIterator<Item = u32> + '_ {
        self.by_rating.iter().map(|&(_, _, slot)| slot)
    }

    /// The slots (`by_rating_slots`) of the waiting tickets, longest-waiting
    /// first.
    pub fn slots_oldest_first(&self) -> impl ExactSizeIterator<Item = u32> + '_ {
        OldestFirst {
            links: &self.links,
            at: self.first,
            left: self.len(),
        }
    }

    /// Waiting tickets, longest-waiting first, each with its slot
    /// (`by_rating_slots`): one walk of the index instead of two for a
    /// policy that keeps its own state per slot.
    pub fn oldest_first_slots(&self) -> impl Iterator<Item = (u32, &WaitingTicket)> + '_ {
        self.slots_oldest_first().map(|slot| (slot, self.at(slot)))
    }

    /// The slot (`by_rating_slots`) of waiting ticket `id`.
    pub fn slot_of(&self, id: TicketId) -> Option<u32> {
        self.ids.get(id.0)
    }

    /// One more than the largest slot a waiting ticket can have.
    pub fn slots(&self) -> usize {
        self.slab.len()
    }

    /// Tickets with rating in [lo, hi], ascending.
    pub fn rating_range(
        &self,
        lo: f64,
        hi: f64,
    ) -> impl DoubleEndedIterator<Item = &WaitingTicket> + '_ {
        let range = if lo <= hi {
            self.by_rating.range((
                Bound::Included((RatingKey(lo), TicketId(0), 0)),
                Bound::Included((RatingKey(hi), TicketId(u32::MAX), u32::MAX)),
            ))
        } else {
            // An empty range that BTreeSet accepts ([x, x) is empty; (x, x) panics).
            self.by_rating.range((
                Bound::Included((RatingKey(lo), TicketId(0), 0)),
                Bound::Excluded((RatingKey(lo), TicketId(0), 0)),
            ))
        };
        range.map(|&(_, _, slot)| self.at(slot))
    }

    /// Other tickets in order of rating distance from `rating` (nearest
    /// first; ties go to the lower rating), excluding `exclude`. Tickets of
    /// one rating come outward from `rating`: at or above it the older
    /// first, below it the newer first. Lazily walks outward, so stopping
    /// early costs O(log n + k).
    pub fn nearest(&self, rating: f64, exclude: TicketId) -> Nearest<'_> {
        let key = RatingKey(rating);
        Nearest {
            pool: self,
            below: self.by_rating.range(..(key, TicketId(0), 0)).rev(),
            above: self.by_rating.range((key, TicketId(0), 0)..),
            next_below: None,
            next_above: None,
            rating,
            exclude,
            started: false,
        }
    }

    /// Builds a pool from tickets, for benchmarks and tools outside the
    /// crate; the engine itself only inserts and removes one ticket at a time.
    /// Ticket ids must be distinct.
    pub fn from_tickets(tickets: impl IntoIterator<Item = WaitingTicket>) -> Pool {
        let mut pool = Pool::default();
        for t in tickets {
            pool.insert(t);
        }
        pool
    }

    #[doc(hidden)]
    pub fn insert(&mut self, t: WaitingTicket) {
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => {
                self.slab.push(None);
                self.links.push(Link::NONE);
                (self.slab.len() - 1) as u32
            }
        };
        let old = self.ids.get(t.id.0);
        self.players += t.players.len();
        self.by_rating.insert((RatingKey(t.rating), t.id, slot));
        self.ids.insert(t.id.0, slot);
        if let Some(old) = old {
            // A second ticket with a waiting ticket's id replaces it, as
            // the map of tickets this replaced did.
            self.unlink(old);
            let gone = self.slab[old as usize].take().expect("indexed slot");
            self.by_rating
                .remove(&(RatingKey(gone.rating), gone.id, old));
            self.players -= gone.players.len();
            self.free.push(old);
        }
        let id = t.id;
        self.slab[slot as usize] = Some(t);
        self.link(slot, id);
    }

    pub(crate) fn remove(&mut self, id: TicketId) -> Option<WaitingTicket> {
        let slot = self.ids.get(id.0)?;
        self.ids.remove(id.0);
        self.unlink(slot);
        let t = self.slab[slot as usize].take().expect("indexed slot");
        self.by_rating.remove(&(RatingKey(t.rating), id, slot));
        self.players -= t.players.len();
        self.free.push(slot);
        Some(t)
    }

    /// Puts `slot`, holding ticket `id`, in id order: after the last
    /// ticket of a smaller id, found walking back from the newest (the
    /// engine's tickets join in id order, so at once).
    fn link(&mut self, slot: u32, id: TicketId) {
        let mut after = self.last;
        while after != NIL && self.at(after).id > id {
            after = self.links[after as usize].prev;
        }
        let next = match after {
            NIL => self.first,
            a => self.links[a as usize].next,
        };
        self.links[slot as usize] = Link { prev: after, next };
        self.point_next(after, slot);
        self.point_prev(next, slot);
    }

    /// Takes `slot` out of the id order.
    fn unlink(&mut self, slot: u32) {
        let Link { prev, next } = self.links[slot as usize];
        self.point_next(prev, next);
        self.point_prev(next, prev);
        self.links[slot as usize] = Link::NONE;
    }

    /// Points the link forward from `from` (from the front, for `NIL`) at `to`.
    fn point_next(&mut self, from: u32, to: u32) {
        match from {
            NIL => self.first = to,
            f => self.links[f as usize].next = to,
        }
    }

    /// Points the link back from `from` (from the back, for `NIL`) at `to`.
    fn point_prev(&mut self, from: u32, to: u32) {
        match from {
            NIL => self.last = to,
            f => self.links[f as usize].prev = to,
        }
    }
}

/// No slot.
const NIL: u32 = u32::MAX;

/// A slot's neighbours in id order (`NIL` at either end).
#[derive(Clone, Copy)]
struct Link {
    prev: u32,
    next: u32,
}

impl Link {
    const NONE: Link = Link {
        prev: NIL,
        next: NIL,
    };
}

/// `Pool::slots_oldest_first`: the id order's links followed from the
/// first, as many as wait.
struct OldestFirst<'a> {
    links: &'a [Link],
    at: u32,
    left: usize,
}

impl Iterator for OldestFirst<'_> {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        if self.left == 0 {
            return None;
        }
        let slot = self.at;
        self.at = self.links[slot as usize].next;
        self.left -= 1;
        Some(slot)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for OldestFirst<'_> {}

type Keys<'a> = std::collections::btree_set::Range<'a, (RatingKey, TicketId, u32)>;

/// Iterator of `Pool::nearest`: yields (distance, ticket).
pub struct Nearest<'a> {
    pool: &'a Pool,
    // Concrete iterator types: this runs on every join, so no boxing.
    below: std::iter::Rev<Keys<'a>>,
    above: Keys<'a>,
    next_below: Option<(f64, TicketId, u32)>,
    next_above: Option<(f64, TicketId, u32)>,
    rating: f64,
    exclude: TicketId,
    started: bool,
}

impl<'a> Iterator for Nearest<'a> {
    type Item = (f64, &'a WaitingTicket);

    fn next(&mut self) -> Option<Self::Item> {
        if !self.started {
            self.started = true;
            self.next_below = self.below.next().map(|&(k, id, slot)| (k.0, id, slot));
            self.next_above = self.above.next().map(|&(k, id, slot)| (k.0, id, slot));
        }
        loop {
            let take_below = match (self.next_below, self.next_above) {
                (None, None) => return None,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (Some((b, _, _)), Some((a, _, _))) => (self.rating - b) <= (a - self.rating),
            };
            let (r, id, slot) = if take_below {
                let item = self.next_below.take();
                self.next_below = self.below.next().map(|&(k, id, slot)| (k.0, id, slot));
                item
            } else {
                let item = self.next_above.take();
                self.next_above = self.above.next().map(|&(k, id, slot)| (k.0, id, slot));
                item
            }?;
            if id == self.exclude {
                continue;
            }
            return Some(((r - self.rating).abs(), self.pool.at(slot)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::PlayerId;

    fn ticket(id: u32, rating: f64) -> WaitingTicket {
        WaitingTicket {
            id: TicketId(id),
            players: smallvec::smallvec![PlayerId(id)],
            rating,
            enqueued: SimTime::from_ms(id as u64),
            requeue: false,
            roles: Default::default(),
        }
    }

    fn pool(ratings: &[f64]) -> Pool {
        let mut p = Pool::default();
        for (i, &r) in ratings.iter().enumerate() {
            p.insert(ticket(i as u32, r));
        }
        p
    }

    #[test]
    fn nearest_walks_outward_by_distance_and_skips_the_excluded() {
        let p = pool(&[1000.0, 1490.0, 1500.0, 1520.0, 1400.0, 2000.0]);
        let order: Vec<(f64, u32)> = p
            .nearest(1500.0, TicketId(2))
            .map(|(d, t)| (d, t.id.0))
            .collect();
        assert_eq!(
            order,
            vec![(10.0, 1), (20.0, 3), (100.0, 4), (500.0, 0), (500.0, 5)]
        );
    }

    #[test]
    fn ranges_and_removal_keep_both_indexes_in_step() {
        let mut p = pool(&[1000.0, 1100.0, 1200.0, 1300.0]);
        let ids: Vec<u32> = p.rating_range(1050.0, 1250.0).map(|t| t.id.0).collect();
        assert_eq!(ids, vec![1, 2]);
        assert!(p.rating_range(1250.0, 1050.0).next().is_none());
        p.remove(TicketId(1)).unwrap();
        let ids: Vec<u32> = p.rating_range(1050.0, 1250.0).map(|t| t.id.0).collect();
        assert_eq!(ids, vec![2]);
        assert_eq!(p.players(), 3);
        let oldest: Vec<u32> = p.oldest_first().map(|t| t.id.0).collect();
        assert_eq!(oldest, vec![0, 2, 3]);
        assert!(p.remove(TicketId(1)).is_none());
    }

    proptest::proptest! {
        /// Against the obvious pool (every ticket in a list, sorted on
        /// demand), over inserts and removes that reuse freed slots: the
        /// same tickets by age, by rating, in a rating range and nearest
        /// first, and the same player count. Most tickets come in id order,
        /// as the engine numbers them; some out of it, and some with the id
        /// of one waiting, which replaces it.
        #[test]
        fn the_slab_pool_reads_like_a_plain_list(
            ops in proptest::collection::vec((0u8..5, 0u32..40, 0u8..12), 1..200),
        ) {
            let mut p = Pool::default();
            let mut list: Vec<WaitingTicket> = Vec::new();
            let mut next = 0u32;
            for (op, pick, r) in ops {
                let rating = 1400.0 + f64::from(r) * 25.0;
                if op < 2 || list.is_empty() {
                    let t = ticket(next, rating);
                    next += 1;
                    p.insert(t.clone());
                    list.push(t);
                } else if op == 3 {
                    // An id below the newest, waiting or not.
                    let id = (next + 7).saturating_sub(pick + 8);
                    let t = ticket(id, rating);
                    p.insert(t.clone());
                    list.retain(|w| w.id != t.id);
                    list.push(t);
                } else {
                    let gone = list.remove(pick as usize % list.len());
                    proptest::prop_assert_eq!(p.remove(gone.id), Some(gone.clone()));
                    proptest::prop_assert!(p.get(gone.id).is_none());
                }
                let ids = |it: &mut dyn Iterator<Item = &WaitingTicket>| {
                    it.map(|t| t.id.0).collect::<Vec<_>>()
                };
                let mut by_age = list.clone();
                by_age.sort_by_key(|t| t.id);
                let mut by_rating = list.clone();
                by_rating.sort_by(|a, b| a.rating.total_cmp(&b.rating).then(a.id.cmp(&b.id)));
                proptest::prop_assert_eq!(ids(&mut p.oldest_first()), ids(&mut by_age.iter()));
                proptest::prop_assert_eq!(ids(&mut p.by_rating()), ids(&mut by_rating.iter()));
                let (lo, hi) = (rating - 60.0, rating + 30.0);
                let in_range = by_rating.iter().filter(|t| t.rating >= lo && t.rating <= hi);
                proptest::prop_assert_eq!(
                    ids(&mut p.rating_range(lo, hi)),
                    ids(&mut in_range.into_iter())
                );
                // Nearest first; ties to the lower rating; at one rating,
                // outward from the seed: below it the newer ticket first,
                // at or above it the older.
                let mut near: Vec<(f64, f64, i64, u32)> = by_rating
                    .iter()
                    .filter(|t| t.id.0 != 0)
                    .map(|t| {
                        let id = i64::from(t.id.0);
                        let outward = if t.rating < rating { -id } else { id };
                        ((t.rating - rating).abs(), t.rating, outward, t.id.0)
                    })
                    .collect();
                near.sort_by(|a, b| {
                    a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)).then(a.2.cmp(&b.2))
                });
                let walked: Vec<u32> =
                    p.nearest(rating, TicketId(0)).map(|(_, t)| t.id.0).collect();
                proptest::prop_assert_eq!(walked, near.iter().map(|n| n.3).collect::<Vec<_>>());
                proptest::prop_assert_eq!(p.players(), list.len());
                proptest::prop_assert_eq!(p.len(), list.len());
                for t in &list {
                    proptest::prop_assert_eq!(p.get(t.id), Some(t));
                }
            }
        }
    }

    #[test]
    fn equal_ratings_are_all_kept() {
        let p = pool(&[1500.0, 1500.0, 1500.0]);
        assert_eq!(p.rating_range(1500.0, 1500.0).count(), 3);
        assert_eq!(p.nearest(1500.0, TicketId(0)).count(), 2);
    }
}
