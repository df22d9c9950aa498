//! What each game mode did, when a run has `[modes]`: tickets, matches,
//! waits and abandons per mode, and how tickets queued for several modes
//! fared against those queued for one. Folded from the same ticket and
//! match records as everything else; with separate ladders, each ladder's
//! ratings at the end of the run against the true skills they measure.

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
    /// Each ladder, with separate ladders (`ladder` keys); empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ladders: Vec<LadderFigures>,
}

/// One ladder at the end of the run, over the players who played a match
/// on it during the run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LadderFigures {
    /// The ladder's name, as `[modes] ladders` gives it.
    pub ladder: String,
    /// The modes rated on it.
    pub modes: Vec<String>,
    /// Players who played a match on it during the run (warm-up included).
    pub players: u64,
    /// Matches formed on it after warm-up.
    pub matches: u64,
    /// Mean (P(team 0 wins) by the ratings - team 0 won)^2 over its
    /// finished matches after warm-up.
    pub brier_score: Option<f64>,
    /// Spearman correlation of the players' solo ratings on it with true skill.
    pub rating_skill_rank_corr: Option<f64>,
    /// Percentiles of those players' solo ratings and, beside them, of
    /// their true skills.
    pub solo: Vec<RatingPercentile>,
    /// The same for their party ratings.
    pub party: Vec<RatingPercentile>,
    /// Indices of its modes, to fold their matches in.
    #[serde(skip)]
    pub mode_indices: Vec<usize>,
}

/// One percentile of a ladder's players: their rating there beside their
/// true skill at the same percentile.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RatingPercentile {
    /// The percentile, 0 to 100.
    pub pct: u32,
    /// That percentile of the players' ratings on the ladder, in rating points.
    pub rating: f64,
    /// That percentile of the same players' true skills, in rating points.
    pub true_skill: f64,
}

/// The percentiles `LadderFigures` reports.
pub const LADDER_PERCENTILES: [u32; 7] = [5, 10, 25, 50, 75, 90, 95];

/// The `q` quantile of sorted `v` by nearest rank.
fn nearest_rank(v: &[f64], q: f64) -> f64 {
    v[((v.len() - 1) as f64 * q).round() as usize]
}

impl LadderFigures {
    /// Ladder `name` (rating its modes `mode_indices`, named `modes`) from
    /// `players` as it rates them and the matches each played on it.
    pub fn new(
        name: String,
        modes: Vec<String>,
        mode_indices: Vec<usize>,
        players: &[crate::model::Player],
        played: &[u32],
    ) -> Self {
        let on: Vec<&crate::model::Player> = players
            .iter()
            .zip(played)
            .filter(|(_, &n)| n > 0)
            .map(|(p, _)| p)
            .collect();
        let mut skills: Vec<f64> = on.iter().map(|p| p.true_skill).collect();
        let solo: Vec<f64> = on.iter().map(|p| p.rating.value).collect();
        let corr = super::stats::spearman(&solo, &skills);
        skills.sort_by(f64::total_cmp);
        let table = |mut r: Vec<f64>| -> Vec<RatingPercentile> {
            if r.is_empty() {
                return Vec::new();
            }
            r.sort_by(f64::total_cmp);
            LADDER_PERCENTILES
                .iter()
                .map(|&pct| RatingPercentile {
                    pct,
                    rating: nearest_rank(&r, f64::from(pct) / 100.0),
                    true_skill: nearest_rank(&skills, f64::from(pct) / 100.0),
                })
                .collect()
        };
        LadderFigures {
            ladder: name,
            modes,
            players: on.len() as u64,
            matches: 0,
            brier_score: None,
            rating_skill_rank_corr: corr,
            solo: table(solo),
            party: table(on.iter().map(|p| p.party_rating.value).collect()),
            mode_indices,
        }
    }
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
    /// The ladder it is rated on, with separate ladders.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ladder: Option<String>,
    /// Tickets after warm-up kept out of it because a member had not played
    /// its `unlock_games` (those that drew it and those that would have
    /// multi-queued in it); only for a mode with an unlock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<u64>,
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
    /// Each mode's ladder name, with separate ladders.
    ladder_names: Vec<Option<String>>,
    /// The modes with an unlock, as a mask.
    locked: u16,
    refused: Vec<u64>,
    brier_sum: Vec<f64>,
    brier_n: Vec<u64>,
    ladders: Vec<LadderFigures>,
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
            ladder_names: vec![None; n],
            refused: vec![0; n],
            brier_sum: vec![0.0; n],
            brier_n: vec![0; n],
            ..Default::default()
        }
    }

    /// Names each mode's ladder (separate ladders only) and marks the modes
    /// with an unlock, whose refusals the summary reports.
    pub fn with_ladders(&mut self, ladders: Vec<Option<String>>, locked: u16) {
        self.ladder_names = ladders;
        self.locked = locked;
    }

    /// A ticket after warm-up kept out of the modes of `mask` by their unlock.
    pub fn refused(&mut self, mask: u16) {
        for (m, r) in self.refused.iter_mut().enumerate() {
            if mask & (1 << m) != 0 {
                *r += 1;
            }
        }
    }

    /// The ladders at the end of the run.
    pub fn set_ladders(&mut self, ladders: Vec<LadderFigures>) {
        self.ladders = ladders;
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
        if let Some(w) = rec.winner {
            let won0 = if w == 0 { 1.0 } else { 0.0 };
            self.brier_sum[m] += (rec.p_team0_predicted - won0).powi(2);
            self.brier_n[m] += 1;
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
                        ladder: self.ladder_names.get(m).cloned().flatten(),
                        refused: (self.locked & (1 << m) != 0).then_some(self.refused[m]),
                    }
                })
                .collect(),
            multi_queued: self.multi.figures(),
            single_queued: self.single.figures(),
            ladders: self
                .ladders
                .iter()
                .map(|l| {
                    let (sum, n) = l.mode_indices.iter().fold((0.0, 0u64), |(s, n), &m| {
                        (s + self.brier_sum[m], n + self.brier_n[m])
                    });
                    LadderFigures {
                        matches: l.mode_indices.iter().map(|&m| self.matches[m]).sum(),
                        brier_score: (n > 0).then(|| sum / n as f64),
                        ..l.clone()
                    }
                })
                .collect(),
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

    #[test]
    fn refusals_are_reported_for_locked_modes_only_and_ladders_fold_their_modes() {
        let mut s = ModeStats::new(vec!["ranked".into(), "normal".into()], 0);
        s.with_ladders(vec![Some("r".into()), Some("n".into())], 0b01);
        s.refused(0b01);
        s.refused(0b01);
        // Ladder r: players 0..4, solo ratings 10x their skill; player 4 never played.
        let players: Vec<crate::model::Player> = (0..5)
            .map(|i| {
                let r = crate::model::Rating::new(10.0 * i as f64, 1.0, 0.0);
                crate::model::Player::new(PlayerId(i), i as f64, r)
            })
            .collect();
        let fig = LadderFigures::new(
            "r".into(),
            vec!["ranked".into()],
            vec![0],
            &players,
            &[1, 1, 1, 1, 0],
        );
        assert_eq!(fig.players, 4);
        assert_eq!(fig.rating_skill_rank_corr, Some(1.0));
        let median = fig.solo.iter().find(|p| p.pct == 50).unwrap();
        // Nearest rank of four: index round(1.5) = 2.
        assert_eq!((median.rating, median.true_skill), (20.0, 2.0));
        s.set_ladders(vec![fig]);
        let rec = |mode: u8, p0: f64, winner: u32| MatchRecord {
            id: MatchId(0),
            formed: SimTime::ZERO,
            ended: Some(SimTime::from_ms(1)),
            teams: 2,
            team_size: 5,
            team_rating: Default::default(),
            team_skill: Default::default(),
            team_top_skill: Default::default(),
            team_parties: Default::default(),
            team_win_rate_pct: Default::default(),
            spread_rating: 0.0,
            spread_skill: 0.0,
            p_team0: None,
            p_team0_predicted: p0,
            winner: Some(winner),
            duration_s: None,
            survivors: None,
            gold_integral: None,
            rematch: false,
            in_warmup: false,
            host_dc: None,
            mode: Some(mode),
        };
        s.match_row(&rec(0, 0.8, 0));
        s.match_row(&rec(0, 0.6, 1));
        // A normal match is not folded into ladder r.
        s.match_row(&rec(1, 0.0, 0));
        let sum = s.summary();
        assert_eq!(sum.by_mode[0].refused, Some(2));
        assert_eq!(sum.by_mode[1].refused, None);
        assert_eq!(sum.by_mode[0].ladder.as_deref(), Some("r"));
        let l = &sum.ladders[0];
        assert_eq!(l.matches, 2);
        let want = (0.2f64.powi(2) + 0.6f64.powi(2)) / 2.0;
        assert!((l.brier_score.unwrap() - want).abs() < 1e-12);
    }
}
