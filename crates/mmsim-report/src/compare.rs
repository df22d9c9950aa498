//! `mmsim compare`: two or more runs, replicated runs or sweep settings side
//! by side, as terminal text, JSON and an HTML page. The point is to say
//! honestly what a difference means. Whether two arms are *paired* is decided
//! from what they ran: the same seeds driving the same population and match
//! format (common random numbers) make each seed's difference a fair
//! measurement of the setting; anything else is unpaired. Intervals come from
//! seeds, never from one run, and bounds of intervals are never diffed as if
//! they were metrics: every figure here is recomputed from per-seed values.

use crate::artifact::Artifact;
use crate::chart::{self, BandChart, BandPoint, BandSeries, Chart, Plot, Spec, PALETTE};
use crate::number::{self, sig};
use crate::page::{esc, plot_grid};
use mmsim_core::metrics::dist::Dist;
use mmsim_tune::stats::{ci95, lookup, metric, t975, Ci};
use serde_json::{json, Value};
use std::fmt::Write as _;

/// Which way a metric improves, for marking a difference better or worse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Better {
    Lower,
    Higher,
    /// No side is better in general (an upset rate near the model's is
    /// what a fair matchmaker gives): differences are reported, not judged.
    Neither,
}

/// One metric of the comparison table: its path in `summary.json`, unit and direction.
#[derive(Clone, Copy, Debug)]
pub struct MetricDef {
    pub key: &'static str,
    pub unit: &'static str,
    pub better: Better,
}

/// The compared metrics, in table order. Those a run lacks (team figures
/// in a 1v1, gold without the gold model) are left out of its table.
/// Directions are documented in docs/comparing.md.
pub const METRICS: &[MetricDef] = &[
    MetricDef {
        key: "wait_s.p50",
        unit: "s",
        better: Better::Lower,
    },
    MetricDef {
        key: "wait_s.p90",
        unit: "s",
        better: Better::Lower,
    },
    MetricDef {
        key: "wait_s.p99",
        unit: "s",
        better: Better::Lower,
    },
    MetricDef {
        key: "wait_s.mean",
        unit: "s",
        better: Better::Lower,
    },
    MetricDef {
        key: "queue_time_s.p90",
        unit: "s",
        better: Better::Lower,
    },
    MetricDef {
        key: "abandon_rate",
        unit: "share",
        better: Better::Lower,
    },
    MetricDef {
        key: "matches",
        unit: "matches",
        better: Better::Higher,
    },
    MetricDef {
        key: "matches_per_hour",
        unit: "per h",
        better: Better::Higher,
    },
    MetricDef {
        key: "spread_rating.mean",
        unit: "rating points",
        better: Better::Lower,
    },
    MetricDef {
        key: "spread_rating.p90",
        unit: "rating points",
        better: Better::Lower,
    },
    MetricDef {
        key: "spread_skill.mean",
        unit: "skill points",
        better: Better::Lower,
    },
    MetricDef {
        key: "win_prob_gap.mean",
        unit: "probability",
        better: Better::Lower,
    },
    MetricDef {
        key: "team_rating_gap.mean",
        unit: "rating points",
        better: Better::Lower,
    },
    MetricDef {
        key: "top_player_gap_skill.mean",
        unit: "skill points",
        better: Better::Lower,
    },
    MetricDef {
        key: "win_rate_gap_pp.within_1",
        unit: "share",
        better: Better::Higher,
    },
    MetricDef {
        key: "survivors_10_plus_share",
        unit: "share",
        better: Better::Lower,
    },
    MetricDef {
        key: "gold_integral.mean",
        unit: "gold-minutes",
        better: Better::Lower,
    },
    MetricDef {
        key: "upset_rate",
        unit: "share",
        better: Better::Neither,
    },
    MetricDef {
        key: "brier_score",
        unit: "squared probability",
        better: Better::Lower,
    },
    MetricDef {
        key: "rating_skill_rank_corr",
        unit: "Spearman rho",
        better: Better::Higher,
    },
    MetricDef {
        key: "engagement.quit_rate",
        unit: "share",
        better: Better::Lower,
    },
    MetricDef {
        key: "engagement.daily_active_mean",
        unit: "players",
        better: Better::Higher,
    },
    MetricDef {
        key: "engagement.engaged_at_end",
        unit: "players",
        better: Better::Higher,
    },
    MetricDef {
        key: "engagement.session_minutes.mean",
        unit: "min",
        better: Better::Higher,
    },
];

/// An arm's mean and 95% interval of a metric over its seeds. Every metric
/// here but the rank correlation is a wait, a count, a share or a gap,
/// never negative, so a t interval's lower bound below zero is cut at 0
/// (a median wait of 0.0001 s is not "between -0.0003 and 0.0005 s").
pub fn arm_ci(def: &MetricDef, values: &[f64]) -> Ci {
    shown(def.key, ci95(values))
}

/// `c` as pages and terminal tables show a metric's interval: the lower
/// bound cut at 0 unless the metric can be negative (the files keep the
/// t interval as computed).
pub fn shown(key: &str, mut c: Ci) -> Ci {
    if !key.starts_with("rating_skill_rank_corr") {
        c.ci95_low = c.ci95_low.map(|x| x.max(0.0));
    }
    c
}

/// A metric's unit as the comparison table gives it, if it is one of `METRICS`.
pub fn metric_unit(key: &str) -> Option<&'static str> {
    METRICS.iter().find(|m| m.key == key).map(|m| m.unit)
}

/// Quantiles of matched waits a run keeps for comparisons
/// (`wait_quantiles.json`): q = k / QUANTILE_STEPS for k = 0..=QUANTILE_STEPS.
pub const QUANTILE_STEPS: usize = 200;
/// The file a run (and each seed of a replicated run) writes them to.
pub const QUANTILES_FILE: &str = "wait_quantiles.json";

/// The run's wait quantiles as `wait_quantiles.json` holds them: empty when
/// no ticket was matched after warm-up.
pub fn wait_quantiles_json(waits: &dyn Dist) -> Value {
    let w: Vec<f64> = if waits.n() == 0 {
        Vec::new()
    } else {
        (0..=QUANTILE_STEPS)
            .filter_map(|k| waits.quantile(k as f64 / QUANTILE_STEPS as f64))
            .collect()
    };
    json!({
        "what": "wait_s of matched tickets enqueued after warm-up, at quantiles q = k/steps",
        "steps": QUANTILE_STEPS,
        "n": waits.n(),
        "wait_s": w,
    })
}

/// Reads back `wait_quantiles_json`: the wait at each q step, or `None`
/// when the file is not of that form.
pub fn read_wait_quantiles(v: &Value) -> Option<Vec<f64>> {
    if v.get("steps")?.as_u64()? != QUANTILE_STEPS as u64 {
        return None;
    }
    let w: Option<Vec<f64>> = v
        .get("wait_s")?
        .as_array()?
        .iter()
        .map(Value::as_f64)
        .collect();
    w.filter(|w| w.len() == QUANTILE_STEPS + 1)
}

/// One seed's results within an arm.
#[derive(Clone, Debug)]
pub struct SeedRun {
    pub seed: u64,
    /// A `summary.json` (for a sweep setting, only the metrics the sweep kept).
    pub summary: Value,
    pub wait_quantiles: Option<Vec<f64>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArmKind {
    Run,
    Replicated,
    SweepSetting,
}

impl ArmKind {
    fn text(self) -> &'static str {
        match self {
            ArmKind::Run => "run",
            ArmKind::Replicated => "replicated run",
            ArmKind::SweepSetting => "sweep setting",
        }
    }
}

/// One side of a comparison: a run, a replicated run or one setting of a sweep.
#[derive(Clone, Debug)]
pub struct Arm {
    pub label: String,
    pub kind: ArmKind,
    pub scenario: String,
    pub scenario_sha256: Option<String>,
    pub mmsim_version: Option<String>,
    /// The scenario's population and match format (canonical JSON): the
    /// world its seeds' random streams draw. Seeds pair runs only when
    /// these agree. `None` when the folder holds no scenario to read.
    pub world: Option<Value>,
    pub runs: Vec<SeedRun>,
}

impl Arm {
    pub fn seeds(&self) -> Vec<u64> {
        self.runs.iter().map(|r| r.seed).collect()
    }
    pub fn values(&self, key: &str) -> Vec<(u64, f64)> {
        self.runs
            .iter()
            .filter_map(|r| Some((r.seed, metric(&r.summary, key)?)))
            .collect()
    }
    pub fn has(&self, key: &str) -> bool {
        self.runs
            .iter()
            .any(|r| lookup(&r.summary, key).is_some_and(|v| !v.is_null()))
    }
}

/// How arm B relates to arm A.
#[derive(Clone, Debug, PartialEq)]
pub enum Pairing {
    /// Same world on these common seeds: differences are taken seed by seed.
    Paired {
        seeds: Vec<u64>,
    },
    Unpaired {
        reason: String,
    },
}

/// The pairing rule. Seeds pair two arms only when both simulate the same
/// population and match format: then a seed draws the same players and
/// arrivals in both, and what differs is the setting (policy, rating,
/// arrivals rate, outcome model...). Different worlds (Armored Warfare and
/// Dota) share no random numbers that mean the same thing, whatever their
/// seeds. Without a scenario to read, the scenario names must agree.
pub fn pairing(a: &Arm, b: &Arm) -> Pairing {
    let common: Vec<u64> = a
        .seeds()
        .into_iter()
        .filter(|s| b.seeds().contains(s))
        .collect();
    match (&a.world, &b.world) {
        (Some(wa), Some(wb)) if wa != wb => {
            let what = mmsim_scenario::provenance::first_difference(wa, wb)
                .map(|(k, x, y)| {
                    let show = |v: Option<Value>| v.map_or("absent".to_string(), |v| v.to_string());
                    format!(
                        " (first difference: {k} is {} in {} and {} in {})",
                        show(x),
                        a.label,
                        show(y),
                        b.label
                    )
                })
                .unwrap_or_default();
            return Pairing::Unpaired {
                reason: format!(
                    "they simulate different populations or match formats{what}, so a seed does not draw the same players in both"
                ),
            };
        }
        (None, _) | (_, None) if a.scenario != b.scenario => {
            return Pairing::Unpaired {
                reason: format!(
                    "they ran different scenarios ({} and {}) and no scenario.toml says they share a world",
                    a.scenario, b.scenario
                ),
            };
        }
        _ => {}
    }
    if common.is_empty() {
        return Pairing::Unpaired {
            reason: format!(
                "they share no seed ({} and {})",
                seeds_text(&a.seeds()),
                seeds_text(&b.seeds())
            ),
        };
    }
    Pairing::Paired { seeds: common }
}

pub fn seeds_text(seeds: &[u64]) -> String {
    match seeds {
        [] => "no seed".into(),
        [one] => format!("seed {one}"),
        _ if seeds.windows(2).all(|w| w[1] == w[0] + 1) => {
            format!("seeds {}..{}", seeds[0], seeds[seeds.len() - 1])
        }
        _ => format!(
            "seeds {}",
            seeds
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// What a difference means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Better,
    Worse,
    /// Outside seed noise, for a metric with no better side.
    Differs,
    /// The 95% interval contains 0.
    WithinNoise,
    /// Equal on every seed.
    Same,
    /// One value a side (or one common seed): no interval, so seed noise
    /// cannot be told apart from the setting.
    NoInterval,
}

impl Verdict {
    pub fn text(self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::Differs => "differs",
            Verdict::WithinNoise => "within seed noise",
            Verdict::Same => "same",
            Verdict::NoInterval => "one seed: cannot tell from noise",
        }
    }
}

/// One metric of B against A.
#[derive(Clone, Debug)]
pub struct Delta {
    pub def: MetricDef,
    pub a: Ci,
    pub b: Ci,
    /// Mean of B − A (paired: of the per-seed differences).
    pub diff: Option<f64>,
    /// 95% interval of the difference: Student-t on per-seed differences
    /// when paired, Welch's when unpaired with two seeds or more a side.
    pub interval: Option<(f64, f64)>,
    /// Seeds behind the difference (paired: common seeds).
    pub n: usize,
    pub verdict: Verdict,
}

/// Arm `b` against the first arm.
#[derive(Clone, Debug)]
pub struct PairResult {
    pub b: usize,
    pub pairing: Pairing,
    pub deltas: Vec<Delta>,
}

#[derive(Clone, Debug)]
pub struct Comparison {
    pub arms: Vec<Arm>,
    /// Every arm after the first against the first.
    pub pairs: Vec<PairResult>,
}

/// Compares every arm with the first.
pub fn compare(arms: Vec<Arm>) -> Comparison {
    let pairs = (1..arms.len())
        .map(|i| {
            let pairing = pairing(&arms[0], &arms[i]);
            let deltas = METRICS
                .iter()
                .filter(|d| arms[0].has(d.key) && arms[i].has(d.key))
                .map(|d| delta(*d, &arms[0], &arms[i], &pairing))
                .collect();
            PairResult {
                b: i,
                pairing,
                deltas,
            }
        })
        .collect();
    Comparison { arms, pairs }
}

fn delta(def: MetricDef, a: &Arm, b: &Arm, pairing: &Pairing) -> Delta {
    let va = a.values(def.key);
    let vb = b.values(def.key);
    let ca = arm_ci(&def, &va.iter().map(|x| x.1).collect::<Vec<_>>());
    let cb = arm_ci(&def, &vb.iter().map(|x| x.1).collect::<Vec<_>>());
    let (diff, interval, n, all_zero) = match pairing {
        Pairing::Paired { seeds } => {
            let d: Vec<f64> = seeds
                .iter()
                .filter_map(|s| {
                    let x = va.iter().find(|v| v.0 == *s)?.1;
                    let y = vb.iter().find(|v| v.0 == *s)?.1;
                    Some(y - x)
                })
                .collect();
            let c = ci95(&d);
            let zero = !d.is_empty() && d.iter().all(|x| *x == 0.0);
            (c.mean, c.ci95_low.zip(c.ci95_high), d.len(), zero)
        }
        Pairing::Unpaired { .. } => {
            let diff = cb.mean.zip(ca.mean).map(|(y, x)| y - x);
            (diff, welch(&ca, &cb), ca.n.min(cb.n), false)
        }
    };
    let verdict = if all_zero {
        Verdict::Same
    } else {
        match (diff, interval) {
            (Some(_), Some((lo, hi))) if lo <= 0.0 && hi >= 0.0 => Verdict::WithinNoise,
            (Some(d), Some(_)) => match (def.better, d < 0.0) {
                (Better::Neither, _) => Verdict::Differs,
                (Better::Lower, true) | (Better::Higher, false) => Verdict::Better,
                _ => Verdict::Worse,
            },
            (Some(0.0), None) => Verdict::Same,
            _ => Verdict::NoInterval,
        }
    };
    Delta {
        def,
        a: ca,
        b: cb,
        diff,
        interval,
        n,
        verdict,
    }
}

/// Welch's 95% interval for a difference of two means from independent
/// seeds; `None` below two seeds a side.
fn welch(a: &Ci, b: &Ci) -> Option<(f64, f64)> {
    let (ma, sa, na) = (a.mean?, a.sd?, a.n as f64);
    let (mb, sb, nb) = (b.mean?, b.sd?, b.n as f64);
    let (va, vb) = (sa * sa / na, sb * sb / nb);
    let se = (va + vb).sqrt();
    let d = mb - ma;
    if se == 0.0 {
        return Some((d, d));
    }
    let df = (va + vb).powi(2) / (va * va / (na - 1.0) + vb * vb / (nb - 1.0));
    let half = t975((df.floor() as usize).max(1)) * se;
    Some((d - half, d + half))
}

/// The sentence that says what kind of comparison B against A is.
pub fn pairing_line(a: &Arm, b: &Arm, p: &Pairing) -> String {
    match p {
        Pairing::Paired { seeds } if seeds.len() == 1 => format!(
            "paired comparison of {} with {} on one common seed ({}): the same players and arrivals, but one seed gives no interval, so a difference may still be seed noise",
            b.label, a.label, seeds[0]
        ),
        Pairing::Paired { seeds } => format!(
            "paired comparison of {} with {} on {} common seeds ({}): the same players and arrivals on each seed; 95% intervals are Student-t over the per-seed differences",
            b.label,
            a.label,
            seeds.len(),
            seeds_text(seeds)
        ),
        Pairing::Unpaired { reason } => {
            let tail = match (a.runs.len() > 1, b.runs.len() > 1) {
                (true, true) => "95% intervals are Welch's over the two sets of seeds".to_string(),
                (false, false) => "with one seed a side there is no interval, and differences include seed noise".to_string(),
                (true, false) => format!("{} has one seed, so there is no interval, and differences include seed noise", b.label),
                (false, true) => format!("{} has one seed, so there is no interval, and differences include seed noise", a.label),
            };
            format!(
                "unpaired comparison of {} with {}: {reason}; {tail}",
                b.label, a.label
            )
        }
    }
}

fn arm_line(i: usize, a: &Arm) -> String {
    format!(
        "{} = {}: {} of {}, {}{}",
        letter(i),
        a.label,
        a.kind.text(),
        a.scenario,
        seeds_text(&a.seeds()),
        a.scenario_sha256
            .as_deref()
            .map(|h| format!(", scenario_sha256 {}", &h[..h.len().min(12)]))
            .unwrap_or_default()
    )
}

fn letter(i: usize) -> String {
    ((b'A' + (i % 26) as u8) as char).to_string()
}

/// Mean, or mean with its interval when there are two seeds or more.
pub(super) fn ci_text(c: &Ci) -> String {
    match (c.mean, c.ci95_low, c.ci95_high) {
        (Some(m), Some(lo), Some(hi)) => {
            format!("{} [{}, {}]", sig(m, 4), sig(lo, 4), sig(hi, 4))
        }
        (Some(m), _, _) => sig(m, 4),
        _ => "-".into(),
    }
}

fn signed4(x: f64) -> String {
    let s = sig(x, 4);
    if x > 0.0 && s != "0" {
        format!("+{s}")
    } else {
        s
    }
}

fn interval_text(i: Option<(f64, f64)>) -> String {
    i.map_or_else(
        || "-".into(),
        |(lo, hi)| format!("[{}, {}]", signed4(lo), signed4(hi)),
    )
}

/// The terminal text: what each comparison is, the arms, then one table per
/// arm against the first.
pub fn render_text(c: &Comparison) -> String {
    let mut out = String::new();
    for p in &c.pairs {
        out.push_str(&pairing_line(&c.arms[0], &c.arms[p.b], &p.pairing));
        out.push('\n');
    }
    for (i, a) in c.arms.iter().enumerate() {
        out.push_str(&arm_line(i, a));
        out.push('\n');
    }
    for p in &c.pairs {
        let b = letter(p.b);
        out.push('\n');
        let header = [
            "metric".to_string(),
            "A".to_string(),
            b.clone(),
            format!("{b} - A"),
            "95% interval".to_string(),
            "verdict".to_string(),
        ];
        let rows: Vec<[String; 6]> = p
            .deltas
            .iter()
            .map(|d| {
                [
                    d.def.key.to_string(),
                    ci_text(&d.a),
                    ci_text(&d.b),
                    d.diff.map_or_else(|| "-".into(), signed4),
                    interval_text(d.interval),
                    d.verdict.text().to_string(),
                ]
            })
            .collect();
        let mut w = header.clone().map(|h| h.chars().count());
        for r in &rows {
            for (w, s) in w.iter_mut().zip(r) {
                *w = (*w).max(s.chars().count());
            }
        }
        let line = |r: &[String; 6]| {
            let mut s = format!("{:<w$}", r[0], w = w[0]);
            for (i, x) in r.iter().enumerate().skip(1) {
                if i == 5 {
                    s.push_str(&format!("  {x}"));
                } else {
                    s.push_str(&format!("  {:>w$}", x, w = w[i]));
                }
            }
            s.trim_end().to_string()
        };
        out.push_str(&line(&header));
        out.push('\n');
        for r in &rows {
            out.push_str(&line(r));
            out.push('\n');
        }
    }
    out
}

fn ci_json(c: &Ci) -> Value {
    json!({"mean": c.mean, "ci95_low": c.ci95_low, "ci95_high": c.ci95_high, "n": c.n})
}

/// The comparison as JSON (`compare.json`, `--json`), for scripts and notebooks.
pub fn to_json(c: &Comparison) -> Value {
    let arms: Vec<Value> = c
        .arms
        .iter()
        .enumerate()
        .map(|(i, a)| {
            json!({
                "letter": letter(i),
                "label": a.label,
                "kind": a.kind.text(),
                "scenario": a.scenario,
                "scenario_sha256": a.scenario_sha256,
                "mmsim_version": a.mmsim_version,
                "seeds": a.seeds(),
                "world": a.world,
            })
        })
        .collect();
    let pairs: Vec<Value> = c
        .pairs
        .iter()
        .map(|p| {
            let (paired, seeds, reason) = match &p.pairing {
                Pairing::Paired { seeds } => (true, seeds.clone(), None),
                Pairing::Unpaired { reason } => (false, Vec::new(), Some(reason.clone())),
            };
            let metrics: Vec<Value> = p
                .deltas
                .iter()
                .map(|d| {
                    json!({
                        "key": d.def.key,
                        "unit": d.def.unit,
                        "better": match d.def.better { Better::Lower => "lower", Better::Higher => "higher", Better::Neither => "neither" },
                        "a": ci_json(&d.a),
                        "b": ci_json(&d.b),
                        "diff": d.diff,
                        "diff_ci95_low": d.interval.map(|i| i.0),
                        "diff_ci95_high": d.interval.map(|i| i.1),
                        "n": d.n,
                        "verdict": d.verdict.text(),
                    })
                })
                .collect();
            json!({
                "a": c.arms[0].label,
                "b": c.arms[p.b].label,
                "paired": paired,
                "common_seeds": seeds,
                "unpaired_reason": reason,
                "note": pairing_line(&c.arms[0], &c.arms[p.b], &p.pairing),
                "metrics": metrics,
            })
        })
        .collect();
    json!({"arms": arms, "comparisons": pairs})
}

/// The share of matched tickets (%) within `x` seconds, read off a quantile table.
fn cdf_at(q: &[f64], x: f64) -> f64 {
    let steps = (q.len() - 1) as f64;
    if x < q[0] {
        return 0.0;
    }
    if x >= q[q.len() - 1] {
        return 100.0;
    }
    // Last k with q[k] <= x, then linear between it and the next.
    let k = q.partition_point(|v| *v <= x) - 1;
    let (lo, hi) = (q[k], q[k + 1]);
    let frac = if hi > lo { (x - lo) / (hi - lo) } else { 1.0 };
    100.0 * (k as f64 + frac) / steps
}

/// Mean and 95% interval of values that cannot leave `[lo, hi]` (a share
/// in percent, a wait): the interval is cut to that range, as the tables cut it.
fn band_of(values: &[f64], lo: f64, hi: f64) -> (f64, Option<(f64, f64)>) {
    let c = ci95(values);
    let band = c
        .ci95_low
        .zip(c.ci95_high)
        .map(|(a, b)| (a.max(lo), b.min(hi)));
    (c.mean.unwrap_or(f64::NAN), band)
}

/// A series' legend: the arm's letter and folder, or, for a page of one
/// replicated run, what the line and band are.
fn series_label(arms: &[Arm], i: usize) -> String {
    if arms.len() == 1 {
        let n = arms[0].runs.len();
        if n > 1 {
            format!("mean over {n} seeds, 95% band")
        } else {
            "one seed".into()
        }
    } else {
        format!("{} {}", letter(i), short(&arms[i].label))
    }
}

/// The overlaid wait CDFs of `arms` (mean and band over each arm's seeds).
pub fn cdf_spec(arms: &[Arm], name: &'static str) -> Option<Spec> {
    let with: Vec<(usize, Vec<&Vec<f64>>)> = arms
        .iter()
        .enumerate()
        .map(|(i, a)| {
            (
                i,
                a.runs
                    .iter()
                    .filter_map(|r| r.wait_quantiles.as_ref())
                    .collect::<Vec<_>>(),
            )
        })
        .filter(|(_, q)| !q.is_empty())
        .collect();
    if with.is_empty() {
        return None;
    }
    // The axis ends past the largest p99, so a long tail does not squash the bulk.
    let p99 = QUANTILE_STEPS * 99 / 100;
    let top = with
        .iter()
        .flat_map(|(_, qs)| qs.iter().map(|q| q[p99]))
        .fold(0.0, f64::max)
        .max(1.0)
        * 1.05;
    const POINTS: usize = 240;
    let series = with
        .iter()
        .map(|(i, qs)| BandSeries {
            label: series_label(arms, *i),
            color: PALETTE[i % PALETTE.len()],
            points: (0..=POINTS)
                .map(|k| {
                    let x = top * k as f64 / POINTS as f64;
                    let ys: Vec<f64> = qs.iter().map(|q| cdf_at(q, x)).collect();
                    let (m, b) = band_of(&ys, 0.0, 100.0);
                    (x, m, b)
                })
                .collect(),
        })
        .collect();
    Some(Spec {
        name,
        title: if arms.len() > 1 {
            "Wait distribution (cumulative), overlaid".into()
        } else {
            "Wait distribution (cumulative) over seeds".into()
        },
        caption: format!(
            "Share of matched tickets (enqueued after warm-up) that found a match within a given wait{}; \
             with several seeds, the line is the mean over seeds and the band its 95% interval. The axis stops at {} s (past every p99).",
            if arms.len() > 1 { ", per arm" } else { "" },
            number::tick(top)
        ),
        x_desc: "wait in queue (s)".into(),
        y_desc: "tickets matched within this wait (%)".into(),
        chart: Chart::Seeds(BandChart::Lines {
            series,
            x_range: (0.0, top),
            y_range: (0.0, 100.0),
        }),
    })
}

fn short(s: &str) -> String {
    let n = s.chars().count();
    if n <= 36 {
        s.to_string()
    } else {
        format!("…{}", s.chars().skip(n - 35).collect::<String>())
    }
}

/// Median wait by skill decile of `arms`, bars side by side with whiskers.
pub(super) fn decile_spec(arms: &[Arm], name: &'static str) -> Option<Spec> {
    let series: Vec<BandSeries> = arms
        .iter()
        .enumerate()
        .filter_map(|(i, a)| {
            let points: Vec<BandPoint> = (0..10)
                .filter_map(|d| {
                    let key = format!("wait_s_by_skill_decile.{d}.p50");
                    let ys: Vec<f64> = a.values(&key).into_iter().map(|x| x.1).collect();
                    if ys.is_empty() {
                        return None;
                    }
                    let (m, b) = band_of(&ys, 0.0, f64::INFINITY);
                    Some((d as f64, m, b))
                })
                .collect();
            (!points.is_empty()).then(|| BandSeries {
                label: series_label(arms, i),
                color: PALETTE[i % PALETTE.len()],
                points,
            })
        })
        .collect();
    if series.is_empty() {
        return None;
    }
    Some(Spec {
        name,
        title: "Median wait by true-skill decile".into(),
        caption: format!(
            "Median wait of matched tickets by decile of the population's true skill (1 = lowest tenth){}, from each seed's wait_s_by_skill_decile; with several seeds, the bar is the mean over seeds and the whisker its 95% interval (cut at 0).",
            if arms.len() > 1 { ", per arm" } else { "" }
        ),
        x_desc: "true-skill decile (1 = lowest, 10 = highest)".into(),
        y_desc: "median wait in queue (s)".into(),
        chart: Chart::Seeds(BandChart::Bars {
            categories: (1..=10).map(|d| d.to_string()).collect(),
            series,
        }),
    })
}

/// Every file of a comparison: its plots (PNG and SVG), `compare.json` and
/// `compare.html`, in a fixed order.
pub fn artifacts(c: &Comparison) -> anyhow::Result<Vec<Artifact>> {
    let plots: Vec<Plot> = [
        cdf_spec(&c.arms, "compare-wait-cdf"),
        decile_spec(&c.arms, "compare-wait-by-decile"),
    ]
    .into_iter()
    .flatten()
    .map(|s| chart::render(&s))
    .collect::<anyhow::Result<_>>()?;
    let mut out: Vec<Artifact> = chart::plot_artifacts(&plots).collect();
    let mut js = serde_json::to_vec_pretty(&to_json(c))?;
    js.push(b'\n');
    out.push(Artifact {
        name: "compare.json".into(),
        bytes: js,
    });
    out.push(Artifact {
        name: "compare.html".into(),
        bytes: html(c, &plots).into_bytes(),
    });
    Ok(out)
}

fn verdict_class(v: Verdict) -> &'static str {
    match v {
        Verdict::Better => "better",
        Verdict::Worse => "worse",
        _ => "neutral",
    }
}

fn html(c: &Comparison, plots: &[Plot]) -> String {
    let mut h = String::new();
    let title = format!(
        "Comparison: {}",
        c.arms
            .iter()
            .map(|a| a.label.as_str())
            .collect::<Vec<_>>()
            .join(" · ")
    );
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>\n\
body{{font-family:\"DejaVu Sans\",sans-serif;max-width:1360px;margin:1em auto;padding:0 12px;color:#212121;font-size:14px}}\n\
h1{{font-size:22px;margin:.3em 0}}h2{{font-size:18px;margin:.8em 0 .3em}}\n\
table{{border-collapse:collapse;font-size:13px}}th,td{{border:1px solid #ddd;padding:3px 7px;text-align:right}}\n\
th{{background:#f4f4f4}}td.l,th.l{{text-align:left}}\n\
td.better{{background:#e3f4ea;color:#0b5d2a}}td.worse{{background:#fbe7e1;color:#8a2a0a}}td.neutral{{color:#666}}td.better,td.worse,td.neutral{{white-space:nowrap}}\n\
.verdicts p{{margin:.25em 0}}.grid{{display:grid;grid-template-columns:1fr 1fr;gap:12px}}\n\
figure{{margin:0}}img{{width:100%;height:auto}}figcaption,small{{color:#555;font-size:12px}}\n\
</style>\n</head>\n<body>\n<h1>{}</h1>\n",
        esc(&title),
        esc(&title)
    );
    h.push_str("<div class=\"verdicts\">\n");
    for p in &c.pairs {
        let _ = writeln!(
            h,
            "<p><b>{} against A:</b> {}</p>",
            letter(p.b),
            esc(&pairing_line(&c.arms[0], &c.arms[p.b], &p.pairing))
        );
    }
    h.push_str("</div>\n<table>\n<tr><th></th><th class=\"l\">folder</th><th class=\"l\">kind</th><th class=\"l\">scenario</th><th class=\"l\">seeds</th><th class=\"l\">scenario_sha256</th><th class=\"l\">mmsim</th></tr>\n");
    for (i, a) in c.arms.iter().enumerate() {
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\"><code>{}</code></td><td class=\"l\">{}</td></tr>",
            letter(i),
            esc(&a.label),
            a.kind.text(),
            esc(&a.scenario),
            esc(&seeds_text(&a.seeds())),
            esc(a.scenario_sha256.as_deref().map_or("-", |s| &s[..s.len().min(12)])),
            esc(a.mmsim_version.as_deref().unwrap_or("-"))
        );
    }
    h.push_str("</table>\n");
    plot_grid(&mut h, plots);
    for p in &c.pairs {
        let b = letter(p.b);
        let _ = writeln!(
            h,
            "<h2>{b} against A: differences {b} − A</h2>\n<table>\n<tr><th class=\"l\">metric</th><th class=\"l\">unit</th><th>better when</th><th>A</th><th>{b}</th><th>{b} − A</th><th>95% interval of the difference</th><th>seeds</th><th class=\"l\">verdict</th></tr>"
        );
        for d in &p.deltas {
            let meaning =
                mmsim_core::metrics::summary::meaning(d.def.key.split('.').next().unwrap_or(""))
                    .unwrap_or("");
            let _ = writeln!(
                h,
                "<tr><td class=\"l\" title=\"{}\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l {}\">{}</td></tr>",
                esc(meaning),
                esc(d.def.key),
                esc(d.def.unit),
                match d.def.better { Better::Lower => "lower", Better::Higher => "higher", Better::Neither => "—" },
                esc(&ci_text(&d.a)),
                esc(&ci_text(&d.b)),
                esc(&d.diff.map_or_else(|| "-".into(), signed4)),
                esc(&interval_text(d.interval)),
                d.n,
                verdict_class(d.verdict),
                esc(d.verdict.text())
            );
        }
        h.push_str("</table>\n");
    }
    h.push_str("<p><small>A and B columns: the mean over an arm's seeds, with its 95% Student-t interval when it has two or more. \
A difference is marked better or worse only when its 95% interval excludes 0; \"within seed noise\" when it contains 0; \
with one seed a side no interval exists and no verdict is given. The same figures are in <code>compare.json</code>.</small></p>\n</body>\n</html>\n");
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arm(label: &str, scenario: &str, world: Option<Value>, runs: &[(u64, f64, f64)]) -> Arm {
        Arm {
            label: label.into(),
            kind: if runs.len() > 1 {
                ArmKind::Replicated
            } else {
                ArmKind::Run
            },
            scenario: scenario.into(),
            scenario_sha256: Some(format!("{label}-hash")),
            mmsim_version: Some("1".into()),
            world,
            runs: runs
                .iter()
                .map(|&(seed, p90, matches)| SeedRun {
                    seed,
                    summary: json!({"wait_s": {"p90": p90}, "matches": matches, "upset_rate": 0.3}),
                    wait_quantiles: Some(
                        (0..=QUANTILE_STEPS)
                            .map(|k| p90 * k as f64 / 180.0)
                            .collect(),
                    ),
                })
                .collect(),
        }
    }

    fn world(team_size: u32) -> Option<Value> {
        Some(json!({"population": {"size": 100}, "match": {"team_size": team_size}}))
    }

    #[test]
    fn seeds_pair_only_within_one_world() {
        let a = arm("a", "s", world(1), &[(1, 10.0, 100.0), (2, 12.0, 110.0)]);
        let b = arm("b", "s", world(1), &[(2, 9.0, 90.0), (3, 8.0, 80.0)]);
        assert_eq!(pairing(&a, &b), Pairing::Paired { seeds: vec![2] });
        let other = arm("c", "t", world(5), &[(1, 9.0, 90.0), (2, 8.0, 80.0)]);
        let Pairing::Unpaired { reason } = pairing(&a, &other) else {
            panic!("different worlds paired");
        };
        assert!(reason.contains("match.team_size"), "{reason}");
        let apart = arm("d", "s", world(1), &[(7, 9.0, 90.0)]);
        assert!(matches!(pairing(&a, &apart), Pairing::Unpaired { .. }));
        // Without scenario files, only the scenario name can tell.
        let (mut x, mut y) = (a.clone(), other.clone());
        x.world = None;
        y.world = None;
        assert!(matches!(pairing(&x, &y), Pairing::Unpaired { .. }));
        y.scenario = "s".into();
        assert!(matches!(pairing(&x, &y), Pairing::Paired { .. }));
    }

    #[test]
    fn paired_differences_take_a_t_interval_over_seeds() {
        // Differences in matches: +244, +175, +103, -16, +290 (the issue's
        // five seeds): mean 159.2, sd 120.83, t(4) = 2.7764 -> ± 150.03.
        let base = [1000.0, 1100.0, 900.0, 1050.0, 980.0];
        let d = [244.0, 175.0, 103.0, -16.0, 290.0];
        let ra: Vec<(u64, f64, f64)> = (0..5).map(|i| (i as u64 + 1, 10.0, base[i])).collect();
        let rb: Vec<(u64, f64, f64)> = (0..5)
            .map(|i| (i as u64 + 1, 10.0 + i as f64, base[i] + d[i]))
            .collect();
        let c = compare(vec![
            arm("a", "s", world(1), &ra),
            arm("b", "s", world(1), &rb),
        ]);
        let m = c.pairs[0]
            .deltas
            .iter()
            .find(|d| d.def.key == "matches")
            .unwrap();
        assert!((m.diff.unwrap() - 159.2).abs() < 1e-9);
        let (lo, hi) = m.interval.unwrap();
        assert!((hi - lo - 2.0 * 150.03).abs() < 0.01, "{lo} {hi}");
        assert_eq!(m.verdict, Verdict::Better);
        assert_eq!(m.n, 5);
        // p90 rose by 0..4 s: an interval [-0.0, 4.0]-ish containing 0? mean 2, sd 1.58 -> ±1.96: [0.04, 3.96], worse.
        let w = c.pairs[0]
            .deltas
            .iter()
            .find(|d| d.def.key == "wait_s.p90")
            .unwrap();
        assert_eq!(w.verdict, Verdict::Worse);
        // upset_rate has no better side and is equal: same.
        let u = c.pairs[0]
            .deltas
            .iter()
            .find(|d| d.def.key == "upset_rate")
            .unwrap();
        assert_eq!(u.verdict, Verdict::Same);
        let text = render_text(&c);
        assert!(
            text.starts_with("paired comparison of b with a on 5 common seeds"),
            "{text}"
        );
        assert!(!text.contains("not from seed noise"));
    }

    #[test]
    fn one_seed_gives_no_verdict_and_an_interval_across_zero_is_noise() {
        let c = compare(vec![
            arm("a", "s", world(1), &[(1, 10.0, 100.0)]),
            arm("b", "s", world(1), &[(1, 12.0, 120.0)]),
        ]);
        let p = &c.pairs[0];
        assert!(p.deltas.iter().all(|d| d.interval.is_none()));
        let m = p.deltas.iter().find(|d| d.def.key == "matches").unwrap();
        assert_eq!(m.verdict, Verdict::NoInterval);
        assert!(render_text(&c).contains("one seed gives no interval"));
        let c = compare(vec![
            arm(
                "a",
                "s",
                world(1),
                &[(1, 10.0, 100.0), (2, 10.0, 100.0), (3, 10.0, 100.0)],
            ),
            arm(
                "b",
                "s",
                world(1),
                &[(1, 11.0, 100.0), (2, 9.0, 100.0), (3, 10.5, 100.0)],
            ),
        ]);
        let w = c.pairs[0]
            .deltas
            .iter()
            .find(|d| d.def.key == "wait_s.p90")
            .unwrap();
        assert_eq!(w.verdict, Verdict::WithinNoise);
    }

    #[test]
    fn unpaired_arms_get_welch_intervals() {
        let a = arm(
            "a",
            "s",
            world(1),
            &[(1, 10.0, 100.0), (2, 12.0, 100.0), (3, 11.0, 100.0)],
        );
        let b = arm(
            "b",
            "t",
            world(5),
            &[(1, 20.0, 100.0), (2, 22.0, 100.0), (3, 21.0, 100.0)],
        );
        let c = compare(vec![a, b]);
        let w = c.pairs[0]
            .deltas
            .iter()
            .find(|d| d.def.key == "wait_s.p90")
            .unwrap();
        // Equal sds of 1: se = sqrt(2/3), df = 4, t = 2.7764.
        let (lo, hi) = w.interval.unwrap();
        assert!((hi - lo - 2.0 * 2.7764 * (2.0f64 / 3.0).sqrt()).abs() < 1e-3);
        assert_eq!(w.verdict, Verdict::Worse);
        assert!(render_text(&c).starts_with("unpaired comparison"));
        let j = to_json(&c);
        assert_eq!(j["comparisons"][0]["paired"], json!(false));
    }

    #[test]
    fn cdf_reads_the_quantile_table() {
        let q: Vec<f64> = (0..=QUANTILE_STEPS).map(|k| k as f64).collect();
        assert_eq!(cdf_at(&q, -1.0), 0.0);
        assert!((cdf_at(&q, 100.0) - 50.0).abs() < 1e-9);
        assert!((cdf_at(&q, 50.5) - 25.25).abs() < 1e-9);
        assert_eq!(cdf_at(&q, 1e9), 100.0);
    }

    #[test]
    fn the_page_and_its_plots_repeat_byte_for_byte() {
        let mk = || {
            compare(vec![
                arm("a", "s", world(1), &[(1, 10.0, 100.0), (2, 12.0, 110.0)]),
                arm("b", "s", world(1), &[(1, 9.0, 90.0), (2, 8.0, 80.0)]),
                arm("c", "t", world(5), &[(5, 9.0, 90.0)]),
            ])
        };
        let x = artifacts(&mk()).unwrap();
        assert_eq!(x, artifacts(&mk()).unwrap());
        let names: Vec<&str> = x.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "plots/compare-wait-cdf.png",
                "plots/compare-wait-cdf.svg",
                "compare.json",
                "compare.html"
            ]
        );
        let page = String::from_utf8(x[3].bytes.clone()).unwrap();
        assert!(page.contains("C against A:</b> unpaired"), "{page}");
        assert!(page.contains("B against A:</b> paired"));
        assert!(!page.contains("NaN"));
    }
}
