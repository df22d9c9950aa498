//! AccelByte Gaming Services matchmaking v2 rulesets: `alliance` (teams and
//! players per team, roles `combination`), `matching_rule` and
//! `flexing_rule` (distance on a numeric attribute, relaxed after a
//! duration), region expansion and `auto_backfill`. Anything else is
//! refused with its path.

use super::{
    check_keys, count, non_negative, string, AgeSelection, AggFn, Expr, Note, PartyAgg, Rule,
    RuleKind, Ruleset, RulesetError, Service, Steps, TeamSel, Vendor, MAX_RULES, MAX_STEPS,
};
use serde_json::{Map, Value};

type Obj = Map<String, Value>;

const TOP: &[&str] = &[
    "alliance",
    "matching_rule",
    "flexing_rule",
    "auto_backfill",
    "region_expansion_rate_ms",
    "region_expansion_range_ms",
    "region_latency_initial_range_ms",
    "region_latency_max_ms",
];

const ALLIANCE: &[&str] = &[
    "min_number",
    "max_number",
    "player_min_number",
    "player_max_number",
    "combination",
    "matching_rule",
    "flexing_rule",
];

fn obj<'a>(v: &'a Value, path: &str) -> Result<&'a Obj, RulesetError> {
    v.as_object()
        .ok_or_else(|| RulesetError::new(path, format!("expected an object, got {v}")))
}

fn arr<'a>(v: &'a Value, path: &str) -> Result<&'a Vec<Value>, RulesetError> {
    v.as_array()
        .ok_or_else(|| RulesetError::new(path, format!("expected an array, got {v}")))
}

fn need<'a>(o: &'a Obj, key: &str, path: &str) -> Result<&'a Value, RulesetError> {
    o.get(key)
        .ok_or_else(|| RulesetError::new(path, format!("needs `{key}`")))
}

/// Reads an AccelByte v2 ruleset (its top-level JSON object), refusing what mmsim cannot simulate with the JSON path at fault.
pub fn parse(top: &Obj) -> Result<Ruleset, RulesetError> {
    check_keys(top, "", TOP, "an AccelByte ruleset")?;
    let alliance = obj(&top["alliance"], "alliance")?;
    check_keys(alliance, "alliance", ALLIANCE, "`alliance`")?;
    let min_teams = count(
        need(alliance, "min_number", "alliance")?,
        "alliance.min_number",
        2,
        64,
    )?;
    let max_teams = count(
        need(alliance, "max_number", "alliance")?,
        "alliance.max_number",
        2,
        64,
    )?;
    if min_teams != max_teams {
        return Err(RulesetError::new(
            "alliance.max_number",
            format!("min_number {min_teams} and max_number {max_teams}: mmsim forms a fixed number of teams; make them equal"),
        ));
    }
    let max_players = count(
        need(alliance, "player_max_number", "alliance")?,
        "alliance.player_max_number",
        1,
        200,
    )?;
    let min_players = match alliance.get("player_min_number") {
        Some(v) => count(v, "alliance.player_min_number", 0, max_players as u64)?,
        None => max_players,
    };
    let mut rs = Ruleset {
        vendor: Vendor::AccelByte,
        name: String::new(),
        teams: max_teams,
        team_size: max_players,
        team_names: (1..=max_teams).map(|i| format!("alliance {i}")).collect(),
        attributes: Vec::new(),
        rules: Vec::new(),
        // A flexing rule's duration counts from the oldest ticket's join.
        age: AgeSelection::Oldest,
        roles: None,
        service: Service::default(),
        notes: Vec::new(),
    };
    if min_players < max_players {
        rs.notes.push(Note {
            field: "alliance.player_min_number".into(),
            text: format!(
                "{min_players}: mmsim forms full teams of player_max_number {max_players} only"
            ),
        });
    }
    let mut matching = Vec::new();
    let mut flexing = Vec::new();
    for (holder, at) in [(top, ""), (alliance, "alliance.")] {
        if let Some(m) = holder.get("matching_rule") {
            matching.push((
                arr(m, &format!("{at}matching_rule"))?,
                format!("{at}matching_rule"),
            ));
        }
        if let Some(f) = holder.get("flexing_rule") {
            flexing.push((
                arr(f, &format!("{at}flexing_rule"))?,
                format!("{at}flexing_rule"),
            ));
        }
    }
    for (list, path) in matching {
        if list.len() > MAX_RULES {
            return Err(RulesetError::new(
                path,
                format!("at most {MAX_RULES} rules"),
            ));
        }
        for (i, m) in list.iter().enumerate() {
            let p = format!("{path}[{i}]");
            let (attr_name, reference) =
                criterion(obj(m, &p)?, &p, &["attribute", "criteria", "reference"])?;
            if rs.rules.iter().any(|r| r.name == attr_name) {
                return Err(RulesetError::new(
                    format!("{p}.attribute"),
                    format!("`{attr_name}` has two matching rules"),
                ));
            }
            let attr = rs.attribute(&attr_name, "number");
            let all = || {
                Box::new(Expr::Flatten(Box::new(Expr::Attr {
                    teams: TeamSel::All,
                    attr,
                })))
            };
            rs.rules.push(Rule {
                name: attr_name,
                kind: RuleKind::Distance {
                    measure: vec![Expr::Agg(AggFn::Max, all())],
                    reference: Some(Expr::Agg(AggFn::Min, all())),
                    max: Some(Steps::fixed(reference)),
                    min: None,
                },
                party: PartyAgg::Avg,
                in_compound: false,
                team_free: true,
            });
        }
    }
    for (list, path) in flexing {
        if list.len() > MAX_STEPS {
            return Err(RulesetError::new(
                path,
                format!("at most {MAX_STEPS} flexing steps"),
            ));
        }
        for (i, f) in list.iter().enumerate() {
            let p = format!("{path}[{i}]");
            let f = obj(f, &p)?;
            let (attr_name, reference) =
                criterion(f, &p, &["duration", "attribute", "criteria", "reference"])?;
            let duration = non_negative(need(f, "duration", &p)?, &format!("{p}.duration"))?;
            if duration > 86_400.0 {
                return Err(RulesetError::new(
                    format!("{p}.duration"),
                    "at most 86400 s (a day)",
                ));
            }
            let rule = rs
                .rules
                .iter_mut()
                .find(|r| r.name == attr_name)
                .ok_or_else(|| {
                    RulesetError::new(
                        format!("{p}.attribute"),
                        format!("flexes `{attr_name}`, which no matching_rule names"),
                    )
                })?;
            let RuleKind::Distance {
                max: Some(steps), ..
            } = &mut rule.kind
            else {
                unreachable!("AccelByte matching rules are distance rules")
            };
            let at = steps.steps.partition_point(|&(w, _)| w < duration);
            if steps.steps.get(at).is_some_and(|&(w, _)| w == duration) {
                return Err(RulesetError::new(
                    format!("{p}.duration"),
                    format!("`{attr_name}` flexes twice at {duration} s"),
                ));
            }
            steps.steps.insert(at, (duration, reference));
        }
    }
    if let Some(c) = alliance.get("combination") {
        combination(&mut rs, obj(c, "alliance.combination")?)?;
    }
    region_expansion(&mut rs, top)?;
    if let Some(v) = top.get("auto_backfill") {
        rs.service.backfill = Some(v.as_bool().ok_or_else(|| {
            RulesetError::new("auto_backfill", format!("expected true or false, got {v}"))
        })?);
    }
    Ok(rs)
}

/// A matching or flexing rule's attribute and reference; `distance` is the
/// one criterion mmsim simulates.
fn criterion(o: &Obj, p: &str, keys: &[&str]) -> Result<(String, f64), RulesetError> {
    check_keys(o, p, keys, "a matching rule")?;
    let attr = string(need(o, "attribute", p)?, &format!("{p}.attribute"))?.to_owned();
    let criteria = string(need(o, "criteria", p)?, &format!("{p}.criteria"))?;
    if criteria != "distance" {
        return Err(RulesetError::new(
            format!("rule `{attr}`"),
            format!(
                "has criteria `{criteria}`, which mmsim does not simulate (it simulates distance)"
            ),
        ));
    }
    let reference = non_negative(need(o, "reference", p)?, &format!("{p}.reference"))?;
    Ok((attr, reference))
}

fn combination(rs: &mut Ruleset, c: &Obj) -> Result<(), RulesetError> {
    let p = "alliance.combination";
    check_keys(
        c,
        p,
        &["has_combination", "alliances", "role_flexing_enable"],
        "a role combination",
    )?;
    if c.get("role_flexing_enable")
        .is_some_and(|v| v != &Value::Bool(false))
    {
        return Err(RulesetError::new(
            format!("{p}.role_flexing_enable"),
            "mmsim does not simulate role flexing; set it false",
        ));
    }
    if c.get("has_combination") == Some(&Value::Bool(false)) {
        rs.notes.push(Note {
            field: format!("{p}.has_combination"),
            text: "false: no role queue".into(),
        });
        return Ok(());
    }
    let alliances = arr(need(c, "alliances", p)?, &format!("{p}.alliances"))?;
    if alliances.is_empty() {
        return Err(RulesetError::new(
            format!("{p}.alliances"),
            "needs at least one alliance",
        ));
    }
    let mut first: Option<Vec<(String, u32)>> = None;
    for (i, a) in alliances.iter().enumerate() {
        let ap = format!("{p}.alliances[{i}]");
        let mut comp = Vec::new();
        for (k, r) in arr(a, &ap)?.iter().enumerate() {
            let rp = format!("{ap}[{k}]");
            let r = obj(r, &rp)?;
            check_keys(r, &rp, &["name", "min", "max"], "a role slot")?;
            let name = string(need(r, "name", &rp)?, &format!("{rp}.name"))?.to_owned();
            let max = count(need(r, "max", &rp)?, &format!("{rp}.max"), 0, 200)?;
            let min = match r.get("min") {
                Some(v) => count(v, &format!("{rp}.min"), 0, max as u64)?,
                None => max,
            };
            if min != max {
                return Err(RulesetError::new(
                    format!("{rp}.min"),
                    format!("role `{name}` takes {min} to {max} players: mmsim's role queue fills exact counts; make min and max equal"),
                ));
            }
            comp.push((name, max as u32));
        }
        let total: u32 = comp.iter().map(|(_, n)| n).sum();
        if total as usize != rs.team_size {
            return Err(RulesetError::new(
                ap,
                format!(
                    "roles add up to {total} players, but a team has player_max_number {}",
                    rs.team_size
                ),
            ));
        }
        match &first {
            None => first = Some(comp),
            Some(f) if *f == comp => {}
            Some(_) => {
                return Err(RulesetError::new(
                    ap,
                    "differs from the first alliance: mmsim's role queue gives every team one composition",
                ))
            }
        }
    }
    rs.roles = first;
    Ok(())
}

fn region_expansion(rs: &mut Ruleset, top: &Obj) -> Result<(), RulesetError> {
    let keys = [
        "region_latency_initial_range_ms",
        "region_expansion_rate_ms",
        "region_expansion_range_ms",
        "region_latency_max_ms",
    ];
    let present: Vec<&str> = keys
        .iter()
        .copied()
        .filter(|k| top.contains_key(*k))
        .collect();
    if present.is_empty() {
        return Ok(());
    }
    let get = |k: &str| -> Result<f64, RulesetError> {
        non_negative(
            top.get(k).ok_or_else(|| {
                RulesetError::new(k, "region expansion needs all four region_* keys")
            })?,
            k,
        )
    };
    let initial = get(keys[0])?;
    let rate_ms = get(keys[1])?;
    let range_ms = get(keys[2])?;
    let max_ms = get(keys[3])?;
    if max_ms < initial {
        return Err(RulesetError::new(
            keys[3],
            format!("must be at least region_latency_initial_range_ms ({initial})"),
        ));
    }
    let mut steps = Vec::new();
    if range_ms > 0.0 && max_ms > initial {
        if rate_ms <= 0.0 {
            return Err(RulesetError::new(
                keys[1],
                "must be above 0 when the range grows",
            ));
        }
        let mut k = 1.0;
        loop {
            let value = (initial + k * range_ms).min(max_ms);
            steps.push((k * rate_ms / 1000.0, value));
            if value >= max_ms {
                break;
            }
            if steps.len() >= MAX_STEPS {
                return Err(RulesetError::new(
                    keys[2],
                    format!("the latency range needs more than {MAX_STEPS} steps to reach region_latency_max_ms; widen the range or raise the rate"),
                ));
            }
            k += 1.0;
        }
    }
    rs.rules.push(Rule {
        name: "region expansion".into(),
        kind: RuleKind::Latency {
            max: Steps {
                base: initial,
                steps,
            },
        },
        party: PartyAgg::Own,
        in_compound: false,
        team_free: true,
    });
    Ok(())
}
