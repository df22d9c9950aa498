//! The one chart model: a plot described as plain data (`Spec`, whose
//! `Chart` says what kind of chart), drawn by one routine to both PNG and
//! SVG, so the two formats always show the same thing. Every page (run,
//! replicated run, sweep, comparison, fit, `mmsim serve`) builds `Spec`s and
//! calls `render`; none draws with plotters itself. Text uses the embedded
//! DejaVu Sans, never a system font, so output is the same on every machine.

mod bands;
mod draw;

#[cfg(test)]
pub(crate) use draw::BAND;

use crate::artifact::Artifact;
use anyhow::anyhow;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;
use std::sync::OnceLock;

pub const PLOT_DIR: &str = "plots";
/// Pixel size of every plot (and the SVG's nominal size).
pub const SIZE: (u32, u32) = (960, 540);

/// The family name the font is registered under. It doubles as the SVG
/// `font-family` value, so it is written as a CSS list: viewers that have
/// DejaVu Sans show exactly what the PNG shows, others fall back to a sans font.
pub(crate) const FONT: &str = "DejaVu Sans, sans-serif";
static FONT_BYTES: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");

/// Okabe-Ito colours: distinguishable with the common colour-vision deficiencies.
pub const BLUE: RGBColor = RGBColor(0, 114, 178);
pub const ORANGE: RGBColor = RGBColor(230, 159, 0);
pub const VERMILLION: RGBColor = RGBColor(213, 94, 0);
pub const GREEN: RGBColor = RGBColor(0, 158, 115);
pub const INK: RGBColor = RGBColor(33, 33, 33);
pub const GRID: RGBColor = RGBColor(225, 225, 225);
pub const GRID_LIGHT: RGBColor = RGBColor(242, 242, 242);

/// Colours of the series in order (Okabe-Ito), for pages that overlay runs.
pub const PALETTE: [RGBColor; 6] = [
    BLUE,
    VERMILLION,
    GREEN,
    ORANGE,
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
];

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

/// What kind of chart a `Spec` draws, with its data.
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
    /// A figure measured over several seeds: each point a mean with its 95%
    /// interval (drawn by `bands.rs`).
    Seeds(BandChart),
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

/// (x, mean, its 95% interval when there are two seeds or more); x is a
/// category index for `Bars`.
pub type BandPoint = (f64, f64, Option<(f64, f64)>);

/// One series: at each x, the mean and, when there are two seeds or more,
/// its interval.
#[derive(Clone, Debug)]
pub struct BandSeries {
    pub label: String,
    pub color: RGBColor,
    pub points: Vec<BandPoint>,
}

#[derive(Clone, Debug)]
pub enum BandChart {
    /// Lines with a shaded interval band under each.
    Lines {
        series: Vec<BandSeries>,
        x_range: (f64, f64),
        y_range: (f64, f64),
    },
    /// Grouped bars with whiskers, one group per category.
    Bars {
        categories: Vec<String>,
        series: Vec<BandSeries>,
    },
    /// Points with whiskers joined in x order (a metric against a swept key).
    Points { series: Vec<BandSeries> },
}

/// Each plot as its two files, `plots/NAME.png` and `plots/NAME.svg`: every
/// page (run, replicated run, sweep, comparison) writes its plots this way.
pub fn plot_artifacts(plots: &[Plot]) -> impl Iterator<Item = Artifact> + '_ {
    plots.iter().flat_map(|p| {
        [
            Artifact {
                name: format!("{}/{}.png", PLOT_DIR, p.name),
                bytes: p.png.clone(),
            },
            Artifact {
                name: format!("{}/{}.svg", PLOT_DIR, p.name),
                bytes: p.svg.clone().into_bytes(),
            },
        ]
    })
}

/// An axis top with 5% room above the highest value, or 1 when there is none.
pub fn padded_max(v: f64) -> f64 {
    if v > 0.0 {
        v * 1.05
    } else {
        1.0
    }
}

pub(crate) fn ensure_font() -> anyhow::Result<()> {
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
pub(crate) fn encode_png(rgb: &[u8], w: u32, h: u32) -> anyhow::Result<Vec<u8>> {
    use image::ImageEncoder;
    let mut out = Vec::new();
    image::codecs::png::PngEncoder::new(&mut out).write_image(rgb, w, h, image::ColorType::Rgb8)?;
    Ok(out)
}

pub(crate) fn de<E: std::error::Error + Send + Sync>(e: DrawingAreaErrorKind<E>) -> anyhow::Error {
    anyhow!("plot drawing failed: {e}")
}

pub(crate) fn font(size: u32) -> TextStyle<'static> {
    (FONT, size).into_font().color(&INK)
}

/// Draws a spec to one backend: the over-seeds charts have their own
/// routine (bands and whiskers), every other kind the one-run routine.
fn draw<DB: DrawingBackend>(spec: &Spec, root: &DrawingArea<DB, Shift>) -> anyhow::Result<()> {
    match &spec.chart {
        Chart::Seeds(c) => bands::draw(spec, c, root),
        _ => draw::draw(spec, root),
    }
}
