//! Helpers the integration tests share: the real binary, run from the
//! repository's root, and the scenario files beside it.

#![allow(dead_code)] // each test file uses its own subset

use std::path::Path;
use std::process::{Command, Output};

/// Runs the built `mmsim` with `args` from the repository's root.
pub fn mmsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mmsim"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the binary runs")
}

/// The path of `scenarios/NAME`.
pub fn scenario(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
