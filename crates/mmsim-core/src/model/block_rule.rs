//! The vocabulary of why a ticket waited: the rule that kept it from its
//! nearest candidate. Policies name the rules they apply (`Explain::rating_window`
//! and its kin answer in these terms), the engine's `--explain` layer decides
//! which one blocked, and `metrics::explain` counts them; it lives here, below
//! all three, so none of them has to import another for it.

use serde::{Deserialize, Serialize};

/// The rule that kept a ticket from its nearest candidate, checked in this
/// order (the first that refuses names the blocker).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockRule {
    /// The two parties cannot both fit the match's teams (two trios in 5v5
    /// may only meet as opponents: a split no team-size packing allows).
    PartySplit,
    /// The role queue: the candidate's roles cannot complete the seed's;
    /// or the players a match with the ticket could draw on cannot staff
    /// one match's roles at all (`explain::RoleSupply`).
    Roles,
    /// `[regions]`: no data centre both tickets may use at their waits.
    Latency,
    /// The policy's rating window (either side's, as windows are mutual).
    RatingWindow,
    /// A policy with a quality threshold (`quality`): candidates pass every
    /// pair rule and the pool holds enough players, but no match scored the
    /// threshold the ticket's wait asked for.
    QualityThreshold,
    /// Every rule the policy reports allows the candidate: the match could
    /// not be filled (too few acceptable players), or the policy applies a
    /// rule it does not report (only window policies report theirs).
    Fill,
    /// No other ticket was waiting.
    Alone,
    /// The ticket waited for the policy's next pass: a batch (batch-weighted
    /// every `tick`) or any policy's tick in `tick` mode, which does not look
    /// at a ticket when it joins.
    BatchDue,
    /// percentile-window: the two are further apart in the population's
    /// percentiles than either one's half-width at its wait.
    PercentileWindow,
    /// adaptive-brackets: the two are neither in the same bracket nor in
    /// adjacent ones ("499vs990 cannot happen").
    Bracket,
    /// adaptive-brackets: same or adjacent brackets, but the gap exceeds a
    /// bracket's width (its largest rating difference).
    BracketWidth,
    /// weighted-score: the pair's cost (gap, recency, less both waits'
    /// credit) is above `threshold`.
    WeightedScore,
    /// weighted-score: one played the other within the last `avoid_last` matches.
    Rematch,
    /// sweep-prune: the two intervals `rating ± half-width` do not overlap.
    SweepInterval,
    /// virtual-decay: the higher ticket's decayed virtual rating is still
    /// more than `limit` above the lower one's rating.
    VirtualRating,
    /// eomm: the tick paired the two elsewhere at a lower summed predicted
    /// churn. On the candidate graph the candidate is within `max_gap` but
    /// its nearer candidates went to lighter pairs (a ticket is linked only
    /// to its `candidates` nearest); on the complete graph the round's swaps
    /// from the rating-order pairing ended without this pair.
    PredictedChurn,
    /// Out of the pool in a ready check that failed (`[acceptance]`), from
    /// the failed match until the check's cancel returned it.
    ReadyCheck,
}

/// Every rule, in the order summaries and plots list them (`index` is the position here).
pub const RULES: [BlockRule; 17] = [
    BlockRule::PartySplit,
    BlockRule::Roles,
    BlockRule::Latency,
    BlockRule::RatingWindow,
    BlockRule::QualityThreshold,
    BlockRule::Fill,
    BlockRule::Alone,
    BlockRule::BatchDue,
    BlockRule::PercentileWindow,
    BlockRule::Bracket,
    BlockRule::BracketWidth,
    BlockRule::WeightedScore,
    BlockRule::Rematch,
    BlockRule::SweepInterval,
    BlockRule::VirtualRating,
    BlockRule::PredictedChurn,
    BlockRule::ReadyCheck,
];

impl BlockRule {
    /// Position in `RULES`: the index of this rule's counters.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The rule's name in `summary.json`, `explain.jsonl` and the report (snake case).
    pub fn name(self) -> &'static str {
        match self {
            BlockRule::PartySplit => "party_split",
            BlockRule::Roles => "roles",
            BlockRule::Latency => "latency",
            BlockRule::RatingWindow => "rating_window",
            BlockRule::QualityThreshold => "quality_threshold",
            BlockRule::Fill => "fill",
            BlockRule::Alone => "alone",
            BlockRule::BatchDue => "batch_due",
            BlockRule::PercentileWindow => "percentile_window",
            BlockRule::Bracket => "bracket",
            BlockRule::BracketWidth => "bracket_width",
            BlockRule::WeightedScore => "weighted_score",
            BlockRule::Rematch => "rematch",
            BlockRule::SweepInterval => "sweep_interval",
            BlockRule::VirtualRating => "virtual_rating",
            BlockRule::PredictedChurn => "predicted_churn",
            BlockRule::ReadyCheck => "ready_check",
        }
    }
}

/// One expansion step of a vendor ruleset's rule: from `at_s` of waiting,
/// the rule's `limit` (`maxDistance`, `minCount`, `maxLatency`, ...) is
/// `value`. Rulesets list them; explain's ticket stories say which a
/// ticket's wait reached.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExpansionStep {
    /// Seconds of waiting from which this step holds.
    pub at_s: f64,
    /// The rule's name in the ruleset.
    pub rule: String,
    /// The quantity the step sets (`maxDistance`, `minCount`, `maxLatency`, ...).
    pub limit: String,
    /// The value it takes from `at_s` on, in the ruleset's own units.
    pub value: f64,
}
