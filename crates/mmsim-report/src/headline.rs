//! The headline strip at the top of a report: the handful of figures that
//! answer "how long do players wait, how many give up, how many matches,
//! how fair are they", warm-up excluded, each with its one-line meaning from
//! `metrics::summary::MEANINGS`. A replicated run fills in each figure's 95%
//! interval; a single run leaves them `None`.

use crate::number;
use crate::page::esc;
use mmsim_core::metrics::summary::meaning;
use mmsim_core::metrics::Summary;
use std::fmt::Write as _;

/// How a figure is printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    Seconds,
    /// A share between 0 and 1, printed in percent.
    Share,
    /// A probability distance, printed in percentage points.
    ProbabilityPoints,
    PerHour,
    /// A count or measure in the named unit (e.g. `rating points`).
    Named(&'static str),
}

/// One figure of the strip.
#[derive(Clone, Debug, PartialEq)]
pub struct Headline {
    /// Its path in `summary.json` (`wait_s.p50`), so it can be checked against it.
    pub key: String,
    pub label: &'static str,
    pub value: Option<f64>,
    pub unit: Unit,
    /// The 95% interval over replications, in the value's own unit.
    pub ci95: Option<(f64, f64)>,
    pub meaning: &'static str,
}

impl Headline {
    fn new(key: &str, label: &'static str, value: Option<f64>, unit: Unit) -> Headline {
        Headline {
            key: key.to_string(),
            label,
            value,
            unit,
            ci95: None,
            meaning: meaning(key).unwrap_or(""),
        }
    }
}

/// The strip's figures for a summary, in a fixed order: waits, abandon rate,
/// throughput, spread, then the balance measures the format has.
pub fn headlines(s: &Summary) -> Vec<Headline> {
    use Unit::*;
    let mut h = vec![
        Headline::new("wait_s.p50", "wait p50", s.wait_s.p50, Seconds),
        Headline::new("wait_s.p90", "wait p90", s.wait_s.p90, Seconds),
        Headline::new("wait_s.p99", "wait p99", s.wait_s.p99, Seconds),
        Headline::new("abandon_rate", "abandon rate", s.abandon_rate, Share),
        Headline::new(
            "matches_per_hour",
            "matches per hour",
            Some(s.matches_per_hour),
            PerHour,
        ),
        Headline::new(
            "concurrent_players.mean",
            "concurrent players, mean",
            s.concurrent_players.mean,
            Named("players"),
        ),
        Headline::new(
            "spread_rating.mean",
            "rating spread, mean",
            s.spread_rating.mean,
            Named("pts"),
        ),
        Headline::new(
            "win_prob_gap.mean",
            "win-probability gap, mean",
            s.win_prob_gap.mean,
            ProbabilityPoints,
        ),
        Headline::new("upset_rate", "upset rate", s.upset_rate, Share),
    ];
    if let Some(t) = &s.team {
        h.push(Headline::new(
            "team_rating_gap.mean",
            "team rating gap, mean",
            t.team_rating_gap.mean,
            Named("pts"),
        ));
        h.push(Headline::new(
            "win_rate_gap_pp.within_1",
            "win-rate gap ≤ 1 pp",
            t.win_rate_gap_pp.within_1,
            Share,
        ));
    }
    if s.survivors_hist.is_some() {
        h.push(Headline::new(
            "survivors_10_plus_share",
            "10+ survivors",
            s.survivors_10_plus_share,
            Share,
        ));
    }
    if let Some(g) = &s.gold_integral {
        h.push(Headline::new(
            "gold_integral.p50",
            "gold integral p50",
            g.p50,
            Named("gold-min"),
        ));
    }
    h
}

/// A value in its unit, as the strip prints it: the same digits as the
/// report's tables (`number`), shares in percent.
pub fn fmt_figure(v: f64, unit: Unit) -> String {
    match unit {
        Unit::Seconds => format!("{} s", number::glance(v)),
        Unit::Share => format!("{}%", number::glance(100.0 * v)),
        Unit::ProbabilityPoints => format!("{} pp", number::glance(100.0 * v)),
        Unit::PerHour => format!("{} /h", number::glance(v)),
        Unit::Named(u) => format!("{} {u}", number::glance(v)),
    }
}

/// The strip as HTML: one card per figure, wrapping to the page's width.
pub fn strip_html(figures: &[Headline]) -> String {
    let mut h =
        String::from("<section id=\"headline\" class=\"strip\" aria-label=\"headline figures\">\n");
    for fig in figures {
        let value = fig
            .value
            .map_or("–".to_string(), |v| fmt_figure(v, fig.unit));
        let ci = fig.ci95.map_or(String::new(), |(lo, hi)| {
            format!(
                "<div class=\"ci\">95% interval {} to {}</div>",
                esc(&fmt_figure(lo, fig.unit)),
                esc(&fmt_figure(hi, fig.unit))
            )
        });
        let _ = writeln!(
            h,
            "<div class=\"card\" data-key=\"{key}\"><div class=\"label\">{label}</div>\
             <div class=\"value\">{value}</div>{ci}<div class=\"means\">{meaning}</div></div>",
            key = esc(&fig.key),
            label = esc(fig.label),
            value = esc(&value),
            meaning = esc(fig.meaning),
        );
    }
    h.push_str("</section>\n");
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata;

    /// Every figure is the summary's value at its key, and means something.
    #[test]
    fn each_figure_is_the_summary_value_at_its_key() {
        let r = testdata::team_run();
        let v = r.summary.to_value();
        let figs = headlines(&r.summary);
        assert!(figs.len() >= 12, "team run has every section");
        for f in &figs {
            let mut at = &v;
            for part in f.key.split('.') {
                at = &at[part];
            }
            assert_eq!(at.as_f64(), f.value, "{}", f.key);
            assert!(!f.meaning.is_empty(), "{} has no meaning", f.key);
        }
        let duel = headlines(&testdata::duel_run().summary);
        assert!(duel.iter().all(|f| !f.key.starts_with("gold")
            && !f.key.starts_with("survivors")
            && !f.key.starts_with("team_rating_gap")));
    }

    #[test]
    fn a_replicated_figure_shows_its_interval_and_a_missing_one_a_dash() {
        let mut figs = headlines(&testdata::team_run().summary);
        figs[0].ci95 = Some((10.0, 12.5));
        figs[1].value = None;
        let h = strip_html(&figs);
        assert!(h.contains("95% interval 10 s to 12.5 s"));
        assert_eq!(h.matches("95% interval").count(), 1);
        assert!(h.contains("<div class=\"label\">wait p90</div><div class=\"value\">–</div>"));
        assert!(!h.contains("NaN"));
    }

    #[test]
    fn shares_print_in_percent() {
        assert_eq!(fmt_figure(0.1234, Unit::Share), "12.3%");
        assert_eq!(fmt_figure(0.037_09, Unit::Share), "3.71%");
        assert_eq!(fmt_figure(0.05, Unit::ProbabilityPoints), "5 pp");
        assert_eq!(fmt_figure(300.909, Unit::PerHour), "301 /h");
        assert_eq!(fmt_figure(29.482, Unit::Seconds), "29.5 s");
        assert_eq!(
            fmt_figure(206_695.0, Unit::Named("gold-min")),
            "207k gold-min"
        );
        assert_eq!(fmt_figure(31_250_000.0, Unit::PerHour), "31.2M /h");
    }
}
