//! The team-free rules of a growing match, kept as running totals: a match
//! grows one ticket at a time and its rules are asked about every
//! candidate, so re-reading every player chosen so far for each candidate
//! makes a growth quadratic in the match's size. The shapes the vendors'
//! team-free rules take (an aggregate over every player, a batch distance,
//! a count of names over every player) fold ticket by ticket; a ruleset
//! with any other team-free shape is checked by `Ruleset::passes` instead.
//!
//! The totals are taken in the order the value tree takes its leaves
//! (tickets in order, members in order), so every figure, and so every
//! verdict, is the tree's to the bit (`folded_rules_judge_as_the_tree`).

use super::eval::{
    comparison_holds, distance_holds, member_number, member_value, reduce, within, CandTicket,
    Scalar,
};
use super::{AggFn, CmpOp, CollOp, Expr, PartyAgg, RuleKind, Ruleset, Source, Steps, TeamSel};
use smallvec::SmallVec;

/// Running totals of one number over every player so far.
#[derive(Clone, Copy, Debug)]
struct Totals {
    sum: f64,
    min: f64,
    max: f64,
    n: usize,
}

impl Totals {
    /// As `Iterator::sum` and the folds of `reduce` start.
    const EMPTY: Totals = Totals {
        sum: -0.0,
        min: f64::INFINITY,
        max: f64::NEG_INFINITY,
        n: 0,
    };

    fn add(&mut self, x: f64) {
        self.sum += x;
        self.min = self.min.min(x);
        self.max = self.max.max(x);
        self.n += 1;
    }

    /// `reduce(f, xs)` (and `count`) of the values added.
    fn of(&self, f: AggFn) -> f64 {
        if self.n == 0 {
            return if f == AggFn::Count {
                0.0
            } else {
                reduce(f, &[])
            };
        }
        match f {
            AggFn::Avg => self.sum / self.n as f64,
            AggFn::Min => self.min,
            AggFn::Max => self.max,
            AggFn::Sum => self.sum,
            AggFn::Count => self.n as f64,
            AggFn::Median => unreachable!("a median does not fold"),
        }
    }
}

/// A number a rule reads: a constant, or aggregates over every player's
/// number from `source` (the innermost first, then each outer one applied
/// to that one value).
#[derive(Clone, Debug)]
enum Term {
    Num(f64),
    Over {
        source: Source,
        aggs: SmallVec<[AggFn; 2]>,
        totals: Totals,
    },
}

impl Term {
    /// `agg(flatten(teams[*].players.attributes[a]))`, possibly under more
    /// aggregates, or a constant; `None` for any other shape.
    fn read(e: &Expr, rs: &Ruleset) -> Option<Term> {
        match e {
            Expr::Num(x) => Some(Term::Num(*x)),
            Expr::Agg(f, inner) => match &**inner {
                Expr::Flatten(attr) => {
                    let Expr::Attr {
                        teams: TeamSel::All,
                        attr,
                    } = **attr
                    else {
                        return None;
                    };
                    let source = rs.attributes[attr]
                        .source
                        .filter(|s| !s.is_set() && *s != Source::Latency)?;
                    (*f != AggFn::Median).then(|| Term::Over {
                        source,
                        aggs: smallvec::smallvec![*f],
                        totals: Totals::EMPTY,
                    })
                }
                Expr::Agg(..) => match Term::read(inner, rs)? {
                    Term::Num(x) => Some(Term::Num(x)),
                    Term::Over {
                        source,
                        mut aggs,
                        totals,
                    } => {
                        aggs.push(*f);
                        Some(Term::Over {
                            source,
                            aggs,
                            totals,
                        })
                    }
                },
                _ => None,
            },
            _ => None,
        }
    }

    fn add(&mut self, t: &CandTicket<'_>, agg: PartyAgg) {
        if let Term::Over { source, totals, .. } = self {
            for i in 0..t.players.len() {
                totals.add(member_number(t, i, *source, agg));
            }
        }
    }

    /// The value with `t`'s players added (`None`: as it stands).
    fn value(&self, t: Option<&CandTicket<'_>>, agg: PartyAgg) -> f64 {
        match self {
            Term::Num(x) => *x,
            Term::Over {
                source,
                aggs,
                totals,
            } => {
                let mut totals = *totals;
                if let Some(t) = t {
                    for i in 0..t.players.len() {
                        totals.add(member_number(t, i, *source, agg));
                    }
                }
                // An aggregate of one value is the value (a count, 1).
                aggs[1..].iter().fold(
                    totals.of(aggs[0]),
                    |x, f| {
                        if *f == AggFn::Count {
                            1.0
                        } else {
                            x
                        }
                    },
                )
            }
        }
    }
}

/// One team-free rule, folded (its limits are read from the rule).
#[derive(Clone, Debug)]
enum Folded {
    Distance {
        measure: SmallVec<[Term; 2]>,
        reference: Option<Term>,
    },
    Comparison {
        measure: SmallVec<[Term; 2]>,
        reference: Option<Term>,
        op: CmpOp,
    },
    /// Every player's number within `max` of every other's: their range.
    Batch {
        source: Source,
        totals: Totals,
        /// A member without a number fails the rule, as in the tree.
        broken: bool,
    },
    /// A count of names over every player (one unit: the list is
    /// flattened over all teams).
    Names {
        source: Source,
        op: CollOp,
        reference_bits: u64,
        count: u32,
        and: u64,
    },
}

/// A rule's lower and upper limits (a batch distance has only an upper).
fn limits(kind: &RuleKind) -> (Option<&Steps>, Option<&Steps>) {
    match kind {
        RuleKind::Distance { min, max, .. } | RuleKind::Collection { min, max, .. } => {
            (min.as_ref(), max.as_ref())
        }
        RuleKind::BatchDistance { max, .. } => (None, Some(max)),
        _ => (None, None),
    }
}

/// Counts a member's names into a collection rule's totals, reading a
/// value that is not a list of names as none, as the tree does.
fn names(v: Scalar, reference_bits: u64, count: &mut u32, and: &mut u64) {
    let b = if let Scalar::Set(b) = v { b } else { 0 };
    *count += (b & reference_bits).count_ones();
    *and &= b;
}

/// The team-free rules of a match as it grows, folded: built from the
/// seed's ticket, told of each ticket taken (`add`), and asked about each
/// candidate (`passes_with`).
#[derive(Clone, Debug)]
pub struct Growing {
    /// Each folded rule, its party aggregation and its index in the
    /// ruleset's rules.
    rules: Vec<(Folded, PartyAgg, usize)>,
}

impl Growing {
    /// The folded team-free rules of `rs`, or `None` if one of them (not
    /// named by a compound) has a shape that does not fold.
    pub fn new(rs: &Ruleset) -> Option<Growing> {
        let mut rules = Vec::new();
        for (i, r) in rs.rules.iter().enumerate() {
            if r.in_compound || !r.team_free {
                continue;
            }
            let terms = |exprs: &[Expr]| -> Option<SmallVec<[Term; 2]>> {
                exprs.iter().map(|e| Term::read(e, rs)).collect()
            };
            let folded = match &r.kind {
                RuleKind::Distance {
                    measure, reference, ..
                } => Folded::Distance {
                    measure: terms(measure)?,
                    reference: match reference {
                        Some(e) => Some(Term::read(e, rs)?),
                        None => None,
                    },
                },
                RuleKind::Comparison {
                    measure,
                    reference,
                    op,
                } => Folded::Comparison {
                    measure: terms(measure)?,
                    reference: match reference {
                        Some(e) => Some(Term::read(e, rs)?),
                        None => None,
                    },
                    op: *op,
                },
                RuleKind::BatchDistance { attr, .. } => Folded::Batch {
                    source: rs.attributes[*attr].source.unwrap_or(Source::Latency),
                    totals: Totals::EMPTY,
                    broken: false,
                },
                RuleKind::Collection {
                    measure,
                    op,
                    reference_bits,
                    ..
                } => {
                    let [Expr::Flatten(inner)] = &measure[..] else {
                        return None;
                    };
                    let Expr::Attr {
                        teams: TeamSel::All,
                        attr,
                    } = **inner
                    else {
                        return None;
                    };
                    Folded::Names {
                        source: rs.attributes[attr].source.filter(|s| s.is_set())?,
                        op: *op,
                        reference_bits: *reference_bits,
                        count: 0,
                        and: u64::MAX,
                    }
                }
                RuleKind::Latency { .. } => continue,
                RuleKind::Compound { .. } => return None,
            };
            rules.push((folded, r.party, i));
        }
        Some(Growing { rules })
    }

    /// Forgets every ticket added: the totals of a match not yet begun.
    pub fn clear(&mut self) {
        for (rule, _, _) in &mut self.rules {
            match rule {
                Folded::Distance { measure, reference }
                | Folded::Comparison {
                    measure, reference, ..
                } => {
                    for t in measure.iter_mut().chain(reference.as_mut()) {
                        if let Term::Over { totals, .. } = t {
                            *totals = Totals::EMPTY;
                        }
                    }
                }
                Folded::Batch { totals, broken, .. } => {
                    *totals = Totals::EMPTY;
                    *broken = false;
                }
                Folded::Names { count, and, .. } => {
                    *count = 0;
                    *and = u64::MAX;
                }
            }
        }
    }

    /// Adds a ticket the match took.
    pub fn add(&mut self, t: &CandTicket<'_>) {
        for (rule, agg, _) in &mut self.rules {
            let agg = *agg;
            match rule {
                Folded::Distance {
                    measure, reference, ..
                }
                | Folded::Comparison {
                    measure, reference, ..
                } => {
                    measure.iter_mut().for_each(|m| m.add(t, agg));
                    if let Some(r) = reference {
                        r.add(t, agg);
                    }
                }
                Folded::Batch {
                    source,
                    totals,
                    broken,
                    ..
                } => {
                    for i in 0..t.players.len() {
                        match member_value(t, i, *source, agg) {
                            Scalar::Num(x) => totals.add(x),
                            _ => *broken = true,
                        }
                    }
                }
                Folded::Names {
                    source,
                    reference_bits,
                    count,
                    and,
                    ..
                } => {
                    for i in 0..t.players.len() {
                        names(
                            member_value(t, i, *source, agg),
                            *reference_bits,
                            count,
                            and,
                        );
                    }
                }
            }
        }
    }

    /// Whether every team-free rule of `rs` (the ruleset this was built
    /// from) passes for the match with `t` added (`None`: as it stands),
    /// expansions at `age_s`: what `rs.passes(.., age_s, true)` says of
    /// that match.
    pub fn passes_with(&self, rs: &Ruleset, t: Option<&CandTicket<'_>>, age_s: f64) -> bool {
        self.rules.iter().all(|(rule, agg, i)| {
            let agg = *agg;
            let (min, max) = limits(&rs.rules[*i].kind);
            match rule {
                Folded::Distance { measure, reference } => {
                    let xs: SmallVec<[f64; 4]> = measure.iter().map(|m| m.value(t, agg)).collect();
                    let r = reference.as_ref().map(|r| r.value(t, agg));
                    distance_holds(&xs, r, min, max, age_s)
                }
                Folded::Comparison {
                    measure,
                    reference,
                    op,
                } => {
                    let xs: SmallVec<[f64; 4]> = measure.iter().map(|m| m.value(t, agg)).collect();
                    let r = reference.as_ref().map(|r| r.value(t, agg));
                    comparison_holds(&xs, r, *op)
                }
                Folded::Batch {
                    source,
                    totals,
                    broken,
                } => {
                    let mut totals = *totals;
                    if let Some(t) = t {
                        for i in 0..t.players.len() {
                            match member_value(t, i, *source, agg) {
                                Scalar::Num(x) => totals.add(x),
                                _ => return false,
                            }
                        }
                    }
                    let max = max.expect("a batch distance has a limit");
                    !broken && totals.max - totals.min <= max.at(age_s)
                }
                Folded::Names {
                    source,
                    op,
                    reference_bits,
                    count,
                    and,
                } => {
                    let (mut count, mut and) = (*count, *and);
                    if let Some(t) = t {
                        for i in 0..t.players.len() {
                            let v = member_value(t, i, *source, agg);
                            names(v, *reference_bits, &mut count, &mut and);
                        }
                    }
                    let n = match op {
                        CollOp::Intersection => and.count_ones(),
                        CollOp::ReferenceIntersectionCount => count,
                    };
                    within(f64::from(n), min, max, age_s)
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Player, PlayerId, Rating};
    use crate::ruleset::Candidate;
    use rand::{Rng, SeedableRng};
    use rand_pcg::Pcg64;

    fn bound(json: &str) -> Ruleset {
        let mut rs = Ruleset::parse(json).unwrap_or_else(|e| panic!("{e}"));
        rs.bind(
            |a| match a {
                "character" => Some(Source::Roles),
                other => Source::by_convention(other),
            },
            |s| match s {
                Source::Roles => Some(vec!["peasant".into(), "medic".into(), "archer".into()]),
                _ => Some(vec!["en".into(), "fr".into(), "de".into()]),
            },
        )
        .unwrap_or_else(|e| panic!("{e}"));
        rs
    }

    /// A FlexMatch ruleset of three teams of five with one rule, which a
    /// 20 s expansion widens if it has a `maxDistance`.
    fn flex(rule: &str) -> Ruleset {
        let widen = if rule.contains("maxDistance") {
            let name = rule.split('"').nth(3).expect("a named rule");
            format!(
                r#", "expansions": [{{ "target": "rules[{name}].maxDistance",
                     "steps": [{{ "waitTimeSeconds": 20, "value": 400 }}] }}]"#
            )
        } else {
            String::new()
        };
        bound(&format!(
            r#"{{ "ruleLanguageVersion": "1.0",
                 "playerAttributes": [{{ "name": "skill" }}, {{ "name": "character", "type": "string_list" }},
                     {{ "name": "languages", "type": "string_list" }}],
                 "teams": [{{ "name": "t", "maxPlayers": 5, "quantity": 3 }}],
                 "rules": [{rule}]{widen} }}"#
        ))
    }

    /// Rulesets whose team-free rules fold: AccelByte's distance over party
    /// averages with a flexing step, FlexMatch's name counts, a batch
    /// distance, comparisons over nested aggregates and constants.
    fn rulesets() -> Vec<Ruleset> {
        vec![
            bound(
                r#"{ "alliance": { "min_number": 2, "max_number": 2, "player_min_number": 5, "player_max_number": 5,
                     "matching_rule": [{ "attribute": "mmr", "criteria": "distance", "reference": 100 }] },
                     "flexing_rule": [{ "duration": 30, "attribute": "mmr", "criteria": "distance", "reference": 300 }] }"#,
            ),
            flex(
                r#"{ "name": "Medics", "type": "collection", "operation": "reference_intersection_count",
                     "measurements": ["flatten(teams[*].players.attributes[character])"],
                     "referenceValue": ["medic"], "maxCount": 3 }"#,
            ),
            flex(
                r#"{ "name": "Talk", "type": "collection", "operation": "intersection",
                     "measurements": ["flatten(teams[*].players.attributes[languages])"], "minCount": 1 }"#,
            ),
            flex(
                r#"{ "name": "Close", "type": "batchDistance", "batchAttribute": "skill", "maxDistance": 150 }"#,
            ),
            bound(
                r#"{ "ruleLanguageVersion": "1.0",
                     "playerAttributes": [{ "name": "skill" }],
                     "algorithm": { "expansionAgeSelection": "oldest" },
                     "teams": [{ "name": "t", "maxPlayers": 4, "quantity": 2 }],
                     "rules": [
                       { "name": "NotTooGood", "type": "comparison", "operation": "<=",
                         "measurements": ["avg(flatten(teams[*].players.attributes[skill]))"],
                         "referenceValue": 1600 },
                       { "name": "Spread", "type": "distance",
                         "measurements": ["max(flatten(teams[*].players.attributes[skill]))", "sum(flatten(teams[*].players.attributes[skill]))"],
                         "referenceValue": "min(flatten(teams[*].players.attributes[skill]))",
                         "maxDistance": 12000, "minDistance": 20 },
                       { "name": "Pair", "type": "distance",
                         "measurements": ["avg(flatten(teams[*].players.attributes[skill]))", "count(count(flatten(teams[*].players.attributes[skill])))", "1500"],
                         "maxDistance": 1600 },
                       { "name": "Few", "type": "comparison", "operation": "<",
                         "measurements": ["count(flatten(teams[*].players.attributes[skill]))"],
                         "referenceValue": 7 }],
                     "expansions": [{ "target": "rules[Spread].maxDistance",
                         "steps": [{ "waitTimeSeconds": 10, "value": 14000 }] }] }"#,
            ),
        ]
    }

    #[test]
    fn folded_rules_judge_as_the_tree() {
        let mut rng = Pcg64::seed_from_u64(3);
        for rs in rulesets() {
            let mut judged = [0usize; 2];
            assert!(Growing::new(&rs).is_some(), "{} folds", rs.name);
            for _ in 0..300 {
                // A match of up to eight tickets of one to three players.
                let n = rng.random_range(1..9);
                let mut players = Vec::new();
                let mut sizes = Vec::new();
                for _ in 0..n {
                    let size = rng.random_range(1..4);
                    let party = 1500.0 + rng.random_range(-200.0..200.0_f64);
                    for _ in 0..size {
                        let r = party + rng.random_range(-50.0..50.0_f64);
                        let mut p = Player::new(
                            PlayerId(players.len() as u32),
                            r,
                            Rating::new(r, 50.0, 0.06),
                        );
                        p.party_rating = Rating::new(party, 50.0, 0.06);
                        p.roles = rng.random_range(1..8);
                        // Mostly English, some also French or German.
                        p.languages = 1 | (rng.random_range(0..8) & rng.random_range(0..8));
                        if rng.random_bool(0.1) {
                            p.languages = 2;
                        }
                        players.push(p);
                    }
                    sizes.push(size);
                }
                let mut next = 0;
                let tickets: Vec<CandTicket<'_>> = sizes
                    .iter()
                    .map(|&size| {
                        let t = CandTicket {
                            team: 0,
                            players: players[next..next + size].iter().collect(),
                        };
                        next += size;
                        t
                    })
                    .collect();
                let age = rng.random_range(0.0..40.0);
                let mut g = Growing::new(&rs).expect("folds");
                let mut partial = Candidate {
                    teams: rs.teams,
                    tickets: Vec::new(),
                };
                for t in &tickets {
                    if !partial.tickets.is_empty() {
                        partial.tickets.push(t.clone());
                        let tree = rs.passes(&partial, age, true);
                        partial.tickets.pop();
                        assert_eq!(g.passes_with(&rs, Some(t), age), tree, "{}", rs.name);
                        judged[usize::from(tree)] += 1;
                    }
                    g.add(t);
                    partial.tickets.push(t.clone());
                    assert_eq!(
                        g.passes_with(&rs, None, age),
                        rs.passes(&partial, age, true)
                    );
                }
            }
            // Both verdicts were reached often: the test can tell them apart.
            assert!(judged.iter().all(|&n| n > 100), "{}: {judged:?}", rs.name);
        }
    }

    #[test]
    fn a_median_or_a_count_of_players_does_not_fold() {
        let rs = bound(
            r#"{ "ruleLanguageVersion": "1.0", "playerAttributes": [{ "name": "skill" }],
                 "teams": [{ "name": "t", "maxPlayers": 4, "quantity": 2 }],
                 "rules": [{ "name": "M", "type": "comparison", "operation": "<=",
                     "measurements": ["median(flatten(teams[*].players.attributes[skill]))"],
                     "referenceValue": 1600 }] }"#,
        );
        assert!(rs.rules[0].team_free);
        assert!(Growing::new(&rs).is_none());
    }
}
