//! What regions and latency did to players, when a run has `[regions]`:
//! the ping they played at, where matches were hosted, and how long each
//! home region waited. Accumulated from the same records as everything else
//! (plus each matched player's ping, handed over as the match forms).

use super::dist::{Dist, MsHist};
use super::records::{MatchRecord, TicketEnd, TicketRecord};
use serde::{Deserialize, Serialize};

/// The summary's `regions` block.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RegionsSummary {
    /// Ping of every matched player to the data centre that hosted the
    /// match, in milliseconds (players of tickets enqueued after warm-up).
    pub host_ping_ms: PingFigures,
    /// Matches formed after warm-up, by hosting data centre.
    pub by_data_centre: Vec<DataCentreFigures>,
    /// Tickets by their lead player's home region.
    pub by_home_region: Vec<HomeFigures>,
}

/// Pings of matched players to the data centre that hosted them, in milliseconds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PingFigures {
    /// Players counted.
    pub players: u64,
    /// Mean ping.
    pub mean: Option<f64>,
    /// Median ping.
    pub p50: Option<f64>,
    /// 90th-percentile ping.
    pub p90: Option<f64>,
    /// Worst ping.
    pub max: Option<f64>,
}

/// One data centre's matches in `regions.by_data_centre`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DataCentreFigures {
    /// The data centre's name.
    pub data_centre: String,
    /// Matches it hosted.
    pub matches: u64,
    /// Their share of all matches.
    pub share: Option<f64>,
}

/// One home region's tickets in `regions.by_home_region`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HomeFigures {
    /// The region's name.
    pub region: String,
    /// Tickets enqueued after warm-up.
    pub tickets: u64,
    /// Of them, matched.
    pub matched: u64,
    /// Share of them who gave up.
    pub abandon_rate: Option<f64>,
    /// Median wait of the matched, in seconds.
    pub wait_p50_s: Option<f64>,
    /// The same, 90th percentile.
    pub wait_p90_s: Option<f64>,
}

/// The accumulators, one set per run.
#[derive(Clone, Debug, Default)]
pub(super) struct RegionStats {
    data_centres: Vec<String>,
    homes: Vec<String>,
    /// Matched players by ping, one count per millisecond.
    pings: Vec<u64>,
    matches: Vec<u64>,
    tickets: Vec<u64>,
    abandoned: Vec<u64>,
    waits: Vec<MsHist>,
}

impl RegionStats {
    pub fn new(data_centres: Vec<String>, homes: Vec<String>) -> Self {
        let (d, h) = (data_centres.len(), homes.len());
        RegionStats {
            data_centres,
            homes,
            pings: Vec::new(),
            matches: vec![0; d],
            tickets: vec![0; h],
            abandoned: vec![0; h],
            waits: vec![MsHist::default(); h],
        }
    }

    pub fn host_ping(&mut self, ms: u16) {
        let i = usize::from(ms);
        if self.pings.len() <= i {
            self.pings.resize(i + 1, 0);
        }
        self.pings[i] += 1;
    }

    /// A ticket after warm-up.
    pub fn ticket(&mut self, t: &TicketRecord) {
        let Some(h) = t.region.map(usize::from).filter(|&h| h < self.homes.len()) else {
            return;
        };
        self.tickets[h] += 1;
        match t.end {
            TicketEnd::Matched(_) => self.waits[h].add_ms(t.left.since(t.enqueued).as_ms()),
            TicketEnd::Abandoned => self.abandoned[h] += 1,
            TicketEnd::Waiting | TicketEnd::Declined => {}
        }
    }

    /// A match after warm-up.
    pub fn match_row(&mut self, m: &MatchRecord) {
        if let Some(dc) = m
            .host_dc
            .map(usize::from)
            .filter(|&d| d < self.matches.len())
        {
            self.matches[dc] += 1;
        }
    }

    pub fn summary(&self) -> RegionsSummary {
        let players: u64 = self.pings.iter().sum();
        // The smallest ping with at least `q` of the players at or below it.
        let quantile = |q: f64| -> Option<f64> {
            let need = ((q * players as f64).ceil() as u64).max(1);
            let mut seen = 0;
            self.pings
                .iter()
                .position(|&c| {
                    seen += c;
                    seen >= need
                })
                .filter(|_| players > 0)
                .map(|ms| ms as f64)
        };
        let sum: u64 = self
            .pings
            .iter()
            .enumerate()
            .map(|(ms, &c)| ms as u64 * c)
            .sum();
        let total_matches: u64 = self.matches.iter().sum();
        RegionsSummary {
            host_ping_ms: PingFigures {
                players,
                mean: (players > 0).then(|| sum as f64 / players as f64),
                p50: quantile(0.5),
                p90: quantile(0.9),
                max: self.pings.iter().rposition(|&c| c > 0).map(|ms| ms as f64),
            },
            by_data_centre: self
                .data_centres
                .iter()
                .zip(&self.matches)
                .map(|(name, &matches)| DataCentreFigures {
                    data_centre: name.clone(),
                    matches,
                    share: (total_matches > 0).then(|| matches as f64 / total_matches as f64),
                })
                .collect(),
            by_home_region: self
                .homes
                .iter()
                .enumerate()
                .map(|(h, name)| HomeFigures {
                    region: name.clone(),
                    tickets: self.tickets[h],
                    matched: self.waits[h].n(),
                    abandon_rate: (self.tickets[h] > 0)
                        .then(|| self.abandoned[h] as f64 / self.tickets[h] as f64),
                    wait_p50_s: self.waits[h].quantile(0.5),
                    wait_p90_s: self.waits[h].quantile(0.9),
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{MatchId, PlayerId, SimDuration, SimTime, TicketId};

    fn ticket(region: u16, wait_s: u64, end: TicketEnd) -> TicketRecord {
        TicketRecord {
            ticket: TicketId(0),
            lead: PlayerId(0),
            party_size: 1,
            enqueued: SimTime::ZERO,
            left: SimTime::ZERO + SimDuration::from_secs(wait_s),
            end,
            rating: 0.0,
            true_skill: 0.0,
            requeue: false,
            in_warmup: false,
            region: Some(region),
            host_ping_ms: None,
            mode: None,
            roles: None,
        }
    }

    #[test]
    fn figures_by_region_and_data_centre_and_exact_ping_percentiles() {
        let mut s = RegionStats::new(vec!["eu".into(), "na".into()], vec!["a".into(), "b".into()]);
        for ms in 1..=10 {
            s.host_ping(ms * 10);
        }
        let matched = TicketEnd::Matched(MatchId(0));
        for w in [10, 20, 30] {
            s.ticket(&ticket(0, w, matched));
        }
        s.ticket(&ticket(0, 99, TicketEnd::Abandoned));
        s.ticket(&ticket(1, 50, matched));
        let sum = s.summary();
        assert_eq!(sum.host_ping_ms.players, 10);
        assert_eq!(sum.host_ping_ms.mean, Some(55.0));
        assert_eq!(sum.host_ping_ms.p50, Some(50.0));
        assert_eq!(sum.host_ping_ms.p90, Some(90.0));
        assert_eq!(sum.host_ping_ms.max, Some(100.0));
        let a = &sum.by_home_region[0];
        assert_eq!((a.tickets, a.matched, a.abandon_rate), (4, 3, Some(0.25)));
        assert_eq!(a.wait_p50_s, Some(20.0));
        assert_eq!(sum.by_home_region[1].wait_p90_s, Some(50.0));
        assert_eq!(sum.by_data_centre[0].share, None);
    }
}
