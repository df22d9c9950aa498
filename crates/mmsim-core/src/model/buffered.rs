//! A value read whole from any deserializer and read back out with the
//! caller's error type. serde's own buffer (the one behind tagged enums and
//! `flatten`) is private, so a caller that needs to look at the keys before
//! a type takes them, or to give the errors a type of its own (the scenario
//! loader's structured schema errors), reads into this instead.

use serde::de::value::{MapAccessDeserializer, MapDeserializer, SeqDeserializer};
use serde::de::{self, Deserialize, Deserializer, IntoDeserializer, Unexpected, Visitor};
use std::marker::PhantomData;

/// A self-describing value: what a TOML or JSON document holds, with its
/// tables' keys in the document's order.
#[derive(Clone, Debug, PartialEq)]
pub enum Buffered {
    /// `true` or `false`.
    Bool(bool),
    /// A signed integer (TOML's integers are all read as these).
    I64(i64),
    /// An unsigned integer too large for `I64`.
    U64(u64),
    /// A floating-point number.
    F64(f64),
    /// A string.
    Str(String),
    /// No value (JSON's `null`, an absent option).
    Unit,
    /// A list.
    Seq(Vec<Buffered>),
    /// A table, its keys in order.
    Map(Vec<(String, Buffered)>),
}

impl Buffered {
    /// What serde's messages call this value ("string \"x\"", "map").
    pub fn unexpected(&self) -> Unexpected<'_> {
        match self {
            Buffered::Bool(b) => Unexpected::Bool(*b),
            Buffered::I64(i) => Unexpected::Signed(*i),
            Buffered::U64(u) => Unexpected::Unsigned(*u),
            Buffered::F64(f) => Unexpected::Float(*f),
            Buffered::Str(s) => Unexpected::Str(s),
            Buffered::Unit => Unexpected::Unit,
            Buffered::Seq(_) => Unexpected::Seq,
            Buffered::Map(_) => Unexpected::Map,
        }
    }

    /// A deserializer over this value whose errors are `E`.
    pub fn into_deserializer_of<E: de::Error>(self) -> BufferedDeserializer<E> {
        BufferedDeserializer {
            value: self,
            error: PhantomData,
        }
    }
}

impl<'de> Deserialize<'de> for Buffered {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(BufferedVisitor)
    }
}

struct BufferedVisitor;

impl<'de> Visitor<'de> for BufferedVisitor {
    type Value = Buffered;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Buffered, E> {
        Ok(Buffered::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Buffered, E> {
        Ok(Buffered::I64(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Buffered, E> {
        // Kept signed where it fits, as TOML holds it, so a value reads back
        // through the same visitor method either way.
        Ok(i64::try_from(v).map_or(Buffered::U64(v), Buffered::I64))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Buffered, E> {
        Ok(Buffered::F64(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Buffered, E> {
        Ok(Buffered::Str(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Buffered, E> {
        Ok(Buffered::Str(v))
    }
    fn visit_unit<E>(self) -> Result<Buffered, E> {
        Ok(Buffered::Unit)
    }
    fn visit_none<E>(self) -> Result<Buffered, E> {
        Ok(Buffered::Unit)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Buffered, D::Error> {
        Buffered::deserialize(d)
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Buffered, D::Error> {
        Buffered::deserialize(d)
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Buffered, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element()? {
            out.push(v);
        }
        Ok(Buffered::Seq(out))
    }
    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Buffered, A::Error> {
        let mut out = Vec::new();
        while let Some((k, v)) = map.next_entry::<String, Buffered>()? {
            out.push((k, v));
        }
        Ok(Buffered::Map(out))
    }
}

/// Reads a [`Buffered`] back into any type, with errors of type `E` made
/// by serde's structured constructors (`invalid_type`, `unknown_field`, ...).
pub struct BufferedDeserializer<E> {
    value: Buffered,
    error: PhantomData<E>,
}

impl<'de, E: de::Error> IntoDeserializer<'de, E> for Buffered {
    type Deserializer = BufferedDeserializer<E>;
    fn into_deserializer(self) -> BufferedDeserializer<E> {
        self.into_deserializer_of()
    }
}

impl<'de, E: de::Error> Deserializer<'de> for BufferedDeserializer<E> {
    type Error = E;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, E> {
        match self.value {
            Buffered::Bool(b) => visitor.visit_bool(b),
            Buffered::I64(i) => visitor.visit_i64(i),
            Buffered::U64(u) => visitor.visit_u64(u),
            Buffered::F64(f) => visitor.visit_f64(f),
            Buffered::Str(s) => visitor.visit_string(s),
            Buffered::Unit => visitor.visit_unit(),
            Buffered::Seq(items) => {
                let mut seq = SeqDeserializer::new(items.into_iter());
                let v = visitor.visit_seq(&mut seq)?;
                seq.end()?;
                Ok(v)
            }
            Buffered::Map(entries) => {
                let mut map = MapDeserializer::new(entries.into_iter());
                let v = visitor.visit_map(&mut map)?;
                map.end()?;
                Ok(v)
            }
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, E> {
        match self.value {
            Buffered::Unit => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, E> {
        visitor.visit_newtype_struct(self)
    }

    /// A unit variant is written as its name; a variant with data as a
    /// table of one key, as serde's own buffer reads them.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, E> {
        match self.value {
            Buffered::Str(s) => visitor.visit_enum(s.into_deserializer()),
            Buffered::Map(entries) if entries.len() == 1 => visitor.visit_enum(
                MapAccessDeserializer::new(MapDeserializer::new(entries.into_iter())),
            ),
            other => Err(de::Error::invalid_type(
                other.unexpected(),
                &"string or map",
            )),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, E> {
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map struct
        identifier
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::de::value::Error;

    #[derive(Debug, PartialEq, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct S {
        a: f64,
        b: Option<u32>,
        mode: Mode,
        list: Vec<i64>,
    }
    #[derive(Debug, PartialEq, serde::Deserialize)]
    #[serde(rename_all = "kebab-case")]
    enum Mode {
        OnJoin,
    }

    fn map(entries: &[(&str, Buffered)]) -> Buffered {
        Buffered::Map(
            entries
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        )
    }

    #[test]
    fn a_value_reads_back_into_a_type_as_it_was_written() {
        let v = map(&[
            ("a", Buffered::I64(2)),
            ("mode", Buffered::Str("on-join".into())),
            ("list", Buffered::Seq(vec![Buffered::I64(-1)])),
        ]);
        let s = S::deserialize(v.clone().into_deserializer_of::<Error>()).unwrap();
        assert_eq!(
            s,
            S {
                a: 2.0,
                b: None,
                mode: Mode::OnJoin,
                list: vec![-1]
            }
        );
        // Read from JSON and back, the value is the same.
        let json = serde_json::json!({"a": 2, "mode": "on-join", "list": [-1]});
        assert_eq!(Buffered::deserialize(json).unwrap(), v);
    }

    #[test]
    fn errors_come_from_serde_s_structured_constructors() {
        let v = map(&[("a", Buffered::Str("x".into()))]);
        let e = S::deserialize(v.into_deserializer_of::<Error>()).unwrap_err();
        assert_eq!(e.to_string(), "invalid type: string \"x\", expected f64");
        let v = map(&[("c", Buffered::Unit)]);
        let e = S::deserialize(v.into_deserializer_of::<Error>()).unwrap_err();
        assert!(e.to_string().starts_with("unknown field `c`"), "{e}");
    }
}
