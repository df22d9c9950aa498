//! The report of a replicated run (`mmsim run --replications N`): the
//! headline metrics as means with 95% intervals over the seeds, the wait
//! CDF as a mean line inside its 95% band, wait by skill decile with
//! whiskers, and each seed's own figures, so an analyst sees both the
//! answer and how much it moves from seed to seed.

use crate::artifact::Artifact;
use crate::chart::{self, Plot};
use crate::compare::{self, Arm, ArmKind, SeedRun, METRICS};
use crate::number;
use crate::page::{esc, plot_grid};
use mmsim_tune::stats::metric;
use serde_json::Value;
use std::fmt::Write as _;

/// What the page is made from: every seed's summary (whole, or `slim`)
/// and wait quantiles.
pub struct Input<'a> {
    pub scenario_name: &'a str,
    pub scenario_toml: &'a str,
    pub seeds: &'a [u64],
    pub summaries: &'a [Value],
    /// Each seed's `wait_quantiles.json`, read back
    /// (`compare::read_wait_quantiles`).
    pub wait_quantiles: &'a [Option<Vec<f64>>],
    pub scenario_sha256: &'a str,
}

/// The dotted paths of a seed's summary the page reads.
fn paths_read() -> impl Iterator<Item = String> {
    METRICS
        .iter()
        .map(|d| d.key.to_owned())
        .chain(SEED_COLUMNS.iter().map(|&c| c.to_owned()))
        .chain((0..10).map(|d| format!("wait_s_by_skill_decile.{d}.p50")))
}

/// A seed's summary cut to what the page reads, so a replicated run of many
/// seeds holds a few numbers per seed until its report is made, not every
/// seed's whole summary. The page made from slim summaries is the page
/// made from whole ones, byte for byte (`slim_summaries_make_the_same_page`).
pub fn slim(summary: &Value) -> Value {
    let mut out = Value::Null;
    for path in paths_read() {
        if let Some(v) = mmsim_tune::stats::lookup(summary, &path) {
            put(&mut out, summary, &path, v.clone());
        }
    }
    out
}

/// Writes `v` at `path` in `out`, shaping each level as `like` has it
/// (objects as objects, arrays as arrays with nulls before the index).
fn put(out: &mut Value, like: &Value, path: &str, v: Value) {
    let (part, rest) = match path.split_once('.') {
        Some((p, r)) => (p, Some(r)),
        None => (path, None),
    };
    let (slot, like_child) = match like {
        Value::Array(items) => {
            let Ok(i) = part.parse::<usize>() else { return };
            if !out.is_array() {
                *out = Value::Array(Vec::new());
            }
            let a = out.as_array_mut().expect("made an array");
            if a.len() <= i {
                a.resize(i + 1, Value::Null);
            }
            (&mut a[i], items.get(i))
        }
        _ => {
            if !out.is_object() {
                *out = Value::Object(serde_json::Map::new());
            }
            let m = out.as_object_mut().expect("made an object");
            (m.entry(part).or_insert(Value::Null), like.get(part))
        }
    };
    match (rest, like_child) {
        (None, _) => *slot = v,
        (Some(r), Some(l)) => put(slot, l, r, v),
        (Some(_), None) => {}
    }
}

fn arm(input: &Input) -> Arm {
    Arm {
        label: input.scenario_name.to_owned(),
        kind: ArmKind::Replicated,
        scenario: input.scenario_name.to_owned(),
        scenario_sha256: Some(input.scenario_sha256.to_owned()),
        mmsim_version: None,
        world: None,
        runs: input
            .seeds
            .iter()
            .zip(input.summaries)
            .zip(input.wait_quantiles)
            .map(|((&seed, s), q)| SeedRun {
                seed,
                summary: s.clone(),
                wait_quantiles: q.clone(),
            })
            .collect(),
    }
}

/// The plots (PNG and SVG) and `report.html`, in a fixed order.
pub fn artifacts(input: &Input) -> anyhow::Result<Vec<Artifact>> {
    let arms = [arm(input)];
    let plots: Vec<Plot> = [
        compare::cdf_spec(&arms, "wait_cdf_band"),
        compare::decile_spec(&arms, "wait_by_decile_band"),
    ]
    .into_iter()
    .flatten()
    .map(|s| chart::render(&s))
    .collect::<anyhow::Result<_>>()?;
    let mut out: Vec<Artifact> = chart::plot_artifacts(&plots).collect();
    out.push(Artifact {
        name: "report.html".into(),
        bytes: html(input, &arms[0], &plots).into_bytes(),
    });
    Ok(out)
}

/// Per-seed columns of the seeds table.
const SEED_COLUMNS: [&str; 6] = [
    "wait_s.p50",
    "wait_s.p90",
    "abandon_rate",
    "matches",
    "spread_rating.mean",
    "win_prob_gap.mean",
];

fn html(input: &Input, arm: &Arm, plots: &[Plot]) -> String {
    let mut h = String::new();
    let title = format!(
        "{} — {} seeds ({})",
        input.scenario_name,
        input.seeds.len(),
        compare::seeds_text(input.seeds)
    );
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>\n\
body{{font-family:\"DejaVu Sans\",sans-serif;max-width:1360px;margin:1em auto;padding:0 12px;color:#212121;font-size:14px}}\n\
h1{{font-size:22px;margin:.3em 0}}h2{{font-size:18px;margin:.8em 0 .3em}}\n\
table{{border-collapse:collapse;font-size:13px}}th,td{{border:1px solid #ddd;padding:3px 7px;text-align:right}}\n\
th{{background:#f4f4f4}}td.l,th.l{{text-align:left}}\n\
.grid{{display:grid;grid-template-columns:1fr 1fr;gap:12px}}figure{{margin:0}}img{{width:100%;height:auto}}\n\
figcaption,small{{color:#555;font-size:12px}}pre{{background:#f7f7f7;padding:8px;overflow-x:auto}}\n\
</style>\n</head>\n<body>\n<h1>{}</h1>\n",
        esc(&title),
        esc(&title)
    );
    let _ = writeln!(
        h,
        "<p>One scenario run on {} seeds; every figure is the mean over the seeds with its 95% Student-t interval in brackets, warm-up excluded. \
The interval says how far the mean could move with other seeds; it is not the spread of waits within a run. scenario_sha256 <code>{}</code>.</p>",
        input.seeds.len(),
        esc(&input.scenario_sha256[..input.scenario_sha256.len().min(12)])
    );
    h.push_str("<table>\n<tr><th class=\"l\">metric</th><th>mean [95% interval]</th><th class=\"l\">unit</th><th class=\"l\">meaning</th></tr>\n");
    for d in METRICS.iter().filter(|d| arm.has(d.key)) {
        let xs: Vec<f64> = arm.values(d.key).into_iter().map(|x| x.1).collect();
        let meaning = mmsim_core::metrics::summary::meaning(d.key.split('.').next().unwrap_or(""))
            .unwrap_or("");
        let _ = writeln!(
            h,
            "<tr><td class=\"l\">{}</td><td>{}</td><td class=\"l\">{}</td><td class=\"l\"><small>{}</small></td></tr>",
            esc(d.key),
            esc(&compare::ci_text(&compare::arm_ci(d, &xs))),
            esc(d.unit),
            esc(meaning)
        );
    }
    h.push_str("</table>\n");
    plot_grid(&mut h, plots);
    h.push_str("<h2>Each seed</h2>\n<table>\n<tr><th>seed</th>");
    for c in SEED_COLUMNS {
        let _ = write!(h, "<th>{}</th>", esc(c));
    }
    h.push_str("</tr>\n");
    for (seed, s) in input.seeds.iter().zip(input.summaries) {
        let _ = write!(h, "<tr><td>{seed}</td>");
        for c in SEED_COLUMNS {
            let v = metric(s, c).map_or_else(|| "-".into(), |x| number::sig(x, 4));
            let _ = write!(h, "<td>{}</td>", esc(&v));
        }
        h.push_str("</tr>\n");
    }
    let _ = write!(
        h,
        "</table>\n<p><small>Each seed's summary.json and wait_quantiles.json are under <code>replications/seed-K/</code>; <code>mmsim compare</code> pairs two replicated runs seed by seed.</small></p>\n<h2>Scenario</h2>\n<pre>{}</pre>\n</body>\n</html>\n",
        esc(input.scenario_toml)
    );
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_page_shows_intervals_bands_and_each_seed() {
        let seeds = [1u64, 2, 3];
        let summaries: Vec<Value> = (0..3)
            .map(|i| {
                json!({"wait_s": {"p50": 10.0 + i as f64, "p90": 30.0}, "matches": 100 + i,
                       "wait_s_by_skill_decile": (0..10).map(|d| json!({"p50": d as f64 + i as f64})).collect::<Vec<_>>()})
            })
            .collect();
        let q: Vec<Option<Vec<f64>>> = (0..3)
            .map(|i| {
                compare::read_wait_quantiles(&json!({"steps": compare::QUANTILE_STEPS,
                       "wait_s": (0..=compare::QUANTILE_STEPS).map(|k| (k + i) as f64 * 0.2).collect::<Vec<_>>()}))
            })
            .collect();
        let input = Input {
            scenario_name: "t",
            scenario_toml: "[run]\nname = \"t\"\n",
            seeds: &seeds,
            summaries: &summaries,
            wait_quantiles: &q,
            scenario_sha256: "abcdef0123456789",
        };
        let a = artifacts(&input).unwrap();
        assert_eq!(a, artifacts(&input).unwrap());
        let names: Vec<&str> = a.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "plots/wait_cdf_band.png",
                "plots/wait_cdf_band.svg",
                "plots/wait_by_decile_band.png",
                "plots/wait_by_decile_band.svg",
                "report.html"
            ]
        );
        let page = String::from_utf8(a[4].bytes.clone()).unwrap();
        // p50 10, 11, 12: mean 11, t(2) 4.303 * 1 / sqrt 3 = 2.484.
        assert!(page.contains("11 [8.516, 13.48]"), "{page}");
        assert!(page.contains("<td>3</td><td>12</td>"));
        let svg = String::from_utf8(a[1].bytes.clone()).unwrap();
        assert!(svg.contains("<polygon"), "the CDF has its band");
    }

    #[test]
    fn slim_summaries_make_the_same_page() {
        let (text, scenario) = mmsim_scenario::run::short_smoke();
        let seeds = [11u64, 12, 13];
        let runs: Vec<_> = seeds
            .iter()
            .map(|&s| mmsim_scenario::run::run_summary(&scenario, s, &mut |_, _| {}))
            .collect();
        let whole: Vec<Value> = runs.iter().map(|r| r.summary.to_value()).collect();
        let slims: Vec<Value> = whole.iter().map(slim).collect();
        let q: Vec<Option<Vec<f64>>> = runs
            .iter()
            .map(|r| compare::read_wait_quantiles(&compare::wait_quantiles_json(&r.view.waits)))
            .collect();
        let input = |summaries| Input {
            scenario_name: "smoke",
            scenario_toml: &text,
            seeds: &seeds,
            summaries,
            wait_quantiles: &q,
            scenario_sha256: "abcdef0123456789",
        };
        let a = artifacts(&input(&whole)).unwrap();
        let b = artifacts(&input(&slims)).unwrap();
        assert_eq!(a, b);
        let page = String::from_utf8(a.last().unwrap().bytes.clone()).unwrap();
        assert!(page.contains("wait_s_by_skill_decile") || page.contains("decile"));
        // Much smaller than the whole summary, or there was no point.
        let size = |v: &Value| serde_json::to_string(v).unwrap().len();
        assert!(
            size(&slims[0]) * 5 < size(&whole[0]),
            "{} vs {}",
            size(&slims[0]),
            size(&whole[0])
        );
    }
}
