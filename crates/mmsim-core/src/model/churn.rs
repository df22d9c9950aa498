//! The engagement model's churn probability: shared by the engine, which
//! draws players' quits from it after each match, and by the engagement-
//! optimising policy, which predicts it before pairing. Two forms: the
//! logistic model of the result, streak, lopsidedness and wait, and the
//! EOMM paper's table of churn by the recent win/loss sequence
//! (`SequenceChurn`).

use serde::{Deserialize, Serialize};

/// Longest losing streak the model counts: past this, more losses in a row
/// change nothing (and a long run cannot push the logit without bound).
pub const MAX_STREAK: u32 = 20;

/// Logistic coefficients of the chance that a player stops after a match:
/// `p = 1 / (1 + exp(-(base_logit + loss * lost + losing_streak * streak +
/// lopsided * gap + wait_per_min * wait_min)))`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChurnModel {
    /// The logit of stopping after a won, even match with no wait.
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
    /// Whether the player's side lost this match.
    pub lost: bool,
    /// Losses in a row ending with this match (0 if it was won).
    pub streak: u32,
    /// `|2 P(team 0 wins) - 1|`.
    pub gap: f64,
    /// Seconds the player waited in the queue for this match.
    pub wait_s: f64,
    /// The player's recent results, this match's last (read by the
    /// sequence model only).
    pub recent: Recent,
}

/// Most results a sequence key may hold: the match just played and up to
/// `MAX_HISTORY - 1` before it.
pub const MAX_HISTORY: u8 = 8;

/// A player's last results, newest in bit 0 (1: lost), at most
/// `MAX_HISTORY` of them: what the sequence model's table is keyed by.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Recent {
    /// Results, newest in bit 0, 1 for a loss.
    pub bits: u16,
    /// How many results `bits` holds (at most `MAX_HISTORY`).
    pub len: u8,
}

impl Recent {
    /// The results after one more match.
    pub fn push(self, lost: bool) -> Recent {
        let mask = (1u16 << MAX_HISTORY) - 1;
        Recent {
            bits: ((self.bits << 1) | u16::from(lost)) & mask,
            len: (self.len + 1).min(MAX_HISTORY),
        }
    }

    /// From a key such as "LLW", oldest first (None: a letter other than W
    /// or L, empty, or too long).
    pub fn parse(key: &str) -> Option<Recent> {
        if key.is_empty() || key.len() > usize::from(MAX_HISTORY) {
            return None;
        }
        key.chars().try_fold(Recent::default(), |r, c| match c {
            'W' => Some(r.push(false)),
            'L' => Some(r.push(true)),
            _ => None,
        })
    }

    /// The newest `len` results.
    fn suffix(self, len: u8) -> u16 {
        self.bits & ((1u16 << len) - 1)
    }
}

/// The paper's churn model (Chen et al., EOMM, WWW 2017, section 4): the
/// chance that a player stops after a match is read from a table keyed by
/// the player's recent results, the match just played last. The longest key
/// that is a suffix of the player's results gives it, so a table can keep
/// long keys for the states that matter ("LLL") and fall back to "W" and
/// "L", which every table has, for the rest and for new players.
#[derive(Clone, Debug, PartialEq)]
pub struct SequenceChurn {
    /// `p[len][bits]`: the entry of the key of `len` results `bits`
    /// (newest in bit 0), if the table has it.
    p: Vec<Vec<Option<f64>>>,
    longest: u8,
}

impl SequenceChurn {
    /// From `(key, probability)` entries; keys as `Recent::parse` reads
    /// them. The caller has checked them (the scenario layer names the key).
    pub fn new<'a>(entries: impl IntoIterator<Item = (&'a str, f64)>) -> SequenceChurn {
        let mut p: Vec<Vec<Option<f64>>> = (0..=MAX_HISTORY).map(|l| vec![None; 1 << l]).collect();
        let mut longest = 0;
        for (key, v) in entries {
            let r = Recent::parse(key).expect("checked key");
            p[usize::from(r.len)][usize::from(r.bits)] = Some(v);
            longest = longest.max(r.len);
        }
        SequenceChurn { p, longest }
    }

    /// The table the scenario layer uses when `[engagement.churn]` is left
    /// out: the shape the paper reports, churn rising with each loss in a
    /// row and a win after a losing run bringing it down. See
    /// docs/scenarios.md for why these values.
    pub const DEFAULT_TABLE: &'static [(&'static str, f64)] = &[
        ("W", 0.03),
        ("L", 0.05),
        ("LL", 0.08),
        ("LLL", 0.12),
        ("LLLL", 0.16),
    ];

    /// Chance of stopping after the results `r` (this match's last).
    pub fn p(&self, r: Recent) -> f64 {
        for len in (1..=self.longest.min(r.len)).rev() {
            if let Some(v) = self.p[usize::from(len)][usize::from(r.suffix(len))] {
                return v;
            }
        }
        // Unreachable with a checked table ("W" and "L" are in it) and a
        // played match (len >= 1).
        0.0
    }

    /// Predicted chance of stopping after a match won with probability
    /// `p_win`, from the results `before` it.
    pub fn p_expected(&self, p_win: f64, before: Recent) -> f64 {
        p_win * self.p(before.push(false)) + (1.0 - p_win) * self.p(before.push(true))
    }
}

/// The churn model the engine draws from and `eomm` and `worst` predict
/// with.
#[derive(Clone, Debug, PartialEq)]
pub enum Churn {
    /// The logistic model on the match's result, streak, gap and wait (`model = "logistic"`).
    Logistic(ChurnModel),
    /// The EOMM paper's table of churn rates by recent results (`model = "sequence"`).
    Sequence(SequenceChurn),
}

/// What a player brings to a match not yet played, for a prediction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Before {
    /// Losses in a row before this match.
    pub streak: u32,
    /// The player's results before this match, newest in bit 0.
    pub recent: Recent,
    /// Seconds the player has waited for this match.
    pub wait_s: f64,
}

fn logit(p: f64) -> f64 {
    (p / (1.0 - p)).ln()
}

impl Churn {
    /// The logit's terms: for the sequence model, the base is the table's
    /// entry had this match been won, and the result term what losing it
    /// added (0 for a win); it has no lopsided or wait terms.
    pub fn terms(&self, x: &ChurnInputs) -> ChurnTerms {
        match self {
            Churn::Logistic(m) => m.terms(x),
            Churn::Sequence(s) => {
                let as_won = Recent {
                    bits: x.recent.bits & !1,
                    ..x.recent
                };
                let base = logit(s.p(as_won));
                ChurnTerms {
                    base,
                    result: logit(s.p(x.recent)) - base,
                    lopsided: 0.0,
                    wait: 0.0,
                }
            }
        }
    }

    /// Predicted chance of stopping after a match won with probability
    /// `p_win`.
    pub fn p_quit_expected(&self, p_win: f64, b: Before) -> f64 {
        match self {
            Churn::Logistic(m) => m.p_quit_expected(p_win, b.streak, b.wait_s),
            Churn::Sequence(s) => s.p_expected(p_win, b.recent),
        }
    }
}

/// The logit's terms, apart, for attributing churn to its causes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChurnTerms {
    /// The constant term: the logit after a won, even match with no wait.
    pub base: f64,
    /// Loss and losing-streak terms together: what the result did.
    pub result: f64,
    /// What the gap between the teams added.
    pub lopsided: f64,
    /// What the player's wait added.
    pub wait: f64,
}

impl ChurnTerms {
    /// The whole logit: the sum of the terms.
    pub fn logit(&self) -> f64 {
        self.base + self.result + self.lopsided + self.wait
    }
}

/// The logistic function, `1 / (1 + e^-x)`: a logit to a probability.
pub fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

impl ChurnModel {
    /// The logit's terms for one player after one match.
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
            recent: Recent::default(),
        });
        let lost = self.p_quit(&ChurnInputs {
            lost: true,
            streak: streak.saturating_add(1),
            gap,
            wait_s,
            recent: Recent::default(),
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
            recent: Recent::default(),
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
            recent: Recent::default(),
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

    /// The paper's table, worked by hand: keys W, L, LL, LLL (the longest
    /// suffix of the player's results that is a key gives the chance).
    fn table() -> SequenceChurn {
        SequenceChurn::new([("W", 0.02), ("L", 0.05), ("LL", 0.10), ("LLL", 0.20)])
    }

    #[test]
    fn the_longest_matching_suffix_gives_the_churn() {
        let t = table();
        let r = |k: &str| Recent::parse(k).unwrap();
        // "WLL": "LL" is its longest key (not "WLL", not "LLL").
        assert_eq!(t.p(r("WLL")), 0.10);
        // Four losses: "LLL" is the longest key that fits.
        assert_eq!(t.p(r("LLLL")), 0.20);
        // A win ends the run whatever came before.
        assert_eq!(t.p(r("LLLW")), 0.02);
        // "LW...L": only "L" fits after a win.
        assert_eq!(t.p(r("LLWL")), 0.05);
        // More than MAX_HISTORY results keep the newest.
        let mut long = Recent::default();
        for _ in 0..20 {
            long = long.push(true);
        }
        assert_eq!((long.len, t.p(long)), (MAX_HISTORY, 0.20));
        assert!(Recent::parse("WDL").is_none() && Recent::parse("").is_none());
        assert!(Recent::parse("LLLLLLLLL").is_none());
    }

    /// A player two losses down facing an opponent he beats with P = 0.75:
    /// 0.75 * p(LLW) + 0.25 * p(LLL) = 0.75 * 0.02 + 0.25 * 0.20 = 0.065;
    /// the same player in an even match: 0.5 * 0.02 + 0.5 * 0.20 = 0.11.
    /// A fresh player (no results) in an even match: (0.02 + 0.05) / 2.
    #[test]
    fn the_expected_churn_weights_the_two_next_states() {
        let c = Churn::Sequence(table());
        let ll = Before {
            streak: 2,
            recent: Recent::parse("LL").unwrap(),
            wait_s: 0.0,
        };
        assert!((c.p_quit_expected(0.75, ll) - 0.065).abs() < 1e-12);
        assert!((c.p_quit_expected(0.5, ll) - 0.11).abs() < 1e-12);
        let fresh = Before {
            recent: Recent::default(),
            ..ll
        };
        assert!((c.p_quit_expected(0.5, fresh) - 0.035).abs() < 1e-12);
        // Its terms: base the won entry's logit, result what the loss added.
        let x = ChurnInputs {
            lost: true,
            streak: 3,
            gap: 0.4,
            wait_s: 600.0,
            recent: Recent::parse("LLL").unwrap(),
        };
        let t = c.terms(&x);
        assert!((sigmoid(t.logit()) - 0.20).abs() < 1e-12);
        assert!((sigmoid(t.base) - 0.02).abs() < 1e-12);
        assert_eq!((t.lopsided, t.wait), (0.0, 0.0));
    }
}
