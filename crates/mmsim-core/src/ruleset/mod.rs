//! Vendors' matchmaking rulesets (AWS GameLift FlexMatch, AccelByte
//! matchmaking v2) read into plain domain types, so a designer can run the
//! JSON they ship against a simulated population. `flexmatch.rs` and
//! `accelbyte.rs` parse and refuse what mmsim cannot simulate; `eval.rs`
//! decides whether a candidate match passes the rules at a given wait;
//! `explain.rs` says what was understood. The policy that uses them is
//! `policy::ruleset`; the scenario layer maps the rest onto `[regions]`,
//! `[roles]`, `[acceptance]` and `[backfill]`.

pub mod accelbyte;
pub mod eval;
pub mod explain;
pub mod flexmatch;
pub mod fold;

pub use eval::{CandTicket, Candidate};

/// Most rules a ruleset may hold: real ones have a handful.
pub const MAX_RULES: usize = 256;
/// Most expansion (or flexing) steps per relaxed value.
pub const MAX_STEPS: usize = 64;
/// Deepest nesting of an expression or compound statement.
pub const MAX_DEPTH: usize = 16;
/// Longest property expression, in characters.
pub const MAX_EXPR_CHARS: usize = 1000;

/// Which vendor's format a ruleset was written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Vendor {
    /// AWS GameLift FlexMatch (`ruleSet` JSON).
    FlexMatch,
    /// AccelByte matchmaking v2 (its ruleset JSON).
    AccelByte,
}

impl Vendor {
    /// The vendor's product name, as `explain-ruleset` prints it.
    pub fn label(self) -> &'static str {
        match self {
            Vendor::FlexMatch => "AWS GameLift FlexMatch",
            Vendor::AccelByte => "AccelByte matchmaking v2",
        }
    }
}

/// What is wrong with a ruleset: where (a JSON path such as
/// `rules[2].maxDistance`) and why.
#[derive(Clone, Debug, PartialEq)]
pub struct RulesetError {
    /// Where in the JSON: a path such as `rules[2].maxDistance` (empty: the whole file).
    pub path: String,
    /// What is wrong there and what mmsim accepts.
    pub message: String,
}

impl RulesetError {
    /// An error at `path` saying `message`.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        RulesetError {
            path: path.into(),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for RulesetError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.message)
        } else if self.path.contains('`') {
            // Already quoted where it names something: "rule `X`".
            write!(f, "{}: {}", self.path, self.message)
        } else {
            write!(f, "`{}`: {}", self.path, self.message)
        }
    }
}

/// Where a player attribute's values come from in the simulated population.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The player's current rating (the rating system's value).
    Rating,
    /// Games played so far.
    Games,
    /// Vehicle tier (Armored Warfare populations).
    Tier,
    /// The shown win rate, 0 to 1.
    WinRate,
    /// Spoken languages, by `population.languages` names (a string list).
    Languages,
    /// Roles the player accepts, by `[roles].names` (a string list).
    Roles,
    /// Pings to data centres from `[regions]`; only a latency rule reads it.
    Latency,
}

impl Source {
    /// Every source by the name a `[ruleset] attributes` mapping uses.
    pub const NAMES: &'static [(&'static str, Source)] = &[
        ("rating", Source::Rating),
        ("games", Source::Games),
        ("tier", Source::Tier),
        ("win_rate", Source::WinRate),
        ("languages", Source::Languages),
        ("roles", Source::Roles),
        ("latency", Source::Latency),
    ];

    /// The name a `[ruleset] attributes` mapping uses for this source.
    pub fn name(self) -> &'static str {
        Source::NAMES
            .iter()
            .find(|(_, s)| *s == self)
            .map_or("?", |(n, _)| n)
    }

    /// The source a mapping names, if any.
    pub fn by_name(name: &str) -> Option<Source> {
        Source::NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, s)| *s)
    }

    /// The source an attribute of this name maps to when no mapping names
    /// it: the usual names vendors' examples use.
    pub fn by_convention(attribute: &str) -> Option<Source> {
        match attribute.to_ascii_lowercase().as_str() {
            "skill" | "mmr" | "rating" | "elo" | "skillrating" => Some(Source::Rating),
            "games" | "gamesplayed" | "games_played" => Some(Source::Games),
            "tier" => Some(Source::Tier),
            "win_rate" | "winrate" => Some(Source::WinRate),
            "language" | "languages" => Some(Source::Languages),
            "role" | "roles" => Some(Source::Roles),
            "latency" | "latencies" => Some(Source::Latency),
            _ => None,
        }
    }

    /// A string list (a set of names) rather than a number.
    pub fn is_set(self) -> bool {
        matches!(self, Source::Languages | Source::Roles)
    }
}

/// A player attribute the ruleset declares or uses, with where its values
/// come from once bound to a population.
#[derive(Clone, Debug, PartialEq)]
pub struct Attribute {
    /// The attribute's name in the ruleset.
    pub name: String,
    /// The declared type (`number`, `string_list`, ...), as written.
    pub kind: String,
    /// Where the population supplies it; `None`: nowhere (a rule reading it is refused).
    pub source: Option<Source>,
    /// For a string list: the names in bit order (languages or roles).
    pub vocabulary: Vec<String>,
}

/// A value that relaxes with waiting: `base` until the first step's wait,
/// then each step's value from its wait on (absolute waits, as FlexMatch's
/// `waitTimeSeconds` and AccelByte's `duration`).
#[derive(Clone, Debug, PartialEq)]
pub struct Steps {
    /// The value before the first step.
    pub base: f64,
    /// (wait in seconds, value), waits strictly increasing.
    pub steps: Vec<(f64, f64)>,
}

impl Steps {
    /// A value that never relaxes.
    pub fn fixed(base: f64) -> Self {
        Steps {
            base,
            steps: Vec::new(),
        }
    }

    /// The largest value in force at any wait up to `wait_s`: a bound on
    /// `at` for every such wait, whichever way the steps move the value.
    pub fn most_until(&self, wait_s: f64) -> f64 {
        self.steps
            .iter()
            .take_while(|(w, _)| *w <= wait_s)
            .fold(self.base, |m, (_, v)| m.max(*v))
    }

    /// The value in force after `wait_s` seconds.
    pub fn at(&self, wait_s: f64) -> f64 {
        self.steps
            .iter()
            .take_while(|(w, _)| *w <= wait_s)
            .last()
            .map_or(self.base, |(_, v)| *v)
    }
}

/// Which ticket's wait drives the expansions of a candidate match
/// (FlexMatch's `expansionAgeSelection`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AgeSelection {
    /// The newest ticket's wait (FlexMatch's default).
    Newest,
    /// The oldest ticket's wait.
    Oldest,
}

/// How a party's members are summarised before a rule compares them
/// (FlexMatch's `partyAggregation`): each member takes the party's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartyAgg {
    /// Each player's own value.
    Own,
    /// The members' mean.
    Avg,
    /// The members' least.
    Min,
    /// The members' greatest.
    Max,
    /// String lists: the union of the members' sets.
    Union,
    /// String lists: what every member has.
    Intersection,
}

/// Aggregating functions of the property expression language.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AggFn {
    /// `avg`: the mean.
    Avg,
    /// `min`: the least.
    Min,
    /// `max`: the greatest.
    Max,
    /// `sum`: the total.
    Sum,
    /// `count`: how many values.
    Count,
    /// `median`: the middle value (the mean of the two middle ones).
    Median,
}

impl AggFn {
    /// The function's name in the expression language.
    pub fn name(self) -> &'static str {
        match self {
            AggFn::Avg => "avg",
            AggFn::Min => "min",
            AggFn::Max => "max",
            AggFn::Sum => "sum",
            AggFn::Count => "count",
            AggFn::Median => "median",
        }
    }
}

/// Which teams an expression reads: all, or the teams of one definition
/// (a definition with `quantity` 3 names three teams).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TeamSel {
    /// Every team (`teams[*]`).
    All,
    /// The teams of one definition: `count` teams from index `first`.
    Range {
        /// Index of the first team.
        first: usize,
        /// How many teams.
        count: usize,
    },
}

/// A property expression: `avg(flatten(teams[*].players.attributes[skill]))`.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// A number written in the expression.
    Num(f64),
    /// `teams[X].players.attributes[A]`: per team, per player; `attr`
    /// indexes `Ruleset::attributes`.
    Attr {
        /// Which teams it reads.
        teams: TeamSel,
        /// Index into `Ruleset::attributes`.
        attr: usize,
    },
    /// `teams[X].players`: per team, one entry per player (for `count`).
    Players {
        /// Which teams it reads.
        teams: TeamSel,
    },
    /// `flatten(...)`: every team's values as one list.
    Flatten(Box<Expr>),
    /// An aggregating function over its argument (per team, or over a flattened list).
    Agg(AggFn, Box<Expr>),
}

impl Expr {
    /// Whether the value does not depend on how players are split into
    /// teams (every team access is flattened or aggregated over all teams
    /// into one number): such a rule can be checked while a match grows.
    pub fn team_free(&self) -> bool {
        fn walk(e: &Expr, flattened: bool) -> bool {
            match e {
                Expr::Num(_) => true,
                Expr::Attr { teams, .. } | Expr::Players { teams } => {
                    flattened && *teams == TeamSel::All
                }
                Expr::Flatten(inner) => walk(inner, true),
                Expr::Agg(_, inner) => walk(inner, flattened),
            }
        }
        walk(self, false)
    }

    /// Whether the expression gives one value (a reference must): lists of
    /// teams and of players are aggregated or flattened away.
    pub fn is_one_value(&self) -> bool {
        fn levels(e: &Expr) -> usize {
            match e {
                Expr::Num(_) => 0,
                Expr::Attr { teams, .. } | Expr::Players { teams } => match teams {
                    TeamSel::Range { count: 1, .. } => 1,
                    _ => 2,
                },
                Expr::Flatten(inner) => levels(inner).min(1),
                Expr::Agg(_, inner) => levels(inner).saturating_sub(1),
            }
        }
        levels(self) == 0
    }

    /// The attributes the expression reads.
    pub fn attributes(&self, out: &mut Vec<usize>) {
        match self {
            Expr::Attr { attr, .. } => out.push(*attr),
            Expr::Flatten(e) | Expr::Agg(_, e) => e.attributes(out),
            Expr::Num(_) | Expr::Players { .. } => {}
        }
    }
}

/// A comparison rule's operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `=`
    Eq,
    /// `!=`
    Ne,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl CmpOp {
    /// The operation as the vendor writes it.
    pub fn symbol(self) -> &'static str {
        match self {
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Eq => "=",
            CmpOp::Ne => "!=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }

    /// Whether `a op b` holds.
    pub fn holds(self, a: f64, b: f64) -> bool {
        match self {
            CmpOp::Lt => a < b,
            CmpOp::Le => a <= b,
            CmpOp::Eq => a == b,
            CmpOp::Ne => a != b,
            CmpOp::Gt => a > b,
            CmpOp::Ge => a >= b,
        }
    }
}

/// A collection rule's operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CollOp {
    /// The names every measured player has in common, counted.
    Intersection,
    /// The measured names that are among the reference names, counted.
    ReferenceIntersectionCount,
}

/// A compound rule's statement over other rules.
#[derive(Clone, Debug, PartialEq)]
pub enum Statement {
    /// Index into `Ruleset::rules`.
    Rule(usize),
    /// `and`: every statement holds.
    And(Vec<Statement>),
    /// `or`: at least one holds.
    Or(Vec<Statement>),
    /// `xor`: exactly one holds.
    Xor(Vec<Statement>),
    /// `not`: the statement does not hold.
    Not(Box<Statement>),
}

/// What a rule checks, by the vendor's rule type.
#[derive(Clone, Debug, PartialEq)]
pub enum RuleKind {
    /// Every measured value lies within `max` (and at least `min`) of the
    /// reference; without a reference, every pair of measured values does.
    Distance {
        /// The measured values.
        measure: Vec<Expr>,
        /// The value they are measured against, if any.
        reference: Option<Expr>,
        /// The largest distance allowed, relaxing with the wait.
        max: Option<Steps>,
        /// The smallest distance required, relaxing with the wait.
        min: Option<Steps>,
    },
    /// Every measured value compares to the reference by `op`; without a
    /// reference (`=` or `!=` only), the measured values are all equal or
    /// all different.
    Comparison {
        /// The measured values.
        measure: Vec<Expr>,
        /// The value they are compared with, if any.
        reference: Option<Expr>,
        /// The comparison.
        op: CmpOp,
    },
    /// Every player's `attr` lies within `max` of every other's.
    BatchDistance {
        /// Index into `Ruleset::attributes`.
        attr: usize,
        /// The largest spread allowed, relaxing with the wait.
        max: Steps,
    },
    /// A count over string lists within `[min, max]`.
    Collection {
        /// The measured string lists.
        measure: Vec<Expr>,
        /// What is counted.
        op: CollOp,
        /// The reference names (reference_intersection_count), bound to bits
        /// of the measured attribute's vocabulary.
        reference: Vec<String>,
        /// `reference` as bits of the vocabulary.
        reference_bits: u64,
        /// The least count required, relaxing with the wait.
        min: Option<Steps>,
        /// The greatest count allowed, relaxing with the wait.
        max: Option<Steps>,
    },
    /// Every player's ping to the hosting data centre within `max` ms: the
    /// `[regions]` latency rule, enforced by the engine's regional layer.
    Latency {
        /// The worst ping allowed, in milliseconds, relaxing with the wait.
        max: Steps,
    },
    /// A statement over other rules (`and`, `or`, `xor`, `not`).
    Compound {
        /// The statement over the other rules.
        statement: Statement,
    },
}

impl RuleKind {
    /// The vendor's name of the rule type.
    pub fn type_name(&self) -> &'static str {
        match self {
            RuleKind::Distance { .. } => "distance",
            RuleKind::Comparison { .. } => "comparison",
            RuleKind::BatchDistance { .. } => "batchDistance",
            RuleKind::Collection { .. } => "collection",
            RuleKind::Latency { .. } => "latency",
            RuleKind::Compound { .. } => "compound",
        }
    }
}

/// One rule of a ruleset, as mmsim checks it.
#[derive(Clone, Debug, PartialEq)]
pub struct Rule {
    /// The rule's name in the ruleset.
    pub name: String,
    /// What it checks.
    pub kind: RuleKind,
    /// How a party's members read their attributes (`partyAggregation`).
    pub party: PartyAgg,
    /// Named by a compound rule: then only the compound enforces it.
    pub in_compound: bool,
    /// Every expression is team-free (see `Expr::team_free`): checked on
    /// each ticket as a match grows, not only on the full match.
    pub team_free: bool,
}

/// A backfill and acceptance setting of the vendor's matchmaking
/// configuration (FlexMatch) or ruleset (AccelByte).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Service {
    /// `Some(timeout_s)`: every match waits for a ready check.
    pub acceptance_timeout_s: Option<f64>,
    /// `Some(true)`: open slots are backfilled automatically.
    pub backfill: Option<bool>,
}

/// One line of what the reader understood without a rule of its own
/// (team sizes, algorithm settings, defaults): for `explain-ruleset`.
#[derive(Clone, Debug, PartialEq)]
pub struct Note {
    /// The JSON field the note is about.
    pub field: String,
    /// What the reader understood from it.
    pub text: String,
}

/// A vendor's ruleset as mmsim simulates it.
#[derive(Clone, Debug, PartialEq)]
pub struct Ruleset {
    /// Whose format it was written in.
    pub vendor: Vendor,
    /// The ruleset's own name (empty when it gives none).
    pub name: String,
    /// Teams per match.
    pub teams: usize,
    /// Players per team.
    pub team_size: usize,
    /// Team names in order (a definition with a quantity: `name_1`, ...).
    pub team_names: Vec<String>,
    /// Every player attribute it declares or reads.
    pub attributes: Vec<Attribute>,
    /// Its rules, in the file's order.
    pub rules: Vec<Rule>,
    /// Whose wait drives the rules' expansions.
    pub age: AgeSelection,
    /// Players per role per team, in the ruleset's order (AccelByte's
    /// `combination`).
    pub roles: Option<Vec<(String, u32)>>,
    /// Its ready check and backfill settings.
    pub service: Service,
    /// What was understood without a rule of its own (for `explain-ruleset`).
    pub notes: Vec<Note>,
}

impl Ruleset {
    /// Reads either vendor's format: an object with `alliance` is
    /// AccelByte's; one with `teams` and `ruleLanguageVersion`, or a
    /// `{ "ruleSet": ..., "configuration": ... }` wrapper, is FlexMatch's.
    pub fn parse(text: &str) -> Result<Ruleset, RulesetError> {
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
            RulesetError::new(
                "",
                format!(
                    "not valid JSON at line {}, column {}: {e}",
                    e.line(),
                    e.column()
                ),
            )
        })?;
        // JSON objects keep the last of a repeated key; a ruleset whose key
        // is given twice is refused instead of read half.
        serde_json::from_str::<NoRepeatedKeys>(text)
            .map_err(|e| RulesetError::new("", e.to_string()))?;
        let obj = value
            .as_object()
            .ok_or_else(|| RulesetError::new("", "a ruleset is a JSON object"))?;
        if obj.contains_key("alliance") {
            accelbyte::parse(obj)
        } else if obj.contains_key("ruleSet")
            || obj.contains_key("ruleLanguageVersion")
            || obj.contains_key("teams")
        {
            flexmatch::parse(obj)
        } else {
            Err(RulesetError::new(
                "",
                "neither a FlexMatch rule set (`teams`, `ruleLanguageVersion`, or a `ruleSet` and `configuration` wrapper) nor an AccelByte ruleset (`alliance`)",
            ))
        }
    }

    /// The latency rule's limits, if the ruleset has one.
    pub fn latency(&self) -> Option<(&Rule, &Steps)> {
        self.rules.iter().find_map(|r| match &r.kind {
            RuleKind::Latency { max } => Some((r, max)),
            _ => None,
        })
    }

    /// The waits (s) at which an expansion changes a limit that
    /// `passes` checks, ascending: between two of them a candidate's rules
    /// give the same answer. The latency rule's steps are left out, as
    /// `passes` leaves the rule to the regional layer.
    pub fn step_waits(&self) -> Vec<f64> {
        let mut waits: Vec<f64> = Vec::new();
        let mut add = |s: Option<&Steps>| {
            if let Some(s) = s {
                waits.extend(s.steps.iter().map(|&(w, _)| w));
            }
        };
        for r in &self.rules {
            match &r.kind {
                RuleKind::Distance { max, min, .. } | RuleKind::Collection { max, min, .. } => {
                    add(max.as_ref());
                    add(min.as_ref());
                }
                RuleKind::BatchDistance { max, .. } => add(Some(max)),
                RuleKind::Comparison { .. }
                | RuleKind::Latency { .. }
                | RuleKind::Compound { .. } => {}
            }
        }
        waits.sort_by(f64::total_cmp);
        waits.dedup();
        waits
    }

    /// Every expansion step of every rule (the latency rule's too), by
    /// wait, then in the rules' order: what `--explain` lists as a
    /// ticket's wait reaches each.
    pub fn expansion_steps(&self) -> Vec<crate::model::ExpansionStep> {
        let mut out = Vec::new();
        for r in &self.rules {
            let limits: [(&str, Option<&Steps>); 2] = match &r.kind {
                RuleKind::Distance { max, min, .. } => {
                    [("maxDistance", max.as_ref()), ("minDistance", min.as_ref())]
                }
                RuleKind::Collection { max, min, .. } => {
                    [("maxCount", max.as_ref()), ("minCount", min.as_ref())]
                }
                RuleKind::BatchDistance { max, .. } => [("maxDistance", Some(max)), ("", None)],
                RuleKind::Latency { max } => [("maxLatency", Some(max)), ("", None)],
                RuleKind::Comparison { .. } | RuleKind::Compound { .. } => [("", None), ("", None)],
            };
            for (limit, steps) in limits {
                for &(at_s, value) in steps.map_or(&[][..], |s| &s.steps[..]) {
                    out.push(crate::model::ExpansionStep {
                        at_s,
                        rule: r.name.clone(),
                        limit: limit.to_owned(),
                        value,
                    });
                }
            }
        }
        out.sort_by(|a, b| a.at_s.total_cmp(&b.at_s));
        out
    }

    /// The attributes some rule reads, in declaration order.
    pub fn used_attributes(&self) -> Vec<usize> {
        let mut used = Vec::new();
        for r in &self.rules {
            match &r.kind {
                RuleKind::Distance {
                    measure, reference, ..
                }
                | RuleKind::Comparison {
                    measure, reference, ..
                } => {
                    measure.iter().for_each(|e| e.attributes(&mut used));
                    if let Some(e) = reference {
                        e.attributes(&mut used);
                    }
                }
                RuleKind::Collection { measure, .. } => {
                    measure.iter().for_each(|e| e.attributes(&mut used))
                }
                RuleKind::BatchDistance { attr, .. } => used.push(*attr),
                RuleKind::Latency { .. } | RuleKind::Compound { .. } => {}
            }
        }
        used.sort_unstable();
        used.dedup();
        used
    }

    /// Finds (or declares, typed `kind`) the attribute called `name`.
    pub(crate) fn attribute(&mut self, name: &str, kind: &str) -> usize {
        if let Some(i) = self.attributes.iter().position(|a| a.name == name) {
            return i;
        }
        self.attributes.push(Attribute {
            name: name.to_owned(),
            kind: kind.to_owned(),
            source: None,
            vocabulary: Vec::new(),
        });
        self.attributes.len() - 1
    }

    /// Ties every attribute a rule reads to the population: `source_of`
    /// gives an attribute's source (a mapping, else by convention) and
    /// `vocabulary` the names of a string-list source. An attribute the
    /// population cannot supply is an error naming it; so is a reference
    /// name the vocabulary lacks.
    pub fn bind(
        &mut self,
        source_of: impl Fn(&str) -> Option<Source>,
        vocabulary: impl Fn(Source) -> Option<Vec<String>>,
    ) -> Result<(), RulesetError> {
        for i in self.used_attributes() {
            let a = &self.attributes[i];
            let source = source_of(&a.name).ok_or_else(|| {
                RulesetError::new(
                    format!("attribute `{}`", a.name),
                    format!(
                        "the simulated population has no attribute `{}`; map it with `[ruleset] attributes = {{ {} = \"...\" }}` to one of {}",
                        a.name,
                        a.name,
                        Source::NAMES.iter().map(|(n, _)| format!("`{n}`")).collect::<Vec<_>>().join(", ")
                    ),
                )
            })?;
            let numeric_kind = matches!(a.kind.as_str(), "number" | "");
            if source.is_set() == numeric_kind || source == Source::Latency {
                return Err(RulesetError::new(
                    format!("attribute `{}`", a.name),
                    format!(
                        "is a `{}` attribute but maps to `{}`, which is {}",
                        if a.kind.is_empty() { "number" } else { &a.kind },
                        source.name(),
                        match source {
                            Source::Latency => "read by a latency rule only",
                            s if s.is_set() => "a string list",
                            _ => "a number",
                        }
                    ),
                ));
            }
            let words = if source.is_set() {
                let words = vocabulary(source).ok_or_else(|| {
                    RulesetError::new(
                        format!("attribute `{}`", a.name),
                        format!(
                            "maps to `{}` but the scenario gives players none ({})",
                            source.name(),
                            if source == Source::Roles {
                                "add a [roles] section"
                            } else {
                                "add population.languages"
                            }
                        ),
                    )
                })?;
                if words.len() > 64 {
                    return Err(RulesetError::new(
                        format!("attribute `{}`", a.name),
                        "more than 64 names",
                    ));
                }
                words
            } else {
                Vec::new()
            };
            let a = &mut self.attributes[i];
            a.source = Some(source);
            a.vocabulary = words;
        }
        let attributes = self.attributes.clone();
        for r in &mut self.rules {
            if let RuleKind::Collection {
                measure,
                reference,
                reference_bits,
                ..
            } = &mut r.kind
            {
                let mut used = Vec::new();
                measure.iter().for_each(|e| e.attributes(&mut used));
                let Some(&attr) = used.first() else {
                    continue;
                };
                let vocab = &attributes[attr].vocabulary;
                *reference_bits = 0;
                for word in reference.iter() {
                    let bit = vocab.iter().position(|v| v == word).ok_or_else(|| {
                        RulesetError::new(
                            format!("rule `{}`", r.name),
                            format!(
                                "(collection) reference value `{word}` is not one of the names players have for `{}`: {}",
                                attributes[attr].name,
                                vocab.join(", ")
                            ),
                        )
                    })?;
                    *reference_bits |= 1 << bit;
                }
            }
        }
        Ok(())
    }
}

/// Reads an object's keys, refusing any not in `allowed` with the path and
/// the list of what mmsim understands there.
pub(crate) fn check_keys(
    obj: &serde_json::Map<String, serde_json::Value>,
    path: &str,
    allowed: &[&str],
    what: &str,
) -> Result<(), RulesetError> {
    for k in obj.keys() {
        if !allowed.contains(&k.as_str()) {
            let at = if path.is_empty() {
                k.clone()
            } else {
                format!("{path}.{k}")
            };
            return Err(RulesetError::new(
                at,
                format!(
                    "mmsim does not simulate `{k}` in {what} (it reads {})",
                    allowed
                        .iter()
                        .map(|a| format!("`{a}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
    }
    Ok(())
}

/// A number at `path`: a JSON number, or a string holding one (FlexMatch's
/// own examples write `"maxDistance": "500"`).
pub(crate) fn number(v: &serde_json::Value, path: &str) -> Result<f64, RulesetError> {
    let x = match v {
        serde_json::Value::Number(n) => n.as_f64(),
        serde_json::Value::String(s) => s.trim().parse::<f64>().ok(),
        _ => None,
    };
    match x {
        Some(x) if x.is_finite() => Ok(x),
        _ => Err(RulesetError::new(
            path,
            format!("expected a finite number, got {v}"),
        )),
    }
}

pub(crate) fn non_negative(v: &serde_json::Value, path: &str) -> Result<f64, RulesetError> {
    let x = number(v, path)?;
    if x < 0.0 {
        return Err(RulesetError::new(
            path,
            format!("must be at least 0, got {x}"),
        ));
    }
    Ok(x)
}

pub(crate) fn string<'a>(v: &'a serde_json::Value, path: &str) -> Result<&'a str, RulesetError> {
    v.as_str()
        .ok_or_else(|| RulesetError::new(path, format!("expected a string, got {v}")))
}

/// A count at `path`: a whole number from `min` to `max`.
pub(crate) fn count(
    v: &serde_json::Value,
    path: &str,
    min: u64,
    max: u64,
) -> Result<usize, RulesetError> {
    let x = number(v, path)?;
    if x.fract() != 0.0 || x < min as f64 || x > max as f64 {
        return Err(RulesetError::new(
            path,
            format!("expected a whole number from {min} to {max}, got {x}"),
        ));
    }
    Ok(x as usize)
}

#[cfg(test)]
mod tests;

/// A JSON document read only to find an object that repeats a key (which
/// `serde_json::Value` would resolve silently, the last value winning).
struct NoRepeatedKeys;

impl<'de> serde::Deserialize<'de> for NoRepeatedKeys {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NoRepeatedKeysVisitor)
    }
}

struct NoRepeatedKeysVisitor;

impl<'de> serde::de::Visitor<'de> for NoRepeatedKeysVisitor {
    type Value = NoRepeatedKeys;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut seen = std::collections::BTreeSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key.clone()) {
                return Err(serde::de::Error::custom(format!(
                    "the key {key:?} is given twice in one object"
                )));
            }
            map.next_value::<NoRepeatedKeys>()?;
        }
        Ok(NoRepeatedKeys)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<NoRepeatedKeys>()?.is_some() {}
        Ok(NoRepeatedKeys)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(NoRepeatedKeys)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(NoRepeatedKeys)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(NoRepeatedKeys)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(NoRepeatedKeys)
    }
    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(NoRepeatedKeys)
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(NoRepeatedKeys)
    }
}
