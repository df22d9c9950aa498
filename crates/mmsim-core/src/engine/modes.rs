//! Game modes sharing one population (`[modes]`): several queues, each with
//! its own match format and policy, fed by the same players. A ticket waits
//! in the pool of every mode it queued for and leaves all of them the moment
//! one mode matches it (AccelByte's sub-game modes, FlexMatch's several
//! matchmaking configurations). The engine's main pool still holds every
//! waiting ticket once, so abandons, the end of the run and the match's
//! bookkeeping need no change; this layer adds the per-mode sub-pools.

use crate::model::TicketId;
use crate::policy::{MatchFormat, Policy, Schedule};
use crate::pool::{Pool, WaitingTicket};
use rand::Rng;
use rand_pcg::Pcg64;
use std::collections::HashMap;

/// Most modes a scenario may name: a ticket's modes fit in a `u16` mask.
pub const MAX_MODES: usize = 16;

/// One mode (queue) as the engine sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct ModeSpec {
    /// The mode's name as `[modes]` writes it.
    pub name: String,
    /// Share of fresh arrivals that draw this mode (the shares sum to 1).
    pub share: f64,
    /// Teams per match and players per team in this mode.
    pub format: MatchFormat,
    /// Cumulative probability of party sizes 1, 2, ... among this mode's
    /// fresh arrivals; no size above the mode's team size has weight.
    pub party_size_cdf: Vec<f64>,
}

/// The `[modes]` section as the engine sees it. Validated: 1 to
/// `MAX_MODES` modes with distinct names, shares summing to 1, parties
/// that fit each mode's teams, a multi-queue set of known modes.
#[derive(Clone, Debug, PartialEq)]
pub struct ModesConfig {
    /// Every mode, in `[modes]` order (a ticket's mode mask indexes it).
    pub modes: Vec<ModeSpec>,
    /// The modes a multi-queued ticket queues for, as a mask.
    pub multi_queue: u16,
    /// Share of the tickets drawn for a mode of `multi_queue` that queue for
    /// every mode of the set their party fits.
    pub multi_queue_share: f64,
}

impl ModesConfig {
    /// The mode a share draw `u` in [0, 1) falls in.
    fn by_share(&self, u: f64, fits: impl Fn(usize) -> bool) -> Option<usize> {
        let total: f64 = (0..self.modes.len())
            .filter(|&m| fits(m))
            .map(|m| self.modes[m].share)
            .sum();
        if total <= 0.0 {
            return None;
        }
        let mut acc = 0.0;
        let mut last = None;
        for m in (0..self.modes.len()).filter(|&m| fits(m)) {
            if self.modes[m].share <= 0.0 {
                continue;
            }
            acc += self.modes[m].share / total;
            last = Some(m);
            if u < acc {
                return Some(m);
            }
        }
        last
    }
}

/// What the layer remembers of a waiting ticket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Queued {
    /// Every mode it waits in.
    pub mask: u16,
    /// The mode it drew; it is counted there if no mode matches it.
    pub drawn: u8,
}

impl Queued {
    /// Whether the ticket waits in more than one mode.
    pub fn multi(&self) -> bool {
        self.mask.count_ones() > 1
    }
}

/// The mode layer of a running simulation: a sub-pool and a policy per mode.
#[doc(hidden)]
pub struct Modes {
    pub config: ModesConfig,
    pub pools: Vec<Pool>,
    pub policies: Vec<Box<dyn Policy>>,
    pub schedules: Vec<Schedule>,
    rng: Pcg64,
    /// Waiting tickets' modes. Only looked up, never iterated, so its order
    /// cannot reach any output.
    waiting: HashMap<TicketId, Queued>,
    /// The mode whose policy's proposals are being formed.
    pub current: Option<u8>,
    /// The modes a joining ticket is offered to, its drawn mode first.
    pub order: Vec<u8>,
    /// The mode drawn for the fresh arrival being enqueued, if any (a
    /// returning party draws its mode when it joins).
    pub pending: Option<u8>,
}

impl Modes {
    pub fn new(config: ModesConfig, policies: Vec<Box<dyn Policy>>, rng: Pcg64) -> Self {
        let n = config.modes.len();
        assert_eq!(policies.len(), n, "one policy instance per mode");
        Modes {
            schedules: policies.iter().map(|p| p.schedule()).collect(),
            pools: (0..n).map(|_| Pool::default()).collect(),
            policies,
            config,
            rng,
            waiting: HashMap::new(),
            current: None,
            order: Vec::with_capacity(n),
            pending: None,
        }
    }

    /// A fresh arrival's mode, by the shares. One draw whatever happens.
    pub fn draw_fresh(&mut self) -> usize {
        let u: f64 = self.rng.random();
        self.config.by_share(u, |_| true).expect("validated shares")
    }

    /// A returning party's mode: by the shares of the modes whose teams
    /// take a party of `size`. `None` when no mode does (never, for a party
    /// that has just played one).
    fn draw_for(&mut self, size: usize) -> Option<usize> {
        let u: f64 = self.rng.random();
        let modes = &self.config.modes;
        self.config
            .by_share(u, |m| modes[m].format.team_size >= size)
    }

    /// Queues `t` in its modes: `drawn` (drawn now if `None`) and, for a
    /// multi-queued ticket, every other mode of the set its party fits.
    /// Fills `order` with them, the drawn mode first. False if no mode
    /// takes the party.
    pub fn admit(&mut self, t: &WaitingTicket, drawn: Option<u8>) -> bool {
        let size = t.size();
        let drawn = match drawn {
            Some(m) => usize::from(m),
            None => match self.draw_for(size) {
                Some(m) => m,
                None => return false,
            },
        };
        // Drawn for every ticket, so one ticket's choice never shifts the
        // next one's draws.
        let u: f64 = self.rng.random();
        let set = self.config.multi_queue;
        let mut mask = 1u16 << drawn;
        if set & mask != 0 && u < self.config.multi_queue_share {
            for (m, spec) in self.config.modes.iter().enumerate() {
                if set & (1 << m) != 0 && spec.format.team_size >= size {
                    mask |= 1 << m;
                }
            }
        }
        self.order.clear();
        self.order.push(drawn as u8);
        self.order.extend(
            (0..self.pools.len() as u8).filter(|&m| m as usize != drawn && mask & (1 << m) != 0),
        );
        for &m in &self.order {
            self.pools[usize::from(m)].insert(t.clone());
        }
        self.waiting.insert(
            t.id,
            Queued {
                mask,
                drawn: drawn as u8,
            },
        );
        true
    }

    /// Takes a ticket out of every mode it waits in (it matched, gave up or
    /// the run ended); what it had queued for.
    pub fn remove(&mut self, id: TicketId) -> Option<Queued> {
        let q = self.waiting.remove(&id)?;
        for (m, pool) in self.pools.iter_mut().enumerate() {
            if q.mask & (1 << m) != 0 {
                pool.remove(id);
            }
        }
        Some(q)
    }

    /// Whether every ticket of a proposal of mode `m` waits in that mode.
    pub fn allows(&self, m: usize, tickets: &[TicketId]) -> bool {
        tickets.iter().all(|id| self.pools[m].contains(*id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::streams::{stream, Stream};
    use crate::model::{Party, PlayerId, SimTime};

    fn spec(name: &str, share: f64, team_size: usize) -> ModeSpec {
        ModeSpec {
            name: name.into(),
            share,
            format: MatchFormat {
                teams: 2,
                team_size,
                roles: None,
            },
            party_size_cdf: vec![1.0],
        }
    }

    fn config(multi_share: f64) -> ModesConfig {
        ModesConfig {
            modes: vec![
                spec("ranked", 0.5, 5),
                spec("casual", 0.3, 5),
                spec("duel", 0.2, 1),
            ],
            multi_queue: 0b011,
            multi_queue_share: multi_share,
        }
    }

    fn ticket(id: u32, size: u32) -> WaitingTicket {
        WaitingTicket {
            id: TicketId(id),
            players: (0..size).map(|i| PlayerId(id * 10 + i)).collect::<Party>(),
            rating: 1500.0,
            enqueued: SimTime::ZERO,
            requeue: false,
            roles: Default::default(),
        }
    }

    fn layer(multi_share: f64) -> Modes {
        Modes::new(
            config(multi_share),
            (0..3)
                .map(|_| crate::policy::PolicyConfig::Widening(Default::default()).build())
                .collect(),
            stream(3, Stream::Modes),
        )
    }

    #[test]
    fn fresh_arrivals_follow_the_shares_within_binomial_bounds() {
        let mut m = layer(0.0);
        let n = 20_000;
        let mut counts = [0usize; 3];
        for _ in 0..n {
            counts[m.draw_fresh()] += 1;
        }
        for (i, share) in [0.5, 0.3, 0.2].into_iter().enumerate() {
            let sd = (n as f64 * share * (1.0 - share)).sqrt();
            let diff = (counts[i] as f64 - n as f64 * share).abs();
            assert!(diff < 4.0 * sd, "mode {i}: {} of {n}", counts[i]);
        }
    }

    #[test]
    fn a_multi_queued_ticket_waits_in_each_mode_of_the_set_and_leaves_all_at_once() {
        let mut m = layer(1.0);
        let t = ticket(1, 1);
        assert!(m.admit(&t, Some(1)));
        // Drawn for casual, also queued for ranked; never for the duel, which
        // is not in the set.
        assert_eq!(m.order, vec![1, 0]);
        assert!(m.pools[0].contains(t.id) && m.pools[1].contains(t.id));
        assert!(!m.pools[2].contains(t.id));
        let q = m.remove(t.id).expect("waiting");
        assert_eq!(
            q,
            Queued {
                mask: 0b011,
                drawn: 1
            }
        );
        assert!(q.multi());
        assert!(m.pools.iter().all(Pool::is_empty));
        // Gone once: a second removal finds nothing to count.
        assert_eq!(m.remove(t.id), None);
    }

    #[test]
    fn a_ticket_drawn_outside_the_set_queues_alone() {
        let mut m = layer(1.0);
        assert!(m.admit(&ticket(2, 1), Some(2)));
        assert_eq!(m.order, vec![2]);
        assert_eq!(m.remove(TicketId(2)).unwrap().mask, 0b100);
    }

    #[test]
    fn a_party_of_five_is_never_placed_in_the_1v1_queue() {
        let mut m = layer(1.0);
        for id in 0..500 {
            // Returning parties draw among the modes their size fits.
            assert!(m.admit(&ticket(id, 5), None));
            assert!(!m.pools[2].contains(TicketId(id)));
        }
        assert!(m.pools[2].is_empty());
        // Every one was drawn for ranked or casual and, multi-queued, waits in both.
        assert_eq!((m.pools[0].len(), m.pools[1].len()), (500, 500));
    }
}
