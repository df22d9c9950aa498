//! `report.html`: one self-contained page per run that opens from disk with no
//! server or network (plots inline as PNG data URIs, CSS inline). The summary
//! is rendered from the JSON's shape rather than a fixed list of keys, so a new
//! metric appears in the report without touching this file.

use super::plots::Plot;
use super::ReportInput;
use serde_json::{Map, Value};
use std::fmt::Write as _;

/// Keys of an object that make it a distribution summary (one row of a table).
const STAT_KEYS: &[&str] = &[
    "n",
    "count",
    "mean",
    "sd",
    "std",
    "min",
    "p10",
    "p25",
    "p50",
    "p75",
    "p90",
    "p95",
    "p99",
    "max",
    "ci95",
    "ci95_low",
    "ci95_high",
    "lo",
    "hi",
];

/// Plain-words meanings of the summary keys the engine is known to write.
/// Keys not listed still appear, with a meaning guessed from their unit suffix.
const MEANINGS: &[(&str, &str)] = &[
    ("tickets", "tickets enqueued after warm-up"),
    ("matches", "matches formed after warm-up"),
    ("abandoned", "tickets that ran out of patience and left"),
    ("abandon_rate", "abandoned tickets / tickets"),
    ("matches_per_h", "matches formed per simulated hour"),
    ("wait_s", "wait in queue before a match (s)"),
    (
        "spread_rating",
        "highest minus lowest rating in a match (rating points)",
    ),
    (
        "team_rating_gap",
        "gap between team mean ratings (rating points)",
    ),
    ("win_prob_gap", "|P(team 0 wins) - 0.5| on true skill"),
    (
        "upset_rate",
        "share of finished matches the true favourite lost",
    ),
    (
        "rematch_rate",
        "share of matches repeating a previous pairing",
    ),
    (
        "rating_skill_rank_corr",
        "Spearman correlation of rating and true skill at the end",
    ),
    ("brier", "Brier score of the rating system's predictions"),
];

/// The page, as a string. Deterministic: same input and plots, same bytes.
pub fn report_html(input: &ReportInput, plots: &[Plot]) -> String {
    let mut h =
        String::with_capacity(64 * 1024 + plots.iter().map(|p| p.png.len() * 4 / 3).sum::<usize>());
    let name = esc(input.scenario_name);
    let r = input.records;
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>mmsim report: {name}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<main>\n\
         <header>\n<h1>{name}</h1>\n<p class=\"meta\">seed <b>{seed}</b> · simulated <b>{dur}</b> · \
         warm-up <b>{warm}</b> · {t} tickets, {m} matches, {q} queue samples recorded (warm-up included)</p>\n\
         <nav><a href=\"#summary\">Summary</a> <a href=\"#plots\">Plots</a> \
         <a href=\"#scenario\">Scenario</a> <a href=\"#files\">Files</a></nav>\n</header>\n",
        seed = input.seed,
        dur = human_duration(input.duration_s),
        warm = human_duration(input.warmup_s),
        t = r.tickets.len(),
        m = r.matches.len(),
        q = r.queue.len(),
    );

    h.push_str("<section id=\"summary\">\n<h2>Summary</h2>\n");
    h.push_str(
        "<p class=\"note\">From <code>summary.json</code>: tickets and matches after warm-up.</p>\n",
    );
    summary_tables(&mut h, input.summary);
    h.push_str("</section>\n");

    h.push_str("<section id=\"plots\">\n<h2>Plots</h2>\n");
    if plots.is_empty() {
        h.push_str("<p class=\"note\">The run has no data to plot.</p>\n");
    }
    for p in plots {
        let _ = write!(
            h,
            "<figure id=\"{id}\">\n\
             <img src=\"data:image/png;base64,{data}\" width=\"{w}\" height=\"{hgt}\" alt=\"{title}\">\n\
             <figcaption>{caption} <a class=\"file\" href=\"plots/{id}.svg\">SVG</a> \
             <a class=\"file\" href=\"plots/{id}.png\">PNG</a></figcaption>\n</figure>\n",
            id = p.name,
            title = esc(&p.title),
            data = base64(&p.png),
            w = super::plots::SIZE.0,
            hgt = super::plots::SIZE.1,
            caption = esc(&p.caption),
        );
    }
    h.push_str("</section>\n");

    let _ = write!(
        h,
        "<section id=\"scenario\">\n<h2>Scenario</h2>\n<pre>{}</pre>\n</section>\n",
        esc(input.scenario_toml)
    );
    let _ = write!(
        h,
        "<section id=\"files\">\n<h2>Files</h2>\n<p class=\"note\">Beside this page in the run's folder \
         (column meanings in <code>COLUMNS.md</code> beside them):</p>\n<table>\n<thead><tr><th>file</th><th>rows</th><th>one row per</th></tr></thead>\n<tbody>\n\
         <tr><td><code>tickets.parquet</code></td><td class=\"num\">{}</td><td>ticket (a party's stay in the queue)</td></tr>\n\
         <tr><td><code>matches.parquet</code></td><td class=\"num\">{}</td><td>match</td></tr>\n\
         <tr><td><code>queue.parquet</code></td><td class=\"num\">{}</td><td>queue sample</td></tr>\n\
         </tbody>\n</table>\n</section>\n",
        r.tickets.len(),
        r.matches.len(),
        r.queue.len()
    );
    h.push_str("<footer>Generated by mmsim. Plot text is set in DejaVu Sans, embedded in mmsim.</footer>\n</main>\n</body>\n</html>\n");
    h
}

/// Renders the summary by shape: top-level scalars in one table, distribution
/// objects (mean/p50/...) as rows of a wait table and a quality table, arrays
/// of objects as their own table, and anything deeper flattened to dotted keys.
fn summary_tables(h: &mut String, summary: &Value) {
    let Some(obj) = summary.as_object() else {
        let _ = writeln!(h, "<pre>{}</pre>", esc(&summary.to_string()));
        return;
    };
    let scalars: Vec<(&String, &Value)> = obj.iter().filter(|(_, v)| is_scalar(v)).collect();
    let dists: Vec<(&String, &Map<String, Value>)> = obj
        .iter()
        .filter_map(|(k, v)| v.as_object().filter(|o| is_distribution(o)).map(|o| (k, o)))
        .collect();
    let (wait, quality): (Vec<_>, Vec<_>) =
        dists.into_iter().partition(|(k, _)| k.starts_with("wait"));

    if !scalars.is_empty() {
        h.push_str("<h3>Headline figures</h3>\n<table>\n<thead><tr><th>metric</th><th>value</th><th>meaning</th></tr></thead>\n<tbody>\n");
        for (k, v) in scalars {
            let _ = writeln!(
                h,
                "<tr><td><code>{}</code></td><td class=\"num\">{}</td><td>{}</td></tr>",
                esc(k),
                fmt_value(v),
                esc(&meaning(k))
            );
        }
        h.push_str("</tbody>\n</table>\n");
    }
    distribution_table(h, "Wait", &wait);
    for (k, v) in obj {
        if k.starts_with("wait") {
            if let Some(rows) = object_rows(v) {
                rows_table(h, k, &rows);
            }
        }
    }
    distribution_table(h, "Match quality and other distributions", &quality);
    for (k, v) in obj {
        if is_scalar(v)
            || v.as_object().is_some_and(is_distribution)
            || (k.starts_with("wait") && object_rows(v).is_some())
        {
            continue;
        }
        if let Some(rows) = object_rows(v) {
            rows_table(h, k, &rows);
        } else {
            let mut flat = Vec::new();
            flatten(k, v, &mut flat);
            let _ = write!(
                h,
                "<h3><code>{}</code></h3>\n<p class=\"note\">{}</p>\n<table>\n<thead><tr><th>key</th><th>value</th></tr></thead>\n<tbody>\n",
                esc(k),
                esc(&meaning(k))
            );
            for (fk, fv) in flat {
                let _ = writeln!(
                    h,
                    "<tr><td><code>{}</code></td><td class=\"num\">{}</td></tr>",
                    esc(&fk),
                    fmt_value(fv)
                );
            }
            h.push_str("</tbody>\n</table>\n");
        }
    }
}

fn distribution_table(h: &mut String, title: &str, rows: &[(&String, &Map<String, Value>)]) {
    if rows.is_empty() {
        return;
    }
    let cols = union_keys(rows.iter().map(|r| r.1));
    let _ = write!(
        h,
        "<h3>{}</h3>\n<table>\n<thead><tr><th>metric</th>",
        esc(title)
    );
    for c in &cols {
        let _ = write!(h, "<th>{}</th>", esc(c));
    }
    h.push_str("<th>meaning</th></tr></thead>\n<tbody>\n");
    for (k, o) in rows {
        let _ = write!(h, "<tr><td><code>{}</code></td>", esc(k));
        for c in &cols {
            let _ = write!(
                h,
                "<td class=\"num\">{}</td>",
                o.get(c).map_or("–".into(), fmt_value)
            );
        }
        let _ = writeln!(h, "<td>{}</td></tr>", esc(&meaning(k)));
    }
    h.push_str("</tbody>\n</table>\n");
}

/// An array whose items are all flat objects: one table row per item.
fn object_rows(v: &Value) -> Option<Vec<&Map<String, Value>>> {
    let a = v.as_array()?;
    if a.is_empty() {
        return None;
    }
    a.iter()
        .map(|x| x.as_object().filter(|o| o.values().all(is_scalar)))
        .collect()
}

fn rows_table(h: &mut String, key: &str, rows: &[&Map<String, Value>]) {
    let mut cols = union_keys(rows.iter().copied());
    // Decile arrays are numbered from 1 (lowest skill), as people count deciles.
    let (head, base) = if key.contains("decile") {
        ("decile", 1)
    } else {
        ("#", 0)
    };
    // The row number already is that column.
    cols.retain(|c| c != head);
    let _ = write!(
        h,
        "<h3><code>{}</code></h3>\n<p class=\"note\">{}</p>\n<table>\n<thead><tr><th>{head}</th>",
        esc(key),
        esc(&meaning(key))
    );
    for c in &cols {
        let _ = write!(h, "<th>{}</th>", esc(c));
    }
    h.push_str("</tr></thead>\n<tbody>\n");
    for (i, o) in rows.iter().enumerate() {
        let _ = write!(h, "<tr><td class=\"num\">{}</td>", i + base);
        for c in &cols {
            let _ = write!(
                h,
                "<td class=\"num\">{}</td>",
                o.get(c).map_or("–".into(), fmt_value)
            );
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</tbody>\n</table>\n");
}

fn union_keys<'a>(objs: impl Iterator<Item = &'a Map<String, Value>>) -> Vec<String> {
    let mut cols: Vec<String> = Vec::new();
    for o in objs {
        for k in o.keys() {
            if !cols.contains(k) {
                cols.push(k.clone());
            }
        }
    }
    cols
}

fn flatten<'a>(prefix: &str, v: &'a Value, out: &mut Vec<(String, &'a Value)>) {
    match v {
        Value::Object(o) if !o.is_empty() => {
            for (k, x) in o {
                flatten(&format!("{prefix}.{k}"), x, out);
            }
        }
        Value::Array(a) if !is_scalar(v) => {
            for (i, x) in a.iter().enumerate() {
                flatten(&format!("{prefix}[{i}]"), x, out);
            }
        }
        _ => out.push((prefix.to_string(), v)),
    }
}

/// Numbers, strings, booleans, null, and short arrays of numbers (an interval).
fn is_scalar(v: &Value) -> bool {
    match v {
        Value::Array(a) => a.len() <= 4 && a.iter().all(|x| x.is_number() || x.is_null()),
        Value::Object(_) => false,
        _ => true,
    }
}

fn is_distribution(o: &Map<String, Value>) -> bool {
    !o.is_empty()
        && o.iter()
            .all(|(k, v)| STAT_KEYS.contains(&k.as_str()) && is_scalar(v))
}

fn meaning(key: &str) -> String {
    if let Some((_, m)) = MEANINGS.iter().find(|(k, _)| *k == key) {
        return (*m).to_string();
    }
    if key.starts_with("wait_s_by_skill_decile") {
        return "wait (s) of matched tickets, by decile of true skill (1 = lowest)".into();
    }
    let unit = [
        ("_pct", "in percent"),
        ("_pp", "in percentage points"),
        ("_rate", "a share between 0 and 1"),
        ("_s", "in seconds"),
        ("_rating", "in rating points"),
        ("_per_h", "per simulated hour"),
        ("_per_min", "per simulated minute"),
    ]
    .iter()
    .find(|(suffix, _)| key.ends_with(suffix));
    unit.map_or(String::new(), |(_, u)| (*u).to_string())
}

fn fmt_value(v: &Value) -> String {
    match v {
        Value::Null => "–".into(),
        Value::Bool(b) => b.to_string(),
        Value::String(s) => esc(s),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.to_string()
            } else if let Some(u) = n.as_u64() {
                u.to_string()
            } else {
                fmt_float(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(fmt_value).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(_) => esc(&v.to_string()),
    }
}

/// Enough digits to compare runs by eye, never float noise like 0.30000000000000004.
fn fmt_float(x: f64) -> String {
    if !x.is_finite() {
        return x.to_string();
    }
    let a = x.abs();
    let decimals = if a >= 1000.0 {
        1
    } else if a >= 1.0 {
        3
    } else {
        4
    };
    let mut s = format!("{x:.decimals$}");
    if s.contains('.') {
        s = s.trim_end_matches('0').trim_end_matches('.').to_string();
    }
    if s == "-0" {
        s = "0".into();
    }
    s
}

fn human_duration(s: f64) -> String {
    if s >= 3600.0 && (s / 3600.0).fract() == 0.0 {
        format!("{} h", s / 3600.0)
    } else if s >= 60.0 && (s / 60.0).fract() == 0.0 {
        format!("{} min", s / 60.0)
    } else {
        format!("{} s", fmt_float(s))
    }
}

pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// Standard base64 with padding; small enough not to need a dependency.
pub fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        out.push(A[(n >> 18) as usize & 63] as char);
        out.push(A[(n >> 12) as usize & 63] as char);
        out.push(if chunk.len() > 1 {
            A[(n >> 6) as usize & 63] as char
        } else {
            '='
        });
        out.push(if chunk.len() > 2 {
            A[n as usize & 63] as char
        } else {
            '='
        });
    }
    out
}

const CSS: &str = "
:root{--ink:#212121;--muted:#5f6368;--line:#e0e0e0;--accent:#0072b2;--bg:#fafafa}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--ink);font:15px/1.5 'DejaVu Sans',system-ui,-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif}
main{max-width:1040px;margin:0 auto;padding:24px 28px 48px;background:#fff;min-height:100vh;box-shadow:0 0 0 1px var(--line)}
h1{font-size:28px;margin:8px 0 4px}
h2{font-size:21px;margin:36px 0 12px;padding-bottom:6px;border-bottom:2px solid var(--accent)}
h3{font-size:16px;margin:22px 0 8px}
.meta{color:var(--muted);margin:0 0 10px}
nav a{margin-right:16px;color:var(--accent);text-decoration:none;font-weight:600}
nav a:hover,a.file:hover{text-decoration:underline}
.note{color:var(--muted);margin:4px 0 8px;font-size:14px}
table{border-collapse:collapse;margin:6px 0 14px;font-size:14px}
th,td{padding:5px 12px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
th{background:#f1f3f4;font-weight:600}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tbody tr:nth-child(even){background:#fcfcfc}
code{font-family:'DejaVu Sans Mono',ui-monospace,Menlo,Consolas,monospace;font-size:13px}
figure{margin:18px 0 30px}
figure img{display:block;max-width:100%;height:auto;border:1px solid var(--line)}
figcaption{color:var(--muted);font-size:14px;margin-top:6px;max-width:960px}
a.file{color:var(--accent);font-size:13px;margin-left:6px}
pre{background:#f6f8fa;border:1px solid var(--line);padding:12px 14px;overflow:auto;font-size:13px;line-height:1.45}
footer{margin-top:40px;color:var(--muted);font-size:13px}
";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{plots, testdata};

    fn input<'a>(r: &'a crate::metrics::RunRecords, s: &'a Value) -> ReportInput<'a> {
        ReportInput {
            scenario_name: "test-run",
            scenario_toml: testdata::TOML,
            seed: 7,
            records: r,
            summary: s,
            warmup_s: 30.0,
            duration_s: 300.0,
        }
    }

    #[test]
    fn page_holds_every_plot_inline_and_nothing_from_the_network() {
        let r = testdata::team_run();
        let s = testdata::summary();
        let inp = input(&r, &s);
        let ps = plots::run_plots(&inp).unwrap();
        let page = report_html(&inp, &ps);
        assert!(!ps.is_empty());
        for p in &ps {
            assert!(
                page.contains(&format!("data:image/png;base64,{}", base64(&p.png))),
                "{}",
                p.name
            );
            assert!(page.contains(&esc(&p.caption)));
        }
        assert_eq!(page.matches("<img ").count(), ps.len());
        assert!(!page.contains("http://") && !page.contains("https://"));
        assert!(!page.contains("<script"));
    }

    #[test]
    fn scenario_text_is_escaped_and_every_summary_key_appears() {
        let r = testdata::team_run();
        let s = testdata::summary();
        let page = report_html(&input(&r, &s), &[]);
        assert!(page.contains("name = &quot;test &lt;&amp;&gt; run&quot;"));
        assert!(!page.contains("test <&> run"));
        for k in s.as_object().unwrap().keys() {
            assert!(page.contains(&format!("<code>{k}</code>")), "{k}");
        }
        // The decile table numbers its rows 1 to 10.
        assert!(page.contains("<th>decile</th>"));
        assert!(page.contains("<tr><td class=\"num\">10</td>"));
        // A key the report has never heard of still shows, flattened.
        let mut s2 = s.clone();
        s2["new_metric"] = serde_json::json!({"deep": {"x_s": 1.5}});
        let page = report_html(&input(&r, &s2), &[]);
        assert!(page.contains("<code>new_metric.deep.x_s</code></td><td class=\"num\">1.5</td>"));
    }

    #[test]
    fn same_input_gives_the_same_page() {
        let r = testdata::team_run();
        let s = testdata::summary();
        let inp = input(&r, &s);
        let a = report_html(&inp, &plots::run_plots(&inp).unwrap());
        let b = report_html(&inp, &plots::run_plots(&inp).unwrap());
        assert_eq!(a, b);
    }

    #[test]
    fn base64_matches_the_rfc_examples() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn numbers_print_without_float_noise() {
        assert_eq!(fmt_value(&serde_json::json!(0.1 + 0.2)), "0.3");
        assert_eq!(fmt_value(&serde_json::json!(42)), "42");
        assert_eq!(fmt_value(&serde_json::json!(1234.56)), "1234.6");
        assert_eq!(human_duration(86400.0), "24 h");
        assert_eq!(human_duration(90.0), "90 s");
    }
}
