//! The post's seven criteria, scored for one candidate split, and the
//! bounds a split's criteria cannot beat.

use super::*;
use crate::policy::PoolView;
use crate::pool::WaitingTicket;
use crate::teams::dota;
use smallvec::SmallVec;

/// The per-criterion scores of one candidate, in [0, 1].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Criteria {
    /// How close the teams' win chances are to 50%.
    pub balance: f64,
    /// How close the players' skills are.
    pub skill: f64,
    /// How close the players' experience (games played) is.
    pub experience: f64,
    /// How evenly the teams' best players match.
    pub top_player: f64,
    /// How evenly parties face parties.
    pub parties: f64,
    /// Whether each team shares a language.
    pub team_language: f64,
    /// Whether the whole match shares a language.
    pub match_language: f64,
    /// How long the seed has waited.
    pub wait: f64,
}

impl Criteria {
    /// Weighted average of the criteria.
    pub fn score(&self, w: &QualityWeights) -> f64 {
        let pairs = [
            (self.balance, w.balance),
            (self.skill, w.skill),
            (self.experience, w.experience),
            (self.top_player, w.top_player),
            (self.parties, w.parties),
            (self.team_language, w.team_language),
            (self.match_language, w.match_language),
            (self.wait, w.wait),
        ];
        let total: f64 = pairs.iter().map(|p| p.1).sum();
        pairs.iter().map(|(s, w)| s * w).sum::<f64>() / total
    }
}

/// What the criteria need to know about one party of a candidate.
#[derive(Clone, Debug, PartialEq)]
pub struct PartyFacts {
    /// The party as one ticket (size, mean MMR, ...).
    pub aggregate: dota::PartyAggregate,
    /// Highest party-adjusted MMR among the members.
    pub top_adjusted: f64,
    /// Languages every member speaks (bit set).
    pub languages: u32,
    /// Seconds the party has waited.
    pub wait_s: f64,
}

/// Scores a candidate: `parties` and, per team, indices into `parties`.
pub fn criteria<T: AsRef<[usize]>>(
    p: &QualityParams,
    parties: &[PartyFacts],
    split: &[T],
    team_size: usize,
) -> Criteria {
    let clamp01 = |x: f64| x.clamp(0.0, 1.0);
    let team_means: SmallVec<[f64; 4]> = split
        .iter()
        .map(|team| {
            let (sum, n) = team.as_ref().iter().fold((0.0, 0usize), |(s, n), &i| {
                let a = &parties[i].aggregate;
                (s + a.adjusted_skill * a.size as f64, n + a.size)
            });
            sum / n.max(1) as f64
        })
        .collect();
    let gap = spread(team_means.iter().copied());
    let p_win = 1.0 / (1.0 + 10f64.powf(-gap / 400.0));
    let skill = spread(parties.iter().map(|f| f.aggregate.skill));
    let exp = spread(parties.iter().map(|f| f.aggregate.experience));
    let top = spread(split.iter().map(|team| {
        team.as_ref()
            .iter()
            .map(|&i| parties[i].top_adjusted)
            .fold(f64::NEG_INFINITY, f64::max)
    }));
    let team_common = split
        .iter()
        .filter(|team| {
            team.as_ref()
                .iter()
                .fold(u32::MAX, |m, &i| m & parties[i].languages)
                != 0
        })
        .count() as f64
        / split.len().max(1) as f64;
    let match_common = parties.iter().fold(u32::MAX, |m, f| m & f.languages) != 0;
    let mean_wait = parties.iter().map(|f| f.wait_s).sum::<f64>() / parties.len().max(1) as f64;
    Criteria {
        balance: clamp01(1.0 - (p_win - 0.5).abs() / p.balance_tolerance),
        skill: clamp01(1.0 - skill / p.skill_range),
        experience: clamp01(1.0 - exp / p.experience_range),
        top_player: clamp01(1.0 - top / p.top_range),
        parties: dota::party_parity(split, team_size),
        team_language: team_common,
        match_language: if match_common { 1.0 } else { 0.0 },
        wait: clamp01(mean_wait / p.wait_scale.secs()),
    }
}

/// `spread` kept as it goes, for a walk that gathers several at once:
/// the same folds, so the same bits.
pub(super) struct Spread {
    lo: f64,
    hi: f64,
}

impl Spread {
    pub(super) fn of(v: f64) -> Self {
        let mut s = Spread {
            lo: f64::INFINITY,
            hi: f64::NEG_INFINITY,
        };
        s.add(v);
        s
    }
    pub(super) fn add(&mut self, v: f64) {
        (self.lo, self.hi) = (self.lo.min(v), self.hi.max(v));
    }
    pub(super) fn get(&self) -> f64 {
        if self.hi >= self.lo {
            self.hi - self.lo
        } else {
            0.0
        }
    }
}

pub(super) fn spread(values: impl Iterator<Item = f64>) -> f64 {
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if hi >= lo {
        hi - lo
    } else {
        0.0
    }
}

/// A ticket's party facts at `view.now`.
pub(crate) fn party_facts(params: &QualityParams, view: &PoolView<'_>, t: &WaitingTicket) -> PartyFacts {
    let members: Vec<_> = t.players.iter().map(|p| &view.players[p.index()]).collect();
    let aggregate = dota::aggregate(&members, &params.party_adjust);
    let mmrs: Vec<f64> = members
        .iter()
        .map(|m| dota::member_mmr(m, members.len()))
        .collect();
    let top_adjusted = dota::adjusted_mmrs(&mmrs, &params.party_adjust)
        .into_iter()
        .fold(f64::NEG_INFINITY, f64::max);
    PartyFacts {
        aggregate,
        top_adjusted,
        languages: members.iter().fold(u32::MAX, |m, p| m & p.languages),
        wait_s: t.age_s(view.now),
    }
}

/// The best top-player criterion any split of parties whose best members'
/// adjusted MMRs are `tops` can score: the teams' best players are distinct
/// parties' tops, the highest is among them, and the weakest team's best is
/// at most the `teams`-th highest top, so the gap is at least their
/// difference (computed as `criteria` computes it, so the bound holds to
/// the last bit).
pub(super) fn top_player_bound(p: &QualityParams, tops: &[f64], teams: usize) -> f64 {
    if teams < 2 || tops.len() < teams {
        return 1.0;
    }
    if teams == 2 {
        // The two highest, as the sort below would rank them, without
        // sorting: a new fill asks this of every two-team candidate.
        let (mut first, mut second) = match tops[0].total_cmp(&tops[1]) {
            std::cmp::Ordering::Less => (tops[1], tops[0]),
            _ => (tops[0], tops[1]),
        };
        for &t in &tops[2..] {
            if t.total_cmp(&first).is_gt() {
                (first, second) = (t, first);
            } else if t.total_cmp(&second).is_gt() {
                second = t;
            }
        }
        return (1.0 - (first - second) / p.top_range).clamp(0.0, 1.0);
    }
    top_player_bound_sorted(p, tops, teams)
}

/// `top_player_bound` by sorting every top: its plain form, for more than
/// two teams and as the reference its test holds the two-team path to.
pub(super) fn top_player_bound_sorted(p: &QualityParams, tops: &[f64], teams: usize) -> f64 {
    if teams < 2 || tops.len() < teams {
        return 1.0;
    }
    let mut sorted: Inline<f64> = tops.iter().copied().collect();
    sorted.sort_unstable_by(|a, b| b.total_cmp(a));
    let gap = sorted[0] - sorted[teams - 1];
    (1.0 - gap / p.top_range).clamp(0.0, 1.0)
}

/// The best party-parity criterion any split of `parties` parties, the
/// largest of `largest` players, into `teams` teams of `team_size` can
/// score: counts differ by one when the parties do not divide evenly, and
/// the largest party's team holds at most `1 + team_size - largest`
/// parties while the fullest of the others holds at least its share of the
/// rest.
pub(super) fn parties_bound(parties: usize, largest: usize, teams: usize, team_size: usize) -> f64 {
    if team_size < 2 || teams < 2 {
        return 1.0;
    }
    let uneven = usize::from(!parties.is_multiple_of(teams));
    let with_largest = 1 + team_size.saturating_sub(largest);
    let others = parties.saturating_sub(with_largest).div_ceil(teams - 1);
    let gap = uneven.max(others.saturating_sub(with_largest));
    (1.0 - gap as f64 / (team_size - 1) as f64).clamp(0.0, 1.0)
}

/// The best team-language criterion any split of the parties, given as
/// (languages, size), into `teams` teams of `team_size` players can
/// score. A team shares a language only if all its players speak one,
/// and teams that share the same language hold distinct players, so at
/// most `players speaking it / team_size` teams share any one language;
/// summed over languages, that caps the teams that can share one. When
/// the whole match shares a language every team does, so the bound is 1.
/// Computed as `criteria` computes the criterion (a count over the
/// teams), so it holds to the last bit. In a mixed-language pool this
/// bound is what keeps fills from being split for nothing: with the
/// split criteria at 1 (balance and team language are 5 of the 11.5
/// default weights), most fills would clear the threshold's bound.
pub(super) fn team_language_bound(
    parties: impl Iterator<Item = (u32, usize)> + Clone,
    match_common: bool,
    teams: usize,
    team_size: usize,
) -> f64 {
    if match_common || teams == 0 || team_size == 0 {
        return 1.0;
    }
    let spoken = parties.clone().fold(0u32, |m, (l, _)| m | l);
    let mut shared = 0usize;
    let mut left = spoken;
    while left != 0 && shared < teams {
        let bit = left & left.wrapping_neg();
        left &= !bit;
        let players: usize = parties.clone().filter(|&(l, _)| l & bit != 0).map(|(_, s)| s).sum();
        shared += players / team_size;
    }
    shared.min(teams) as f64 / teams as f64
}
