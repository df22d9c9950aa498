//! Drawing the players of a run: hidden true skill from the configured
//! distribution, everyone starting at the rating system's initial rating,
//! then the attributes team rules read (tier, category, languages, games
//! played, shown win rate) when the run asks for them.

use crate::model::{Category, Player, PlayerId, Rating};
use rand::Rng;
use rand_distr::{Distribution, Normal};
use rand_pcg::Pcg64;
use statrs::distribution::{ContinuousCDF, Normal as StdNormal};

/// Who may queue, as the engine draws them. Built from a validated scenario
/// (`scenario::to_engine`): weights are finite and not all zero, bounds and
/// tables are ordered, so drawing never has to check.
#[derive(Clone, Debug, PartialEq)]
pub struct Population {
    /// Players in the population.
    pub size: u32,
    /// Where true skill comes from.
    pub skill: SkillDist,
    /// Rating a new player starts with; the rating system's own if `None`.
    pub initial_rating: Option<f64>,
    /// (tier, weight); empty: everyone tier 0.
    pub tiers: Vec<(u8, f64)>,
    /// Category weights in `Category` order; `None`: no category.
    pub categories: Option<[(Category, f64); 5]>,
    /// Weight of each language as a first language, by its bit in
    /// `Player::languages`; empty: one common language.
    pub languages: Vec<f64>,
    /// Probability of a second language, drawn by the same weights.
    pub extra_language_prob: f64,
    /// The shown win rate each player is drawn with; `None`: not drawn.
    pub win_rate: Option<WinRateDist>,
    /// Games played before the run; `None`: 0.
    pub games: Option<GamesDist>,
    /// Ratings already learned at the start; `None`: everyone at the initial rating.
    pub seasoned: Option<Seasoned>,
    /// Another run's players at its end, one per player in id order, put in
    /// place of the drawn ones (`[population] ratings_file`).
    pub loaded: Option<std::sync::Arc<Vec<LoadedPlayer>>>,
}

/// A player as another run left it: what a later run takes over.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadedPlayer {
    /// Hidden skill on the rating scale.
    pub true_skill: f64,
    /// Rating used when the player queues alone.
    pub rating: Rating,
    /// Rating used when the player queues in a party.
    pub party_rating: Rating,
    /// Matches played.
    pub games: u32,
    /// Matches won.
    pub wins: u32,
}

/// Puts the loaded players' skill, ratings and record in place of the drawn
/// ones (a ladder that has been running); everything else stays drawn. The
/// loader checked that there is one per player.
pub fn load(players: &mut [Player], loaded: &[LoadedPlayer]) {
    for (p, l) in players.iter_mut().zip(loaded) {
        p.true_skill = l.true_skill;
        p.rating = l.rating;
        p.party_rating = l.party_rating;
        p.games = l.games;
        p.wins = l.wins;
    }
}

/// A ladder that has been running: each rating is true skill plus
/// independent normal noise, scaled so that ratings correlate with skill by
/// `correlation` over the population, with `deviation` as the rating
/// system's uncertainty and `games` as the record behind it.
#[derive(Clone, Debug, PartialEq)]
pub struct Seasoned {
    /// Correlation of rating with true skill over the population, in [0, 1].
    pub correlation: f64,
    /// The rating system's uncertainty each player starts with, in rating points.
    pub deviation: f64,
    /// Games each player has played.
    pub games: u32,
}

/// Where true skill comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum SkillDist {
    /// Normal, redrawn until inside [min, max] (infinite when unbounded).
    Normal {
        /// Mean skill.
        mean: f64,
        /// Standard deviation of skill.
        sd: f64,
        /// Lowest skill drawn (`-inf`: unbounded).
        min: f64,
        /// Highest skill drawn (`inf`: unbounded).
        max: f64,
    },
    /// Piecewise-linear inverse CDF through (probability, value) points.
    Quantiles(Vec<[f64; 2]>),
}

/// The shown win rate: Normal(mean, sd) whose normal score follows true skill
/// with correlation `skill_correlation`.
#[derive(Clone, Debug, PartialEq)]
pub struct WinRateDist {
    /// Mean win rate, in [0, 1].
    pub mean: f64,
    /// Standard deviation of the win rate.
    pub sd: f64,
    /// Correlation of the win rate's normal score with true skill, in [-1, 1].
    pub skill_correlation: f64,
}

/// Games each player has played before the run starts.
#[derive(Clone, Debug, PartialEq)]
pub enum GamesDist {
    /// Log-normal: ln(games) is normal around ln(median).
    LogNormal {
        /// The median number of games.
        median: f64,
        /// The standard deviation of ln(games).
        sigma: f64,
    },
    /// Uniform over whole numbers.
    Uniform {
        /// Fewest games.
        min: u32,
        /// Most games.
        max: u32,
    },
    /// Everyone has played this many games.
    Fixed(u32),
}

/// `size` players with true skill drawn from `dist` and every rating at `initial`, ids 0 to `size - 1`.
pub fn generate(size: u32, dist: &SkillDist, initial: Rating, rng: &mut Pcg64) -> Vec<Player> {
    let mut draw = skill_sampler(dist);
    super::memory::collect_on_huge_pages(
        (0..size).map(|i| Player::new(PlayerId(i), draw(rng), initial)),
    )
}

/// Draws the attributes `pop` configures, after every skill has been drawn
/// (so adding an attribute to a scenario leaves its skills unchanged). Each
/// attribute is one pass over the players in id order.
pub fn draw_attributes(players: &mut [Player], pop: &Population, rng: &mut Pcg64) {
    if let Some(games) = &pop.games {
        for p in players.iter_mut() {
            p.games = draw_games(games, rng);
            if pop.win_rate.is_none() {
                // No `win_rate`: the documented 50% for everyone, as a
                // record (half the games won), so the shown rate
                // (wins + 5) / (games + 10) starts near 0.5 and does not
                // fall to 5 / (games + 10) at the first result.
                p.wins = (f64::from(p.games) / 2.0).round() as u32;
                p.win_rate = (f64::from(p.wins) + 5.0) / (f64::from(p.games) + 10.0);
            }
        }
    }
    if !pop.tiers.is_empty() {
        let weights: Vec<f64> = pop.tiers.iter().map(|t| t.1).collect();
        for p in players.iter_mut() {
            p.tier = pop.tiers[pick(&weights, rng)].0;
        }
    }
    if let Some(cats) = &pop.categories {
        let weights: Vec<f64> = cats.iter().map(|c| c.1).collect();
        for p in players.iter_mut() {
            p.category = Some(cats[pick(&weights, rng)].0);
        }
    }
    if !pop.languages.is_empty() {
        let weights = &pop.languages;
        for p in players.iter_mut() {
            let first = pick(weights, rng);
            p.languages = 1 << first;
            // A second language by the same weights, never the first again.
            let u: f64 = rng.random();
            if u < pop.extra_language_prob {
                let mut others = weights.to_vec();
                others[first] = 0.0;
                if others.iter().any(|w| *w > 0.0) {
                    p.languages |= 1 << pick(&others, rng);
                }
            }
        }
    }
    if let Some(wr) = &pop.win_rate {
        let rates = win_rates(players, wr.mean, wr.sd, wr.skill_correlation, rng);
        for (p, rate) in players.iter_mut().zip(rates) {
            // The engine shows (wins + 5) / (games + 10); pick the wins that
            // come closest to the drawn rate, so the rate is a real record
            // that moves with results from the first match on.
            let g = p.games as f64;
            let wins = (rate * (g + 10.0) - 5.0).round().clamp(0.0, g);
            p.wins = wins as u32;
            p.win_rate = (wins + 5.0) / (g + 10.0);
        }
    }
}

/// Starts every player's solo and party rating near true skill. For skill
/// with standard deviation s over the population, noise with standard
/// deviation s * sqrt(1/rho^2 - 1) gives corr(rating, skill) = rho. Players
/// with no games drawn get `seasoned.games`, won at their shown win rate,
/// so they count as players who have played from the start.
pub fn season(players: &mut [Player], seasoned: &Seasoned, rng: &mut Pcg64) {
    let n = players.len() as f64;
    let mean = players.iter().map(|p| p.true_skill).sum::<f64>() / n;
    let var = players
        .iter()
        .map(|p| (p.true_skill - mean).powi(2))
        .sum::<f64>()
        / n;
    let rho = seasoned.correlation;
    let noise_sd = var.sqrt() * (1.0 / (rho * rho) - 1.0).max(0.0).sqrt();
    for p in players.iter_mut() {
        let z: f64 = rand_distr::StandardNormal.sample(rng);
        if p.games == 0 {
            p.games = seasoned.games;
            p.wins = (p.win_rate * f64::from(p.games)).round() as u32;
        }
        let value = p.true_skill + noise_sd * z;
        for r in [&mut p.rating, &mut p.party_rating] {
            r.value = value;
            r.deviation = seasoned.deviation;
            r.games = p.games;
        }
    }
}

/// Win rates Normal(mean, sd), clamped to [0.01, 0.99], whose normal score is
/// `rho` times the player's skill score plus independent noise: `rho = 1`
/// orders win rates exactly as true skills. The skill score is the normal
/// quantile of the player's skill rank, so any skill distribution works.
fn win_rates(players: &[Player], mean: f64, sd: f64, rho: f64, rng: &mut Pcg64) -> Vec<f64> {
    let n = players.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| {
        players[a]
            .true_skill
            .total_cmp(&players[b].true_skill)
            .then(a.cmp(&b))
    });
    let std = StdNormal::standard();
    let mut z_skill = vec![0.0; n];
    for (rank, &i) in order.iter().enumerate() {
        z_skill[i] = std.inverse_cdf((rank as f64 + 0.5) / n as f64);
    }
    let noise = (1.0 - rho * rho).max(0.0).sqrt();
    z_skill
        .iter()
        .map(|&zs| {
            let zn: f64 = if noise > 0.0 {
                rand_distr::StandardNormal.sample(rng)
            } else {
                0.0
            };
            (mean + sd * (rho * zs + noise * zn)).clamp(0.01, 0.99)
        })
        .collect()
}

fn draw_games(dist: &GamesDist, rng: &mut Pcg64) -> u32 {
    match *dist {
        GamesDist::LogNormal { median, sigma } => {
            let z: f64 = rand_distr::StandardNormal.sample(rng);
            (median * (sigma * z).exp()).round().min(1e7) as u32
        }
        GamesDist::Uniform { min, max } => rng.random_range(min..=max),
        GamesDist::Fixed(games) => games,
    }
}

/// Index drawn with probability proportional to its weight (some weight > 0).
pub(super) fn pick(weights: &[f64], rng: &mut Pcg64) -> usize {
    let total: f64 = weights.iter().sum();
    let mut u = rng.random::<f64>() * total;
    for (i, w) in weights.iter().enumerate() {
        if u < *w {
            return i;
        }
        u -= w;
    }
    weights.iter().rposition(|w| *w > 0.0).unwrap_or(0)
}

/// A sampler of true skill for a validated distribution.
pub fn skill_sampler(dist: &SkillDist) -> Box<dyn FnMut(&mut Pcg64) -> f64> {
    match dist {
        &SkillDist::Normal {
            mean,
            sd,
            min: lo,
            max: hi,
        } => {
            let normal = Normal::new(mean, sd).expect("validated sd > 0");
            Box::new(move |rng| {
                // Redraw rather than clamp, so no mass piles up on the bounds;
                // validation keeps the mean near [lo, hi], so this ends fast.
                for _ in 0..1000 {
                    let x = normal.sample(rng);
                    if (lo..=hi).contains(&x) {
                        return x;
                    }
                }
                mean.clamp(lo, hi)
            })
        }
        SkillDist::Quantiles(table) => {
            let table = table.clone();
            Box::new(move |rng| inverse_cdf(&table, rng.random()))
        }
    }
}

/// Piecewise-linear inverse CDF through the table's points, extended to
/// probabilities 0 and 1 with the slopes of the first and last segments.
pub fn inverse_cdf(table: &[[f64; 2]], u: f64) -> f64 {
    let n = table.len();
    let seg = |a: [f64; 2], b: [f64; 2], p: f64| a[1] + (b[1] - a[1]) * (p - a[0]) / (b[0] - a[0]);
    if u <= table[0][0] {
        return seg(table[0], table[1], u);
    }
    if u >= table[n - 1][0] {
        return seg(table[n - 2], table[n - 1], u);
    }
    let i = table.partition_point(|row| row[0] <= u);
    seg(table[i - 1], table[i], u)
}
