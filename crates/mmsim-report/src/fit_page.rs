//! `mmsim fit`'s outputs as bytes: fit.json, and fit.html with each fitted
//! quantity drawn against the log (the Kaplan-Meier curve against the three
//! fitted survival curves, hourly arrivals with their intervals against the
//! profile) and, with `--check`, the log's waits against the simulated
//! ones. Plots are the run report's own (embedded font, SVG and PNG).

use crate::artifact::Artifact;
use crate::chart::{self, Chart, Plot, Series, Spec, BLUE, GREEN, INK, ORANGE, VERMILLION};
use crate::page::esc;
use mmsim_fit::check::HourCheck;
use mmsim_fit::survival::Estimate;
use mmsim_fit::Fit;

/// What `--check` adds: the comparison by hour and both wait CDFs.
pub struct CheckView<'a> {
    pub hours: &'a [HourCheck],
    /// (wait_s, cumulative share) of matched tickets, log then simulation.
    pub log_cdf: Vec<(f64, f64)>,
    pub sim_cdf: Vec<(f64, f64)>,
    pub rules: String,
}

/// The empirical CDF of `xs`, at most 300 points.
pub fn cdf(xs: &[f64]) -> Vec<(f64, f64)> {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return Vec::new();
    }
    let step = (n / 300).max(1);
    let mut out: Vec<(f64, f64)> = (0..n)
        .step_by(step)
        .map(|i| (v[i], (i + 1) as f64 / n as f64))
        .collect();
    out.push((v[n - 1], 1.0));
    out
}

fn patience_spec(fit: &Fit) -> Option<Spec> {
    let km = &fit.patience.kaplan_meier;
    let t_max = km.last()?.t_s.max(1.0);
    // Steps: each Kaplan-Meier value holds until the next abandon.
    let mut stepped = vec![(0.0, 1.0)];
    let mut s = 1.0;
    for k in km {
        stepped.push((k.t_s, s));
        stepped.push((k.t_s, k.survival));
        s = k.survival;
    }
    let mut series = Vec::new();
    let colours = [BLUE, ORANGE, GREEN];
    for (f, c) in fit.patience.comparison.fits.iter().zip(colours) {
        series.push(Series {
            label: format!("{} (ΔAIC {:.1})", f.family.name(), f.delta_aic),
            color: c,
            points: (0..=200)
                .map(|i| {
                    let t = t_max * i as f64 / 200.0;
                    (t, f.survival(t))
                })
                .collect(),
        });
    }
    // Drawn last, on top of the fitted curves it is judged against.
    series.push(Series {
        label: "Kaplan-Meier (the log)".into(),
        color: INK,
        points: stepped,
    });
    let y_min = km.iter().map(|k| k.survival).fold(1.0, f64::min);
    Some(Spec {
        name: "fit-patience",
        title: "Patience: share of tickets not yet abandoned, by wait".into(),
        caption: "Kaplan-Meier curve of the log's waits (abandons are events, matched and waiting tickets censored) against the exponential, Weibull and log-normal fitted by maximum likelihood.".into(),
        x_desc: "wait (s)".into(),
        y_desc: "survival".into(),
        chart: Chart::Lines {
            series,
            x_range: (0.0, t_max),
            y_range: ((y_min - 0.05).max(0.0), 1.0),
            markers: Vec::new(),
            shade: None,
        },
    })
}

fn arrivals_spec(fit: &Fit) -> Option<Spec> {
    let a = &fit.arrivals;
    let band: Vec<(f64, f64, f64)> = a
        .hours
        .iter()
        .filter_map(|h| {
            h.rate_per_s
                .map(|r| (h.hour as f64 + 0.5, r.lo * 3600.0, r.hi * 3600.0))
        })
        .collect();
    if band.is_empty() {
        return None;
    }
    let profile: Vec<f64> = a.daily_profile.clone().unwrap_or_else(|| vec![1.0; 24]);
    let line = Series {
        label: "fitted rate (rate_per_s × daily_profile)".into(),
        color: BLUE,
        points: (0..24)
            .map(|h| (h as f64 + 0.5, a.rate_per_s.value * profile[h] * 3600.0))
            .collect(),
    };
    let top = band
        .iter()
        .map(|b| b.2)
        .fold(0.0, f64::max)
        .max(line.points.iter().map(|p| p.1).fold(0.0, f64::max));
    Some(Spec {
        name: "fit-arrivals",
        title: "Fresh parties per hour, by hour of the day".into(),
        caption: "The band is each hour's exact Poisson 95% interval from the log; the line is the fitted scenario's rate.".into(),
        x_desc: "hour of the day".into(),
        y_desc: "parties per hour".into(),
        chart: Chart::Band {
            line,
            band,
            band_label: "log, 95% interval".into(),
            x_range: (0.0, 24.0),
            y_range: (0.0, top * 1.1),
            shade: None,
        },
    })
}

fn ratings_spec(fit: &Fit) -> Option<Spec> {
    use statrs::distribution::{ContinuousCDF, Normal};
    let r = fit.ratings.as_ref()?;
    let normal = Normal::new(r.mean.value, r.sd.value).ok()?;
    let (lo, hi) = (
        r.mean.value - 3.5 * r.sd.value,
        r.mean.value + 3.5 * r.sd.value,
    );
    Some(Spec {
        name: "fit-ratings",
        title: "Players' first ratings: the quantiles against a normal".into(),
        caption: "The empirical quantiles the scenario's skill prior takes (points joined), against the normal with the ratings' mean and sd.".into(),
        x_desc: "rating".into(),
        y_desc: "share of players below".into(),
        chart: Chart::Lines {
            series: vec![
                Series {
                    label: format!("normal (mean {:.0}, sd {:.0})", r.mean.value, r.sd.value),
                    color: BLUE,
                    points: (0..=200)
                        .map(|i| {
                            let x = lo + (hi - lo) * i as f64 / 200.0;
                            (x, normal.cdf(x))
                        })
                        .collect(),
                },
                Series {
                    label: format!("the log's quantiles ({} players)", r.players),
                    color: INK,
                    points: r.quantiles.iter().map(|q| (q[1], q[0])).collect(),
                },
            ],
            x_range: (lo, hi),
            y_range: (0.0, 1.0),
            markers: Vec::new(),
            shade: None,
        },
    })
}

fn check_spec(c: &CheckView) -> Option<Spec> {
    if c.log_cdf.is_empty() || c.sim_cdf.is_empty() {
        return None;
    }
    let x1 = c.log_cdf.last()?.0.max(c.sim_cdf.last()?.0).max(1.0);
    Some(Spec {
        name: "fit-check-waits",
        title: "Waits of matched tickets: the log against the fitted model".into(),
        caption: format!("Cumulative share of matched tickets by wait, the log's and a run of the fitted scenario under {}.", c.rules),
        x_desc: "wait (s)".into(),
        y_desc: "share matched within".into(),
        chart: Chart::Lines {
            series: vec![
                Series { label: "log".into(), color: INK, points: c.log_cdf.clone() },
                Series { label: "fitted model".into(), color: VERMILLION, points: c.sim_cdf.clone() },
            ],
            x_range: (0.0, x1),
            y_range: (0.0, 1.0),
            markers: Vec::new(),
            shade: None,
        },
    })
}

fn check_hours_spec(c: &CheckView) -> Option<Spec> {
    let hours: Vec<&HourCheck> = c.hours.iter().filter(|h| h.hour.is_some()).collect();
    if hours.is_empty() {
        return None;
    }
    let bars = |label: &str, color, f: &dyn Fn(&HourCheck) -> f64| Series {
        label: label.into(),
        color,
        points: hours
            .iter()
            .enumerate()
            .map(|(i, h)| (i as f64, f(h)))
            .collect(),
    };
    Some(Spec {
        name: "fit-check-ks",
        title: "Kolmogorov-Smirnov distance of the waits, hour by hour".into(),
        caption: "The log's waits of matched tickets against the fitted model's, beside the distance between two seeds of the model (what chance alone gives), per hour of the day.".into(),
        x_desc: "hour of the day".into(),
        y_desc: "KS distance".into(),
        chart: Chart::Bars {
            categories: hours.iter().map(|h| format!("{:02}", h.hour.unwrap_or(0))).collect(),
            series: vec![
                bars("log against the model", VERMILLION, &|h| h.ks_wait),
                bars("two seeds of the model", BLUE, &|h| h.ks_between_seeds),
            ],
        },
    })
}

fn est(e: &Estimate, d: usize) -> String {
    format!(
        "{:.*} <small>[{:.*}, {:.*}]</small>",
        d, e.value, d, e.lo, d, e.hi
    )
}

fn page(fit: &Fit, plots: &[Plot], check: Option<&CheckView>, scenario_toml: &str) -> String {
    let mut h = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>mmsim fit</title>\n<style>\n\
body{font-family:\"DejaVu Sans\",sans-serif;max-width:1100px;margin:1em auto;padding:0 12px;color:#212121;font-size:14px}\n\
h1{font-size:22px}h2{font-size:17px;margin-top:1.4em}\ntable{border-collapse:collapse;font-size:12px;margin:.5em 0}\n\
th,td{border:1px solid #ddd;padding:3px 6px;text-align:right}th{background:#f4f4f4}td.l,th.l{text-align:left}\n\
.bad{background:#fdeee6}svg{width:100%;height:auto}figcaption,small{color:#555;font-size:12px}pre{background:#f7f7f7;padding:8px;overflow-x:auto;font-size:12px}\n\
</style>\n</head>\n<body>\n<h1>mmsim fit</h1>\n",
    );
    h.push_str(&format!(
        "<p>{} tickets over {:.1} h; {} fresh parties, {} returns after a match.</p>\n",
        fit.tickets,
        fit.log_end_s / 3600.0,
        fit.arrivals.fresh_tickets,
        fit.tickets - fit.arrivals.fresh_tickets
    ));
    if !fit.notes.is_empty() {
        h.push_str("<h2>What the log was too short for</h2>\n<ul>\n");
        for n in &fit.notes {
            h.push_str(&format!(
                "<li><code>{}</code>: {}</li>\n",
                esc(&n.quantity),
                esc(&n.message)
            ));
        }
        h.push_str("</ul>\n");
    }
    let figure = |h: &mut String, name: &str| {
        if let Some(p) = plots.iter().find(|p| p.name == name) {
            h.push_str(&format!(
                "<figure>{}<figcaption>{}</figcaption></figure>\n",
                p.svg
                    .trim_start_matches(|c| c != '<')
                    .split_once("?>")
                    .map_or(p.svg.as_str(), |(_, s)| s),
                esc(&p.caption)
            ));
        }
    };
    h.push_str("<h2>Patience</h2>\n");
    figure(&mut h, "fit-patience");
    h.push_str("<table><tr><th class=\"l\">family</th><th>log-likelihood</th><th>AIC</th><th>ΔAIC</th><th class=\"l\">parameters (95% interval)</th></tr>\n");
    for f in &fit.patience.comparison.fits {
        let params: Vec<String> = f
            .params
            .iter()
            .map(|(n, e)| format!("{n} {}", est(e, 3)))
            .collect();
        h.push_str(&format!(
            "<tr><td class=\"l\">{}</td><td>{:.1}</td><td>{:.1}</td><td>{:.1}</td><td class=\"l\">{}</td></tr>\n",
            f.family.name(), f.log_likelihood, f.aic, f.delta_aic, params.join("; ")
        ));
    }
    for (f, why) in &fit.patience.comparison.not_fitted {
        h.push_str(&format!(
            "<tr><td class=\"l\">{}</td><td colspan=\"4\" class=\"l\">not fitted: {}</td></tr>\n",
            f.name(),
            esc(why)
        ));
    }
    h.push_str("</table>\n<h2>Arrivals</h2>\n");
    figure(&mut h, "fit-arrivals");
    h.push_str(&format!(
        "<p>rate_per_s {}</p>\n",
        est(&fit.arrivals.rate_per_s, 5)
    ));
    h.push_str("<table><tr><th>party size</th><th>tickets</th><th>share (95%)</th></tr>\n");
    for p in &fit.party_sizes {
        h.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td></tr>\n",
            p.size,
            p.tickets,
            est(&p.share, 4)
        ));
    }
    h.push_str("</table>\n<h2>Returns, ratings, population</h2>\n<table>\n");
    let r = &fit.returns;
    h.push_str(&format!(
        "<tr><th class=\"l\">requeue_prob</th><td class=\"l\">{} ({} of {} matched tickets; {})</td></tr>\n",
        r.requeue_prob.map_or("not fitted".into(), |p| est(&p, 4)),
        r.returned,
        r.matched_eligible,
        esc(&r.recognised_by)
    ));
    h.push_str(&format!(
        "<tr><th class=\"l\">think time (s)</th><td class=\"l\">{} (from the {})</td></tr>\n",
        r.think_s.map_or("not fitted".into(), |p| est(&p, 1)),
        r.measured_from.replace('_', " ")
    ));
    if let Some(q) = &fit.ratings {
        h.push_str(&format!(
            "<tr><th class=\"l\">ratings</th><td class=\"l\">{} players, mean {}, sd {}</td></tr>\n",
            q.players,
            est(&q.mean, 1),
            est(&q.sd, 1)
        ));
    }
    h.push_str(&format!(
        "<tr><th class=\"l\">population</th><td class=\"l\">{}{} ({})</td></tr>\n</table>\n",
        fit.population.size,
        match fit.population.interval {
            Some((lo, Some(hi))) => format!(" [{lo:.0}, {hi:.0}]"),
            Some((lo, None)) => format!(" [{lo:.0}, ∞)"),
            None => String::new(),
        },
        esc(&fit.population.how)
    ));
    figure(&mut h, "fit-ratings");
    for (title, shares) in [
        ("Home regions", &fit.regions),
        ("Main roles", &fit.main_roles),
    ] {
        if shares.is_empty() {
            continue;
        }
        h.push_str(&format!("<h2>{title}</h2>\n<table><tr><th class=\"l\">name</th><th>players</th><th>share (95%)</th></tr>\n"));
        for s in shares {
            h.push_str(&format!(
                "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td></tr>\n",
                esc(&s.name),
                s.players,
                est(&s.share, 3)
            ));
        }
        h.push_str("</table>\n");
    }
    if let Some(c) = check {
        h.push_str("<h2>Check: the fitted model against the log</h2>\n");
        figure(&mut h, "fit-check-waits");
        figure(&mut h, "fit-check-ks");
        h.push_str("<table><tr><th>hour</th><th>log tickets</th><th>simulated</th><th>KS distance (waits)</th><th>two seeds of the model</th><th>5% critical</th><th>abandon log</th><th>abandon simulated</th><th class=\"l\">verdict</th></tr>\n");
        for x in c.hours {
            let bad = if x.verdict == "fits" {
                ""
            } else {
                " class=\"bad\""
            };
            h.push_str(&format!(
                "<tr{bad}><td>{}</td><td>{}</td><td>{}</td><td>{:.3}</td><td>{:.3}</td><td>{:.3}</td><td>{:.2}%</td><td>{:.2}%</td><td class=\"l\">{}</td></tr>\n",
                x.hour.map_or("all".into(), |h| format!("{h:02}h")),
                x.log_tickets, x.sim_tickets, x.ks_wait, x.ks_between_seeds, x.ks_critical,
                100.0 * x.log_abandon, 100.0 * x.sim_abandon, esc(&x.verdict)
            ));
        }
        h.push_str("</table>\n");
    }
    h.push_str(&format!(
        "<h2>scenario.toml</h2>\n<pre>{}</pre>\n</body>\n</html>\n",
        esc(scenario_toml)
    ));
    h
}

/// fit.json, fit.html and the plots' SVG files.
pub fn artifacts(
    fit: &Fit,
    check: Option<&CheckView>,
    check_json: Option<serde_json::Value>,
    scenario_toml: &str,
) -> anyhow::Result<Vec<Artifact>> {
    let specs: Vec<Spec> = [
        patience_spec(fit),
        arrivals_spec(fit),
        ratings_spec(fit),
        check.and_then(check_spec),
        check.and_then(check_hours_spec),
    ]
    .into_iter()
    .flatten()
    .collect();
    let rendered: Vec<Plot> = specs
        .iter()
        .map(chart::render)
        .collect::<anyhow::Result<_>>()?;
    let mut out: Vec<Artifact> = rendered
        .iter()
        .map(|p| Artifact {
            name: format!("{}/{}.svg", chart::PLOT_DIR, p.name),
            bytes: p.svg.clone().into_bytes(),
        })
        .collect();
    let mut json = serde_json::to_value(fit)?;
    if let (Some(m), Some(c)) = (json.as_object_mut(), check_json) {
        m.insert("check".into(), c);
    }
    let mut js = serde_json::to_vec_pretty(&json)?;
    js.push(b'\n');
    out.push(Artifact {
        name: "fit.json".into(),
        bytes: js,
    });
    out.push(Artifact {
        name: "fit.html".into(),
        bytes: page(fit, &rendered, check, scenario_toml).into_bytes(),
    });
    Ok(out)
}
