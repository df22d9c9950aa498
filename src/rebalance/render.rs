//! How `mmsim rebalance` prints a result: the plain-text layout (the JSON
//! form is the result's `Serialize`), and the number style both share
//! (`report::number`'s, as every other command's).

use super::run::RebalanceResult;
use serde_json::Value;

/// JSON numbers for reports: whole values print without a fraction.
pub(super) fn number(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        Value::from(x as i64)
    } else {
        Value::from(x)
    }
}

fn show(v: &Value) -> String {
    v.as_f64()
        .map_or_else(|| v.to_string(), crate::report::number::two_places)
}

impl RebalanceResult {
    /// The plain-text rendering: teams, their attribute totals and means,
    /// the member-count difference and distance, then the candidate table.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        s.push_str(&format!("method: {} ({})\n", self.method, self.reason));
        for t in &self.teams {
            let parties: Vec<String> = t
                .parties
                .iter()
                .map(|p| format!("{{{}}}", p.members.join(", ")))
                .collect();
            s.push_str(&format!(
                "team {}: {} players  {}\n",
                t.team,
                t.players,
                parties.join(" ")
            ));
            for (name, total) in &t.totals {
                let mean = t.means.get(name).map_or("-".to_string(), show);
                s.push_str(&format!("    {name}: total {}, mean {mean}\n", show(total)));
            }
        }
        s.push_str(&format!(
            "member-count difference: {}\n",
            self.member_count_diff
        ));
        let parts: Vec<String> = self
            .distance_by_attribute
            .iter()
            .map(|(k, v)| format!("{k} {}", show(v)))
            .collect();
        if parts.is_empty() {
            s.push_str("distance: 0 (no attributes)\n");
        } else {
            s.push_str(&format!(
                "distance: {} ({})\n",
                crate::report::number::places(self.distance, 2, false),
                parts.join(", ")
            ));
        }
        if !self.candidates.is_empty() {
            s.push_str("\ncompositions considered (on a tie the later one wins):\n");
            s.push_str("result  sequence  team composition  member-count diff  distance\n");
            for c in &self.candidates {
                let seq: Vec<String> = c.sequence.iter().map(|p| format!("{{{p}}}")).collect();
                let teams: Vec<String> = c
                    .teams
                    .iter()
                    .enumerate()
                    .map(|(t, ps)| {
                        let ps: Vec<String> = ps.iter().map(|p| format!("{{{p}}}")).collect();
                        format!("team[{}]:[{}]", t + 1, ps.join(","))
                    })
                    .collect();
                s.push_str(&format!(
                    "{:>6}  [{}]  {}  {}  {}{}\n",
                    c.result,
                    seq.join(","),
                    teams.join(" "),
                    c.member_count_diff,
                    crate::report::number::places(c.distance, 2, false),
                    if c.chosen { "  <- chosen" } else { "" }
                ));
            }
        }
        s
    }
}
