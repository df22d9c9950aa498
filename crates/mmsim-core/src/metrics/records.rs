//! Plain records of what happened in a run: one per ticket, one per match,
//! one per queue sample. Every metric and every table is computed from these,
//! so the summary and the tables can never disagree.

use crate::model::{MatchId, PerTeam, PlayerId, SimTime, TicketId};
use serde::{Deserialize, Serialize};

/// How a ticket's stay in the queue ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TicketEnd {
    /// Matched into this match.
    Matched(MatchId),
    /// Gave up waiting.
    Abandoned,
    /// Left after one of its players declined a ready check (`[acceptance]`).
    Declined,
    /// Still in the queue when the run ended (censored).
    Waiting,
}

impl TicketEnd {
    /// The end as the tables' `outcome` column writes it.
    pub fn label(self) -> &'static str {
        match self {
            TicketEnd::Matched(_) => "matched",
            TicketEnd::Abandoned => "abandoned",
            TicketEnd::Declined => "declined",
            TicketEnd::Waiting => "waiting",
        }
    }
}

/// One ticket's stay in the queue: a row of `tickets.parquet`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TicketRecord {
    /// The ticket's id.
    pub ticket: TicketId,
    /// The party's first member; solo tickets have only this one.
    pub lead: PlayerId,
    /// Players in the party.
    pub party_size: u32,
    /// When it joined the queue.
    pub enqueued: SimTime,
    /// When the ticket left the queue, or the run's end if it never did.
    pub left: SimTime,
    /// How its stay ended.
    pub end: TicketEnd,
    /// Matchmaking rating of the party when it joined.
    pub rating: f64,
    /// Mean true skill of the party's members.
    pub true_skill: f64,
    /// Whether this stay followed a match (a return to the queue), not a fresh arrival.
    pub requeue: bool,
    /// Whether the ticket joined during warm-up; metrics leave these out.
    pub in_warmup: bool,
    /// Roles of the members, with a role queue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roles: Option<super::TicketRoles>,
    /// The lead player's home region (index in `[regions]`), with regions on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<u16>,
    /// The party's worst ping to the data centre that hosted its match, in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_ping_ms: Option<u16>,
    /// The mode that matched it, or that it drew, with `[modes]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<super::modes::TicketMode>,
}

impl TicketRecord {
    /// Seconds it waited (to the run's end if it never left).
    pub fn wait_s(&self) -> f64 {
        self.left.since(self.enqueued).as_secs_f64()
    }
}

/// One match: a row of `matches.parquet`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatchRecord {
    /// The match's id.
    pub id: MatchId,
    /// When it formed.
    pub formed: SimTime,
    /// When the match ended; `None` if the run ended first.
    pub ended: Option<SimTime>,
    /// Teams in the match.
    pub teams: u32,
    /// Players per team.
    pub team_size: u32,
    /// Mean matchmaking rating of each team when the match formed.
    pub team_rating: PerTeam<f64>,
    /// Mean true skill of each team.
    pub team_skill: PerTeam<f64>,
    /// Highest true skill on each team (top-player parity).
    pub team_top_skill: PerTeam<f64>,
    /// Number of parties on each team.
    pub team_parties: PerTeam<u32>,
    /// Mean win rate of each team's players, in percent, when the match formed.
    pub team_win_rate_pct: PerTeam<f64>,
    /// Highest minus lowest rating of any player in the match.
    pub spread_rating: f64,
    /// Highest minus lowest true skill of any player in the match.
    pub spread_skill: f64,
    /// True probability that team 0 wins, from the outcome model; `None`
    /// while the match is still in the lobby (not yet played).
    pub p_team0: Option<f64>,
    /// The rating system's prediction that team 0 wins.
    pub p_team0_predicted: f64,
    /// Winning team, once the match has ended.
    pub winner: Option<u32>,
    /// How long the match lasts; `None` while it is still in the lobby.
    pub duration_s: Option<f64>,
    /// Players left alive on the winning team, for models that fight battles.
    pub survivors: Option<u32>,
    /// The Dota balance measure: integral of |gold difference| since it last crossed zero, in gold-minutes.
    pub gold_integral: Option<f64>,
    /// Whether two players on opposite teams played their previous match in the same match (as teammates or opponents).
    pub rematch: bool,
    /// Whether the match formed during warm-up; left out of every figure.
    pub in_warmup: bool,
    /// The data centre that hosted the match (index in `[regions]`), with regions on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_dc: Option<u16>,
    /// The mode it was formed in (index in `[[modes.queues]]`), with `[modes]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<u8>,
}

impl MatchRecord {
    /// |P(team 0 wins) - 0.5| on true skill: how far from a coin flip the match was.
    pub fn win_prob_gap(&self) -> Option<f64> {
        self.p_team0.map(|p| (p - 0.5).abs())
    }
    /// Whether the team the truth favoured lost.
    pub fn upset(&self) -> Option<bool> {
        let w = self.winner?;
        let p = self.p_team0?;
        if (p - 0.5).abs() < 1e-12 {
            return None;
        }
        let favourite = if p > 0.5 { 0 } else { 1 };
        Some(w != favourite)
    }
    /// For a finished two-team match with a favourite by rating: the gap in
    /// mean rating, whether the higher-rated side lost, and the rating
    /// system's predicted chance that it would.
    pub fn rating_upset(&self) -> Option<(f64, bool, f64)> {
        let w = self.winner?;
        let [r0, r1] = self.team_rating[..] else {
            return None;
        };
        if self.teams != 2 || r0 == r1 {
            return None;
        }
        let fav = if r0 > r1 { 0 } else { 1 };
        let p_fav = if fav == 0 {
            self.p_team0_predicted
        } else {
            1.0 - self.p_team0_predicted
        };
        Some(((r0 - r1).abs(), w != fav, 1.0 - p_fav))
    }
    /// For a finished two-team match with a favourite by true skill: the gap
    /// in mean true skill, whether the favoured side lost, and the outcome
    /// model's chance that it would.
    pub fn skill_upset(&self) -> Option<(f64, bool, f64)> {
        let upset = self.upset()?;
        let [s0, s1] = self.team_skill[..] else {
            return None;
        };
        if self.teams != 2 {
            return None;
        }
        let gap = self.win_prob_gap()?;
        Some(((s0 - s1).abs(), upset, 0.5 - gap))
    }
    /// Largest minus smallest team mean rating.
    pub fn team_rating_gap(&self) -> f64 {
        range(&self.team_rating)
    }
}

pub(crate) fn range(v: &[f64]) -> f64 {
    let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    if v.is_empty() {
        0.0
    } else {
        max - min
    }
}

/// The state of the queue at one moment.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QueueSample {
    /// When the sample was taken.
    pub t: SimTime,
    /// Tickets waiting.
    pub waiting_tickets: u32,
    /// Players waiting (every member of every waiting ticket).
    pub waiting_players: u32,
    /// Players in running matches.
    pub players_in_matches: u32,
    /// Matches formed since the previous sample.
    pub matches_formed: u32,
    /// Spearman correlation between rating and true skill over players who have played.
    pub rating_skill_rank_corr: Option<f64>,
}

impl QueueSample {
    /// Players online in the matchmaker: waiting, or in a match.
    pub fn concurrent_players(&self) -> u32 {
        self.waiting_players + self.players_in_matches
    }
}

/// How ratings moved, by the number of games a player had played: where a
/// calibration period shows (large moves for the first games, then small).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RatingMoves {
    /// Sum of |rating after - rating before| over updates at this game number.
    pub sum_abs_change: f64,
    /// Updates at this game number.
    pub updates: u64,
}

/// Everything a run leaves behind, before anything is written.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunRecords {
    /// Every ticket, in the order it left.
    pub tickets: Vec<TicketRecord>,
    /// Every match, in the order it formed.
    pub matches: Vec<MatchRecord>,
    /// The queue samples, in time order.
    pub queue: Vec<QueueSample>,
    /// Entry k: rating updates of players playing their (k+1)-th game (solo or party rating).
    pub rating_moves: Vec<RatingMoves>,
}
