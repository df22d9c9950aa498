//! The core of `mmsim rebalance FILE --method M`: a designer pastes a list of
//! players (party, attributes such as MMR), and optionally an AccelByte
//! ruleset's `alliance` and `matching_rule` blocks, and sees the teams a
//! method forms and their distances, without writing a scenario.
//!
//! Input (JSON): either a bare array of players, or an object:
//!
//! ```json
//! {
//!   "alliance": {"min_number": 2, "max_number": 2,
//!                "player_min_number": 3, "player_max_number": 3},
//!   "matching_rule": [{"attribute": "mmr", "criteria": "distance"}],
//!   "players": [
//!     {"name": "Player A", "party": "Party 1", "mmr": 70},
//!     {"name": "Player B", "party": "Party 2", "mmr": 60, "team": 1}
//!   ]
//! }
//! ```
//!
//! Top-level keys: `players` (required), `teams` and `team_size` (strict
//! teams; default 2 teams sharing the players equally), or `alliance`
//! (AccelByte's team-count and team-size ranges), `attributes` (names to
//! balance), `matching_rule` (AccelByte's; its `attribute` names are
//! balanced when `attributes` is absent), `auto_backfill`, `name`,
//! `description` (accepted for pasting, not used). Player keys: `name` or
//! `id` (string or number), `party` (string or number; absent = solo),
//! `team` (1-based: already in the session on that team, a backfill),
//! `tier`, `category` and `win_rate` (for `abba`), `attributes` (an object
//! of numbers), and any other numeric key is an attribute too. Without
//! `attributes` or `matching_rule`, every attribute found is balanced.

use super::abba::{abba_split, AbbaOptions, AbbaParams, AbbaPlayer};
use super::accelbyte::{self, AbParty, Alliance, Candidate, Method};
use super::balanced::{balanced_split, BalancedParams};
use crate::model::Category;
use rand::SeedableRng;
use rand_pcg::Pcg64;
use serde::Serialize;
use serde_json::{Map, Value};
use std::fmt;
use std::str::FromStr;

/// Methods `mmsim rebalance` offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RebalanceMethod {
    /// AccelByte, method chosen by the ruleset as the page describes.
    Accelbyte,
    Permutation,
    Combination,
    Greedy,
    Balanced,
    Abba,
}

impl RebalanceMethod {
    pub const NAMES: [&'static str; 6] = [
        "accelbyte",
        "permutation",
        "combination",
        "greedy",
        "balanced",
        "abba",
    ];

    pub fn name(self) -> &'static str {
        match self {
            RebalanceMethod::Accelbyte => "accelbyte",
            RebalanceMethod::Permutation => "permutation",
            RebalanceMethod::Combination => "combination",
            RebalanceMethod::Greedy => "greedy",
            RebalanceMethod::Balanced => "balanced",
            RebalanceMethod::Abba => "abba",
        }
    }
}

impl FromStr for RebalanceMethod {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "accelbyte" | "auto" => RebalanceMethod::Accelbyte,
            "permutation" => RebalanceMethod::Permutation,
            "combination" => RebalanceMethod::Combination,
            "greedy" => RebalanceMethod::Greedy,
            "balanced" => RebalanceMethod::Balanced,
            "abba" => RebalanceMethod::Abba,
            _ => {
                return Err(format!(
                    "unknown method `{s}`; allowed: {}",
                    RebalanceMethod::NAMES.join(", ")
                ))
            }
        })
    }
}

/// A problem with the input, at a path such as `players[3].mmr`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError {
    pub path: String,
    pub message: String,
}

impl InputError {
    fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        InputError {
            path: path.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "`{}`: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for InputError {}

/// One player of the input.
#[derive(Clone, Debug, PartialEq)]
pub struct InputPlayer {
    pub name: String,
    /// Party label; solo players get their own name.
    pub party: String,
    /// Session team (0-based) for a backfill.
    pub team: Option<usize>,
    /// Values of the balanced attributes, in `RebalanceInput::attributes` order.
    pub values: Vec<f64>,
    pub tier: Option<u8>,
    pub category: Option<Category>,
    pub win_rate: Option<f64>,
}

/// A parsed input document.
#[derive(Clone, Debug, PartialEq)]
pub struct RebalanceInput {
    pub players: Vec<InputPlayer>,
    /// Names of the balanced attributes.
    pub attributes: Vec<String>,
    /// Team count and sizes (strict when both ranges are single values).
    pub alliance: Alliance,
}

const TOP_KEYS: [&str; 9] = [
    "players",
    "teams",
    "team_size",
    "alliance",
    "attributes",
    "matching_rule",
    "auto_backfill",
    "name",
    "description",
];
const PLAYER_KEYS: [&str; 8] = [
    "name",
    "id",
    "party",
    "team",
    "tier",
    "category",
    "win_rate",
    "attributes",
];

/// Parses the JSON document described in the module docs.
pub fn parse_input(text: &str) -> Result<RebalanceInput, InputError> {
    let root: Value = serde_json::from_str(text)
        .map_err(|e| InputError::new("", format!("not valid JSON: {e}")))?;
    let empty = Map::new();
    let (doc, players) = match &root {
        Value::Array(list) => (&empty, list),
        Value::Object(doc) => {
            for key in doc.keys() {
                if !TOP_KEYS.contains(&key.as_str()) {
                    return Err(InputError::new(
                        key.clone(),
                        format!("unknown key; allowed: {}", TOP_KEYS.join(", ")),
                    ));
                }
            }
            match doc.get("players") {
                Some(Value::Array(list)) => (doc, list),
                Some(_) => return Err(InputError::new("players", "expected a list of players")),
                None => {
                    return Err(InputError::new(
                        "players",
                        "missing: the list of players to split",
                    ))
                }
            }
        }
        _ => {
            return Err(InputError::new(
                "",
                "expected a list of players or an object with `players`",
            ))
        }
    };
    if players.is_empty() {
        return Err(InputError::new("players", "the list is empty"));
    }

    let mut raw = Vec::new();
    for (i, p) in players.iter().enumerate() {
        raw.push(parse_player(i, p)?);
    }

    let attributes = balanced_attributes(doc, &raw)?;
    let mut out = Vec::new();
    for (i, (player, attrs)) in raw.into_iter().enumerate() {
        let mut values = Vec::new();
        for a in &attributes {
            match attrs.iter().find(|(k, _)| k == a) {
                Some((_, v)) => values.push(*v),
                None => {
                    return Err(InputError::new(
                        format!("players[{i}].{a}"),
                        format!(
                            "missing; every player needs each balanced attribute ({})",
                            attributes.join(", ")
                        ),
                    ))
                }
            }
        }
        out.push(InputPlayer { values, ..player });
    }

    for (i, p) in out.iter().enumerate() {
        if let Some(j) = out[..i].iter().position(|q| q.name == p.name) {
            return Err(InputError::new(
                format!("players[{i}].name"),
                format!(
                    "`{}` is already used by players[{j}]; names must be unique",
                    p.name
                ),
            ));
        }
        if let Some(j) = out[..i]
            .iter()
            .position(|q| q.party == p.party && q.team != p.team)
        {
            return Err(InputError::new(
                format!("players[{i}].team"),
                format!(
                    "party `{}` is {} in players[{j}]; a party plays on one team",
                    p.party,
                    out[j]
                        .team
                        .map_or("not in the session".to_string(), |t| format!(
                            "on team {}",
                            t + 1
                        ))
                ),
            ));
        }
    }

    let alliance = parse_shape(doc, out.len())?;
    for (i, p) in out.iter().enumerate() {
        if let Some(t) = p.team {
            if t >= alliance.max_number {
                return Err(InputError::new(
                    format!("players[{i}].team"),
                    format!(
                        "team {} but the match has {} teams",
                        t + 1,
                        alliance.max_number
                    ),
                ));
            }
        }
    }
    Ok(RebalanceInput {
        players: out,
        attributes,
        alliance,
    })
}

type Attrs = Vec<(String, f64)>;

fn parse_player(i: usize, v: &Value) -> Result<(InputPlayer, Attrs), InputError> {
    let at = |key: &str| format!("players[{i}].{key}");
    let Value::Object(obj) = v else {
        return Err(InputError::new(
            format!("players[{i}]"),
            "expected an object with `name` and attributes",
        ));
    };
    let label = |key: &str| -> Result<Option<String>, InputError> {
        match obj.get(key) {
            None => Ok(None),
            Some(Value::String(s)) if !s.is_empty() => Ok(Some(s.clone())),
            Some(Value::Number(n)) => Ok(Some(n.to_string())),
            Some(other) => Err(InputError::new(
                at(key),
                format!("expected a non-empty string or a number, got {other}"),
            )),
        }
    };
    let name = match (label("name")?, label("id")?) {
        (Some(n), _) | (None, Some(n)) => n,
        (None, None) => {
            return Err(InputError::new(
                format!("players[{i}]"),
                "needs a `name` or an `id`",
            ))
        }
    };
    let party = label("party")?.unwrap_or_else(|| format!("solo {name}"));
    let team = match obj.get("team") {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_u64() {
            Some(t) if t >= 1 => Some(t as usize - 1),
            _ => {
                return Err(InputError::new(
                    at("team"),
                    format!("expected a team number from 1 (the session's team), got {v}"),
                ))
            }
        },
    };
    let tier = match obj.get("tier") {
        None => None,
        Some(v) => match v.as_u64() {
            Some(t) if t <= u8::MAX as u64 => Some(t as u8),
            _ => {
                return Err(InputError::new(
                    at("tier"),
                    format!("expected a whole number from 0 to 255, got {v}"),
                ))
            }
        },
    };
    let category = match obj.get("category") {
        None => None,
        Some(Value::String(s)) => Some(parse_category(s).ok_or_else(|| {
            InputError::new(
                at("category"),
                format!("unknown category `{s}`; allowed: main-battle-tank (mbt), light-tank (lt), tank-destroyer (td), armoured-fighter (afv), artillery (arty)"),
            )
        })?),
        Some(v) => return Err(InputError::new(at("category"), format!("expected a category name, got {v}"))),
    };
    let win_rate = match obj.get("win_rate") {
        None => None,
        Some(v) => match v.as_f64() {
            Some(w) if (0.0..=1.0).contains(&w) => Some(w),
            _ => {
                return Err(InputError::new(
                    at("win_rate"),
                    format!("expected a number from 0 to 1, got {v}"),
                ))
            }
        },
    };
    let mut attrs: Attrs = Vec::new();
    let push = |key: &str, path: String, v: &Value, attrs: &mut Attrs| -> Result<(), InputError> {
        let x = v.as_f64().filter(|x| x.is_finite()).ok_or_else(|| {
            InputError::new(
                path.clone(),
                format!(
                    "expected a number (an attribute such as mmr) or one of the player keys {}, got {v}",
                    PLAYER_KEYS.join(", ")
                ),
            )
        })?;
        if attrs.iter().any(|(k, _)| k == key) {
            return Err(InputError::new(path, "given twice"));
        }
        attrs.push((key.to_string(), x));
        Ok(())
    };
    for (key, v) in obj {
        if key == "attributes" {
            let Value::Object(inner) = v else {
                return Err(InputError::new(
                    at("attributes"),
                    "expected an object of numbers, like {\"mmr\": 70}",
                ));
            };
            for (k, v) in inner {
                push(k, format!("players[{i}].attributes.{k}"), v, &mut attrs)?;
            }
        } else if !PLAYER_KEYS.contains(&key.as_str()) {
            push(key, at(key), v, &mut attrs)?;
        }
    }
    let player = InputPlayer {
        name,
        party,
        team,
        values: Vec::new(),
        tier,
        category,
        win_rate,
    };
    Ok((player, attrs))
}

fn parse_category(s: &str) -> Option<Category> {
    Some(match s.to_ascii_lowercase().as_str() {
        "main-battle-tank" | "mbt" => Category::MainBattleTank,
        "light-tank" | "lt" => Category::LightTank,
        "tank-destroyer" | "td" => Category::TankDestroyer,
        "armoured-fighter" | "armored-fighter" | "afv" => Category::ArmouredFighter,
        "artillery" | "arty" => Category::Artillery,
        _ => return None,
    })
}

fn balanced_attributes(
    doc: &Map<String, Value>,
    raw: &[(InputPlayer, Attrs)],
) -> Result<Vec<String>, InputError> {
    if let Some(v) = doc.get("attributes") {
        let list = v
            .as_array()
            .ok_or_else(|| InputError::new("attributes", "expected a list of attribute names"))?;
        return list
            .iter()
            .enumerate()
            .map(|(k, a)| {
                a.as_str().map(str::to_string).ok_or_else(|| {
                    InputError::new(
                        format!("attributes[{k}]"),
                        format!("expected a name, got {a}"),
                    )
                })
            })
            .collect();
    }
    if let Some(v) = doc.get("matching_rule") {
        let list = v
            .as_array()
            .ok_or_else(|| InputError::new("matching_rule", "expected a list of rules"))?;
        let mut names = Vec::new();
        for (k, rule) in list.iter().enumerate() {
            match rule.get("attribute").and_then(Value::as_str) {
                Some(a) if !names.iter().any(|n| n == a) => names.push(a.to_string()),
                Some(_) => {}
                None => {
                    return Err(InputError::new(
                        format!("matching_rule[{k}].attribute"),
                        "missing: the attribute the rule balances, like \"mmr\"",
                    ))
                }
            }
        }
        return Ok(names);
    }
    let mut names: Vec<String> = Vec::new();
    for (_, attrs) in raw {
        for (k, _) in attrs {
            if !names.contains(k) {
                names.push(k.clone());
            }
        }
    }
    Ok(names)
}

fn parse_shape(doc: &Map<String, Value>, players: usize) -> Result<Alliance, InputError> {
    let count = |key: &str| -> Result<Option<usize>, InputError> {
        match doc.get(key) {
            None => Ok(None),
            Some(v) => match v.as_u64() {
                Some(n) if n >= 1 => Ok(Some(n as usize)),
                _ => Err(InputError::new(
                    key,
                    format!("expected a whole number, 1 or more, got {v}"),
                )),
            },
        }
    };
    let (teams, team_size) = (count("teams")?, count("team_size")?);
    if let Some(v) = doc.get("alliance") {
        if teams.is_some() || team_size.is_some() {
            return Err(InputError::new(
                "alliance",
                "give either `alliance` or `teams`/`team_size`, not both",
            ));
        }
        let a: Alliance = serde_json::from_value(v.clone()).map_err(|e| {
            InputError::new(
                "alliance",
                format!(
                    "{e}; expected min_number, max_number, player_min_number, player_max_number"
                ),
            )
        })?;
        if a.min_number == 0 || a.min_number > a.max_number {
            return Err(InputError::new(
                "alliance.min_number",
                "team counts need 1 <= min_number <= max_number",
            ));
        }
        if a.player_max_number == 0 || a.player_min_number > a.player_max_number {
            return Err(InputError::new(
                "alliance.player_min_number",
                "team sizes need player_min_number <= player_max_number and player_max_number >= 1",
            ));
        }
        return Ok(a);
    }
    let teams = teams.unwrap_or(2);
    let team_size = match team_size {
        Some(s) => s,
        None if players.is_multiple_of(teams) => players / teams,
        None => {
            return Err(InputError::new(
                "players",
                format!("{players} players cannot make {teams} equal teams; give `team_size` or an `alliance` block with size ranges"),
            ))
        }
    };
    Ok(Alliance::strict(teams, team_size))
}

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
    // Parties in order of first appearance: the AccelByte tables enumerate
    // in that order.
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
    let attrs = input.attributes.len();
    let parties: Vec<AbParty> = members
        .iter()
        .map(|m| AbParty {
            size: m.len(),
            totals: (0..attrs)
                .map(|a| m.iter().map(|&i| input.players[i].values[a]).sum())
                .collect(),
            team: input.players[m[0]].team,
        })
        .collect();
    let alliance = input.alliance;
    let total = input.players.len();
    let backfill = parties.iter().any(|p| p.team.is_some());
    let shape = if alliance.is_strict() {
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
    };

    let need_strict = |name: &str| -> Result<(), InputError> {
        if !alliance.is_strict() {
            return Err(InputError::new(
                "alliance",
                format!("`{name}` needs strict teams (min_number = max_number and player_min_number = player_max_number)"),
            ));
        }
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
    };
    let no_session = |name: &str| -> Result<(), InputError> {
        match input.players.iter().position(|p| p.team.is_some()) {
            Some(i) => Err(InputError::new(
                format!("players[{i}].team"),
                format!("`{name}` forms new matches only; backfill (players with `team`) needs an AccelByte method"),
            )),
            None => Ok(()),
        }
    };

    // Candidate tables show parties by their members, as the page does.
    let shown: Vec<String> = members
        .iter()
        .map(|m| {
            m.iter()
                .map(|&i| input.players[i].name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        })
        .collect();
    let mut candidates = Vec::new();
    let (name, reason, teams): (String, String, Vec<Vec<usize>>) = match method {
        RebalanceMethod::Accelbyte
        | RebalanceMethod::Permutation
        | RebalanceMethod::Combination
        | RebalanceMethod::Greedy => {
            let m = match method {
                RebalanceMethod::Permutation => Method::Permutation,
                RebalanceMethod::Combination => Method::Combination,
                RebalanceMethod::Greedy => Method::Greedy,
                _ => accelbyte::choose_method(&alliance, backfill),
            };
            let reason = if method == RebalanceMethod::Accelbyte {
                let why = match m {
                    Method::Permutation if backfill => "a backfill".to_string(),
                    Method::Permutation => "a loose team configuration".to_string(),
                    Method::Combination => format!("{} players, fewer than 12", alliance.players()),
                    Method::Greedy => format!("{} players, 12 or more", alliance.players()),
                };
                format!("chosen by the ruleset: {shape}, {why}")
            } else {
                format!("asked for; {shape}")
            };
            let teams = match m {
                Method::Greedy => {
                    need_strict("greedy")?;
                    accelbyte::greedy(&parties, alliance.max_number, alliance.player_max_number)
                        .map(|r| r.teams)
                }
                Method::Combination => {
                    need_strict("combination")?;
                    if alliance.players() > accelbyte::COMBINATION_MAX_PLAYERS {
                        return Err(InputError::new(
                            "players",
                            format!("combination is for fewer than 12 players (it tries every split), got {total}; use greedy"),
                        ));
                    }
                    let mut generate = |v: &mut dyn FnMut(&Candidate<'_>)| {
                        accelbyte::combination_candidates(
                            &parties,
                            alliance.max_number,
                            alliance.player_max_number,
                            v,
                        )
                    };
                    best_listed(&mut generate, &shown, &mut candidates)
                }
                Method::Permutation => {
                    let movable = parties.iter().filter(|p| p.team.is_none()).count();
                    if movable > accelbyte::PERMUTATION_MAX_PARTIES {
                        return Err(InputError::new(
                            "players",
                            format!(
                                "permutation tries every order of the parties; {movable} parties is more than the {} allowed",
                                accelbyte::PERMUTATION_MAX_PARTIES
                            ),
                        ));
                    }
                    let mut generate = |v: &mut dyn FnMut(&Candidate<'_>)| {
                        accelbyte::permutation_candidates(
                            &parties,
                            alliance.max_number,
                            alliance.player_min_number,
                            alliance.player_max_number,
                            v,
                        )
                    };
                    best_listed(&mut generate, &shown, &mut candidates)
                }
            };
            let teams = teams.ok_or_else(|| {
                InputError::new(
                    "players",
                    format!("{}: no composition places every party ({shape})", m.name()),
                )
            })?;
            (m.name().to_string(), reason, teams)
        }
        RebalanceMethod::Balanced => {
            need_strict("balanced")?;
            no_session("balanced")?;
            let strengths: Vec<f64> = parties
                .iter()
                .map(|p| p.totals.first().copied().unwrap_or(0.0))
                .collect();
            let sizes: Vec<usize> = parties.iter().map(|p| p.size).collect();
            let mut rng = Pcg64::seed_from_u64(seed);
            let teams = balanced_split(
                &sizes,
                &strengths,
                alliance.max_number,
                alliance.player_max_number,
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
            (
                "balanced".to_string(),
                format!("asked for; {shape}; balances {on}"),
                teams,
            )
        }
        RebalanceMethod::Abba => {
            need_strict("abba")?;
            no_session("abba")?;
            if alliance.max_number != 2 {
                return Err(InputError::new(
                    "teams",
                    format!(
                        "abba splits into exactly 2 teams, got {}",
                        alliance.max_number
                    ),
                ));
            }
            let mut players = Vec::new();
            let mut party_of = Vec::new();
            for (k, m) in members.iter().enumerate() {
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
            let options = AbbaOptions {
                team_size: alliance.player_max_number,
                category_margin: AbbaParams::default().category_margin as usize,
                smoothing: AbbaParams::default().smoothing,
                threshold: AbbaParams::default().smoothing_threshold_pp / 100.0,
            };
            let out = abba_split(&players, &options, &mut Pcg64::seed_from_u64(seed)).ok_or_else(
                || {
                    InputError::new(
                        "players",
                        format!("the platoons cannot fill {shape} exactly"),
                    )
                },
            )?;
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
            ("abba".to_string(), reason, teams)
        }
    };

    let score = accelbyte::score(&parties, &teams);
    let mut distance_by_attribute = Map::new();
    for (a, attr) in input.attributes.iter().enumerate() {
        let one: Vec<AbParty> = parties
            .iter()
            .map(|p| AbParty {
                totals: vec![p.totals[a]],
                ..p.clone()
            })
            .collect();
        distance_by_attribute.insert(
            attr.clone(),
            number(accelbyte::score(&one, &teams).distance),
        );
    }
    // Team statistics: the balanced attributes, plus tier and win rate
    // when abba split on them.
    let mut stats = input.attributes.clone();
    if method == RebalanceMethod::Abba {
        stats.extend(["tier".to_string(), "win_rate".to_string()]);
    }
    let stat = |p: &InputPlayer, k: usize| -> f64 {
        match k.checked_sub(attrs) {
            None => p.values[k],
            Some(0) => p.tier.unwrap_or(0) as f64,
            Some(_) => p.win_rate.unwrap_or(0.0),
        }
    };
    let team_reports = teams
        .iter()
        .enumerate()
        .map(|(t, team)| {
            let ids: Vec<usize> = team
                .iter()
                .flat_map(|&k| members[k].iter().copied())
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
                        party: labels[k].clone(),
                        members: members[k]
                            .iter()
                            .map(|&i| input.players[i].name.clone())
                            .collect(),
                    })
                    .collect(),
                totals,
                means,
            }
        })
        .collect();
    Ok(RebalanceResult {
        method: name,
        reason,
        attributes: input.attributes.clone(),
        teams: team_reports,
        member_count_diff: score.member_diff,
        distance: score.distance,
        distance_by_attribute,
        candidates,
    })
}

/// Something that calls its argument once per candidate composition.
type Generator<'a> = dyn FnMut(&mut dyn FnMut(&Candidate<'_>)) + 'a;

/// Runs a candidate generator, keeps the best (ties to the later one, as
/// the methods do) and lists the candidates if there are few.
fn best_listed(
    generate: &mut Generator<'_>,
    shown: &[String],
    listed: &mut Vec<CandidateReport>,
) -> Option<Vec<Vec<usize>>> {
    let mut best: Option<(usize, accelbyte::Score, Vec<Vec<usize>>)> = None;
    let mut all = Vec::new();
    let mut count = 0;
    generate(&mut |c: &Candidate<'_>| {
        count += 1;
        if all.len() <= MAX_LISTED_CANDIDATES {
            all.push(CandidateReport {
                result: count,
                sequence: c.sequence.iter().map(|&k| shown[k].clone()).collect(),
                teams: c
                    .teams
                    .iter()
                    .map(|t| t.iter().map(|&k| shown[k].clone()).collect())
                    .collect(),
                member_count_diff: c.score.member_diff,
                distance: c.score.distance,
                chosen: false,
            });
        }
        if best
            .as_ref()
            .is_none_or(|(_, b, _)| c.score.no_worse_than(b))
        {
            best = Some((count, c.score, c.teams.to_vec()));
        }
    });
    let (chosen, _, teams) = best?;
    if all.len() <= MAX_LISTED_CANDIDATES {
        all[chosen - 1].chosen = true;
        *listed = all;
    }
    Some(teams)
}

/// JSON numbers for reports: whole values print without a fraction.
fn number(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        Value::from(x as i64)
    } else {
        Value::from(x)
    }
}

fn show(v: &Value) -> String {
    match v.as_f64() {
        Some(x) if x.fract() == 0.0 => format!("{x:.0}"),
        Some(x) => format!("{x:.2}"),
        None => v.to_string(),
    }
}

impl RebalanceResult {
    /// The plain-text rendering: teams, their attribute totals and means,
    /// the member-count difference and distance, then the candidate table.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        s.push_str(&format!("method: {} ({})\n", self.method, self.reason));
        for t in &self.teams {
            let parties: Vec<String> = t
                .parties
                .iter()
                .map(|p| format!("{{{}}}", p.members.join(", ")))
                .collect();
            s.push_str(&format!(
                "team {}: {} players  {}\n",
                t.team,
                t.players,
                parties.join(" ")
            ));
            for (name, total) in &t.totals {
                let mean = t.means.get(name).map_or("-".to_string(), show);
                s.push_str(&format!("    {name}: total {}, mean {mean}\n", show(total)));
            }
        }
        s.push_str(&format!(
            "member-count difference: {}\n",
            self.member_count_diff
        ));
        let parts: Vec<String> = self
            .distance_by_attribute
            .iter()
            .map(|(k, v)| format!("{k} {}", show(v)))
            .collect();
        if parts.is_empty() {
            s.push_str("distance: 0 (no attributes)\n");
        } else {
            s.push_str(&format!(
                "distance: {:.2} ({})\n",
                self.distance,
                parts.join(", ")
            ));
        }
        if !self.candidates.is_empty() {
            s.push_str("\ncompositions considered (on a tie the later one wins):\n");
            s.push_str("result  sequence  team composition  member-count diff  distance\n");
            for c in &self.candidates {
                let seq: Vec<String> = c.sequence.iter().map(|p| format!("{{{p}}}")).collect();
                let teams: Vec<String> = c
                    .teams
                    .iter()
                    .enumerate()
                    .map(|(t, ps)| {
                        let ps: Vec<String> = ps.iter().map(|p| format!("{{{p}}}")).collect();
                        format!("team[{}]:[{}]", t + 1, ps.join(","))
                    })
                    .collect();
                s.push_str(&format!(
                    "{:>6}  [{}]  {}  {}  {:.2}{}\n",
                    c.result,
                    seq.join(","),
                    teams.join(" "),
                    c.member_count_diff,
                    c.distance,
                    if c.chosen { "  <- chosen" } else { "" }
                ));
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PERMUTATION: &str = include_str!("../../scenarios/rebalance/accelbyte-permutation.json");
    const COMBINATION: &str = include_str!("../../scenarios/rebalance/accelbyte-combination.json");
    const GREEDY: &str = include_str!("../../scenarios/rebalance/accelbyte-greedy.json");

    fn team_members(r: &RebalanceResult) -> Vec<Vec<String>> {
        r.teams
            .iter()
            .map(|t| {
                t.parties
                    .iter()
                    .flat_map(|p| p.members.iter().cloned())
                    .collect()
            })
            .collect()
    }

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn permutation_example_file_gives_result_6() {
        let input = parse_input(PERMUTATION).unwrap();
        let r = rebalance(&input, RebalanceMethod::Accelbyte, 0).unwrap();
        assert_eq!(r.method, "permutation");
        assert!(r.reason.contains("backfill"), "{}", r.reason);
        assert_eq!(
            team_members(&r),
            vec![
                names(&["Player A", "Player B", "Player C"]),
                names(&["Player D", "Player E"])
            ]
        );
        assert_eq!(r.member_count_diff, 1);
        assert!((r.distance - 20.0 / 3.0).abs() < 1e-9);
        assert_eq!(r.candidates.len(), 6);
        let chosen: Vec<usize> = r
            .candidates
            .iter()
            .filter(|c| c.chosen)
            .map(|c| c.result)
            .collect();
        assert_eq!(chosen, vec![6]);
        assert_eq!(
            r.candidates[0].sequence,
            ["Player B", "Player C", "Player D, Player E"]
        );
        assert_eq!(
            r.candidates[4].teams[0],
            ["Player A", "Player C", "Player B"]
        );
        let text = r.to_text();
        assert!(
            text.contains("team 1: 3 players  {Player A} {Player B} {Player C}"),
            "{text}"
        );
        assert!(text.contains("distance: 6.67 (mmr 6.67)"), "{text}");
    }

    #[test]
    fn combination_example_file_gives_result_7() {
        let input = parse_input(COMBINATION).unwrap();
        let r = rebalance(&input, RebalanceMethod::Accelbyte, 0).unwrap();
        assert_eq!(r.method, "combination");
        assert_eq!(
            team_members(&r),
            vec![
                names(&["Player B", "Player C", "Player F"]),
                names(&["Player A", "Player D", "Player E"])
            ]
        );
        assert_eq!(r.member_count_diff, 0);
        assert!((r.distance - (50.0 - 130.0 / 3.0)).abs() < 1e-9);
        let distances: Vec<String> = r
            .candidates
            .iter()
            .map(|c| format!("{:.2}", c.distance))
            .collect();
        assert_eq!(
            distances,
            ["33.33", "6.67", "13.33", "13.33", "13.33", "13.33", "6.67", "33.33"]
        );
        assert!(r.candidates[6].chosen);
        assert_eq!(r.teams[0].totals["mmr"], Value::from(130));
        assert_eq!(r.teams[1].means["mmr"], Value::from(50));
    }

    #[test]
    fn greedy_example_file_gives_the_pages_teams() {
        let input = parse_input(GREEDY).unwrap();
        let r = rebalance(&input, RebalanceMethod::Accelbyte, 0).unwrap();
        assert_eq!(r.method, "greedy");
        let t1: Vec<&str> = r.teams[0]
            .parties
            .iter()
            .map(|p| p.party.as_str())
            .collect();
        let t2: Vec<&str> = r.teams[1]
            .parties
            .iter()
            .map(|p| p.party.as_str())
            .collect();
        assert_eq!(t1, ["Party 7", "Party 2", "Party 1", "Party 5"]);
        assert_eq!(t2, ["Party 8", "Party 6", "Party 4", "Party 3"]);
        assert_eq!(r.teams[0].totals["mmr"], Value::from(380));
        assert_eq!(r.teams[1].totals["mmr"], Value::from(390));
        assert!(r.candidates.is_empty());
        // The JSON form carries the same numbers.
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["teams"][1]["players"], Value::from(7));
        assert_eq!(json["member_count_diff"], Value::from(0));
    }

    #[test]
    fn other_methods_run_on_the_same_files() {
        let input = parse_input(COMBINATION).unwrap();
        let greedy = rebalance(&input, RebalanceMethod::Greedy, 0).unwrap();
        assert_eq!(
            greedy.teams.iter().map(|t| t.players).collect::<Vec<_>>(),
            [3, 3]
        );
        let balanced = rebalance(&input, RebalanceMethod::Balanced, 0).unwrap();
        // 6.67 is the best any split of these parties reaches.
        assert!((balanced.distance - 20.0 / 3.0).abs() < 1e-9);
        let e = rebalance(&input, RebalanceMethod::Abba, 0).unwrap_err();
        assert_eq!(e.path, "players[0].tier");
        let perm = parse_input(PERMUTATION).unwrap();
        let e = rebalance(&perm, RebalanceMethod::Greedy, 0).unwrap_err();
        assert_eq!(e.path, "alliance");
        let e = rebalance(&perm, RebalanceMethod::Balanced, 0).unwrap_err();
        assert_eq!(e.path, "alliance");
    }

    #[test]
    fn bare_lists_default_to_two_equal_teams() {
        let doc = r#"[
            {"name": "a", "mmr": 10, "tier": 5, "category": "mbt", "win_rate": 0.6},
            {"name": "b", "mmr": 20, "tier": 5, "category": "mbt", "win_rate": 0.4},
            {"id": 3, "attributes": {"mmr": 30}, "tier": 5, "category": "lt", "win_rate": 0.5},
            {"id": 4, "party": 9, "mmr": 40, "tier": 5, "category": "lt", "win_rate": 0.5}
        ]"#;
        let input = parse_input(doc).unwrap();
        assert_eq!(input.alliance, Alliance::strict(2, 2));
        assert_eq!(input.attributes, ["mmr"]);
        assert_eq!(input.players[2].name, "3");
        assert_eq!(input.players[3].party, "9");
        let r = rebalance(&input, RebalanceMethod::Accelbyte, 0).unwrap();
        assert_eq!(r.method, "combination");
        assert_eq!(r.distance, 0.0);
        let r = rebalance(&input, RebalanceMethod::Abba, 1).unwrap();
        assert_eq!(r.teams[0].players, 2);
        assert!(r.teams[0].means.contains_key("win_rate"));
    }

    #[test]
    fn errors_name_the_field_and_index() {
        let err = |doc: &str| parse_input(doc).unwrap_err();
        let e = err(r#"[{"name": "a", "mmr": 1}, {"name": "b"}]"#);
        assert_eq!(e.path, "players[1].mmr");
        assert!(e.message.contains("missing"));
        let e = err(r#"[{"name": "a", "mmr": "high"}, {"name": "b", "mmr": 2}]"#);
        assert_eq!(e.path, "players[0].mmr");
        assert!(e.message.contains("expected a number"));
        let e = err(r#"[{"mmr": 1}, {"name": "b", "mmr": 2}]"#);
        assert_eq!(e.path, "players[0]");
        let e = err(r#"[{"name": "a", "mmr": 1}, {"name": "a", "mmr": 2}]"#);
        assert_eq!(e.path, "players[1].name");
        let e = err(r#"{"players": [{"name": "a"}, {"name": "b"}], "team": 2}"#);
        assert_eq!(e.path, "team");
        assert!(e.message.contains("allowed"));
        let e = err(r#"{"players": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}"#);
        assert_eq!(e.path, "players");
        assert!(e.message.contains("3 players cannot make 2 equal teams"));
        let e = err(r#"[{"name": "a", "party": 1, "team": 1}, {"name": "b", "party": 1}]"#);
        assert_eq!(e.path, "players[1].team");
        let e = err(r#"[{"name": "a", "team": 3}, {"name": "b"}]"#);
        assert_eq!(e.path, "players[0].team");
        let e = err(r#"[{"name": "a", "category": "tank"}, {"name": "b"}]"#);
        assert_eq!(e.path, "players[0].category");
        let e = err(r#"{"players": [{"name": "a"}], "alliance": {"min_number": 1}}"#);
        assert_eq!(e.path, "alliance");
        let e = err("[1, 2");
        assert!(e.message.contains("not valid JSON"));
        let input = parse_input(r#"{"players": [{"name": "a"}, {"name": "b"}, {"name": "c"}], "teams": 2, "team_size": 2}"#).unwrap();
        let e = rebalance(&input, RebalanceMethod::Accelbyte, 0).unwrap_err();
        assert_eq!(e.path, "players");
        assert!(e.message.contains("need 4 players, got 3"), "{e}");
        assert_eq!("bogus".parse::<RebalanceMethod>().unwrap_err(), "unknown method `bogus`; allowed: accelbyte, permutation, combination, greedy, balanced, abba");
    }
}
