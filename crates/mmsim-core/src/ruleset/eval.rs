//! Whether a candidate match passes a ruleset's rules at a given wait: the
//! property expressions evaluated over the candidate's teams and players.

use super::{
    AggFn, CollOp, Expr, PartyAgg, Rule, RuleKind, Ruleset, Source, Statement, Steps, TeamSel,
};
use crate::model::Player;
use smallvec::SmallVec;

/// One ticket of a candidate match: its team and its players.
#[derive(Clone, Debug)]
pub struct CandTicket<'a> {
    /// The team it is placed in.
    pub team: usize,
    /// Its players.
    pub players: SmallVec<[&'a Player; 5]>,
}

/// A candidate match: its teams' count and its tickets, each placed in a team.
#[derive(Clone, Debug)]
pub struct Candidate<'a> {
    /// Teams in the match.
    pub teams: usize,
    /// Its tickets, each placed in a team.
    pub tickets: Vec<CandTicket<'a>>,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Val {
    Num(f64),
    Set(u64),
    List(Vec<Val>),
}

/// One member's value: a `Val` leaf that is `Copy`, so the growth's
/// checks, which read one per candidate member millions of times a run,
/// neither build nor drop a `Val`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Scalar {
    Num(f64),
    Set(u64),
}

impl From<Scalar> for Val {
    fn from(s: Scalar) -> Val {
        match s {
            Scalar::Num(x) => Val::Num(x),
            Scalar::Set(b) => Val::Set(b),
        }
    }
}

/// A player's value of `source`; `solo` says whether the player queues
/// alone (a party member's rating is the party rating, as the engine's).
fn player_value(p: &Player, source: Source, solo: bool) -> Scalar {
    match source {
        Source::Rating if solo => Scalar::Num(p.rating.value),
        Source::Rating => Scalar::Num(p.party_rating.value),
        Source::Games => Scalar::Num(f64::from(p.games)),
        Source::Tier => Scalar::Num(f64::from(p.tier)),
        Source::WinRate => Scalar::Num(p.win_rate),
        Source::Languages => Scalar::Set(u64::from(p.languages)),
        Source::Roles => Scalar::Set(u64::from(p.roles)),
        // Refused at bind: only the latency rule reads pings.
        Source::Latency => Scalar::Num(f64::NAN),
    }
}

/// The value every member of `ticket` takes under the rule's party
/// aggregation (each their own with `PartyAgg::Own`).
pub(super) fn member_value(
    ticket: &CandTicket<'_>,
    i: usize,
    source: Source,
    agg: PartyAgg,
) -> Scalar {
    let solo = ticket.players.len() == 1;
    let own = |p: &Player| player_value(p, source, solo);
    let nums = || {
        ticket.players.iter().map(|p| match own(p) {
            Scalar::Num(x) => x,
            _ => f64::NAN,
        })
    };
    let sets = || {
        ticket.players.iter().map(|p| match own(p) {
            Scalar::Set(s) => s,
            _ => 0,
        })
    };
    match (agg, source.is_set()) {
        (PartyAgg::Own, _) => own(ticket.players[i]),
        (PartyAgg::Avg, false) => Scalar::Num(nums().sum::<f64>() / ticket.players.len() as f64),
        (PartyAgg::Min, false) => Scalar::Num(nums().fold(f64::INFINITY, f64::min)),
        (PartyAgg::Max, false) => Scalar::Num(nums().fold(f64::NEG_INFINITY, f64::max)),
        (PartyAgg::Union, true) => Scalar::Set(sets().fold(0, |a, s| a | s)),
        (PartyAgg::Intersection, true) => Scalar::Set(sets().fold(u64::MAX, |a, s| a & s)),
        // A numeric aggregation of a set (or the reverse) is refused when
        // the rule is read; keep the player's own value.
        _ => own(ticket.players[i]),
    }
}

fn teams_of(sel: TeamSel, teams: usize) -> std::ops::Range<usize> {
    match sel {
        TeamSel::All => 0..teams,
        TeamSel::Range { first, count } => first..(first + count).min(teams),
    }
}

/// Players on `team` of candidate `c`.
fn players_in(c: &Candidate<'_>, team: usize) -> usize {
    c.tickets
        .iter()
        .filter(|t| t.team == team)
        .map(|t| t.players.len())
        .sum()
}

fn eval(e: &Expr, rs: &Ruleset, c: &Candidate<'_>, agg: PartyAgg) -> Val {
    match e {
        Expr::Num(x) => Val::Num(*x),
        Expr::Attr { teams, attr } => {
            let source = rs.attributes[*attr].source.unwrap_or(Source::Latency);
            Val::List(
                teams_of(*teams, c.teams)
                    .map(|team| {
                        let mut players = Vec::new();
                        for t in c.tickets.iter().filter(|t| t.team == team) {
                            for i in 0..t.players.len() {
                                players.push(member_value(t, i, source, agg).into());
                            }
                        }
                        Val::List(players)
                    })
                    .collect(),
            )
        }
        Expr::Players { teams } => Val::List(
            teams_of(*teams, c.teams)
                .map(|team| Val::List(vec![Val::Num(1.0); players_in(c, team)]))
                .collect(),
        ),
        Expr::Flatten(inner) => {
            let mut out = Vec::new();
            leaves(eval(inner, rs, c, agg), &mut out);
            Val::List(out)
        }
        Expr::Agg(f, inner) => aggregate(*f, eval(inner, rs, c, agg)),
    }
}

fn leaves(v: Val, out: &mut Vec<Val>) {
    match v {
        Val::List(items) => items.into_iter().for_each(|i| leaves(i, out)),
        leaf => out.push(leaf),
    }
}

/// An aggregate of a list of lists is taken per inner list (per team); of
/// a list of values, over the values.
fn aggregate(f: AggFn, v: Val) -> Val {
    match v {
        Val::List(items) if items.iter().any(|i| matches!(i, Val::List(_))) => {
            Val::List(items.into_iter().map(|i| aggregate(f, i)).collect())
        }
        Val::List(items) => {
            if f == AggFn::Count {
                return Val::Num(items.len() as f64);
            }
            let xs: Vec<f64> = items
                .iter()
                .map(|i| match i {
                    Val::Num(x) => *x,
                    _ => f64::NAN,
                })
                .collect();
            Val::Num(reduce(f, &xs))
        }
        Val::Num(x) => Val::Num(if f == AggFn::Count { 1.0 } else { x }),
        Val::Set(_) => Val::Num(if f == AggFn::Count { 1.0 } else { f64::NAN }),
    }
}

pub(super) fn reduce(f: AggFn, xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    match f {
        AggFn::Avg => xs.iter().sum::<f64>() / xs.len() as f64,
        AggFn::Min => xs.iter().copied().fold(f64::INFINITY, f64::min),
        AggFn::Max => xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        AggFn::Sum => xs.iter().sum(),
        AggFn::Count => xs.len() as f64,
        AggFn::Median => {
            let mut s = xs.to_vec();
            s.sort_by(f64::total_cmp);
            let n = s.len();
            if n % 2 == 1 {
                s[n / 2]
            } else {
                (s[n / 2 - 1] + s[n / 2]) / 2.0
            }
        }
    }
}

/// A property's numbers: held inline, as a rule is checked for every
/// candidate ticket of a growing match.
pub(super) type Numbers = SmallVec<[f64; 32]>;

fn numbers(exprs: &[Expr], rs: &Ruleset, c: &Candidate<'_>, agg: PartyAgg) -> Numbers {
    let mut out = Numbers::new();
    for e in exprs {
        if !numbers_direct(e, rs, c, agg, &mut out) {
            let mut vals = Vec::new();
            leaves(eval(e, rs, c, agg), &mut vals);
            out.extend(vals.into_iter().map(|v| match v {
                Val::Num(x) => x,
                _ => f64::NAN,
            }));
        }
    }
    debug_assert!(
        {
            let slow = numbers_by_values(exprs, rs, c, agg);
            slow.len() == out.len()
                && slow
                    .iter()
                    .zip(&out)
                    .all(|(a, b)| a.to_bits() == b.to_bits())
        },
        "the direct evaluation differs from the tree's"
    );
    out
}

/// `numbers` by building each expression's value tree first: the plain
/// reading of the rules language, and the check of `numbers_direct` in
/// every debug build.
fn numbers_by_values(exprs: &[Expr], rs: &Ruleset, c: &Candidate<'_>, agg: PartyAgg) -> Vec<f64> {
    let mut out = Vec::new();
    for e in exprs {
        leaves(eval(e, rs, c, agg), &mut out);
    }
    out.into_iter()
        .map(|v| match v {
            Val::Num(x) => x,
            _ => f64::NAN,
        })
        .collect()
}

/// A number-valued property's value without the tree's allocations: a
/// number, a list (flattened, or one number per team), or a list per team.
enum Shape {
    Scalar(f64),
    Flat(SmallVec<[f64; 16]>),
    Teams(SmallVec<[SmallVec<[f64; 8]>; 4]>),
}

/// A member's number under the rule's party aggregation: `member_value`
/// for a numeric source, without building a `Val`.
pub(super) fn member_number(
    ticket: &CandTicket<'_>,
    i: usize,
    source: Source,
    agg: PartyAgg,
) -> f64 {
    let solo = ticket.players.len() == 1;
    let own = |p: &Player| own_number(p, source, solo);
    let all = ticket.players.iter().map(|p| own(p));
    match agg {
        PartyAgg::Avg => all.sum::<f64>() / ticket.players.len() as f64,
        PartyAgg::Min => all.fold(f64::INFINITY, f64::min),
        PartyAgg::Max => all.fold(f64::NEG_INFINITY, f64::max),
        PartyAgg::Own | PartyAgg::Union | PartyAgg::Intersection => own(ticket.players[i]),
    }
}

/// A player's own number from `source` (`solo`: alone on the ticket,
/// whose rating is then the player's own rather than the party's).
fn own_number(p: &Player, source: Source, solo: bool) -> f64 {
    match source {
        Source::Rating if solo => p.rating.value,
        Source::Rating => p.party_rating.value,
        Source::Games => f64::from(p.games),
        Source::Tier => f64::from(p.tier),
        Source::WinRate => p.win_rate,
        Source::Languages | Source::Roles | Source::Latency => f64::NAN,
    }
}

/// `member_number` of the one member of a solo ticket of player `p`,
/// without building the ticket: the same operations on the one value.
pub(super) fn solo_number(p: &Player, source: Source, agg: PartyAgg) -> f64 {
    let x = own_number(p, source, true);
    match agg {
        PartyAgg::Avg => std::iter::once(x).sum::<f64>() / 1.0,
        PartyAgg::Min => f64::INFINITY.min(x),
        PartyAgg::Max => f64::NEG_INFINITY.max(x),
        PartyAgg::Own | PartyAgg::Union | PartyAgg::Intersection => x,
    }
}

/// `member_value` of the one member of a solo ticket of player `p`,
/// without building the ticket: the same operations on the one value.
pub(super) fn solo_value(p: &Player, source: Source, agg: PartyAgg) -> Scalar {
    let own = player_value(p, source, true);
    let set = || match own {
        Scalar::Set(s) => s,
        _ => 0,
    };
    match (agg, source.is_set()) {
        (PartyAgg::Own, _) => own,
        // A number source's own value is `own_number`'s.
        (PartyAgg::Avg | PartyAgg::Min | PartyAgg::Max, false) => {
            Scalar::Num(solo_number(p, source, agg))
        }
        // The union or the intersection of one set is the set.
        (PartyAgg::Union | PartyAgg::Intersection, true) => Scalar::Set(set()),
        _ => own,
    }
}

/// `aggregate` of a list of numbers.
fn aggregate_numbers(f: AggFn, xs: &[f64]) -> f64 {
    if f == AggFn::Count {
        xs.len() as f64
    } else {
        reduce(f, xs)
    }
}

/// `eval` for an expression over numbers only (a number attribute, the
/// players, and what flattens or aggregates them); `None` for one that
/// reads a string list, which only the tree evaluates.
fn shape(e: &Expr, rs: &Ruleset, c: &Candidate<'_>, agg: PartyAgg) -> Option<Shape> {
    Some(match e {
        Expr::Num(x) => Shape::Scalar(*x),
        Expr::Attr { teams, attr } => {
            let source = rs.attributes[*attr]
                .source
                .filter(|s| !s.is_set() && *s != Source::Latency)?;
            Shape::Teams(
                teams_of(*teams, c.teams)
                    .map(|team| {
                        let mut xs = SmallVec::new();
                        for t in c.tickets.iter().filter(|t| t.team == team) {
                            for i in 0..t.players.len() {
                                xs.push(member_number(t, i, source, agg));
                            }
                        }
                        xs
                    })
                    .collect(),
            )
        }
        Expr::Players { teams } => Shape::Teams(
            teams_of(*teams, c.teams)
                .map(|team| smallvec::smallvec![1.0; players_in(c, team)])
                .collect(),
        ),
        Expr::Flatten(inner) => Shape::Flat(match shape(inner, rs, c, agg)? {
            Shape::Scalar(x) => smallvec::smallvec![x],
            Shape::Flat(xs) => xs,
            Shape::Teams(teams) => teams.iter().flatten().copied().collect(),
        }),
        Expr::Agg(f, inner) => match shape(inner, rs, c, agg)? {
            Shape::Scalar(x) => Shape::Scalar(if *f == AggFn::Count { 1.0 } else { x }),
            Shape::Flat(xs) => Shape::Scalar(aggregate_numbers(*f, &xs)),
            // An empty list of teams holds no lists: aggregated as values.
            Shape::Teams(teams) if teams.is_empty() => Shape::Scalar(aggregate_numbers(*f, &[])),
            Shape::Teams(teams) => {
                Shape::Flat(teams.iter().map(|xs| aggregate_numbers(*f, xs)).collect())
            }
        },
    })
}

/// The common shapes of a rule's property (a number attribute per player,
/// flattened, or aggregated per team or over the match) evaluated straight
/// into `out`, in the order the value tree's leaves come, without building
/// the tree: a growing match checks its rules for every candidate ticket.
/// False, with `out` untouched, for any other shape (`shape` takes
/// those).
fn numbers_common(
    e: &Expr,
    rs: &Ruleset,
    c: &Candidate<'_>,
    agg: PartyAgg,
    out: &mut Numbers,
) -> bool {
    let numeric = |attr: usize| {
        rs.attributes[attr]
            .source
            .filter(|s| !s.is_set() && *s != Source::Latency)
    };
    let team_values = |team: usize, source: Source, xs: &mut SmallVec<[f64; 16]>| {
        for t in c.tickets.iter().filter(|t| t.team == team) {
            for i in 0..t.players.len() {
                xs.push(member_number(t, i, source, agg));
            }
        }
    };
    let mut xs: SmallVec<[f64; 16]> = SmallVec::new();
    match e {
        Expr::Num(x) => out.push(*x),
        Expr::Attr { teams, attr } => {
            let Some(source) = numeric(*attr) else {
                return false;
            };
            for team in teams_of(*teams, c.teams) {
                team_values(team, source, &mut xs);
            }
            out.extend_from_slice(&xs);
        }
        Expr::Flatten(inner) => {
            let Expr::Attr { teams, attr } = **inner else {
                return false;
            };
            let Some(source) = numeric(attr) else {
                return false;
            };
            for team in teams_of(teams, c.teams) {
                team_values(team, source, &mut xs);
            }
            out.extend_from_slice(&xs);
        }
        Expr::Agg(f, inner) => match &**inner {
            // Per team: one value each (an empty selection of teams is
            // an empty list, whose aggregate is over no values).
            Expr::Attr { teams, attr } => {
                let Some(source) = numeric(*attr) else {
                    return false;
                };
                let range = teams_of(*teams, c.teams);
                if range.is_empty() {
                    out.push(if *f == AggFn::Count {
                        0.0
                    } else {
                        reduce(*f, &[])
                    });
                }
                for team in range {
                    xs.clear();
                    team_values(team, source, &mut xs);
                    out.push(if *f == AggFn::Count {
                        xs.len() as f64
                    } else {
                        reduce(*f, &xs)
                    });
                }
            }
            Expr::Flatten(inner2) => {
                let Expr::Attr { teams, attr } = **inner2 else {
                    return false;
                };
                let Some(source) = numeric(attr) else {
                    return false;
                };
                for team in teams_of(teams, c.teams) {
                    team_values(team, source, &mut xs);
                }
                out.push(if *f == AggFn::Count {
                    xs.len() as f64
                } else {
                    reduce(*f, &xs)
                });
            }
            _ => return false,
        },
        Expr::Players { .. } => return false,
    }
    true
}

/// A number-valued property evaluated straight into `out`, in the order
/// the value tree's leaves come, without building the tree: a growing
/// match checks its rules for every candidate ticket. False, with `out`
/// untouched, for a property that reads a string list.
fn numbers_direct(
    e: &Expr,
    rs: &Ruleset,
    c: &Candidate<'_>,
    agg: PartyAgg,
    out: &mut Numbers,
) -> bool {
    if numbers_common(e, rs, c, agg, out) {
        return true;
    }
    match shape(e, rs, c, agg) {
        None => false,
        Some(Shape::Scalar(x)) => {
            out.push(x);
            true
        }
        Some(Shape::Flat(xs)) => {
            out.extend_from_slice(&xs);
            true
        }
        Some(Shape::Teams(teams)) => {
            out.extend(teams.iter().flatten().copied());
            true
        }
    }
}

/// A collection rule's count for each unit its measurement gives (each
/// team when it keeps teams apart, else the whole match), for the shapes
/// `teams[X].players.attributes[A]` and its flattening over a string-list
/// attribute, without building the tree; `None` for any other shape.
fn collection_direct(
    e: &Expr,
    rs: &Ruleset,
    c: &Candidate<'_>,
    agg: PartyAgg,
    op: CollOp,
    reference_bits: u64,
) -> Option<SmallVec<[u32; 4]>> {
    let (flat, teams, attr) = match e {
        Expr::Attr { teams, attr } => (false, *teams, *attr),
        Expr::Flatten(inner) => match **inner {
            Expr::Attr { teams, attr } => (true, teams, attr),
            _ => return None,
        },
        _ => return None,
    };
    let source = rs.attributes[attr].source.filter(|s| s.is_set())?;
    let range = teams_of(teams, c.teams);
    // Per team as the tree keeps them, unless flattened or no team is
    // selected (an empty list: one unit of no sets).
    let units = if flat || range.is_empty() {
        1
    } else {
        range.len()
    };
    let mut counts: SmallVec<[u32; 4]> = smallvec::smallvec![0; units];
    let mut ands: SmallVec<[u64; 4]> = smallvec::smallvec![u64::MAX; units];
    for (k, team) in range.enumerate() {
        let u = if units == 1 { 0 } else { k };
        for t in c.tickets.iter().filter(|t| t.team == team) {
            for i in 0..t.players.len() {
                let Scalar::Set(b) = member_value(t, i, source, agg) else {
                    return None;
                };
                counts[u] += (b & reference_bits).count_ones();
                ands[u] &= b;
            }
        }
    }
    if op == CollOp::Intersection {
        for (n, a) in counts.iter_mut().zip(&ands) {
            *n = a.count_ones();
        }
    }
    Some(counts)
}

fn scalar(e: &Expr, rs: &Ruleset, c: &Candidate<'_>, agg: PartyAgg) -> f64 {
    let xs = numbers(std::slice::from_ref(e), rs, c, agg);
    if xs.len() == 1 {
        xs[0]
    } else {
        f64::NAN
    }
}

pub(super) fn within(x: f64, lo: Option<&Steps>, hi: Option<&Steps>, age_s: f64) -> bool {
    !x.is_nan() && lo.is_none_or(|s| x >= s.at(age_s)) && hi.is_none_or(|s| x <= s.at(age_s))
}

/// A distance rule's verdict on its measured values `xs` and reference `r`.
pub(super) fn distance_holds(
    xs: &[f64],
    r: Option<f64>,
    min: Option<&Steps>,
    max: Option<&Steps>,
    age_s: f64,
) -> bool {
    if xs.iter().any(|x| x.is_nan()) {
        return false;
    }
    match r {
        Some(r) => xs.iter().all(|x| within((x - r).abs(), min, max, age_s)),
        None => {
            let mut s = Numbers::from_slice(xs);
            s.sort_by(f64::total_cmp);
            let spread = s.last().copied().unwrap_or(0.0) - s.first().copied().unwrap_or(0.0);
            let closest = s
                .windows(2)
                .map(|w| w[1] - w[0])
                .fold(f64::INFINITY, f64::min);
            max.is_none_or(|m| spread <= m.at(age_s)) && min.is_none_or(|m| closest >= m.at(age_s))
        }
    }
}

/// A comparison rule's verdict on its measured values `xs` and reference `r`.
pub(super) fn comparison_holds(xs: &[f64], r: Option<f64>, op: super::CmpOp) -> bool {
    if xs.iter().any(|x| x.is_nan()) {
        return false;
    }
    match r {
        Some(r) => xs.iter().all(|&x| op.holds(x, r)),
        None if op == super::CmpOp::Eq => xs.windows(2).all(|w| w[0] == w[1]),
        None => {
            let mut s = Numbers::from_slice(xs);
            s.sort_by(f64::total_cmp);
            s.windows(2).all(|w| w[0] != w[1])
        }
    }
}

/// Whether `rule` passes for candidate `c` whose expansions stand at `age_s`.
pub fn rule_passes(rs: &Ruleset, rule: &Rule, c: &Candidate<'_>, age_s: f64) -> bool {
    let agg = rule.party;
    match &rule.kind {
        RuleKind::Distance {
            measure,
            reference,
            max,
            min,
        } => {
            let xs = numbers(measure, rs, c, agg);
            let r = reference.as_ref().map(|r| scalar(r, rs, c, agg));
            distance_holds(&xs, r, min.as_ref(), max.as_ref(), age_s)
        }
        RuleKind::Comparison {
            measure,
            reference,
            op,
        } => {
            let xs = numbers(measure, rs, c, agg);
            let r = reference.as_ref().map(|r| scalar(r, rs, c, agg));
            comparison_holds(&xs, r, *op)
        }
        RuleKind::BatchDistance { attr, max } => {
            let source = rs.attributes[*attr].source.unwrap_or(Source::Latency);
            let mut lo = f64::INFINITY;
            let mut hi = f64::NEG_INFINITY;
            for t in &c.tickets {
                for i in 0..t.players.len() {
                    let Scalar::Num(x) = member_value(t, i, source, agg) else {
                        return false;
                    };
                    lo = lo.min(x);
                    hi = hi.max(x);
                }
            }
            hi - lo <= max.at(age_s)
        }
        RuleKind::Collection {
            measure,
            op,
            reference_bits,
            min,
            max,
            ..
        } => measure.iter().all(|e| {
            if let Some(counts) = collection_direct(e, rs, c, agg, *op, *reference_bits) {
                debug_assert_eq!(
                    counts.to_vec(),
                    collection_counts(e, rs, c, agg, *op, *reference_bits),
                    "the direct count differs from the tree's"
                );
                return counts
                    .iter()
                    .all(|&n| within(f64::from(n), min.as_ref(), max.as_ref(), age_s));
            }
            collection_counts(e, rs, c, agg, *op, *reference_bits)
                .into_iter()
                .all(|n| within(f64::from(n), min.as_ref(), max.as_ref(), age_s))
        }),
        // The engine's regional layer hosts the match only where every
        // ticket's ping is within the limit.
        RuleKind::Latency { .. } => true,
        RuleKind::Compound { statement } => statement_holds(rs, statement, c, age_s),
    }
}

/// A collection rule's count per unit by building the value tree: the
/// plain reading of the rules language, and the check of
/// `collection_direct` in every debug build.
fn collection_counts(
    e: &Expr,
    rs: &Ruleset,
    c: &Candidate<'_>,
    agg: PartyAgg,
    op: CollOp,
    reference_bits: u64,
) -> Vec<u32> {
    let v = eval(e, rs, c, agg);
    // Per team when the measurement keeps teams apart, else over the
    // whole match.
    let units: Vec<Val> = match v {
        Val::List(items) if items.iter().any(|i| matches!(i, Val::List(_))) => items,
        other => vec![other],
    };
    units
        .into_iter()
        .map(|u| {
            let mut sets = Vec::new();
            leaves(u, &mut sets);
            match op {
                CollOp::Intersection => sets
                    .iter()
                    .map(|s| if let Val::Set(b) = s { *b } else { 0 })
                    .fold(u64::MAX, |a, b| a & b)
                    .count_ones(),
                CollOp::ReferenceIntersectionCount => sets
                    .iter()
                    .map(|s| match s {
                        Val::Set(b) => (b & reference_bits).count_ones(),
                        _ => 0,
                    })
                    .sum(),
            }
        })
        .collect()
}

fn statement_holds(rs: &Ruleset, s: &Statement, c: &Candidate<'_>, age_s: f64) -> bool {
    match s {
        Statement::Rule(i) => rule_passes(rs, &rs.rules[*i], c, age_s),
        Statement::And(xs) => xs.iter().all(|x| statement_holds(rs, x, c, age_s)),
        Statement::Or(xs) => xs.iter().any(|x| statement_holds(rs, x, c, age_s)),
        Statement::Xor(xs) => {
            xs.iter()
                .filter(|x| statement_holds(rs, x, c, age_s))
                .count()
                % 2
                == 1
        }
        Statement::Not(x) => !statement_holds(rs, x, c, age_s),
    }
}

impl Ruleset {
    /// Whether candidate `c` passes every rule (a rule named by a compound
    /// only through it) at wait `age_s`. With `partial`, `c` is a match
    /// still growing and only team-free rules are checked.
    pub fn passes(&self, c: &Candidate<'_>, age_s: f64, partial: bool) -> bool {
        self.rules
            .iter()
            .filter(|r| !r.in_compound && (!partial || r.team_free))
            .all(|r| rule_passes(self, r, c, age_s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{PlayerId, Rating};
    use proptest::prelude::*;

    /// Attribute 0 is a number (the rating), 1 a string list (roles).
    fn ruleset() -> Ruleset {
        let mut rs = Ruleset::parse(
            r#"{ "ruleLanguageVersion": "1.0",
                 "playerAttributes": [{ "name": "skill", "type": "number" },
                     { "name": "character", "type": "string_list" }],
                 "teams": [{ "name": "t", "maxPlayers": 4, "quantity": 3 }],
                 "rules": [{ "name": "A", "type": "comparison", "operation": ">",
                     "measurements": ["avg(teams[*].players.attributes[skill])"],
                     "referenceValue": 0 },
                   { "name": "B", "type": "collection", "operation": "intersection",
                     "measurements": ["flatten(teams[*].players.attributes[character])"],
                     "minCount": 0 }] }"#,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        rs.bind(
            |a| match a {
                "character" => Some(Source::Roles),
                other => Source::by_convention(other),
            },
            |_| Some(vec!["a".into(), "b".into(), "c".into()]),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        rs
    }

    fn team_sel() -> impl Strategy<Value = TeamSel> {
        prop_oneof![
            Just(TeamSel::All),
            (0usize..4, 0usize..3).prop_map(|(first, count)| TeamSel::Range { first, count }),
        ]
    }

    fn agg_fn() -> impl Strategy<Value = AggFn> {
        prop_oneof![
            Just(AggFn::Avg),
            Just(AggFn::Min),
            Just(AggFn::Max),
            Just(AggFn::Sum),
            Just(AggFn::Count),
            Just(AggFn::Median),
        ]
    }

    /// Number-valued expressions up to three levels deep.
    fn expr() -> impl Strategy<Value = Expr> {
        let leaf = prop_oneof![
            (-5.0..5.0_f64).prop_map(Expr::Num),
            team_sel().prop_map(|teams| Expr::Attr { teams, attr: 0 }),
            team_sel().prop_map(|teams| Expr::Players { teams }),
        ];
        leaf.prop_recursive(3, 8, 1, |inner| {
            prop_oneof![
                inner.clone().prop_map(|e| Expr::Flatten(Box::new(e))),
                (agg_fn(), inner).prop_map(|(f, e)| Expr::Agg(f, Box::new(e))),
            ]
        })
    }

    fn party_agg() -> impl Strategy<Value = PartyAgg> {
        prop_oneof![
            Just(PartyAgg::Own),
            Just(PartyAgg::Avg),
            Just(PartyAgg::Min),
            Just(PartyAgg::Max),
            Just(PartyAgg::Union),
            Just(PartyAgg::Intersection),
        ]
    }

    /// Tickets of one to three players: (team, per player its rating and
    /// role mask).
    fn tickets() -> impl Strategy<Value = Vec<(usize, Vec<(f64, u8)>)>> {
        prop::collection::vec(
            (
                0usize..3,
                prop::collection::vec((1000.0..2000.0_f64, 1u8..8), 1..4),
            ),
            0..8,
        )
    }

    fn players(tickets: &[(usize, Vec<(f64, u8)>)]) -> Vec<Player> {
        let mut out = Vec::new();
        for (_, members) in tickets {
            let party = members.iter().map(|m| m.0).sum::<f64>() / members.len() as f64;
            for &(r, roles) in members {
                let mut p = Player::new(PlayerId(out.len() as u32), r, Rating::new(r, 50.0, 0.06));
                p.party_rating = Rating::new(party, 50.0, 0.06);
                p.roles = roles;
                out.push(p);
            }
        }
        out
    }

    fn candidate<'a>(tickets: &[(usize, Vec<(f64, u8)>)], players: &'a [Player]) -> Candidate<'a> {
        let mut next = 0;
        Candidate {
            teams: 3,
            tickets: tickets
                .iter()
                .map(|(team, members)| {
                    let ps = players[next..next + members.len()].iter().collect();
                    next += members.len();
                    CandTicket {
                        team: *team,
                        players: ps,
                    }
                })
                .collect(),
        }
    }

    proptest! {
        #[test]
        fn direct_numbers_are_the_value_tree_s(
            e in expr(),
            agg in party_agg(),
            ts in tickets(),
        ) {
            let rs = ruleset();
            let ps = players(&ts);
            let c = candidate(&ts, &ps);
            let mut direct = Numbers::new();
            prop_assert!(numbers_direct(&e, &rs, &c, agg, &mut direct));
            let tree = numbers_by_values(std::slice::from_ref(&e), &rs, &c, agg);
            let bits = |xs: &[f64]| xs.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            prop_assert_eq!(bits(&direct), bits(&tree), "{:?}", e);
        }

        #[test]
        fn direct_collection_counts_are_the_value_tree_s(
            teams in team_sel(),
            flat in any::<bool>(),
            intersection in any::<bool>(),
            reference in 0u64..8,
            agg in party_agg(),
            ts in tickets(),
        ) {
            let rs = ruleset();
            let ps = players(&ts);
            let c = candidate(&ts, &ps);
            let attr = Expr::Attr { teams, attr: 1 };
            let e = if flat { Expr::Flatten(Box::new(attr)) } else { attr };
            let op = if intersection { CollOp::Intersection } else { CollOp::ReferenceIntersectionCount };
            let direct = collection_direct(&e, &rs, &c, agg, op, reference).expect("a direct shape");
            prop_assert_eq!(direct.to_vec(), collection_counts(&e, &rs, &c, agg, op, reference));
        }
    }
}
