//! The rebalance itself: group the players into parties, form teams with
//! the chosen method (AccelByte's through `teams::accelbyte`, or mmsim's
//! `balanced` and `abba`), then measure the teams the way the AccelByte page
//! does, so every method is judged by the same numbers.

use super::input::{InputError, InputPlayer, RebalanceInput};
use super::render::number;
use super::RebalanceMethod;
use crate::teams::abba::{abba_split, AbbaOptions, AbbaParams, AbbaPlayer};
use crate::teams::accelbyte::{self, AbParty, Alliance, Candidate, Method};
use crate::teams::balanced::{balanced_split, BalancedParams};
use crate::teams::AccelByteMode;
use rand::SeedableRng;
use rand_pcg::Pcg64;
use serde::Serialize;
use serde_json::{Map, Value};

/// One party in the result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PartyReport {
    pub party: String,
    pub members: Vec<String>,
}

/// One team in the result. Maps keep the attribute order of the input.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TeamReport {
    /// 1-based, as the AccelByte page numbers teams.
    pub team: usize,
    pub players: usize,
    pub parties: Vec<PartyReport>,
    pub totals: Map<String, Value>,
    pub means: Map<String, Value>,
}

/// One composition a method considered (permutation and combination list
/// them like the page's tables when there are few).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CandidateReport {
    pub result: usize,
    /// Parties in the order tried, each shown by its members ("Player D, Player E").
    pub sequence: Vec<String>,
    /// Parties per team, shown the same way.
    pub teams: Vec<Vec<String>>,
    pub member_count_diff: usize,
    pub distance: f64,
    pub chosen: bool,
}

/// What `mmsim rebalance` prints (as JSON with `--json`, else `to_text`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RebalanceResult {
    /// The method that ran: permutation, combination, greedy, balanced, abba.
    pub method: String,
    /// Why that method (for `accelbyte`, the ruleset rule that chose it).
    pub reason: String,
    pub attributes: Vec<String>,
    pub teams: Vec<TeamReport>,
    /// Largest team minus smallest, in players.
    pub member_count_diff: usize,
    /// Sum over attributes of the highest minus the lowest team mean.
    pub distance: f64,
    pub distance_by_attribute: Map<String, Value>,
    /// Every composition considered, when there are at most
    /// [`MAX_LISTED_CANDIDATES`].
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<CandidateReport>,
}

/// Candidate tables longer than this are left out of the result.
pub const MAX_LISTED_CANDIDATES: usize = 40;

/// Runs `method` on the input. `seed` drives the random tie-breaks of
/// `balanced` and `abba`; the AccelByte methods use none.
pub fn rebalance(
    input: &RebalanceInput,
    method: RebalanceMethod,
    seed: u64,
) -> Result<RebalanceResult, InputError> {
    let parties = Parties::of(input);
    let shape = describe_shape(&input.alliance);
    let formed = match method {
        RebalanceMethod::AccelByte(mode) => form_accelbyte(input, &parties, mode, &shape)?,
        RebalanceMethod::Balanced => form_balanced(input, &parties, seed, &shape)?,
        RebalanceMethod::Abba => form_abba(input, &parties, seed, &shape)?,
    };
    Ok(measure(
        input,
        &parties,
        method == RebalanceMethod::Abba,
        formed,
    ))
}

/// The input's parties in order of first appearance: the AccelByte tables
/// enumerate in that order.
struct Parties {
    labels: Vec<String>,
    /// Player indices of each party.
    members: Vec<Vec<usize>>,
    /// Each party as the AccelByte methods see it.
    ab: Vec<AbParty>,
}

impl Parties {
    fn of(input: &RebalanceInput) -> Self {
        let mut labels: Vec<String> = Vec::new();
        let mut members: Vec<Vec<usize>> = Vec::new();
        for (i, p) in input.players.iter().enumerate() {
            match labels.iter().position(|l| *l == p.party) {
                Some(k) => members[k].push(i),
                None => {
                    labels.push(p.party.clone());
                    members.push(vec![i]);
                }
            }
        }
        let ab = members
            .iter()
            .map(|m| AbParty {
                size: m.len(),
                totals: (0..input.attributes.len())
                    .map(|a| m.iter().map(|&i| input.players[i].values[a]).sum())
                    .collect(),
                team: input.players[m[0]].team,
            })
            .collect();
        Parties {
            labels,
            members,
            ab,
        }
    }

    /// Each party shown by its members ("Player D, Player E"), as the page's
    /// candidate tables show them.
    fn shown(&self, input: &RebalanceInput) -> Vec<String> {
        self.members
            .iter()
            .map(|m| {
                m.iter()
                    .map(|&i| input.players[i].name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .collect()
    }

    fn backfill(&self) -> bool {
        self.ab.iter().any(|p| p.team.is_some())
    }
}

/// The team shape in words, for reasons and errors.
fn describe_shape(alliance: &Alliance) -> String {
    if alliance.is_strict() {
        format!(
            "strict teams: {} of {}",
            alliance.max_number, alliance.player_max_number
        )
    } else {
        format!(
            "loose teams: {} to {} teams of {} to {}",
            alliance.min_number,
            alliance.max_number,
            alliance.player_min_number,
            alliance.player_max_number
        )
    }
}

/// Methods that fill fixed-size teams need a strict shape and exactly the
/// players it holds.
fn need_strict(input: &RebalanceInput, method: &str) -> Result<(), InputError> {
    let alliance = input.alliance;
    if !alliance.is_strict() {
        return Err(InputError::new(
            "alliance",
            format!("`{method}` needs strict teams (min_number = max_number and player_min_number = player_max_number)"),
        ));
    }
    let total = input.players.len();
    if total != alliance.players() {
        return Err(InputError::new(
            "players",
            format!(
                "{} teams of {} need {} players, got {total}",
                alliance.max_number,
                alliance.player_max_number,
                alliance.players()
            ),
        ));
    }
    Ok(())
}

/// mmsim's own formers start matches; they know nothing of a session.
fn no_session(input: &RebalanceInput, method: &str) -> Result<(), InputError> {
    match input.players.iter().position(|p| p.team.is_some()) {
        Some(i) => Err(InputError::new(
            format!("players[{i}].team"),
            format!("`{method}` forms new matches only; backfill (players with `team`) needs an AccelByte method"),
        )),
        None => Ok(()),
    }
}

/// Teams a method formed (party indices per team), before measuring.
struct Formed {
    /// The method that ran.
    method: &'static str,
    reason: String,
    teams: Vec<Vec<usize>>,
    candidates: Vec<CandidateReport>,
}

fn form_accelbyte(
    input: &RebalanceInput,
    parties: &Parties,
    mode: AccelByteMode,
    shape: &str,
) -> Result<Formed, InputError> {
    let alliance = input.alliance;
    let backfill = parties.backfill();
    let method = mode.resolve(&alliance, backfill);
    let reason = if mode == AccelByteMode::Auto {
        let why = match method {
            Method::Permutation if backfill => "a backfill".to_string(),
            Method::Permutation => "a loose team configuration".to_string(),
            Method::Combination => format!("{} players, fewer than 12", alliance.players()),
            Method::Greedy => format!("{} players, 12 or more", alliance.players()),
        };
        format!("chosen by the ruleset: {shape}, {why}")
    } else {
        format!("asked for; {shape}")
    };
    check_accelbyte_size(input, parties, method)?;

    let shown = parties.shown(input);
    let mut candidates = Vec::new();
    let chosen = accelbyte::run_visiting(&parties.ab, &alliance, method, &mut |c| {
        // One past the limit, so that a longer table is known to be too long.
        if candidates.len() <= MAX_LISTED_CANDIDATES {
            candidates.push(candidate_report(candidates.len() + 1, c, &shown));
        }
    })
    .ok_or_else(|| {
        InputError::new(
            "players",
            format!(
                "{}: no composition places every party ({shape})",
                method.name()
            ),
        )
    })?;
    if candidates.len() > MAX_LISTED_CANDIDATES {
        candidates.clear();
    } else if let Some(k) = chosen.candidate {
        candidates[k - 1].chosen = true;
    }
    Ok(Formed {
        method: method.name(),
        reason,
        teams: chosen.teams,
        candidates,
    })
}

/// Combination and permutation try every split or order; refuse inputs
/// that would take too long, naming the method that fits.
fn check_accelbyte_size(
    input: &RebalanceInput,
    parties: &Parties,
    method: Method,
) -> Result<(), InputError> {
    match method {
        Method::Greedy => need_strict(input, "greedy"),
        Method::Combination => {
            need_strict(input, "combination")?;
            if input.alliance.players() > accelbyte::COMBINATION_MAX_PLAYERS {
                return Err(InputError::new(
                    "players",
                    format!("combination is for fewer than 12 players (it tries every split), got {}; use greedy", input.players.len()),
                ));
            }
            Ok(())
        }
        Method::Permutation => {
            let movable = parties.ab.iter().filter(|p| p.team.is_none()).count();
            if movable > accelbyte::PERMUTATION_MAX_PARTIES {
                return Err(InputError::new(
                    "players",
                    format!(
                        "permutation tries every order of the parties; {movable} parties is more than the {} allowed",
                        accelbyte::PERMUTATION_MAX_PARTIES
                    ),
                ));
            }
            Ok(())
        }
    }
}

/// Row `result` (1-based) of the candidate table.
fn candidate_report(result: usize, c: &Candidate<'_>, shown: &[String]) -> CandidateReport {
    CandidateReport {
        result,
        sequence: c.sequence.iter().map(|&k| shown[k].clone()).collect(),
        teams: c
            .teams
            .iter()
            .map(|t| t.iter().map(|&k| shown[k].clone()).collect())
            .collect(),
        member_count_diff: c.score.member_diff,
        distance: c.score.distance,
        chosen: false,
    }
}

/// `balanced` splits on the first attribute only (its rating).
fn form_balanced(
    input: &RebalanceInput,
    parties: &Parties,
    seed: u64,
    shape: &str,
) -> Result<Formed, InputError> {
    need_strict(input, "balanced")?;
    no_session(input, "balanced")?;
    let strengths: Vec<f64> = parties
        .ab
        .iter()
        .map(|p| p.totals.first().copied().unwrap_or(0.0))
        .collect();
    let sizes: Vec<usize> = parties.ab.iter().map(|p| p.size).collect();
    let mut rng = Pcg64::seed_from_u64(seed);
    let teams = balanced_split(
        &sizes,
        &strengths,
        input.alliance.max_number,
        input.alliance.player_max_number,
        BalancedParams::default().max_swaps,
        &mut rng,
    )
    .ok_or_else(|| {
        InputError::new(
            "players",
            format!("the parties cannot fill {shape} exactly"),
        )
    })?;
    let on = input
        .attributes
        .first()
        .map_or("nothing (no attributes)".to_string(), |a| a.clone());
    Ok(Formed {
        method: "balanced",
        reason: format!("asked for; {shape}; balances {on}"),
        teams,
        candidates: Vec::new(),
    })
}

/// `abba` splits players (platoons kept together) into exactly two teams
/// by tier, category and win rate.
fn form_abba(
    input: &RebalanceInput,
    parties: &Parties,
    seed: u64,
    shape: &str,
) -> Result<Formed, InputError> {
    need_strict(input, "abba")?;
    no_session(input, "abba")?;
    if input.alliance.max_number != 2 {
        return Err(InputError::new(
            "teams",
            format!(
                "abba splits into exactly 2 teams, got {}",
                input.alliance.max_number
            ),
        ));
    }
    let (players, party_of) = abba_players(input, parties)?;
    let options = AbbaOptions {
        team_size: input.alliance.player_max_number,
        category_margin: AbbaParams::default().category_margin as usize,
        smoothing: AbbaParams::default().smoothing,
        threshold: AbbaParams::default().smoothing_threshold_pp / 100.0,
    };
    let out = abba_split(&players, &options, &mut Pcg64::seed_from_u64(seed)).ok_or_else(|| {
        InputError::new(
            "players",
            format!("the platoons cannot fill {shape} exactly"),
        )
    })?;
    // Back from players to parties, in the order abba placed them.
    let mut teams = vec![Vec::new(), Vec::new()];
    for (s, team) in out.teams.iter().enumerate() {
        for &i in team {
            if !teams[s].contains(&party_of[i]) {
                teams[s].push(party_of[i]);
            }
        }
    }
    let reason = format!(
        "asked for; {shape}; win-rate gap {:.2} points before smoothing, {:.2} after ({} swaps)",
        100.0 * out.win_rate_gap_before.abs(),
        100.0 * out.win_rate_gap_after.abs(),
        out.smoothing_swaps
    );
    Ok(Formed {
        method: "abba",
        reason,
        teams,
        candidates: Vec::new(),
    })
}

/// Players in party order as abba sees them (a party of two or more is a
/// platoon), with the party of each.
fn abba_players(
    input: &RebalanceInput,
    parties: &Parties,
) -> Result<(Vec<AbbaPlayer>, Vec<usize>), InputError> {
    let mut players = Vec::new();
    let mut party_of = Vec::new();
    for (k, m) in parties.members.iter().enumerate() {
        for &i in m {
            let p = &input.players[i];
            let need = |key: &str| {
                InputError::new(
                    format!("players[{i}].{key}"),
                    "missing; abba needs tier and win_rate for every player",
                )
            };
            players.push(AbbaPlayer {
                tier: p.tier.ok_or_else(|| need("tier"))?,
                category: p.category,
                win_rate: p.win_rate.ok_or_else(|| need("win_rate"))?,
                platoon: (m.len() >= 2).then_some(k),
            });
            party_of.push(k);
        }
    }
    Ok((players, party_of))
}

/// Scores the formed teams the AccelByte way, in total and per attribute,
/// and reports each team's totals and means.
fn measure(
    input: &RebalanceInput,
    parties: &Parties,
    abba: bool,
    formed: Formed,
) -> RebalanceResult {
    let score = accelbyte::score(&parties.ab, &formed.teams);
    // Team statistics: the balanced attributes, plus tier and win rate
    // when abba split on them.
    let mut stats = input.attributes.clone();
    if abba {
        stats.extend(["tier".to_string(), "win_rate".to_string()]);
    }
    let teams = formed
        .teams
        .iter()
        .enumerate()
        .map(|(t, team)| team_report(input, parties, &stats, t, team))
        .collect();
    RebalanceResult {
        method: formed.method.to_string(),
        reason: formed.reason,
        attributes: input.attributes.clone(),
        member_count_diff: score.member_diff,
        distance: score.distance,
        distance_by_attribute: distance_by_attribute(input, parties, &formed.teams),
        teams,
        candidates: formed.candidates,
    }
}

/// The AccelByte distance of each attribute alone.
fn distance_by_attribute(
    input: &RebalanceInput,
    parties: &Parties,
    teams: &[Vec<usize>],
) -> Map<String, Value> {
    let mut out = Map::new();
    for (a, attr) in input.attributes.iter().enumerate() {
        let one: Vec<AbParty> = parties
            .ab
            .iter()
            .map(|p| AbParty {
                totals: vec![p.totals[a]],
                ..p.clone()
            })
            .collect();
        out.insert(attr.clone(), number(accelbyte::score(&one, teams).distance));
    }
    out
}

/// Team `t` (0-based) of party indices `team`, with totals and means of
/// `stats`: the balanced attributes, then `tier` and `win_rate` if listed.
fn team_report(
    input: &RebalanceInput,
    parties: &Parties,
    stats: &[String],
    t: usize,
    team: &[usize],
) -> TeamReport {
    let attrs = input.attributes.len();
    let stat = |p: &InputPlayer, k: usize| -> f64 {
        match k.checked_sub(attrs) {
            None => p.values[k],
            Some(0) => p.tier.unwrap_or(0) as f64,
            Some(_) => p.win_rate.unwrap_or(0.0),
        }
    };
    let ids: Vec<usize> = team
        .iter()
        .flat_map(|&k| parties.members[k].iter().copied())
        .collect();
    let mut totals = Map::new();
    let mut means = Map::new();
    for (k, name) in stats.iter().enumerate() {
        let sum: f64 = ids.iter().map(|&i| stat(&input.players[i], k)).sum();
        totals.insert(name.clone(), number(sum));
        if !ids.is_empty() {
            means.insert(name.clone(), number(sum / ids.len() as f64));
        }
    }
    TeamReport {
        team: t + 1,
        players: ids.len(),
        parties: team
            .iter()
            .map(|&k| PartyReport {
                party: parties.labels[k].clone(),
                members: parties.members[k]
                    .iter()
                    .map(|&i| input.players[i].name.clone())
                    .collect(),
            })
            .collect(),
        totals,
        means,
    }
}
