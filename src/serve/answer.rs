//! What the page shows of the runs: the current setting against the
//! baseline, metric by metric, with the paired difference over the seeds
//! both have finished and its 95% interval (`mmsim compare`'s own
//! arithmetic and verdicts, so the page and `compare` never disagree), and
//! the two plots as SVG from the report's plot code.

use super::runs::{Outcome, Runs, Shared, SHOWN};
use crate::report::chart::{self, Chart, ScatterPoint, Spec};
use crate::report::compare::{self, Arm, ArmKind, SeedRun, Verdict};
use crate::tune::stats::{ci95, metric, pareto_front};
use serde_json::{json, Value};

/// The plane's axes, both minimised: how long players wait against how
/// far apart the players of a match are (the sweep page's default).
pub const PLANE: [&str; 2] = ["wait_s.p90", "spread_rating.mean"];

fn label(st: &Shared, setting: usize) -> String {
    let sets = &st.settings[setting].sets;
    if sets.is_empty() {
        "the scenario as served".to_string()
    } else {
        sets.join(", ")
    }
}

fn arm(runs: &Runs, st: &Shared, setting: usize) -> Arm {
    Arm {
        label: format!("#{setting}"),
        kind: ArmKind::Replicated,
        scenario: st.settings[setting].loaded.scenario.run.name.clone(),
        scenario_sha256: None,
        mmsim_version: None,
        // Every setting shares the served population and format: the
        // controls change no key of either, so seeds pair.
        world: None,
        runs: runs
            .seeds
            .iter()
            .filter_map(|&seed| match st.results.get(&(setting, seed)) {
                Some(Outcome::Done(r)) => Some(SeedRun {
                    seed,
                    summary: r.summary.clone(),
                    wait_quantiles: Some(r.quantiles.clone()),
                }),
                _ => None,
            })
            .collect(),
    }
}

fn ci_json(c: &crate::tune::Ci) -> Value {
    json!({"mean": c.mean, "low": c.ci95_low, "high": c.ci95_high, "n": c.n})
}

fn failures(runs: &Runs, st: &Shared, setting: usize) -> Vec<String> {
    runs.seeds
        .iter()
        .filter_map(|&seed| match st.results.get(&(setting, seed)) {
            Some(Outcome::Failed(why)) => Some(why.clone()),
            _ => None,
        })
        .collect()
}

fn side(runs: &Runs, st: &Shared, setting: usize) -> Value {
    json!({
        "id": setting,
        "label": label(st, setting),
        "sets": st.settings[setting].sets,
        "values": st.settings[setting].values,
        "done": runs.done(st, setting),
        "failed": failures(runs, st, setting),
    })
}

/// The page's whole answer: both sides, each metric compared, every seed's
/// values, and every setting tried for the plane.
pub fn state(runs: &Runs) -> Value {
    let st = runs.lock();
    let (b, c) = (st.baseline, st.current);
    let base = arm(runs, &st, b);
    let cur = arm(runs, &st, c);
    let cmp = compare::compare(vec![base.clone(), cur.clone()]);
    let metrics: Vec<Value> = SHOWN
        .iter()
        .map(|key| {
            let d = cmp
                .pairs
                .first()
                .and_then(|p| p.deltas.iter().find(|d| d.def.key == *key));
            let def = compare::METRICS.iter().find(|m| m.key == *key);
            let base_ci = compare::shown(key, ci95(&values(&base, key)));
            let cur_ci = compare::shown(key, ci95(&values(&cur, key)));
            let (diff, verdict) = match d {
                Some(d) => (
                    json!({"mean": d.diff, "low": d.interval.map(|i| i.0), "high": d.interval.map(|i| i.1), "n": d.n}),
                    verdict_text(d.verdict),
                ),
                None => (Value::Null, "waiting for a common seed"),
            };
            json!({
                "key": key,
                "unit": def.map(|d| d.unit).unwrap_or(""),
                "better": def.map(|d| format!("{:?}", d.better).to_lowercase()),
                "base": ci_json(&base_ci),
                "cur": ci_json(&cur_ci),
                "diff": diff,
                "verdict": verdict,
            })
        })
        .collect();
    let per_seed: Vec<Value> = runs
        .seeds
        .iter()
        .map(|&seed| {
            let pick = |setting: usize| match st.results.get(&(setting, seed)) {
                Some(Outcome::Done(r)) => {
                    let m: serde_json::Map<String, Value> = SHOWN
                        .iter()
                        .map(|k| (k.to_string(), json!(metric(&r.summary, k))))
                        .collect();
                    json!({"metrics": m, "wall_s": r.wall_s})
                }
                Some(Outcome::Failed(why)) => json!({"failed": why}),
                None => Value::Null,
            };
            json!({"seed": seed, "base": pick(b), "cur": pick(c)})
        })
        .collect();
    json!({
        "generation": runs.generation(),
        "seeds": runs.seeds,
        "baseline": side(runs, &st, b),
        "current": side(runs, &st, c),
        "complete": runs.complete(&st),
        "first_answer_s": st.first_answer_s,
        "full_answer_s": st.full_answer_s,
        "metrics": metrics,
        "per_seed": per_seed,
        "tried": tried(runs, &st),
    })
}

fn values(a: &Arm, key: &str) -> Vec<f64> {
    a.values(key).into_iter().map(|x| x.1).collect()
}

/// The page's words for a verdict: a difference inside seed noise says so
/// plainly, whatever its sign.
fn verdict_text(v: Verdict) -> &'static str {
    match v {
        Verdict::WithinNoise => "cannot tell from noise",
        Verdict::NoInterval => "one seed so far: cannot tell from noise",
        other => other.text(),
    }
}

/// A setting's point on the plane: means and intervals over its finished seeds.
struct Point {
    setting: usize,
    x: crate::tune::Ci,
    y: crate::tune::Ci,
    complete: bool,
}

fn points(runs: &Runs, st: &Shared) -> Vec<Point> {
    (0..st.settings.len())
        .filter_map(|i| {
            let a = arm(runs, st, i);
            if a.runs.is_empty() {
                return None;
            }
            Some(Point {
                setting: i,
                x: ci95(&values(&a, PLANE[0])),
                y: ci95(&values(&a, PLANE[1])),
                complete: a.runs.len() == runs.seeds.len(),
            })
        })
        .collect()
}

fn tried(runs: &Runs, st: &Shared) -> Vec<Value> {
    let pts = points(runs, st);
    let front = pareto_front(&pts.iter().map(|p| (p.x.mean, p.y.mean)).collect::<Vec<_>>());
    pts.iter()
        .zip(front)
        .map(|(p, on)| {
            json!({
                "id": p.setting,
                "label": label(st, p.setting),
                "x": p.x.mean,
                "y": p.y.mean,
                "complete": p.complete,
                "front": on,
            })
        })
        .collect()
}

/// The wait CDFs of the baseline and the current setting, overlaid (the
/// comparison page's plot, mean and band over the finished seeds).
pub fn cdf_svg(runs: &Runs) -> anyhow::Result<String> {
    let st = runs.lock();
    let mut base = arm(runs, &st, st.baseline);
    base.label = format!("baseline #{}", st.baseline);
    let mut arms = vec![base];
    if st.current != st.baseline {
        let mut cur = arm(runs, &st, st.current);
        cur.label = format!("current #{}", st.current);
        arms.push(cur);
    }
    drop(st);
    match compare::cdf_spec(&arms, "serve-wait-cdf") {
        Some(spec) => chart::render_svg(&spec),
        None => empty_svg("Wait distribution: no seed has finished yet"),
    }
}

/// Every setting tried so far on the wait-against-fairness plane, with
/// the Pareto front joined (the sweep page's plot).
pub fn plane_svg(runs: &Runs) -> anyhow::Result<String> {
    let st = runs.lock();
    let pts = points(runs, &st);
    let front = pareto_front(&pts.iter().map(|p| (p.x.mean, p.y.mean)).collect::<Vec<_>>());
    let (b, c) = (st.baseline, st.current);
    let name = st.settings[0].loaded.scenario.run.name.clone();
    drop(st);
    let scatter: Vec<ScatterPoint> = pts
        .iter()
        .zip(front)
        .filter_map(|(p, on)| {
            let mut tag = format!("#{}", p.setting);
            if p.setting == b {
                tag.push_str(" baseline");
            }
            if p.setting == c && c != b {
                tag.push_str(" current");
            }
            if !p.complete {
                tag.push_str(" (partial)");
            }
            Some(ScatterPoint {
                x: p.x.mean?,
                y: p.y.mean?,
                label: tag,
                front: on,
                x_ci: p.x.ci95_low.zip(p.x.ci95_high),
                y_ci: p.y.ci95_low.zip(p.y.ci95_high),
            })
        })
        .collect();
    if scatter.is_empty() {
        return empty_svg("Wait against fairness: no seed has finished yet");
    }
    let spec = Spec {
        name: "serve-plane",
        title: format!("{name}: rating spread against p90 wait, every setting tried"),
        caption: String::new(),
        x_desc: "wait p90 (s), mean over seeds".into(),
        y_desc: "rating spread in a match, mean".into(),
        chart: Chart::Scatter {
            points: scatter,
            front_label: "Pareto front".into(),
        },
    };
    chart::render_svg(&spec)
}

fn empty_svg(text: &str) -> anyhow::Result<String> {
    let esc = crate::report::page::esc(text);
    Ok(format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="960" height="540" viewBox="0 0 960 540"><rect width="960" height="540" fill="white"/><text x="480" y="270" text-anchor="middle" font-family="DejaVu Sans, sans-serif" font-size="22" fill="#555">{esc}</text></svg>"##
    ))
}
