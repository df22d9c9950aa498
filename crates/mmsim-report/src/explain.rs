//! What held tickets back, as text: one ticket's story (`mmsim explain`)
//! and the summary's per-rule figures.

use mmsim_core::metrics::explain::{BlockRule, SlotBlock, TicketStory};
use std::fmt::Write as _;

fn secs(s: f64) -> String {
    crate::number::places(s, 1, false) + " s"
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
        ("matched", Some(m)) if s.backfill.is_some() => {
            format!("joined running match {m} by backfill")
        }
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
    if let Some(th) = s.threshold {
        let _ = writeln!(
            o,
            "  at the last look a match needed a quality score of {th:.3}"
        );
    }
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
    if let Some(roles) = &s.roles_waiting {
        // The role queue's side of the story: who waited for which slots.
        let each: Vec<String> = roles
            .iter()
            .map(|(name, c)| {
                let mark = if s.short_role.as_deref() == Some(name.as_str()) {
                    " (short)"
                } else if c.slots > 0 && c.waiting >= 2 * c.slots {
                    " (surplus)"
                } else {
                    ""
                };
                format!("{name} {} for {}{mark}", c.waiting, c.slots)
            })
            .collect();
        let _ = writeln!(
            o,
            "  waiting players by role at the last look, against one match's slots: {}",
            each.join(", ")
        );
        if let Some(short) = &s.short_role {
            let _ = writeln!(
                o,
                "    too few accept {short} to staff one match: no match could form, whatever the policy"
            );
        }
    }
    if !s.candidates.is_empty() {
        let _ = writeln!(o, "  nearest candidates at the last look:");
        for c in &s.candidates {
            let mut window = match (c.window, c.their_window) {
                (Some(w), Some(t)) => format!(", windows {w:.0} / {t:.0}"),
                _ => String::new(),
            };
            if let (Some(v), Some(l)) = (c.rule_value, c.rule_limit) {
                let _ = write!(window, ", rule {v:.2} against {l:.2}");
            }
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
            None if s.match_score.is_none() && s.policy_rule.is_none() => {
                let _ = writeln!(o, "    the policy reports no rating window");
            }
            None => {}
        }
    }
    if let (Some(score), Some(at)) = (s.match_score, s.threshold_allowed_at_s) {
        let _ = writeln!(
            o,
            "    the match scored {score:.3}; its falling quality threshold first allowed that at {} of waiting",
            secs(at)
        );
    } else if let Some(score) = s.match_score {
        let _ = writeln!(
            o,
            "    the match scored {score:.3}, below the threshold its wait asked for (another ticket seeded it)"
        );
    }
    match (s.policy_rule, s.policy_rule_allowed_at_s) {
        (Some(rule), Some(at)) => {
            let _ = writeln!(
                o,
                "    the policy's {} rule first allowed that match at {} of waiting ({} before it matched)",
                rule.name(),
                secs(at),
                secs((waited - at).max(0.0))
            );
        }
        (Some(rule), None) => {
            let _ = writeln!(
                o,
                "    the policy's {} rule does not loosen with waiting: no second at which it first allowed the match",
                rule.name()
            );
        }
        _ => {}
    }
    if let Some(at) = s.latency_allowed_at_s {
        let _ = writeln!(
            o,
            "    its latency limit first allowed the host at {} of waiting",
            secs(at)
        );
    }
    if let Some(b) = &s.backfill {
        let role = b.role.as_ref().map_or(String::new(), |r| format!(" ({r})"));
        let _ = writeln!(
            o,
            "  it took the slot{role} a player rated {:.0} left at {}: {:.0} points from that rating, \
             inside the slot's window of {:.0}, which had reached it at {} ({} before it joined)",
            b.leaver_rating,
            secs(b.slot_opened_s),
            b.distance,
            b.window,
            secs(b.window_reached_s),
            secs((s.left_s - b.window_reached_s).max(0.0))
        );
    }
    if let Some(slot) = &s.open_slot {
        let role = slot
            .role
            .as_ref()
            .map_or(String::new(), |r| format!(" in {r}"));
        let why = match slot.blocked_by {
            SlotBlock::Window => format!(
                "{:.0} points from the leaver's rating, outside the slot's window of {:.0}",
                slot.distance, slot.window
            ),
            SlotBlock::PartySize => format!(
                "a party of {} for {} open slot(s) in that team",
                s.party_size, slot.team_open
            ),
            SlotBlock::Roles => format!(
                "nobody in the party could take the leaver's role{role} with the team's other open roles"
            ),
            SlotBlock::ReadyCheck => {
                "the slot was waiting for a declined joiner's ready check".to_owned()
            }
        };
        let _ = writeln!(
            o,
            "  {} backfill slot(s) open at the last look; the nearest{role}, left by a player rated {:.0}, \
             did not take it: {why}",
            slot.open_slots, slot.leaver_rating
        );
    }
    if !s.expansions.is_empty() {
        let steps: Vec<String> = s
            .expansions
            .iter()
            .map(|e| format!("{} {} {} at {}", e.rule, e.limit, e.value, secs(e.at_s)))
            .collect();
        let _ = writeln!(
            o,
            "  the ruleset's expansions its wait reached: {}",
            steps.join(", ")
        );
    }
    o
}

/// The report's "What held tickets back" section (`--explain` runs).
pub(super) fn html_section(
    h: &mut String,
    e: &mmsim_core::metrics::explain::ExplainSummary,
    stories: &[TicketStory],
    warmup_s: f64,
) {
    h.push_str("<section id=\"held-back\">\n<h2>What held tickets back</h2>\n");
    let total: f64 = e.blocked_ticket_s.values().sum();
    let _ = write!(
        h,
        "<p class=\"note\">After each policy pass, each ticket it considered was checked against its \
         three nearest-rated candidates; the first rule blocking the nearest one held it until \
         the next look. {n} tickets joined after warm-up, {t:.0} ticket-seconds of waiting.",
        n = e.tickets,
        t = total
    );
    if let Some(after) = e.mean_wait_after_window_allowed_s {
        let _ = write!(
            h,
            " Matched tickets waited {after:.1} s on average after their own window had reached \
             the gap of the match they got."
        );
    }
    h.push_str(
        " <code>mmsim explain RUN --ticket N</code> tells one ticket's story.</p>\n\
         <table>\n<tr><th>rule</th><th>ticket-seconds</th><th>share</th></tr>\n",
    );
    for (rule, s) in &e.blocked_ticket_s {
        let share = e.blocked_share.get(rule).copied().unwrap_or(0.0);
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{s:.0}</td><td>{:.1}%</td></tr>",
            rule.name(),
            share * 100.0
        );
    }
    h.push_str("</table>\n");
    // One story in full, so the page shows what a story says without the
    // command line: the longest wait of a ticket that joined after warm-up.
    if let Some(s) = longest_wait(stories, warmup_s) {
        let _ = write!(
            h,
            "<h3>The longest wait</h3>\n<p class=\"note\">Ticket {} waited {:.1} s, the longest of any \
             ticket that joined after warm-up; its story, as <code>mmsim explain RUN --ticket {}</code> \
             prints it:</p>\n<pre class=\"story\">{}</pre>\n",
            s.ticket_id,
            s.left_s - s.enqueued_s,
            s.ticket_id,
            crate::page::esc(&ticket_story(s))
        );
    }
    h.push_str("</section>\n");
}

/// The story of the longest wait among tickets that joined after warm-up
/// (the lowest ticket id among equal waits).
fn longest_wait(stories: &[TicketStory], warmup_s: f64) -> Option<&TicketStory> {
    stories.iter().filter(|s| s.enqueued_s >= warmup_s).fold(
        None,
        |best: Option<&TicketStory>, s| {
            let wait = s.left_s - s.enqueued_s;
            match best {
                Some(b) if b.left_s - b.enqueued_s >= wait => Some(b),
                _ => Some(s),
            }
        },
    )
}
