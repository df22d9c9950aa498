//! The `mmsim` binary: all of it lives in the library's `cli` module.

fn main() {
    restore_default_sigpipe();
    std::process::exit(mmsim::cli::main());
}

/// Rust starts programs with SIGPIPE ignored, so a write to a closed pipe
/// (`mmsim compare A B | head -1`) becomes an error that `println!` turns
/// into a panic (exit 101). Restoring the default makes mmsim end as `cat`
/// and `grep` do: quietly, killed by SIGPIPE (exit status 141 in a shell).
/// Only pipes and sockets raise SIGPIPE; files are unaffected, and every
/// output file is renamed into place whole, so nothing is left half-written.
fn restore_default_sigpipe() {
    #[cfg(unix)]
    // SAFETY: called first thing in `main`, before any thread exists;
    // `signal` with SIG_DFL installs no handler code.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
