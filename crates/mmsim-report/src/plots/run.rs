//! The plots drawn from a run's own records and summary: waits, match
//! quality, the queue over time, the day's hours and the ratings' accuracy.
//! Each builder returns `None` when the run has no data for its plot.

use crate::chart::{padded_max, Bin, Chart, Series, Spec, BLUE, GREEN, ORANGE, VERMILLION};
use crate::input::ReportInput;
use crate::number;
use mmsim_core::metrics::dist::Dist;
use plotters::style::RGBColor;

/// Wait before a match, as a histogram with its p50 and p90 marked.
pub(super) fn wait_hist(input: &ReportInput) -> Option<Spec> {
    let waits = &input.view.waits;
    (waits.n() > 0).then(|| wait_hist_of(waits))
}

/// The share of matched tickets that waited at most x.
pub(super) fn wait_cdf(input: &ReportInput) -> Option<Spec> {
    let waits = &input.view.waits;
    (waits.n() > 0).then(|| wait_cdf_of(waits))
}

pub(super) fn spread_hist(input: &ReportInput) -> Option<Spec> {
    let v = &input.view.spread_rating;
    (v.n() > 0).then(|| {
        histogram_spec(
            "spread_hist",
            "Rating spread within a match",
            "rating spread: highest minus lowest player rating (rating points)",
            "matches",
            v,
            "Matches formed after warm-up.",
        )
    })
}

pub(super) fn team_gap_hist(input: &ReportInput) -> Option<Spec> {
    let v = &input.view.team_rating_gap;
    (v.n() > 0).then(|| {
        histogram_spec(
            "team_gap_hist",
            "Team rating gap",
            "gap between team mean ratings (rating points)",
            "matches",
            v,
            "Team matches (more than one player a side) formed after warm-up.",
        )
    })
}

/// Finished matches by survivors on the winning side.
pub(super) fn survivors_hist(input: &ReportInput) -> Option<Spec> {
    let v = &input.view.survivors;
    (v.iter().sum::<u64>() > 0).then(|| survivors_hist_of(v))
}

pub(super) fn gold_integral_hist(input: &ReportInput) -> Option<Spec> {
    let v = &input.view.gold;
    (v.n() > 0).then(|| {
        histogram_spec(
            "gold_integral_hist",
            "Gold-difference integral (balance)",
            "integral of |gold difference| since it last crossed zero (gold-minutes)",
            "matches",
            v,
            "Finished matches formed after warm-up; smaller means a closer game.",
        )
    })
}

fn wait_hist_of(waits: &dyn Dist) -> Spec {
    let mut spec = histogram_spec(
        "wait_hist",
        "Wait before a match",
        "wait in queue (s)",
        "tickets",
        waits,
        "Tickets enqueued after warm-up that found a match.",
    );
    if let Chart::Histogram { markers, .. } = &mut spec.chart {
        markers.push((quantile(waits, 0.5), "p50".into()));
        markers.push((quantile(waits, 0.9), "p90".into()));
    }
    spec
}

fn wait_cdf_of(sorted: &dyn Dist) -> Spec {
    // A few hundred quantiles draw the curve as finely as the pixels allow,
    // and keep the SVG small however many tickets the run had.
    const STEPS: usize = 400;
    let points: Vec<(f64, f64)> = (0..=STEPS)
        .map(|k| {
            let q = k as f64 / STEPS as f64;
            (quantile(sorted, q), 100.0 * q)
        })
        .collect();
    let p50 = quantile(sorted, 0.5);
    let p90 = quantile(sorted, 0.9);
    let p99 = quantile(sorted, 0.99);
    let max = sorted.max().unwrap_or(0.0);
    let top = view_top(sorted);
    let points: Vec<(f64, f64)> = points.into_iter().filter(|p| p.0 <= top).collect();
    let shown = if top < max {
        format!(
            " The axis stops at {} s to keep the bulk readable.",
            number::tick(top)
        )
    } else {
        String::new()
    };
    Spec {
        name: "wait_cdf",
        title: "Wait distribution (cumulative)".into(),
        caption: format!(
            "Share of the {} tickets enqueued after warm-up that found a match within a given wait. \
             p50 {}, p90 {}, p99 {}, max {} s.{shown}",
            sorted.n(),
            number::tick(p50),
            number::tick(p90),
            number::tick(p99),
            number::tick(max)
        ),
        x_desc: "wait in queue (s)".into(),
        y_desc: "tickets matched within this wait (%)".into(),
        chart: Chart::Lines {
            series: vec![Series {
                label: "matched tickets".into(),
                color: BLUE,
                points,
            }],
            x_range: (0.0_f64.min(sorted.min().unwrap_or(0.0)), padded_max(top)),
            y_range: (0.0, 100.0),
            markers: vec![
                (p50, "p50".into()),
                (p90, "p90".into()),
                (p99, "p99".into()),
            ],
            shade: None,
        },
    }
}

/// Drawn from `summary.json`'s `wait_s_by_skill_decile`, so the bars and the
/// summary table are the same numbers (deciles of the population's true skill).
pub(super) fn wait_by_decile(input: &ReportInput) -> Option<Spec> {
    let summary = input.summary;
    let deciles = &summary.wait_s_by_skill_decile;
    if deciles.len() != 10 || deciles.iter().all(|d| d.wait_s.p50.is_none()) {
        return None;
    }
    let n: u64 = deciles.iter().map(|d| d.wait_s.n).sum();
    let p50: Vec<(f64, f64)> = (0..10)
        .filter_map(|d| Some((d as f64, deciles[d].wait_s.p50?)))
        .collect();
    let p90: Vec<(f64, f64)> = (0..10)
        .filter_map(|d| Some((d as f64, deciles[d].wait_s.p90?)))
        .collect();
    Some(Spec {
        name: "wait_by_decile",
        title: "Wait by true-skill decile".into(),
        caption: format!(
            "Median and 90th-percentile wait of the {n} matched tickets enqueued after warm-up, \
             by decile of the population's true skill (1 = lowest tenth of players, 10 = highest); \
             the same figures as wait_s_by_skill_decile in summary.json."
        ),
        x_desc: "true-skill decile (1 = lowest, 10 = highest)".into(),
        y_desc: "wait in queue (s)".into(),
        chart: Chart::Bars {
            categories: (1..=10).map(|d| d.to_string()).collect(),
            series: super::wait_series(p50, p90),
        },
    })
}

/// `counts[k]`: finished matches with k survivors on the winning side.
fn survivors_hist_of(counts: &[u64]) -> Spec {
    let bins = counts
        .iter()
        .enumerate()
        .map(|(k, &count)| Bin {
            lo: k as f64 - 0.5,
            hi: k as f64 + 0.5,
            count,
        })
        .collect();
    let total: u64 = counts.iter().sum();
    let big: u64 = counts.iter().skip(10).sum();
    Spec {
        name: "survivors_hist",
        title: "Survivors on the winning team".into(),
        caption: format!(
            "Landslide histogram: players left alive on the winning side, over {} finished matches \
             formed after warm-up; {} of them ({}%) ended with 10 or more survivors.",
            total,
            big,
            number::tick(100.0 * big as f64 / total as f64)
        ),
        x_desc: "survivors on the winning team (players)".into(),
        y_desc: "matches".into(),
        chart: Chart::Histogram {
            bins,
            markers: Vec::new(),
            integer_x: true,
        },
    }
}

/// The time axis reads best in the largest unit that still gives several ticks.
fn time_unit(duration_s: f64) -> (f64, &'static str) {
    if duration_s >= 3.0 * 3600.0 {
        (3600.0, "h")
    } else if duration_s >= 3.0 * 60.0 {
        (60.0, "min")
    } else {
        (1.0, "s")
    }
}

/// Width of the queue plot's bins: an hour when the run is long enough to
/// show a daily profile, else the round width that gives at least 12 bins.
fn queue_bin_s(end_s: f64) -> f64 {
    [60.0, 120.0, 300.0, 600.0, 900.0, 1800.0, 3600.0]
        .into_iter()
        .rev()
        .find(|w| end_s / w >= 12.0)
        .unwrap_or(60.0)
}

/// Tickets waiting, as one point per bin: (bin centre s, mean, min, max).
/// A sample at the run's very end (`end_s`) joins the last bin rather than
/// opening a bin of one sample.
pub fn queue_bins(
    q: &[mmsim_core::metrics::QueueSample],
    bin_s: f64,
    end_s: f64,
) -> Vec<(f64, f64, f64, f64)> {
    let last = ((end_s / bin_s).ceil() as u64).saturating_sub(1);
    let mut out: Vec<(f64, f64, f64, f64)> = Vec::new();
    let mut cur: Option<(u64, f64, u32, u32, u32)> = None; // bin, sum, n, min, max
    let close = |c: (u64, f64, u32, u32, u32), out: &mut Vec<_>| {
        out.push((
            (c.0 as f64 + 0.5) * bin_s,
            c.1 / f64::from(c.2),
            f64::from(c.3),
            f64::from(c.4),
        ))
    };
    for s in q {
        let k = ((s.t.as_secs_f64() / bin_s).floor() as u64).min(last);
        let v = s.waiting_tickets;
        match &mut cur {
            Some(c) if c.0 == k => {
                c.1 += f64::from(v);
                c.2 += 1;
                c.3 = c.3.min(v);
                c.4 = c.4.max(v);
            }
            _ => {
                if let Some(c) = cur.take() {
                    close(c, &mut out);
                }
                cur = Some((k, f64::from(v), 1, v, v));
            }
        }
    }
    if let Some(c) = cur {
        close(c, &mut out);
    }
    out
}

pub(super) fn queue_length(input: &ReportInput) -> Option<Spec> {
    let q = &input.view.queue;
    if q.is_empty() {
        return None;
    }
    let end_s = input
        .duration_s
        .max(q.last().map_or(0.0, |s| s.t.as_secs_f64()));
    let (div, unit) = time_unit(end_s);
    let bin_s = queue_bin_s(end_s);
    let bins = queue_bins(q, bin_s, end_s);
    let y_max = bins.iter().map(|b| b.3).fold(0.0, f64::max);
    let width = if bin_s >= 3600.0 {
        "hour".to_string()
    } else {
        format!("{} min", bin_s / 60.0)
    };
    Some(Spec {
        name: "queue_length",
        title: "Queue length over time".into(),
        caption: format!(
            "Tickets waiting in the queue: the line is the mean of each {width}'s samples, the band \
             runs from the lowest to the highest sample in it; the grey band is the warm-up. After \
             warm-up: {} samples, at most {} tickets waiting (summary.json's by_hour gives each \
             hour of the day).",
            input.summary.by_hour.iter().map(|h| h.queue_samples).sum::<u64>(),
            input
                .summary
                .by_hour
                .iter()
                .filter_map(|h| h.queue_max_tickets)
                .max()
                .unwrap_or(0)
        ),
        x_desc: format!("simulated time ({unit})"),
        y_desc: "tickets waiting in queue".into(),
        chart: Chart::Band {
            line: Series {
                label: format!("mean per {width}"),
                color: BLUE,
                points: bins.iter().map(|b| (b.0 / div, b.1)).collect(),
            },
            band: bins.iter().map(|b| (b.0 / div, b.2, b.3)).collect(),
            band_label: format!("lowest to highest per {width}"),
            x_range: (0.0, end_s / div),
            // Headroom keeps the legend clear of the band.
            y_range: (0.0, padded_max(y_max) * 1.3),
            shade: warmup_shade(input.warmup_s, div),
        },
    })
}

/// One figure of a `by_hour` row.
type HourFigure = fn(&mmsim_core::metrics::summary::HourFigures) -> Option<f64>;

/// A figure of `by_hour` as a line over the hours, each at its middle.
fn hour_line(
    rows: &[&mmsim_core::metrics::summary::HourFigures],
    label: &str,
    color: RGBColor,
    f: HourFigure,
) -> Series {
    Series {
        label: label.into(),
        color,
        points: rows
            .iter()
            .filter_map(|h| f(h).map(|v| (f64::from(h.hour) + 0.5, v)))
            .collect(),
    }
}

/// Wait percentiles by hour of the simulated day, from the summary's `by_hour`.
pub(super) fn wait_by_hour(input: &ReportInput) -> Option<Spec> {
    let summary = input.summary;
    let rows: Vec<_> = summary.by_hour.iter().filter(|h| h.matched > 0).collect();
    if rows.len() < 2 {
        return None;
    }
    let line = |label: &str, color, f: HourFigure| hour_line(&rows, label, color, f);
    let series = vec![
        line("p50", BLUE, |h| h.wait_p50_s),
        line("p90", ORANGE, |h| h.wait_p90_s),
        line("p99", VERMILLION, |h| h.wait_p99_s),
    ];
    let y_max = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .fold(0.0, f64::max);
    Some(Spec {
        name: "wait_by_hour",
        title: "Wait by hour of the simulated day".into(),
        caption: format!(
            "Wait of matched tickets by the hour of the day they joined the queue (after \
             warm-up; {} hours with matches), as summary.json's by_hour, which also gives each \
             hour's abandon rate and queue length.",
            rows.len()
        ),
        x_desc: "hour of the simulated day".into(),
        y_desc: "wait (s)".into(),
        chart: Chart::Lines {
            series,
            x_range: (0.0, 24.0),
            y_range: (0.0, padded_max(y_max) * 1.2),
            markers: Vec::new(),
            shade: None,
        },
    })
}

/// How well the ratings know the players, hour by hour (`by_hour`): the
/// Dota post's criterion 1 (each team a 50% chance) on the ratings beside
/// the same on true skill, and the ratings' Brier score.
pub(super) fn ladder_by_hour(input: &ReportInput) -> Option<Spec> {
    let summary = input.summary;
    let rows: Vec<_> = summary.by_hour.iter().filter(|h| h.matches > 0).collect();
    if rows.len() < 2 {
        return None;
    }
    let line = |label: &str, color, f: HourFigure| hour_line(&rows, label, color, f);
    let series = vec![
        line("|P - 0.5| by ratings", BLUE, |h| h.rating_win_prob_gap),
        line("|P - 0.5| by true skill", VERMILLION, |h| {
            h.true_win_prob_gap
        }),
        line("Brier score of the ratings", GREEN, |h| h.brier_score),
        line("rank correlation, ratings and skill", ORANGE, |h| {
            h.rating_skill_rank_corr
        }),
    ];
    let y_max = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .fold(0.25, f64::max);
    Some(Spec {
        name: "ladder_by_hour",
        title: "Do the ratings know the players? By hour of the simulated day".into(),
        caption: format!(
            "Matches formed in each hour after warm-up ({} hours with matches): how far from a \
             coin flip they were by the rating system's own prediction (blue; the matchmaker \
             makes it small) and by true skill (vermillion; what the players live), and the \
             ratings' Brier score on the results (green; a coin flip scores 0.25, and so do \
             ratings that only ever predict even matches), and the Spearman correlation of \
             ratings with true skill (orange). A true gap far above the rating gap means the \
             ratings do not yet know the players: criterion 1 holds on paper only. summary.json's by_hour and by_hour.parquet hold the figures.",
            rows.len()
        ),
        x_desc: "hour of the simulated day".into(),
        y_desc: "probability; Brier score; correlation".into(),
        chart: Chart::Lines {
            series,
            x_range: (0.0, 24.0),
            y_range: (0.0, padded_max(y_max) * 1.3),
            markers: Vec::new(),
            shade: None,
        },
    })
}

/// Bins with fewer matches than this are left off the upset plot (a rate
/// over a handful of matches is noise); the summary's table keeps them.
const MIN_BIN_MATCHES: u64 = 20;

/// Realised upset rate against the models', by gap between the teams.
pub(super) fn upset_by_gap(input: &ReportInput) -> Option<Spec> {
    let summary = input.summary;
    let u = &summary.upset_by_gap;
    let n: u64 = u.skill.iter().map(|b| b.matches).sum();
    if !u.skill.iter().any(|b| b.matches >= MIN_BIN_MATCHES) {
        return None;
    }
    let mid = |b: &mmsim_core::metrics::summary::GapBin| match b.gap_to {
        Some(t) => (b.gap_from + t) / 2.0,
        None => b.gap_from + 50.0,
    };
    let line =
        |label: &str, color, bins: &[mmsim_core::metrics::summary::GapBin], model: bool| Series {
            label: label.into(),
            color,
            points: bins
                .iter()
                .filter(|b| b.matches >= MIN_BIN_MATCHES)
                .filter_map(|b| {
                    let v = if model {
                        b.model_upset_rate
                    } else {
                        b.upset_rate
                    };
                    v.map(|v| (mid(b), 100.0 * v))
                })
                .collect(),
        };
    let series = vec![
        line("skill gap: realised", BLUE, &u.skill, false),
        line("skill gap: outcome model", ORANGE, &u.skill, true),
        line("rating gap: realised", GREEN, &u.rating, false),
        line("rating gap: rating system", VERMILLION, &u.rating, true),
    ];
    let x_max = u
        .skill
        .iter()
        .chain(&u.rating)
        .filter(|b| b.matches >= MIN_BIN_MATCHES)
        .map(|b| b.gap_to.unwrap_or(b.gap_from + 100.0))
        .fold(0.0, f64::max);
    Some(Spec {
        name: "upset_by_gap",
        title: "Upsets by gap between the teams".into(),
        caption: format!(
            "Share of finished two-team matches after warm-up ({n}) that the favourite lost, \
             by gap in mean true skill (favourite and chance from the outcome model) and in mean \
             rating (the rating system's prediction); each point is a bin of summary.json's \
             upset_by_gap at its centre, drawn when it holds at least {MIN_BIN_MATCHES} matches."
        ),
        x_desc: "gap between the teams (skill or rating points)".into(),
        y_desc: "upset rate (%)".into(),
        chart: Chart::Lines {
            series,
            x_range: (0.0, x_max),
            y_range: (0.0, 65.0),
            markers: Vec::new(),
            shade: None,
        },
    })
}

fn warmup_shade(warmup_s: f64, div: f64) -> Option<(f64, f64, String)> {
    (warmup_s > 0.0).then(|| (0.0, warmup_s / div, " warm-up".to_string()))
}

pub(super) fn rank_corr(input: &ReportInput) -> Option<Spec> {
    let q = &input.view.queue;
    let points: Vec<(f64, f64)> = q
        .iter()
        .filter_map(|s| s.rating_skill_rank_corr.map(|c| (s.t.as_secs_f64(), c)))
        .collect();
    if points.is_empty() {
        return None;
    }
    let end_s = input.duration_s.max(points.last().map_or(0.0, |p| p.0));
    let (div, unit) = time_unit(end_s);
    let points = thin(points.into_iter().map(|(t, c)| (t / div, c)).collect());
    let y_min = points.iter().map(|p| p.1).fold(0.0, f64::min);
    Some(Spec {
        name: "rank_corr",
        title: "Rating vs true skill: rank correlation".into(),
        caption: "Spearman rank correlation between players' ratings and their hidden true skill, \
                  over players who have played; 1 means the ratings order players exactly as \
                  their true skill does."
            .into(),
        x_desc: format!("simulated time ({unit})"),
        y_desc: "Spearman rank correlation".into(),
        chart: Chart::Lines {
            series: vec![Series {
                label: "rank correlation".into(),
                color: GREEN,
                points,
            }],
            x_range: (0.0, end_s / div),
            y_range: (if y_min < 0.0 { -1.0 } else { 0.0 }, 1.0),
            markers: Vec::new(),
            shade: warmup_shade(input.warmup_s, div),
        },
    })
}

/// Caps a long time series at a few thousand points by averaging runs of
/// neighbours, so a day-long run still gives a small SVG; short series pass through.
fn thin(points: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    const MAX: usize = 2000;
    if points.len() <= MAX {
        return points;
    }
    let per = points.len().div_ceil(MAX);
    points
        .chunks(per)
        .map(|c| {
            let n = c.len() as f64;
            (
                c.iter().map(|p| p.0).sum::<f64>() / n,
                c.iter().map(|p| p.1).sum::<f64>() / n,
            )
        })
        .collect()
}

/// A histogram of non-negative or signed values with a readable bin width.
/// A long right tail is cut (see `view_top`) so the bulk stays visible; the
/// caption says how much was cut.
fn histogram_spec(
    name: &'static str,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    values: &dyn Dist,
    caption: &str,
) -> Spec {
    let s = values;
    let (bins, cut) = bin(s);
    let mut caption = format!("{caption} {} values.", s.n());
    if cut > 0 {
        caption.push_str(&format!(
            " The axis stops near the 99.5th percentile ({}); {cut} larger values (max {}) are not drawn.",
            number::tick(view_top(s)),
            number::tick(s.max().unwrap_or(0.0))
        ));
    }
    Spec {
        name,
        title: title.into(),
        caption,
        x_desc: x_desc.into(),
        y_desc: y_desc.into(),
        chart: Chart::Histogram {
            bins,
            markers: Vec::new(),
            integer_x: false,
        },
    }
}

/// Where a distribution's x axis should stop. Waits and gold integrals have
/// long right tails: drawn to the maximum, a handful of outliers squash the
/// bulk into a few pixels, so when the maximum lies well beyond the 99.5th
/// percentile the axis stops there instead.
fn view_top(sorted: &dyn Dist) -> f64 {
    let n = sorted.n();
    let (min, max) = (sorted.at_rank(0), sorted.at_rank(n - 1));
    let p995 = quantile(sorted, 0.995);
    if n >= 100 && max > 1.5 * p995 && p995 > min {
        p995
    } else {
        max
    }
}

/// Bins sorted values; returns the bins and how many values lie beyond the last.
pub(super) fn bin(sorted: &dyn Dist) -> (Vec<Bin>, u64) {
    let n = sorted.n();
    let min = sorted.at_rank(0);
    let top = view_top(sorted);
    // Quantities that cannot be negative read best from zero.
    let bottom = if min >= 0.0 { 0.0 } else { min };
    let target = ((n as f64).sqrt().round() as usize).clamp(8, 50);
    let width = nice_step((top - bottom) / target as f64);
    let start = (bottom / width).floor() * width;
    let count = (((top - start) / width).floor() as usize + 1).max(1);
    let mut bins: Vec<Bin> = (0..count)
        .map(|i| Bin {
            lo: start + i as f64 * width,
            hi: start + (i + 1) as f64 * width,
            count: 0,
        })
        .collect();
    let mut cut = 0;
    sorted.for_each(&mut |v, c| {
        if v > top {
            cut += c;
            return;
        }
        let i = (((v - start) / width).floor() as usize).min(count - 1);
        bins[i].count += c;
    });
    (bins, cut)
}

/// Rounds a step up to 1, 2, 2.5 or 5 times a power of ten.
pub(super) fn nice_step(raw: f64) -> f64 {
    if raw.is_nan() || raw <= 0.0 || raw.is_infinite() {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let nice = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 2.5 {
        2.5
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * mag
}

/// The one percentile rule (type 7, as summary.json uses), so a plot's
/// p50/p90 markers match the summary's; NaN for no data rather than a marker.
pub(super) fn quantile(d: &dyn Dist, q: f64) -> f64 {
    d.quantile(q).unwrap_or(f64::NAN)
}
