//! Reading and checking the JSON a designer pastes into `mmsim rebalance`
//! (the format is in the parent module's docs), so that the run sees only
//! players with every balanced attribute and a team shape that makes sense.

use crate::model::Category;
use crate::teams::accelbyte::Alliance;
use serde_json::{Map, Value};
use std::fmt;

/// A problem with the input, at a path such as `players[3].mmr`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError {
    pub path: String,
    pub message: String,
}

impl InputError {
    pub(super) fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
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
/// The keys of a `matching_rule` entry (AccelByte's: `reference` and `max`
/// bound a match's distance, which a rebalance of given teams reads only
/// as documentation).
const RULE_KEYS: [&str; 4] = ["attribute", "criteria", "reference", "max"];
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
    let (doc, players) = split_document(&root, &empty)?;
    let raw = players
        .iter()
        .enumerate()
        .map(|(i, p)| parse_player(i, p))
        .collect::<Result<Vec<_>, _>>()?;
    let attributes = balanced_attributes(doc, &raw)?;
    let players = attach_values(raw, &attributes)?;
    check_names_and_parties(&players)?;
    let alliance = parse_shape(doc, players.len())?;
    check_session_teams(&players, &alliance)?;
    if attributes.is_empty() {
        // Nothing to balance: every split would be "balanced", and the
        // answer would be the input order dressed up as a result.
        return Err(InputError::new(
            "players[0]",
            "no player has an attribute to balance; give each a number such as \"mmr\": 1500 (or list them in `attributes`)",
        ));
    }
    Ok(RebalanceInput {
        players,
        attributes,
        alliance,
    })
}

/// The top-level keys (`empty` for a bare list) and the non-empty list of
/// players.
fn split_document<'a>(
    root: &'a Value,
    empty: &'a Map<String, Value>,
) -> Result<(&'a Map<String, Value>, &'a Vec<Value>), InputError> {
    let (doc, players) = match root {
        Value::Array(list) => (empty, list),
        Value::Object(doc) => {
            if let Some(key) = doc.keys().find(|k| !TOP_KEYS.contains(&k.as_str())) {
                return Err(InputError::new(
                    key.clone(),
                    format!("unknown key; allowed: {}", TOP_KEYS.join(", ")),
                ));
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
    Ok((doc, players))
}

/// Each player's values of the balanced attributes, in `attributes` order;
/// a player missing one is an error.
fn attach_values(
    raw: Vec<(InputPlayer, Attrs)>,
    attributes: &[String],
) -> Result<Vec<InputPlayer>, InputError> {
    let mut out = Vec::new();
    for (i, (player, attrs)) in raw.into_iter().enumerate() {
        let mut values = Vec::new();
        for a in attributes {
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
    Ok(out)
}

/// Names are unique, and a party's members are all on the same session
/// team (or all not in the session).
fn check_names_and_parties(players: &[InputPlayer]) -> Result<(), InputError> {
    for (i, p) in players.iter().enumerate() {
        if let Some(j) = players[..i].iter().position(|q| q.name == p.name) {
            return Err(InputError::new(
                format!("players[{i}].name"),
                format!(
                    "`{}` is already used by players[{j}]; names must be unique",
                    p.name
                ),
            ));
        }
        if let Some(j) = players[..i]
            .iter()
            .position(|q| q.party == p.party && q.team != p.team)
        {
            let there = players[j]
                .team
                .map_or("not in the session".to_string(), |t| {
                    format!("on team {}", t + 1)
                });
            return Err(InputError::new(
                format!("players[{i}].team"),
                format!(
                    "party `{}` is {there} in players[{j}]; a party plays on one team",
                    p.party
                ),
            ));
        }
    }
    Ok(())
}

/// Session teams exist in the match.
fn check_session_teams(players: &[InputPlayer], alliance: &Alliance) -> Result<(), InputError> {
    for (i, p) in players.iter().enumerate() {
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
    Ok(())
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
            let Some(fields) = rule.as_object() else {
                return Err(InputError::new(
                    format!("matching_rule[{k}]"),
                    "expected an object like {\"attribute\": \"mmr\", \"criteria\": \"distance\"}",
                ));
            };
            for key in fields.keys() {
                if !RULE_KEYS.contains(&key.as_str()) {
                    return Err(InputError::new(
                        format!("matching_rule[{k}].{key}"),
                        format!("not a matching rule key; allowed: {}", RULE_KEYS.join(", ")),
                    ));
                }
            }
            // Rebalancing evens teams out by distance; a criterion mmsim
            // cannot apply must not be ignored silently.
            match fields.get("criteria") {
                None => {}
                Some(Value::String(c)) if c == "distance" => {}
                Some(c) => {
                    return Err(InputError::new(
                        format!("matching_rule[{k}].criteria"),
                        format!("rebalancing balances by \"distance\" only, got {c}"),
                    ))
                }
            }
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
