//! The Dota preset's ranked ladder run for weeks, checked against the true
//! skills it measures: as shipped (`shrink_others`) its percentiles end
//! within 5% of the skills' after 128 days, and TrueSkill as published
//! (the account docs/scenarios.md gives of why it widens) must end on the
//! skills' scale at 32 days,
//! neither stretched past them (a calibration boost, a β the outcome model
//! disagrees with) nor left off-centre (a start away from the skills' mean),
//! and its errors no larger than the σ it reports. A settled rating is skill
//! plus estimation noise, so percentiles are also compared with the skills'
//! blurred by that noise (docs/scenarios.md: why not 5% of the skills').

use mmsim_core::model::Player;
use std::path::Path;

/// The `q` quantile of `values` (nearest rank).
fn quantile(values: &mut [f64], q: f64) -> f64 {
    values.sort_by(f64::total_cmp);
    values[((values.len() - 1) as f64 * q).round() as usize]
}

/// Least-squares slope of rating on true skill: 1 when the ratings are on
/// the skills' scale.
fn slope(players: &[Player]) -> f64 {
    let n = players.len() as f64;
    let mx = players.iter().map(|p| p.true_skill).sum::<f64>() / n;
    let my = players.iter().map(|p| p.rating.value).sum::<f64>() / n;
    let sxy: f64 = players
        .iter()
        .map(|p| (p.true_skill - mx) * (p.rating.value - my))
        .sum();
    let sxx: f64 = players.iter().map(|p| (p.true_skill - mx).powi(2)).sum();
    sxy / sxx
}

/// The Dota preset's ranked ladder with `extra` overrides, on a third of
/// its players and arrivals (the same traffic per player) for 32 days:
/// ranked takes about half the games (normal, on its own ladder, the
/// rest), so twice the 16 days one shared ladder needed gives it about as
/// many (a median of 206 solo games a player, seed 1). Its players with at
/// least 50 solo games on it
/// are checked (all but a handful, whatever their skill: how many ranked
/// solo games a player gets depends on the mode and party size draws and
/// on when they unlocked ranked, and less on skill, though the tails'
/// slower matches give the lowest and highest tenths about a fifth fewer
/// games, seed 1). About 20 s in a debug build.
fn dota_ladder(extra: &[&str]) -> Vec<Player> {
    ladder_with(&[], extra)
}

/// The same ladder rated by TrueSkill as published, with the preset's
/// spread before it read its players against it (`shrink_others = false`,
/// `sigma = 750`): the ladder docs/scenarios.md's account of the widening
/// measures.
fn published_ladder(extra: &[&str]) -> Vec<Player> {
    ladder_with(&["rating.shrink_others=false", "rating.sigma=750"], extra)
}

fn ladder_with(base: &[&str], extra: &[&str]) -> Vec<Player> {
    let text = include_str!("../../../../scenarios/dota2-5v5.toml");
    let sets: Vec<String> = [
        "run.duration=32d",
        "population.size=1000",
        "arrivals.rate_per_s=0.2",
    ]
    .iter()
    .chain(base)
    .chain(extra)
    .map(|s| s.to_string())
    .collect();
    let scenario = mmsim_scenario::from_text(text, Path::new("dota2-5v5.toml"), &sets)
        .unwrap()
        .scenario;
    let out = mmsim_scenario::run::run_summary(&scenario, scenario.run.seed, &mut |_, _| {});
    let ranked = out
        .ladders
        .into_iter()
        .find(|l| l.name == "ranked")
        .expect("the preset has a ranked ladder");
    let settled: Vec<Player> = ranked
        .players
        .into_iter()
        .filter(|p| p.rating.games >= 50)
        .collect();
    assert!(settled.len() >= 500, "not settled: {}", settled.len());
    settled
}

/// True skill plus N(0, `sd`) noise, as a sample: each skill with 200
/// normal draws (Box-Muller from a fixed-seed generator, so the test stays
/// deterministic). What a noisy but unbiased estimator of these skills
/// would show.
fn skills_plus_noise(skills: &[f64], sd: f64) -> Vec<f64> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_pcg::Pcg64::seed_from_u64(1);
    let mut out = Vec::with_capacity(skills.len() * 200);
    for &s in skills {
        for _ in 0..100 {
            let (u, v): (f64, f64) = (1.0 - rng.random::<f64>(), rng.random());
            let r = (-2.0 * u.ln()).sqrt();
            let t = std::f64::consts::TAU * v;
            out.push(s + sd * r * t.cos());
            out.push(s + sd * r * t.sin());
        }
    }
    out
}

/// Sample standard deviation of rating - true skill: the ladder's own
/// estimation noise (its mean, the ladder's offset, taken out).
fn residual_sd(players: &[Player]) -> f64 {
    let n = players.len() as f64;
    let res: Vec<f64> = players
        .iter()
        .map(|p| p.rating.value - p.true_skill)
        .collect();
    let m = res.iter().sum::<f64>() / n;
    (res.iter().map(|r| (r - m).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
}

const PERCENTILES: [f64; 8] = [0.05, 0.10, 0.25, 0.50, 0.75, 0.90, 0.95, 0.99];

/// Everything the shipped ladder must satisfy, as a list of failures (empty
/// when it holds), so that the boosted ladder's test can show the same
/// checks reject it.
fn scale_failures(players: &[Player]) -> Vec<String> {
    let mut skills: Vec<f64> = players.iter().map(|p| p.true_skill).collect();
    let mut ratings: Vec<f64> = players.iter().map(|p| p.rating.value).collect();
    let sd = residual_sd(players);
    let mut noisy = skills_plus_noise(&skills, sd);
    let mut report = format!(" residual sd {sd:.0};");
    let mut failures = Vec::new();
    for q in PERCENTILES {
        let (s, r) = (quantile(&mut skills, q), quantile(&mut ratings, q));
        let c = quantile(&mut noisy, q);
        report += &format!(
            " p{}: {r:.0} vs {s:.0} (+noise {c:.0});",
            (q * 100.0) as u32
        );
        // Against the skills themselves: within 10%. Measured (seed 1): p5
        // 9.7% low, p10 and p25 about 6% low, the rest within 3%.
        if (r / s - 1.0).abs() >= 0.10 {
            failures.push(format!("p{} {r:.0} vs skill {s:.0}", (q * 100.0) as u32));
        }
        // Against the skills plus the ladder's own noise (what a noisy but
        // unbiased estimator shows): within 5% from p10 up; measured within
        // 3.3%. Not p5, which is 10.0% low against it too: the lower tail
        // is rated under its skill, not only blurred, and running longer
        // does not close it (TrueSkill keeps widening a ladder whose
        // ratings miss: 0.9% to 10.6% low after 128 days on four seeds,
        // from a fresh or a seasoned start; docs/scenarios.md), so p5
        // keeps only the bound above.
        if q >= 0.1 && (r / c - 1.0).abs() >= 0.05 {
            failures.push(format!(
                "p{} {r:.0} vs skill+noise {c:.0}",
                (q * 100.0) as u32
            ));
        }
    }
    let b = slope(players);
    if (b - 1.0).abs() >= 0.05 {
        failures.push(format!("slope {b:.3}"));
    }
    // Width: the middle 90% of ratings spans what the skills' does, within 5%.
    let width = |v: &mut Vec<f64>| quantile(v, 0.95) - quantile(v, 0.05);
    let (ws, wr) = (width(&mut skills), width(&mut ratings));
    if (wr / ws - 1.0).abs() >= 0.05 {
        failures.push(format!("p95 - p5: {wr:.0} vs {ws:.0}"));
    }
    // TrueSkill's σ is its own estimate of that noise: a ladder whose errors
    // outgrow the σ it reports is not the estimator it claims to be.
    // Measured: residual sd 165 against a median σ of 147.
    let mut sigmas: Vec<f64> = players.iter().map(|p| p.rating.deviation).collect();
    let sigma = quantile(&mut sigmas, 0.5);
    if !(0.8..1.3).contains(&(sd / sigma)) {
        failures.push(format!("residual sd {sd:.0} vs median σ {sigma:.0}"));
    }
    failures.iter_mut().for_each(|f| f.push_str(&report));
    failures
}

/// Rated as published, the ladder ends 32 days on the skills' scale: its
/// percentiles within 10% of the skills', within 5% (from p10) of the skills blurred by its
/// own estimation noise, slope and width within 5%.
#[test]
fn as_published_the_dota_ladder_settles_near_the_skills_scale() {
    let players = published_ladder(&[]);
    let failures = scale_failures(&players);
    assert!(failures.is_empty(), "{failures:#?}");
    // docs/scenarios.md's table of the same percentiles, row for row, so
    // the reasoning beside it cannot outlive the figures it reads.
    let sd = residual_sd(&players);
    let mut skills: Vec<f64> = players.iter().map(|p| p.true_skill).collect();
    let mut ratings: Vec<f64> = players.iter().map(|p| p.rating.value).collect();
    let mut noisy = skills_plus_noise(&skills, sd);
    let mut ran = vec![format!(
        "| percentile | rating | true skill | skill + N(0, {sd:.0}) |"
    )];
    for q in PERCENTILES {
        ran.push(format!(
            "| {} | {:.0} | {:.0} | {:.0} |",
            (q * 100.0) as u32,
            quantile(&mut ratings, q),
            quantile(&mut skills, q),
            quantile(&mut noisy, q)
        ));
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let docs = std::fs::read_to_string(root.join("docs/scenarios.md")).unwrap();
    let table: Vec<&str> = docs
        .lines()
        .skip_while(|l| !l.starts_with("| percentile | rating | true skill |"))
        .filter(|l| !l.starts_with("|---"))
        .take_while(|l| l.starts_with("| "))
        .collect();
    assert_eq!(table, ran);
    assert_variant_row(&players, "none (as published)");
}

/// docs/scenarios.md's row for one variant of the ladder in its table of
/// what was tried on the lower tail: the mean rating − skill of the tenth
/// with the lowest skills, the 5th percentile of ratings against the
/// skills', and the slope, as the doc prints them.
fn assert_variant_row(players: &[Player], change: &str) {
    let mut by_skill: Vec<&Player> = players.iter().collect();
    by_skill.sort_by(|a, b| a.true_skill.total_cmp(&b.true_skill));
    let tenth = &by_skill[..by_skill.len() / 10];
    let lowest = tenth
        .iter()
        .map(|p| p.rating.value - p.true_skill)
        .sum::<f64>()
        / tenth.len() as f64;
    let mut skills: Vec<f64> = players.iter().map(|p| p.true_skill).collect();
    let mut ratings: Vec<f64> = players.iter().map(|p| p.rating.value).collect();
    let p5 = 100.0 * (quantile(&mut ratings, 0.05) / quantile(&mut skills, 0.05) - 1.0);
    // The doc writes a minus sign, not a hyphen.
    let figures =
        format!("{lowest:+.0} | {p5:+.1}% | {:.3} |", slope(players)).replace('-', "\u{2212}");
    let ran = format!("| {change} | {figures}");
    let docs = include_str!("../../../../docs/scenarios.md");
    assert!(
        docs.lines().any(|l| l == ran),
        "docs/scenarios.md lacks {ran}"
    );
}

/// docs/scenarios.md: the ladder keeps the scale its prior gives it, so a
/// `sigma` off the skills' spread squeezes or stretches it for good (the
/// slope about `sigma` / 750, as published), and the ladder's checks reject
/// both: `sigma` is a scale parameter to derive from the population, not
/// a starting guess the games correct. Two runs of the ladder.
#[test]
fn the_dota_ladder_keeps_the_scale_of_its_prior() {
    for (set, change, lo, hi) in [
        ("rating.sigma=500", "`sigma = 500`", 0.6, 0.75),
        ("rating.sigma=1000", "`sigma = 1000`", 1.25, 1.45),
    ] {
        let players = published_ladder(&[set]);
        let b = slope(&players);
        assert!((lo..hi).contains(&b), "{set}: slope {b}");
        assert!(!scale_failures(&players).is_empty(), "{set}");
        assert_variant_row(&players, change);
    }
}

/// docs/scenarios.md: a calibration boost of 2 stretches the same ladder
/// for good (slope 1.47, seed 1), and the shipped ladder's checks reject
/// it (its 5th percentile at 599 against its players' skills' 1153), so they would
/// catch the boost coming back.
#[test]
fn a_calibration_boost_stretches_the_dota_ladder() {
    let players = published_ladder(&["rating.calibration_boost=2"]);
    let b = slope(&players);
    assert!(b > 1.3, "{b}");
    assert!(!scale_failures(&players).is_empty());
    // The figures docs/scenarios.md gives for this run: "a slope of rating
    // on true skill of 1.47 with a boost of 2", "its 5th percentile of
    // ratings at 599 against its players' skills' 1153 with the boost".
    let text = doc_prose();
    let stated = numbers_after(&text, "ends with a slope of rating on true skill of ", 1);
    assert_eq!(format!("{b:.2}"), format!("{:.2}", stated[0]));
    let stated = numbers_after(&text, "its 5th percentile of ratings at ", 2);
    let mut skills: Vec<f64> = players.iter().map(|p| p.true_skill).collect();
    let mut ratings: Vec<f64> = players.iter().map(|p| p.rating.value).collect();
    let ran = [quantile(&mut ratings, 0.05), quantile(&mut skills, 0.05)];
    assert_eq!(ran.map(|x| x.round()), [stated[0], stated[1]], "{ran:?}");
}

/// docs/scenarios.md's text with its line breaks folded to spaces.
fn doc_prose() -> String {
    include_str!("../../../../docs/scenarios.md")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The first `n` numbers in `text` after `before`.
fn numbers_after(text: &str, before: &str, n: usize) -> Vec<f64> {
    let at = text.find(before).unwrap_or_else(|| panic!("no {before:?}")) + before.len();
    text[at..]
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .map(|w| w.trim_matches('.'))
        .filter(|w| !w.is_empty())
        .take(n)
        .map(|w| w.parse().unwrap())
        .collect()
}

/// docs/scenarios.md: a surprise gain of 0.5 stretches it too, less (slope
/// 1.16, seed 1).
#[test]
fn a_surprise_gain_stretches_the_dota_ladder() {
    let b = slope(&published_ladder(&["rating.surprise_gain=0.5"]));
    assert!(b > 1.08 && b < 1.25, "{b}");
    // "ends with a slope of rating on skill of 1.16 at gain 0.5"
    let stated = numbers_after(&doc_prose(), "ends with a slope of rating on skill of ", 1);
    assert_eq!(format!("{b:.2}"), format!("{:.2}", stated[0]));
}

/// The preset's ladder as shipped: read against its spread
/// (`shrink_others`, with `sigma` the skills' spread of 718.7), it stops
/// widening, and after 128 days every rating percentile from the 5th to the
/// 99th is within 5% of the skills' (seed 1: within 3.0%; as published,
/// 10.6% low at the 5th and a slope of 1.047; docs/scenarios.md). About
/// 80 s in a debug build.
#[test]
fn the_dota_ladder_settles_on_the_skills() {
    let players = dota_ladder(&["run.duration=128d"]);
    let mut skills: Vec<f64> = players.iter().map(|p| p.true_skill).collect();
    let mut ratings: Vec<f64> = players.iter().map(|p| p.rating.value).collect();
    let mut report = String::new();
    let mut worst: f64 = 0.0;
    let mut row = "| 128 | 1 |".to_string();
    for q in PERCENTILES {
        let (s, r) = (quantile(&mut skills, q), quantile(&mut ratings, q));
        report += &format!(" p{}: {r:.0} vs {s:.0};", (q * 100.0) as u32);
        worst = worst.max((r / s - 1.0).abs());
        row += &format!(" {:+.1}% |", 100.0 * (r / s - 1.0));
    }
    assert!(worst < 0.05, "{report}");
    let b = slope(&players);
    assert!((b - 1.0).abs() < 0.02, "slope {b}; {report}");
    // docs/scenarios.md's table of the ladder read against its spread,
    // this run's row (the doc writes a minus sign, not a hyphen).
    let row = format!("{row} {b:.3} |").replace('-', "\u{2212}");
    let docs = include_str!("../../../../docs/scenarios.md");
    assert!(
        docs.lines().any(|l| l.starts_with(&row)),
        "docs/scenarios.md lacks {row}"
    );
    assert_variant_row(
        &players,
        "`shrink_others = true`, `sigma = 718.7`, 128 days",
    );
}

/// docs/scenarios.md: a seasoned ladder (ratings start at skill plus
/// noise, on the skills' scale) widens from its first days as TrueSkill is
/// published, and read against its spread it does not. Seed 1, 64 days:
/// slope 1.028 and the 5th percentile 5.8% low as published; 1.004 and
/// every percentile within 2.6% with `shrink_others`. Two runs of the
/// ladder, about 45 s each in a debug build.
#[test]
fn a_seasoned_dota_ladder_widens_unless_read_against_its_spread() {
    let seasoned = "population.seasoned={correlation=0.98,deviation=150}";
    let run =
        |shrink: &str| dota_ladder(&["run.duration=64d", "rating.sigma=718.7", seasoned, shrink]);
    let worst = |players: &[Player]| {
        let mut skills: Vec<f64> = players.iter().map(|p| p.true_skill).collect();
        let mut ratings: Vec<f64> = players.iter().map(|p| p.rating.value).collect();
        PERCENTILES
            .iter()
            .map(|&q| (quantile(&mut ratings, q) / quantile(&mut skills, q) - 1.0).abs())
            .fold(0.0, f64::max)
    };
    let published = run("rating.shrink_others=false");
    let read = run("rating.shrink_others=true");
    let (b_pub, b_read) = (slope(&published), slope(&read));
    assert!(b_pub > 1.02, "as published: slope {b_pub}");
    assert!(
        worst(&published) > 0.05,
        "as published: {}",
        worst(&published)
    );
    assert!(
        (b_read - 1.0).abs() < 0.01,
        "read against the spread: slope {b_read}"
    );
    assert!(
        worst(&read) < 0.05,
        "read against the spread: {}",
        worst(&read)
    );
    assert_variant_row(&published, "seasoned, `sigma = 718.7`, 64 days");
    assert_variant_row(&read, "the same, `shrink_others = true`");
}
