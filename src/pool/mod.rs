//! The waiting pool: tickets indexed both by age (oldest first) and by
//! rating (sorted), so a policy finds neighbours in O(log n) instead of
//! comparing every pair. Its own module because the engine (which inserts
//! and removes) and the policies (which read) both depend on it.

use crate::model::{Party, SimTime, TicketId};
use std::collections::{BTreeMap, BTreeSet};
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
    pub id: TicketId,
    pub players: Party,
    /// Matchmaking rating of the party (mean of its members' current ratings).
    pub rating: f64,
    pub enqueued: SimTime,
    /// Whether this stay follows a match (a return to the queue), not a fresh arrival.
    pub requeue: bool,
    /// The members' preferred-role masks, in member order, when the match
    /// format has a role queue (empty otherwise).
    pub roles: smallvec::SmallVec<[u8; 5]>,
}

impl WaitingTicket {
    pub fn size(&self) -> usize {
        self.players.len()
    }
    /// Seconds this ticket has waited at `now`.
    pub fn age_s(&self, now: SimTime) -> f64 {
        now.since(self.enqueued).as_secs_f64()
    }
}

#[derive(Default)]
pub struct Pool {
    tickets: BTreeMap<TicketId, WaitingTicket>,
    by_rating: BTreeSet<(RatingKey, TicketId)>,
    players: usize,
}

impl Pool {
    pub fn len(&self) -> usize {
        self.tickets.len()
    }
    pub fn is_empty(&self) -> bool {
        self.tickets.is_empty()
    }
    /// Players waiting, counting every member of every party.
    pub fn players(&self) -> usize {
        self.players
    }
    pub fn get(&self, id: TicketId) -> Option<&WaitingTicket> {
        self.tickets.get(&id)
    }
    pub fn contains(&self, id: TicketId) -> bool {
        self.tickets.contains_key(&id)
    }

    /// Waiting tickets, longest-waiting first.
    pub fn oldest_first(&self) -> impl Iterator<Item = &WaitingTicket> + '_ {
        self.tickets.values()
    }

    /// Waiting tickets in ascending rating order.
    pub fn by_rating(&self) -> impl DoubleEndedIterator<Item = &WaitingTicket> + '_ {
        self.by_rating.iter().map(|(_, id)| &self.tickets[id])
    }

    /// Tickets with rating in [lo, hi], ascending.
    pub fn rating_range(
        &self,
        lo: f64,
        hi: f64,
    ) -> impl DoubleEndedIterator<Item = &WaitingTicket> + '_ {
        let range = if lo <= hi {
            self.by_rating.range((
                Bound::Included((RatingKey(lo), TicketId(0))),
                Bound::Included((RatingKey(hi), TicketId(u32::MAX))),
            ))
        } else {
            // An empty range that BTreeSet accepts ([x, x) is empty; (x, x) panics).
            self.by_rating.range((
                Bound::Included((RatingKey(lo), TicketId(0))),
                Bound::Excluded((RatingKey(lo), TicketId(0))),
            ))
        };
        range.map(|(_, id)| &self.tickets[id])
    }

    /// Other tickets in order of rating distance from `rating` (nearest
    /// first; ties go to the lower rating, then the older ticket), excluding
    /// `exclude`. Lazily walks outward, so stopping early costs O(log n + k).
    pub fn nearest(&self, rating: f64, exclude: TicketId) -> Nearest<'_> {
        let key = RatingKey(rating);
        Nearest {
            pool: self,
            below: self.by_rating.range(..(key, TicketId(0))).rev(),
            above: self.by_rating.range((key, TicketId(0))..),
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

    pub(crate) fn insert(&mut self, t: WaitingTicket) {
        self.players += t.players.len();
        self.by_rating.insert((RatingKey(t.rating), t.id));
        self.tickets.insert(t.id, t);
    }

    pub(crate) fn remove(&mut self, id: TicketId) -> Option<WaitingTicket> {
        let t = self.tickets.remove(&id)?;
        self.by_rating.remove(&(RatingKey(t.rating), id));
        self.players -= t.players.len();
        Some(t)
    }
}

type Keys<'a> = std::collections::btree_set::Range<'a, (RatingKey, TicketId)>;

/// Iterator of `Pool::nearest`: yields (distance, ticket).
pub struct Nearest<'a> {
    pool: &'a Pool,
    // Concrete iterator types: this runs on every join, so no boxing.
    below: std::iter::Rev<Keys<'a>>,
    above: Keys<'a>,
    next_below: Option<(f64, TicketId)>,
    next_above: Option<(f64, TicketId)>,
    rating: f64,
    exclude: TicketId,
    started: bool,
}

impl<'a> Iterator for Nearest<'a> {
    type Item = (f64, &'a WaitingTicket);

    fn next(&mut self) -> Option<Self::Item> {
        if !self.started {
            self.started = true;
            self.next_below = self.below.next().map(|&(k, id)| (k.0, id));
            self.next_above = self.above.next().map(|&(k, id)| (k.0, id));
        }
        loop {
            let take_below = match (self.next_below, self.next_above) {
                (None, None) => return None,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (Some((b, _)), Some((a, _))) => (self.rating - b) <= (a - self.rating),
            };
            let (r, id) = if take_below {
                let item = self.next_below.take();
                self.next_below = self.below.next().map(|&(k, id)| (k.0, id));
                item
            } else {
                let item = self.next_above.take();
                self.next_above = self.above.next().map(|&(k, id)| (k.0, id));
                item
            }?;
            if id == self.exclude {
                continue;
            }
            return Some(((r - self.rating).abs(), &self.pool.tickets[&id]));
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

    #[test]
    fn equal_ratings_are_all_kept() {
        let p = pool(&[1500.0, 1500.0, 1500.0]);
        assert_eq!(p.rating_range(1500.0, 1500.0).count(), 3);
        assert_eq!(p.nearest(1500.0, TicketId(0)).count(), 2);
    }
}
