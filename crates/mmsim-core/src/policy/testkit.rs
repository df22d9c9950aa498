//! A miniature engine for policy unit tests: tickets join at chosen times
//! with chosen ratings, so a test can replay the thread's own examples
//! instead of hoping random arrivals produce them.

use super::{FormedMatch, MatchFormat, Policy, PoolView, Trigger};
use crate::model::{MatchId, Player, PlayerId, Rating, SimTime, TicketId};
use crate::pool::{Pool, WaitingTicket};
use rand::SeedableRng;
use rand_pcg::Pcg64;

/// A match the harness formed: when, which tickets (by number), the weight.
#[derive(Clone, Debug, PartialEq)]
pub struct Formed {
    /// When it formed, in seconds.
    pub at_s: f64,
    /// Its tickets, by the number the test gave them.
    pub tickets: Vec<u32>,
    /// Its rating weight (1.0 = a normal match).
    pub rating_weight: f64,
}

/// `P` is the policy's own type when a test reads its state between calls;
/// otherwise any policy, boxed.
pub struct Harness<P: Policy + ?Sized = dyn Policy> {
    /// The waiting tickets.
    pub pool: Pool,
    /// Every player the tickets hold, by id.
    pub players: Vec<Player>,
    /// The policy under test.
    pub policy: Box<P>,
    /// The policy's random stream, seeded the same every run.
    pub rng: Pcg64,
    /// Every match formed so far, in order.
    pub formed: Vec<Formed>,
    /// The match format (1v1 unless the test sets another).
    pub format: MatchFormat,
}

impl Harness {
    /// A harness for `policy`, with an empty pool.
    pub fn new(policy: Box<dyn Policy>) -> Self {
        Harness::with(policy)
    }
}

impl<P: Policy> Harness<P> {
    /// A harness whose `policy` keeps its own type, for tests that read
    /// its state between calls.
    pub fn typed(policy: P) -> Self {
        Harness::with(Box::new(policy))
    }
}

impl<P: Policy + ?Sized> Harness<P> {
    fn with(policy: Box<P>) -> Self {
        Harness {
            pool: Pool::default(),
            players: Vec::new(),
            policy,
            rng: Pcg64::seed_from_u64(1),
            formed: Vec::new(),
            format: MatchFormat {
                teams: 2,
                team_size: 1,
                roles: None,
            },
        }
    }

    /// Ticket `id` of player `id` joins at `at_s` with `rating`; returns the
    /// matches formed by the join.
    pub fn join(&mut self, id: u32, rating: f64, at_s: f64) -> Vec<Vec<u32>> {
        self.join_player(id, id, rating, at_s)
    }

    /// Like `join`, with the player named, for players who queue again.
    pub fn join_player(
        &mut self,
        ticket: u32,
        player: u32,
        rating: f64,
        at_s: f64,
    ) -> Vec<Vec<u32>> {
        self.pool.insert(WaitingTicket {
            id: TicketId(ticket),
            players: smallvec::smallvec![PlayerId(player)],
            rating,
            enqueued: SimTime::from_secs_f64(at_s),
            requeue: false,
            roles: Default::default(),
        });
        if self.policy.schedule().on_join {
            self.call(at_s, Trigger::Join(TicketId(ticket)))
        } else {
            Vec::new()
        }
    }

    /// A tick pass at `at_s` seconds: the matches it formed, by ticket number.
    pub fn tick(&mut self, at_s: f64) -> Vec<Vec<u32>> {
        self.call(at_s, Trigger::Tick)
    }

    /// Sets the population whose ratings policies such as the percentile
    /// window read.
    pub fn population(&mut self, ratings: &[f64]) {
        self.players = ratings
            .iter()
            .enumerate()
            .map(|(i, &r)| Player::new(PlayerId(i as u32), r, Rating::new(r, 50.0, 0.06)))
            .collect();
    }

    fn call(&mut self, at_s: f64, trigger: Trigger) -> Vec<Vec<u32>> {
        let now = SimTime::from_secs_f64(at_s);
        let mut out = Vec::new();
        let view = PoolView {
            now,
            pool: &self.pool,
            players: &self.players,
            format: self.format,
            rerated: 0,
        };
        self.policy.propose(&view, trigger, &mut self.rng, &mut out);
        let mut made = Vec::new();
        for p in out {
            // The engine's check: every ticket still waiting, none twice.
            let distinct = (1..p.tickets.len()).all(|i| !p.tickets[..i].contains(&p.tickets[i]));
            assert!(distinct, "proposal repeats a ticket: {:?}", p.tickets);
            let tickets: Vec<WaitingTicket> = p
                .tickets
                .iter()
                .map(|id| self.pool.remove(*id).expect("proposed tickets are waiting"))
                .collect();
            let ids: Vec<u32> = tickets.iter().map(|t| t.id.0).collect();
            self.policy.on_formed(&FormedMatch {
                id: MatchId(self.formed.len() as u32),
                now,
                tickets: &tickets,
            });
            self.formed.push(Formed {
                at_s,
                tickets: ids.clone(),
                rating_weight: p.rating_weight,
            });
            made.push(ids);
        }
        made
    }
}

/// Sorted ticket numbers of a match, for order-free comparison.
pub fn pair(mut ids: Vec<u32>) -> Vec<u32> {
    ids.sort_unstable();
    ids
}

/// Rates waiting ticket `id`'s members again, as the end of a match they
/// left does (`[backfill]`): each member's ratings move by the same whole
/// number of points drawn from `-spread..spread`, and a game is added. The
/// caller raises its `PoolView::rerated`, as the engine does.
pub fn rate_again(
    pool: &Pool,
    players: &mut [Player],
    id: TicketId,
    rng: &mut impl rand::Rng,
    spread: f64,
) {
    for p in &pool.get(id).expect("waiting").players {
        let pl = &mut players[p.index()];
        let delta = rng.random_range(-spread..spread).round();
        pl.rating.value += delta;
        pl.party_rating.value += delta;
        pl.games += 1;
    }
}
