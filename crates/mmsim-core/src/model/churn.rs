//! The engagement model's churn probability: shared by the engine, which
//! draws players' quits from it after each match, and by the engagement-
//! optimising policy, which predicts it before pairing.

use serde::{Deserialize, Serialize};

/// Longest losing streak the model counts: past this, more losses in a row
/// change nothing (and a long run cannot push the logit without bound).
pub const MAX_STREAK: u32 = 20;

/// Logistic coefficients of the chance that a player stops after a match:
/// `p = 1 / (1 + exp(-(base_logit + loss * lost + losing_streak * streak +
/// lopsided * gap + wait_per_min * wait_min)))`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChurnModel {
    pub base_logit: f64,
    /// Added when the player's side lost.
    pub loss: f64,
    /// Per loss in the current streak (this match included; 0 after a win).
    pub losing_streak: f64,
    /// Per unit of win-probability gap, `|2 P(team 0 wins) - 1|` in [0, 1].
    pub lopsided: f64,
    /// Per minute the player waited in the queue for this match.
    pub wait_per_min: f64,
}

impl Default for ChurnModel {
    /// A mild model: about 2% stop after a won, even match with no wait.
    fn default() -> Self {
        ChurnModel {
            base_logit: -4.0,
            loss: 0.6,
            losing_streak: 0.3,
            lopsided: 1.0,
            wait_per_min: 0.3,
        }
    }
}

/// One player's view of one finished match.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChurnInputs {
    pub lost: bool,
    /// Losses in a row ending with this match (0 if it was won).
    pub streak: u32,
    /// `|2 P(team 0 wins) - 1|`.
    pub gap: f64,
    pub wait_s: f64,
}

/// The logit's terms, apart, for attributing churn to its causes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChurnTerms {
    pub base: f64,
    /// Loss and losing-streak terms together: what the result did.
    pub result: f64,
    pub lopsided: f64,
    pub wait: f64,
}

impl ChurnTerms {
    pub fn logit(&self) -> f64 {
        self.base + self.result + self.lopsided + self.wait
    }
}

pub fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

impl ChurnModel {
    pub fn terms(&self, x: &ChurnInputs) -> ChurnTerms {
        let lost = if x.lost { 1.0 } else { 0.0 };
        ChurnTerms {
            base: self.base_logit,
            result: self.loss * lost + self.losing_streak * f64::from(x.streak.min(MAX_STREAK)),
            lopsided: self.lopsided * x.gap,
            wait: self.wait_per_min * x.wait_s / 60.0,
        }
    }

    /// Chance that the player stops after this match.
    pub fn p_quit(&self, x: &ChurnInputs) -> f64 {
        sigmoid(self.terms(x).logit())
    }

    /// Predicted chance of stopping after a match not yet played, won with
    /// probability `p_win`: the two outcomes' chances weighted by it.
    /// `streak` is the player's losing streak before the match.
    pub fn p_quit_expected(&self, p_win: f64, streak: u32, wait_s: f64) -> f64 {
        let gap = (2.0 * p_win - 1.0).abs();
        let won = self.p_quit(&ChurnInputs {
            lost: false,
            streak: 0,
            gap,
            wait_s,
        });
        let lost = self.p_quit(&ChurnInputs {
            lost: true,
            streak: streak.saturating_add(1),
            gap,
            wait_s,
        });
        p_win * won + (1.0 - p_win) * lost
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> ChurnModel {
        ChurnModel {
            base_logit: -3.0,
            loss: 0.5,
            losing_streak: 0.25,
            lopsided: 1.0,
            wait_per_min: 0.2,
        }
    }

    /// Worked by hand: a player who lost the third game in a row, in a match
    /// whose favourite had P = 0.8 (gap 0.6), after a 90 s wait:
    /// logit = -3 + 0.5 + 0.25 * 3 + 1.0 * 0.6 + 0.2 * 1.5 = -0.85,
    /// p = 1 / (1 + e^0.85) = 1 / (1 + 2.339647) = 0.299433.
    #[test]
    fn the_probability_of_a_worked_example() {
        let x = ChurnInputs {
            lost: true,
            streak: 3,
            gap: 0.6,
            wait_s: 90.0,
        };
        let t = model().terms(&x);
        assert!((t.logit() + 0.85).abs() < 1e-12, "{}", t.logit());
        assert!((t.result - 1.25).abs() < 1e-12 && (t.wait - 0.3).abs() < 1e-12);
        assert!((model().p_quit(&x) - 0.299_433).abs() < 1e-6);
        // A win after the same wait in an even match: -3 + 0.3 = -2.7,
        // p = 1 / (1 + e^2.7) = 1 / 15.879732 = 0.062973.
        let won = ChurnInputs {
            lost: false,
            streak: 0,
            gap: 0.0,
            wait_s: 90.0,
        };
        assert!((model().p_quit(&won) - 0.062_973).abs() < 1e-6);
        // The streak stops counting at MAX_STREAK.
        let long = |streak| ChurnInputs { streak, ..x };
        assert_eq!(model().p_quit(&long(20)), model().p_quit(&long(500)));
    }

    /// Expected over the outcome: an even match (P = 0.5, gap 0) with no
    /// wait and no streak before: half of sigmoid(-3) = 0.047426 and half of
    /// sigmoid(-3 + 0.5 + 0.25) = sigmoid(-2.25) = 0.095349.
    #[test]
    fn the_expected_probability_weights_both_outcomes() {
        let p = model().p_quit_expected(0.5, 0, 0.0);
        assert!((p - 0.5 * (0.047_426 + 0.095_349)).abs() < 1e-6, "{p}");
        // A heavy favourite churns less than the underdog it would face.
        let fav = model().p_quit_expected(0.9, 0, 0.0);
        let dog = model().p_quit_expected(0.1, 0, 0.0);
        assert!(fav < dog);
    }
}
