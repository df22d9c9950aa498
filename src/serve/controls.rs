//! The page's controls, made from the served scenario rather than written
//! into the page: every parameter of its `[policy]` as the validated
//! scenario serializes it (so a new policy's keys appear with no page
//! change) and the main traffic keys (arrival rate, party mix, patience,
//! requeue), each with the type, range and meaning docs/scenarios.md gives
//! it. A page's values become `--set` overrides only through this list:
//! a key that is not a control (a trace file, a ruleset path) never reaches
//! the loader, so nothing from the page names a file.

use crate::scenario::{LoadedScenario, Patience, ScenarioError};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// The scenario reference the ranges and meanings are read from.
const REFERENCE: &str = include_str!("../../docs/scenarios.md");

#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Number,
    Integer,
    /// Seconds on the page; written to the scenario as a number of seconds.
    Duration,
    Choice,
}

#[derive(Clone, Debug, Serialize)]
pub struct Control {
    /// The dotted key as `--set` takes it; `arrivals.party_sizes.N` is the
    /// weight of parties of N, gathered into one list when applied.
    pub key: String,
    pub group: &'static str,
    pub label: String,
    pub kind: Kind,
    /// The served scenario's value (durations in seconds).
    pub value: Value,
    /// What the reference allows, when it says (`None`: no bound given).
    pub min: Option<f64>,
    pub max: Option<f64>,
    /// The slider's reach: the allowed range, or around the value where the
    /// reference gives no bound. The number box beside it takes any value;
    /// the validator has the last word.
    pub slider_min: f64,
    pub slider_max: f64,
    pub step: f64,
    pub unit: String,
    pub options: Vec<String>,
    /// The reference's type column and meaning.
    pub allowed: String,
    pub help: String,
    /// A key the policy may go without (`research`, `max_pct`): unset in the
    /// served scenario, its `value` is null and the page offers to set it.
    pub optional: bool,
}

/// One row of the reference: its type column and its meaning, and whether
/// its default column says the key may be left unset.
#[derive(Clone, Debug, Default)]
struct Doc {
    allowed: String,
    meaning: String,
    optional: bool,
}

/// The reference's key tables: for `[arrivals]`, keyed `arrivals.KEY`; for
/// each policy kind, `policy.KIND.KEY`.
fn reference() -> BTreeMap<String, Doc> {
    let mut out = BTreeMap::new();
    let mut section = String::new();
    let mut kinds: Vec<String> = Vec::new();
    for line in REFERENCE.lines() {
        if let Some(h) = line.strip_prefix("## ") {
            section = h
                .split('`')
                .nth(1)
                .unwrap_or("")
                .trim_matches(|c| c == '[' || c == ']')
                .to_string();
            kinds.clear();
            continue;
        }
        if let Some(h) = line.strip_prefix("### ") {
            // `### kind = "skill"`, `"random"`, `"worst"` (...): every quoted name before the first parenthesis.
            let head = h.split('(').next().unwrap_or("");
            kinds = head
                .split('"')
                .skip(1)
                .step_by(2)
                .map(str::to_string)
                .collect();
            continue;
        }
        if !line.starts_with("| `") {
            continue;
        }
        let cells: Vec<&str> = line
            .trim()
            .trim_matches('|')
            .split(" | ")
            .map(str::trim)
            .collect();
        if cells.len() < 4 {
            continue;
        }
        let default = cells[cells.len() - 2];
        let doc = Doc {
            allowed: cells[cells.len() - 3].to_string(),
            meaning: cells[cells.len() - 1].replace("\\|", "|"),
            optional: default.starts_with("unset") || default == "`none`",
        };
        // A row may name several keys: "`a`, `b`".
        let keys: Vec<&str> = cells[0].split('`').skip(1).step_by(2).collect();
        for key in keys {
            match section.as_str() {
                "arrivals" => {
                    out.insert(format!("arrivals.{key}"), doc.clone());
                }
                "policy" => {
                    for k in &kinds {
                        out.insert(format!("policy.{k}.{key}"), doc.clone());
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// Bounds read from a type column: "number ≥ 0", "number > 0", "number in
/// [0, 1]", "whole number 1 to 256", "number ≥ 0, at most 1e9". A bound
/// that names another key (`≥ base`) is left to the validator.
fn bounds(allowed: &str) -> (Option<f64>, Option<f64>) {
    let num = |s: &str| {
        s.trim()
            .trim_matches(|c: char| c == ',' || c == ')' || c == ']' || c == '(' || c == '[')
            .replace('−', "-")
            .parse::<f64>()
            .ok()
    };
    let mut lo = None;
    let mut hi = None;
    if let Some(rest) = allowed.split(" in ").nth(1) {
        if let Some((a, b)) = rest.split_once(',') {
            lo = num(a);
            hi = num(b.split_whitespace().next().unwrap_or(""));
        }
    }
    for op in ["≥", ">"] {
        if let Some(rest) = allowed.split(op).nth(1) {
            lo = lo.or_else(|| num(rest.split_whitespace().next().unwrap_or("")));
        }
    }
    if let Some(rest) = allowed.split("at most ").nth(1) {
        hi = hi.or_else(|| num(rest.split_whitespace().next().unwrap_or("")));
    }
    let words: Vec<&str> = allowed.split_whitespace().collect();
    if let Some(i) = words.iter().position(|w| *w == "to") {
        if i > 0 && i + 1 < words.len() {
            lo = lo.or_else(|| num(words[i - 1]));
            hi = hi.or_else(|| num(words[i + 1]));
        }
    }
    (lo, hi)
}

/// The unit a key's name or meaning gives.
fn unit(key: &str, kind: &Kind, meaning: &str) -> String {
    let last = key.rsplit('.').next().unwrap_or(key);
    let u = if *kind == Kind::Duration {
        "s"
    } else if last.ends_with("_per_s") {
        if meaning.contains("ercentile") {
            "percentiles/s"
        } else if key.starts_with("arrivals.") {
            "parties/s"
        } else if meaning.contains("rating point") || meaning.contains("window") {
            "rating points/s"
        } else {
            "per s"
        }
    } else if last.ends_with("_pct") {
        if meaning.contains("ercentile") {
            "percentiles"
        } else {
            "% of rating"
        }
    } else if last.ends_with("_ms") {
        "ms"
    } else if last.ends_with("_prob") || last.ends_with("_share") {
        "probability"
    } else if key.starts_with("arrivals.party_sizes.") {
        "weight"
    } else if meaning.contains("rating point") || meaning.contains("rating difference") {
        "rating points"
    } else {
        ""
    };
    u.to_string()
}

/// A slider's reach and step around `value` within what is allowed.
fn slider(kind: &Kind, value: f64, lo: Option<f64>, hi: Option<f64>) -> (f64, f64, f64) {
    let smin = lo.unwrap_or(if value >= 0.0 { 0.0 } else { value * 4.0 });
    let guess = if value > 0.0 {
        value * 4.0
    } else if value < 0.0 {
        -value * 4.0
    } else {
        1.0
    };
    // Four times the value, or a unit above the floor for a value at it.
    let around = if guess > smin { guess } else { smin + 1.0 };
    let mut smax = hi.unwrap_or(around);
    if !smax.is_finite() || smax > 1e6 {
        smax = around;
    }
    let step = match kind {
        Kind::Integer => 1.0,
        Kind::Duration if smax - smin >= 20.0 => 1.0,
        _ => nice_step((smax - smin) / 200.0),
    };
    (smin, smax, step)
}

/// 1, 2 or 5 times a power of ten, at least `x`.
fn nice_step(x: f64) -> f64 {
    if x <= 0.0 || !x.is_finite() {
        return 0.001;
    }
    let mag = 10f64.powf(x.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|s| *s >= x)
        .unwrap_or(10.0 * mag)
}

fn control(key: String, group: &'static str, kind: Kind, value: Value, doc: &Doc) -> Control {
    let options: Vec<String> = if kind == Kind::Choice {
        doc.allowed
            .split('"')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect()
    } else {
        Vec::new()
    };
    let (mut min, mut max) = bounds(&doc.allowed);
    if key.starts_with("arrivals.party_sizes.") {
        min = Some(0.0);
    }
    if key.ends_with("_prob") && min.is_none() {
        (min, max) = (Some(0.0), Some(1.0));
    }
    let v = value.as_f64().unwrap_or(0.0);
    let (slider_min, slider_max, step) = slider(&kind, v, min, max);
    let label = key
        .strip_prefix("policy.")
        .or_else(|| key.strip_prefix("arrivals."))
        .unwrap_or(&key)
        .to_string();
    Control {
        unit: unit(&key, &kind, &doc.meaning),
        key,
        group,
        label,
        kind,
        value,
        min,
        max,
        slider_min,
        slider_max,
        step,
        options,
        // The reference's Markdown code marks read as noise on a page.
        allowed: doc.allowed.replace('`', ""),
        help: doc.meaning.replace('`', ""),
        optional: false,
    }
}

/// A control for an optional policy key the served scenario leaves unset:
/// null until the page sets it, with a slider around a first value that is
/// in range (`first`), since an unset key has none of its own.
fn optional_control(key: String, kind: Kind, first: f64, doc: &Doc) -> Control {
    let mut c = control(key, "policy", kind, Value::from(first), doc);
    c.value = Value::Null;
    c.optional = true;
    c
}

/// Seconds of a duration as the scenario serializes it (`"90s"`, `"250ms"`).
fn duration_secs(v: &Value) -> Option<f64> {
    match v {
        Value::String(s) => crate::model::parse_duration(s)
            .ok()
            .map(|d| d.as_secs_f64()),
        Value::Number(n) => n.as_f64(),
        _ => None,
    }
}

/// Every control of the served scenario, policy first.
pub fn controls(loaded: &LoadedScenario) -> Vec<Control> {
    let docs = reference();
    let s = &loaded.scenario;
    let kind = s.policy.name();
    let mut out = Vec::new();
    let params = serde_json::to_value(&s.policy).unwrap_or(Value::Null);
    let mut flat = Vec::new();
    flatten("", &params, &mut flat);
    // The policy's keys the scenario leaves unset: documented for its kind
    // as optional (or "unset: ..." by default), and not serialized.
    let prefix = format!("policy.{kind}.");
    let unset: Vec<(String, Doc)> = docs
        .iter()
        .filter_map(|(k, d)| Some((k.strip_prefix(&prefix)?.to_string(), d.clone())))
        .filter(|(k, _)| !flat.iter().any(|(f, v)| f == k && !v.is_null()))
        .filter(|(_, d)| d.optional)
        .collect();
    for (key, v) in flat {
        if key == crate::policy::PolicyConfig::TAG {
            continue;
        }
        let doc = docs
            .get(&format!("policy.{kind}.{key}"))
            .cloned()
            .unwrap_or_default();
        let is_duration = doc.allowed.starts_with("duration");
        let (k, value) = match &v {
            Value::Number(n) if is_duration => (Kind::Duration, Value::from(n.as_f64())),
            Value::Number(n) if n.is_f64() => (Kind::Number, v.clone()),
            Value::Number(_) => (Kind::Integer, v.clone()),
            Value::String(_) if is_duration || duration_secs(&v).is_some() => {
                match duration_secs(&v) {
                    Some(secs) => (Kind::Duration, Value::from(secs)),
                    None => continue,
                }
            }
            Value::String(_) if doc.allowed.contains('"') => (Kind::Choice, v.clone()),
            // Flags, absent options and lists are left to the scenario file.
            _ => continue,
        };
        out.push(control(format!("policy.{key}"), "policy", k, value, &doc));
    }
    for (key, doc) in unset {
        let (kind, first) = if doc.allowed.starts_with("duration") {
            (Kind::Duration, 10.0)
        } else if doc.allowed.starts_with("number") {
            (
                Kind::Number,
                bounds(&doc.allowed).0.unwrap_or(0.0).max(1.0) * 50.0,
            )
        } else {
            continue;
        };
        out.push(optional_control(format!("policy.{key}"), kind, first, &doc));
    }
    if s.arrivals.trace_data.is_some() {
        // A replayed trace fixes the traffic: the loader refuses these keys.
        return out;
    }
    let doc = |k: &str| {
        docs.get(&format!("arrivals.{k}"))
            .cloned()
            .unwrap_or_default()
    };
    out.push(control(
        "arrivals.rate_per_s".into(),
        "traffic",
        Kind::Number,
        Value::from(s.arrivals.rate_per_s),
        &doc("rate_per_s"),
    ));
    if s.format.team_size > 1 {
        let sizes = s
            .arrivals
            .party_sizes
            .len()
            .max(s.format.team_size as usize);
        for n in 1..=sizes {
            let w = s.arrivals.party_sizes.get(n - 1).copied().unwrap_or(0.0);
            let mut c = control(
                format!("arrivals.party_sizes.{n}"),
                "traffic",
                Kind::Number,
                Value::from(w),
                &Doc {
                    allowed: "number ≥ 0".into(),
                    meaning: format!(
                        "relative weight of parties of {n} among fresh arrivals ({})",
                        doc("party_sizes").meaning
                    ),
                    ..Default::default()
                },
            );
            c.label = format!("party_sizes: parties of {n}");
            out.push(c);
        }
    }
    match &s.arrivals.patience {
        Patience::Exponential { mean } => out.push(control(
            "arrivals.patience.mean".into(),
            "traffic",
            Kind::Duration,
            Value::from(mean.secs()),
            &Doc {
                allowed: "duration > 0".into(),
                meaning: "mean patience (exponential): how long a ticket waits before giving up"
                    .into(),
                ..Default::default()
            },
        )),
        Patience::Fixed { after } => out.push(control(
            "arrivals.patience.after".into(),
            "traffic",
            Kind::Duration,
            Value::from(after.secs()),
            &Doc {
                allowed: "duration > 0".into(),
                meaning: "every ticket gives up after this wait".into(),
                ..Default::default()
            },
        )),
        Patience::Weibull { shape, scale } => {
            out.push(control(
                "arrivals.patience.shape".into(),
                "traffic",
                Kind::Number,
                Value::from(*shape),
                &Doc {
                    allowed: "number in [0.01, 1000]".into(),
                    meaning: "Weibull patience's shape: below 1 most quitters go early, above 1 they hold on and then go".into(),
                    ..Default::default()
                },
            ));
            out.push(control(
                "arrivals.patience.scale".into(),
                "traffic",
                Kind::Duration,
                Value::from(scale.secs()),
                &Doc {
                    allowed: "duration > 0".into(),
                    meaning: "Weibull patience's scale: 63% of tickets would give up by this wait"
                        .into(),
                    ..Default::default()
                },
            ));
        }
        Patience::LogNormal { median, sigma } => {
            out.push(control(
                "arrivals.patience.median".into(),
                "traffic",
                Kind::Duration,
                Value::from(median.secs()),
                &Doc {
                    allowed: "duration > 0".into(),
                    meaning:
                        "log-normal patience's median: half the tickets would give up by this wait"
                            .into(),
                    ..Default::default()
                },
            ));
            out.push(control(
                "arrivals.patience.sigma".into(),
                "traffic",
                Kind::Number,
                Value::from(*sigma),
                &Doc {
                    allowed: "number in (0, 10]".into(),
                    meaning: "log-normal patience's spread: the sd of ln(patience)".into(),
                    ..Default::default()
                },
            ));
        }
        Patience::Never {} => {}
    }
    out.push(control(
        "arrivals.requeue_prob".into(),
        "traffic",
        Kind::Number,
        Value::from(s.arrivals.requeue_prob),
        &doc("requeue_prob"),
    ));
    out
}

fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, Value)>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, x, out);
            }
        }
        _ => out.push((prefix.to_string(), v.clone())),
    }
}

/// A page's values as `--set` arguments, in key order, leaving out those
/// equal to the served scenario's (so a setting is named by what it
/// changes). Errors are per control key ("" for the setting as a whole).
pub fn set_args(
    controls: &[Control],
    values: &serde_json::Map<String, Value>,
) -> Result<Vec<String>, BTreeMap<String, String>> {
    let mut errors = BTreeMap::new();
    let mut sets = BTreeMap::new();
    let mut party: Option<Vec<f64>> = None;
    for (key, v) in values {
        let Some(c) = controls.iter().find(|c| &c.key == key) else {
            errors.insert(
                key.clone(),
                "is not a control of this page: only the listed policy and traffic keys can be changed here".to_string(),
            );
            continue;
        };
        if v.is_null() {
            if c.value.is_null() {
                continue;
            }
            errors.insert(
                key.clone(),
                "cannot be unset here: the served scenario sets it (edit the file to remove it)"
                    .to_string(),
            );
            continue;
        }
        let text = match (&c.kind, v) {
            (Kind::Choice, Value::String(s)) if c.options.iter().any(|o| o == s) => {
                if Some(s.as_str()) == c.value.as_str() {
                    continue;
                }
                toml::Value::String(s.clone()).to_string()
            }
            (Kind::Choice, _) => {
                errors.insert(
                    key.clone(),
                    format!("must be one of {}", c.options.join(", ")),
                );
                continue;
            }
            (_, Value::Number(n)) => {
                let x = n.as_f64().unwrap_or(f64::NAN);
                if c.kind == Kind::Integer && (x.fract() != 0.0 || x.abs() > 9.0e15) {
                    errors.insert(key.clone(), format!("must be a whole number, got {x}"));
                    continue;
                }
                if let Some(size) = key.strip_prefix("arrivals.party_sizes.") {
                    let n: usize = size.parse().unwrap_or(1);
                    let mix = party.get_or_insert_with(|| {
                        controls
                            .iter()
                            .filter(|c| c.key.starts_with("arrivals.party_sizes."))
                            .map(|c| c.value.as_f64().unwrap_or(0.0))
                            .collect()
                    });
                    if let Some(w) = mix.get_mut(n - 1) {
                        *w = x;
                    }
                    continue;
                }
                if c.value.as_f64() == Some(x) {
                    continue;
                }
                if c.kind == Kind::Integer {
                    format!("{}", x as i64)
                } else {
                    toml::Value::Float(x).to_string()
                }
            }
            _ => {
                errors.insert(key.clone(), "must be a number".to_string());
                continue;
            }
        };
        sets.insert(key.clone(), text);
    }
    if let Some(mix) = party {
        let served: Vec<f64> = controls
            .iter()
            .filter(|c| c.key.starts_with("arrivals.party_sizes."))
            .map(|c| c.value.as_f64().unwrap_or(0.0))
            .collect();
        if mix != served {
            // Trailing zero weights are the served list's missing sizes.
            let mut mix = mix;
            while mix.len() > 1 && mix.last() == Some(&0.0) {
                mix.pop();
            }
            let list: Vec<String> = mix
                .iter()
                .map(|w| toml::Value::Float(*w).to_string())
                .collect();
            sets.insert(
                "arrivals.party_sizes".into(),
                format!("[{}]", list.join(", ")),
            );
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(sets.into_iter().map(|(k, v)| format!("{k}={v}")).collect())
}

/// The validator's own message, and the control it is about (`""` when it
/// names none of them).
pub fn blame(e: &ScenarioError, controls: &[Control]) -> (String, String) {
    let (key, message) = match e {
        ScenarioError::Set { arg, message } => (
            arg.split('=').next().unwrap_or("").trim().to_string(),
            message.clone(),
        ),
        ScenarioError::Invalid { key, message, .. } => (key.clone(), format!("`{key}` {message}")),
        other => (String::new(), other.to_string()),
    };
    let control = controls
        .iter()
        .find(|c| c.key == key || c.key.ends_with(&format!(".{key}")))
        .map(|c| c.key.clone())
        .or_else(|| {
            (key == "arrivals.party_sizes").then(|| {
                controls
                    .iter()
                    .find(|c| c.key.starts_with("arrivals.party_sizes."))
                    .map(|c| c.key.clone())
                    .unwrap_or_default()
            })
        })
        .unwrap_or_default();
    (control, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_columns_give_their_bounds() {
        assert_eq!(bounds("number ≥ 0"), (Some(0.0), None));
        assert_eq!(bounds("number > 0"), (Some(0.0), None));
        assert_eq!(bounds("number in [0, 1]"), (Some(0.0), Some(1.0)));
        assert_eq!(bounds("number in (0, 1]"), (Some(0.0), Some(1.0)));
        assert_eq!(bounds("whole number 1 to 256"), (Some(1.0), Some(256.0)));
        assert_eq!(bounds("number ≥ 0, at most 1e9"), (Some(0.0), Some(1e9)));
        assert_eq!(bounds("number in [−50, 50]"), (Some(-50.0), Some(50.0)));
        assert_eq!(bounds("number ≥ `base`"), (None, None));
        assert_eq!(bounds("number in [0, `threshold`]"), (Some(0.0), None));
    }

    #[test]
    fn steps_are_round() {
        assert_eq!(nice_step(0.004), 0.005);
        assert_eq!(nice_step(3.0), 5.0);
        assert_eq!(nice_step(0.01), 0.01);
    }

    fn loaded(text: &str) -> LoadedScenario {
        crate::scenario::from_text(text, std::path::Path::new("smoke.toml"), &[]).unwrap()
    }

    fn smoke_3v3() -> String {
        crate::run::short_smoke()
            .0
            .replace("team_size = 1", "team_size = 3")
            .replace(
                "rate_per_s = 1.0",
                "rate_per_s = 1.0\nparty_sizes = [0.8, 0.2]",
            )
    }

    #[test]
    fn the_controls_are_the_policy_s_keys_and_the_traffic_with_ranges() {
        let l = loaded(&smoke_3v3());
        let c = controls(&l);
        let keys: Vec<&str> = c.iter().map(|c| c.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "policy.base",
                "policy.rate_per_s",
                "policy.max",
                "policy.mode",
                "policy.recheck",
                "policy.tick",
                "arrivals.rate_per_s",
                "arrivals.party_sizes.1",
                "arrivals.party_sizes.2",
                "arrivals.party_sizes.3",
                "arrivals.patience.mean",
                "arrivals.requeue_prob",
            ]
        );
        let by = |k: &str| c.iter().find(|c| c.key == k).unwrap();
        assert_eq!(
            (by("policy.base").min, by("policy.base").unit.as_str()),
            (Some(0.0), "rating points")
        );
        assert_eq!(by("policy.rate_per_s").unit, "rating points/s");
        assert_eq!(by("policy.mode").options, ["event", "tick"]);
        assert_eq!(
            (
                by("policy.tick").kind.clone(),
                by("policy.tick").value.as_f64()
            ),
            (Kind::Duration, Some(1.0))
        );
        assert_eq!(by("arrivals.patience.mean").value.as_f64(), Some(180.0));
        assert_eq!(
            (
                by("arrivals.requeue_prob").min,
                by("arrivals.requeue_prob").max
            ),
            (Some(0.0), Some(1.0))
        );
        assert_eq!(by("arrivals.party_sizes.3").value.as_f64(), Some(0.0));
        // A tiny value gets a slider that reaches past it, not one of 0 to 1.
        let (lo, hi, step) = slider(&Kind::Number, 9e-5, Some(0.0), None);
        assert_eq!((lo, hi), (0.0, 3.6e-4));
        assert!(step <= 2e-6, "{step}");
    }

    /// A fitted scenario's Weibull or log-normal patience gets a control
    /// per parameter, and a moved one reaches the scenario.
    #[test]
    fn weibull_and_log_normal_patience_have_their_parameters_as_controls() {
        let base = smoke_3v3();
        let mean = patience_line(&base);
        for (patience, keys, moved) in [
            (
                r#"patience = { dist = "weibull", shape = 1.6, scale = "3m" }"#,
                ["arrivals.patience.shape", "arrivals.patience.scale"],
                ("arrivals.patience.shape", 0.8),
            ),
            (
                r#"patience = { dist = "log-normal", median = "90s", sigma = 0.8 }"#,
                ["arrivals.patience.median", "arrivals.patience.sigma"],
                ("arrivals.patience.sigma", 1.2),
            ),
        ] {
            let l = loaded(&base.replace(&mean, patience));
            let c = controls(&l);
            for k in keys {
                assert!(
                    c.iter().any(|c| c.key == k),
                    "no control {k} for {patience}"
                );
            }
            let mut v = serde_json::Map::new();
            for c in &c {
                v.insert(c.key.clone(), c.value.clone());
            }
            v.insert(moved.0.into(), Value::from(moved.1));
            let sets = set_args(&c, &v).unwrap();
            let applied = l.with_sets(&sets).unwrap();
            let got = match applied.scenario.arrivals.patience {
                Patience::Weibull { shape, .. } => shape,
                Patience::LogNormal { sigma, .. } => sigma,
                ref other => panic!("{other:?}"),
            };
            assert_eq!(got, moved.1);
        }
    }

    /// A key the policy may go without (`research`) is offered unset when
    /// the served scenario leaves it so: setting it reaches the scenario,
    /// leaving it unset changes nothing, and a served value cannot be unset.
    #[test]
    fn an_optional_policy_key_is_offered_unset_and_can_be_set() {
        let quality = smoke_3v3().replace(
            "kind = \"widening\"\nbase = 100\nrate_per_s = 5\nmax = 400",
            "kind = \"quality\"",
        );
        assert!(quality.contains("\"quality\""), "smoke's [policy] changed");
        let l = loaded(&quality);
        let c = controls(&l);
        let research = c
            .iter()
            .find(|c| c.key == "policy.research")
            .expect("offered");
        assert!(
            research.optional && research.value.is_null(),
            "{research:?}"
        );
        assert_eq!(research.kind, Kind::Duration);
        let mut v = serde_json::Map::new();
        for c in &c {
            v.insert(c.key.clone(), c.value.clone());
        }
        assert_eq!(set_args(&c, &v), Ok(vec![]));
        v.insert("policy.research".into(), Value::from(10));
        let sets = set_args(&c, &v).unwrap();
        assert_eq!(sets, ["policy.research=10.0"]);
        let applied = l.with_sets(&sets).unwrap();
        let crate::policy::PolicyConfig::Quality(q) = &applied.scenario.policy else {
            panic!("quality");
        };
        assert_eq!(q.research.map(|d| d.secs()), Some(10.0));
        // Served with it set: a plain control, which the page cannot unset.
        let served = loaded(&quality.replace(
            "kind = \"quality\"",
            "kind = \"quality\"\nresearch = \"20s\"",
        ));
        let c = controls(&served);
        let research = c.iter().find(|c| c.key == "policy.research").unwrap();
        assert!(!research.optional);
        assert_eq!(research.value.as_f64(), Some(20.0));
        let mut v = serde_json::Map::new();
        v.insert("policy.research".into(), Value::Null);
        assert!(set_args(&c, &v)
            .unwrap_err()
            .contains_key("policy.research"));
    }

    /// The smoke scenario's patience line, to swap for another.
    fn patience_line(text: &str) -> String {
        text.lines()
            .find(|l| l.trim_start().starts_with("patience"))
            .expect("smoke has a patience line")
            .to_string()
    }

    #[test]
    fn page_values_become_sets_of_what_changed_only() {
        let l = loaded(&smoke_3v3());
        let c = controls(&l);
        let mut v = serde_json::Map::new();
        for c in &c {
            v.insert(c.key.clone(), c.value.clone());
        }
        assert_eq!(set_args(&c, &v), Ok(vec![]));
        v.insert("policy.base".into(), Value::from(60));
        v.insert("arrivals.party_sizes.3".into(), Value::from(0.1));
        v.insert("policy.mode".into(), Value::from("tick"));
        let sets = set_args(&c, &v).unwrap();
        assert_eq!(
            sets,
            [
                "arrivals.party_sizes=[0.8, 0.2, 0.1]",
                "policy.base=60.0",
                "policy.mode=\"tick\""
            ]
        );
        // The loader takes them as `--set` would.
        let applied = l.with_sets(&sets).unwrap();
        assert_eq!(applied.scenario.arrivals.party_sizes, [0.8, 0.2, 0.1]);
        v.insert("policy.neighbours".into(), Value::from(3));
        v.insert("arrivals.trace".into(), Value::from("x.csv"));
        v.insert("policy.max".into(), Value::from("wide"));
        let errors = set_args(&c, &v).unwrap_err();
        assert_eq!(
            errors.keys().collect::<Vec<_>>(),
            ["arrivals.trace", "policy.max", "policy.neighbours"]
        );
    }

    #[test]
    fn the_reference_documents_the_quality_policy() {
        let r = reference();
        let t = &r["policy.quality.threshold"];
        assert_eq!(bounds(&t.allowed), (Some(0.0), Some(1.0)));
        assert!(r.contains_key("policy.quality.weights.balance"));
        assert!(r.contains_key("policy.worst.rating_scale"));
        assert!(r.contains_key("arrivals.rate_per_s"));
        assert!(r["policy.widening.tick"].allowed.starts_with("duration"));
    }
}
