//! The one place the file schema becomes the engine's configuration: the
//! engine never reads `Scenario`, so a change to the file format stops here.

use super::{GamesDist, Patience, PopulationSection, Scenario, SkillDist, DOTA_MMR_TABLE};
use mmsim_core::engine::population::{self as pop, Population};
use mmsim_core::engine::{self, Arrivals, Config, Parts};
use mmsim_core::policy::MatchFormat;
use mmsim_core::rating::RatingConfig;

/// Builds an engine type from a validated scenario. A trait, not an
/// inherent method, because the engine's types live in `mmsim-core`, which
/// never sees the file schema: bring it into scope to write
/// `Config::from_scenario(&s)`.
pub trait FromScenario {
    /// Reads what the engine needs; the scenario must already be validated.
    fn from_scenario(s: &Scenario) -> Self;
}

impl FromScenario for Config {
    fn from_scenario(s: &Scenario) -> Config {
        let a = &s.arrivals;
        // The rate in the file is the mean at multiplier 1; the engine draws
        // at the busiest hour the run reaches and thins the quieter ones (an
        // hour it never reaches must not set the pace: a huge multiplier
        // there made a short run draw for minutes).
        let peak = a
            .daily_profile
            .as_ref()
            .map(|p| crate::load::busiest_hour(p, s.run.duration.0))
            .unwrap_or(1.0);
        let total: f64 = a.party_sizes.iter().sum();
        let party_size_cdf = a
            .party_sizes
            .iter()
            .scan(0.0, |acc, w| {
                *acc += w / total;
                Some(*acc)
            })
            .collect();
        Config {
            duration: s.run.duration.0,
            warmup: s.run.warmup.0,
            arrivals: Arrivals {
                peak_rate_per_s: a.rate_per_s * peak,
                hourly_rate_per_s: match &a.daily_profile {
                    Some(p) => p.iter().map(|m| a.rate_per_s * m).collect(),
                    None => vec![a.rate_per_s; 24],
                },
                party_size_cdf,
                patience: patience(&a.patience),
                requeue_prob: a.requeue_prob,
                think_time: a.think_time.0,
                trace: a.trace_data.clone(),
            },
            format: MatchFormat {
                teams: s.format.teams as usize,
                team_size: s.format.team_size as usize,
                roles: super::roles::composition(s),
            },
            lobby: s.format.lobby.0,
            sample_interval: s.metrics.sample_interval.0,
            corr_points: s.metrics.corr_points,
            population: population(&s.population),
            ratings_from_win_rate: matches!(s.rating, RatingConfig::WinRate(_))
                && s.population.win_rate.is_some(),
            acceptance: s.acceptance.as_ref().map(|a| engine::Acceptance {
                accept_prob: a.accept_prob,
                timeout: a.timeout.0,
                keep_wait: a.keep_wait,
                decline_penalty: a.decline_penalty.0,
            }),
            backfill: s.backfill.as_ref().map(|b| engine::Backfill {
                leave_per_min: b.leave_per_min,
                fill: b.fill,
                window: b.window,
                widen_per_s: b.widen_per_s,
                max_window: b.max_window,
                short_handed_penalty: b.short_handed_penalty,
            }),
            roles: super::roles::role_draw(s),
            regions: s.regions.as_ref().map(|r| r.to_engine()),
            engagement: s.engagement.as_ref().map(|e| e.to_engine()),
            explain: s.metrics.explain,
            modes: s.modes.as_ref().map(|m| m.to_engine(s)),
            expansions: match &s.policy {
                mmsim_core::policy::PolicyConfig::Ruleset(p) => p
                    .ruleset
                    .as_ref()
                    .map_or_else(Vec::new, |rs| rs.expansion_steps()),
                _ => Vec::new(),
            },
        }
    }
}

impl FromScenario for Parts {
    fn from_scenario(s: &Scenario) -> Parts {
        Parts {
            policy: build_policy(s),
            rating: rating_config(s).build(),
            outcome: s.outcome.build(),
            former: Some(s.teams.build()),
            regional: s.regions.as_ref().map_or_else(Vec::new, |r| {
                r.data_centres.iter().map(|_| build_policy(s)).collect()
            }),
            modal: s.modes.as_ref().map_or_else(Vec::new, |m| m.policies(s)),
        }
    }
}

/// The scenario's `[rating]` with what it leaves to the outcome model
/// filled in: a TrueSkill β left out is derived from `[outcome] scale` and
/// `[match] team_size` (`rating::trueskill::logistic_beta`), so the rating
/// system believes games as noisy as the outcome model makes them. The one
/// place the rating's scale is tied to the outcome's (every outcome model
/// is logistic on true skill; `[outcome.battle]` and `[outcome.gold]`
/// only add what they report).
pub fn rating_config(s: &Scenario) -> RatingConfig {
    match (&s.rating, &s.outcome) {
        (RatingConfig::Trueskill(p), mmsim_core::outcome::OutcomeConfig::Logistic(o)) => {
            RatingConfig::Trueskill(p.with_outcome(o.scale, s.format.team_size as usize))
        }
        (other, _) => other.clone(),
    }
}

/// The scenario's policy; `eomm` and `worst` get the engagement model they
/// predict with (validation made sure there is one).
fn build_policy(s: &Scenario) -> Box<dyn mmsim_core::policy::Policy> {
    match (&s.policy, &s.engagement) {
        (mmsim_core::policy::PolicyConfig::Eomm(p), Some(e)) => {
            Box::new(mmsim_core::policy::Eomm::with_model(p.clone(), e.model()))
        }
        (mmsim_core::policy::PolicyConfig::Worst(p), Some(e)) => {
            Box::new(mmsim_core::policy::Worst::with_model(p.clone(), e.model()))
        }
        _ => s.policy.build(),
    }
}

fn patience(p: &Patience) -> engine::Patience {
    match p {
        Patience::Exponential { mean } => engine::Patience::Exponential { mean: mean.0 },
        Patience::Fixed { after } => engine::Patience::Fixed { after: after.0 },
        Patience::Weibull { shape, scale } => engine::Patience::Weibull {
            shape: *shape,
            scale: scale.0,
        },
        Patience::LogNormal { median, sigma } => engine::Patience::LogNormal {
            median: median.0,
            sigma: *sigma,
        },
        Patience::Never {} => engine::Patience::Never,
    }
}

/// The population as the engine draws it: named distributions become their
/// tables, absent bounds infinite, languages their weights in listed order
/// (a language's bit is its index in the file).
fn population(p: &PopulationSection) -> Population {
    const TRACED_SKILL: SkillDist = SkillDist::Normal {
        mean: 0.0,
        sd: 1.0,
        min: None,
        max: None,
    };
    Population {
        size: p.size,
        // Absent only with a trace, whose players bring their own skills.
        skill: match p.skill.as_ref().unwrap_or(&TRACED_SKILL) {
            &SkillDist::Normal { mean, sd, min, max } => pop::SkillDist::Normal {
                mean,
                sd,
                min: min.unwrap_or(f64::NEG_INFINITY),
                max: max.unwrap_or(f64::INFINITY),
            },
            SkillDist::Quantiles { table } => pop::SkillDist::Quantiles(table.clone()),
            SkillDist::DotaMmr {} => pop::SkillDist::Quantiles(DOTA_MMR_TABLE.to_vec()),
        },
        initial_rating: p.initial_rating,
        tiers: p.tiers.iter().map(|t| (t.tier, t.weight)).collect(),
        categories: p.categories.as_ref().map(|c| c.weights()),
        languages: p.languages.iter().map(|l| l.weight).collect(),
        extra_language_prob: p.extra_language_prob,
        win_rate: p.win_rate.as_ref().map(|w| pop::WinRateDist {
            mean: w.mean,
            sd: w.sd,
            skill_correlation: w.skill_correlation,
        }),
        games: p.games.as_ref().map(|g| match *g {
            GamesDist::LogNormal { median, sigma } => pop::GamesDist::LogNormal { median, sigma },
            GamesDist::Uniform { min, max } => pop::GamesDist::Uniform { min, max },
            GamesDist::Fixed { games } => pop::GamesDist::Fixed(games),
        }),
        seasoned: p.seasoned.as_ref().map(|s| s.to_engine()),
        loaded: p.ratings_data.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::from_text;
    use mmsim_core::engine::Patience;
    use mmsim_core::model::{Category, SimDuration};
    use std::path::Path;

    fn config(extra_arrivals: &str) -> Config {
        config_with(
            "skill = { dist = \"normal\", mean = 1500, sd = 300 }",
            extra_arrivals,
        )
    }

    fn config_with(population: &str, extra_arrivals: &str) -> Config {
        let text = format!(
            r#"
[run]
name = "config"
duration = "2h"
warmup = "10m"
[population]
size = 100
{population}
[arrivals]
rate_per_s = 2.0
party_sizes = [3.0, 1.0]
{extra_arrivals}
[match]
team_size = 2
lobby = "20s"
[policy]
kind = "fixed-limit"
limit = 100
[outcome]
model = "logistic"
duration = "1m"
"#
        );
        let s = from_text(&text, Path::new("test.toml"), &[])
            .expect("test scenario is valid")
            .scenario;
        Config::from_scenario(&s)
    }

    #[test]
    fn a_flat_day_runs_at_the_file_rate_every_hour() {
        let c = config("");
        assert_eq!(c.arrivals.peak_rate_per_s, 2.0);
        assert_eq!(c.arrivals.hourly_rate_per_s, vec![2.0; 24]);
        assert_eq!(c.arrivals.party_size_cdf, vec![0.75, 1.0]);
        assert_eq!(c.duration, SimDuration::from_secs(7200));
        assert_eq!(c.warmup, SimDuration::from_secs(600));
        assert_eq!(
            c.format,
            MatchFormat {
                teams: 2,
                team_size: 2,
                roles: None,
            }
        );
        assert_eq!(c.lobby, SimDuration::from_secs(20));
        assert_eq!(
            c.arrivals.patience,
            Patience::Exponential {
                mean: SimDuration::from_secs(300)
            }
        );
        assert!(!c.ratings_from_win_rate);
    }

    #[test]
    fn a_daily_profile_scales_each_hour_and_peaks_at_its_largest_reached() {
        let mut profile = vec![0.5; 24];
        profile[1] = 0.75;
        profile[7] = 1.5;
        // The 2-hour run reaches hours 0, 1 and (at its last instant) 2:
        // hour 7 sets no pace.
        let c = config(&format!("daily_profile = {profile:?}"));
        assert_eq!(c.arrivals.peak_rate_per_s, 1.5);
        assert_eq!(c.arrivals.hourly_rate_per_s[0], 1.0);
        assert_eq!(c.arrivals.hourly_rate_per_s[7], 3.0);
    }

    #[test]
    fn the_population_keys_become_the_engines_weights_and_tables() {
        let c = config_with(
            "skill = { dist = \"dota-mmr\" }\n\
             initial_rating = 1200\n\
             tiers = [{ tier = 9, weight = 1 }, { tier = 10, weight = 3 }]\n\
             categories = { artillery = 0.7, main-battle-tank = 0.3 }\n\
             languages = [{ name = \"ru\", weight = 2 }, { name = \"en\", weight = 1 }]\n\
             extra_language_prob = 0.5\n\
             win_rate = { mean = 0.5, sd = 0.055 }\n\
             games = { dist = \"uniform\", min = 10, max = 20 }",
            "",
        );
        let p = &c.population;
        assert_eq!(p.size, 100);
        assert_eq!(p.skill, pop::SkillDist::Quantiles(DOTA_MMR_TABLE.to_vec()));
        assert_eq!(p.initial_rating, Some(1200.0));
        assert_eq!(p.tiers, vec![(9, 1.0), (10, 3.0)]);
        // Category order, not key order, so draws do not depend on the file.
        assert_eq!(
            p.categories,
            Some([
                (Category::MainBattleTank, 0.3),
                (Category::LightTank, 0.0),
                (Category::TankDestroyer, 0.0),
                (Category::ArmouredFighter, 0.0),
                (Category::Artillery, 0.7),
            ])
        );
        // A language's bit is its place in the file.
        assert_eq!(p.languages, vec![2.0, 1.0]);
        assert_eq!(p.extra_language_prob, 0.5);
        assert_eq!(
            p.win_rate,
            Some(pop::WinRateDist {
                mean: 0.5,
                sd: 0.055,
                skill_correlation: 1.0
            })
        );
        assert_eq!(p.games, Some(pop::GamesDist::Uniform { min: 10, max: 20 }));
        assert!(!c.ratings_from_win_rate);
    }

    #[test]
    fn an_unbounded_normal_skill_gets_infinite_bounds() {
        let c = config_with(
            "skill = { dist = \"normal\", mean = 1500, sd = 300, min = 0 }",
            "",
        );
        assert_eq!(
            c.population.skill,
            pop::SkillDist::Normal {
                mean: 1500.0,
                sd: 300.0,
                min: 0.0,
                max: f64::INFINITY
            }
        );
        assert_eq!(c.population.tiers, vec![]);
        assert_eq!(c.population.categories, None);
        assert_eq!(c.population.games, None);
    }
}
