//! Pointing a schema error at its key. The deserializer gives the path to
//! the deepest value it saw; inside a tagged or flattened section serde reads
//! from its own buffer, so a type error there (`skill = { dist = ..., max =
//! "lots" }`, `[policy] base = "x"`) stops at the section. This finds the key
//! the structured error is about inside it (the unknown or missing key by
//! name, otherwise the key without which the error changes) and its own line.

use super::schema_error::{Got, Misread, SchemaError, Step};
use std::ops::Range;
use toml_edit::{Item, Value};

/// A schema error made specific: the dotted key when one could be found,
/// its 1-based line, and the message to print after the key.
#[derive(Debug, PartialEq)]
pub struct Located {
    pub key: Option<String>,
    pub line: Option<usize>,
    pub message: String,
}

/// One key of the file: its path (list indices included), where its key
/// (or header) starts, what it covers (key through value, or header through
/// its last entry), and its value when it is a plain value or a list.
struct Node {
    steps: Vec<Step>,
    key_at: usize,
    range: Range<usize>,
    value: Option<Value>,
    container: bool,
}

impl Node {
    /// The dotted key a designer writes: tables inside lists are named
    /// without their index (the line tells them apart).
    fn path(&self) -> String {
        dotted(&self.steps)
    }
    fn name(&self) -> &str {
        match self.steps.last() {
            Some(Step::Key(k)) => k,
            _ => "",
        }
    }
    fn list(&self) -> bool {
        matches!(self.value, Some(Value::Array(_)))
    }
}

fn dotted(steps: &[Step]) -> String {
    let keys: Vec<&str> = steps
        .iter()
        .filter_map(|s| match s {
            Step::Key(k) => Some(k.as_str()),
            Step::Index(_) => None,
        })
        .collect();
    keys.join(".")
}

/// Reads a changed copy of the file as the schema does: the error when it
/// still fails, `None` when it does not.
pub type Retry<'a> = &'a dyn Fn(&str) -> Option<SchemaError>;

/// Keys that name a tagged section's variant (`[policy] kind`, `[outcome]
/// model`, `skill = { dist = ... }`): taking one out fails for its own
/// sake, not for the error being looked for.
const TAGS: [&str; 5] = ["kind", "model", "system", "method", "dist"];

/// Finds the key `misread` is about in `text` and its line. When the error
/// stops at a section and is not about a key it names, `retry` finds the key
/// whose removal changes the error, by reading the file again without each
/// of the section's keys in turn: serde checks a section's values in the
/// file's order before it looks for missing ones, so the first key whose
/// removal changes the error is the one it stopped at. Without `retry`, the
/// key whose value is the one the error gives.
pub fn locate(text: &str, misread: &Misread, retry: Option<Retry<'_>>) -> Located {
    let error = &misread.error;
    let line_of = |at: usize| text[..at.min(text.len())].matches('\n').count() + 1;
    let unplaced = || Located {
        key: (!misread.path.is_empty()).then(|| dotted(&misread.path)),
        line: None,
        message: error.to_string(),
    };
    let Ok(doc) = toml_edit::ImDocument::parse(text.to_owned()) else {
        return unplaced();
    };
    let mut nodes = Vec::new();
    walk_table(text, doc.as_table(), &[], &mut nodes);
    // The deepest key on the error's path (a value inside a list is named
    // by the list's key).
    let Some(at) = nodes
        .iter()
        .filter(|n| misread.path.starts_with(&n.steps))
        .max_by_key(|n| n.steps.len())
    else {
        return match error {
            SchemaError::UnknownField { field, .. } => Located {
                key: Some(field.clone()),
                line: nodes
                    .iter()
                    .find(|n| n.steps == [Step::Key(field.clone())])
                    .map(|n| line_of(n.key_at)),
                message: error.to_string(),
            },
            // A whole section missing: the file's first line.
            _ => Located {
                line: Some(1),
                ..unplaced()
            },
        };
    };
    let children = |n: &Node| -> Vec<&Node> {
        nodes
            .iter()
            .filter(|c| c.steps.len() == n.steps.len() + 1 && c.steps.starts_with(&n.steps))
            .collect()
    };
    let mut target = at;
    if at.container {
        let kids = children(at);
        match error {
            SchemaError::UnknownField { field, .. } => {
                if let Some(k) = kids.iter().find(|c| c.name() == field) {
                    target = k;
                }
            }
            SchemaError::MissingField(field) => {
                return Located {
                    key: Some(format!("{}.{field}", at.path())),
                    line: Some(line_of(at.key_at)),
                    message: "is missing: this section needs it".into(),
                };
            }
            _ => {
                if let Some(k) = retry
                    .and_then(|r| culprit(text, &kids, error, r))
                    .or_else(|| offending_child(error, &kids))
                {
                    target = k;
                    // A table inside the section (`[policy.weights]`): on to
                    // the key inside it.
                    while let (true, Some(r)) = (target.container, retry) {
                        match culprit(text, &children(target), error, r) {
                            Some(k) => target = k,
                            None => break,
                        }
                    }
                }
            }
        }
    }
    Located {
        key: Some(target.path()),
        line: Some(line_of(target.key_at)),
        message: error.to_string(),
    }
}

fn walk_table(text: &str, t: &toml_edit::Table, prefix: &[Step], out: &mut Vec<Node>) {
    // A section starts at its header line's `[`, before its key.
    let line_start = |at: usize| text[..at.min(text.len())].rfind('\n').map_or(0, |i| i + 1);
    for (k, item) in t.iter() {
        let Some(key) = t.key(k) else { continue };
        let steps = join(prefix, Step::Key(k.to_owned()));
        let key_at = key.span().map_or(0, |s| s.start);
        match item {
            Item::Table(sub) => {
                let at = sub
                    .span()
                    .map_or(line_start(key_at), |s| s.start.min(line_start(key_at)));
                section(text, sub, steps, at, out);
            }
            Item::ArrayOfTables(arr) => {
                for (i, sub) in arr.iter().enumerate() {
                    let at = sub
                        .span()
                        .map_or(line_start(key_at), |s| s.start.min(line_start(key_at)));
                    section(text, sub, join(&steps, Step::Index(i)), at, out);
                }
            }
            Item::Value(v) => walk_value(v, steps, key_at, out),
            Item::None => {}
        }
    }
}

/// A `[section]` (or one `[[entry]]`) starting at `at`, with its keys.
fn section(text: &str, t: &toml_edit::Table, steps: Vec<Step>, at: usize, out: &mut Vec<Node>) {
    let first = out.len();
    walk_table(text, t, &steps, out);
    let end = out[first..]
        .iter()
        .map(|n| n.range.end)
        .max()
        .unwrap_or(at + 1);
    out.push(Node {
        steps,
        key_at: at,
        range: at..end.max(at + 1),
        value: None,
        container: true,
    });
}

fn walk_value(v: &Value, steps: Vec<Step>, key_at: usize, out: &mut Vec<Node>) {
    let end = v.span().map_or(key_at + 1, |s| s.end);
    match v {
        Value::InlineTable(t) => {
            for (k, inner) in t.iter() {
                let at = t
                    .key(k)
                    .and_then(|key| key.span())
                    .map_or(key_at, |s| s.start);
                walk_value(inner, join(&steps, Step::Key(k.to_owned())), at, out);
            }
            out.push(Node {
                steps,
                key_at,
                range: key_at..end,
                value: None,
                container: true,
            });
        }
        Value::Array(a) => {
            // Tables inside a list (`tiers = [{ tier = 1, weight = 0.5 }]`)
            // are keys of their own, at their own line.
            for (i, inner) in a.iter().enumerate() {
                if let Value::InlineTable(_) = inner {
                    let at = inner.span().map_or(key_at, |s| s.start);
                    walk_value(inner, join(&steps, Step::Index(i)), at, out);
                }
            }
            out.push(Node {
                steps,
                key_at,
                range: key_at..end,
                value: Some(v.clone()),
                container: false,
            });
        }
        other => out.push(Node {
            steps,
            key_at,
            range: key_at..end,
            value: Some(other.clone()),
            container: false,
        }),
    }
}

fn join(prefix: &[Step], step: Step) -> Vec<Step> {
    let mut steps = prefix.to_vec();
    steps.push(step);
    steps
}

/// The first of `kids` (in the file's order) without which the file fails
/// differently or not at all.
fn culprit<'n>(
    text: &str,
    kids: &[&'n Node],
    error: &SchemaError,
    retry: Retry<'_>,
) -> Option<&'n Node> {
    let mut order: Vec<&'n Node> = kids.to_vec();
    order.sort_by_key(|k| k.key_at);
    order.into_iter().find(|k| {
        let Some(changed) = without(text, k.range.clone()) else {
            return false;
        };
        // A copy that is no longer TOML says nothing about the schema.
        if changed.parse::<toml::Table>().is_err() {
            return false;
        }
        match retry(&changed) {
            None => true,
            Some(SchemaError::MissingField(f)) if TAGS.contains(&k.name()) && f == k.name() => {
                false
            }
            Some(e) => e != *error,
        }
    })
}

/// `text` without the key-value pair at `range`, and the comma that joins
/// it to its neighbour in an inline table.
fn without(text: &str, range: Range<usize>) -> Option<String> {
    let bytes = text.as_bytes();
    let (mut start, mut end) = (range.start, range.end.min(text.len()));
    if start >= end {
        return None;
    }
    let mut after = end;
    while after < bytes.len() && (bytes[after] == b' ' || bytes[after] == b'\t') {
        after += 1;
    }
    if bytes.get(after) == Some(&b',') {
        end = after + 1;
    } else {
        let mut before = start;
        while before > 0 && (bytes[before - 1] == b' ' || bytes[before - 1] == b'\t') {
            before -= 1;
        }
        if before > 0 && bytes[before - 1] == b',' {
            start = before - 1;
        }
    }
    Some(format!("{}{}", &text[..start], &text[end..]))
}

/// The key inside a table whose value the error gives: a plain value equal
/// to it, a list holding it, or the first list or table when the error says
/// a list or table was not wanted.
fn offending_child<'n>(error: &SchemaError, kids: &[&'n Node]) -> Option<&'n Node> {
    let got = match error {
        SchemaError::InvalidType { got, .. } | SchemaError::InvalidValue { got, .. } => got.clone(),
        SchemaError::UnknownVariant { variant, .. } => Got::Str(variant.clone()),
        _ => return None,
    };
    match got {
        Got::Seq => return kids.iter().copied().find(|c| c.list()),
        Got::Map => return kids.iter().copied().find(|c| c.container),
        _ => {}
    }
    let plain = |c: &&Node| !c.list() && c.value.as_ref().is_some_and(|v| is(v, &got));
    kids.iter().copied().find(plain).or_else(|| {
        kids.iter()
            .copied()
            .find(|c| c.list() && c.value.as_ref().is_some_and(|v| holds(v, &got)))
    })
}

/// Whether a plain value is the one serde was given.
fn is(v: &Value, got: &Got) -> bool {
    match (v, got) {
        (Value::String(s), Got::Str(g)) => s.value() == g,
        (Value::Integer(i), Got::Signed(g)) => i.value() == g,
        (Value::Integer(i), Got::Unsigned(g)) => u64::try_from(*i.value()).ok() == Some(*g),
        (Value::Float(f), Got::Float(g)) => f.value() == g,
        (Value::Boolean(b), Got::Bool(g)) => b.value() == g,
        _ => false,
    }
}

/// Whether a list holds the value, at any depth.
fn holds(v: &Value, got: &Got) -> bool {
    match v {
        Value::Array(a) => a.iter().any(|x| holds(x, got)),
        other => is(other, got),
    }
}

#[cfg(test)]
mod tests {
    use super::super::schema_error::read;
    use super::*;

    /// A tagged section as the schema has them: serde reads it from its own
    /// buffer, so its errors stop at the section.
    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct File {
        policy: Policy,
        #[serde(default)]
        tiers: Vec<Tier>,
    }
    #[derive(Debug, serde::Deserialize)]
    #[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
    #[allow(dead_code)]
    enum Policy {
        Widening {
            keep: bool,
            base: f64,
            weights: Option<Weights>,
        },
    }
    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Weights {
        skill: f64,
        wait: f64,
    }
    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Tier {
        tier: u32,
        weight: f64,
    }

    fn misread(text: &str) -> Misread {
        read::<File>(&text.parse().unwrap()).expect_err("a schema error")
    }

    fn schema(text: &str) -> Located {
        let retry = |t: &str| read::<File>(&t.parse().ok()?).err().map(|m| m.error);
        locate(text, &misread(text), Some(&retry))
    }

    const POLICY: &str = "[policy]\nkind = \"widening\"\nkeep = true\n";

    #[test]
    fn a_tagged_section_s_error_is_the_key_whose_removal_changes_it() {
        // `keep = true` is fine and is the same value as the bad `base`:
        // the guess from the value alone picks `keep`.
        let text = format!("{POLICY}base = true\n");
        let l = schema(&text);
        assert_eq!(l.key.as_deref(), Some("policy.base"));
        assert_eq!(l.line, Some(4));
        assert_eq!(l.message, "expected a number, got boolean `true`");
        let guess = locate(&text, &misread(&text), None);
        assert_eq!(guess.key.as_deref(), Some("policy.keep"));
    }

    #[test]
    fn a_table_inside_a_tagged_section_is_walked_into() {
        let text = format!("{POLICY}base = 1\n\n[policy.weights]\nskill = 1\nwait = [2]\n");
        let l = schema(&text);
        assert_eq!(l.key.as_deref(), Some("policy.weights.wait"));
        assert_eq!(l.line, Some(8));
        assert_eq!(l.message, "expected a number, got sequence");
    }

    #[test]
    fn an_unknown_or_missing_key_is_named_with_its_line() {
        let l = schema(&format!("{POLICY}base = 1\nmaximum = 3\n"));
        assert_eq!(l.key.as_deref(), Some("policy.maximum"));
        assert_eq!(l.line, Some(5));
        assert_eq!(
            l.message,
            "is not a key here; allowed: `keep`, `base`, `weights`"
        );
        // A missing key is named as missing, at its section.
        let l = schema(POLICY);
        assert_eq!(l.key.as_deref(), Some("policy.base"));
        assert_eq!(l.line, Some(1));
        assert_eq!(l.message, "is missing: this section needs it");
        // So is a missing tag.
        let l = schema("[policy]\nbase = 1\n");
        assert_eq!(l.key.as_deref(), Some("policy.kind"));
        let l = schema("\n[policy]\nkind = \"narrowing\"\n");
        assert_eq!(l.key.as_deref(), Some("policy.kind"));
        assert_eq!(l.line, Some(3));
        assert_eq!(l.message, "`narrowing` is not allowed; allowed: `widening`");
    }

    #[test]
    fn a_table_in_a_list_names_its_key_at_its_own_line() {
        let text = format!(
            "tiers = [{{ tier = 1, weight = 1.0 }},\n  {{ tier = 2, weight = \"x\" }}]\n{POLICY}base = 1\n"
        );
        let l = schema(&text);
        assert_eq!(l.key.as_deref(), Some("tiers.weight"));
        assert_eq!(l.line, Some(2));
        assert_eq!(l.message, "expected a number, got string \"x\"");
        let l = schema(&format!(
            "tiers = [{{ tier = -1, weight = 1 }}]\n{POLICY}base = 1\n"
        ));
        assert_eq!(
            l.message,
            "expected a whole number from 0 to 4294967295, got integer `-1`"
        );
        let l = schema(&format!(
            "tiers = [{{ tier = 1, weight = 1, w = 2 }}]\n{POLICY}base = 1\n"
        ));
        assert_eq!(l.key.as_deref(), Some("tiers.w"));
        assert_eq!(l.message, "is not a key here; allowed: `tier` or `weight`");
    }

    #[test]
    fn without_a_parse_the_message_is_kept() {
        let m = Misread {
            path: vec![Step::Key("run".into())],
            error: SchemaError::Custom("boom".into()),
        };
        let l = locate("x = [", &m, None);
        assert_eq!(
            (l.key.as_deref(), l.line, l.message.as_str()),
            (Some("run"), None, "boom")
        );
    }
}
