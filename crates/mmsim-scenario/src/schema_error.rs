//! Reading the schema from a parsed file with errors of our own type: toml's
//! error keeps only serde's English sentence, so the loader reads through a
//! deserializer whose `Error` records serde's structured calls (which key is
//! unknown and which are allowed, which variant, what was given and what was
//! wanted) and the path of keys to the value, and words them for a designer
//! from those fields alone.

use mmsim_core::model::buffered::Buffered;
use serde::de::{self, Expected, Unexpected};
use std::fmt;

/// A schema error as serde's deserializers report it, field by field.
#[derive(Clone, Debug, PartialEq)]
pub enum SchemaError {
    /// A key the section does not take, and the keys it does.
    UnknownField {
        field: String,
        expected: &'static [&'static str],
    },
    /// A value of a tag or choice that is not one of `expected`.
    UnknownVariant {
        variant: String,
        expected: &'static [&'static str],
    },
    /// A key the section needs.
    MissingField(&'static str),
    /// A value of the wrong kind (a string for a number).
    InvalidType { got: Got, expected: String },
    /// A value of the right kind out of range (a negative count).
    InvalidValue { got: Got, expected: String },
    /// A list of the wrong length.
    InvalidLength { len: usize, expected: String },
    /// Our own checks' text (a duration's "`forever` is not a duration"),
    /// shown as it is.
    Custom(String),
}

/// What was given, as serde's `Unexpected` names it, owned.
#[derive(Clone, Debug, PartialEq)]
pub enum Got {
    Bool(bool),
    Unsigned(u64),
    Signed(i64),
    Float(f64),
    Char(char),
    Str(String),
    Bytes,
    Unit,
    Option,
    NewtypeStruct,
    Seq,
    Map,
    Enum,
    UnitVariant,
    NewtypeVariant,
    TupleVariant,
    StructVariant,
    Other(String),
}

impl From<Unexpected<'_>> for Got {
    fn from(u: Unexpected<'_>) -> Got {
        match u {
            Unexpected::Bool(b) => Got::Bool(b),
            Unexpected::Unsigned(v) => Got::Unsigned(v),
            Unexpected::Signed(v) => Got::Signed(v),
            Unexpected::Float(v) => Got::Float(v),
            Unexpected::Char(c) => Got::Char(c),
            Unexpected::Str(s) => Got::Str(s.to_owned()),
            Unexpected::Bytes(_) => Got::Bytes,
            Unexpected::Unit => Got::Unit,
            Unexpected::Option => Got::Option,
            Unexpected::NewtypeStruct => Got::NewtypeStruct,
            Unexpected::Seq => Got::Seq,
            Unexpected::Map => Got::Map,
            Unexpected::Enum => Got::Enum,
            Unexpected::UnitVariant => Got::UnitVariant,
            Unexpected::NewtypeVariant => Got::NewtypeVariant,
            Unexpected::TupleVariant => Got::TupleVariant,
            Unexpected::StructVariant => Got::StructVariant,
            Unexpected::Other(s) => Got::Other(s.to_owned()),
        }
    }
}

impl fmt::Display for Got {
    /// serde's own naming of the value (`string "x"`, `integer `5``).
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let u = match self {
            Got::Bool(b) => Unexpected::Bool(*b),
            Got::Unsigned(v) => Unexpected::Unsigned(*v),
            Got::Signed(v) => Unexpected::Signed(*v),
            Got::Float(v) => Unexpected::Float(*v),
            Got::Char(c) => Unexpected::Char(*c),
            Got::Str(s) => Unexpected::Str(s),
            Got::Bytes => Unexpected::Bytes(&[]),
            Got::Unit => Unexpected::Unit,
            Got::Option => Unexpected::Option,
            Got::NewtypeStruct => Unexpected::NewtypeStruct,
            Got::Seq => Unexpected::Seq,
            Got::Map => Unexpected::Map,
            Got::Enum => Unexpected::Enum,
            Got::UnitVariant => Unexpected::UnitVariant,
            Got::NewtypeVariant => Unexpected::NewtypeVariant,
            Got::TupleVariant => Unexpected::TupleVariant,
            Got::StructVariant => Unexpected::StructVariant,
            Got::Other(s) => Unexpected::Other(s),
        };
        u.fmt(f)
    }
}

impl std::error::Error for SchemaError {}

impl de::Error for SchemaError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        SchemaError::Custom(msg.to_string())
    }
    fn invalid_type(got: Unexpected, expected: &dyn Expected) -> Self {
        SchemaError::InvalidType {
            got: got.into(),
            expected: expected.to_string(),
        }
    }
    fn invalid_value(got: Unexpected, expected: &dyn Expected) -> Self {
        SchemaError::InvalidValue {
            got: got.into(),
            expected: expected.to_string(),
        }
    }
    fn invalid_length(len: usize, expected: &dyn Expected) -> Self {
        SchemaError::InvalidLength {
            len,
            expected: expected.to_string(),
        }
    }
    fn unknown_variant(variant: &str, expected: &'static [&'static str]) -> Self {
        SchemaError::UnknownVariant {
            variant: variant.to_owned(),
            expected,
        }
    }
    fn unknown_field(field: &str, expected: &'static [&'static str]) -> Self {
        SchemaError::UnknownField {
            field: field.to_owned(),
            expected,
        }
    }
    fn missing_field(field: &'static str) -> Self {
        SchemaError::MissingField(field)
    }
}

impl SchemaError {
    /// The keys or values allowed where this error happened, when serde
    /// listed them.
    pub fn allowed(&self) -> &'static [&'static str] {
        match self {
            SchemaError::UnknownField { expected, .. }
            | SchemaError::UnknownVariant { expected, .. } => expected,
            _ => &[],
        }
    }
}

impl fmt::Display for SchemaError {
    /// The designer's wording, placed after the key's name.
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            SchemaError::UnknownField { expected: &[], .. } => f.write_str("is not a key here"),
            SchemaError::UnknownField { expected, .. } => {
                write!(f, "is not a key here; allowed: {}", OneOf(expected))
            }
            SchemaError::UnknownVariant {
                variant,
                expected: &[],
            } => write!(f, "unknown variant `{variant}`, there are no variants"),
            SchemaError::UnknownVariant { variant, expected } => {
                write!(
                    f,
                    "`{variant}` is not allowed; allowed: {}",
                    OneOf(expected)
                )
            }
            SchemaError::MissingField(field) => write!(f, "missing field `{field}`"),
            SchemaError::InvalidType { got, expected }
            | SchemaError::InvalidValue { got, expected } => {
                write!(f, "expected {}, got {got}", wanted(expected))
            }
            SchemaError::InvalidLength { len, expected } => {
                write!(f, "invalid length {len}, expected {}", wanted(expected))
            }
            SchemaError::Custom(message) => f.write_str(message),
        }
    }
}

/// A list of names as serde's messages give them: "`a`", "`a` or `b`",
/// "`a`, `b`, `c`".
struct OneOf(&'static [&'static str]);

impl fmt::Display for OneOf {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self.0 {
            [a, b] => write!(f, "`{a}` or `{b}`"),
            names => {
                for (i, n) in names.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "`{n}`")?;
                }
                Ok(())
            }
        }
    }
}

/// What a value should have been, in a designer's terms. serde's
/// `Expected` is only ever a description: a primitive's is its Rust type's
/// name, which says nothing to someone writing a scenario, so those few are
/// named here by the whole description; everything else (our visitors' own
/// "a duration such as ...", a tagged section's example table) is shown as
/// written.
fn wanted(expected: &str) -> &str {
    match expected {
        "f64" | "f32" => "a number",
        "u32" => "a whole number from 0 to 4294967295",
        "u64" | "usize" => "a whole number, zero or more",
        "u8" => "a whole number from 0 to 255",
        "a sequence" => "a list, e.g. [1, 2]",
        other => other,
    }
}

/// One step of the path to a value: a table's key or a list's index.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    Key(String),
    Index(usize),
}

/// A schema error and the path to the deepest value the deserializer saw
/// it at (inside a tagged or flattened section serde reads from its own
/// buffer, the section itself).
#[derive(Clone, Debug, PartialEq)]
pub struct Misread {
    pub path: Vec<Step>,
    pub error: SchemaError,
}

/// `T` read from a parsed file (or one with `--set` overrides applied).
pub fn read<T: serde::de::DeserializeOwned>(table: &toml::Table) -> Result<T, Misread> {
    let value = buffered(&toml::Value::Table(table.clone()));
    serde_path_to_error::deserialize(value.into_deserializer_of::<SchemaError>()).map_err(|e| {
        let mut path = Vec::new();
        for segment in e.path().iter() {
            use serde_path_to_error::Segment;
            match segment {
                Segment::Map { key } | Segment::Enum { variant: key } => {
                    path.push(Step::Key(key.clone()))
                }
                Segment::Seq { index } => path.push(Step::Index(*index)),
                // Below a step the tracker lost, the path would mislead.
                Segment::Unknown => break,
            }
        }
        Misread {
            path,
            error: e.into_inner(),
        }
    })
}

/// The toml name of a date-time's stand-in table, which `toml::Value`'s own
/// `Deserialize` turns back into a date-time (so a raw `toml::Value` in the
/// schema, `[sweep]`, reads one as toml's deserializer gives it).
const DATETIME_KEY: &str = "$__toml_private_datetime";

fn buffered(v: &toml::Value) -> Buffered {
    match v {
        toml::Value::String(s) => Buffered::Str(s.clone()),
        toml::Value::Integer(i) => Buffered::I64(*i),
        toml::Value::Float(f) => Buffered::F64(*f),
        toml::Value::Boolean(b) => Buffered::Bool(*b),
        toml::Value::Datetime(d) => {
            Buffered::Map(vec![(DATETIME_KEY.into(), Buffered::Str(d.to_string()))])
        }
        toml::Value::Array(a) => Buffered::Seq(a.iter().map(buffered).collect()),
        toml::Value::Table(t) => {
            Buffered::Map(t.iter().map(|(k, v)| (k.clone(), buffered(v))).collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct File {
        run: Run,
        #[serde(default)]
        tiers: Vec<Tier>,
        when: Option<toml::Value>,
    }
    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Run {
        seed: u64,
        #[serde(default)]
        mode: Option<Mode>,
    }
    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Tier {
        weight: f64,
    }
    #[derive(Debug, serde::Deserialize)]
    #[serde(rename_all = "kebab-case")]
    enum Mode {
        OnJoin,
    }

    fn misread(text: &str) -> Misread {
        read::<File>(&text.parse().unwrap()).unwrap_err()
    }
    fn key(k: &str) -> Step {
        Step::Key(k.into())
    }

    #[test]
    fn each_error_keeps_serde_s_fields_and_the_path_to_its_value() {
        let m = misread("[run]\nseed = 1\nsed = 2\n");
        assert_eq!(m.path, vec![key("run"), key("sed")]);
        assert_eq!(
            m.error,
            SchemaError::UnknownField {
                field: "sed".into(),
                expected: &["seed", "mode"]
            }
        );
        assert_eq!(
            m.error.to_string(),
            "is not a key here; allowed: `seed` or `mode`"
        );
        let m = misread("[run]\nseed = -1\n");
        assert_eq!(m.path, vec![key("run"), key("seed")]);
        assert_eq!(
            m.error,
            SchemaError::InvalidValue {
                got: Got::Signed(-1),
                expected: "u64".into()
            }
        );
        assert_eq!(
            m.error.to_string(),
            "expected a whole number, zero or more, got integer `-1`"
        );
        let m = misread("[run]\nseed = 1\nmode = \"on-leave\"\n");
        assert_eq!(m.path, vec![key("run"), key("mode")]);
        assert_eq!(
            m.error.to_string(),
            "`on-leave` is not allowed; allowed: `on-join`"
        );
        let m = misread("[run]\n");
        assert_eq!(
            (m.path, m.error),
            (vec![key("run")], SchemaError::MissingField("seed"))
        );
        let m = misread("tiers = [{ weight = 1 }, { weight = \"x\" }]\n[run]\nseed = 1\n");
        assert_eq!(m.path, vec![key("tiers"), Step::Index(1), key("weight")]);
        assert_eq!(m.error.to_string(), "expected a number, got string \"x\"");
    }

    #[test]
    fn a_date_time_reads_back_into_a_raw_toml_value() {
        let t: toml::Table = "when = 1979-05-27\n[run]\nseed = 1\n".parse().unwrap();
        let f = read::<File>(&t).unwrap();
        assert_eq!(f.when, t.get("when").cloned());
    }
}
