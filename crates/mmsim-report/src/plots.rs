//! The run's plots, drawn with plotters into memory as PNG and SVG. Each plot is
//! first described as plain data (`Spec`), then rendered by one generic drawing
//! routine to both backends, so the two formats always show the same thing.
//! Text uses the embedded DejaVu Sans, never a system font, so output is the
//! same on every machine.

use super::ReportInput;
use anyhow::{anyhow, Context};
use mmsim_core::metrics::dist::Dist;
use mmsim_core::metrics::Summary;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;
use std::sync::OnceLock;

/// Subfolder of the run's folder that holds the plot files.
pub const PLOT_DIR: &str = "plots";
/// Pixel size of every plot (and the SVG's nominal size).
pub const SIZE: (u32, u32) = (960, 540);

/// The family name the font is registered under. It doubles as the SVG
/// `font-family` value, so it is written as a CSS list: viewers that have
/// DejaVu Sans show exactly what the PNG shows, others fall back to a sans font.
const FONT: &str = "DejaVu Sans, sans-serif";
static FONT_BYTES: &[u8] = include_bytes!("assets/DejaVuSans.ttf");

/// Okabe-Ito colours: distinguishable with the common colour-vision deficiencies.
pub(super) const BLUE: RGBColor = RGBColor(0, 114, 178);
pub(super) const ORANGE: RGBColor = RGBColor(230, 159, 0);
pub(super) const VERMILLION: RGBColor = RGBColor(213, 94, 0);
pub(super) const GREEN: RGBColor = RGBColor(0, 158, 115);
pub(super) const INK: RGBColor = RGBColor(33, 33, 33);
pub(super) const GRID: RGBColor = RGBColor(225, 225, 225);
pub(super) const GRID_LIGHT: RGBColor = RGBColor(242, 242, 242);
const SHADE: RGBColor = RGBColor(236, 236, 236);
/// The band around a line: BLUE lightened, opaque so the PNG and SVG agree pixel for pixel.
const BAND: RGBColor = RGBColor(178, 212, 232);

/// One rendered plot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plot {
    /// File stem, e.g. `wait_hist`.
    pub name: &'static str,
    pub title: String,
    /// One or two sentences saying what is plotted and from which records.
    pub caption: String,
    pub png: Vec<u8>,
    pub svg: String,
}

/// A plot described as data, before any drawing.
#[derive(Clone, Debug)]
pub struct Spec {
    pub name: &'static str,
    pub title: String,
    pub caption: String,
    pub x_desc: String,
    pub y_desc: String,
    pub chart: Chart,
}

#[derive(Clone, Debug)]
pub enum Chart {
    /// Bars over contiguous bins; `markers` are labelled vertical lines.
    Histogram {
        bins: Vec<Bin>,
        markers: Vec<(f64, String)>,
        /// Bins are single integers: label the axis with integers only.
        integer_x: bool,
    },
    /// Lines against a continuous x; `shade` greys out an x interval with a label.
    Lines {
        series: Vec<Series>,
        x_range: (f64, f64),
        y_range: (f64, f64),
        markers: Vec<(f64, String)>,
        shade: Option<(f64, f64, String)>,
    },
    /// One line inside a filled band (per bin: the mean, and the lowest and
    /// highest value), so a dense noisy series reads as a trend and a range.
    Band {
        line: Series,
        /// (x, low, high) per bin, in x order.
        band: Vec<(f64, f64, f64)>,
        band_label: String,
        x_range: (f64, f64),
        y_range: (f64, f64),
        shade: Option<(f64, f64, String)>,
    },
    /// Grouped bars, one group per category.
    Bars {
        categories: Vec<String>,
        series: Vec<Series>,
    },
    /// Labelled points (sweep settings); those flagged `front` are drawn
    /// larger and joined in x order (a Pareto front).
    Scatter {
        points: Vec<ScatterPoint>,
        front_label: String,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct ScatterPoint {
    pub x: f64,
    pub y: f64,
    pub label: String,
    pub front: bool,
    /// The 95% intervals of `x` and `y` (low, high), drawn as bars.
    pub x_ci: Option<(f64, f64)>,
    pub y_ci: Option<(f64, f64)>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bin {
    pub lo: f64,
    pub hi: f64,
    pub count: u64,
}

#[derive(Clone, Debug)]
pub struct Series {
    pub label: String,
    pub color: RGBColor,
    /// For `Lines`, (x, y) points; for `Bars`, x is the category index.
    pub points: Vec<(f64, f64)>,
}

/// The plots the run has data for, in a fixed order.
pub fn run_plots(input: &ReportInput) -> anyhow::Result<Vec<Plot>> {
    plot_specs(input)
        .iter()
        .map(|s| render(s).with_context(|| format!("drawing plot {}", s.name)))
        .collect()
}

/// Describes every plot whose data the run has; a plot without data is left out.
pub fn plot_specs(input: &ReportInput) -> Vec<Spec> {
    let v = input.view;
    let mut specs = Vec::new();
    if v.waits.n() > 0 {
        specs.push(wait_hist(&v.waits));
        specs.push(wait_cdf(&v.waits));
    }
    if let Some(s) = wait_by_decile(input.summary) {
        specs.push(s);
    }
    if let Some(s) = super::roles_plot::wait_by_role(input.summary) {
        specs.push(s);
    }
    if let Some(s) = super::region_plots::wait_by_region(input.summary) {
        specs.push(s);
    }
    if let Some(s) = super::mode_plots::wait_by_mode(input.summary) {
        specs.push(s);
    }
    if let Some(s) = super::engagement_plots::active_players(input.summary) {
        specs.push(s);
    }
    if let Some(s) = super::engagement_plots::churn_by_decile(input.summary) {
        specs.push(s);
    }
    if let Some(s) = super::explain::blocked_by_wait(input.summary) {
        specs.push(s);
    }
    if v.spread_rating.n() > 0 {
        specs.push(histogram_spec(
            "spread_hist",
            "Rating spread within a match",
            "rating spread: highest minus lowest player rating (rating points)",
            "matches",
            &v.spread_rating,
            "Matches formed after warm-up.",
        ));
    }
    if v.team_rating_gap.n() > 0 {
        specs.push(histogram_spec(
            "team_gap_hist",
            "Team rating gap",
            "gap between team mean ratings (rating points)",
            "matches",
            &v.team_rating_gap,
            "Team matches (more than one player a side) formed after warm-up.",
        ));
    }
    if v.survivors.iter().sum::<u64>() > 0 {
        specs.push(survivors_hist(&v.survivors));
    }
    if v.gold.n() > 0 {
        specs.push(histogram_spec(
            "gold_integral_hist",
            "Gold-difference integral (balance)",
            "integral of |gold difference| since it last crossed zero (gold-minutes)",
            "matches",
            &v.gold,
            "Finished matches formed after warm-up; smaller means a closer game.",
        ));
    }
    if let Some(s) = queue_length(input) {
        specs.push(s);
    }
    if let Some(s) = wait_by_hour(input.summary) {
        specs.push(s);
    }
    if let Some(s) = ladder_by_hour(input.summary) {
        specs.push(s);
    }
    if let Some(s) = upset_by_gap(input.summary) {
        specs.push(s);
    }
    if let Some(s) = rank_corr(input) {
        specs.push(s);
    }
    specs
}

fn wait_hist(waits: &dyn Dist) -> Spec {
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

fn wait_cdf(sorted: &dyn Dist) -> Spec {
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
            fmt_num(top)
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
            fmt_num(p50),
            fmt_num(p90),
            fmt_num(p99),
            fmt_num(max)
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
fn wait_by_decile(summary: &Summary) -> Option<Spec> {
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
            series: vec![
                Series {
                    label: "p50".into(),
                    color: BLUE,
                    points: p50,
                },
                Series {
                    label: "p90".into(),
                    color: ORANGE,
                    points: p90,
                },
            ],
        },
    })
}

/// `counts[k]`: finished matches with k survivors on the winning side.
fn survivors_hist(counts: &[u64]) -> Spec {
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
            fmt_num(100.0 * big as f64 / total as f64)
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

fn queue_length(input: &ReportInput) -> Option<Spec> {
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
fn wait_by_hour(summary: &Summary) -> Option<Spec> {
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
fn ladder_by_hour(summary: &Summary) -> Option<Spec> {
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
fn upset_by_gap(summary: &Summary) -> Option<Spec> {
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

fn rank_corr(input: &ReportInput) -> Option<Spec> {
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
            fmt_num(view_top(s)),
            fmt_num(s.max().unwrap_or(0.0))
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
fn bin(sorted: &dyn Dist) -> (Vec<Bin>, u64) {
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
fn nice_step(raw: f64) -> f64 {
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

fn padded_max(v: f64) -> f64 {
    if v > 0.0 {
        v * 1.05
    } else {
        1.0
    }
}

/// The one percentile rule (type 7, as summary.json uses), so a plot's
/// p50/p90 markers match the summary's; NaN for no data rather than a marker.
fn quantile(d: &dyn Dist, q: f64) -> f64 {
    d.quantile(q).unwrap_or(f64::NAN)
}

/// Short, stable number text for ticks and captions: no float noise, k/M for large values.
pub fn fmt_num(v: f64) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    let a = v.abs();
    let (x, suffix) = if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e4 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let decimals = if x.abs() >= 100.0 {
        1
    } else if x.abs() >= 1.0 {
        2
    } else {
        3
    };
    let mut s = format!("{x:.decimals$}");
    if s.contains('.') {
        s = s.trim_end_matches('0').trim_end_matches('.').to_string();
    }
    if s == "-0" {
        s = "0".into();
    }
    s + suffix
}

pub(super) fn ensure_font() -> anyhow::Result<()> {
    static OK: OnceLock<bool> = OnceLock::new();
    let ok = *OK.get_or_init(|| {
        // "sans-serif" too, so any text plotters styles by default still finds a font.
        plotters::style::register_font(FONT, FontStyle::Normal, FONT_BYTES).is_ok()
            && plotters::style::register_font("sans-serif", FontStyle::Normal, FONT_BYTES).is_ok()
    });
    if ok {
        Ok(())
    } else {
        Err(anyhow!("the embedded DejaVu Sans font could not be loaded"))
    }
}

/// Draws a spec to SVG only: for a page that asks for a plot on every
/// change (`mmsim serve`), where the PNG would be drawn for nothing.
pub fn render_svg(spec: &Spec) -> anyhow::Result<String> {
    ensure_font()?;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        draw(spec, &root)?;
        root.present().map_err(de)?;
    }
    Ok(svg)
}

/// Draws a spec to SVG and PNG.
pub fn render(spec: &Spec) -> anyhow::Result<Plot> {
    ensure_font()?;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        draw(spec, &root)?;
        root.present().map_err(de)?;
    }
    let (w, h) = SIZE;
    let mut rgb = vec![0u8; (w * h * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, SIZE).into_drawing_area();
        draw(spec, &root)?;
        root.present().map_err(de)?;
    }
    Ok(Plot {
        name: spec.name,
        title: spec.title.clone(),
        caption: spec.caption.clone(),
        png: encode_png(&rgb, w, h)?,
        svg,
    })
}

/// PNG encoding is a pure function of the pixels: no timestamp or text chunks.
pub(super) fn encode_png(rgb: &[u8], w: u32, h: u32) -> anyhow::Result<Vec<u8>> {
    use image::ImageEncoder;
    let mut out = Vec::new();
    image::codecs::png::PngEncoder::new(&mut out).write_image(rgb, w, h, image::ColorType::Rgb8)?;
    Ok(out)
}

pub(super) fn de<E: std::error::Error + Send + Sync>(e: DrawingAreaErrorKind<E>) -> anyhow::Error {
    anyhow!("plot drawing failed: {e}")
}

pub(super) fn font(size: u32) -> TextStyle<'static> {
    (FONT, size).into_font().color(&INK)
}

fn draw<DB: DrawingBackend>(spec: &Spec, root: &DrawingArea<DB, Shift>) -> anyhow::Result<()> {
    root.fill(&WHITE).map_err(de)?;
    let root = root.margin(8, 20, 8, 24);
    let (x0, x1, y0, y1) = match &spec.chart {
        Chart::Histogram { bins, .. } => {
            let top = bins.iter().map(|b| b.count).max().unwrap_or(0) as f64;
            (
                bins.first().map_or(0.0, |b| b.lo),
                bins.last().map_or(1.0, |b| b.hi),
                0.0,
                padded_max(top).max(1.0),
            )
        }
        Chart::Lines {
            x_range, y_range, ..
        }
        | Chart::Band {
            x_range, y_range, ..
        } => {
            let x1 = if x_range.1 > x_range.0 {
                x_range.1
            } else {
                x_range.0 + 1.0
            };
            let y1 = if y_range.1 > y_range.0 {
                y_range.1
            } else {
                y_range.0 + 1.0
            };
            (x_range.0, x1, y_range.0, y1)
        }
        Chart::Bars { categories, series } => {
            let top = series
                .iter()
                .flat_map(|s| s.points.iter().map(|p| p.1))
                .fold(0.0, f64::max);
            // Headroom above the tallest bar leaves the legend room.
            (
                -0.5,
                categories.len() as f64 - 0.5,
                0.0,
                padded_max(top) * 1.15,
            )
        }
        Chart::Scatter { points, .. } => {
            // The interval bars must fit as well as the points.
            let ends = |v: f64, ci: Option<(f64, f64)>| {
                std::iter::once(v).chain(ci.into_iter().flat_map(|(lo, hi)| [lo, hi]))
            };
            let (lo_x, hi_x) = span(points.iter().flat_map(|p| ends(p.x, p.x_ci)));
            let (lo_y, hi_y) = span(points.iter().flat_map(|p| ends(p.y, p.y_ci)));
            (lo_x, hi_x, lo_y, hi_y)
        }
    };
    let mut chart = ChartBuilder::on(&root)
        .caption(&spec.title, font(26))
        .x_label_area_size(58)
        .y_label_area_size(84)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(de)?;

    let integer_x = matches!(
        spec.chart,
        Chart::Histogram {
            integer_x: true,
            ..
        }
    );
    let categories: Vec<String> = match &spec.chart {
        Chart::Bars { categories, .. } => categories.clone(),
        _ => Vec::new(),
    };
    let x_fmt = |v: &f64| -> String {
        if integer_x || !categories.is_empty() {
            let r = v.round();
            if (v - r).abs() > 1e-6 {
                return String::new();
            }
            if !categories.is_empty() {
                return categories
                    .get(r as usize)
                    .filter(|_| r >= 0.0)
                    .cloned()
                    .unwrap_or_default();
            }
            return fmt_num(r);
        }
        fmt_num(*v)
    };
    let y_fmt = |v: &f64| fmt_num(*v);
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(spec.x_desc.as_str())
        .y_desc(spec.y_desc.as_str())
        .axis_desc_style(font(18))
        .label_style(font(15))
        .axis_style(INK)
        .bold_line_style(GRID)
        .light_line_style(GRID_LIGHT)
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .y_labels(8);
    if !categories.is_empty() {
        mesh.x_labels(categories.len() + 1).disable_x_mesh();
    } else if integer_x {
        let span = (x1 - x0).round() as usize;
        mesh.x_labels(span.clamp(2, 20) + 1).disable_x_mesh();
    } else {
        mesh.x_labels(10);
    }
    mesh.draw().map_err(de)?;

    let mut legend = false;
    match &spec.chart {
        Chart::Histogram { bins, markers, .. } => {
            chart
                .draw_series(
                    bins.iter().filter(|b| b.count > 0).map(|b| {
                        Rectangle::new([(b.lo, 0.0), (b.hi, b.count as f64)], BLUE.filled())
                    }),
                )
                .map_err(de)?;
            // Thin white edges keep neighbouring bars apart.
            chart
                .draw_series(bins.iter().filter(|b| b.count > 0).map(|b| {
                    Rectangle::new([(b.lo, 0.0), (b.hi, b.count as f64)], WHITE.stroke_width(1))
                }))
                .map_err(de)?;
            draw_markers(&mut chart, markers, y1)?;
        }
        Chart::Band {
            line,
            band,
            band_label,
            shade,
            ..
        } => {
            if let Some(sh) = shade {
                draw_shade(&mut chart, sh, (x1, y0, y1))?;
            }
            let outline: Vec<(f64, f64)> = band
                .iter()
                .map(|&(x, _, hi)| (x, hi))
                .chain(band.iter().rev().map(|&(x, lo, _)| (x, lo)))
                .collect();
            chart
                .draw_series(std::iter::once(Polygon::new(outline, BAND.filled())))
                .map_err(de)?
                .label(band_label.as_str())
                .legend(|(x, y)| Rectangle::new([(x, y - 6), (x + 20, y + 6)], BAND.filled()));
            let color = line.color;
            chart
                .draw_series(LineSeries::new(
                    line.points.iter().copied(),
                    color.stroke_width(2),
                ))
                .map_err(de)?
                .label(line.label.as_str())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(3))
                });
            legend = true;
        }
        Chart::Lines {
            series,
            markers,
            shade,
            ..
        } => {
            if let Some(sh) = shade {
                draw_shade(&mut chart, sh, (x1, y0, y1))?;
            }
            for s in series {
                let color = s.color;
                // A wide stroke over many near-vertical segments makes the
                // bitmap backend's stroke polygons overshoot into spikes past
                // the data (and past the axes); a dense series reads as well
                // with a one-pixel line, which has no joins to overshoot.
                let width = if s.points.len() > 300 { 1 } else { 2 };
                chart
                    .draw_series(LineSeries::new(
                        s.points.iter().copied(),
                        color.stroke_width(width),
                    ))
                    .map_err(de)?
                    .label(s.label.as_str())
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(3))
                    });
            }
            legend = series.len() > 1;
            draw_markers(&mut chart, markers, y1)?;
        }
        Chart::Bars { series, .. } => {
            let k = series.len().max(1) as f64;
            let group = 0.8;
            let w = group / k;
            for (i, s) in series.iter().enumerate() {
                let color = s.color;
                let off = -group / 2.0 + i as f64 * w;
                chart
                    .draw_series(s.points.iter().map(|&(x, y)| {
                        Rectangle::new([(x + off, 0.0), (x + off + w * 0.92, y)], color.filled())
                    }))
                    .map_err(de)?
                    .label(s.label.as_str())
                    .legend(move |(x, y)| {
                        Rectangle::new([(x, y - 6), (x + 14, y + 6)], color.filled())
                    });
            }
            legend = series.len() > 1;
        }
        Chart::Scatter {
            points,
            front_label,
        } => {
            let mut front: Vec<(f64, f64)> = points
                .iter()
                .filter(|p| p.front)
                .map(|p| (p.x, p.y))
                .collect();
            front.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
            let bar = RGBColor(150, 150, 150).stroke_width(2);
            chart
                .draw_series(points.iter().flat_map(|p| {
                    let v = p.y_ci.map(|(lo, hi)| vec![(p.x, lo), (p.x, hi)]);
                    let h = p.x_ci.map(|(lo, hi)| vec![(lo, p.y), (hi, p.y)]);
                    v.into_iter()
                        .chain(h)
                        .map(move |line| PathElement::new(line, bar))
                }))
                .map_err(de)?;
            chart
                .draw_series(LineSeries::new(
                    front.iter().copied(),
                    VERMILLION.stroke_width(2),
                ))
                .map_err(de)?
                .label(front_label.as_str())
                .legend(|(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], VERMILLION.stroke_width(3))
                });
            chart
                .draw_series(
                    points
                        .iter()
                        .filter(|p| !p.front)
                        .map(|p| Circle::new((p.x, p.y), 5, BLUE.filled())),
                )
                .map_err(de)?
                .label("dominated setting")
                .legend(|(x, y)| Circle::new((x + 10, y), 5, BLUE.filled()));
            chart
                .draw_series(
                    points
                        .iter()
                        .filter(|p| p.front)
                        .map(|p| Circle::new((p.x, p.y), 7, VERMILLION.filled())),
                )
                .map_err(de)?;
            chart
                .draw_series(
                    points
                        .iter()
                        .map(|p| Text::new(format!("  {}", p.label), (p.x, p.y), font(13))),
                )
                .map_err(de)?;
            legend = true;
        }
    }
    if legend {
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .label_font(font(15))
            .background_style(WHITE.mix(0.9))
            .border_style(GRID)
            .margin(10)
            .draw()
            .map_err(de)?;
    }
    Ok(())
}

type Chart2d<'a, DB> = ChartContext<
    'a,
    DB,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// Greys out an x interval (the warm-up) with its label at the top.
fn draw_shade<DB: DrawingBackend>(
    chart: &mut Chart2d<'_, DB>,
    (a, b, label): &(f64, f64, String),
    (x1, y0, y1): (f64, f64, f64),
) -> anyhow::Result<()> {
    chart
        .draw_series(std::iter::once(Rectangle::new(
            [(*a, y0), (b.min(x1), y1)],
            SHADE.filled(),
        )))
        .map_err(de)?;
    chart
        .draw_series(std::iter::once(Text::new(
            label.clone(),
            (*a, y1 - 0.03 * (y1 - y0)),
            font(13).color(&RGBColor(110, 110, 110)),
        )))
        .map_err(de)?;
    Ok(())
}

/// An axis range around the values with 8% margins (room for labels), or a
/// unit range when there are none.
fn span(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    let pad = if hi > lo {
        (hi - lo) * 0.08
    } else {
        lo.abs().max(1.0) * 0.1
    };
    (lo - pad, hi + pad * 2.5)
}

fn draw_markers<DB: DrawingBackend>(
    chart: &mut ChartContext<
        '_,
        DB,
        Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
    >,
    markers: &[(f64, String)],
    y_top: f64,
) -> anyhow::Result<()> {
    for (i, (x, label)) in markers.iter().enumerate() {
        let color = [VERMILLION, INK, GREEN][i % 3];
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(*x, 0.0), (*x, y_top)],
                color.stroke_width(2),
            )))
            .map_err(de)?;
        // Labels step down so neighbouring markers do not print over each other.
        let y = y_top * (0.97 - 0.07 * i as f64);
        chart
            .draw_series(std::iter::once(Text::new(
                format!(" {label} = {}", fmt_num(*x)),
                (*x, y),
                font(15).color(&color),
            )))
            .map_err(de)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata;
    use mmsim_core::metrics::dist::Sorted;

    fn input<'a>(r: &'a testdata::Run) -> ReportInput<'a> {
        r.input()
    }

    #[test]
    fn team_run_gets_every_plot_and_duel_run_only_its_own() {
        let team = testdata::team_run();
        let names: Vec<_> = plot_specs(&input(&team)).iter().map(|p| p.name).collect();
        assert_eq!(
            names,
            [
                "wait_hist",
                "wait_cdf",
                "wait_by_decile",
                "wait_by_role",
                "wait_by_region",
                "spread_hist",
                "team_gap_hist",
                "survivors_hist",
                "gold_integral_hist",
                "queue_length",
                "rank_corr"
            ]
        );
        let duel = testdata::duel_run();
        let names: Vec<_> = plot_specs(&input(&duel)).iter().map(|p| p.name).collect();
        assert_eq!(
            names,
            [
                "wait_hist",
                "wait_cdf",
                "wait_by_decile",
                "spread_hist",
                "queue_length"
            ]
        );
    }

    #[test]
    fn empty_run_has_no_plots() {
        let r = testdata::Run::from_records(mmsim_core::metrics::RunRecords::default());
        assert!(run_plots(&input(&r)).unwrap().is_empty());
    }

    #[test]
    fn svg_and_png_repeat_byte_for_byte_and_use_the_embedded_font() {
        let r = testdata::team_run();
        let a = run_plots(&input(&r)).unwrap();
        let b = run_plots(&input(&r)).unwrap();
        assert_eq!(a, b);
        for p in &a {
            assert!(
                p.svg.contains(&format!("font-family=\"{FONT}\"")),
                "{}",
                p.name
            );
            assert!(p.svg.contains(&p.title), "{}", p.name);
            assert_eq!(&p.png[..8], b"\x89PNG\r\n\x1a\n");
        }
    }

    #[test]
    fn bins_cover_every_value_and_cut_only_long_tails() {
        let v: Vec<f64> = (0..1000).map(|i| i as f64 / 10.0).collect();
        let (bins, cut) = bin(&Sorted::new(v.clone()));
        assert_eq!(cut, 0);
        assert_eq!(bins.iter().map(|b| b.count).sum::<u64>(), 1000);
        assert_eq!(bins[0].lo, 0.0);
        let mut tail = v.clone();
        tail.push(10_000.0);
        let (bins, cut) = bin(&Sorted::new(tail));
        // The cut is at the 99.5th percentile (99.5): 99.6 to 99.9 go, and the outlier.
        assert_eq!(cut, 5);
        assert_eq!(bins.iter().map(|b| b.count).sum::<u64>() + cut, 1001);
        assert!(bins.last().unwrap().hi < 200.0);
        let (bins, _) = bin(&Sorted::new(vec![5.0, 5.0]));
        assert_eq!(bins.iter().map(|b| b.count).sum::<u64>(), 2);
    }

    #[test]
    fn quantiles_interpolate_and_numbers_print_short() {
        let s = Sorted::new(vec![1.0, 2.0, 3.0, 4.0]);
        assert_eq!(quantile(&s, 0.5), 2.5);
        assert_eq!(quantile(&s, 1.0), 4.0);
        assert_eq!(fmt_num(0.1 + 0.2), "0.3");
        assert_eq!(fmt_num(1500.0), "1500");
        assert_eq!(fmt_num(25_000.0), "25k");
        assert_eq!(fmt_num(3_250_000.0), "3.25M");
        assert_eq!(fmt_num(-0.0001), "0");
        assert_eq!(nice_step(0.37), 0.5);
        assert_eq!(nice_step(13.0), 20.0);
    }

    /// Rows (top, bottom) of the pixels of `color` in the PNG, over columns `x0..x1`.
    fn png_rows(png: &[u8], color: RGBColor, (x0, x1): (u32, u32)) -> (u32, u32) {
        let img = image::load_from_memory_with_format(png, image::ImageFormat::Png)
            .unwrap()
            .to_rgb8();
        let mut rows = (u32::MAX, 0);
        for (x, y, p) in img.enumerate_pixels() {
            if (x0..x1).contains(&x) && p.0 == [color.0, color.1, color.2] {
                rows = (rows.0.min(y), rows.1.max(y));
            }
        }
        rows
    }

    /// The points of every SVG `<tag>` element whose `attr` is `color`.
    fn svg_shapes(svg: &str, tag: &str, attr: &str, color: RGBColor) -> Vec<Vec<(f64, f64)>> {
        let want = format!("{attr}=\"#{:02X}{:02X}{:02X}\"", color.0, color.1, color.2);
        svg.split(&format!("<{tag} "))
            .skip(1)
            .map(|el| &el[..el.find("/>").unwrap()])
            .filter(|el| el.contains(&want))
            .map(|el| {
                let pts = el.split("points=\"").nth(1).unwrap();
                let pts = &pts[..pts.find('"').unwrap()];
                pts.split_whitespace()
                    .map(|xy| {
                        let (x, y) = xy.split_once(',').unwrap();
                        (x.parse().unwrap(), y.parse().unwrap())
                    })
                    .collect()
            })
            .collect()
    }

    /// The bitmap once drew spikes past the data where the SVG was right:
    /// the queue plot's line and band must reach the same highest and lowest
    /// pixel rows in both files. The legend (upper right) is left out by
    /// comparing only the columns left of it.
    #[test]
    fn png_and_svg_of_the_queue_plot_reach_the_same_extremes() {
        let mut r = testdata::team_run();
        // A day of samples every 30 s with a noisy, peaked queue.
        r.view.queue = (0..2880u64)
            .map(|k| mmsim_core::metrics::QueueSample {
                t: mmsim_core::model::SimTime::from_ms(k * 30_000),
                waiting_tickets: ((k * 7919) % 13 + if (1000..1100).contains(&k) { 40 } else { 0 })
                    as u32,
                waiting_players: 0,
                players_in_matches: 0,
                matches_formed: 0,
                rating_skill_rank_corr: None,
            })
            .collect();
        r.summary.by_hour[0].queue_max_tickets = Some(52);
        let mut inp = r.input();
        inp.duration_s = 86_400.0;
        let spec = queue_length(&inp).unwrap();
        let p = render(&spec).unwrap();
        let lines = svg_shapes(&p.svg, "polyline", "stroke", BLUE);
        let line = lines.iter().max_by_key(|l| l.len()).unwrap();
        assert_eq!(line.len(), 24, "one point per hour");
        let legend_x = lines
            .iter()
            .filter(|l| l.len() == 2)
            .map(|l| l[0].0)
            .fold(f64::INFINITY, f64::min);
        assert!(legend_x.is_finite() && legend_x > 500.0, "{legend_x}");
        let cols = (0, legend_x as u32 - 10);
        let inside = |pts: &[(f64, f64)]| -> (f64, f64) {
            pts.iter()
                .filter(|p| p.0 < f64::from(cols.1))
                .fold((f64::INFINITY, 0.0), |(a, b), p| {
                    (a.min(p.1), f64::max(b, p.1))
                })
        };
        let (svg_top, svg_bottom) = inside(line);
        let (png_top, png_bottom) = png_rows(&p.png, BLUE, cols);
        assert!(
            (f64::from(png_top) - svg_top).abs() <= 2.0,
            "line top: png {png_top} svg {svg_top}"
        );
        assert!(
            (f64::from(png_bottom) - svg_bottom).abs() <= 2.0,
            "line bottom: png {png_bottom} svg {svg_bottom}"
        );
        let band = svg_shapes(&p.svg, "polygon", "fill", BAND);
        let band = band.iter().max_by_key(|b| b.len()).unwrap();
        let (svg_top, svg_bottom) = inside(band);
        let (png_top, png_bottom) = png_rows(&p.png, BAND, cols);
        assert!(
            (f64::from(png_top) - svg_top).abs() <= 2.0,
            "band top: png {png_top} svg {svg_top}"
        );
        assert!(
            (f64::from(png_bottom) - svg_bottom).abs() <= 2.0,
            "band bottom: png {png_bottom} svg {svg_bottom}"
        );
        // The band's top is the data's maximum (52 tickets) on the axis.
        assert!(
            spec.caption.contains("at most 52 tickets"),
            "{}",
            spec.caption
        );
    }
}
