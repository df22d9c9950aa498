//! Pointing a schema error at its key. serde reports a type error inside an
//! inline table or a tagged section (`skill = { dist = ..., max = "lots" }`,
//! `[policy]`) at the start of the whole table and without the key's name;
//! this finds the key the message is about and its own line, and rewords
//! serde's type names for a designer ("expected f64" -> "expected a number").

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

/// One key of the file: its dotted path, where its key (or header) starts,
/// what it covers (key through value, or header through its last entry),
/// and its value's text when it is a plain value.
struct Node {
    path: String,
    key_at: usize,
    range: Range<usize>,
    value: Option<String>,
    depth: usize,
    container: bool,
    /// A list value; `raw` holds its text.
    list: bool,
    raw: String,
}

/// Finds the key `message` (serde's, at byte `span` of `text`) is about.
pub fn locate(text: &str, span: Option<Range<usize>>, message: &str) -> Located {
    let message = message.trim().replace('\n', " ");
    let line_of = |at: usize| text[..at.min(text.len())].matches('\n').count() + 1;
    let Some(span) = span else {
        return Located {
            key: None,
            line: None,
            message,
        };
    };
    let fallback = Located {
        key: None,
        line: Some(line_of(span.start)),
        message: reword(&message),
    };
    let Ok(doc) = toml_edit::ImDocument::parse(text.to_owned()) else {
        return fallback;
    };
    let mut nodes = Vec::new();
    walk_table(text, doc.as_table(), "", 0, &mut nodes);
    // The deepest key whose extent holds the error's start.
    let Some(at) = nodes
        .iter()
        .filter(|n| n.range.start <= span.start && span.start < n.range.end.max(n.range.start + 1))
        .max_by_key(|n| (n.depth, n.range.start))
    else {
        return fallback;
    };
    let children = |n: &Node| -> Vec<&Node> {
        let prefix = format!("{}.", n.path);
        nodes
            .iter()
            .filter(|c| c.depth == n.depth + 1 && c.path.starts_with(&prefix))
            .collect()
    };
    let mut target = at;
    if at.container {
        let kids = children(at);
        if let Some(name) = between(&message, "unknown field `", "`") {
            if let Some(k) = kids
                .iter()
                .find(|c| c.path.rsplit('.').next() == Some(name))
            {
                target = k;
            }
        } else if let Some(name) = between(&message, "missing field `", "`") {
            return Located {
                key: Some(format!("{}.{name}", at.path)),
                line: Some(line_of(at.key_at)),
                message: "is missing: this section needs it".into(),
            };
        } else if let Some(k) = offending_child(&message, &kids) {
            target = k;
        }
    }
    Located {
        key: Some(target.path.clone()),
        line: Some(line_of(target.key_at)),
        message: reword(&message),
    }
}

fn walk_table(text: &str, t: &toml_edit::Table, prefix: &str, depth: usize, out: &mut Vec<Node>) {
    // A section starts at its header line's `[`, before its key.
    let line_start = |at: usize| text[..at.min(text.len())].rfind('\n').map_or(0, |i| i + 1);
    for (k, item) in t.iter() {
        let Some(key) = t.key(k) else { continue };
        let path = join(prefix, k);
        let key_at = key.span().map_or(0, |s| s.start);
        match item {
            Item::Table(sub) => {
                let at = sub
                    .span()
                    .map_or(line_start(key_at), |s| s.start.min(line_start(key_at)));
                let first = out.len();
                walk_table(text, sub, &path, depth + 1, out);
                let end = out[first..]
                    .iter()
                    .map(|n| n.range.end)
                    .max()
                    .unwrap_or(at + 1);
                out.push(node(path, at, at..end.max(at + 1), None, depth, true));
            }
            Item::ArrayOfTables(arr) => {
                for sub in arr.iter() {
                    let at = sub
                        .span()
                        .map_or(line_start(key_at), |s| s.start.min(line_start(key_at)));
                    let first = out.len();
                    walk_table(text, sub, &path, depth + 1, out);
                    let end = out[first..]
                        .iter()
                        .map(|n| n.range.end)
                        .max()
                        .unwrap_or(at + 1);
                    out.push(node(
                        path.clone(),
                        at,
                        at..end.max(at + 1),
                        None,
                        depth,
                        true,
                    ));
                }
            }
            Item::Value(v) => walk_value(v, path, key_at, depth, out),
            Item::None => {}
        }
    }
}

fn walk_value(v: &Value, path: String, key_at: usize, depth: usize, out: &mut Vec<Node>) {
    let end = v.span().map_or(key_at + 1, |s| s.end);
    match v {
        Value::InlineTable(t) => {
            for (k, inner) in t.iter() {
                let at = t
                    .key(k)
                    .and_then(|key| key.span())
                    .map_or(key_at, |s| s.start);
                walk_value(inner, join(&path, k), at, depth + 1, out);
            }
            out.push(node(path, key_at, key_at..end, None, depth, true));
        }
        Value::Array(a) => {
            // Tables inside a list (`tiers = [{ tier = 1, weight = 0.5 }]`)
            // name their keys without an index; the line tells them apart.
            for inner in a.iter() {
                if let Value::InlineTable(_) = inner {
                    let at = inner.span().map_or(key_at, |s| s.start);
                    walk_value(inner, path.clone(), at, depth + 1, out);
                }
            }
            let mut n = node(path, key_at, key_at..end, None, depth, false);
            n.list = true;
            n.raw = v.to_string();
            out.push(n);
        }
        other => {
            let shown = match other {
                Value::String(s) => s.value().clone(),
                Value::Integer(i) => i.value().to_string(),
                Value::Float(f) => f.value().to_string(),
                Value::Boolean(b) => b.value().to_string(),
                Value::Datetime(d) => d.value().to_string(),
                _ => String::new(),
            };
            out.push(node(path, key_at, key_at..end, Some(shown), depth, false));
        }
    }
}

fn node(
    path: String,
    key_at: usize,
    range: Range<usize>,
    value: Option<String>,
    depth: usize,
    container: bool,
) -> Node {
    Node {
        path,
        key_at,
        range,
        value,
        depth,
        container,
        list: false,
        raw: String::new(),
    }
}

fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_owned()
    } else {
        format!("{prefix}.{key}")
    }
}

fn between<'a>(text: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let start = text.find(open)? + open.len();
    let len = text[start..].find(close)?;
    Some(&text[start..start + len])
}

/// The key inside a table that serde's message is about: a plain value
/// equal to the one quoted, a list holding it, or the first list or table
/// when the message says a list or table was not wanted.
fn offending_child<'n>(message: &str, kids: &[&'n Node]) -> Option<&'n Node> {
    if message.starts_with("invalid type: sequence") {
        return kids.iter().copied().find(|c| c.list);
    }
    if message.starts_with("invalid type: map") {
        return kids.iter().copied().find(|c| c.container);
    }
    let shown = offending_value(message)?;
    kids.iter()
        .copied()
        .find(|c| c.value.as_deref() == Some(shown.as_str()))
        .or_else(|| {
            kids.iter()
                .copied()
                .find(|c| c.list && c.raw.contains(&format!("\"{shown}\"")))
        })
}

/// The value serde's message quotes (`string "lots"`, `integer `5``,
/// `unknown variant `coin``, or a duration's own "`forever` is not ..."),
/// as the file's value would print.
fn offending_value(message: &str) -> Option<String> {
    if let Some(s) = between(message, "string \"", "\"") {
        return Some(s.to_owned());
    }
    for open in [
        "integer `",
        "floating point `",
        "boolean `",
        "unknown variant `",
        "`",
    ] {
        if let Some(s) = between(message, open, "`") {
            return Some(s.to_owned());
        }
    }
    None
}

/// serde's wording in a designer's terms, placed after the key's name.
pub fn reword(message: &str) -> String {
    let mut m = message.trim().replace('\n', " ");
    for (from, to) in [
        ("expected f64", "expected a number"),
        (
            "expected u32",
            "expected a whole number from 0 to 4294967295",
        ),
        ("expected u64", "expected a whole number, zero or more"),
        ("expected u8", "expected a whole number from 0 to 255"),
        ("expected usize", "expected a whole number, zero or more"),
        ("expected a sequence", "expected a list, e.g. [1, 2]"),
        (
            "expected internally tagged enum SkillDist",
            "expected a table such as { dist = \"normal\", mean = 1500, sd = 350 }",
        ),
        (
            "expected internally tagged enum Patience",
            "expected a table such as { dist = \"exponential\", mean = \"5m\" }",
        ),
    ] {
        m = m.replace(from, to);
    }
    if let Some(rest) = m.strip_prefix("unknown field ") {
        if let Some((_, allowed)) = rest.split_once(", expected ") {
            let allowed = allowed.trim_start_matches("one of ");
            return format!("is not a key here; allowed: {allowed}");
        }
        return "is not a key here".into();
    }
    if let Some(rest) = m.strip_prefix("unknown variant ") {
        if let Some((value, allowed)) = rest.split_once(", expected ") {
            let allowed = allowed.trim_start_matches("one of ");
            return format!("{value} is not allowed; allowed: {allowed}");
        }
    }
    if let Some(rest) = m.strip_prefix("invalid type: ") {
        if let Some((got, want)) = rest.split_once(", expected ") {
            return format!("expected {want}, got {got}");
        }
    }
    if let Some(rest) = m.strip_prefix("invalid value: ") {
        if let Some((got, want)) = rest.split_once(", expected ") {
            return format!("expected {want}, got {got}");
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str, needle: &str, message: &str) -> Located {
        let start = text.find(needle).unwrap();
        locate(text, Some(start..start + needle.len()), message)
    }

    #[test]
    fn a_type_error_reported_at_an_inline_table_names_the_key_inside() {
        let text = "[population]\nsize = 5\nskill = { dist = \"normal\", mean = 1, sd = 2, max = \"lots\" }\n";
        let l = at(
            text,
            "{ dist",
            "invalid type: string \"lots\", expected f64",
        );
        assert_eq!(l.key.as_deref(), Some("population.skill.max"));
        assert_eq!(l.line, Some(3));
        assert_eq!(l.message, "expected a number, got string \"lots\"");
    }

    #[test]
    fn a_section_error_names_the_unknown_or_missing_key_at_its_line() {
        let text = "[run]\nname = \"x\"\n\n[policy]\nkind = \"widening\"\nbase = 1\nmaximum = 3\n";
        let l = at(
            text,
            "[policy]",
            "unknown field `maximum`, expected one of `base`, `max`",
        );
        assert_eq!(l.key.as_deref(), Some("policy.maximum"));
        assert_eq!(l.line, Some(7));
        assert!(
            l.message.contains("allowed: `base`, `max`"),
            "{}",
            l.message
        );
        let l = at(text, "[policy]", "missing field `rate_per_s`");
        assert_eq!(l.key.as_deref(), Some("policy.rate_per_s"));
        assert_eq!(l.line, Some(4));
        let l = at(text, "[policy]", "unknown variant `widening`, expected `x`");
        assert_eq!(l.key.as_deref(), Some("policy.kind"));
        assert_eq!(l.line, Some(5));
    }

    #[test]
    fn a_plain_value_is_its_own_key_and_lists_name_their_key() {
        let text = "[arrivals]\nrate_per_s = 1\nparty_sizes = [0.5, \"x\"]\n";
        let l = at(text, "\"x\"", "invalid type: string \"x\", expected f64");
        assert_eq!(l.key.as_deref(), Some("arrivals.party_sizes"));
        assert_eq!(l.line, Some(3));
        let text =
            "[population]\ntiers = [{ tier = 1, weight = 1.0 },\n  { tier = 2, weight = \"x\" }]\n";
        let l = at(
            text,
            "{ tier = 2",
            "invalid type: string \"x\", expected f64",
        );
        assert_eq!(l.key.as_deref(), Some("population.tiers.weight"));
        assert_eq!(l.line, Some(3));
    }

    #[test]
    fn without_a_span_or_a_parse_the_message_is_kept() {
        let l = locate("x = 1", None, "boom\n");
        assert_eq!((l.key, l.line, l.message.as_str()), (None, None, "boom"));
    }
}
