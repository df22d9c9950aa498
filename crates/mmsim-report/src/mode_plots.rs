//! What game modes add to a run's report, only when the run has `[modes]`,
//! from the summary's own figures: the wait-by-mode plot and a short
//! section with the per-mode table.

use super::plots::{Chart, Series, Spec, BLUE, ORANGE};
use mmsim_core::metrics::modes::QueuedFigures;
use mmsim_core::metrics::Summary;

/// One bar group: its name, wait p50 and p90 (s).
type Row = (String, Option<f64>, Option<f64>);

/// Median and 90th-percentile wait by mode, then of the multi-queued tickets
/// and of the single-queued ones they compare with, from `summary.json`'s
/// `modes`, so the bars are its numbers.
pub(super) fn wait_by_mode(summary: &Summary) -> Option<Spec> {
    let modes = summary.modes.as_ref()?;
    let mut rows: Vec<Row> = modes
        .by_mode
        .iter()
        .map(|m| (m.mode.clone(), m.wait_p50_s, m.wait_p90_s))
        .collect();
    let group = |name: &str, g: &QueuedFigures| (name.to_owned(), g.wait_p50_s, g.wait_p90_s);
    if modes.multi_queued.tickets > 0 {
        rows.push(group("multi-queued", &modes.multi_queued));
        rows.push(group("single-queued", &modes.single_queued));
    }
    if rows.iter().all(|r| r.1.is_none()) {
        return None;
    }
    let bars = |f: fn(&Row) -> Option<f64>| -> Vec<(f64, f64)> {
        rows.iter()
            .enumerate()
            .filter_map(|(i, r)| Some((i as f64, f(r)?)))
            .collect()
    };
    let matched: u64 = modes.by_mode.iter().map(|m| m.matched).sum();
    Some(Spec {
        name: "wait_by_mode",
        title: "Wait by game mode".into(),
        caption: if modes.multi_queued.tickets > 0 {
            format!(
                "Median and 90th-percentile wait of the {matched} matched tickets enqueued after \
                 warm-up, by the mode that matched them; then the tickets that queued for several \
                 modes at once against those that queued for one mode of the same set. The same \
                 figures as modes in summary.json, which also gives each mode's abandon rate, \
                 matches and match quality, and where the multi-queued tickets were matched."
            )
        } else {
            // No ticket queued for several modes: no such bars to explain.
            format!(
                "Median and 90th-percentile wait of the {matched} matched tickets enqueued after \
                 warm-up, by the mode that matched them. The same figures as modes in \
                 summary.json, which also gives each mode's abandon rate, matches and match \
                 quality."
            )
        },
        x_desc: "mode".into(),
        y_desc: "wait in queue (s)".into(),
        chart: Chart::Bars {
            categories: rows.iter().map(|r| r.0.clone()).collect(),
            series: vec![
                Series {
                    label: "p50".into(),
                    color: BLUE,
                    points: bars(|r| r.1),
                },
                Series {
                    label: "p90".into(),
                    color: ORANGE,
                    points: bars(|r| r.2),
                },
            ],
        },
    })
}

/// The report's game-mode section: per mode and for the multi-queued
/// tickets against the single-queued, the summary's figures as a table.
pub(super) fn html_section(h: &mut String, m: &mmsim_core::metrics::modes::ModesSummary) {
    use std::fmt::Write;
    let opt = |v: Option<f64>, scale: f64, digits: usize| {
        v.map_or_else(|| "–".to_owned(), |x| format!("{:.*}", digits, x * scale))
    };
    // Without multi-queued tickets the comparison rows and their column
    // would be empty: left out, with the sentence that explains them.
    let multi = m.multi_queued.tickets > 0 || m.single_queued.tickets > 0;
    h.push_str(
        "<section id=\"modes\">\n<h2>Game modes</h2>\n<p class=\"note\">Each ticket enqueued after \
         warm-up counts in one mode: the one that matched it, or, if none did, the mode it drew.",
    );
    if multi {
        h.push_str(
            " Multi-queued tickets waited in every mode of the multi-queue set at once and left the \
             others when one matched them; the single-queued row holds the tickets that waited in one \
             mode of that set.",
        );
    }
    h.push_str(
        "</p>\n<table>\n<tr><th>mode</th><th>tickets</th><th>wait p50 (s)</th>\
         <th>wait p90 (s)</th><th>abandon</th><th>matches</th>",
    );
    h.push_str(if multi {
        "<th>multi-queued matched here</th></tr>\n"
    } else {
        "</tr>\n"
    });
    for f in &m.by_mode {
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}%</td><td>{}</td>",
            super::html::esc(&f.mode),
            f.tickets,
            opt(f.wait_p50_s, 1.0, 1),
            opt(f.wait_p90_s, 1.0, 1),
            opt(f.abandon_rate, 100.0, 1),
            f.matches,
        );
        if multi {
            let _ = write!(
                h,
                "<td>{}%</td>",
                opt(f.multi_queued_matched_share, 100.0, 1)
            );
        }
        h.push_str("</tr>\n");
    }
    if multi {
        for (name, g) in [
            ("multi-queued", &m.multi_queued),
            ("single-queued", &m.single_queued),
        ] {
            let _ = writeln!(
                h,
                "<tr><td><em>{name}</em></td><td>{}</td><td>{}</td><td>{}</td><td>{}%</td><td></td><td></td></tr>",
                g.tickets,
                opt(g.wait_p50_s, 1.0, 1),
                opt(g.wait_p90_s, 1.0, 1),
                opt(g.abandon_rate, 100.0, 1),
            );
        }
    }
    h.push_str("</table>\n");
    let refused: Vec<String> = m
        .by_mode
        .iter()
        .filter_map(|f| {
            f.refused
                .map(|n| format!("{} {n}", super::html::esc(&f.mode)))
        })
        .collect();
    if !refused.is_empty() {
        let _ = writeln!(
            h,
            "<p class=\"note\">Tickets after warm-up refused a mode because a member had not \
             played its <code>unlock_games</code> (they queued in another mode, or were blocked \
             if none was open): {}.</p>",
            refused.join(", ")
        );
    }
    if !m.ladders.is_empty() {
        ladders(h, &m.ladders);
    }
    h.push_str("</section>\n");
}

/// Each separate ladder: its fit to the outcomes, and its solo and party
/// ratings' percentiles beside the true skills' of the same players.
fn ladders(h: &mut String, ladders: &[mmsim_core::metrics::modes::LadderFigures]) {
    use std::fmt::Write;
    let opt = |v: Option<f64>, digits: usize| {
        v.map_or_else(|| "–".to_owned(), |x| format!("{x:.digits$}"))
    };
    h.push_str(
        "<h3>Ladders</h3>\n<p class=\"note\">Each ladder rates only its modes' matches. Over \
         the players who played on it during the run: the Brier score of its matches after \
         warm-up, the rank correlation of its solo ratings with true skill, and its ratings' \
         percentiles beside the true skills' (rating / skill).</p>\n<table>\n<tr><th>ladder</th>\
         <th>modes</th><th>players</th><th>matches</th><th>Brier</th><th>rank corr.</th>\
         <th>rating</th>",
    );
    let pcts = mmsim_core::metrics::modes::LADDER_PERCENTILES;
    for p in pcts {
        let _ = write!(h, "<th>p{p}</th>");
    }
    h.push_str("</tr>\n");
    for l in ladders {
        for (kind, rows) in [("solo", &l.solo), ("party", &l.party)] {
            let head = if kind == "solo" {
                format!(
                    "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
                    super::html::esc(&l.ladder),
                    super::html::esc(&l.modes.join(", ")),
                    l.players,
                    l.matches,
                    opt(l.brier_score, 3),
                    opt(l.rating_skill_rank_corr, 3),
                )
            } else {
                "<td></td><td></td><td></td><td></td><td></td><td></td>".to_owned()
            };
            let _ = write!(h, "<tr>{head}<td>{kind}</td>");
            for r in rows.iter() {
                let _ = write!(h, "<td>{:.0} / {:.0}</td>", r.rating, r.true_skill);
            }
            h.push_str("</tr>\n");
        }
    }
    h.push_str("</table>\n");
}
