//! Party handling from the Dota 2 matchmaking post: one skill and experience
//! number per party, a party-adjusted MMR, and party-count parity between
//! teams. Pure functions; the quality-score policy and the balanced former
//! call them.
//!
//! The adjusted MMR. The post adds the same bonus to every member of a party
//! and shows three parties (party, member MMRs, bonus per member):
//! D `[2994, 2401]` +9, F `[2788, 2626]` +0/+1, C `[3046, 2920, 2100]` +16.
//! The bonus is flat for the party of near-equals (F) and large for the wide
//! ones, far more than in proportion to the spread (F's spread is a quarter of
//! D's, its bonus a twentieth), so the spread enters squared. We use
//!
//! `bonus = size_bonus * (n - 1) + spread_coef * variance`
//!
//! with `n` the party size and `variance` the population variance of the
//! members' MMRs. A least-squares fit to the three parties gives
//! `spread_coef ≈ 9.3e-5` and no size term; we keep a small one
//! (`size_bonus = 0.25`, `spread_coef = 9.0e-5`, fit error barely changed:
//! D +8.2, F +0.8, C +16.3) because the post says party members play better
//! than strangers of equal skill, so a party of equals should still gain a
//! little. The party's total bonus is `n * bonus`, so it grows with size even
//! at equal spread.

use crate::model::{ParamError, Player};
use serde::{Deserialize, Serialize};

/// Coefficients of the party-adjusted MMR (see the module docs for the fit).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PartyAdjust {
    /// Rating points added to each member for every other member of the party.
    pub size_bonus: f64,
    /// Rating points added to each member per squared rating point of the
    /// variance of the party's MMRs.
    pub spread_coef: f64,
}

impl Default for PartyAdjust {
    fn default() -> Self {
        PartyAdjust {
            size_bonus: 0.25,
            spread_coef: 9.0e-5,
        }
    }
}

impl PartyAdjust {
    /// `prefix` is where the table sits below `[teams]`, e.g. `party_adjust`.
    pub fn validate(&self, prefix: &str) -> Result<(), ParamError> {
        for (key, v) in [
            ("size_bonus", self.size_bonus),
            ("spread_coef", self.spread_coef),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(ParamError::new(
                    format!("{prefix}.{key}"),
                    format!("a finite number, zero or more, got {v}"),
                ));
            }
        }
        Ok(())
    }
}

/// The bonus each member of a party with these MMRs receives; zero for a solo.
pub fn party_bonus(mmrs: &[f64], adjust: &PartyAdjust) -> f64 {
    let n = mmrs.len();
    if n < 2 {
        return 0.0;
    }
    let mean = mean(mmrs);
    let variance = mmrs.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / n as f64;
    adjust.size_bonus * (n - 1) as f64 + adjust.spread_coef * variance
}

/// Each member's effective MMR inside the party.
pub fn adjusted_mmrs(mmrs: &[f64], adjust: &PartyAdjust) -> Vec<f64> {
    let bonus = party_bonus(mmrs, adjust);
    mmrs.iter().map(|m| m + bonus).collect()
}

/// The MMR the post would use for this player: the party rating when
/// queuing with others (Dota keeps a separate one), the solo rating alone.
pub fn member_mmr(player: &Player, party_size: usize) -> f64 {
    if party_size >= 2 {
        player.party_rating.value
    } else {
        player.rating.value
    }
}

/// One party seen as a single ticket by the skill and experience criteria.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PartyAggregate {
    /// Players in the party.
    pub size: usize,
    /// Mean MMR of the members: the post says a solo player matched with a
    /// wide party lands near the party's average.
    pub skill: f64,
    /// Mean party-adjusted MMR, for team balance.
    pub adjusted_skill: f64,
    /// Mean experience of the members.
    pub experience: f64,
    /// Highest minus lowest member MMR.
    pub spread: f64,
}

/// Aggregates from plain numbers: member MMRs and experiences, same order.
pub fn aggregate_values(mmrs: &[f64], experiences: &[f64], adjust: &PartyAdjust) -> PartyAggregate {
    let hi = mmrs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let lo = mmrs.iter().copied().fold(f64::INFINITY, f64::min);
    let skill = mean(mmrs);
    PartyAggregate {
        size: mmrs.len(),
        skill,
        adjusted_skill: skill + party_bonus(mmrs, adjust),
        experience: mean(experiences),
        spread: if mmrs.is_empty() { 0.0 } else { hi - lo },
    }
}

/// Aggregates of a party of players, using [`member_mmr`] and
/// `Player::experience`.
pub fn aggregate(members: &[&Player], adjust: &PartyAdjust) -> PartyAggregate {
    let mmrs: Vec<f64> = members
        .iter()
        .map(|p| member_mmr(p, members.len()))
        .collect();
    let exp: Vec<f64> = members.iter().map(|p| p.experience()).collect();
    aggregate_values(&mmrs, &exp, adjust)
}

/// The number of parties (solo players count as parties of one) on the team
/// with the most minus that on the team with the fewest, for a split given as
/// party indices per team. A party of five against five solos gives 4.
pub fn party_count_gap<T: AsRef<[usize]>>(split: &[T]) -> usize {
    let most = split.iter().map(|t| t.as_ref().len()).max().unwrap_or(0);
    let fewest = split.iter().map(|t| t.as_ref().len()).min().unwrap_or(0);
    most - fewest
}

/// Party-count parity as a score in [0, 1]: 1 when every team has the same
/// number of parties, 0 at the worst gap a team of `team_size` allows (one
/// full party against all solos).
pub fn party_parity<T: AsRef<[usize]>>(split: &[T], team_size: usize) -> f64 {
    if team_size < 2 {
        return 1.0;
    }
    let gap = party_count_gap(split) as f64;
    (1.0 - gap / (team_size - 1) as f64).clamp(0.0, 1.0)
}

fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        0.0
    } else {
        xs.iter().sum::<f64>() / xs.len() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{PlayerId, Rating};

    #[test]
    fn adjusted_mmrs_match_the_posts_example_within_a_point() {
        let adj = PartyAdjust::default();
        let d = adjusted_mmrs(&[2994.0, 2401.0], &adj);
        let f = adjusted_mmrs(&[2788.0, 2626.0], &adj);
        let c = adjusted_mmrs(&[3046.0, 2920.0, 2100.0], &adj);
        let post = [
            (d[0], 3003.0),
            (d[1], 2410.0),
            (f[0], 2788.0),
            (f[1], 2627.0),
            (c[0], 3062.0),
            (c[1], 2936.0),
            (c[2], 2116.0),
        ];
        for (ours, theirs) in post {
            assert!((ours - theirs).abs() <= 1.0, "{ours} vs {theirs}");
        }
        // Team totals of the post's match: Radiant 13515, Dire 13502.
        let radiant = d[0] + f[0] + 2687.0 + f[1] + d[1];
        let dire = c[0] + c[1] + 2716.0 + 2672.0 + c[2];
        assert!((radiant - 13515.0).abs() <= 2.0, "{radiant}");
        assert!((dire - 13502.0).abs() <= 2.0, "{dire}");
    }

    #[test]
    fn bonus_grows_with_size_and_spread_and_is_zero_alone() {
        let adj = PartyAdjust::default();
        assert_eq!(party_bonus(&[2500.0], &adj), 0.0);
        let pair = party_bonus(&[2500.0, 2500.0], &adj);
        let five = party_bonus(&[2500.0; 5], &adj);
        assert!((pair - 0.25).abs() < 1e-12 && (five - 1.0).abs() < 1e-12);
        let narrow = party_bonus(&[2600.0, 2400.0], &adj);
        let wide = party_bonus(&[2900.0, 2100.0], &adj);
        // Variance 10_000 vs 160_000: the squared spread makes it 16x, not 4x.
        assert!((narrow - (0.25 + 0.9)).abs() < 1e-9, "{narrow}");
        assert!((wide - (0.25 + 14.4)).abs() < 1e-9, "{wide}");
    }

    #[test]
    fn aggregates_use_party_rating_inside_a_party() {
        let mut a = Player::new(PlayerId(0), 0.0, Rating::new(2000.0, 0.0, 0.0));
        a.party_rating.value = 2200.0;
        a.games = 40;
        let mut b = Player::new(PlayerId(1), 0.0, Rating::new(3000.0, 0.0, 0.0));
        b.party_rating.value = 2800.0;
        b.games = 280;
        let agg = aggregate(&[&a, &b], &PartyAdjust::default());
        assert_eq!(agg.size, 2);
        assert!((agg.skill - 2500.0).abs() < 1e-9);
        assert!((agg.spread - 600.0).abs() < 1e-9);
        // Experience is ln(games + 40): 40 and 280 games.
        let exp = ((80f64).ln() + (320f64).ln()) / 2.0;
        assert!((agg.experience - exp).abs() < 1e-12);
        assert!((agg.adjusted_skill - (2500.0 + 0.25 + 9.0e-5 * 90_000.0)).abs() < 1e-9);
        let solo = aggregate(&[&a], &PartyAdjust::default());
        assert_eq!(solo.skill, 2000.0);
        assert_eq!(solo.adjusted_skill, 2000.0);
    }

    #[test]
    fn party_parity_counts_solos_as_parties() {
        // A five-stack against five solos is the worst case.
        let split = vec![vec![0], vec![1, 2, 3, 4, 5]];
        assert_eq!(party_count_gap(&split), 4);
        assert_eq!(party_parity(&split, 5), 0.0);
        let split = vec![vec![0, 1, 2], vec![3, 4, 5, 6]];
        assert_eq!(party_count_gap(&split), 1);
        assert!((party_parity(&split, 5) - 0.75).abs() < 1e-12);
        assert_eq!(party_parity(&[vec![0], vec![1]], 1), 1.0);
    }

    #[test]
    fn bad_coefficients_name_their_key() {
        let bad = PartyAdjust {
            size_bonus: -1.0,
            ..PartyAdjust::default()
        };
        assert_eq!(
            bad.validate("party_adjust").unwrap_err().key,
            "party_adjust.size_bonus"
        );
    }
}
