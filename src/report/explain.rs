//! What held tickets back, as text: one ticket's story (`mmsim explain`)
//! and the summary's per-rule figures.

use crate::metrics::explain::{BlockRule, TicketStory};
use std::fmt::Write as _;

fn secs(s: f64) -> String {
    format!("{:.1} s", s)
}

/// One ticket's story, several lines.
pub fn ticket_story(s: &TicketStory) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "ticket {}: party of {}, rating {:.0}, joined at {}",
        s.ticket_id,
        s.party_size,
        s.rating,
        secs(s.enqueued_s)
    );
    let waited = s.left_s - s.enqueued_s;
    let ended = match (s.outcome.as_str(), s.match_id) {
        ("matched", Some(m)) => format!("matched into match {m}"),
        ("abandoned", _) => "gave up".to_owned(),
        ("declined", _) => "declined the ready check".to_owned(),
        ("waiting", _) => "still waiting when the run ended".to_owned(),
        (other, _) => other.to_owned(),
    };
    let _ = writeln!(
        o,
        "  {ended} after {} (at {})",
        secs(waited),
        secs(s.left_s)
    );
    let name = |r: Option<BlockRule>| r.map_or("-", BlockRule::name);
    let _ = writeln!(
        o,
        "  looked at in {} pass(es); first blocked by {}, last by {}",
        s.looks,
        name(s.first_blocker),
        name(s.last_blocker)
    );
    if !s.blocked_s.is_empty() {
        let _ = writeln!(o, "  time held back, by rule:");
        for (rule, t) in &s.blocked_s {
            let share = if waited > 0.0 {
                t / waited * 100.0
            } else {
                0.0
            };
            let _ = writeln!(
                o,
                "    {:<14} {:>10} ({share:.0}% of the wait)",
                rule.name(),
                secs(*t)
            );
        }
    }
    if !s.candidates.is_empty() {
        let _ = writeln!(o, "  nearest candidates at the last look:");
        for c in &s.candidates {
            let window = match (c.window, c.their_window) {
                (Some(w), Some(t)) => format!(", windows {w:.0} / {t:.0}"),
                _ => String::new(),
            };
            let _ = writeln!(
                o,
                "    ticket {:<8} rating {:>7.0}  {:>5.0} apart{window}: {}",
                c.ticket_id,
                c.rating,
                c.distance,
                c.blocked_by.map_or("allowed", BlockRule::name)
            );
        }
    }
    if let Some(gap) = s.match_gap {
        let _ = writeln!(o, "  the match it got spans {gap:.0} rating points from it");
        match s.window_allowed_at_s {
            Some(at) => {
                let _ = writeln!(
                    o,
                    "    its rating window first allowed that gap at {} of waiting ({} before it matched)",
                    secs(at),
                    secs((waited - at).max(0.0))
                );
            }
            None => {
                let _ = writeln!(o, "    the policy reports no rating window");
            }
        }
    }
    if let Some(at) = s.latency_allowed_at_s {
        let _ = writeln!(
            o,
            "    its latency limit first allowed the host at {} of waiting",
            secs(at)
        );
    }
    o
}
