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
    comparison_holds, distance_holds, member_number, member_value, reduce, solo_number, solo_value,
    within, CandTicket, Scalar,
};
use super::{AggFn, CmpOp, CollOp, Expr, PartyAgg, RuleKind, Ruleset, Source, Steps, TeamSel};
use crate::model::Player;
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
            add_members(totals, t, *source, agg);
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
                    add_members(&mut totals, t, *source, agg);
                }
                Term::of_totals(aggs, &totals)
            }
        }
    }

    /// The value an `Over` term with aggregates `aggs` reads from `totals`.
    fn of_totals(aggs: &[AggFn], totals: &Totals) -> f64 {
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

    /// The totals with a solo ticket of player `p` added (`None` for a
    /// constant), as `add` would make them.
    fn totals_with_solo(&self, p: &Player, agg: PartyAgg) -> Option<Totals> {
        match self {
            Term::Num(_) => None,
            Term::Over { source, totals, .. } => {
                let mut totals = *totals;
                totals.add(solo_number(p, *source, agg));
                Some(totals)
            }
        }
    }

    /// `value` read from the totals `totals_with_solo` gave.
    fn value_from(&self, totals: Option<&Totals>) -> f64 {
        match (self, totals) {
            (Term::Over { aggs, .. }, Some(totals)) => Term::of_totals(aggs, totals),
            (Term::Num(x), _) => *x,
            (Term::Over { .. }, None) => unreachable!("an aggregate term has totals"),
        }
    }
}

/// A folded rule's totals with a candidate added, worked out to judge it
/// and kept to be written back if it is taken (`Growing::take_solo_if`).
enum Staged {
    Totals(Totals),
    Names(u32, u64),
    /// Each `Over` term's, measure terms first, then the reference (most
    /// distance rules have one of each).
    Terms(SmallVec<[Totals; 2]>),
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
    /// `max(flatten(a))` measured against `min(flatten(a))` (or the other
    /// way round): every player's number within the limits of every
    /// other's, AccelByte's distance and FlexMatch's close-skill shape.
    /// Both terms fold the same numbers in the same order, so one range
    /// stands for both, and each member's number is read once.
    Spread {
        source: Source,
        totals: Totals,
        /// Whether the measurement is the maximum (the reference the
        /// minimum).
        max_first: bool,
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

impl Folded {
    /// A spread-shaped rule's source, a copy of its running range and
    /// whether it measures the maximum against the minimum; `None` for
    /// any other shape.
    fn as_spread(&self) -> Option<(Source, Totals, bool)> {
        match *self {
            Folded::Spread {
                source,
                totals,
                max_first,
            } => Some((source, totals, max_first)),
            _ => None,
        }
    }
}

impl Folded {
    /// The spread shape of a distance rule's terms, if they have it: one
    /// maximum measured against the minimum of the same source.
    fn spread(measure: &[Term], reference: Option<&Term>) -> Option<Folded> {
        let over = |t: &Term| match t {
            Term::Over { source, aggs, .. } if aggs.len() == 1 => Some((*source, aggs[0])),
            _ => None,
        };
        let ([m], Some(r)) = (measure, reference) else {
            return None;
        };
        let ((source, fm), (rsource, fr)) = (over(m)?, over(r)?);
        let max_first = match (fm, fr) {
            (AggFn::Max, AggFn::Min) => true,
            (AggFn::Min, AggFn::Max) => false,
            _ => return None,
        };
        (source == rsource).then_some(Folded::Spread {
            source,
            totals: Totals::EMPTY,
            max_first,
        })
    }
}

/// Adds every member of `t`'s number from `source` under `agg` to
/// `totals`, in the members' order, as `Term::add` does; a party-wide
/// aggregate (the same number for every member) is read once.
fn add_members(totals: &mut Totals, t: &CandTicket<'_>, source: Source, agg: PartyAgg) {
    let party_wide = matches!(agg, PartyAgg::Avg | PartyAgg::Min | PartyAgg::Max);
    if party_wide && !t.players.is_empty() {
        let x = member_number(t, 0, source, agg);
        for _ in 0..t.players.len() {
            totals.add(x);
        }
    } else {
        for i in 0..t.players.len() {
            totals.add(member_number(t, i, source, agg));
        }
    }
}

/// A spread-shaped rule's verdict with `t`'s members added (`None`: as it
/// stands): the distance the two terms it stands for would measure.
fn spread_holds(
    rule: &Folded,
    t: Option<&CandTicket<'_>>,
    agg: PartyAgg,
    min: Option<&Steps>,
    max: Option<&Steps>,
    age_s: f64,
) -> bool {
    let (source, mut totals, max_first) = rule.as_spread().expect("a spread rule");
    if let Some(t) = t {
        add_members(&mut totals, t, source, agg);
    }
    spread_verdict(&totals, max_first, min, max, age_s)
}

/// A spread-shaped rule's verdict on the range `totals`.
fn spread_verdict(
    totals: &Totals,
    max_first: bool,
    min: Option<&Steps>,
    max: Option<&Steps>,
    age_s: f64,
) -> bool {
    let (hi, lo) = (totals.of(AggFn::Max), totals.of(AggFn::Min));
    let (x, r) = if max_first { (hi, lo) } else { (lo, hi) };
    // `distance_holds(&[x], Some(r), ..)` on its one value, without the
    // slices (asked for most candidates a growth examines).
    let holds = !x.is_nan() && within((x - r).abs(), min, max, age_s);
    debug_assert_eq!(holds, distance_holds(&[x], Some(r), min, max, age_s));
    holds
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

/// How far apart two tickets' ratings may lie for their numbers under a
/// rating spread rule to lie within `limit` of each other, when no
/// ticket's numbers lie more than `skew` from its rating
/// (`Growing::rating_skew`). Farther apart, the rule fails.
pub fn reach_within(limit: f64, skew: f64) -> f64 {
    if skew == 0.0 {
        // Each number is its ticket's rating: they spread exactly as far
        // as the ratings.
        limit
    } else {
        // Two tickets' numbers lie within 2 skew of their ratings'
        // distance; a margin covers the rounding of the sums.
        (limit + 2.0 * skew) * (1.0 + 1e-9) + 1e-9
    }
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
                } => {
                    let measure = terms(measure)?;
                    let reference = match reference {
                        Some(e) => Some(Term::read(e, rs)?),
                        None => None,
                    };
                    match Folded::spread(&measure, reference.as_ref()) {
                        Some(spread) => spread,
                        None => Folded::Distance { measure, reference },
                    }
                }
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
                Folded::Spread { totals, .. } => *totals = Totals::EMPTY,
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
                Folded::Spread { source, totals, .. } => add_members(totals, t, *source, agg),
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

    /// Adds solo ticket `t` of player `p` if every team-free rule passes
    /// with it at `age_s` (with `skip_spreads`, every rule but the spreads,
    /// which the caller has asked of the same ticket and age): whether it
    /// did. The same verdict as `passes_with` (or `others_pass_with`) and
    /// the same totals as `add`, but the player is read once and no ticket
    /// is built: most candidates a growth examines are solo and taken.
    pub fn take_solo_if(
        &mut self,
        rs: &Ruleset,
        p: &Player,
        age_s: f64,
        skip_spreads: bool,
    ) -> bool {
        let Some(((last, agg, i), rest)) = self.rules.split_last_mut() else {
            return true;
        };
        // Every rule but the last is judged and kept aside; the last (most
        // rulesets fold one rule) is written at once if all pass.
        let mut staged: SmallVec<[Staged; 2]> = SmallVec::new();
        for (rule, agg, i) in rest.iter() {
            let (ok, next) =
                Self::stage_solo(rule, *agg, &rs.rules[*i].kind, p, age_s, skip_spreads);
            if !ok {
                return false;
            }
            staged.push(next);
        }
        let (ok, next) = Self::stage_solo(last, *agg, &rs.rules[*i].kind, p, age_s, skip_spreads);
        if !ok {
            return false;
        }
        Self::commit(last, next);
        for ((rule, _, _), next) in rest.iter_mut().zip(staged) {
            Self::commit(rule, next);
        }
        true
    }

    /// One folded rule's verdict with a solo ticket of player `p` added,
    /// and its totals with it (`take_solo_if`).
    fn stage_solo(
        rule: &Folded,
        agg: PartyAgg,
        kind: &RuleKind,
        p: &Player,
        age_s: f64,
        skip_spreads: bool,
    ) -> (bool, Staged) {
        let (min, max) = limits(kind);
        match rule {
            Folded::Spread {
                source,
                totals,
                max_first,
            } => {
                let mut totals = *totals;
                totals.add(solo_number(p, *source, agg));
                let ok = skip_spreads || spread_verdict(&totals, *max_first, min, max, age_s);
                (ok, Staged::Totals(totals))
            }
            Folded::Distance { measure, reference }
            | Folded::Comparison {
                measure, reference, ..
            } => {
                let terms: SmallVec<[Option<Totals>; 4]> = measure
                    .iter()
                    .chain(reference.as_ref())
                    .map(|m| m.totals_with_solo(p, agg))
                    .collect();
                let xs: SmallVec<[f64; 4]> = measure
                    .iter()
                    .zip(&terms)
                    .map(|(m, tot)| m.value_from(tot.as_ref()))
                    .collect();
                let r = reference
                    .as_ref()
                    .map(|r| r.value_from(terms[measure.len()].as_ref()));
                let ok = match rule {
                    Folded::Comparison { op, .. } => comparison_holds(&xs, r, *op),
                    _ => distance_holds(&xs, r, min, max, age_s),
                };
                (ok, Staged::Terms(terms.into_iter().flatten().collect()))
            }
            Folded::Batch {
                source,
                totals,
                broken,
            } => {
                let mut totals = *totals;
                let ok = match solo_value(p, *source, agg) {
                    Scalar::Num(x) => {
                        totals.add(x);
                        let max = max.expect("a batch distance has a limit");
                        !broken && totals.max - totals.min <= max.at(age_s)
                    }
                    _ => false,
                };
                (ok, Staged::Totals(totals))
            }
            Folded::Names {
                source,
                op,
                reference_bits,
                count,
                and,
            } => {
                let (mut count, mut and) = (*count, *and);
                names(
                    solo_value(p, *source, agg),
                    *reference_bits,
                    &mut count,
                    &mut and,
                );
                let n = match op {
                    CollOp::Intersection => and.count_ones(),
                    CollOp::ReferenceIntersectionCount => count,
                };
                (
                    within(f64::from(n), min, max, age_s),
                    Staged::Names(count, and),
                )
            }
        }
    }

    /// Writes back what `stage_solo` worked out for `rule`.
    fn commit(rule: &mut Folded, next: Staged) {
        match (rule, next) {
            (Folded::Spread { totals, .. } | Folded::Batch { totals, .. }, Staged::Totals(t)) => {
                *totals = t;
            }
            (Folded::Names { count, and, .. }, Staged::Names(c, a)) => {
                *count = c;
                *and = a;
            }
            (
                Folded::Distance { measure, reference }
                | Folded::Comparison {
                    measure, reference, ..
                },
                Staged::Terms(terms),
            ) => {
                let overs = measure
                    .iter_mut()
                    .chain(reference.as_mut())
                    .filter_map(|m| match m {
                        Term::Over { totals, .. } => Some(totals),
                        Term::Num(_) => None,
                    });
                for (totals, t) in overs.zip(terms) {
                    *totals = t;
                }
            }
            _ => unreachable!("staged as the rule's own shape"),
        }
    }

    /// `add` for a solo ticket of player `p`, read off the player without
    /// building the ticket (a growth taken up again retakes mostly solos).
    pub fn add_solo(&mut self, p: &Player) {
        for (rule, agg, _) in &mut self.rules {
            let agg = *agg;
            match rule {
                Folded::Distance {
                    measure, reference, ..
                }
                | Folded::Comparison {
                    measure, reference, ..
                } => {
                    for m in measure.iter_mut().chain(reference.as_mut()) {
                        if let Term::Over { source, totals, .. } = m {
                            totals.add(solo_number(p, *source, agg));
                        }
                    }
                }
                Folded::Spread { source, totals, .. } => totals.add(solo_number(p, *source, agg)),
                Folded::Batch {
                    source,
                    totals,
                    broken,
                } => match solo_value(p, *source, agg) {
                    Scalar::Num(x) => totals.add(x),
                    _ => *broken = true,
                },
                Folded::Names {
                    source,
                    reference_bits,
                    count,
                    and,
                    ..
                } => names(solo_value(p, *source, agg), *reference_bits, count, and),
            }
        }
    }

    /// Whether some team-free rule has the spread shape (every player's
    /// number within a distance of every other's): a cheap test that turns
    /// most far-off candidates down, worth asking before anything dearer.
    pub fn has_spread(&self) -> bool {
        self.rules
            .iter()
            .any(|(rule, _, _)| matches!(rule, Folded::Spread { .. }))
    }

    /// Whether the spread-shaped rules alone pass with `t` added: `false`
    /// means `passes_with` is `false` too.
    pub fn spreads_pass_with(&self, rs: &Ruleset, t: Option<&CandTicket<'_>>, age_s: f64) -> bool {
        self.rules.iter().all(|(rule, agg, i)| {
            let (min, max) = limits(&rs.rules[*i].kind);
            !matches!(rule, Folded::Spread { .. }) || spread_holds(rule, t, *agg, min, max, age_s)
        })
    }

    /// `spreads_pass_with` for a solo ticket of player `p`, read off the
    /// player without building the ticket: most candidates a growth
    /// examines are solo and fail a spread, so this is asked first.
    pub fn spreads_pass_with_solo(&self, rs: &Ruleset, p: &Player, age_s: f64) -> bool {
        self.rules.iter().all(|(rule, agg, i)| {
            let Some((source, mut totals, max_first)) = rule.as_spread() else {
                return true;
            };
            let (min, max) = limits(&rs.rules[*i].kind);
            totals.add(solo_number(p, source, *agg));
            spread_verdict(&totals, max_first, min, max, age_s)
        })
    }

    /// The first spread-shaped rule on players' ratings with an upper
    /// limit: the one a walk nearest rating first can stop at.
    fn rating_spread(&self) -> Option<&(Folded, PartyAgg, usize)> {
        self.rules.iter().find(|(rule, _, _)| {
            matches!(
                rule,
                Folded::Spread {
                    source: Source::Rating,
                    ..
                }
            )
        })
    }

    /// How far ticket `t`'s numbers under `rating_spread`'s rule lie from
    /// its matchmaking rating `rating` (none for a ticket whose members
    /// were not rated again while it waited); 0 without such a rule.
    pub fn rating_skew(&self, t: &CandTicket<'_>, rating: f64) -> f64 {
        let Some((_, agg, _)) = self.rating_spread() else {
            return 0.0;
        };
        (0..t.players.len()).fold(0.0, |m: f64, i| {
            let d = (member_number(t, i, Source::Rating, *agg) - rating).abs();
            if d.is_nan() {
                f64::INFINITY
            } else {
                m.max(d)
            }
        })
    }

    /// A rating distance from the seed beyond which no candidate passes
    /// `rating_spread`'s rule at any age up to `age_hi`, when no ticket's
    /// numbers lie more than `skew` from its rating (`rating_skew`):
    /// the seed's and the candidate's numbers alone spread wider than the
    /// rule allows. `None` without such a rule.
    pub fn rating_reach(&self, rs: &Ruleset, age_hi: f64, skew: f64) -> Option<f64> {
        let limit = self.rating_limit(rs)?.most_until(age_hi);
        Some(reach_within(limit, skew))
    }

    /// The upper limit of `rating_spread`'s rule: what `rating_reach`
    /// reads, for a caller that asks it at many ages. `None` without such
    /// a rule (or without an upper limit).
    pub fn rating_limit<'r>(&self, rs: &'r Ruleset) -> Option<&'r Steps> {
        let (_, _, i) = self.rating_spread()?;
        limits(&rs.rules[*i].kind).1
    }

    /// Whether the spread-shaped rules could pass for a match holding the
    /// players so far, `t`'s and perhaps more, at any age up to `age_hi`:
    /// `false` means no such match passes them. More players only widen a
    /// spread, and no limit at those ages is above `Steps::most_until`.
    pub fn spreads_could_pass_with(&self, rs: &Ruleset, t: &CandTicket<'_>, age_hi: f64) -> bool {
        self.rules.iter().all(|(rule, agg, i)| {
            let Some((source, mut totals, _)) = rule.as_spread() else {
                return true;
            };
            let Some(max) = limits(&rs.rules[*i].kind).1 else {
                return true;
            };
            add_members(&mut totals, t, source, *agg);
            let spread = totals.of(AggFn::Max) - totals.of(AggFn::Min);
            // A NaN spread proves nothing.
            spread.is_nan() || spread <= max.most_until(age_hi)
        })
    }

    /// Whether every team-free rule of `rs` (the ruleset this was built
    /// from) passes for the match with `t` added (`None`: as it stands),
    /// expansions at `age_s`: what `rs.passes(.., age_s, true)` says of
    /// that match.
    pub fn passes_with(&self, rs: &Ruleset, t: Option<&CandTicket<'_>>, age_s: f64) -> bool {
        self.rules_pass_with(rs, t, age_s, false)
    }

    /// `passes_with` for a candidate the spread-shaped rules have already
    /// passed (`spreads_pass_with`, same `t` and age): the rest of the
    /// rules, so a growth that asks the spreads first does not ask them
    /// twice.
    pub fn others_pass_with(&self, rs: &Ruleset, t: Option<&CandTicket<'_>>, age_s: f64) -> bool {
        self.rules_pass_with(rs, t, age_s, true)
    }

    fn rules_pass_with(
        &self,
        rs: &Ruleset,
        t: Option<&CandTicket<'_>>,
        age_s: f64,
        skip_spreads: bool,
    ) -> bool {
        self.rules.iter().all(|(rule, agg, i)| {
            let agg = *agg;
            let (min, max) = limits(&rs.rules[*i].kind);
            match rule {
                Folded::Spread { .. } => {
                    skip_spreads || spread_holds(rule, t, agg, min, max, age_s)
                }
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

    /// One ticket per size in `sizes`, of the next players in order.
    fn tickets_of<'p>(players: &'p [Player], sizes: &[usize]) -> Vec<CandTicket<'p>> {
        let mut next = 0;
        (sizes.iter())
            .map(|&size| {
                let t = CandTicket {
                    team: 0,
                    players: players[next..next + size].iter().collect(),
                };
                next += size;
                t
            })
            .collect()
    }

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
        // Solo tickets' spreads read off the player, by verdict, over all
        // rulesets.
        let mut solo = [0usize; 2];
        let mut solo_taken = [0usize; 2];
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
                let tickets = tickets_of(&players, &sizes);
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
                        if let [p] = t.players[..] {
                            let spreads = g.spreads_pass_with(&rs, Some(t), age);
                            assert_eq!(
                                g.spreads_pass_with_solo(&rs, p, age),
                                spreads,
                                "{}",
                                rs.name
                            );
                            solo[usize::from(spreads)] += 1;
                            // Taken off the player: the same verdict, and
                            // the totals `add` makes (or none changed).
                            let mut added = g.clone();
                            added.add(t);
                            let mut solo_added = g.clone();
                            solo_added.add_solo(p);
                            assert_eq!(
                                format!("{solo_added:?}"),
                                format!("{added:?}"),
                                "{}",
                                rs.name
                            );
                            for skip in [false, true] {
                                let expect = if skip {
                                    if !spreads {
                                        continue;
                                    }
                                    g.others_pass_with(&rs, Some(t), age)
                                } else {
                                    tree
                                };
                                let mut taken = g.clone();
                                assert_eq!(
                                    taken.take_solo_if(&rs, p, age, skip),
                                    expect,
                                    "{}",
                                    rs.name
                                );
                                let want = if expect { &added } else { &g };
                                assert_eq!(
                                    format!("{taken:?}"),
                                    format!("{want:?}"),
                                    "{}",
                                    rs.name
                                );
                                solo_taken[usize::from(expect)] += 1;
                            }
                        }
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
        assert!(solo.iter().all(|&n| n > 100), "solo spreads: {solo:?}");
        assert!(
            solo_taken.iter().all(|&n| n > 100),
            "solo taken: {solo_taken:?}"
        );
    }

    /// The bounds a growth stops at: a candidate `spreads_could_pass_with`
    /// turns down at `age_hi`, or one farther in rating from the seed than
    /// `rating_reach`, fails the tree's team-free check in every larger
    /// match at every age up to `age_hi`; and the bounds do turn down.
    #[test]
    fn spread_bounds_turn_down_only_what_the_tree_turns_down() {
        let mut rng = Pcg64::seed_from_u64(5);
        let spread_rules = [
            rulesets().swap_remove(0),
            bound(
                r#"{ "ruleLanguageVersion": "1.0", "playerAttributes": [{ "name": "skill" }],
                     "teams": [{ "name": "t", "maxPlayers": 3, "quantity": 2 }],
                     "rules": [{ "name": "Close", "type": "distance",
                         "measurements": ["min(flatten(teams[*].players.attributes[skill]))"],
                         "referenceValue": "max(flatten(teams[*].players.attributes[skill]))",
                         "maxDistance": 120 }],
                     "expansions": [{ "target": "rules[Close].maxDistance",
                         "steps": [{ "waitTimeSeconds": 10, "value": 40 }, { "waitTimeSeconds": 20, "value": 250 }] }] }"#,
            ),
        ];
        for rs in spread_rules {
            let g0 = Growing::new(&rs).expect("folds");
            assert!(g0.has_spread(), "{}", rs.name);
            let mut turned = [0usize; 2];
            for _ in 0..2000 {
                // Tickets of one or two players; a ticket's rating is its
                // players' average, or (a member rated again while it
                // waited) off by up to 30.
                let n = rng.random_range(2..7);
                let mut players = Vec::new();
                let mut sizes = Vec::new();
                let mut ratings = Vec::new();
                for _ in 0..n {
                    let size = rng.random_range(1..3);
                    let party = 1500.0 + rng.random_range(-400.0..400.0_f64).round();
                    for _ in 0..size {
                        let r = party + rng.random_range(-50.0..50.0_f64);
                        let mut p = Player::new(
                            PlayerId(players.len() as u32),
                            r,
                            Rating::new(r, 50.0, 0.06),
                        );
                        p.party_rating = Rating::new(party, 50.0, 0.06);
                        players.push(p);
                    }
                    sizes.push(size);
                    let off = if rng.random_bool(0.2) {
                        rng.random_range(-30.0..30.0)
                    } else {
                        0.0
                    };
                    ratings.push(off);
                }
                let tickets = tickets_of(&players, &sizes);
                // As the engine rates a ticket: its members' (party)
                // ratings averaged, then any drift.
                for (t, off) in tickets.iter().zip(ratings.iter_mut()) {
                    let avg = t
                        .players
                        .iter()
                        .map(|p| {
                            if t.players.len() == 1 {
                                p.rating.value
                            } else {
                                p.party_rating.value
                            }
                        })
                        .sum::<f64>()
                        / t.players.len() as f64;
                    *off += avg;
                }
                // Seed first, candidate last, the rest in between.
                let (seed, cand) = (&tickets[0], &tickets[n - 1]);
                let age_hi = rng.random_range(0.0..30.0);
                let mut g = g0.clone();
                g.clear();
                g.add(seed);
                let skew = g
                    .rating_skew(seed, ratings[0])
                    .max(g.rating_skew(cand, ratings[n - 1]));
                let reach = g.rating_reach(&rs, age_hi, skew).expect("a rating spread");
                let by_pair = !g.spreads_could_pass_with(&rs, cand, age_hi);
                let by_reach = (ratings[n - 1] - ratings[0]).abs() > reach;
                assert!(
                    !by_reach || by_pair || skew > 0.0,
                    "{}: reach without the pair",
                    rs.name
                );
                turned[0] += usize::from(by_pair);
                turned[1] += usize::from(by_reach);
                if by_pair || by_reach {
                    let whole = Candidate {
                        teams: rs.teams,
                        tickets: tickets.clone(),
                    };
                    for _ in 0..5 {
                        let age = rng.random_range(0.0..=age_hi);
                        assert!(!rs.passes(&whole, age, true), "{} passes at {age}", rs.name);
                    }
                }
            }
            assert!(turned.iter().all(|&n| n > 100), "{}: {turned:?}", rs.name);
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
