//! Draws the over-seeds kinds of chart (`Chart::Seeds`): a mean with its
//! 95% interval as a shaded band around a line (wait CDFs), whiskers on bars
//! (wait by decile) or whiskers on points against a swept key, with the same
//! font, colours and PNG encoding as the one-run kinds.

use super::{de, font, BandChart, BandSeries, Spec, GRID, GRID_LIGHT, INK};
use crate::number;
use plotters::coord::Shift;
use plotters::prelude::*;

fn extent(series: &[BandSeries]) -> ((f64, f64), (f64, f64)) {
    let mut x = (f64::INFINITY, f64::NEG_INFINITY);
    let mut y = (f64::INFINITY, f64::NEG_INFINITY);
    for s in series {
        for &(px, m, band) in &s.points {
            x = (x.0.min(px), x.1.max(px));
            let (lo, hi) = band.unwrap_or((m, m));
            for v in [m, lo, hi] {
                if v.is_finite() {
                    y = (y.0.min(v), y.1.max(v));
                }
            }
        }
    }
    if !x.0.is_finite() {
        x = (0.0, 1.0);
    }
    if !y.0.is_finite() {
        y = (0.0, 1.0);
    }
    (x, y)
}

/// A range with room around the data (and above it for the legend); never empty.
fn pad((lo, hi): (f64, f64), below: f64, above: f64) -> (f64, f64) {
    let w = if hi > lo { hi - lo } else { lo.abs().max(1.0) };
    (lo - below * w, hi + above * w)
}

/// The x and y ranges drawn: every mean and interval inside, room above for the legend.
fn ranges(chart: &BandChart) -> ((f64, f64), (f64, f64)) {
    match chart {
        BandChart::Lines {
            x_range, y_range, ..
        } => (pad(*x_range, 0.0, 0.0), pad(*y_range, 0.0, 0.0)),
        BandChart::Bars { categories, series } => {
            let (_, y) = extent(series);
            (
                (-0.5, categories.len() as f64 - 0.5),
                (0.0_f64.min(y.0), pad((0.0, y.1), 0.0, 0.25).1),
            )
        }
        BandChart::Points { series } => {
            let (x, y) = extent(series);
            (pad(x, 0.08, 0.08), pad(y, 0.1, 0.3))
        }
    }
}

pub(super) fn draw<DB: DrawingBackend>(
    spec: &Spec,
    kind: &BandChart,
    root: &DrawingArea<DB, Shift>,
) -> anyhow::Result<()> {
    root.fill(&WHITE).map_err(de)?;
    let root = root.margin(8, 20, 8, 24);
    let (xr, yr) = ranges(kind);
    let categories: Vec<String> = match kind {
        BandChart::Bars { categories, .. } => categories.clone(),
        _ => Vec::new(),
    };
    let mut chart = ChartBuilder::on(&root)
        .caption(&spec.title, font(26))
        .x_label_area_size(58)
        .y_label_area_size(84)
        .build_cartesian_2d(xr.0..xr.1, yr.0..yr.1)
        .map_err(de)?;
    let x_fmt = |v: &f64| -> String {
        if categories.is_empty() {
            return number::tick(*v);
        }
        let r = v.round();
        if (v - r).abs() > 1e-6 || r < 0.0 {
            return String::new();
        }
        categories.get(r as usize).cloned().unwrap_or_default()
    };
    let y_fmt = |v: &f64| number::tick(*v);
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
    if categories.is_empty() {
        mesh.x_labels(10);
    } else {
        mesh.x_labels(categories.len() + 1).disable_x_mesh();
    }
    mesh.draw().map_err(de)?;
    let whisker = |x: f64, lo: f64, hi: f64, half: f64, c: RGBColor| {
        vec![
            PathElement::new(vec![(x, lo), (x, hi)], darker(c).stroke_width(2)),
            PathElement::new(
                vec![(x - half, lo), (x + half, lo)],
                darker(c).stroke_width(2),
            ),
            PathElement::new(
                vec![(x - half, hi), (x + half, hi)],
                darker(c).stroke_width(2),
            ),
        ]
    };
    match kind {
        BandChart::Lines { series, .. } => {
            for s in series {
                let c = s.color;
                let band: Vec<(f64, f64, f64)> = s
                    .points
                    .iter()
                    .filter_map(|&(x, _, b)| b.map(|(lo, hi)| (x, lo, hi)))
                    .collect();
                if band.len() > 1 {
                    let mut poly: Vec<(f64, f64)> =
                        band.iter().map(|&(x, lo, _)| (x, lo)).collect();
                    poly.extend(band.iter().rev().map(|&(x, _, hi)| (x, hi)));
                    chart
                        .draw_series(std::iter::once(Polygon::new(poly, c.mix(0.22).filled())))
                        .map_err(de)?;
                }
            }
            for s in series {
                let c = s.color;
                chart
                    .draw_series(LineSeries::new(
                        s.points.iter().map(|&(x, m, _)| (x, m)),
                        c.stroke_width(2),
                    ))
                    .map_err(de)?
                    .label(s.label.as_str())
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(3))
                    });
            }
        }
        BandChart::Bars { series, .. } => {
            let k = series.len().max(1) as f64;
            let group = 0.8;
            let w = group / k;
            for (i, s) in series.iter().enumerate() {
                let c = s.color;
                let off = -group / 2.0 + i as f64 * w;
                chart
                    .draw_series(s.points.iter().map(|&(x, y, _)| {
                        Rectangle::new([(x + off, 0.0), (x + off + w * 0.92, y)], c.filled())
                    }))
                    .map_err(de)?
                    .label(s.label.as_str())
                    .legend(move |(x, y)| {
                        Rectangle::new([(x, y - 6), (x + 14, y + 6)], c.filled())
                    });
                for &(x, _, b) in &s.points {
                    if let Some((lo, hi)) = b {
                        let mid = x + off + w * 0.46;
                        chart
                            .draw_series(whisker(mid, lo, hi, w * 0.2, c))
                            .map_err(de)?;
                    }
                }
            }
        }
        BandChart::Points { series } => {
            let half = (xr.1 - xr.0) * 0.008;
            for s in series {
                let c = s.color;
                let mut pts: Vec<(f64, f64)> = s.points.iter().map(|&(x, m, _)| (x, m)).collect();
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                chart
                    .draw_series(LineSeries::new(pts.iter().copied(), c.stroke_width(2)))
                    .map_err(de)?
                    .label(s.label.as_str())
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(3))
                    });
                chart
                    .draw_series(pts.iter().map(|&p| Circle::new(p, 5, c.filled())))
                    .map_err(de)?;
                for &(x, _, b) in &s.points {
                    if let Some((lo, hi)) = b {
                        chart.draw_series(whisker(x, lo, hi, half, c)).map_err(de)?;
                    }
                }
            }
        }
    }
    // A CDF fills the upper right; its lower right is empty.
    let corner = match kind {
        BandChart::Lines { .. } => SeriesLabelPosition::LowerRight,
        _ => SeriesLabelPosition::UpperRight,
    };
    chart
        .configure_series_labels()
        .position(corner)
        .label_font(font(15))
        .background_style(WHITE.mix(0.9))
        .border_style(GRID)
        .margin(10)
        .draw()
        .map_err(de)?;
    Ok(())
}

/// Whiskers in a darker shade of their series, so they show on the bar.
fn darker(c: RGBColor) -> RGBColor {
    RGBColor(c.0 / 2, c.1 / 2, c.2 / 2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chart::{render, Chart, PALETTE};

    fn spec(chart: BandChart) -> Spec {
        Spec {
            name: "t",
            title: "t".into(),
            caption: "c".into(),
            x_desc: "x (s)".into(),
            y_desc: "y".into(),
            chart: Chart::Seeds(chart),
        }
    }

    #[test]
    fn every_kind_draws_the_same_bytes_twice_and_shows_its_interval() {
        let s = BandSeries {
            label: "a".into(),
            color: PALETTE[0],
            points: vec![(0.0, 1.0, Some((0.5, 1.5))), (1.0, 2.0, Some((1.5, 2.5)))],
        };
        for chart in [
            BandChart::Lines {
                series: vec![s.clone()],
                x_range: (0.0, 1.0),
                y_range: (0.0, 3.0),
            },
            BandChart::Bars {
                categories: vec!["1".into(), "2".into()],
                series: vec![s.clone()],
            },
            BandChart::Points {
                series: vec![s.clone()],
            },
        ] {
            let sp = spec(chart);
            let a = render(&sp).unwrap();
            assert_eq!(a, render(&sp).unwrap());
            // The interval is drawn: a polygon (band) or lines beyond the means.
            assert!(a.svg.contains("<polygon") || a.svg.matches("<polyline").count() >= 3);
        }
    }

    #[test]
    fn bars_reach_above_the_highest_whisker() {
        let s = BandSeries {
            label: "a".into(),
            color: PALETTE[1],
            points: vec![(0.0, 10.0, Some((2.0, 40.0)))],
        };
        let bars = BandChart::Bars {
            categories: vec!["1".into()],
            series: vec![s],
        };
        // The y axis must hold the whisker's top (40), not only the bar (10).
        let (_, y) = ranges(&bars);
        let sp = spec(bars);
        assert!(y.0 == 0.0 && y.1 >= 40.0, "{y:?}");
        render(&sp).unwrap();
    }
}
