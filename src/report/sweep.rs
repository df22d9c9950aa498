//! A sweep's files: one row per setting as Parquet and CSV, the plot of two
//! metrics per setting with the Pareto front marked, and a `report.html`.
//! Pure functions of the sweep table, so a whole sweep and its merged
//! shards give the same bytes.

use super::html::{base64, esc};
use super::plots::{self, fmt_num, Chart, ScatterPoint, Spec};
use super::{tables::parquet_bytes, Artifact};
use crate::tune::stats::pareto_front;
use crate::tune::SweepTable;
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

/// The table as a frame: `setting`, `name`, the swept keys, `seeds`, each
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
        let values: Vec<&Value> = rows.iter().map(|r| &r.values[k]).collect();
        // Numbers stay numbers; a key swept over text (or mixed) is text.
        if values.iter().all(|v| v.is_number() || v.is_null()) {
            let xs: Vec<Option<f64>> = values.iter().map(|v| v.as_f64()).collect();
            cols.push(Column::new(key.as_str().into(), xs));
        } else {
            let xs: Vec<Option<String>> = values
                .iter()
                .map(|v| match v {
                    Value::Null => None,
                    Value::String(s) => Some(s.clone()),
                    other => Some(other.to_string()),
                })
                .collect();
            cols.push(Column::new(key.as_str().into(), xs));
        }
    }
    cols.push(Column::new(
        "seeds".into(),
        vec![table.seeds.len() as u32; rows.len()],
    ));
    let with_ci = table.seeds.len() > 1;
    for (m, name) in table.metrics.iter().enumerate() {
        let get = |f: fn(&crate::tune::Ci) -> Option<f64>| -> Vec<Option<f64>> {
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

/// Every file of a finished sweep, in a fixed order.
pub fn sweep_artifacts(table: &SweepTable) -> anyhow::Result<Vec<Artifact>> {
    let mut df = sweep_frame(table)?;
    let mut out = vec![
        Artifact {
            name: "sweep.parquet".into(),
            bytes: parquet_bytes(&mut df)?,
        },
        Artifact {
            name: "sweep.csv".into(),
            bytes: csv_bytes(&mut df)?,
        },
    ];
    let plot = plots::render(&pareto_spec(table))?;
    out.push(Artifact {
        name: format!("{}/{}.png", plots::PLOT_DIR, plot.name),
        bytes: plot.png.clone(),
    });
    out.push(Artifact {
        name: format!("{}/{}.svg", plots::PLOT_DIR, plot.name),
        bytes: plot.svg.clone().into_bytes(),
    });
    out.push(Artifact {
        name: "report.html".into(),
        bytes: sweep_html(table, &plot).into_bytes(),
    });
    Ok(out)
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
            Some(ScatterPoint {
                x: r.stats[ix?].mean?,
                y: r.stats[iy?].mean?,
                label: r.name.clone(),
                front,
            })
        })
        .collect();
    Spec {
        name: PLOT_NAME,
        title: format!("{}: {} against {}", table.scenario, table.plot[1], table.plot[0]),
        caption: format!(
            "One point per setting: the mean over {} seed(s) ({}). Both metrics are minimised; the settings joined in red form the Pareto front, where neither can improve without the other getting worse.",
            table.seeds.len(),
            seeds_text(&table.seeds)
        ),
        x_desc: table.plot[0].clone(),
        y_desc: table.plot[1].clone(),
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

fn cell(c: &crate::tune::Ci, with_ci: bool) -> String {
    let Some(m) = c.mean else {
        return "–".into();
    };
    match (with_ci, c.ci95_low, c.ci95_high) {
        (true, Some(lo), Some(hi)) => format!(
            "{}<br><small>[{}, {}]</small>",
            fmt_num(m),
            fmt_num(lo),
            fmt_num(hi)
        ),
        _ => fmt_num(m),
    }
}

fn value_text(v: &Value) -> String {
    match v {
        Value::Null => "–".into(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn sweep_html(table: &SweepTable, plot: &plots::Plot) -> String {
    let on = front(table);
    let with_ci = table.seeds.len() > 1;
    let mut h = String::new();
    let title = format!("{} — sweep", table.scenario);
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>\nbody{{font-family:\"DejaVu Sans\",sans-serif;max-width:1100px;margin:2em auto;color:#212121}}\ntable{{border-collapse:collapse;font-size:14px}}\nth,td{{border:1px solid #ddd;padding:4px 8px;text-align:right}}\nth{{background:#f4f4f4}}\ntr.front td{{background:#fdeee6}}\nimg{{max-width:100%}}\nsmall{{color:#666}}\n</style>\n</head>\n<body>\n<h1>{}</h1>\n",
        esc(&title),
        esc(&title)
    );
    let _ = writeln!(
        h,
        "<p>{} settings, each run on the same {} ({}): common random numbers, so differences between settings are paired. Figures are means over the seeds{}. Rows on the Pareto front of <code>{}</code> and <code>{}</code> (both minimised) are shaded.</p>",
        table.rows.len(),
        if table.seeds.len() == 1 { "seed".to_string() } else { format!("{} seeds", table.seeds.len()) },
        esc(&seeds_text(&table.seeds)),
        if with_ci { ", with 95% Student-t intervals below" } else { "" },
        esc(&table.plot[0]),
        esc(&table.plot[1])
    );
    let _ = write!(
        h,
        "<figure>\n<img alt=\"{}\" src=\"data:image/png;base64,{}\">\n<figcaption>{}</figcaption>\n</figure>\n",
        esc(&plot.title),
        base64(&plot.png),
        esc(&plot.caption)
    );
    h.push_str("<table>\n<tr><th>setting</th><th>name</th>");
    for k in &table.keys {
        let _ = write!(h, "<th>{}</th>", esc(k));
    }
    for m in &table.metrics {
        let _ = write!(h, "<th>{}</th>", esc(m));
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
        for c in &r.stats {
            let _ = write!(h, "<td>{}</td>", cell(c, with_ci));
        }
        let _ = writeln!(h, "<td>{}</td></tr>", if f { "yes" } else { "" });
    }
    h.push_str("</table>\n<p>The same rows are in <code>sweep.csv</code> and <code>sweep.parquet</code>.</p>\n</body>\n</html>\n");
    h
}

/// The table printed after a sweep: each setting's plotted metrics, front marked.
pub fn render_text(table: &SweepTable) -> String {
    let on = front(table);
    let idx = |m: &str| table.metrics.iter().position(|x| x == m);
    let (ix, iy) = (idx(&table.plot[0]), idx(&table.plot[1]));
    let show = |i: Option<usize>, r: &crate::tune::sweep::SweepRow| -> String {
        i.map_or_else(|| "-".into(), |i| super::text::ci(&r.stats[i]))
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
    use crate::tune::ci95;
    use crate::tune::sweep::SweepRow;

    fn table() -> SweepTable {
        let row = |i: usize, rate: f64, p90: [f64; 2], spread: [f64; 2]| SweepRow {
            setting: i,
            name: format!("rate_per_s={rate}"),
            values: vec![Value::from(rate)],
            stats: vec![ci95(&p90), ci95(&spread)],
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

    #[test]
    fn the_artifacts_are_the_same_bytes_every_time() {
        let a = sweep_artifacts(&table()).unwrap();
        let names: Vec<&str> = a.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "sweep.parquet",
                "sweep.csv",
                "plots/sweep-pareto.png",
                "plots/sweep-pareto.svg",
                "report.html"
            ]
        );
        assert_eq!(a, sweep_artifacts(&table()).unwrap());
        let html = String::from_utf8(a[4].bytes.clone()).unwrap();
        assert!(html.contains("class=\"front\"") && html.contains("rate_per_s=5"));
    }
}
