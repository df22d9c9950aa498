//! AWS GameLift FlexMatch rule sets (rule language 1.0): the rule set
//! object, or `{ "ruleSet": ..., "configuration": ... }` with the
//! matchmaking configuration's acceptance and backfill settings beside it.
//! Anything mmsim cannot simulate is refused with its path.

use super::{
    check_keys, count, non_negative, number, string, AgeSelection, AggFn, CmpOp, CollOp, Expr,
    Note, PartyAgg, Rule, RuleKind, Ruleset, RulesetError, Service, Statement, Steps, TeamSel,
    Vendor, MAX_DEPTH, MAX_EXPR_CHARS, MAX_RULES, MAX_STEPS,
};
use serde_json::{Map, Value};

type Obj = Map<String, Value>;

const RULE_TYPES: &str = "distance, comparison, batchDistance, collection, latency and compound";

fn obj<'a>(v: &'a Value, path: &str) -> Result<&'a Obj, RulesetError> {
    v.as_object()
        .ok_or_else(|| RulesetError::new(path, format!("expected an object, got {v}")))
}

fn arr<'a>(v: &'a Value, path: &str) -> Result<&'a Vec<Value>, RulesetError> {
    v.as_array()
        .ok_or_else(|| RulesetError::new(path, format!("expected an array, got {v}")))
}

fn note(rs: &mut Ruleset, field: impl Into<String>, text: impl Into<String>) {
    rs.notes.push(Note {
        field: field.into(),
        text: text.into(),
    });
}

/// Reads a FlexMatch rule set (its top-level JSON object, or a matchmaking configuration holding one), refusing what mmsim cannot simulate with the JSON path at fault.
pub fn parse(top: &Obj) -> Result<Ruleset, RulesetError> {
    let (set, config) = if top.contains_key("ruleSet") {
        check_keys(top, "", &["ruleSet", "configuration"], "the wrapper")?;
        (
            obj(&top["ruleSet"], "ruleSet")?,
            top.get("configuration")
                .map(|c| obj(c, "configuration"))
                .transpose()?,
        )
    } else {
        (top, None)
    };
    let prefix = if top.contains_key("ruleSet") {
        "ruleSet."
    } else {
        ""
    };
    let at = |k: &str| format!("{prefix}{k}");
    check_keys(
        set,
        prefix.trim_end_matches('.'),
        &[
            "name",
            "ruleLanguageVersion",
            "playerAttributes",
            "algorithm",
            "teams",
            "rules",
            "expansions",
        ],
        "a FlexMatch rule set",
    )?;
    if let Some(v) = set.get("ruleLanguageVersion") {
        if string(v, &at("ruleLanguageVersion"))? != "1.0" {
            return Err(RulesetError::new(
                at("ruleLanguageVersion"),
                format!("mmsim reads rule language 1.0, got {v}"),
            ));
        }
    }
    let mut rs = Ruleset {
        vendor: Vendor::FlexMatch,
        name: set
            .get("name")
            .map(|v| string(v, &at("name")).map(str::to_owned))
            .transpose()?
            .unwrap_or_default(),
        teams: 0,
        team_size: 0,
        team_names: Vec::new(),
        attributes: Vec::new(),
        rules: Vec::new(),
        age: AgeSelection::Newest,
        roles: None,
        service: Service::default(),
        notes: Vec::new(),
    };
    attributes(
        &mut rs,
        set.get("playerAttributes"),
        &at("playerAttributes"),
    )?;
    let team_defs = teams(
        &mut rs,
        set.get("teams")
            .ok_or_else(|| RulesetError::new(at("teams"), "a rule set needs `teams`"))?,
        &at("teams"),
    )?;
    if let Some(a) = set.get("algorithm") {
        algorithm(&mut rs, obj(a, &at("algorithm"))?, &at("algorithm"))?;
    }
    if let Some(r) = set.get("rules") {
        rules(&mut rs, arr(r, &at("rules"))?, &at("rules"), &team_defs)?;
    }
    if let Some(e) = set.get("expansions") {
        expansions(&mut rs, arr(e, &at("expansions"))?, &at("expansions"))?;
    }
    if let Some(c) = config {
        configuration(&mut rs, c)?;
    }
    Ok(rs)
}

fn attributes(rs: &mut Ruleset, v: Option<&Value>, path: &str) -> Result<(), RulesetError> {
    let Some(v) = v else { return Ok(()) };
    let list = arr(v, path)?;
    if list.len() > MAX_RULES {
        return Err(RulesetError::new(
            path,
            format!("at most {MAX_RULES} attributes"),
        ));
    }
    for (i, a) in list.iter().enumerate() {
        let p = format!("{path}[{i}]");
        let a = obj(a, &p)?;
        check_keys(a, &p, &["name", "type", "default"], "a player attribute")?;
        let name = string(
            a.get("name")
                .ok_or_else(|| RulesetError::new(&p, "an attribute needs a `name`"))?,
            &format!("{p}.name"),
        )?;
        let kind = a
            .get("type")
            .map(|t| string(t, &format!("{p}.type")))
            .transpose()?
            .unwrap_or("number");
        if !matches!(
            kind,
            "number" | "string_list" | "string" | "string_number_map"
        ) {
            return Err(RulesetError::new(
                format!("{p}.type"),
                format!("`{kind}` is not a FlexMatch attribute type (number, string, string_list, string_number_map)"),
            ));
        }
        if rs.attributes.iter().any(|x| x.name == name) {
            return Err(RulesetError::new(
                format!("{p}.name"),
                format!("attribute `{name}` is declared twice"),
            ));
        }
        rs.attribute(name, kind);
        if a.contains_key("default") {
            note(
                rs,
                format!("playerAttributes `{name}`.default"),
                "not used: every simulated player has a value",
            );
        }
    }
    Ok(())
}

/// A team definition: its name and the team indices it stands for.
struct TeamDef {
    name: String,
    first: usize,
    count: usize,
}

fn teams(rs: &mut Ruleset, v: &Value, path: &str) -> Result<Vec<TeamDef>, RulesetError> {
    let list = arr(v, path)?;
    if list.is_empty() {
        return Err(RulesetError::new(
            path,
            "a rule set needs at least one team",
        ));
    }
    let mut defs = Vec::new();
    let mut sizes = Vec::new();
    for (i, t) in list.iter().enumerate() {
        let p = format!("{path}[{i}]");
        let t = obj(t, &p)?;
        check_keys(
            t,
            &p,
            &["name", "maxPlayers", "minPlayers", "quantity"],
            "a team",
        )?;
        let name = string(
            t.get("name")
                .ok_or_else(|| RulesetError::new(&p, "a team needs a `name`"))?,
            &format!("{p}.name"),
        )?
        .to_owned();
        let max = count(
            t.get("maxPlayers")
                .ok_or_else(|| RulesetError::new(&p, "a team needs `maxPlayers`"))?,
            &format!("{p}.maxPlayers"),
            1,
            200,
        )?;
        let min = match t.get("minPlayers") {
            Some(m) => count(m, &format!("{p}.minPlayers"), 0, max as u64)?,
            None => max,
        };
        let quantity = match t.get("quantity") {
            Some(q) => count(q, &format!("{p}.quantity"), 1, 64)?,
            None => 1,
        };
        if min < max {
            note(
                rs,
                format!("teams `{name}`"),
                format!("minPlayers {min}: mmsim forms full teams of maxPlayers {max} only"),
            );
        }
        let first = rs.team_names.len();
        for k in 0..quantity {
            rs.team_names.push(if quantity == 1 {
                name.clone()
            } else {
                format!("{name}_{}", k + 1)
            });
            sizes.push(max);
        }
        if rs.team_names.len() > 64 {
            return Err(RulesetError::new(path, "at most 64 teams"));
        }
        defs.push(TeamDef {
            name,
            first,
            count: quantity,
        });
    }
    if sizes.iter().any(|&s| s != sizes[0]) {
        return Err(RulesetError::new(
            path,
            format!(
                "teams of different sizes ({}): mmsim's matches have teams of one size",
                sizes
                    .iter()
                    .map(|s| s.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    rs.teams = sizes.len();
    rs.team_size = sizes[0];
    if rs.teams < 2 {
        return Err(RulesetError::new(
            path,
            "one team: mmsim simulates matches of two or more teams (give it `quantity` 2 or more)",
        ));
    }
    Ok(defs)
}

fn algorithm(rs: &mut Ruleset, a: &Obj, path: &str) -> Result<(), RulesetError> {
    check_keys(
        a,
        path,
        &[
            "strategy",
            "batchingPreference",
            "sortByAttributes",
            "expansionAgeSelection",
            "backfillPriority",
            "balancedAttribute",
        ],
        "`algorithm`",
    )?;
    let field = |k: &str| format!("{path}.{k}");
    for (k, v) in a {
        match k.as_str() {
            "strategy" => match string(v, &field(k))? {
                "exhaustiveSearch" => note(rs, field(k), "exhaustiveSearch: each match grows from the longest-waiting ticket, nearest rating first, taking the tickets that keep the rules passing"),
                "balanced" => note(rs, field(k), "balanced: teams are split by rating, largest parties first, each to the team with the lowest rating sum"),
                other => return Err(RulesetError::new(field(k), format!("`{other}` is not a strategy (exhaustiveSearch, balanced)"))),
            },
            "batchingPreference" => match string(v, &field(k))? {
                s @ ("random" | "sorted" | "largestPopulation" | "fastestRegion") => note(
                    rs,
                    field(k),
                    format!("{s}: mmsim seeds matches longest-waiting first and fills them nearest rating first; with [regions] each data centre's queue is its own batch"),
                ),
                other => return Err(RulesetError::new(field(k), format!("`{other}` is not a batching preference (random, sorted, largestPopulation, fastestRegion)"))),
            },
            "sortByAttributes" => {
                let names = arr(v, &field(k))?;
                for (i, n) in names.iter().enumerate() {
                    let n = string(n, &format!("{}[{i}]", field(k)))?;
                    rs.attribute(n, "number");
                }
                note(rs, field(k), "candidates are always taken nearest rating first");
            }
            "expansionAgeSelection" => {
                rs.age = match string(v, &field(k))? {
                    "newest" => AgeSelection::Newest,
                    "oldest" => AgeSelection::Oldest,
                    other => return Err(RulesetError::new(field(k), format!("`{other}` is not newest or oldest"))),
                }
            }
            "backfillPriority" => match string(v, &field(k))? {
                s @ ("normal" | "high") => note(rs, field(k), format!("{s}: mmsim fills open slots before forming new matches")),
                other => return Err(RulesetError::new(field(k), format!("`{other}`: mmsim always fills open slots before new matches (normal or high)"))),
            },
            "balancedAttribute" => {
                let n = string(v, &field(k))?;
                rs.attribute(n, "number");
                note(rs, field(k), format!("`{n}`: teams are split balanced by rating"));
            }
            _ => {}
        }
    }
    Ok(())
}

fn party(v: Option<&Value>, path: &str, sets: bool) -> Result<PartyAgg, RulesetError> {
    let Some(v) = v else {
        return Ok(if sets { PartyAgg::Union } else { PartyAgg::Avg });
    };
    Ok(match (string(v, path)?, sets) {
        ("avg", false) => PartyAgg::Avg,
        ("min", false) => PartyAgg::Min,
        ("max", false) => PartyAgg::Max,
        ("union", true) => PartyAgg::Union,
        ("intersection", true) => PartyAgg::Intersection,
        (other, _) => {
            return Err(RulesetError::new(
                path,
                format!(
                    "`{other}` is not a party aggregation here ({})",
                    if sets {
                        "union, intersection"
                    } else {
                        "avg, min, max"
                    }
                ),
            ))
        }
    })
}

fn rules(
    rs: &mut Ruleset,
    list: &[Value],
    path: &str,
    team_defs: &[TeamDef],
) -> Result<(), RulesetError> {
    if list.len() > MAX_RULES {
        return Err(RulesetError::new(
            path,
            format!("at most {MAX_RULES} rules"),
        ));
    }
    // Names first: a compound rule may name a rule written after it.
    let mut names = Vec::new();
    for (i, r) in list.iter().enumerate() {
        let p = format!("{path}[{i}]");
        let r = obj(r, &p)?;
        let name = string(
            r.get("name")
                .ok_or_else(|| RulesetError::new(&p, "a rule needs a `name`"))?,
            &format!("{p}.name"),
        )?;
        if names.contains(&name) {
            return Err(RulesetError::new(
                format!("{p}.name"),
                format!("rule `{name}` is defined twice"),
            ));
        }
        names.push(name);
    }
    for (i, r) in list.iter().enumerate() {
        let p = format!("{path}[{i}]");
        let r = obj(r, &p)?;
        let rule = rule(rs, r, &p, names[i], &names, team_defs)?;
        rs.rules.push(rule);
    }
    // A compound that reaches itself through others has no meaning (and
    // evaluating it would never end): refused, naming the chain.
    for start in 0..rs.rules.len() {
        if let Some(chain) = compound_cycle(&rs.rules, start) {
            let names: Vec<&str> = chain.iter().map(|&i| rs.rules[i].name.as_str()).collect();
            return Err(RulesetError::new(
                format!("rule `{}`", rs.rules[start].name),
                format!(
                    "the compound rule names itself through others: {}",
                    names.join(" -> ")
                ),
            ));
        }
    }
    // A rule a compound names is enforced only through the compound.
    let mut named = Vec::new();
    for r in &rs.rules {
        if let RuleKind::Compound { statement } = &r.kind {
            collect(statement, &mut named);
        }
    }
    for i in named {
        rs.rules[i].in_compound = true;
        if matches!(rs.rules[i].kind, RuleKind::Latency { .. }) {
            return Err(RulesetError::new(
                format!("rule `{}`", rs.rules[i].name),
                "(latency) inside a compound rule: mmsim enforces latency where a match is hosted, for every match",
            ));
        }
    }
    // A compound is team-free when every rule it names is.
    for i in 0..rs.rules.len() {
        if let RuleKind::Compound { statement } = &rs.rules[i].kind {
            let mut used = Vec::new();
            collect(statement, &mut used);
            rs.rules[i].team_free = used.iter().all(|&j| rs.rules[j].team_free);
        }
    }
    if rs
        .rules
        .iter()
        .filter(|r| matches!(r.kind, RuleKind::Latency { .. }))
        .count()
        > 1
    {
        return Err(RulesetError::new(
            path,
            "more than one latency rule: mmsim's [regions] has one latency limit",
        ));
    }
    Ok(())
}

/// A path of compound rules from `start` back to itself, if there is one.
fn compound_cycle(rules: &[Rule], start: usize) -> Option<Vec<usize>> {
    fn walk(rules: &[Rule], at: usize, start: usize, path: &mut Vec<usize>) -> bool {
        let RuleKind::Compound { statement } = &rules[at].kind else {
            return false;
        };
        let mut next = Vec::new();
        collect(statement, &mut next);
        for j in next {
            if j == start {
                path.push(j);
                return true;
            }
            if path.contains(&j) {
                continue;
            }
            path.push(j);
            if walk(rules, j, start, path) {
                return true;
            }
            path.pop();
        }
        false
    }
    let mut path = vec![start];
    walk(rules, start, start, &mut path).then_some(path)
}

fn collect(s: &Statement, out: &mut Vec<usize>) {
    match s {
        Statement::Rule(i) => out.push(*i),
        Statement::And(xs) | Statement::Or(xs) | Statement::Xor(xs) => {
            xs.iter().for_each(|x| collect(x, out))
        }
        Statement::Not(x) => collect(x, out),
    }
}

fn rule(
    rs: &mut Ruleset,
    r: &Obj,
    p: &str,
    name: &str,
    names: &[&str],
    team_defs: &[TeamDef],
) -> Result<Rule, RulesetError> {
    let kind = string(
        r.get("type")
            .ok_or_else(|| RulesetError::new(p, format!("rule `{name}` needs a `type`")))?,
        &format!("{p}.type"),
    )?;
    let what = format!("rule `{name}` ({kind})");
    let keys = |extra: &[&str]| -> Result<(), RulesetError> {
        let mut allowed = vec!["name", "type", "description"];
        allowed.extend_from_slice(extra);
        check_keys(r, p, &allowed, &what)
    };
    let expr_err = |field: &str, e: ExprError| {
        RulesetError::new(format!("{p}.{field}"), format!("{what}: {e}"))
    };
    let mut team_free = true;
    let measurements =
        |rs: &mut Ruleset, team_free: &mut bool| -> Result<Vec<Expr>, RulesetError> {
            let v = r
                .get("measurements")
                .ok_or_else(|| RulesetError::new(p, format!("{what} needs `measurements`")))?;
            let texts: Vec<&Value> = match v {
                Value::Array(xs) => xs.iter().collect(),
                other => vec![other],
            };
            let mut out = Vec::new();
            for t in texts {
                let s = string(t, &format!("{p}.measurements"))?;
                let e = parse_expr(s, rs, team_defs).map_err(|e| expr_err("measurements", e))?;
                *team_free &= e.team_free();
                out.push(e);
            }
            Ok(out)
        };
    let reference = |rs: &mut Ruleset,
                     team_free: &mut bool|
     -> Result<Option<Expr>, RulesetError> {
        match r.get("referenceValue") {
            None => Ok(None),
            Some(v @ Value::Number(_)) => {
                Ok(Some(Expr::Num(number(v, &format!("{p}.referenceValue"))?)))
            }
            Some(Value::String(s)) => {
                if let Ok(x) = s.trim().parse::<f64>() {
                    return Ok(Some(Expr::Num(x)));
                }
                let e = parse_expr(s, rs, team_defs).map_err(|e| expr_err("referenceValue", e))?;
                if !e.is_one_value() {
                    return Err(expr_err(
                        "referenceValue",
                        ExprError(format!("`{s}` gives a list; a reference is one value (aggregate it, e.g. avg(flatten(...)))")),
                    ));
                }
                *team_free &= e.team_free();
                Ok(Some(e))
            }
            Some(other) => Err(RulesetError::new(
                format!("{p}.referenceValue"),
                format!("{what}: expected a number or an expression, got {other}"),
            )),
        }
    };
    let steps = |k: &str| -> Result<Option<Steps>, RulesetError> {
        r.get(k)
            .map(|v| non_negative(v, &format!("{p}.{k}")).map(Steps::fixed))
            .transpose()
    };
    // Distance and comparison rules compare numbers.
    let numeric = |rs: &Ruleset, exprs: &[&Expr]| -> Result<(), RulesetError> {
        let mut used = Vec::new();
        exprs.iter().for_each(|e| e.attributes(&mut used));
        match used.iter().find(|&&a| rs.attributes[a].kind != "number") {
            Some(&a) => Err(RulesetError::new(
                format!("{p}.measurements"),
                format!(
                    "{what}: `{}` is a {}; this rule compares numbers",
                    rs.attributes[a].name, rs.attributes[a].kind
                ),
            )),
            None => Ok(()),
        }
    };
    let rule_kind = match kind {
        "distance" => {
            keys(&[
                "measurements",
                "referenceValue",
                "maxDistance",
                "minDistance",
                "partyAggregation",
            ])?;
            let measure = measurements(rs, &mut team_free)?;
            let reference = reference(rs, &mut team_free)?;
            numeric(rs, &measure.iter().chain(&reference).collect::<Vec<_>>())?;
            let (max, min) = (steps("maxDistance")?, steps("minDistance")?);
            if max.is_none() && min.is_none() {
                return Err(RulesetError::new(
                    p,
                    format!("{what} needs `maxDistance` or `minDistance`"),
                ));
            }
            RuleKind::Distance {
                measure,
                reference,
                max,
                min,
            }
        }
        "comparison" => {
            keys(&[
                "measurements",
                "referenceValue",
                "operation",
                "partyAggregation",
            ])?;
            let measure = measurements(rs, &mut team_free)?;
            let reference = reference(rs, &mut team_free)?;
            numeric(rs, &measure.iter().chain(&reference).collect::<Vec<_>>())?;
            let op_path = format!("{p}.operation");
            let op = match string(
                r.get("operation")
                    .ok_or_else(|| RulesetError::new(p, format!("{what} needs an `operation`")))?,
                &op_path,
            )? {
                "<" => CmpOp::Lt,
                "<=" => CmpOp::Le,
                "=" => CmpOp::Eq,
                "!=" => CmpOp::Ne,
                ">" => CmpOp::Gt,
                ">=" => CmpOp::Ge,
                other => {
                    return Err(RulesetError::new(
                        op_path,
                        format!("{what}: `{other}` is not one of <, <=, =, !=, >, >="),
                    ))
                }
            };
            if reference.is_none() && !matches!(op, CmpOp::Eq | CmpOp::Ne) {
                return Err(RulesetError::new(
                    op_path,
                    format!("{what}: without a referenceValue the operation must be = or !="),
                ));
            }
            RuleKind::Comparison {
                measure,
                reference,
                op,
            }
        }
        "batchDistance" => {
            keys(&["batchAttribute", "maxDistance", "partyAggregation"])?;
            let attr_name = string(
                r.get("batchAttribute").ok_or_else(|| {
                    RulesetError::new(p, format!("{what} needs a `batchAttribute`"))
                })?,
                &format!("{p}.batchAttribute"),
            )?;
            let attr = rs.attribute(attr_name, "number");
            if rs.attributes[attr].kind != "number" {
                return Err(RulesetError::new(
                    format!("{p}.batchAttribute"),
                    format!("{what}: `{attr_name}` is a {}; mmsim batches by numeric attributes only (no simulated player has a string attribute)", rs.attributes[attr].kind),
                ));
            }
            let max = steps("maxDistance")?
                .ok_or_else(|| RulesetError::new(p, format!("{what} needs `maxDistance`")))?;
            RuleKind::BatchDistance { attr, max }
        }
        "collection" => {
            keys(&[
                "measurements",
                "referenceValue",
                "operation",
                "minCount",
                "maxCount",
                "partyAggregation",
            ])?;
            let measure = measurements(rs, &mut team_free)?;
            let op_path = format!("{p}.operation");
            let op = match string(
                r.get("operation").ok_or_else(|| RulesetError::new(p, format!("{what} needs an `operation`")))?,
                &op_path,
            )? {
                "intersection" => CollOp::Intersection,
                "reference_intersection_count" => CollOp::ReferenceIntersectionCount,
                other => return Err(RulesetError::new(op_path, format!("{what}: mmsim does not simulate the `{other}` operation (it does intersection, reference_intersection_count)"))),
            };
            let reference = match (op, r.get("referenceValue")) {
                (CollOp::ReferenceIntersectionCount, Some(Value::Array(xs))) => xs
                    .iter()
                    .enumerate()
                    .map(|(i, x)| string(x, &format!("{p}.referenceValue[{i}]")).map(str::to_owned))
                    .collect::<Result<Vec<_>, _>>()?,
                (CollOp::ReferenceIntersectionCount, Some(Value::String(s))) => vec![s.clone()],
                (CollOp::ReferenceIntersectionCount, _) => {
                    return Err(RulesetError::new(
                        p,
                        format!("{what} needs a `referenceValue` list of names"),
                    ))
                }
                (CollOp::Intersection, None) => Vec::new(),
                (CollOp::Intersection, Some(_)) => {
                    return Err(RulesetError::new(
                        format!("{p}.referenceValue"),
                        format!("{what}: intersection takes no referenceValue"),
                    ))
                }
            };
            let mut used = Vec::new();
            measure.iter().for_each(|e| e.attributes(&mut used));
            used.sort_unstable();
            used.dedup();
            if used.len() != 1 || rs.attributes[used[0]].kind != "string_list" {
                return Err(RulesetError::new(
                    format!("{p}.measurements"),
                    format!("{what}: mmsim measures one string_list attribute per collection rule"),
                ));
            }
            let (min, max) = (steps("minCount")?, steps("maxCount")?);
            if min.is_none() && max.is_none() {
                return Err(RulesetError::new(
                    p,
                    format!("{what} needs `minCount` or `maxCount`"),
                ));
            }
            RuleKind::Collection {
                measure,
                op,
                reference,
                reference_bits: 0,
                min,
                max,
            }
        }
        "latency" => {
            keys(&["maxLatency", "partyAggregation"])?;
            if let Some(v) = r.get("partyAggregation") {
                if string(v, &format!("{p}.partyAggregation"))? != "max" {
                    return Err(RulesetError::new(
                        format!("{p}.partyAggregation"),
                        format!("{what}: mmsim judges a party by its worst member's ping (`max`), got {v}"),
                    ));
                }
            }
            let max = steps("maxLatency")?
                .ok_or_else(|| RulesetError::new(p, format!("{what} needs `maxLatency`")))?;
            RuleKind::Latency { max }
        }
        "compound" => {
            keys(&["statement"])?;
            let s = string(
                r.get("statement")
                    .ok_or_else(|| RulesetError::new(p, format!("{what} needs a `statement`")))?,
                &format!("{p}.statement"),
            )?;
            let statement =
                parse_statement(s, names, name).map_err(|e| expr_err("statement", e))?;
            RuleKind::Compound { statement }
        }
        other => {
            return Err(RulesetError::new(
                format!("rule `{name}`"),
                format!(
                    "has type `{other}`, which mmsim does not simulate (it simulates {RULE_TYPES})"
                ),
            ))
        }
    };
    let sets = matches!(rule_kind, RuleKind::Collection { .. });
    let party = if matches!(
        rule_kind,
        RuleKind::Latency { .. } | RuleKind::Compound { .. }
    ) {
        PartyAgg::Own
    } else {
        party(
            r.get("partyAggregation"),
            &format!("{p}.partyAggregation"),
            sets,
        )?
    };
    Ok(Rule {
        name: name.to_owned(),
        kind: rule_kind,
        party,
        in_compound: false,
        team_free,
    })
}

fn expansions(rs: &mut Ruleset, list: &[Value], path: &str) -> Result<(), RulesetError> {
    for (i, e) in list.iter().enumerate() {
        let p = format!("{path}[{i}]");
        let e = obj(e, &p)?;
        check_keys(e, &p, &["target", "steps"], "an expansion")?;
        let target = string(
            e.get("target")
                .ok_or_else(|| RulesetError::new(&p, "an expansion needs a `target`"))?,
            &format!("{p}.target"),
        )?;
        let steps_v = arr(
            e.get("steps")
                .ok_or_else(|| RulesetError::new(&p, "an expansion needs `steps`"))?,
            &format!("{p}.steps"),
        )?;
        if steps_v.is_empty() || steps_v.len() > MAX_STEPS {
            return Err(RulesetError::new(
                format!("{p}.steps"),
                format!("1 to {MAX_STEPS} steps, got {}", steps_v.len()),
            ));
        }
        let mut steps = Vec::new();
        for (k, s) in steps_v.iter().enumerate() {
            let sp = format!("{p}.steps[{k}]");
            let s = obj(s, &sp)?;
            check_keys(s, &sp, &["waitTimeSeconds", "value"], "an expansion step")?;
            let wait = non_negative(
                s.get("waitTimeSeconds")
                    .ok_or_else(|| RulesetError::new(&sp, "a step needs `waitTimeSeconds`"))?,
                &format!("{sp}.waitTimeSeconds"),
            )?;
            if wait > 86_400.0 {
                return Err(RulesetError::new(
                    format!("{sp}.waitTimeSeconds"),
                    "at most 86400 (a day)",
                ));
            }
            let value = non_negative(
                s.get("value")
                    .ok_or_else(|| RulesetError::new(&sp, "a step needs a `value`"))?,
                &format!("{sp}.value"),
            )?;
            if steps.last().is_some_and(|&(w, _)| wait <= w) {
                return Err(RulesetError::new(
                    format!("{sp}.waitTimeSeconds"),
                    "steps' waits must increase",
                ));
            }
            steps.push((wait, value));
        }
        apply_expansion(rs, target, steps, &format!("{p}.target"))?;
    }
    Ok(())
}

fn apply_expansion(
    rs: &mut Ruleset,
    target: &str,
    steps: Vec<(f64, f64)>,
    path: &str,
) -> Result<(), RulesetError> {
    let bad = |m: String| RulesetError::new(path, m);
    if let Some(rest) = target.strip_prefix("teams[") {
        let (team, prop) = rest
            .split_once("].")
            .ok_or_else(|| bad(format!("`{target}` is not `teams[NAME].PROPERTY`")))?;
        if prop == "minPlayers" {
            rs.notes.push(Note {
                field: format!("expansion {target}"),
                text: format!(
                    "no effect: mmsim forms full teams of {} (steps at {})",
                    rs.team_size,
                    steps
                        .iter()
                        .map(|(w, v)| format!("{w} s: {v}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            });
            let _ = team;
            return Ok(());
        }
        return Err(bad(format!(
            "`{target}`: mmsim expands only rules' values and teams' minPlayers (its team size is fixed)"
        )));
    }
    let rest = target.strip_prefix("rules[").ok_or_else(|| {
        bad(format!(
            "`{target}` is not `rules[NAME].PROPERTY` or `teams[NAME].minPlayers`"
        ))
    })?;
    let (name, prop) = rest
        .split_once("].")
        .ok_or_else(|| bad(format!("`{target}` is not `rules[NAME].PROPERTY`")))?;
    let rule = rs
        .rules
        .iter_mut()
        .find(|r| r.name == name)
        .ok_or_else(|| bad(format!("no rule is called `{name}`")))?;
    let what = format!("rule `{}` ({})", rule.name, rule.kind.type_name());
    let slot: Option<&mut Option<Steps>> = match (&mut rule.kind, prop) {
        (RuleKind::Distance { max, .. }, "maxDistance") => Some(max),
        (RuleKind::Distance { min, .. }, "minDistance") => Some(min),
        (RuleKind::Collection { max, .. }, "maxCount") => Some(max),
        (RuleKind::Collection { min, .. }, "minCount") => Some(min),
        (RuleKind::BatchDistance { max, .. }, "maxDistance")
        | (RuleKind::Latency { max }, "maxLatency") => {
            if !max.steps.is_empty() {
                return Err(bad(format!("{what}: `{prop}` is expanded twice")));
            }
            max.steps = steps;
            return Ok(());
        }
        _ => None,
    };
    let slot = slot.ok_or_else(|| {
        bad(format!("{what}: mmsim cannot expand `{prop}` (it expands maxDistance, minDistance, maxCount, minCount, maxLatency)"))
    })?;
    let s = slot
        .as_mut()
        .ok_or_else(|| bad(format!("{what} has no `{prop}` to expand")))?;
    if !s.steps.is_empty() {
        return Err(bad(format!("{what}: `{prop}` is expanded twice")));
    }
    s.steps = steps;
    Ok(())
}

fn configuration(rs: &mut Ruleset, c: &Obj) -> Result<(), RulesetError> {
    check_keys(
        c,
        "configuration",
        &[
            "name",
            "description",
            "ruleSetName",
            "acceptanceRequired",
            "acceptanceTimeoutSeconds",
            "backfillMode",
        ],
        "a matchmaking configuration",
    )?;
    let required = match c.get("acceptanceRequired") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(v) => {
            return Err(RulesetError::new(
                "configuration.acceptanceRequired",
                format!("expected true or false, got {v}"),
            ))
        }
    };
    if required {
        let t = c.get("acceptanceTimeoutSeconds").ok_or_else(|| {
            RulesetError::new(
                "configuration.acceptanceTimeoutSeconds",
                "needed when acceptanceRequired is true",
            )
        })?;
        let t = count(t, "configuration.acceptanceTimeoutSeconds", 1, 600)?;
        rs.service.acceptance_timeout_s = Some(t as f64);
    } else if c.contains_key("acceptanceTimeoutSeconds") {
        rs.notes.push(Note {
            field: "configuration.acceptanceTimeoutSeconds".into(),
            text: "no effect: acceptanceRequired is not true".into(),
        });
    }
    if let Some(v) = c.get("backfillMode") {
        rs.service.backfill = Some(match string(v, "configuration.backfillMode")? {
            "AUTOMATIC" => true,
            "MANUAL" => false,
            other => {
                return Err(RulesetError::new(
                    "configuration.backfillMode",
                    format!("`{other}` is not AUTOMATIC or MANUAL"),
                ))
            }
        });
    }
    Ok(())
}

// ---- property expressions ------------------------------------------------

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Num(f64),
    Open,
    Close,
    LBracket,
    RBracket,
    Dot,
    Comma,
}

/// Why an expression's or a statement's text could not be read: the
/// message quotes the text, and the caller prefixes the rule and key.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct ExprError(String);

impl From<String> for ExprError {
    fn from(message: String) -> Self {
        ExprError(message)
    }
}

fn tokens(s: &str) -> Result<Vec<Tok>, ExprError> {
    if s.len() > MAX_EXPR_CHARS {
        return Err(ExprError(format!(
            "longer than {MAX_EXPR_CHARS} characters"
        )));
    }
    let mut out = Vec::new();
    let cs: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < cs.len() {
        let c = cs[i];
        match c {
            ' ' | '\t' | '\n' => i += 1,
            '(' => (out.push(Tok::Open), i += 1).1,
            ')' => (out.push(Tok::Close), i += 1).1,
            '[' => (out.push(Tok::LBracket), i += 1).1,
            ']' => (out.push(Tok::RBracket), i += 1).1,
            '.' => (out.push(Tok::Dot), i += 1).1,
            ',' => (out.push(Tok::Comma), i += 1).1,
            '*' => (out.push(Tok::Ident("*".into())), i += 1).1,
            '\'' | '"' => {
                let end = cs[i + 1..]
                    .iter()
                    .position(|&x| x == c)
                    .ok_or_else(|| format!("unclosed quote in `{s}`"))?;
                out.push(Tok::Ident(cs[i + 1..i + 1 + end].iter().collect()));
                i += end + 2;
            }
            c if c.is_ascii_digit() || c == '-' => {
                let start = i;
                i += 1;
                while i < cs.len() && (cs[i].is_ascii_digit() || cs[i] == '.') {
                    i += 1;
                }
                let text: String = cs[start..i].iter().collect();
                out.push(Tok::Num(
                    text.parse()
                        .map_err(|_| format!("`{text}` is not a number"))?,
                ));
            }
            c if c.is_alphanumeric() || c == '_' || c == '-' => {
                let start = i;
                while i < cs.len() && (cs[i].is_alphanumeric() || cs[i] == '_' || cs[i] == '-') {
                    i += 1;
                }
                out.push(Tok::Ident(cs[start..i].iter().collect()));
            }
            other => return Err(ExprError(format!("unexpected `{other}` in `{s}`"))),
        }
    }
    Ok(out)
}

struct ExprParser<'a, 'r> {
    toks: Vec<Tok>,
    at: usize,
    text: &'a str,
    rs: &'r mut Ruleset,
    team_defs: &'a [TeamDef],
}

impl ExprParser<'_, '_> {
    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.at).cloned();
        self.at += 1;
        t
    }

    fn expect(&mut self, want: Tok) -> Result<(), ExprError> {
        match self.next() {
            Some(t) if t == want => Ok(()),
            got => Err(ExprError(format!(
                "expected {want:?} in `{}`, got {got:?}",
                self.text
            ))),
        }
    }

    fn ident(&mut self) -> Result<String, ExprError> {
        match self.next() {
            Some(Tok::Ident(s)) => Ok(s),
            got => Err(ExprError(format!(
                "expected a name in `{}`, got {got:?}",
                self.text
            ))),
        }
    }

    fn expr(&mut self, depth: usize) -> Result<Expr, ExprError> {
        if depth > MAX_DEPTH {
            return Err(ExprError(format!(
                "nested deeper than {MAX_DEPTH} in `{}`",
                self.text
            )));
        }
        match self.next() {
            Some(Tok::Num(x)) => Ok(Expr::Num(x)),
            Some(Tok::Ident(f)) if f == "teams" => {
                self.expect(Tok::LBracket)?;
                let team = self.ident()?;
                self.expect(Tok::RBracket)?;
                let teams = if team == "*" {
                    TeamSel::All
                } else if let Some(d) = self.team_defs.iter().find(|d| d.name == team) {
                    TeamSel::Range {
                        first: d.first,
                        count: d.count,
                    }
                } else if let Some(i) = self.rs.team_names.iter().position(|n| *n == team) {
                    TeamSel::Range { first: i, count: 1 }
                } else {
                    return Err(ExprError(format!(
                        "no team is called `{team}` in `{}`",
                        self.text
                    )));
                };
                self.expect(Tok::Dot)?;
                let players = self.ident()?;
                if players != "players" {
                    return Err(ExprError(format!(
                        "expected `players` after `teams[{team}].` in `{}`",
                        self.text
                    )));
                }
                if self.toks.get(self.at) != Some(&Tok::Dot) {
                    return Ok(Expr::Players { teams });
                }
                self.at += 1;
                let attrs = self.ident()?;
                if attrs != "attributes" {
                    return Err(ExprError(format!(
                        "mmsim reads `players.attributes[NAME]` and `players`, not `players.{attrs}`, in `{}`",
                        self.text
                    )));
                }
                self.expect(Tok::LBracket)?;
                let name = self.ident()?;
                self.expect(Tok::RBracket)?;
                let declared = self.rs.attributes.iter().position(|a| a.name == name);
                let attr = declared.ok_or_else(|| {
                    format!(
                        "attribute `{name}` is not in playerAttributes (in `{}`)",
                        self.text
                    )
                })?;
                Ok(Expr::Attr { teams, attr })
            }
            Some(Tok::Ident(f)) => {
                let func = match f.as_str() {
                    "flatten" => None,
                    "avg" => Some(AggFn::Avg),
                    "min" => Some(AggFn::Min),
                    "max" => Some(AggFn::Max),
                    "sum" => Some(AggFn::Sum),
                    "count" => Some(AggFn::Count),
                    "median" => Some(AggFn::Median),
                    other => {
                        return Err(ExprError(format!(
                            "mmsim does not evaluate `{other}` (it reads teams[..].players, .attributes[..], flatten, avg, min, max, sum, count, median) in `{}`",
                            self.text
                        )))
                    }
                };
                self.expect(Tok::Open)?;
                let inner = self.expr(depth + 1)?;
                self.expect(Tok::Close)?;
                Ok(match func {
                    None => Expr::Flatten(Box::new(inner)),
                    Some(f) => Expr::Agg(f, Box::new(inner)),
                })
            }
            got => Err(ExprError(format!("unexpected {got:?} in `{}`", self.text))),
        }
    }
}

fn parse_expr(s: &str, rs: &mut Ruleset, team_defs: &[TeamDef]) -> Result<Expr, ExprError> {
    let mut p = ExprParser {
        toks: tokens(s)?,
        at: 0,
        text: s,
        rs,
        team_defs,
    };
    let e = p.expr(0)?;
    if p.at != p.toks.len() {
        return Err(ExprError(format!(
            "unexpected text after the expression in `{s}`"
        )));
    }
    Ok(e)
}

fn parse_statement(s: &str, names: &[&str], own: &str) -> Result<Statement, ExprError> {
    let toks = tokens(s)?;
    let mut at = 0;
    fn go(
        toks: &[Tok],
        at: &mut usize,
        names: &[&str],
        own: &str,
        text: &str,
        depth: usize,
    ) -> Result<Statement, ExprError> {
        if depth > MAX_DEPTH {
            return Err(ExprError(format!(
                "nested deeper than {MAX_DEPTH} in `{text}`"
            )));
        }
        let Some(Tok::Ident(word)) = toks.get(*at).cloned() else {
            return Err(ExprError(format!(
                "expected a rule name or and/or/xor/not in `{text}`"
            )));
        };
        *at += 1;
        if toks.get(*at) != Some(&Tok::Open) {
            if word == own {
                return Err(ExprError(format!(
                    "the compound rule names itself in `{text}`"
                )));
            }
            let i = names
                .iter()
                .position(|n| *n == word)
                .ok_or_else(|| format!("no rule is called `{word}` in `{text}`"))?;
            return Ok(Statement::Rule(i));
        }
        *at += 1;
        let mut args = Vec::new();
        loop {
            args.push(go(toks, at, names, own, text, depth + 1)?);
            match toks.get(*at) {
                Some(Tok::Comma) => *at += 1,
                Some(Tok::Close) => {
                    *at += 1;
                    break;
                }
                _ => return Err(ExprError(format!("expected `,` or `)` in `{text}`"))),
            }
        }
        Ok(match word.as_str() {
            "and" => Statement::And(args),
            "or" => Statement::Or(args),
            "xor" => Statement::Xor(args),
            "not" if args.len() == 1 => Statement::Not(Box::new(args.remove(0))),
            "not" => return Err(ExprError(format!("`not` takes one statement in `{text}`"))),
            other => {
                return Err(ExprError(format!(
                    "`{other}` is not and, or, xor or not in `{text}`"
                )))
            }
        })
    }
    let st = go(&toks, &mut at, names, own, s, 0)?;
    if at != toks.len() {
        return Err(ExprError(format!(
            "unexpected text after the statement in `{s}`"
        )));
    }
    if matches!(st, Statement::Rule(_)) {
        return Err(ExprError(format!(
            "a compound statement is and/or/xor/not of rules, got `{s}`"
        )));
    }
    Ok(st)
}
