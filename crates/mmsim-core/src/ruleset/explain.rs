//! `mmsim explain-ruleset`: what mmsim understood of a ruleset, rule by
//! rule, in plain text (the rule, its type, what it becomes in mmsim, its
//! expansion steps with their seconds).

use super::{
    AgeSelection, CollOp, Expr, PartyAgg, RuleKind, Ruleset, Source, Statement, Steps, TeamSel,
};
use std::fmt::Write as _;

fn expr(e: &Expr, rs: &Ruleset) -> String {
    let teams = |t: &TeamSel| match t {
        TeamSel::All => "*".to_string(),
        TeamSel::Range { first, count: 1 } => rs.team_names[*first].clone(),
        TeamSel::Range { first, count } => format!(
            "{}..{}",
            rs.team_names[*first],
            rs.team_names[first + count - 1]
        ),
    };
    match e {
        Expr::Num(x) => format!("{x}"),
        Expr::Attr { teams: t, attr } => format!(
            "teams[{}].players.attributes[{}]",
            teams(t),
            rs.attributes[*attr].name
        ),
        Expr::Players { teams: t } => format!("teams[{}].players", teams(t)),
        Expr::Flatten(inner) => format!("flatten({})", expr(inner, rs)),
        Expr::Agg(f, inner) => format!("{}({})", f.name(), expr(inner, rs)),
    }
}

fn steps(s: &Steps, unit: &str) -> String {
    let mut out = format!("{}{unit}", s.base);
    for (w, v) in &s.steps {
        let _ = write!(out, ", {v}{unit} from {w} s");
    }
    out
}

fn statement(s: &Statement, rs: &Ruleset) -> String {
    let list = |xs: &[Statement]| {
        xs.iter()
            .map(|x| statement(x, rs))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match s {
        Statement::Rule(i) => rs.rules[*i].name.clone(),
        Statement::And(xs) => format!("and({})", list(xs)),
        Statement::Or(xs) => format!("or({})", list(xs)),
        Statement::Xor(xs) => format!("xor({})", list(xs)),
        Statement::Not(x) => format!("not({})", statement(x, rs)),
    }
}

fn party(p: PartyAgg) -> &'static str {
    match p {
        PartyAgg::Own => "each player's own value",
        PartyAgg::Avg => "a party's members take its average",
        PartyAgg::Min => "a party's members take its minimum",
        PartyAgg::Max => "a party's members take its maximum",
        PartyAgg::Union => "a party's members take the union of its sets",
        PartyAgg::Intersection => "a party's members take what they all have",
    }
}

/// Why the population cannot supply an attribute a rule reads (no
/// attribute by that name, or one the scenario does not draw), as
/// `explain-ruleset` prints it after "not supplied:".
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct Unsupplied(pub String);

/// The explanation, one block per rule. `mapping` says, for each attribute
/// a rule reads, where the population supplies it (or why it cannot).
pub fn explain(rs: &Ruleset, mapping: &[(String, Result<Source, Unsupplied>)]) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{} ruleset{}",
        rs.vendor.label(),
        if rs.name.is_empty() {
            String::new()
        } else {
            format!(" `{}`", rs.name)
        }
    );
    let _ = writeln!(
        o,
        "format: {} teams of {} ({}) -> match.teams = {}, match.team_size = {}",
        rs.teams,
        rs.team_size,
        rs.team_names.join(", "),
        rs.teams,
        rs.team_size
    );
    let _ = writeln!(
        o,
        "expansions follow the {} ticket's wait",
        match rs.age {
            AgeSelection::Newest => "newest",
            AgeSelection::Oldest => "oldest",
        }
    );
    if !mapping.is_empty() {
        let _ = writeln!(o, "attributes:");
        for (name, m) in mapping {
            let _ = match m {
                Ok(s) => writeln!(o, "  {name} <- the player's {}", describe(*s)),
                Err(e) => writeln!(o, "  {name} <- not supplied: {e}"),
            };
        }
    }
    let _ = writeln!(o, "rules:");
    for r in &rs.rules {
        let _ = writeln!(o, "  {} ({})", r.name, r.kind.type_name());
        let becomes = match &r.kind {
            RuleKind::Distance {
                measure,
                reference,
                max,
                min,
            } => {
                let m: Vec<String> = measure.iter().map(|e| expr(e, rs)).collect();
                let mut s = match reference {
                    Some(rf) => format!(
                        "the distance from each value of {} to {}",
                        m.join(", "),
                        expr(rf, rs)
                    ),
                    None => format!("the distance between any two values of {}", m.join(", ")),
                };
                if let Some(x) = max {
                    let _ = write!(s, ": at most {}", steps(x, ""));
                }
                if let Some(x) = min {
                    let _ = write!(s, "; at least {}", steps(x, ""));
                }
                s
            }
            RuleKind::Comparison {
                measure,
                reference,
                op,
            } => {
                let m: Vec<String> = measure.iter().map(|e| expr(e, rs)).collect();
                match reference {
                    Some(rf) => format!("every value of {} {} {}", m.join(", "), op.symbol(), expr(rf, rs)),
                    None => format!(
                        "the values of {} all {}",
                        m.join(", "),
                        if op.symbol() == "=" { "equal" } else { "different" }
                    ),
                }
            }
            RuleKind::BatchDistance { attr, max } => format!(
                "every player's {} within {} of every other's",
                rs.attributes[*attr].name,
                steps(max, "")
            ),
            RuleKind::Collection {
                measure,
                op,
                reference,
                min,
                max,
                ..
            } => {
                let m: Vec<String> = measure.iter().map(|e| expr(e, rs)).collect();
                let what = match op {
                    CollOp::Intersection => format!("names common to every set of {}", m.join(", ")),
                    CollOp::ReferenceIntersectionCount => format!(
                        "entries of {} among [{}]",
                        m.join(", "),
                        reference.join(", ")
                    ),
                };
                let mut s = format!("count of {what}");
                if let Some(x) = min {
                    let _ = write!(s, "; at least {}", steps(x, ""));
                }
                if let Some(x) = max {
                    let _ = write!(s, "; at most {}", steps(x, ""));
                }
                s
            }
            RuleKind::Latency { max } => format!(
                "[regions] max_ping_ms and expansions: {} (a party is judged by its worst ping; each ticket's own wait sets its limit)",
                steps(max, " ms")
            ),
            RuleKind::Compound { statement: st } => {
                format!("{} must hold", statement(st, rs))
            }
        };
        let _ = writeln!(o, "    becomes: {becomes}");
        if !matches!(r.kind, RuleKind::Latency { .. } | RuleKind::Compound { .. }) {
            let _ = writeln!(o, "    parties: {}", party(r.party));
        }
        let when = if r.in_compound {
            "only through the compound rule that names it"
        } else if matches!(r.kind, RuleKind::Latency { .. }) {
            "by the engine where a match is hosted"
        } else if r.team_free {
            "on every ticket as a match grows, and on the full match"
        } else {
            "on the full match, teams split by rating"
        };
        let _ = writeln!(o, "    checked: {when}");
    }
    if let Some(roles) = &rs.roles {
        let _ = writeln!(
            o,
            "roles: {} per team -> [roles] composition",
            roles
                .iter()
                .map(|(n, k)| format!("{k} {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    match rs.service.acceptance_timeout_s {
        Some(t) => {
            let _ = writeln!(o, "acceptance: required, timeout {t} s -> [acceptance] timeout (players' accept_prob from the scenario)");
        }
        None => {
            let _ = writeln!(o, "acceptance: not required -> no ready check");
        }
    }
    if let Some(b) = rs.service.backfill {
        let _ = writeln!(
            o,
            "backfill: {} -> [backfill] fill = {b} (players' leave_per_min from the scenario)",
            if b { "automatic" } else { "manual (none)" }
        );
    }
    if !rs.notes.is_empty() {
        let _ = writeln!(o, "notes:");
        for n in &rs.notes {
            let _ = writeln!(o, "  {}: {}", n.field, n.text);
        }
    }
    o
}

fn describe(s: Source) -> &'static str {
    match s {
        Source::Rating => "rating (the rating system's current value)",
        Source::Games => "games played",
        Source::Tier => "vehicle tier",
        Source::WinRate => "shown win rate",
        Source::Languages => "languages (population.languages names)",
        Source::Roles => "roles ([roles] names)",
        Source::Latency => "pings from [regions]",
    }
}
