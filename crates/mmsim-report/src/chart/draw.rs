//! Draws the one-run kinds of chart (histograms, lines, a line in its
//! band, bars, scatter) with plotters; `bands.rs` draws the over-seeds kinds.

use super::{de, font, padded_max, Chart, Spec, BLUE, GREEN, GRID, GRID_LIGHT, INK, VERMILLION};
use crate::number;
use plotters::coord::Shift;
use plotters::prelude::*;

const SHADE: RGBColor = RGBColor(236, 236, 236);
/// The band around a line: BLUE lightened, opaque so the PNG and SVG agree pixel for pixel.
pub(crate) const BAND: RGBColor = RGBColor(178, 212, 232);

pub(super) fn draw<DB: DrawingBackend>(
    spec: &Spec,
    root: &DrawingArea<DB, Shift>,
) -> anyhow::Result<()> {
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
        Chart::Seeds(_) => unreachable!("chart::draw sends over-seeds charts to bands.rs"),
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
            return number::tick(r);
        }
        number::tick(*v)
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
        Chart::Seeds(_) => unreachable!("chart::draw sends over-seeds charts to bands.rs"),
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
                format!(" {label} = {}", number::tick(*x)),
                (*x, y),
                font(15).color(&color),
            )))
            .map_err(de)?;
    }
    Ok(())
}
