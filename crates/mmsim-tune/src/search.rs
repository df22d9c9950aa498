//! `mmsim tune`: the setting of one or two parameters that minimises a
//! metric under constraints, by a grid refined around the best point. Every
//! point runs on the same seeds, so comparisons between points are paired.

use super::replicate::{par_map, summary_for};
use super::stats::{ci95, Ci};
use mmsim_scenario::LoadedScenario;

/// Most grid steps one parameter may have: each is run on every seed,
/// every round, and every point's summaries are kept.
pub const MAX_STEPS: usize = 1000;

/// Most points one round's grid may have (the product of the parameters'
/// steps): a larger grid is a sweep for a cluster, not a tune.
pub const MAX_GRID_POINTS: usize = 10_000;

/// A parameter to search: `--param policy.rate_per_s --range 0.5:12:9`.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub key: String,
    pub lo: f64,
    pub hi: f64,
    pub steps: usize,
    /// Whole numbers only (the scenario writes the key as an integer).
    pub integer: bool,
}

/// A `--param` or `--subject-to` that cannot be read; the message names the flag.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct TuneArgError(pub String);

impl From<String> for TuneArgError {
    fn from(message: String) -> Self {
        TuneArgError(message)
    }
}

/// Why a tune could not run: a setting the scenario refuses, or a metric
/// the summary lacks.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct TuneError(pub String);

impl From<String> for TuneError {
    fn from(message: String) -> Self {
        TuneError(message)
    }
}

impl Param {
    /// Parses `LO:HI[:STEPS]` (STEPS points including both ends; default 7).
    pub fn parse(key: &str, range: &str, flag: &str) -> Result<Param, TuneArgError> {
        let bad =
            |why: &str| format!("{flag} {range}: {why}; write LO:HI or LO:HI:STEPS, e.g. 0.5:12:9");
        let parts: Vec<&str> = range.split(':').collect();
        if !(2..=3).contains(&parts.len()) {
            return Err(TuneArgError(bad("expected two or three numbers")));
        }
        let num = |s: &str| s.trim().parse::<f64>().ok().filter(|v| v.is_finite());
        let lo = num(parts[0]).ok_or_else(|| bad("LO is not a number"))?;
        let hi = num(parts[1]).ok_or_else(|| bad("HI is not a number"))?;
        if hi <= lo {
            return Err(TuneArgError(bad("HI must be above LO")));
        }
        let steps = match parts.get(2) {
            Some(s) => s
                .trim()
                .parse::<usize>()
                .ok()
                .filter(|&n| (3..=MAX_STEPS).contains(&n))
                .ok_or_else(|| {
                    bad(&format!(
                        "STEPS must be a whole number from 3 to {MAX_STEPS} (a grid is searched exhaustively each round)"
                    ))
                })?,
            None => 7,
        };
        Ok(Param {
            key: key.to_string(),
            lo,
            hi,
            steps,
            integer: false,
        })
    }

    fn points(&self, lo: f64, hi: f64) -> Vec<f64> {
        let mut v: Vec<f64> = (0..self.steps)
            .map(|i| lo + (hi - lo) * i as f64 / (self.steps - 1) as f64)
            .map(|x| if self.integer { x.round() } else { x })
            .collect();
        v.dedup();
        v
    }

    fn format(&self, v: f64) -> String {
        if v.fract() == 0.0 && v.abs() < 1e15 {
            format!("{}", v as i64)
        } else {
            format!("{v}")
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Op {
    Lt,
    Le,
    Gt,
    Ge,
}

/// `--subject-to "spread_rating.mean<120"`: a bound on a metric's mean over seeds.
#[derive(Clone, Debug, PartialEq)]
pub struct Constraint {
    pub metric: String,
    pub op: Op,
    pub value: f64,
}

impl std::str::FromStr for Constraint {
    type Err = TuneArgError;
    fn from_str(s: &str) -> Result<Self, TuneArgError> {
        let ops = [("<=", Op::Le), (">=", Op::Ge), ("<", Op::Lt), (">", Op::Gt)];
        for (text, op) in ops {
            if let Some((m, v)) = s.split_once(text) {
                let value = v
                    .trim()
                    .parse::<f64>()
                    .map_err(|_| format!("--subject-to {s}: `{}` is not a number", v.trim()))?;
                let metric = m.trim().to_string();
                if metric.is_empty() {
                    break;
                }
                return Ok(Constraint { metric, op, value });
            }
        }
        Err(TuneArgError(format!(
            "--subject-to {s}: write METRIC<VALUE (or <=, >, >=), e.g. \"spread_rating.mean<120\""
        )))
    }
}

impl Constraint {
    pub fn holds(&self, x: f64) -> bool {
        match self.op {
            Op::Lt => x < self.value,
            Op::Le => x <= self.value,
            Op::Gt => x > self.value,
            Op::Ge => x >= self.value,
        }
    }
    /// How far outside the bound `x` lies (0 inside).
    pub fn violation(&self, x: f64) -> f64 {
        if self.holds(x) {
            0.0
        } else {
            (x - self.value).abs()
        }
    }
    pub fn op_text(&self) -> &'static str {
        match self.op {
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
        }
    }
}

/// One evaluated point.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub values: Vec<f64>,
    /// The objective first, then each constraint's metric.
    pub stats: Vec<Ci>,
    /// The objective on each seed, in seed order (`None` where a run had
    /// no value): every point runs the same seeds, so two points compare
    /// seed by seed.
    pub objective_by_seed: Vec<Option<f64>>,
    pub feasible: bool,
    pub round: usize,
}

pub struct TuneResult {
    pub params: Vec<Param>,
    pub objective: String,
    pub constraints: Vec<Constraint>,
    pub seeds: Vec<u64>,
    /// Every point evaluated, in the order evaluated.
    pub points: Vec<Point>,
    /// Index into `points` of the best feasible point.
    pub best: Option<usize>,
    /// The other feasible points whose objective cannot be told from the
    /// best's: the 95% interval of their paired difference, seed by seed,
    /// holds 0 (or there are too few seeds for an interval). With any of
    /// these, "best" is a choice inside seed noise.
    pub tied: Vec<usize>,
}

pub struct TuneOptions<'a> {
    pub seeds: Vec<u64>,
    pub rounds: usize,
    pub jobs: Option<usize>,
    pub tick: &'a (dyn Fn() + Sync),
    pub start: &'a dyn Fn(u64),
}

/// Marks parameters whose field only takes whole numbers (`population.size`,
/// say), found by offering the scenario a fractional value: serde's
/// "invalid type: floating point" says so, whatever the file happens to write.
pub fn mark_integers(base: &LoadedScenario, params: &mut [Param]) {
    for p in params {
        let probe = format!("{}={}", p.key, p.lo.floor() + 0.5);
        p.integer = match base.with_sets(&[probe]) {
            Err(e) => e.to_string().contains("floating point"),
            Ok(_) => false,
        };
    }
}

pub fn tune(
    base: &LoadedScenario,
    params: Vec<Param>,
    objective: String,
    constraints: Vec<Constraint>,
    opts: &TuneOptions<'_>,
) -> Result<TuneResult, TuneError> {
    let metrics: Vec<String> = std::iter::once(objective.clone())
        .chain(constraints.iter().map(|c| c.metric.clone()))
        .collect();
    let mut ranges: Vec<(f64, f64)> = params.iter().map(|p| (p.lo, p.hi)).collect();
    let mut points: Vec<Point> = Vec::new();
    for round in 0..=opts.rounds {
        let axes: Vec<Vec<f64>> = params
            .iter()
            .zip(&ranges)
            .map(|(p, &(lo, hi))| p.points(lo, hi))
            .collect();
        let mut grid: Vec<Vec<f64>> = vec![vec![]];
        for axis in &axes {
            grid = grid
                .into_iter()
                .flat_map(|g| {
                    axis.iter().map(move |&x| {
                        let mut g = g.clone();
                        g.push(x);
                        g
                    })
                })
                .collect();
        }
        grid.retain(|g| !points.iter().any(|p| &p.values == g));
        if grid.is_empty() {
            break;
        }
        let loaded: Vec<LoadedScenario> = grid
            .iter()
            .map(|g| {
                let sets: Vec<String> = params
                    .iter()
                    .zip(g)
                    .map(|(p, &v)| format!("{}={}", p.key, p.format(v)))
                    .collect();
                base.with_sets(&sets).map_err(|e| {
                    let flag = if params.len() > 1 {
                        "--param/--param2"
                    } else {
                        "--param"
                    };
                    format!("{flag}: {e}")
                })
            })
            .collect::<Result<_, _>>()?;
        let jobs: Vec<(usize, u64)> = (0..grid.len())
            .flat_map(|i| opts.seeds.iter().map(move |&s| (i, s)))
            .collect();
        (opts.start)(jobs.len() as u64);
        let summaries = par_map(
            opts.jobs,
            jobs.len(),
            |j| summary_for(&loaded[jobs[j].0].scenario, jobs[j].1),
            opts.tick,
        )
        .map_err(|e| e.to_string())?;
        if round == 0 {
            super::sweep::check_metric_names(&summaries[0], &metrics).map_err(|e| {
                e.to_string()
                    .replace("--metrics", "--minimise/--subject-to")
            })?;
        }
        let n = opts.seeds.len();
        for (i, g) in grid.into_iter().enumerate() {
            let chunk = &summaries[i * n..(i + 1) * n];
            let stats: Vec<Ci> = metrics
                .iter()
                .map(|m| {
                    let xs: Vec<f64> = chunk
                        .iter()
                        .filter_map(|s| super::stats::metric(s, m))
                        .collect();
                    ci95(&xs)
                })
                .collect();
            let objective_by_seed = chunk
                .iter()
                .map(|s| super::stats::metric(s, &metrics[0]))
                .collect();
            let feasible = stats[0].mean.is_some()
                && constraints
                    .iter()
                    .zip(&stats[1..])
                    .all(|(c, s)| s.mean.is_some_and(|x| c.holds(x)));
            points.push(Point {
                values: g,
                stats,
                objective_by_seed,
                feasible,
                round,
            });
        }
        // Refine around the best feasible point, or the least infeasible
        // one, a grid step either side.
        let Some(centre) = best(&points, &constraints).or_else(|| closest(&points, &constraints))
        else {
            break;
        };
        let centre = points[centre].values.clone();
        for ((p, r), c) in params.iter().zip(ranges.iter_mut()).zip(&centre) {
            let step = (r.1 - r.0) / (p.steps - 1) as f64;
            if p.integer && step <= 1.0 {
                continue;
            }
            *r = ((c - step).max(p.lo), (c + step).min(p.hi));
        }
    }
    let best = best(&points, &constraints);
    let tied = best.map_or_else(Vec::new, |b| tied_with(&points, b));
    Ok(TuneResult {
        params,
        objective,
        constraints,
        seeds: opts.seeds.clone(),
        points,
        best,
        tied,
    })
}

/// The paired difference in the objective between `p` and `best`, seed by
/// seed, over the seeds where both have a value.
pub fn paired_difference(p: &Point, best: &Point) -> Ci {
    let d: Vec<f64> = p
        .objective_by_seed
        .iter()
        .zip(&best.objective_by_seed)
        .filter_map(|(a, b)| Some((*a)? - (*b)?))
        .collect();
    ci95(&d)
}

/// The feasible points other than `best` that cannot be told from it: the
/// 95% interval of the paired difference holds 0, or cannot be had (fewer
/// than two seeds with values). In the order evaluated.
pub fn tied_with(points: &[Point], best: usize) -> Vec<usize> {
    (0..points.len())
        .filter(|&i| i != best && points[i].feasible)
        .filter(|&i| {
            let d = paired_difference(&points[i], &points[best]);
            match (d.ci95_low, d.ci95_high) {
                (Some(lo), Some(hi)) => lo <= 0.0 && hi >= 0.0,
                _ => true,
            }
        })
        .collect()
}

/// The feasible point with the smallest objective mean; ties go to the
/// point evaluated first, so the answer does not depend on thread timing.
pub fn best(points: &[Point], _constraints: &[Constraint]) -> Option<usize> {
    let mut best: Option<usize> = None;
    for (i, p) in points.iter().enumerate() {
        if !p.feasible {
            continue;
        }
        let v = p.stats[0].mean.unwrap_or(f64::INFINITY);
        if best.is_none_or(|b| v < points[b].stats[0].mean.unwrap_or(f64::INFINITY)) {
            best = Some(i);
        }
    }
    best
}

/// The point whose constraint metrics lie least outside their bounds (the
/// sum of each bound's excess): where a search with no feasible point came
/// nearest.
pub fn closest(points: &[Point], constraints: &[Constraint]) -> Option<usize> {
    let violation = |p: &Point| -> f64 {
        constraints
            .iter()
            .zip(&p.stats[1..])
            .map(|(c, s)| s.mean.map(|x| c.violation(x)).unwrap_or(f64::INFINITY))
            .sum()
    };
    (0..points.len()).min_by(|&a, &b| violation(&points[a]).total_cmp(&violation(&points[b])))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_and_constraints_parse_and_refuse_nonsense() {
        let p = Param::parse("policy.limit", "50:250:5", "--range").unwrap();
        assert_eq!(p.points(p.lo, p.hi), [50.0, 100.0, 150.0, 200.0, 250.0]);
        assert_eq!(Param::parse("k", "1:2", "--range").unwrap().steps, 7);
        for bad in ["5:1", "1", "a:2", "1:2:2", "1:2:3:4"] {
            let err = Param::parse("k", bad, "--range").unwrap_err().0;
            assert!(err.starts_with(&format!("--range {bad}")), "{err}");
        }
        let c: Constraint = "spread_rating.mean <= 120".parse().unwrap();
        assert_eq!(
            (c.metric.as_str(), c.op, c.value),
            ("spread_rating.mean", Op::Le, 120.0)
        );
        assert!(c.holds(120.0) && !c.holds(120.5));
        let c: Constraint = "abandon_rate<0.1".parse().unwrap();
        assert!(!c.holds(0.1));
        assert!("abandon_rate=0.1".parse::<Constraint>().is_err());
        assert!("<5".parse::<Constraint>().is_err());
        assert!("x<five".parse::<Constraint>().is_err());
    }

    #[test]
    fn integer_parameters_step_in_whole_numbers() {
        let mut p = Param::parse("population.size", "10:14:9", "--range").unwrap();
        p.integer = true;
        assert_eq!(p.points(10.0, 14.0), [10.0, 11.0, 12.0, 13.0, 14.0]);
        assert_eq!(p.format(12.0), "12");
        assert_eq!(p.format(2.5), "2.5");
    }

    fn point(x: f64, obj: f64, feasible: bool) -> Point {
        Point {
            values: vec![x],
            stats: vec![ci95(&[obj])],
            objective_by_seed: vec![Some(obj)],
            feasible,
            round: 0,
        }
    }

    fn over_seeds(x: f64, objs: &[f64], feasible: bool) -> Point {
        Point {
            values: vec![x],
            stats: vec![ci95(objs)],
            objective_by_seed: objs.iter().map(|&o| Some(o)).collect(),
            feasible,
            round: 0,
        }
    }

    /// Paired over seeds: a point whose every seed is 1 higher is told
    /// apart however noisy the seeds are; one that is higher on some seeds
    /// and lower on others is not, though its mean is higher too.
    #[test]
    fn points_that_cannot_be_told_from_the_best_are_named() {
        let best_seeds = [10.0, 20.0, 30.0, 40.0, 50.0];
        let pts = [
            over_seeds(1.0, &best_seeds, true),
            over_seeds(2.0, &best_seeds.map(|x| x + 1.0), true),
            over_seeds(3.0, &[12.0, 18.0, 33.0, 39.0, 51.0], true),
            over_seeds(4.0, &[11.0, 21.0, 29.0, 41.0, 50.0], false),
        ];
        let b = best(&pts, &[]).unwrap();
        assert_eq!(b, 0);
        assert_eq!(
            tied_with(&pts, b),
            [2],
            "1 higher on every seed is told apart; infeasible never tied"
        );
        let d = paired_difference(&pts[1], &pts[0]);
        assert_eq!(
            (d.mean, d.ci95_low, d.ci95_high),
            (Some(1.0), Some(1.0), Some(1.0))
        );
        // One seed: no interval, so nothing can be told apart.
        let one = [point(1.0, 5.0, true), point(2.0, 6.0, true)];
        assert_eq!(tied_with(&one, 0), [1]);
    }

    #[test]
    fn the_best_point_is_the_lowest_feasible_one() {
        let pts = [
            point(1.0, 5.0, false),
            point(2.0, 7.0, true),
            point(3.0, 6.0, true),
            point(4.0, 6.0, true),
        ];
        assert_eq!(best(&pts, &[]), Some(2), "lowest feasible, first of a tie");
        assert_eq!(best(&pts[..1], &[]), None);
    }
}
