//! What each game mode did, when a run has `[modes]`: tickets, matches,
//! waits and abandons per mode, and how tickets queued for several modes
//! fared against those queued for one. Folded from the same ticket and
//! match records as everything else.

use super::dist::{Dist, MsHist};
use super::records::{MatchRecord, TicketEnd, TicketRecord};
use serde::{Deserialize, Serialize};

/// A ticket's modes, in its record (`[modes]` only).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TicketMode {
    /// The mode that matched it; if none did, the mode it drew (index in
    /// `[[modes.queues]]`). Each ticket is counted in exactly one mode.
    pub mode: u8,
    /// Whether it waited in several modes at once.
    pub multi: bool,
}

/// The summary's `modes` block.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModesSummary {
    /// One entry per mode, in `[modes]` order.
    pub by_mode: Vec<ModeFigures>,
    /// Tickets that queued for several modes at once.
    pub multi_queued: QueuedFigures,
    /// Tickets that queued for one mode, drawn for a mode of the
    /// multi-queue set: the group the multi-queued are compared with.
    pub single_queued: QueuedFigures,
}

/// One mode's figures in `modes.by_mode`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModeFigures {
    /// The mode's name.
    pub mode: String,
    /// Tickets after warm-up counted here: matched in this mode, or drawn
    /// for it and matched nowhere.
    pub tickets: u64,
    /// Of them, matched.
    pub matched: u64,
    /// Share of them who gave up.
    pub abandon_rate: Option<f64>,
    /// Median wait of the matched, in seconds.
    pub wait_p50_s: Option<f64>,
    /// The same, 90th percentile.
    pub wait_p90_s: Option<f64>,
    /// Matches formed after warm-up.
    pub matches: u64,
    /// Mean rating spread within a match (max - min).
    pub spread_rating_mean: Option<f64>,
    /// Mean |P(team 0 wins) - 0.5| on true skill, of the matches played.
    pub win_prob_gap_mean: Option<f64>,
    /// Multi-queued tickets this mode matched, and their share of all
    /// matched multi-queued tickets.
    pub multi_queued_matched: u64,
    /// Their share of all matched multi-queued tickets.
    pub multi_queued_matched_share: Option<f64>,
}

/// A group of tickets' figures (`modes.multi_queued`, `modes.single_queued`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QueuedFigures {
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

#[derive(Clone, Debug, Default)]
struct Group {
    tickets: u64,
    abandoned: u64,
    waits: MsHist,
}

impl Group {
    fn add(&mut self, t: &TicketRecord) {
        self.tickets += 1;
        match t.end {
            TicketEnd::Matched(_) => self.waits.add_ms(t.left.since(t.enqueued).as_ms()),
            TicketEnd::Abandoned => self.abandoned += 1,
            TicketEnd::Waiting | TicketEnd::Declined => {}
        }
    }

    fn figures(&self) -> QueuedFigures {
        QueuedFigures {
            tickets: self.tickets,
            matched: self.waits.n(),
            abandon_rate: (self.tickets > 0).then(|| self.abandoned as f64 / self.tickets as f64),
            wait_p50_s: self.waits.quantile(0.5),
            wait_p90_s: self.waits.quantile(0.9),
        }
    }
}

/// The accumulators, one set per run.
#[derive(Clone, Debug, Default)]
pub(super) struct ModeStats {
    names: Vec<String>,
    /// The multi-queue set, as a mask of mode indices.
    set: u16,
    by_mode: Vec<Group>,
    multi_matched: Vec<u64>,
    matches: Vec<u64>,
    spread_rating: Vec<f64>,
    gap_sum: Vec<f64>,
    gap_n: Vec<u64>,
    multi: Group,
    single: Group,
}

impl ModeStats {
    pub fn new(names: Vec<String>, set: u16) -> Self {
        let n = names.len();
        ModeStats {
            names,
            set,
            by_mode: vec![Group::default(); n],
            multi_matched: vec![0; n],
            matches: vec![0; n],
            spread_rating: vec![0.0; n],
            gap_sum: vec![0.0; n],
            gap_n: vec![0; n],
            ..Default::default()
        }
    }

    /// A ticket after warm-up.
    pub fn ticket(&mut self, t: &TicketRecord) {
        let Some(tm) = t.mode.filter(|tm| usize::from(tm.mode) < self.names.len()) else {
            return;
        };
        let m = usize::from(tm.mode);
        self.by_mode[m].add(t);
        if tm.multi {
            self.multi.add(t);
            if matches!(t.end, TicketEnd::Matched(_)) {
                self.multi_matched[m] += 1;
            }
        } else if self.set & (1 << m) != 0 {
            self.single.add(t);
        }
    }

    /// A match after warm-up.
    pub fn match_row(&mut self, rec: &MatchRecord) {
        let Some(m) = rec.mode.map(usize::from).filter(|&m| m < self.names.len()) else {
            return;
        };
        self.matches[m] += 1;
        self.spread_rating[m] += rec.spread_rating;
        if let Some(g) = rec.win_prob_gap() {
            self.gap_sum[m] += g;
            self.gap_n[m] += 1;
        }
    }

    pub fn summary(&self) -> ModesSummary {
        let multi_total: u64 = self.multi_matched.iter().sum();
        ModesSummary {
            by_mode: self
                .names
                .iter()
                .enumerate()
                .map(|(m, name)| {
                    let g = self.by_mode[m].figures();
                    ModeFigures {
                        mode: name.clone(),
                        tickets: g.tickets,
                        matched: g.matched,
                        abandon_rate: g.abandon_rate,
                        wait_p50_s: g.wait_p50_s,
                        wait_p90_s: g.wait_p90_s,
                        matches: self.matches[m],
                        spread_rating_mean: (self.matches[m] > 0)
                            .then(|| self.spread_rating[m] / self.matches[m] as f64),
                        win_prob_gap_mean: (self.gap_n[m] > 0)
                            .then(|| self.gap_sum[m] / self.gap_n[m] as f64),
                        multi_queued_matched: self.multi_matched[m],
                        multi_queued_matched_share: (multi_total > 0)
                            .then(|| self.multi_matched[m] as f64 / multi_total as f64),
                    }
                })
                .collect(),
            multi_queued: self.multi.figures(),
            single_queued: self.single.figures(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{MatchId, PlayerId, SimTime, TicketId};

    fn ticket(mode: u8, multi: bool, wait_s: u64, end: TicketEnd) -> TicketRecord {
        TicketRecord {
            ticket: TicketId(0),
            lead: PlayerId(0),
            party_size: 1,
            enqueued: SimTime::from_ms(1_000),
            left: SimTime::from_ms(1_000 + wait_s * 1_000),
            end,
            rating: 0.0,
            true_skill: 0.0,
            requeue: false,
            in_warmup: false,
            roles: None,
            region: None,
            host_ping_ms: None,
            mode: Some(TicketMode { mode, multi }),
        }
    }

    #[test]
    fn each_ticket_counts_once_in_its_mode_and_multi_queued_are_split_by_where_they_matched() {
        let mut s = ModeStats::new(vec!["ranked".into(), "casual".into(), "duel".into()], 0b011);
        let matched = TicketEnd::Matched(MatchId(1));
        s.ticket(&ticket(0, true, 10, matched));
        s.ticket(&ticket(1, true, 20, matched));
        s.ticket(&ticket(1, true, 30, matched));
        // A multi-queued ticket nobody matched is counted in its drawn mode
        // only, as abandoned there and nowhere else.
        s.ticket(&ticket(0, true, 50, TicketEnd::Abandoned));
        s.ticket(&ticket(0, false, 40, matched));
        s.ticket(&ticket(2, false, 5, matched));
        let sum = s.summary();
        let tickets: Vec<u64> = sum.by_mode.iter().map(|m| m.tickets).collect();
        assert_eq!(tickets, vec![3, 2, 1]);
        assert_eq!(sum.by_mode[0].abandon_rate, Some(1.0 / 3.0));
        assert_eq!(sum.by_mode[1].abandon_rate, Some(0.0));
        assert_eq!(sum.by_mode[0].multi_queued_matched, 1);
        assert_eq!(sum.by_mode[1].multi_queued_matched, 2);
        assert_eq!(sum.by_mode[1].multi_queued_matched_share, Some(2.0 / 3.0));
        assert_eq!(sum.multi_queued.tickets, 4);
        assert_eq!(sum.multi_queued.matched, 3);
        assert_eq!(sum.multi_queued.abandon_rate, Some(0.25));
        // The duel is outside the set: its single-queued ticket is not in the comparison.
        assert_eq!(sum.single_queued.tickets, 1);
        assert_eq!(sum.single_queued.wait_p50_s, Some(40.0));
    }
}
