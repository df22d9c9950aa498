//! Moved from mmsim-core's `engine/population.rs`: these checks build their world from
//! scenario text, which only this crate reads.

#![allow(unused_imports)]
use mmsim_core::engine::population::*;
use mmsim_core::engine::streams::{stream, Stream};
use mmsim_core::model::{Category, Player, Rating};
use mmsim_scenario::FromScenario;
use mmsim_scenario::DOTA_MMR_TABLE;
use rand::Rng;

#[test]
fn inverse_cdf_hits_the_table_and_interpolates() {
    let t = &DOTA_MMR_TABLE;
    assert_eq!(inverse_cdf(t, 0.5), 2250.0);
    assert_eq!(inverse_cdf(t, 0.99), 4100.0);
    assert!((inverse_cdf(t, 0.375) - 2125.0).abs() < 1e-9);
    // Extended with the first segment's slope (400 per 5%) down to p = 0.
    assert!((inverse_cdf(t, 0.0) - 700.0).abs() < 1e-9);
    assert!((inverse_cdf(t, 1.0) - 4150.0).abs() < 1e-9);
}

#[test]
fn sampled_dota_population_reproduces_the_percentiles() {
    let mut rng = stream(3, Stream::Population);
    let mut skills: Vec<f64> = (0..50_000)
        .map(|_| inverse_cdf(&DOTA_MMR_TABLE, rng.random()))
        .collect();
    skills.sort_by(f64::total_cmp);
    for [p, v] in DOTA_MMR_TABLE {
        let got = skills[(p * skills.len() as f64) as usize];
        // Steepest segment: 700 points per 5%; 50k draws put the
        // empirical quantile within ~0.3% of p, i.e. ~40 points.
        assert!((got - v).abs() < 60.0, "p{p}: {got} vs {v}");
    }
}

#[test]
fn bounded_normal_stays_inside_its_bounds() {
    let dist = SkillDist::Normal {
        mean: 1500.0,
        sd: 500.0,
        min: 0.0,
        max: 3000.0,
    };
    let mut rng = stream(1, Stream::Population);
    let players = generate(20_000, &dist, Rating::new(1500.0, 0.0, 0.0), &mut rng);
    assert!(players
        .iter()
        .all(|p| (0.0..=3000.0).contains(&p.true_skill)));
    let mean = players.iter().map(|p| p.true_skill).sum::<f64>() / 20_000.0;
    assert!((mean - 1500.0).abs() < 15.0, "{mean}");
}

fn population() -> Population {
    Population {
        size: 20_000,
        skill: SkillDist::Normal {
            mean: 1500.0,
            sd: 300.0,
            min: f64::NEG_INFINITY,
            max: f64::INFINITY,
        },
        initial_rating: None,
        tiers: vec![],
        categories: None,
        languages: vec![],
        extra_language_prob: 0.0,
        win_rate: None,
        games: None,
        seasoned: None,
        loaded: None,
    }
}

#[test]
fn attributes_follow_their_weights_and_tie_win_rate_to_skill() {
    let pop = Population {
        tiers: vec![(9, 1.0), (10, 3.0)],
        categories: Some([
            (Category::MainBattleTank, 0.3),
            (Category::LightTank, 0.0),
            (Category::TankDestroyer, 0.0),
            (Category::ArmouredFighter, 0.0),
            (Category::Artillery, 0.7),
        ]),
        languages: vec![1.0, 1.0],
        extra_language_prob: 0.5,
        win_rate: Some(WinRateDist {
            mean: 0.5,
            sd: 0.055,
            skill_correlation: 1.0,
        }),
        games: Some(GamesDist::Fixed(1000)),
        ..population()
    };
    let mut rng = stream(2, Stream::Population);
    let mut players = generate(20_000, &pop.skill, Rating::new(1500.0, 0.0, 0.0), &mut rng);
    draw_attributes(&mut players, &pop, &mut rng);
    let share = |f: &dyn Fn(&Player) -> bool| {
        players.iter().filter(|p| f(p)).count() as f64 / players.len() as f64
    };
    assert!((share(&|p| p.tier == 10) - 0.75).abs() < 0.015);
    assert!((share(&|p| p.category == Some(Category::Artillery)) - 0.7).abs() < 0.015);
    // Half speak a second language, which is always the other one.
    assert!((share(&|p| p.languages == 3) - 0.5).abs() < 0.015);
    assert!(players
        .iter()
        .all(|p| p.languages & 3 != 0 && p.languages < 4));
    // Win rates: mean 0.5, sd 0.055, in the order of true skill.
    let rates: Vec<f64> = players.iter().map(|p| p.win_rate).collect();
    let mean = rates.iter().sum::<f64>() / rates.len() as f64;
    let sd = (rates.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / rates.len() as f64).sqrt();
    assert!(
        (mean - 0.5).abs() < 0.002 && (sd - 0.055).abs() < 0.003,
        "{mean} {sd}"
    );
    let best = players
        .iter()
        .max_by(|a, b| a.true_skill.total_cmp(&b.true_skill))
        .unwrap();
    let worst = players
        .iter()
        .min_by(|a, b| a.true_skill.total_cmp(&b.true_skill))
        .unwrap();
    assert!(best.win_rate > 0.68 && worst.win_rate < 0.32);
    // The rate is a record the engine can extend: (wins + 5) / (games + 10).
    assert!(players
        .iter()
        .all(|p| p.games == 1000 && p.win_rate == (p.wins as f64 + 5.0) / 1010.0));
}

#[test]
fn a_population_without_attributes_keeps_the_neutral_defaults() {
    let pop = population();
    let mut rng = stream(2, Stream::Population);
    let mut players = generate(100, &pop.skill, Rating::new(1500.0, 0.0, 0.0), &mut rng);
    let before = players.clone();
    draw_attributes(&mut players, &pop, &mut rng);
    assert_eq!(players, before);
    assert!(players
        .iter()
        .all(|p| p.tier == 0 && p.languages == 1 && p.win_rate == 0.5));
}

#[test]
fn seasoned_ratings_correlate_with_skill_as_stated() {
    let pop = population();
    let mut rng = stream(4, Stream::Population);
    let mut players = generate(
        20_000,
        &pop.skill,
        Rating::new(1500.0, 350.0, 0.0),
        &mut rng,
    );
    let seasoned = Seasoned {
        correlation: 0.8,
        deviation: 80.0,
        games: 40,
    };
    season(&mut players, &seasoned, &mut rng);
    let skills: Vec<f64> = players.iter().map(|p| p.true_skill).collect();
    let ratings: Vec<f64> = players.iter().map(|p| p.rating.value).collect();
    let r = pearson(&skills, &ratings);
    // The standard error of Pearson's r near 0.8 with 20,000 pairs is
    // (1 - 0.8^2) / sqrt(20000) = 0.0025; 0.01 is four of them.
    assert!((r - 0.8).abs() < 0.01, "{r}");
    // Noise, not a shift or a rescaling: the mean stays, the spread grows
    // to sd / rho (300 / 0.8 = 375).
    let mean = ratings.iter().sum::<f64>() / 20_000.0;
    let sd = (ratings.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 20_000.0).sqrt();
    assert!(
        (mean - 1500.0).abs() < 10.0 && (sd - 375.0).abs() < 8.0,
        "{mean} {sd}"
    );
    assert!(players.iter().all(|p| p.rating.deviation == 80.0
        && p.party_rating == p.rating
        && p.games == 40
        && p.rating.games == 40
        && p.wins == 20));
}

fn pearson(x: &[f64], y: &[f64]) -> f64 {
    let n = x.len() as f64;
    let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let cov: f64 = x.iter().zip(y).map(|(a, b)| (a - mx) * (b - my)).sum();
    let vx: f64 = x.iter().map(|a| (a - mx).powi(2)).sum();
    let vy: f64 = y.iter().map(|b| (b - my).powi(2)).sum();
    cov / (vx * vy).sqrt()
}

/// Issue 31: with `games` but no `win_rate`, every record started with no
/// wins, so the shown win rate fell to 5 / (games + 10) (1-4%) at a
/// player's first result. The documented default is 50%: half the games
/// won, and the rates stay near one half through the run.
#[test]
fn games_without_a_win_rate_start_at_half_won() {
    let text = include_str!("../../../../scenarios/smoke.toml").replace(
        "[population]\n",
        "[population]\ngames = { dist = \"log-normal\", median = 400, sigma = 1.2 }\n",
    );
    let s = mmsim_scenario::from_text(&text, std::path::Path::new("games.toml"), &[])
        .unwrap()
        .scenario;
    let players = mmsim_scenario::run::run_keeping(&s, 3).output.players;
    let played: Vec<&Player> = players.iter().filter(|p| p.games > 20).collect();
    assert!(played.len() > 1000, "{}", played.len());
    let mean = played.iter().map(|p| p.win_rate).sum::<f64>() / played.len() as f64;
    assert!((0.48..0.52).contains(&mean), "mean shown win rate {mean}");
    let low = played.iter().filter(|p| p.win_rate < 0.3).count();
    assert!(low * 100 < played.len(), "{low} players under 30%");
    for p in &played {
        assert!(p.wins <= p.games);
    }
}
