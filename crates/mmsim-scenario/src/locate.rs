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

/// Parses a changed copy of the file as the schema does: serde's message
/// when it still fails, `None` when it does not.
pub type Retry<'a> = &'a dyn Fn(&str) -> Option<String>;

/// Keys that name a tagged section's variant (`[policy] kind`, `[outcome]
/// model`, `skill = { dist = ... }`): taking one out fails for its own
/// sake, not for the error being looked for.
const TAGS: [&str; 5] = ["kind", "model", "system", "method", "dist"];

/// Finds the key `message` (serde's, at byte `span` of `text`) is about;
/// when the message names no key and `retry` is given, the key whose removal
/// changes the error, found by parsing the file again without each of the
/// section's keys in turn (`retry`). serde checks a section's values in the
/// file's order before it looks for missing ones, so the first key whose
/// removal changes the message is the one it stopped at, whatever the
/// message says; the guess from the quoted value is the fallback.
pub fn locate(
    text: &str,
    span: Option<Range<usize>>,
    message: &str,
    retry: Option<Retry<'_>>,
) -> Located {
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
        } else if let Some(k) = retry
            .and_then(|r| culprit(text, &kids, &message, r))
            .or_else(|| offending_child(&message, &kids))
        {
            target = k;
            // A table inside the section (`[policy.weights]`): on to the
            // key inside it.
            while let (true, Some(r)) = (target.container, retry) {
                match culprit(text, &children(target), &message, r) {
                    Some(k) => target = k,
                    None => break,
                }
            }
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

/// The first of `kids` (in the file's order) without which the file fails
/// differently or not at all.
fn culprit<'n>(text: &str, kids: &[&'n Node], message: &str, retry: Retry<'_>) -> Option<&'n Node> {
    let mut order: Vec<&'n Node> = kids.to_vec();
    order.sort_by_key(|k| k.key_at);
    order.into_iter().find(|k| {
        let name = k.path.rsplit('.').next().unwrap_or("");
        let Some(changed) = without(text, k.range.clone()) else {
            return false;
        };
        // A copy that is no longer TOML says nothing about the schema.
        if changed.parse::<toml::Table>().is_err() {
            return false;
        }
        match retry(&changed) {
            None => true,
            Some(m) if TAGS.contains(&name) && m.contains(&format!("`{name}`")) => false,
            Some(m) => m.trim().replace('\n', " ") != message,
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

    /// A tagged section as the schema has them: serde reports its errors
    /// at the section's start without the key.
    #[derive(serde::Deserialize)]
    #[allow(dead_code)]
    struct File {
        policy: Policy,
    }
    #[derive(serde::Deserialize)]
    #[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
    #[allow(dead_code)]
    enum Policy {
        Widening {
            keep: bool,
            base: f64,
            weights: Option<Weights>,
        },
    }
    #[derive(serde::Deserialize)]
    #[allow(dead_code)]
    struct Weights {
        skill: f64,
        wait: f64,
    }

    fn schema(text: &str) -> Located {
        let e = toml::from_str::<File>(text).err().expect("a schema error");
        let retry = |t: &str| {
            toml::from_str::<File>(t)
                .err()
                .map(|e| e.message().to_owned())
        };
        locate(text, e.span(), e.message(), Some(&retry))
    }

    #[test]
    fn a_tagged_section_s_error_is_the_key_whose_removal_changes_it() {
        // `keep = true` is fine and quotes the same value as the bad `base`:
        // the guess from the value alone picked `keep`.
        let text = "[policy]\nkind = \"widening\"\nkeep = true\nbase = true\n";
        let l = schema(text);
        assert_eq!(l.key.as_deref(), Some("policy.base"));
        assert_eq!(l.line, Some(4));
        let guess = locate(
            text,
            toml::from_str::<File>(text).err().unwrap().span(),
            "invalid type: boolean `true`, expected f64",
            None,
        );
        assert_eq!(guess.key.as_deref(), Some("policy.keep"));
    }

    #[test]
    fn a_table_inside_a_tagged_section_is_walked_into() {
        let text = "[policy]\nkind = \"widening\"\nkeep = true\nbase = 1\n\n[policy.weights]\nskill = 1\nwait = [2]\n";
        let l = schema(text);
        assert_eq!(l.key.as_deref(), Some("policy.weights.wait"));
        assert_eq!(l.line, Some(8));
        // A missing key is still named as missing, at its section.
        let l = schema("[policy]\nkind = \"widening\"\nkeep = true\n");
        assert_eq!(l.key.as_deref(), Some("policy.base"));
        assert_eq!(l.message, "is missing: this section needs it");
    }

    fn at(text: &str, needle: &str, message: &str) -> Located {
        let start = text.find(needle).unwrap();
        locate(text, Some(start..start + needle.len()), message, None)
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
        let l = locate("x = 1", None, "boom\n", None);
        assert_eq!((l.key, l.line, l.message.as_str()), (None, None, "boom"));
    }
}
