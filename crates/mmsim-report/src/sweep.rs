//! A sweep's files: one row per setting and seed in `sweep.parquet` (so
//! paired differences between settings can be taken seed by seed), one row
//! per setting with means and 95% intervals in `sweep.csv`, each key metric
//! against the swept key with error bars, the Pareto plot of two metrics,
//! and a `report.html`. Pure functions of the sweep table, so a whole sweep
//! and its merged shards give the same bytes.

use crate::artifact::Artifact;
use crate::chart::{
    self, BandChart, BandPoint, BandSeries, Chart, Plot, ScatterPoint, Spec, PALETTE,
};
use crate::compare;
use crate::number;
use crate::page::{base64, esc};
use crate::tables::parquet_bytes;
use mmsim_tune::stats::pareto_front;
use mmsim_tune::SweepTable;
use polars::prelude::*;
use serde_json::Value;
use std::fmt::Write as _;

/// Stem of the Pareto plot's files under `plots/`.
pub const PLOT_NAME: &str = "sweep-pareto";

/// Which settings lie on the front of the two plotted metrics' means.
pub fn front(table: &SweepTable) -> Vec<bool> {
    let idx = |m: &str| table.metrics.iter().position(|x| x == m);
    let (ix, iy) = (idx(&table.plot[0]), idx(&table.plot[1]));
    let points: Vec<_> = table
        .rows
        .iter()
        .map(|r| {
            (
                ix.and_then(|i| r.stats[i].mean),
                iy.and_then(|i| r.stats[i].mean),
            )
        })
        .collect();
    pareto_front(&points)
}

/// The per-setting table (`sweep.csv`): `setting`, `name`, the swept keys, `seeds`, each
/// metric's mean (and `.ci95_low`/`.ci95_high` with two seeds or more), `pareto`.
pub fn sweep_frame(table: &SweepTable) -> anyhow::Result<DataFrame> {
    let rows = &table.rows;
    let mut cols: Vec<Column> = vec![
        Column::new(
            "setting".into(),
            rows.iter().map(|r| r.setting as u32).collect::<Vec<_>>(),
        ),
        Column::new(
            "name".into(),
            rows.iter().map(|r| r.name.clone()).collect::<Vec<_>>(),
        ),
    ];
    for (k, key) in table.keys.iter().enumerate() {
        cols.push(key_column(key, rows.iter().map(|r| &r.values[k]).collect()));
    }
    cols.push(Column::new(
        "seeds".into(),
        vec![table.seeds.len() as u32; rows.len()],
    ));
    let with_ci = table.seeds.len() > 1;
    for (m, name) in table.metrics.iter().enumerate() {
        let get = |f: fn(&mmsim_tune::Ci) -> Option<f64>| -> Vec<Option<f64>> {
            rows.iter().map(|r| f(&r.stats[m])).collect()
        };
        cols.push(Column::new(name.as_str().into(), get(|c| c.mean)));
        if with_ci {
            cols.push(Column::new(
                format!("{name}.ci95_low").into(),
                get(|c| c.ci95_low),
            ));
            cols.push(Column::new(
                format!("{name}.ci95_high").into(),
                get(|c| c.ci95_high),
            ));
        }
    }
    cols.push(Column::new("pareto".into(), front(table)));
    let cols = cols
        .into_iter()
        .map(|c| {
            // Pin the types of all-null columns, which polars would otherwise guess.
            if c.dtype() == &DataType::Null {
                c.cast(&DataType::Float64)
            } else {
                Ok(c)
            }
        })
        .collect::<PolarsResult<Vec<_>>>()?;
    Ok(DataFrame::new(rows.len(), cols)?)
}

pub fn csv_bytes(df: &mut DataFrame) -> anyhow::Result<Vec<u8>> {
    let mut buf = Vec::new();
    CsvWriter::new(&mut buf).include_header(true).finish(df)?;
    Ok(buf)
}

/// The per-seed table (`sweep.parquet`): one row per setting and seed with
/// `setting`, `name`, the swept keys, `seed`, the setting's
/// `scenario_sha256`, `mmsim_version`, then each metric's value on that seed.
pub fn seed_frame(table: &SweepTable, mmsim_version: &str) -> anyhow::Result<DataFrame> {
    let n_seeds = table.seeds.len();
    let rows: Vec<(&mmsim_tune::sweep::SweepRow, usize)> = table
        .rows
        .iter()
        .flat_map(|r| (0..n_seeds).map(move |s| (r, s)))
        .collect();
    let mut cols: Vec<Column> = vec![
        Column::new(
            "setting".into(),
            rows.iter()
                .map(|(r, _)| r.setting as u32)
                .collect::<Vec<_>>(),
        ),
        Column::new(
            "name".into(),
            rows.iter().map(|(r, _)| r.name.clone()).collect::<Vec<_>>(),
        ),
    ];
    for (k, key) in table.keys.iter().enumerate() {
        cols.push(key_column(
            key,
            rows.iter().map(|(r, _)| &r.values[k]).collect(),
        ));
    }
    cols.push(Column::new(
        "seed".into(),
        rows.iter()
            .map(|(_, s)| table.seeds[*s])
            .collect::<Vec<u64>>(),
    ));
    cols.push(Column::new(
        "scenario_sha256".into(),
        rows.iter()
            .map(|(r, _)| r.scenario_sha256.clone())
            .collect::<Vec<_>>(),
    ));
    cols.push(Column::new(
        "mmsim_version".into(),
        vec![mmsim_version.to_string(); rows.len()],
    ));
    for (m, name) in table.metrics.iter().enumerate() {
        let xs: Vec<Option<f64>> = rows
            .iter()
            .map(|(r, s)| r.per_seed.get(*s).and_then(|v| v.get(m).copied().flatten()))
            .collect();
        cols.push(Column::new(name.as_str().into(), xs));
    }
    let cols = cols
        .into_iter()
        .map(|c| {
            if c.dtype() == &DataType::Null {
                c.cast(&DataType::Float64)
            } else {
                Ok(c)
            }
        })
        .collect::<PolarsResult<Vec<_>>>()?;
    Ok(DataFrame::new(rows.len(), cols)?)
}

/// A swept key's column: numbers stay numbers; a key swept over text (or mixed) is text.
fn key_column(key: &str, values: Vec<&Value>) -> Column {
    if values.iter().all(|v| v.is_number() || v.is_null()) {
        let xs: Vec<Option<f64>> = values.iter().map(|v| v.as_f64()).collect();
        Column::new(key.into(), xs)
    } else {
        let xs: Vec<Option<String>> = values
            .iter()
            .map(|v| match v {
                Value::Null => None,
                Value::String(s) => Some(s.clone()),
                other => Some(other.to_string()),
            })
            .collect();
        Column::new(key.into(), xs)
    }
}

/// One row of `sweep.parquet` read back.
#[derive(Clone, Debug, PartialEq)]
pub struct SeedRow {
    pub setting: u32,
    pub name: String,
    pub seed: u64,
    pub scenario_sha256: String,
    pub mmsim_version: String,
    /// (metric, value) for every metric column.
    pub metrics: Vec<(String, Option<f64>)>,
}

/// Reads `sweep.parquet`'s rows; `keys` are the swept keys' columns, which
/// are settings, not metrics.
pub fn read_seed_rows(bytes: &[u8], keys: &[String]) -> anyhow::Result<Vec<SeedRow>> {
    let df = ParquetReader::new(std::io::Cursor::new(bytes)).finish()?;
    let fixed = [
        "setting",
        "name",
        "seed",
        "scenario_sha256",
        "mmsim_version",
    ];
    let setting = df.column("setting")?.cast(&DataType::UInt32)?;
    let setting = setting.u32()?;
    let name = df.column("name")?.str()?.clone();
    let seed = df.column("seed")?.cast(&DataType::UInt64)?;
    let seed = seed.u64()?;
    let hash = df.column("scenario_sha256")?.str()?.clone();
    let version = df.column("mmsim_version")?.str()?.clone();
    let mut metric_cols = Vec::new();
    for c in df.columns() {
        let n = c.name().as_str();
        if fixed.contains(&n) || keys.iter().any(|k| k == n) {
            continue;
        }
        metric_cols.push((n.to_string(), c.cast(&DataType::Float64)?));
    }
    let mut out = Vec::with_capacity(df.height());
    for i in 0..df.height() {
        let mut metrics = Vec::with_capacity(metric_cols.len());
        for (n, c) in &metric_cols {
            metrics.push((n.clone(), c.f64()?.get(i)));
        }
        out.push(SeedRow {
            setting: setting.get(i).unwrap_or_default(),
            name: name.get(i).unwrap_or_default().to_string(),
            seed: seed.get(i).unwrap_or_default(),
            scenario_sha256: hash.get(i).unwrap_or_default().to_string(),
            mmsim_version: version.get(i).unwrap_or_default().to_string(),
            metrics,
        });
    }
    Ok(out)
}

/// Every file of a finished sweep, in a fixed order.
pub fn sweep_artifacts(table: &SweepTable, mmsim_version: &str) -> anyhow::Result<Vec<Artifact>> {
    let mut df = sweep_frame(table)?;
    let mut seeds = seed_frame(table, mmsim_version)?;
    let mut out = vec![
        Artifact {
            name: "sweep.parquet".into(),
            bytes: parquet_bytes(&mut seeds)?,
        },
        Artifact {
            name: "sweep.csv".into(),
            bytes: csv_bytes(&mut df)?,
        },
    ];
    let mut plots = vec![chart::render(&pareto_spec(table))?];
    for spec in metric_specs(table) {
        plots.push(chart::render(&spec)?);
    }
    out.extend(chart::plot_artifacts(&plots));
    out.push(Artifact {
        name: "report.html".into(),
        bytes: sweep_html(table, &plots).into_bytes(),
    });
    Ok(out)
}

/// The key metrics drawn against the swept key, with their plots' file stems.
const METRIC_PLOTS: [(&str, &str); 4] = [
    ("wait_s.p90", "sweep-wait_s.p90"),
    ("abandon_rate", "sweep-abandon_rate"),
    ("spread_rating.mean", "sweep-spread_rating.mean"),
    ("matches", "sweep-matches"),
];

/// A metric's name with its unit, for an axis.
fn metric_axis(m: &str) -> String {
    match compare::metric_unit(m) {
        Some(u) => format!("{m} ({u})"),
        None => m.to_string(),
    }
}

/// A swept key's name with its unit, for an axis: from the suffix the
/// schema's names carry (`_s`, `_per_s`) or, for the rating windows of
/// the policies, rating points.
pub fn key_axis(key: &str) -> String {
    let last = key.rsplit('.').next().unwrap_or(key);
    let unit = if key.starts_with("arrivals.") && last == "rate_per_s" {
        Some("tickets per s")
    } else if key.starts_with("policy.") && last.ends_with("rate_per_s") {
        Some("rating points per s")
    } else if last.ends_with("_per_s") {
        Some("per s")
    } else if last.ends_with("_s") {
        Some("s")
    } else if key == "population.size" {
        Some("players")
    } else if key.starts_with("policy.")
        && ["limit", "base", "max", "min", "window", "width", "initial"]
            .iter()
            .any(|w| last == *w || last.starts_with(&format!("{w}_")))
    {
        Some("rating points")
    } else if last.ends_with("_prob") || last.ends_with("_share") {
        Some("share")
    } else {
        None
    };
    match unit {
        Some(u) => format!("{key} ({u})"),
        None => key.to_string(),
    }
}

/// Each key metric against the first numeric swept key, one series per
/// combination of the other keys, error bars the 95% interval over seeds.
/// Without a numeric key, settings are categories.
fn metric_specs(table: &SweepTable) -> Vec<Spec> {
    let numeric = table
        .keys
        .iter()
        .position(|_| true)
        .filter(|&k| table.rows.iter().all(|r| r.values[k].is_number()));
    METRIC_PLOTS
        .iter()
        .filter_map(|&(m, stem)| {
            let mi = table.metrics.iter().position(|x| x == m)?;
            let point = |r: &mmsim_tune::sweep::SweepRow, x: f64| {
                let c = compare::shown(m, r.stats[mi].clone());
                Some((x, c.mean?, c.ci95_low.zip(c.ci95_high)))
            };
            let (chart, x_desc) = match numeric {
                Some(k) => {
                    // Series by the other keys' values, in first-seen order.
                    let mut groups: Vec<(String, Vec<BandPoint>)> = Vec::new();
                    for r in &table.rows {
                        let label = table
                            .keys
                            .iter()
                            .enumerate()
                            .filter(|(j, _)| *j != k)
                            .map(|(j, key)| {
                                format!(
                                    "{}={}",
                                    key.rsplit('.').next().unwrap_or(key),
                                    value_text(&r.values[j])
                                )
                            })
                            .collect::<Vec<_>>()
                            .join(" ");
                        let Some(p) = point(r, r.values[k].as_f64()?) else {
                            continue;
                        };
                        match groups.iter_mut().find(|g| g.0 == label) {
                            Some(g) => g.1.push(p),
                            None => groups.push((label, vec![p])),
                        }
                    }
                    let series = groups
                        .into_iter()
                        .enumerate()
                        .map(|(i, (label, points))| BandSeries {
                            label: if label.is_empty() {
                                "mean over seeds".into()
                            } else {
                                label
                            },
                            color: PALETTE[i % PALETTE.len()],
                            points,
                        })
                        .collect();
                    (BandChart::Points { series }, key_axis(&table.keys[k]))
                }
                None => (
                    BandChart::Bars {
                        categories: table.rows.iter().map(|r| r.setting.to_string()).collect(),
                        series: vec![BandSeries {
                            label: "mean over seeds".into(),
                            color: PALETTE[0],
                            points: table
                                .rows
                                .iter()
                                .enumerate()
                                .filter_map(|(i, r)| point(r, i as f64))
                                .collect(),
                        }],
                    },
                    "setting (numbered as in the table)".to_string(),
                ),
            };
            Some(Spec {
                name: stem,
                title: format!("{m} by setting"),
                caption: format!(
                    "{m}: the mean over {} per setting; {}",
                    plural_seeds(table.seeds.len()),
                    if table.seeds.len() > 1 {
                        "error bars are 95% Student-t intervals over the seeds."
                    } else {
                        "one seed, so no error bars: differences may be seed noise."
                    }
                ),
                x_desc,
                y_desc: metric_axis(m),
                chart: Chart::Seeds(chart),
            })
        })
        .collect()
}

fn plural_seeds(n: usize) -> String {
    if n == 1 {
        "one seed".into()
    } else {
        format!("{n} seeds")
    }
}

fn pareto_spec(table: &SweepTable) -> Spec {
    let on = front(table);
    let idx = |m: &str| table.metrics.iter().position(|x| x == m);
    let (ix, iy) = (idx(&table.plot[0]), idx(&table.plot[1]));
    let points = table
        .rows
        .iter()
        .zip(&on)
        .filter_map(|(r, &front)| {
            let ci = |c: &mmsim_tune::Ci| c.ci95_low.zip(c.ci95_high);
            Some(ScatterPoint {
                x: r.stats[ix?].mean?,
                y: r.stats[iy?].mean?,
                label: r.name.clone(),
                front,
                x_ci: ci(&r.stats[ix?]),
                y_ci: ci(&r.stats[iy?]),
            })
        })
        .collect();
    Spec {
        name: PLOT_NAME,
        title: format!("{}: {} against {}", table.scenario, table.plot[1], table.plot[0]),
        caption: format!(
            "One point per setting: the mean over {} seed(s) ({}), with grey bars for each mean's 95% interval over the seeds (none with one seed): settings whose bars overlap may not differ beyond seed noise. Both metrics are minimised; the settings joined by the orange-red line form the Pareto front, where neither can improve without the other getting worse.",
            table.seeds.len(),
            seeds_text(&table.seeds)
        ),
        x_desc: metric_axis(&table.plot[0]),
        y_desc: metric_axis(&table.plot[1]),
        chart: Chart::Scatter {
            points,
            front_label: "Pareto front".into(),
        },
    }
}

fn seeds_text(seeds: &[u64]) -> String {
    match seeds {
        [] => String::new(),
        [one] => format!("seed {one}"),
        [first, .., last] => format!("seeds {first}..{last}"),
    }
}

fn cell(c: &mmsim_tune::Ci, with_ci: bool) -> String {
    let Some(m) = c.mean else {
        return "–".into();
    };
    match (with_ci, c.ci95_low, c.ci95_high) {
        (true, Some(lo), Some(hi)) => format!(
            "{}<br><small>[{}, {}]</small>",
            number::tick(m),
            number::tick(lo),
            number::tick(hi)
        ),
        _ => number::tick(m),
    }
}

fn value_text(v: &Value) -> String {
    match v {
        Value::Null => "–".into(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn sweep_html(table: &SweepTable, plots: &[Plot]) -> String {
    let on = front(table);
    let with_ci = table.seeds.len() > 1;
    let mut h = String::new();
    let title = format!("{} — sweep", table.scenario);
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>\nbody{{font-family:\"DejaVu Sans\",sans-serif;max-width:1360px;margin:1em auto;padding:0 12px;color:#212121;font-size:14px}}\nh1{{font-size:22px;margin:.3em 0}}\n.wide{{overflow-x:auto;max-width:100%}}\ntable{{border-collapse:collapse;font-size:12px}}\nth,td{{border:1px solid #ddd;padding:3px 6px;text-align:right}}\nth{{background:#f4f4f4;overflow-wrap:anywhere;max-width:110px}}\ntr.front td{{background:#fdeee6}}\n.grid{{display:grid;grid-template-columns:1fr 1fr;gap:12px}}\nfigure{{margin:0}}\nimg{{width:100%;height:auto}}\nfigcaption,small{{color:#555;font-size:12px}}\n</style>\n</head>\n<body>\n<h1>{}</h1>\n",
        esc(&title),
        esc(&title)
    );
    let _ = writeln!(
        h,
        "<p>{} settings, each run on the same {} ({}): common random numbers, so differences between settings are paired. Figures are means over the seeds{}. Rows on the Pareto front of <code>{}</code> and <code>{}</code> (both minimised) are shaded. A lower bound below 0 of a figure that cannot be negative is shown as 0 (<code>sweep.csv</code> keeps the t interval as computed).</p>",
        table.rows.len(),
        if table.seeds.len() == 1 { "seed".to_string() } else { format!("{} seeds", table.seeds.len()) },
        esc(&seeds_text(&table.seeds)),
        if with_ci { ", with 95% Student-t intervals below" } else { "" },
        esc(&table.plot[0]),
        esc(&table.plot[1])
    );
    h.push_str("<div class=\"grid\">\n");
    for plot in plots {
        let _ = write!(
            h,
            "<figure>\n<img alt=\"{}\" src=\"data:image/png;base64,{}\">\n<figcaption>{}</figcaption>\n</figure>\n",
            esc(&plot.title),
            base64(&plot.png),
            esc(&plot.caption)
        );
    }
    h.push_str("</div>\n<div class=\"wide\"><table>\n<tr><th>setting</th><th>name</th>");
    for k in &table.keys {
        let _ = write!(h, "<th>{}</th>", esc(&key_axis(k)));
    }
    for m in &table.metrics {
        let _ = write!(h, "<th>{}</th>", esc(&metric_axis(m)));
    }
    h.push_str("<th>Pareto</th></tr>\n");
    for (r, &f) in table.rows.iter().zip(&on) {
        let _ = write!(
            h,
            "<tr{}><td>{}</td><td>{}</td>",
            if f { " class=\"front\"" } else { "" },
            r.setting,
            esc(&r.name)
        );
        for v in &r.values {
            let _ = write!(h, "<td>{}</td>", esc(&value_text(v)));
        }
        for (c, m) in r.stats.iter().zip(&table.metrics) {
            let c = compare::shown(m, c.clone());
            let _ = write!(h, "<td>{}</td>", cell(&c, with_ci));
        }
        let _ = writeln!(h, "<td>{}</td></tr>", if f { "yes" } else { "" });
    }
    h.push_str("</table></div>\n<p>The same rows are in <code>sweep.csv</code>; <code>sweep.parquet</code> holds one row per setting and seed (with each setting's <code>scenario_sha256</code>), for paired differences between settings: <code>mmsim compare</code> reads it.</p>\n</body>\n</html>\n");
    h
}

/// The table printed after a sweep: each setting's plotted metrics, front marked.
pub fn render_text(table: &SweepTable) -> String {
    let on = front(table);
    let idx = |m: &str| table.metrics.iter().position(|x| x == m);
    let (ix, iy) = (idx(&table.plot[0]), idx(&table.plot[1]));
    let show = |i: Option<usize>, r: &mmsim_tune::sweep::SweepRow| -> String {
        i.map_or_else(
            || "-".into(),
            |i| compare::ci_text(&compare::shown(&table.metrics[i], r.stats[i].clone())),
        )
    };
    let mut out = format!(
        "{:<28} {:>28} {:>28}  front\n",
        "setting", table.plot[0], table.plot[1]
    );
    for (r, &f) in table.rows.iter().zip(&on) {
        out.push_str(&format!(
            "{:<28} {:>28} {:>28}  {}\n",
            format!("{} {}", r.setting, r.name),
            show(ix, r),
            show(iy, r),
            if f { "*" } else { "" }
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use mmsim_tune::ci95;
    use mmsim_tune::sweep::SweepRow;

    fn table() -> SweepTable {
        let row = |i: usize, rate: f64, p90: [f64; 2], spread: [f64; 2]| SweepRow {
            setting: i,
            name: format!("rate_per_s={rate}"),
            values: vec![Value::from(rate)],
            stats: vec![ci95(&p90), ci95(&spread)],
            scenario_sha256: format!("hash-{i}"),
            per_seed: vec![
                vec![Some(p90[0]), Some(spread[0])],
                vec![Some(p90[1]), Some(spread[1])],
            ],
        };
        SweepTable {
            scenario: "t".into(),
            settings_total: 3,
            seeds: vec![1, 2],
            keys: vec!["policy.rate_per_s".into()],
            metrics: vec!["wait_s.p90".into(), "spread_rating.mean".into()],
            plot: ["wait_s.p90".into(), "spread_rating.mean".into()],
            shard: None,
            rows: vec![
                row(0, 1.0, [100.0, 110.0], [50.0, 52.0]),
                row(1, 2.0, [120.0, 130.0], [60.0, 60.0]),
                row(2, 5.0, [40.0, 44.0], [90.0, 94.0]),
            ],
        }
    }

    #[test]
    fn the_csv_has_keys_means_intervals_and_the_front() {
        let t = table();
        assert_eq!(front(&t), [true, false, true]);
        let csv = String::from_utf8(csv_bytes(&mut sweep_frame(&t).unwrap()).unwrap()).unwrap();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(
            lines[0],
            "setting,name,policy.rate_per_s,seeds,wait_s.p90,wait_s.p90.ci95_low,wait_s.p90.ci95_high,spread_rating.mean,spread_rating.mean.ci95_low,spread_rating.mean.ci95_high,pareto"
        );
        assert!(
            lines[1].starts_with("0,rate_per_s=1,1.0,2,105.0,"),
            "{}",
            lines[1]
        );
        assert!(lines[2].ends_with(",60.0,60.0,60.0,false"), "{}", lines[2]);
        assert!(lines[3].ends_with("true"), "{}", lines[3]);
    }

    /// Issue 31: the Pareto plot showed means alone, so a front made of
    /// noise looked as firm as a real one. Each point carries its metrics'
    /// intervals, and the drawing shows them as bars.
    #[test]
    fn the_pareto_points_carry_their_intervals_and_the_svg_draws_them() {
        let t = table();
        let spec = pareto_spec(&t);
        let Chart::Scatter { points, .. } = &spec.chart else {
            panic!("a scatter");
        };
        let first = &points[0];
        let (p90, spread) = (&t.rows[0].stats[0], &t.rows[0].stats[1]);
        assert_eq!(
            first.x_ci,
            Some((p90.ci95_low.unwrap(), p90.ci95_high.unwrap()))
        );
        assert_eq!(
            first.y_ci,
            Some((spread.ci95_low.unwrap(), spread.ci95_high.unwrap()))
        );
        assert!(first.x_ci.unwrap().0 < 100.0 && first.x_ci.unwrap().1 > 110.0);
        // Setting 1 has no spread between its seeds: a zero-width bar.
        assert_eq!(points[1].y_ci, Some((60.0, 60.0)));
        assert!(spec.caption.contains("95% interval"), "{}", spec.caption);
        let svg = chart::render(&spec).unwrap().svg;
        assert!(
            svg.contains("stroke=\"#969696\""),
            "no interval bar in the SVG"
        );
    }

    #[test]
    fn the_artifacts_are_the_same_bytes_every_time() {
        let a = sweep_artifacts(&table(), "9.9.9").unwrap();
        let names: Vec<&str> = a.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "sweep.parquet",
                "sweep.csv",
                "plots/sweep-pareto.png",
                "plots/sweep-pareto.svg",
                "plots/sweep-wait_s.p90.png",
                "plots/sweep-wait_s.p90.svg",
                "plots/sweep-spread_rating.mean.png",
                "plots/sweep-spread_rating.mean.svg",
                "report.html"
            ]
        );
        assert_eq!(a, sweep_artifacts(&table(), "9.9.9").unwrap());
        let html = String::from_utf8(a.last().unwrap().bytes.clone()).unwrap();
        assert!(html.contains("class=\"front\"") && html.contains("rate_per_s=5"));
        // Axes and headers carry units: the swept key and the metrics.
        assert!(
            html.contains("policy.rate_per_s (rating points per s)"),
            "{html}"
        );
        assert!(html.contains("wait_s.p90 (s)"));
        let svg = String::from_utf8(a[5].bytes.clone()).unwrap();
        assert!(svg.contains("policy.rate_per_s (rating points per s)"));
    }

    #[test]
    fn the_parquet_keeps_a_row_per_setting_and_seed_for_paired_differences() {
        let a = sweep_artifacts(&table(), "9.9.9").unwrap();
        let rows = read_seed_rows(&a[0].bytes, &["policy.rate_per_s".to_string()]).unwrap();
        assert_eq!(rows.len(), 6);
        assert_eq!((rows[0].setting, rows[0].seed), (0, 1));
        assert_eq!((rows[5].setting, rows[5].seed), (2, 2));
        assert_eq!(rows[2].scenario_sha256, "hash-1");
        assert_eq!(rows[2].mmsim_version, "9.9.9");
        assert_eq!(
            rows[0]
                .metrics
                .iter()
                .map(|m| m.0.as_str())
                .collect::<Vec<_>>(),
            ["wait_s.p90", "spread_rating.mean"]
        );
        // Setting 2 against setting 0, seed by seed: 40-100 and 44-110.
        let p90 = |setting: u32, seed: u64| {
            rows.iter()
                .find(|r| r.setting == setting && r.seed == seed)
                .unwrap()
                .metrics[0]
                .1
                .unwrap()
        };
        let d: Vec<f64> = [1, 2].iter().map(|&s| p90(2, s) - p90(0, s)).collect();
        assert_eq!(d, [-60.0, -66.0]);
        let c = ci95(&d);
        assert_eq!(c.mean, Some(-63.0));
        // t(1) = 12.706 times sd 4.243 / sqrt 2.
        assert!((c.ci95_high.unwrap() - (-63.0 + 12.7062 * 3.0)).abs() < 1e-3);
    }

    #[test]
    fn swept_keys_and_metrics_are_named_with_units() {
        assert_eq!(
            key_axis("arrivals.rate_per_s"),
            "arrivals.rate_per_s (tickets per s)"
        );
        assert_eq!(key_axis("policy.limit"), "policy.limit (rating points)");
        assert_eq!(key_axis("policy.kind"), "policy.kind");
        assert_eq!(metric_axis("abandon_rate"), "abandon_rate (share)");
    }
}
