//! Metrics while the run goes: the engine hands each ticket and match here
//! once, when it is finished, and they are folded into accumulators and
//! passed on to a row sink (the Parquet tables) instead of being kept. Memory
//! grows with the players and the live pool, not with the tickets of the run.

use super::dist::{Dist, MsHist, Sketch};
use super::summary::*;
use super::{MatchRecord, QueueSample, RatingMoves, RunRecords, TicketEnd, TicketRecord};
use crate::model::Player;

/// Where finished rows go: the Parquet writer of a run's folder, nowhere
/// (`--tables none`, sweeps), or a vector in tests. The engine calls these in
/// event order, once per ticket and per match, and hands the row over (a
/// sink that keeps rows keeps them without copying); a sink may not fail the
/// run, so a writer keeps its first error for `finish`.
pub trait RowSink {
    /// One finished ticket's row.
    fn ticket(&mut self, t: TicketRecord);
    /// One finished match's row.
    fn match_row(&mut self, m: MatchRecord);
    /// Called once after the last row; returns the first error, if any.
    fn finish(&mut self) -> anyhow::Result<()> {
        Ok(())
    }
}

/// Drops every row.
pub struct NoRows;
impl RowSink for NoRows {
    fn ticket(&mut self, _: TicketRecord) {}
    fn match_row(&mut self, _: MatchRecord) {}
}

/// Keeps every row, in the order they came: for tests and small tools.
#[derive(Default)]
pub struct KeepRows(pub RunRecords);
impl RowSink for KeepRows {
    fn ticket(&mut self, t: TicketRecord) {
        self.0.tickets.push(t);
    }
    fn match_row(&mut self, m: MatchRecord) {
        self.0.matches.push(m);
    }
}

/// What the plots draw, from the same accumulators as the summary, so a
/// caption and the summary always count the same tickets and matches.
#[derive(Clone, Debug, Default)]
pub struct RunView {
    /// Waits of matched tickets enqueued after warm-up.
    pub waits: MsHist,
    /// Rating spread of matches formed after warm-up.
    pub spread_rating: Sketch,
    /// Team rating gap of those matches, for formats with teams of several players.
    pub team_rating_gap: Sketch,
    /// Count of finished matches by survivors on the winning side.
    pub survivors: Vec<u64>,
    /// Gold integrals of finished matches.
    pub gold: Sketch,
    /// The queue samples, in time order.
    pub queue: Vec<QueueSample>,
    /// Entry k: rating updates of players playing their (k+1)-th game.
    pub rating_moves: Vec<RatingMoves>,
    /// Waits by main role, with a role queue.
    pub roles: Option<super::roles::RoleAcc>,
}

/// Win-rate gaps at or below an edge count as inside it: team win rates are
/// means of quantised rates, so a gap meant to be exactly 1.0 may come out
/// a rounding error above it.
const EDGE_TOLERANCE_PP: f64 = 1e-9;

/// One hour of the simulated day's tickets.
#[derive(Clone, Debug, Default)]
struct Hour {
    waits: MsHist,
    tickets: u64,
    abandoned: u64,
    /// Matches formed in the hour: how far from a coin flip on ratings and
    /// on true skill (summed), and of those finished, the rating system's
    /// squared prediction error.
    matches: u64,
    rating_gap_sum: f64,
    true_gaps: u64,
    true_gap_sum: f64,
    finished: u64,
    brier_sum: f64,
}

/// One gap bin's matches, upsets and summed model chance of an upset.
#[derive(Clone, Copy, Debug, Default)]
struct UpsetBin {
    matches: u64,
    upsets: u64,
    model_sum: f64,
}

impl UpsetBin {
    fn add(bins: &mut [UpsetBin], (gap, upset, model): (f64, bool, f64)) {
        let b = &mut bins[gap_bin(gap)];
        b.matches += 1;
        b.upsets += u64::from(upset);
        b.model_sum += model;
    }
}

/// The non-empty bins as the summary shows them.
fn gap_bins(bins: &[UpsetBin]) -> Vec<GapBin> {
    bins.iter()
        .enumerate()
        .filter(|(_, b)| b.matches > 0)
        .map(|(i, b)| GapBin {
            gap_from: GAP_EDGES[i],
            gap_to: GAP_EDGES.get(i + 1).copied(),
            matches: b.matches,
            upset_rate: ratio(b.upsets, b.matches),
            model_upset_rate: Some(b.model_sum / b.matches as f64),
        })
        .collect()
}

#[derive(Clone, Debug, Default)]
struct Decile {
    waits: MsHist,
    tickets: u64,
    abandoned: u64,
}

/// The accumulators. Built once per run with the population (for the skill
/// deciles), fed by the engine, turned into a `Summary` and a `RunView`.
pub struct Collector<'r> {
    rows: &'r mut dyn RowSink,
    /// Decile edges of the population's true skill, and its extremes.
    cuts: Vec<f64>,
    skill_min: Option<f64>,
    skill_max: Option<f64>,
    tickets: u64,
    abandoned: u64,
    waiting: u64,
    queue_time: MsHist,
    deciles: Vec<Decile>,
    matches: u64,
    spread_skill: Sketch,
    win_prob_gap: Sketch,
    upsets: u64,
    decided: u64,
    brier_sum: f64,
    finished: u64,
    rematches: u64,
    any_team_format: bool,
    top_gap: Sketch,
    /// Matches by difference in party count (index = gap).
    party_gap: Vec<u64>,
    win_rate_gap: Sketch,
    win_rate_within: [u64; 2],
    hours: Vec<Hour>,
    upset_skill: [UpsetBin; GAP_EDGES.len()],
    upset_rating: [UpsetBin; GAP_EDGES.len()],
    view: RunView,
    /// Present only when the scenario has the section (`enable_*`).
    acceptance: Option<super::backfill::AcceptanceAcc>,
    backfill: Option<super::backfill::BackfillAcc>,
    /// With `[regions]` only.
    regions: Option<super::regions::RegionStats>,
    /// With `[modes]` only.
    modes: Option<Box<super::modes::ModeStats>>,
    /// With `[engagement]` only.
    engagement: Option<Box<super::engagement::EngagementAcc>>,
    /// With explain on only.
    explain: Option<Box<super::explain::ExplainAcc>>,
}

impl<'r> Collector<'r> {
    /// `by_skill`: the players' indices by ascending true skill
    /// (`super::skill_order`), sorted once per run for everyone who needs it.
    pub fn new(players: &[Player], by_skill: &[u32], rows: &'r mut dyn RowSink) -> Self {
        // Deciles of true skill over the whole population, so decile 10 is
        // the top tenth of players whoever happened to queue.
        let skills: Vec<f64> = by_skill
            .iter()
            .map(|&i| players[i as usize].true_skill)
            .collect();
        let cuts = (1..10)
            .map(|d| super::stats::percentile(&skills, d as f64 / 10.0).unwrap_or(0.0))
            .collect();
        Collector {
            rows,
            cuts,
            skill_min: skills.first().copied(),
            skill_max: skills.last().copied(),
            tickets: 0,
            abandoned: 0,
            waiting: 0,
            queue_time: MsHist::default(),
            deciles: vec![Decile::default(); 10],
            matches: 0,
            spread_skill: Sketch::default(),
            win_prob_gap: Sketch::default(),
            upsets: 0,
            decided: 0,
            brier_sum: 0.0,
            finished: 0,
            rematches: 0,
            any_team_format: false,
            top_gap: Sketch::default(),
            party_gap: Vec::new(),
            win_rate_gap: Sketch::default(),
            win_rate_within: [0; 2],
            hours: vec![Hour::default(); 24],
            upset_skill: Default::default(),
            upset_rating: Default::default(),
            view: RunView::default(),
            acceptance: None,
            backfill: None,
            regions: None,
            modes: None,
            engagement: None,
            explain: None,
        }
    }

    /// Counts regional figures from now on: the data centres' and home
    /// regions' names, in the order records index them.
    pub fn enable_regions(&mut self, data_centres: Vec<String>, homes: Vec<String>) {
        self.regions = Some(super::regions::RegionStats::new(data_centres, homes));
    }

    /// Counts figures per game mode from now on: the modes' names in the
    /// order records index them, and the multi-queue set as a mask.
    pub fn enable_modes(&mut self, names: Vec<String>, multi_queue: u16) {
        self.modes = Some(Box::new(super::modes::ModeStats::new(names, multi_queue)));
    }

    /// With separate ladders or unlocks: each mode's ladder name and the
    /// modes with an unlock (`ModeStats::with_ladders`).
    pub fn modes_ladders(&mut self, ladders: Vec<Option<String>>, locked: u16) {
        if let Some(m) = &mut self.modes {
            m.with_ladders(ladders, locked);
        }
    }

    /// A ticket after warm-up kept out of the modes of `mask` by their unlock.
    pub fn modes_refused(&mut self, mask: u16) {
        if let Some(m) = &mut self.modes {
            m.refused(mask);
        }
    }

    /// Each ladder at the end of the run.
    pub fn modes_ladders_end(&mut self, ladders: Vec<super::modes::LadderFigures>) {
        if let Some(m) = &mut self.modes {
            m.set_ladders(ladders);
        }
    }

    /// A matched player's ping to the hosting data centre (tickets after warm-up).
    pub fn host_ping(&mut self, ms: u16) {
        if let Some(r) = &mut self.regions {
            r.host_ping(ms);
        }
    }

    /// Switches on the engagement figures (`engagement` in the summary).
    pub fn enable_engagement(&mut self, acc: super::engagement::EngagementAcc) {
        self.engagement = Some(Box::new(acc));
    }

    /// Switches on the explain figures (`explain` in the summary).
    pub fn enable_explain(&mut self, acc: super::explain::ExplainAcc) {
        self.explain = Some(Box::new(acc));
    }

    /// The explain accumulators, when switched on.
    pub fn explain(&mut self) -> Option<&mut super::explain::ExplainAcc> {
        self.explain.as_deref_mut()
    }

    /// The engagement accumulators, when switched on.
    pub fn engagement(&mut self) -> Option<&mut super::engagement::EngagementAcc> {
        self.engagement.as_deref_mut()
    }

    /// Switches on the ready-check figures (`acceptance` in the summary).
    pub fn enable_acceptance(&mut self) {
        self.acceptance = Some(Default::default());
    }

    /// Switches on the leave and backfill figures (`backfill` in the summary).
    pub fn enable_backfill(&mut self) {
        self.backfill = Some(Default::default());
    }

    /// Counts one ready check (`[acceptance]`).
    pub fn ready_check(&mut self, c: super::backfill::ReadyCheck) {
        if let Some(a) = &mut self.acceptance {
            a.add(c);
        }
    }

    /// The backfill accumulators, when switched on.
    pub fn backfill(&mut self) -> Option<&mut super::backfill::BackfillAcc> {
        self.backfill.as_mut()
    }

    /// Turns on the role-queue figures, with the scenario's role names.
    pub fn with_roles(&mut self, names: Vec<String>) {
        self.view.roles = Some(super::roles::RoleAcc::new(names));
    }

    /// A finished ticket: matched, abandoned, or censored at the run's end.
    pub fn ticket(&mut self, t: TicketRecord) {
        self.count_ticket(&t);
        self.rows.ticket(t);
    }

    fn count_ticket(&mut self, t: &TicketRecord) {
        if t.in_warmup {
            return;
        }
        self.tickets += 1;
        if let Some(r) = &mut self.view.roles {
            r.ticket(t);
        }
        if let Some(r) = &mut self.regions {
            r.ticket(t);
        }
        if let Some(m) = &mut self.modes {
            m.ticket(t);
        }
        let ms = t.left.since(t.enqueued).as_ms();
        self.queue_time.add_ms(ms);
        let d = &mut self.deciles[self.cuts.partition_point(|&c| c < t.true_skill)];
        d.tickets += 1;
        let h = &mut self.hours[hour_of_day(t.enqueued.as_ms()) as usize];
        h.tickets += 1;
        match t.end {
            TicketEnd::Matched(_) => {
                d.waits.add_ms(ms);
                h.waits.add_ms(ms);
                self.view.waits.add_ms(ms);
            }
            TicketEnd::Abandoned => {
                d.abandoned += 1;
                h.abandoned += 1;
                self.abandoned += 1;
            }
            TicketEnd::Waiting => self.waiting += 1,
            // Counted by the ready checks (`acceptance`), not as a wait.
            TicketEnd::Declined => {}
        }
    }

    /// A finished match: ended, or still running (or in the lobby) at the run's end.
    pub fn match_row(&mut self, m: MatchRecord) {
        self.count_match(&m);
        self.rows.match_row(m);
    }

    fn count_match(&mut self, m: &MatchRecord) {
        self.any_team_format |= m.team_size > 1;
        if m.in_warmup {
            return;
        }
        self.matches += 1;
        if let Some(r) = &mut self.regions {
            r.match_row(m);
        }
        if let Some(md) = &mut self.modes {
            md.match_row(m);
        }
        self.view.spread_rating.add(m.spread_rating);
        self.spread_skill.add(m.spread_skill);
        let formed_in = hour_of_day(m.formed.as_ms()) as usize;
        let hour = &mut self.hours[formed_in];
        hour.matches += 1;
        hour.rating_gap_sum += (m.p_team0_predicted - 0.5).abs();
        if let Some(gap) = m.win_prob_gap() {
            self.win_prob_gap.add(gap);
            hour.true_gaps += 1;
            hour.true_gap_sum += gap;
        }
        if m.rematch {
            self.rematches += 1;
        }
        if m.team_size > 1 {
            self.view.team_rating_gap.add(m.team_rating_gap());
            self.top_gap.add(super::records::range(&m.team_top_skill));
            let most = m.team_parties.iter().max().copied().unwrap_or(0);
            let fewest = m.team_parties.iter().min().copied().unwrap_or(0);
            let gap = (most - fewest) as usize;
            if self.party_gap.len() <= gap {
                self.party_gap.resize(gap + 1, 0);
            }
            self.party_gap[gap] += 1;
            let wr = super::records::range(&m.team_win_rate_pct);
            self.win_rate_gap.add(wr);
            for (i, edge) in [1.0, 2.0].into_iter().enumerate() {
                if wr <= edge + EDGE_TOLERANCE_PP {
                    self.win_rate_within[i] += 1;
                }
            }
        }
        if let Some(u) = m.skill_upset() {
            UpsetBin::add(&mut self.upset_skill, u);
        }
        if let Some(u) = m.rating_upset() {
            UpsetBin::add(&mut self.upset_rating, u);
        }
        if let Some(w) = m.winner {
            self.finished += 1;
            if let Some(u) = m.upset() {
                self.decided += 1;
                self.upsets += u64::from(u);
            }
            let won0 = if w == 0 { 1.0 } else { 0.0 };
            let brier = (m.p_team0_predicted - won0).powi(2);
            self.brier_sum += brier;
            let hour = &mut self.hours[formed_in];
            hour.finished += 1;
            hour.brier_sum += brier;
            if let Some(s) = m.survivors {
                let s = s as usize;
                if self.view.survivors.len() <= s {
                    self.view.survivors.resize(s + 1, 0);
                }
                self.view.survivors[s] += 1;
            }
            if let Some(g) = m.gold_integral {
                self.view.gold.add(g);
            }
        }
    }

    /// A rating update of a player at game number `game` (0-based).
    pub fn rating_move(&mut self, game: usize, abs_change: f64) {
        if self.view.rating_moves.len() <= game {
            self.view
                .rating_moves
                .resize(game + 1, RatingMoves::default());
        }
        let m = &mut self.view.rating_moves[game];
        m.sum_abs_change += abs_change;
        m.updates += 1;
    }

    /// Keeps one queue sample.
    pub fn sample(&mut self, s: QueueSample) {
        self.view.queue.push(s);
    }

    /// Feeds a run's records in one go, as the engine would have: for tests
    /// and for reports of hand-made runs.
    pub fn feed(&mut self, records: &RunRecords) {
        records.tickets.iter().for_each(|t| self.ticket(t.clone()));
        records
            .matches
            .iter()
            .for_each(|m| self.match_row(m.clone()));
        records.queue.iter().for_each(|q| self.sample(q.clone()));
        for (k, m) in records.rating_moves.iter().enumerate() {
            if self.view.rating_moves.len() <= k {
                self.view.rating_moves.resize(k + 1, RatingMoves::default());
            }
            self.view.rating_moves[k].sum_abs_change += m.sum_abs_change;
            self.view.rating_moves[k].updates += m.updates;
        }
    }

    /// Closes the row sink and builds the summary and the plots' view.
    pub fn finish(
        self,
        meta: &RunMeta<'_>,
        players: &[Player],
        final_corr: Option<f64>,
    ) -> anyhow::Result<(Summary, RunView)> {
        self.rows.finish()?;
        let summary = self.summary(meta, players, final_corr);
        Ok((summary, self.view))
    }

    fn summary(&self, meta: &RunMeta<'_>, players: &[Player], final_corr: Option<f64>) -> Summary {
        let measured_h = (meta.duration_s - meta.warmup_s) / 3600.0;
        let deciles = self
            .deciles
            .iter()
            .enumerate()
            .map(|(d, dec)| DecileWait {
                wait_s: describe(&dec.waits),
                decile: d as u32 + 1,
                skill_from: if d == 0 {
                    self.skill_min
                } else {
                    Some(self.cuts[d - 1])
                },
                skill_to: if d == 9 {
                    self.skill_max
                } else {
                    Some(self.cuts[d])
                },
                tickets: dec.tickets,
                abandon_rate: ratio(dec.abandoned, dec.tickets),
            })
            .collect();
        let team = self.any_team_format.then(|| {
            let n: u64 = self.party_gap.iter().sum();
            let total: u64 = self
                .party_gap
                .iter()
                .enumerate()
                .map(|(g, c)| g as u64 * c)
                .sum();
            let wr_n = self.win_rate_gap.n();
            let [w1, w2] = self.win_rate_within;
            TeamMetrics {
                team_rating_gap: mean_p50_p90(&self.view.team_rating_gap),
                top_player_gap_skill: mean_p50_p90(&self.top_gap),
                party_count_gap: PartyCountGap {
                    mean: (n > 0).then(|| total as f64 / n as f64),
                    equal_share: ratio(self.party_gap.first().copied().unwrap_or(0), n),
                },
                win_rate_gap_pp: WinRateGap {
                    n: wr_n,
                    within_1: ratio(w1, wr_n),
                    within_2: ratio(w2 - w1, wr_n),
                    three_or_more: ratio(wr_n - w2, wr_n),
                    mean: self.win_rate_gap.mean(),
                },
            }
        });
        let survivors = &self.view.survivors;
        let survivors_n: u64 = survivors.iter().sum();
        let (survivors_hist, survivors_10_plus_share) = if survivors_n > 0 {
            let max = survivors.len() - 1;
            let mode = (0..=max)
                .max_by_key(|&k| (survivors[k], std::cmp::Reverse(k)))
                .unwrap_or(0);
            let counts = (1..=max.max(1))
                .map(|k| {
                    let n = survivors.get(k).copied().unwrap_or(0);
                    SurvivorsCount {
                        survivors: k as u64,
                        matches: n,
                        share: n as f64 / survivors_n as f64,
                    }
                })
                .collect();
            let ten_plus: u64 = survivors.iter().skip(10).sum();
            (
                Some(SurvivorsHist {
                    mode: mode as u64,
                    counts,
                }),
                ratio(ten_plus, survivors_n),
            )
        } else {
            (None, None)
        };
        let gold = &self.view.gold;
        let gold_integral = (gold.n() > 0).then(|| GoldIntegral {
            unit: "gold-minutes".into(),
            n: gold.n(),
            mean: gold.mean(),
            p10: gold.quantile(0.1),
            p50: gold.quantile(0.5),
            p90: gold.quantile(0.9),
            p99: gold.quantile(0.99),
        });
        Summary {
            scenario: meta.scenario.to_string(),
            seed: meta.seed,
            policy: meta.policy.to_string(),
            rating_system: meta.rating_system.to_string(),
            duration_s: meta.duration_s,
            warmup_s: meta.warmup_s,
            tickets: self.tickets,
            matches: self.matches,
            matches_per_hour: self.matches as f64 / measured_h,
            abandoned: self.abandoned,
            abandon_rate: ratio(self.abandoned, self.tickets),
            still_waiting: self.waiting,
            arrivals_blocked: meta.arrivals_blocked,
            concurrent_players: concurrent_players(&self.view.queue, meta.warmup_s),
            wait_s: describe(&self.view.waits),
            queue_time_s: describe(&self.queue_time),
            wait_s_by_skill_decile: deciles,
            spread_rating: mean_p50_p90(&self.view.spread_rating),
            spread_skill: mean_p50_p90(&self.spread_skill),
            win_prob_gap: MeanP90 {
                mean: self.win_prob_gap.mean(),
                p90: self.win_prob_gap.quantile(0.9),
            },
            upset_rate: ratio(self.upsets, self.decided),
            rematch_rate: ratio(self.rematches, self.matches),
            brier_score: (self.finished > 0).then(|| self.brier_sum / self.finished as f64),
            team,
            rating_skill_rank_corr: final_corr,
            games_to_within_one_deviation: games_to_within_deviation(players),
            rating_change_by_game: self
                .view
                .rating_moves
                .iter()
                .enumerate()
                .filter(|(_, m)| m.updates > 0)
                .map(|(k, m)| RatingChange {
                    game: k as u64 + 1,
                    mean_abs_change_rating: m.sum_abs_change / m.updates as f64,
                    updates: m.updates,
                })
                .collect(),
            survivors_hist,
            survivors_10_plus_share,
            gold_integral,
            rating_skill_rank_corr_series: self
                .view
                .queue
                .iter()
                .filter_map(|q| {
                    q.rating_skill_rank_corr.map(|corr| CorrPoint {
                        t_s: q.t.as_secs_f64(),
                        corr,
                    })
                })
                .collect(),
            by_hour: self.by_hour(meta.warmup_s),
            regions: self.regions.as_ref().map(|r| r.summary()),
            modes: self.modes.as_ref().map(|m| m.summary()),
            upset_by_gap: UpsetByGap {
                skill: gap_bins(&self.upset_skill),
                rating: gap_bins(&self.upset_rating),
            },
            acceptance: self.acceptance.as_ref().map(|a| a.summary()),
            backfill: self.backfill.as_ref().map(|b| b.summary()),
            roles: self.view.roles.as_ref().map(|r| r.summary()),
            engagement: self.engagement.as_ref().map(|e| e.summary()),
            explain: self.explain.as_ref().map(|e| e.summary()),
        }
    }

    /// The hours of the day with tickets or queue samples after warm-up.
    /// The queue samples are in the view already, so they are binned here.
    fn by_hour(&self, warmup_s: f64) -> Vec<HourFigures> {
        let mut samples = [(0u64, 0u64, 0u32); 24];
        let mut online = [(0u64, 0u32); 24];
        let mut corr = [(0u64, 0.0f64); 24];
        for q in self
            .view
            .queue
            .iter()
            .filter(|q| q.t.as_secs_f64() >= warmup_s)
        {
            let hour = hour_of_day(q.t.as_ms()) as usize;
            let s = &mut samples[hour];
            s.0 += 1;
            s.1 += u64::from(q.waiting_tickets);
            s.2 = s.2.max(q.waiting_tickets);
            let o = &mut online[hour];
            o.0 += u64::from(q.concurrent_players());
            o.1 = o.1.max(q.concurrent_players());
            if let Some(c) = q.rating_skill_rank_corr {
                corr[hour].0 += 1;
                corr[hour].1 += c;
            }
        }
        self.hours
            .iter()
            .zip(samples)
            .zip(online)
            .zip(corr)
            .enumerate()
            .filter(|(_, (((h, s), _), _))| h.tickets > 0 || s.0 > 0)
            .map(
                |(hour, (((h, (n, sum, max)), (players, most)), (corrs, corr_sum)))| HourFigures {
                    hour: hour as u32,
                    tickets: h.tickets,
                    matched: h.waits.n(),
                    wait_p50_s: h.waits.quantile(0.5),
                    wait_p90_s: h.waits.quantile(0.9),
                    wait_p99_s: h.waits.quantile(0.99),
                    abandon_rate: ratio(h.abandoned, h.tickets),
                    queue_samples: n,
                    queue_mean_tickets: (n > 0).then(|| sum as f64 / n as f64),
                    queue_max_tickets: (n > 0).then_some(max),
                    concurrent_mean_players: (n > 0).then(|| players as f64 / n as f64),
                    concurrent_max_players: (n > 0).then_some(most),
                    matches: h.matches,
                    rating_win_prob_gap: (h.matches > 0)
                        .then(|| h.rating_gap_sum / h.matches as f64),
                    true_win_prob_gap: (h.true_gaps > 0)
                        .then(|| h.true_gap_sum / h.true_gaps as f64),
                    brier_score: (h.finished > 0).then(|| h.brier_sum / h.finished as f64),
                    rating_skill_rank_corr: (corrs > 0).then(|| corr_sum / corrs as f64),
                },
            )
            .collect()
    }
}

/// Exact for waits: the mean is summed in ascending order as sorting all
/// values did, so it matches the oracle to the bit.
pub(super) fn describe(h: &MsHist) -> Describe {
    Describe {
        n: h.n(),
        mean: h.mean_sorted(),
        p50: h.quantile(0.5),
        p90: h.quantile(0.9),
        p99: h.quantile(0.99),
        max: h.max(),
    }
}

fn mean_p50_p90(s: &Sketch) -> MeanP50P90 {
    MeanP50P90 {
        mean: s.mean(),
        p50: s.quantile(0.5),
        p90: s.quantile(0.9),
    }
}

/// Players waiting or in a match over the queue samples after warm-up.
fn concurrent_players(queue: &[QueueSample], warmup_s: f64) -> ConcurrentPlayers {
    let (mut n, mut all, mut waiting, mut most) = (0u64, 0u64, 0u64, 0u32);
    for q in queue.iter().filter(|q| q.t.as_secs_f64() >= warmup_s) {
        n += 1;
        all += u64::from(q.concurrent_players());
        waiting += u64::from(q.waiting_players);
        most = most.max(q.concurrent_players());
    }
    let mean = |x: u64| (n > 0).then(|| x as f64 / n as f64);
    ConcurrentPlayers {
        samples: n,
        mean: mean(all),
        max: (n > 0).then_some(most),
        waiting_mean: mean(waiting),
        playing_mean: mean(all - waiting),
    }
}

fn ratio(num: u64, den: u64) -> Option<f64> {
    (den > 0).then(|| num as f64 / den as f64)
}

/// Median number of games a player needed before the rating first lay within
/// one deviation of true skill, over players who got there, and the share of
/// players with games who did.
fn games_to_within_deviation(players: &[Player]) -> GamesToWithin {
    let played = players.iter().filter(|p| p.games > 0).count() as u64;
    let mut games: Vec<f64> = players
        .iter()
        .filter_map(|p| p.games_to_within_deviation.map(f64::from))
        .collect();
    games.sort_by(f64::total_cmp);
    GamesToWithin {
        median: super::stats::percentile(&games, 0.5),
        p90: super::stats::percentile(&games, 0.9),
        players: games.len() as u64,
        share_of_players_who_played: ratio(games.len() as u64, played),
    }
}

/// Rows handed across in batches of this many, so the channel costs little per row.
pub const HANDOFF_ROWS: usize = 4096;

/// Batches the channel holds before the engine waits for the writer. The
/// writer works in bursts: it encodes and compresses a row group of 64k
/// rows (`report::tables::BATCH_ROWS`) at once, while the engine fills a
/// batch every few milliseconds. With room for 4 batches the engine stood
/// waiting through each burst; with 32 (128k rows, at most a few tens of MB
/// of records) it runs on, and `bench-1v1` with its tables takes 0.88 of
/// the time for 8 MB more peak memory (docs/performance.md, session 12).
/// More room did not help: 128 batches measured the same as 32.
const HANDOFF_BATCHES: usize = 32;

enum Handoff {
    Tickets(Vec<TicketRecord>),
    Matches(Vec<MatchRecord>),
}

/// Runs another sink on its own thread: the engine only clones rows into a
/// batch and hands it over, while encoding and writing (the Parquet tables)
/// go on beside the simulation. Rows reach the inner sink in the order they
/// came, so its output is the same as when it runs inline; the channel holds
/// `HANDOFF_BATCHES` batches at most, so memory stays bounded if the writer
/// falls behind.
pub struct BackgroundRows<'scope> {
    tickets: Vec<TicketRecord>,
    matches: Vec<MatchRecord>,
    send: Option<std::sync::mpsc::SyncSender<Handoff>>,
    worker: Option<std::thread::ScopedJoinHandle<'scope, anyhow::Result<()>>>,
}

impl<'scope> BackgroundRows<'scope> {
    /// A sink that hands rows to `inner` on a thread of `scope`, in batches, so writing overlaps the simulation.
    pub fn spawn<'env>(
        scope: &'scope std::thread::Scope<'scope, 'env>,
        inner: &'scope mut (dyn RowSink + Send),
    ) -> Self {
        let (send, recv) = std::sync::mpsc::sync_channel::<Handoff>(HANDOFF_BATCHES);
        let worker = scope.spawn(move || {
            for batch in recv {
                match batch {
                    Handoff::Tickets(rows) => rows.into_iter().for_each(|t| inner.ticket(t)),
                    Handoff::Matches(rows) => rows.into_iter().for_each(|m| inner.match_row(m)),
                }
            }
            inner.finish()
        });
        BackgroundRows {
            tickets: Vec::with_capacity(HANDOFF_ROWS),
            matches: Vec::with_capacity(HANDOFF_ROWS),
            send: Some(send),
            worker: Some(worker),
        }
    }

    /// Hands a batch over. Once the writer has stopped, rows are dropped: its
    /// error comes out of `finish`.
    fn hand(&mut self, batch: Handoff) {
        if self.send.as_ref().is_some_and(|s| s.send(batch).is_err()) {
            self.send = None;
        }
    }
}

/// Adds a row to a batch; the batch, once full, to be handed over.
fn fill<R>(batch: &mut Vec<R>, row: R) -> Option<Vec<R>> {
    batch.push(row);
    (batch.len() >= HANDOFF_ROWS)
        .then(|| std::mem::replace(batch, Vec::with_capacity(HANDOFF_ROWS)))
}

impl RowSink for BackgroundRows<'_> {
    fn ticket(&mut self, t: TicketRecord) {
        if let Some(full) = fill(&mut self.tickets, t) {
            self.hand(Handoff::Tickets(full));
        }
    }
    fn match_row(&mut self, m: MatchRecord) {
        if let Some(full) = fill(&mut self.matches, m) {
            self.hand(Handoff::Matches(full));
        }
    }
    fn finish(&mut self) -> anyhow::Result<()> {
        let tickets = std::mem::take(&mut self.tickets);
        let matches = std::mem::take(&mut self.matches);
        self.hand(Handoff::Tickets(tickets));
        self.hand(Handoff::Matches(matches));
        // Closing the channel ends the worker's loop.
        self.send = None;
        match self.worker.take() {
            Some(w) => w
                .join()
                .unwrap_or_else(|_| Err(anyhow::anyhow!("the table writer panicked"))),
            None => Ok(()),
        }
    }
}
