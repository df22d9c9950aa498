//! Declares a family of plug-ins (policies, rating systems, team formers,
//! outcome models) once: one line per plug-in generates its module, the
//! scenario section's enum tagged by the plug-in's name, and the name,
//! validate and build dispatch, so a name is written in one place.

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
/// shared part (the matching cadence) gets serde's bare "unknown field `x`";
/// this adds the list of keys the struct takes, in the order it writes them,
/// so the message reads as for any other struct: "unknown field `x`, expected
/// one of `a`, `b`".
pub fn listing_keys<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Serialize + Default,
{
    T::deserialize(d).map_err(|e| {
        let message = e.to_string();
        let message = message.trim_end();
        let bare_unknown = message.starts_with("unknown field `")
            && message.ends_with('`')
            && message.matches('`').count() == 2;
        match serde_json::to_value(T::default()) {
            Ok(serde_json::Value::Object(keys)) if bare_unknown => {
                let list: Vec<String> = keys.keys().map(|k| format!("`{k}`")).collect();
                D::Error::custom(format!("{message}, expected one of {}", list.join(", ")))
            }
            _ => e,
        }
    })
}
