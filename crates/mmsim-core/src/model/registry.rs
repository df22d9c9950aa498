//! Declares a family of plug-ins (policies, rating systems, team formers,
//! outcome models) once: one line per plug-in generates its module, the
//! scenario section's enum tagged by the plug-in's name, and the name,
//! validate and build dispatch, so a name is written in one place.

use super::buffered::Buffered;
use serde::de::{Deserialize, Deserializer, Error};
use serde::Serialize;

/// Declares a plug-in family. Each line `"name" => Variant(module::Params)
/// builds Type` (ending `in "module/"` when the module is a folder) adds
/// `pub mod module` (its file), re-exports `Params` and
/// `Type`, and a variant of the config enum tagged `name`. Every
/// `Params` implements `Default`, `Serialize`, `Deserialize` and an inherent
/// `validate(&self) -> Result<(), ParamError>`; `Type::new(Params)` builds the
/// plug-in behind `dyn $Trait`. With `catalogue NAME`, every `Params` also
/// has the inherent consts `SOURCE` and `PARAMETERS`, listed with the name
/// and file in `NAME: &[Entry]` in declaration order. With `validate(arg: Type, ..)` after the trait, every
/// `Params::validate` takes those arguments as well (team formers need the
/// match format), and so does the generated `validate_params`.
macro_rules! plugins {
    // A plug-in's file: `module.rs`, or the folder `in "module/"` names.
    (@file $module:ident) => { concat!(stringify!($module), ".rs") };
    (@file $module:ident $folder:literal) => { $folder };
    // The validate dispatch, apart so that the argument list is one token
    // tree: a variable that repeats per argument cannot be used inside the
    // per-variant repetition.
    (@validate $this:ident, $args:tt, $($Config:ident::$Variant:ident),+) => {
        match $this {
            $( $Config::$Variant(p) => p.validate $args, )+
        }
    };
    (
        $(#[$meta:meta])*
        pub enum $Config:ident tagged $tag:literal builds $Trait:path
            $(, validate($($arg:ident: $Arg:ty),*))?, catalogue $Cat:ident {
            $( $(#[$vmeta:meta])* $name:literal => $Variant:ident($module:ident::$Params:ident) builds $Built:ident $(in $folder:literal)?, )+
        }
    ) => {
        $crate::model::registry::plugins! {
            $(#[$meta])*
            pub enum $Config tagged $tag builds $Trait $(, validate($($arg: $Arg),*))? {
                $( $(#[$vmeta])* $name => $Variant($module::$Params) builds $Built, )+
            }
        }

        /// One entry per plug-in, in declaration order, for `mmsim catalogue`
        /// and the docs' tables.
        pub const $Cat: &[$crate::model::registry::Entry] = &[
            $( $crate::model::registry::Entry {
                name: $name,
                source: $module::$Params::SOURCE,
                parameters: $module::$Params::PARAMETERS,
                file: $crate::model::registry::plugins!(@file $module $($folder)?),
            }, )+
        ];
    };
    (
        $(#[$meta:meta])*
        pub enum $Config:ident tagged $tag:literal builds $Trait:path
            $(, validate($($arg:ident: $Arg:ty),*))? {
            $( $(#[$vmeta:meta])* $name:literal => $Variant:ident($module:ident::$Params:ident) builds $Built:ident, )+
        }
    ) => {
        $(
            pub mod $module;
            pub use $module::{$Params, $Built};
        )+

        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
        #[serde(tag = $tag)]
        pub enum $Config {
            $(
                $(#[$vmeta])*
                #[doc = concat!("`", $tag, " = \"", $name, "\"`, with its parameters.")]
                #[serde(
                    rename = $name,
                    deserialize_with = "crate::model::registry::listing_keys"
                )]
                $Variant($module::$Params),
            )+
        }

        impl $Config {
            /// The key whose value picks the plug-in.
            pub const TAG: &'static str = $tag;

            /// Every value of the tag, in declaration order.
            pub const NAMES: &'static [&'static str] = &[$($name),+];

            /// The value of the tag that selects this variant.
            pub fn name(&self) -> &'static str {
                match self {
                    $( $Config::$Variant(_) => $name, )+
                }
            }

            /// Every variant with its default parameters, in declaration order.
            pub fn defaults() -> Vec<$Config> {
                vec![$( $Config::$Variant(Default::default()), )+]
            }

            /// Checks the variant's own parameters; keys are relative to the
            /// section.
            fn validate_params(&self $($(, $arg: $Arg)*)?) -> Result<(), $crate::model::ParamError> {
                $crate::model::registry::plugins!(
                    @validate self, ($($($arg),*)?), $($Config::$Variant),+
                )
            }

            /// The plug-in these parameters describe. Call `validate` first:
            /// build does not check again.
            pub fn build(&self) -> Box<dyn $Trait> {
                match self {
                    $( $Config::$Variant(p) => Box::new($module::$Built::new(p.clone())), )+
                }
            }
        }
    };
}
pub(crate) use plugins;

/// A plug-in as the catalogue lists it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The value of the family's tag that picks it.
    pub name: &'static str,
    /// Where it comes from: the seed passage or the paper.
    pub source: &'static str,
    /// Its keys in the scenario section (`x.*` for a sub-table).
    pub parameters: &'static str,
    /// Its file in the family's folder.
    pub file: &'static str,
}

/// Deserializes a plug-in's parameters. A parameter struct that flattens a
/// shared part (the matching cadence) is read by serde as a map, and serde
/// refuses its unknown key with a bare message that lists nothing; this finds
/// the key itself (one the struct does not write, without which the rest
/// reads) and refuses it with serde's structured `unknown_field`, listing the
/// keys the struct takes in the order it writes them, as serde does for any
/// other struct.
pub fn listing_keys<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Serialize + Default,
{
    if !reads_a_map::<T>() {
        // serde's own `unknown_field` already names the struct's keys.
        return T::deserialize(d);
    }
    let value = Buffered::deserialize(d)?;
    let e = match T::deserialize(value.clone().into_deserializer_of::<D::Error>()) {
        Ok(t) => return Ok(t),
        Err(e) => e,
    };
    let (Buffered::Map(entries), Ok(serde_json::Value::Object(written))) =
        (value, serde_json::to_value(T::default()))
    else {
        return Err(e);
    };
    let keys: Vec<&str> = written.keys().map(String::as_str).collect();
    let Some((unknown, _)) = entries.iter().find(|(k, _)| !keys.contains(&k.as_str())) else {
        return Err(e);
    };
    // serde reports an unknown key of a flattening struct only after every
    // other error: it is the error when the rest reads without it.
    let known: Vec<(String, Buffered)> = entries
        .iter()
        .filter(|(k, _)| keys.contains(&k.as_str()))
        .cloned()
        .collect();
    match T::deserialize(Buffered::Map(known).into_deserializer_of::<D::Error>()) {
        Ok(_) => Err(D::Error::unknown_field(unknown, interned(&keys))),
        Err(_) => Err(e),
    }
}

/// Whether `T` asks its deserializer for a map (a struct with a flattened
/// field does) rather than for a struct with its list of fields.
fn reads_a_map<'de, T: Deserialize<'de>>() -> bool {
    let asked = std::cell::Cell::new(false);
    let _ = T::deserialize(Probe(&asked));
    asked.get()
}

/// Answers nothing; notes whether it was asked for a map.
struct Probe<'a>(&'a std::cell::Cell<bool>);

impl<'de> Deserializer<'de> for Probe<'_> {
    type Error = serde::de::value::Error;

    fn deserialize_any<V: serde::de::Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(Self::Error::custom("probe"))
    }

    fn deserialize_map<V: serde::de::Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        self.0.set(true);
        Err(Self::Error::custom("probe"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct struct enum identifier ignored_any
    }
}

/// `unknown_field` takes a `'static` list: each distinct list of keys is
/// kept once for the life of the process (a few dozen plug-ins at most).
fn interned(keys: &[&str]) -> &'static [&'static str] {
    static LISTS: std::sync::Mutex<Vec<&'static [&'static str]>> =
        std::sync::Mutex::new(Vec::new());
    let mut lists = LISTS.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(list) = lists.iter().find(|l| **l == keys) {
        return list;
    }
    let list: &'static [&'static str] =
        Vec::leak(keys.iter().map(|k| &*String::leak(k.to_string())).collect());
    lists.push(list);
    list
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::de::value::Error as ValueError;

    #[derive(Debug, Default, Serialize, serde::Deserialize)]
    #[serde(deny_unknown_fields, default)]
    struct Flat {
        base: f64,
        #[serde(flatten)]
        shared: Shared,
    }
    #[derive(Debug, Default, Serialize, serde::Deserialize)]
    #[serde(deny_unknown_fields, default)]
    struct Shared {
        tick: f64,
    }

    fn read(json: serde_json::Value) -> Result<Flat, ValueError> {
        let value = Buffered::deserialize(json).unwrap();
        listing_keys(value.into_deserializer_of::<ValueError>())
    }

    #[test]
    fn a_flattening_struct_s_unknown_key_is_refused_with_its_keys() {
        assert_eq!(
            read(serde_json::json!({"tick": 2})).unwrap().shared.tick,
            2.0
        );
        let e = read(serde_json::json!({"base": 1, "maxx": 2})).unwrap_err();
        // serde's `unknown_field` wording, built from the structured call.
        assert_eq!(
            e.to_string(),
            "unknown field `maxx`, expected `base` or `tick`"
        );
        // A bad value of a known key comes first, as serde orders them.
        let e = read(serde_json::json!({"maxx": 2, "tick": "x"})).unwrap_err();
        assert_eq!(e.to_string(), "invalid type: string \"x\", expected f64");
        assert!(reads_a_map::<Flat>() && !reads_a_map::<Shared>());
    }
}
