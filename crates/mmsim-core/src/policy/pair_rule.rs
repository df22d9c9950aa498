//! What `--explain` asks of a policy whose rule is not a plain rating
//! window (`Explain::pair_rule`): for one ticket and one candidate at one
//! instant, which of the policy's own rules decides, whether it lets them
//! meet, and the figures it compared, so a story can say "percentile gap
//! 7.2 > half-width 5" rather than `fill`.

use crate::model::BlockRule;

/// One answer of a policy's pair rule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RuleCheck {
    /// The rule, named as the policy's docs name it; when the pair passes,
    /// the rule that would have refused it had the figures been worse.
    pub rule: BlockRule,
    /// Whether this rule lets the two meet at that instant.
    pub allows: bool,
    /// The measure the rule compares (percentile gap, pair cost, ...), if any.
    pub value: Option<f64>,
    /// The bound it must be within (half-width, threshold, ...), if any.
    pub limit: Option<f64>,
    /// The ticket's and the candidate's windows in rating points, where
    /// the rule has windows (shown beside the candidate).
    pub window: Option<f64>,
    /// The candidate's window in rating points, where the rule has windows.
    pub their_window: Option<f64>,
    /// Whether, once it allows the pair, it keeps allowing it as both wait
    /// longer (all else as at that instant). Only then can the engine say at
    /// which wait it first allowed a match.
    pub monotone: bool,
}

impl RuleCheck {
    /// A rule comparing `value` with `limit` (allowed when within it).
    pub fn within(rule: BlockRule, value: f64, limit: f64, monotone: bool) -> Self {
        RuleCheck {
            rule,
            // A bound computed as a sum of products lands a rounding error
            // below the gap it was set to reach: within 1e-9 is within.
            allows: value <= limit + 1e-9,
            value: Some(value),
            limit: Some(limit),
            window: None,
            their_window: None,
            monotone,
        }
    }

    /// A rule that refuses the pair outright, with no figure to compare and
    /// nothing that waiting loosens.
    pub fn refuses(rule: BlockRule) -> Self {
        RuleCheck {
            rule,
            allows: false,
            value: None,
            limit: None,
            window: None,
            their_window: None,
            monotone: false,
        }
    }

    /// With the two tickets' windows in rating points.
    pub fn windows(mut self, window: f64, their_window: f64) -> Self {
        self.window = Some(window);
        self.their_window = Some(their_window);
        self
    }
}
