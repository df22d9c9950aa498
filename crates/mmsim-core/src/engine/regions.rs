//! Regions and latency: players live in home regions with a ping to each
//! data centre, and a match is hosted in one data centre where every ticket's
//! ping is within its latency limit, a limit that relaxes with wait in steps
//! (FlexMatch's latency rule with `expansions`, AccelByte's region
//! expansion). The scenario's policy runs unchanged inside this layer: one
//! instance per data centre, each shown only the tickets allowed there.

use crate::model::{PlayerId, SimDuration, SimTime, TicketId};
use crate::policy::Policy;
use crate::pool::{Pool, WaitingTicket};
use rand::Rng;
use rand_distr::{Distribution, StandardNormal};
use rand_pcg::Pcg64;

/// Most data centres and home regions a scenario may name (validation
/// keeps to these, so indices fit in a `u16` and per-ticket work stays small).
pub const MAX_DATA_CENTRES: usize = 32;
/// Most home regions a scenario may name.
pub const MAX_HOMES: usize = 256;
/// Pings are stored in whole milliseconds, capped here (a minute).
pub const MAX_PING_MS: u16 = 60_000;

/// One home region: its share of the players and the median ping from it to
/// each data centre, in the order of `RegionsConfig::data_centres`.
#[derive(Clone, Debug, PartialEq)]
pub struct Home {
    /// The region's name as `[regions]` writes it.
    pub name: String,
    /// Its share of the players (the shares sum to 1).
    pub share: f64,
    /// Median ping from the region to each data centre, in milliseconds.
    pub ping_ms: Vec<f64>,
}

/// One step of the latency rule: from `after` of waiting, a ticket may be
/// hosted where its ping is at most `max_ping_ms`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LatencyStep {
    /// The wait from which the step holds.
    pub after: SimDuration,
    /// The worst ping a ticket may be hosted at from then on, in milliseconds.
    pub max_ping_ms: u16,
}

/// The `[regions]` section as the engine sees it. Validated: at least one
/// data centre and home, every home's row as long as the data centres, steps
/// strictly later and strictly looser, the first at zero wait.
#[derive(Clone, Debug, PartialEq)]
pub struct RegionsConfig {
    /// The data centres' names, in `[regions]` order.
    pub data_centres: Vec<String>,
    /// The home regions.
    pub homes: Vec<Home>,
    /// Sigma of the log-normal factor on each player's ping to each data
    /// centre (0: everyone in a region has its median ping).
    pub ping_spread: f64,
    /// Floor of any drawn ping.
    pub min_ping_ms: u16,
    /// The latency rule's steps, loosening with the wait.
    pub steps: Vec<LatencyStep>,
}

impl RegionsConfig {
    /// The index of the step in force after waiting `waited`.
    pub fn step_at(&self, waited: SimDuration) -> usize {
        self.steps
            .partition_point(|s| s.after <= waited)
            .saturating_sub(1)
    }

    /// The latency limit after waiting `waited`.
    pub fn limit_at(&self, waited: SimDuration) -> u16 {
        self.steps[self.step_at(waited)].max_ping_ms
    }
}

/// Every player's home region and ping to every data centre, drawn once per
/// run. Flat (`players x data centres`) so a run of millions of players
/// holds one allocation, not one per player.
#[derive(Clone, Debug, PartialEq)]
pub struct Geography {
    dcs: usize,
    #[doc(hidden)]
    pub home: Vec<u16>,
    pings: Vec<u16>,
}

impl Geography {
    /// Homes by their shares, then each player's pings: the home's median
    /// times exp(spread * z), floored at `min_ping_ms`, rounded to the ms.
    pub fn draw(config: &RegionsConfig, players: usize, rng: &mut Pcg64) -> Geography {
        Self::draw_with_homes(config, players, rng, |_| None)
    }

    /// As `draw`, but a player `fixed` gives a home to lives there (a
    /// trace's `region`): their home is still drawn and discarded, and their
    /// pings drawn around the given home's medians, so every other player's
    /// draws stay what they were.
    pub fn draw_with_homes(
        config: &RegionsConfig,
        players: usize,
        rng: &mut Pcg64,
        fixed: impl Fn(usize) -> Option<u16>,
    ) -> Geography {
        let dcs = config.data_centres.len();
        let total: f64 = config.homes.iter().map(|h| h.share).sum();
        let mut home = Vec::with_capacity(players);
        let mut pings = Vec::with_capacity(players * dcs);
        for player in 0..players {
            let mut u = rng.random::<f64>() * total;
            let mut h = config.homes.len() - 1;
            for (i, region) in config.homes.iter().enumerate() {
                if u < region.share {
                    h = i;
                    break;
                }
                u -= region.share;
            }
            // A zero-share home is never picked, even by rounding at the end.
            while config.homes[h].share <= 0.0 && h > 0 {
                h -= 1;
            }
            if let Some(given) = fixed(player) {
                h = usize::from(given);
            }
            home.push(h as u16);
            for &median in &config.homes[h].ping_ms {
                let z: f64 = StandardNormal.sample(rng);
                let ms = (median * (config.ping_spread * z).exp())
                    .round()
                    .clamp(f64::from(config.min_ping_ms), f64::from(MAX_PING_MS));
                pings.push(ms as u16);
            }
        }
        Geography { dcs, home, pings }
    }

    /// The index of player `p`'s home region.
    pub fn home(&self, p: PlayerId) -> u16 {
        self.home[p.index()]
    }

    /// Player `p`'s ping to data centre `dc`, in milliseconds.
    pub fn ping(&self, p: PlayerId, dc: usize) -> u16 {
        self.pings[p.index() * self.dcs + dc]
    }

    /// A player's ping to every data centre, in `[regions]` order.
    pub fn pings(&self, p: PlayerId) -> &[u16] {
        &self.pings[p.index() * self.dcs..(p.index() + 1) * self.dcs]
    }

    /// Replaces a player's drawn pings with given ones (a trace's), one per
    /// data centre.
    pub fn set_pings(&mut self, p: PlayerId, pings_ms: &[u16]) {
        let dcs = self.dcs;
        self.pings[p.index() * dcs..(p.index() + 1) * dcs].copy_from_slice(pings_ms);
    }

    /// A party's ping to `dc`: its worst member's, since the match must be
    /// playable for all of them.
    pub fn ticket_ping(&self, players: &[PlayerId], dc: usize) -> u16 {
        players.iter().map(|&p| self.ping(p, dc)).max().unwrap_or(0)
    }
}

/// The regional layer of a running simulation: one sub-pool and one policy
/// instance per data centre.
pub struct Regions {
    /// The `[regions]` section.
    pub config: RegionsConfig,
    /// Every player's home and pings.
    pub geo: Geography,
    /// Tickets currently allowed in each data centre.
    pub pools: Vec<Pool>,
    /// One policy instance per data centre, in `[regions]` order.
    pub policies: Vec<Box<dyn Policy>>,
    /// The data centres in the order the current pass visits them.
    pub order: Vec<usize>,
}

impl Regions {
    /// The layer for `config` and `geo`, with one policy per data centre and empty pools.
    pub fn new(config: RegionsConfig, geo: Geography, policies: Vec<Box<dyn Policy>>) -> Self {
        let dcs = config.data_centres.len();
        assert_eq!(policies.len(), dcs, "one policy instance per data centre");
        Regions {
            config,
            geo,
            pools: (0..dcs).map(|_| Pool::default()).collect(),
            policies,
            order: Vec::with_capacity(dcs),
        }
    }

    /// Admits `t` to every data centre step `step` of the latency rule
    /// allows and the previous step did not, into `self.order` best ping
    /// first; returns the next step that admits it anywhere new, if any.
    pub fn admit(&mut self, t: &WaitingTicket, step: usize) -> Option<usize> {
        let before = step
            .checked_sub(1)
            .map(|s| self.config.steps[s].max_ping_ms);
        self.admit_within(t, step, before)
    }

    /// Admits `t`, back from a failed ready check after waiting `waited`,
    /// to every data centre its current step allows (it left them all when
    /// the check failed); returns the next step, as `admit`.
    pub fn readmit(&mut self, t: &WaitingTicket, waited: SimDuration) -> Option<usize> {
        let step = self.config.step_at(waited);
        self.admit_within(t, step, None)
    }

    /// `admit`'s work: the data centres within step `step`'s limit and
    /// beyond `before`, skipping any that already hold `t` (a step's event
    /// may fire twice for a ticket readmitted before it came due).
    fn admit_within(
        &mut self,
        t: &WaitingTicket,
        step: usize,
        before: Option<u16>,
    ) -> Option<usize> {
        let limit = self.config.steps[step].max_ping_ms;
        self.order.clear();
        let mut worst_outside = None::<u16>;
        for dc in 0..self.pools.len() {
            let ping = self.geo.ticket_ping(&t.players, dc);
            if ping <= limit {
                if before.is_none_or(|b| ping > b) && !self.pools[dc].contains(t.id) {
                    self.order.push(dc);
                }
            } else {
                worst_outside = Some(worst_outside.map_or(ping, |w| w.min(ping)));
            }
        }
        let geo = &self.geo;
        self.order
            .sort_by_key(|&dc| (geo.ticket_ping(&t.players, dc), dc));
        for &dc in &self.order {
            self.pools[dc].insert(t.clone());
        }
        // The first later step whose limit reaches the nearest data centre
        // still out of reach: the ticket is looked at again then, not before.
        let nearest = worst_outside?;
        (step + 1..self.config.steps.len()).find(|&s| self.config.steps[s].max_ping_ms >= nearest)
    }

    /// Takes a ticket out of every sub-pool (it matched, gave up or the run ended).
    pub fn remove(&mut self, id: TicketId) {
        for pool in &mut self.pools {
            pool.remove(id);
        }
    }

    /// Whether every ticket of a proposal may be hosted at `dc` at `now`:
    /// in its sub-pool, and (checked again, as the engine's own guard)
    /// within its current limit.
    pub fn allows(&self, dc: usize, tickets: &[TicketId], now: SimTime) -> bool {
        tickets.iter().all(|id| {
            self.pools[dc].get(*id).is_some_and(|t| {
                self.geo.ticket_ping(&t.players, dc) <= self.config.limit_at(now.since(t.enqueued))
            })
        })
    }

    /// Orders the data centres for a periodic pass, into `self.order`: the
    /// one holding the longest-waiting ticket first, and among data centres
    /// that hold the same oldest ticket, the one with the lower ping for it.
    /// A fixed order (data centre 0 first) would hand every contested ticket
    /// to the first data centre and starve the others of it; ordering by
    /// the oldest waiting ticket serves whoever has waited longest first,
    /// where they play best, whatever the file's order. Empty ones are skipped.
    pub fn order_for_tick(&mut self) {
        self.order.clear();
        self.order
            .extend((0..self.pools.len()).filter(|&dc| !self.pools[dc].is_empty()));
        let (pools, geo) = (&self.pools, &self.geo);
        self.order.sort_by_key(|&dc| {
            let oldest = pools[dc].oldest_first().next().expect("not empty");
            (oldest.id, geo.ticket_ping(&oldest.players, dc), dc)
        });
    }

    /// When ticket `t` must next be looked at for step `step`.
    pub fn step_time(&self, t: &WaitingTicket, step: usize) -> SimTime {
        t.enqueued + self.config.steps[step].after
    }
}
