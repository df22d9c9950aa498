//! Side-by-side comparison of two runs' summaries (`mmsim compare`). Works on
//! the JSON alone, flattening nested keys, so it needs no change when a metric
//! is added; and it says whether the runs shared a seed, because only then do
//! the differences come from the setting rather than from seed noise.

use super::text;
use serde_json::{json, Map, Value};

/// One numeric metric of the two runs. `None` where a run lacks the key.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub key: String,
    pub a: Option<f64>,
    pub b: Option<f64>,
}

impl Row {
    /// b - a, where both exist.
    pub fn diff(&self) -> Option<f64> {
        Some(self.b? - self.a?)
    }
    /// (b - a) / |a| in percent; none when a is zero (undefined) unless b is zero too.
    pub fn rel_pct(&self) -> Option<f64> {
        let (a, b) = (self.a?, self.b?);
        if a == 0.0 {
            (b == 0.0).then_some(0.0)
        } else {
            Some(100.0 * (b - a) / a.abs())
        }
    }
}

/// The numeric leaves of both summaries, keyed like `wait_s.p90` or
/// `wait_s_by_skill_decile[3].p50`: keys of `a` in order, then keys only in `b`.
pub fn rows(a: &Value, b: &Value) -> Vec<Row> {
    let fa = numeric_leaves(a);
    let fb = numeric_leaves(b);
    let mut out: Vec<Row> = fa
        .iter()
        .map(|(k, va)| Row {
            key: k.clone(),
            a: Some(*va),
            b: fb.iter().find(|(kb, _)| kb == k).map(|x| x.1),
        })
        .collect();
    for (k, vb) in &fb {
        if !fa.iter().any(|(ka, _)| ka == k) {
            out.push(Row {
                key: k.clone(),
                a: None,
                b: Some(*vb),
            });
        }
    }
    out
}

fn numeric_leaves(v: &Value) -> Vec<(String, f64)> {
    let mut out = Vec::new();
    walk("", v, &mut out);
    out
}

fn walk(prefix: &str, v: &Value, out: &mut Vec<(String, f64)>) {
    match v {
        Value::Number(n) => {
            if let Some(x) = n.as_f64() {
                out.push((prefix.to_string(), x));
            }
        }
        Value::Object(o) => {
            for (k, x) in o {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                walk(&key, x, out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                walk(&format!("{prefix}[{i}]"), x, out);
            }
        }
        // Strings, booleans and nulls are labels, not measures: nothing to subtract.
        _ => {}
    }
}

fn pairing_line(names: (&str, &str), paired: bool) -> String {
    if paired {
        format!(
            "paired comparison: {} and {} ran on the same seed (common random numbers), \
             so differences come from the settings, not from seed noise",
            names.0, names.1
        )
    } else {
        format!(
            "unpaired comparison: {} and {} ran on different seeds, \
             so differences include seed noise",
            names.0, names.1
        )
    }
}

/// A plain-text table of the numeric metrics of two summaries with absolute
/// and relative differences (B relative to A). The first line says whether the
/// comparison is paired.
pub fn compare(a: &Value, b: &Value, names: (&str, &str), paired: bool) -> String {
    let rows = rows(a, b);
    let header = [
        "metric".to_string(),
        names.0.to_string(),
        names.1.to_string(),
        "diff".to_string(),
        "rel".to_string(),
    ];
    let cells: Vec<[String; 5]> = rows
        .iter()
        .map(|r| {
            [
                r.key.clone(),
                text::opt(r.a),
                text::opt(r.b),
                r.diff().map_or_else(|| "-".into(), text::signed),
                r.rel_pct()
                    .map_or_else(|| "-".into(), |p| format!("{}%", text::signed(p))),
            ]
        })
        .collect();
    let mut width = header.clone().map(|h| h.chars().count());
    for c in &cells {
        for (w, s) in width.iter_mut().zip(c) {
            *w = (*w).max(s.chars().count());
        }
    }
    let line = |c: &[String; 5]| -> String {
        let mut s = format!("{:<w$}", c[0], w = width[0]);
        for (i, x) in c.iter().enumerate().skip(1) {
            s.push_str(&format!("  {:>w$}", x, w = width[i]));
        }
        s.trim_end().to_string()
    };
    let mut out = pairing_line(names, paired);
    out.push('\n');
    out.push_str(&line(&header));
    out.push('\n');
    out.push_str(&"-".repeat(width.iter().sum::<usize>() + 2 * (width.len() - 1)));
    out.push('\n');
    for c in &cells {
        out.push_str(&line(c));
        out.push('\n');
    }
    out
}

/// The same comparison as JSON, for scripts and notebooks.
pub fn compare_json(a: &Value, b: &Value, names: (&str, &str), paired: bool) -> Value {
    let metrics: Vec<Value> = rows(a, b)
        .iter()
        .map(|r| {
            let mut m = Map::new();
            m.insert("key".into(), json!(r.key));
            m.insert("a".into(), json!(r.a));
            m.insert("b".into(), json!(r.b));
            m.insert("diff".into(), json!(r.diff()));
            m.insert("rel_diff_pct".into(), json!(r.rel_pct()));
            Value::Object(m)
        })
        .collect();
    json!({
        "paired": paired,
        "note": pairing_line(names, paired),
        "a": names.0,
        "b": names.1,
        "metrics": metrics,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair() -> (Value, Value) {
        let a = json!({
            "tickets": 1000,
            "policy": "fixed",
            "wait_s": {"mean": 10.0, "p90": 20.0},
            "wait_s_by_skill_decile": [{"p50": 4.0}, {"p50": 0.0}],
            "upset_rate": 0.0,
            "only_a": 1.0
        });
        let b = json!({
            "tickets": 1000,
            "policy": "widening",
            "wait_s": {"mean": 8.0, "p90": 25.0},
            "wait_s_by_skill_decile": [{"p50": 5.0}, {"p50": 1.0}],
            "upset_rate": 0.0,
            "only_b": 2.0
        });
        (a, b)
    }

    #[test]
    fn flattens_nested_keys_and_computes_differences() {
        let (a, b) = pair();
        let r = rows(&a, &b);
        let keys: Vec<&str> = r.iter().map(|x| x.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "tickets",
                "wait_s.mean",
                "wait_s.p90",
                "wait_s_by_skill_decile[0].p50",
                "wait_s_by_skill_decile[1].p50",
                "upset_rate",
                "only_a",
                "only_b"
            ]
        );
        let p90 = &r[2];
        assert_eq!(p90.diff(), Some(5.0));
        assert_eq!(p90.rel_pct(), Some(25.0));
        assert_eq!(r[1].rel_pct(), Some(-20.0));
        // From zero the relative change is undefined, except zero to zero.
        assert_eq!(r[4].rel_pct(), None);
        assert_eq!(r[5].rel_pct(), Some(0.0));
        assert_eq!(r[6].b, None);
        assert_eq!(r[7].a, None);
    }

    #[test]
    fn text_says_whether_the_comparison_is_paired() {
        let (a, b) = pair();
        let paired = compare(&a, &b, ("fixed", "widening"), true);
        assert!(paired.starts_with("paired comparison"));
        let unpaired = compare(&a, &b, ("fixed", "widening"), false);
        assert!(unpaired.starts_with("unpaired comparison"));
        let row = paired
            .lines()
            .find(|l| l.starts_with("wait_s.p90"))
            .unwrap();
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cells, ["wait_s.p90", "20", "25", "+5", "+25%"]);
        let row = paired.lines().find(|l| l.starts_with("only_a")).unwrap();
        assert_eq!(
            row.split_whitespace().collect::<Vec<_>>(),
            ["only_a", "1", "-", "-", "-"]
        );
    }

    #[test]
    fn json_form_carries_the_same_numbers() {
        let (a, b) = pair();
        let j = compare_json(&a, &b, ("A", "B"), true);
        assert_eq!(j["paired"], json!(true));
        let m = j["metrics"].as_array().unwrap();
        let mean = m.iter().find(|x| x["key"] == "wait_s.mean").unwrap();
        assert_eq!(mean["diff"], json!(-2.0));
        assert_eq!(mean["rel_diff_pct"], json!(-20.0));
        let zero = m
            .iter()
            .find(|x| x["key"] == "wait_s_by_skill_decile[1].p50")
            .unwrap();
        assert_eq!(zero["rel_diff_pct"], Value::Null);
    }
}
