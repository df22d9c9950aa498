//! The registry of a run's plots: every plot `report.html` can show is one
//! entry of `RUN_PLOTS`, in page order. To add a plot, write a builder
//! (`fn(&ReportInput) -> Option<Spec>`, `None` when the run has no data for
//! it) beside its kin and add one line here; the chart model (`chart`) draws
//! it and every page lists it.

mod engagement;
mod explain;
mod modes;
mod regions;
mod roles;
mod run;

use crate::chart::{render, Plot, Series, Spec, BLUE, ORANGE};
use crate::input::ReportInput;
use anyhow::Context;

/// The p50 and p90 bars of a wait-by-group plot (decile, role, region,
/// mode), in the colours every such plot uses.
fn wait_series(p50: Vec<(f64, f64)>, p90: Vec<(f64, f64)>) -> Vec<Series> {
    vec![
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
    ]
}

/// Builds one plot's description from a finished run, or `None` when the
/// run has nothing to draw in it.
pub type Builder = fn(&ReportInput) -> Option<Spec>;

/// Every plot of a run's report, in the order the page shows them.
pub const RUN_PLOTS: &[Builder] = &[
    run::wait_hist,
    run::wait_cdf,
    run::wait_by_decile,
    roles::wait_by_role,
    regions::wait_by_region,
    modes::wait_by_mode,
    engagement::active_players,
    engagement::churn_by_decile,
    explain::blocked_by_wait,
    run::spread_hist,
    run::team_gap_hist,
    run::survivors_hist,
    run::gold_integral_hist,
    run::queue_length,
    run::wait_by_hour,
    run::ladder_by_hour,
    run::upset_by_gap,
    run::rank_corr,
];

/// The plots the run has data for, drawn, in a fixed order.
pub fn run_plots(input: &ReportInput) -> anyhow::Result<Vec<Plot>> {
    plot_specs(input)
        .iter()
        .map(|s| render(s).with_context(|| format!("drawing plot {}", s.name)))
        .collect()
}

/// Describes every plot whose data the run has; a plot without data is left out.
pub fn plot_specs(input: &ReportInput) -> Vec<Spec> {
    RUN_PLOTS.iter().filter_map(|build| build(input)).collect()
}

#[cfg(test)]
mod tests {
    use super::run::{bin, nice_step, quantile, queue_length};
    use super::*;
    use crate::chart::{BAND, BLUE, FONT};
    use crate::testdata;
    use mmsim_core::metrics::dist::Sorted;
    use plotters::style::RGBColor;

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
        assert_eq!(crate::number::tick(0.1 + 0.2), "0.3");
        assert_eq!(crate::number::tick(1500.0), "1500");
        assert_eq!(crate::number::tick(25_000.0), "25k");
        assert_eq!(crate::number::tick(3_250_000.0), "3.25M");
        assert_eq!(crate::number::tick(-0.0001), "0");
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
