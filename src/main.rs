//! The `mmsim` binary: all of it lives in the library's `cli` module.

fn main() {
    std::process::exit(mmsim::cli::main());
}
