//! Ctrl-C and SIGTERM while an output is being written: stop at once with
//! exit 130 or 143, leave `--out` whole (as it was, or the new output if
//! the swap had happened), and say which.
//!
//! No flag reaches the engine, so the hot path pays nothing: every byte of
//! a new output goes to a staging folder beside the target (`OutDir`), so
//! stopping at any moment cannot touch the previous output. A thread waits
//! for the signal, removes the staging folders (a sweep's or replication's
//! finished runs are kept for the rerun that resumes them) and the locks,
//! and exits. The one moment the target changes, the swap, holds a mutex
//! the thread takes first, so a swap under way finishes before the exit.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, Once};

struct Registered {
    staging: PathBuf,
    lock: PathBuf,
    resumable: bool,
    /// The folder the output goes to, named in the stop message.
    target: PathBuf,
    /// The new output is in place: the stop message must not say that
    /// nothing changed.
    swapped: bool,
}

static OUTPUTS: Mutex<Vec<Registered>> = Mutex::new(Vec::new());
static STOPPING: AtomicBool = AtomicBool::new(false);

/// Whether a signal is stopping the process: writers then create nothing
/// more, so a staging folder once removed stays removed.
pub fn stopping() -> bool {
    STOPPING.load(Ordering::SeqCst)
}
static SWAP: Mutex<()> = Mutex::new(());

/// Held while an output folder is being taken (lock, staging) until it is
/// recorded: a signal meanwhile waits, so it never exits between the two
/// and leaves a lock or staging folder no one knew to remove.
pub struct Registering(MutexGuard<'static, Vec<Registered>>);

pub fn registering() -> Registering {
    watch();
    Registering(outputs())
}

impl Registering {
    /// Records an output being written.
    pub fn add(mut self, staging: &Path, lock: &Path, target: &Path, resumable: bool) {
        self.0.push(Registered {
            staging: staging.to_owned(),
            lock: lock.to_owned(),
            resumable,
            target: target.to_owned(),
            swapped: false,
        });
    }
}

/// The output is swapped in: whatever is left under its staging name is
/// the previous output, to be removed even for a resumable one. It stays
/// recorded until dropped, as its lock does.
pub fn committed(staging: &Path) {
    for r in outputs().iter_mut().filter(|r| r.staging == staging) {
        r.resumable = false;
        r.swapped = true;
    }
}

/// The output is dropped (lock released): nothing left to clean for it.
pub fn unregister(staging: &Path) {
    outputs().retain(|r| r.staging != staging);
}

/// Held while an output folder is swapped in: a signal waits for it.
pub fn swapping() -> MutexGuard<'static, ()> {
    SWAP.lock().unwrap_or_else(|p| p.into_inner())
}

fn outputs() -> MutexGuard<'static, Vec<Registered>> {
    OUTPUTS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Starts the thread that turns SIGINT and SIGTERM into a clean stop
/// (once; `main` calls it first thing, so no window is left unhandled
/// after start-up).
#[cfg(unix)]
pub fn watch() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        use signal_hook::consts::{SIGINT, SIGTERM};
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else {
            // Without the handler the signal keeps its default action: the
            // process dies, and the previous output is still untouched.
            return;
        };
        std::thread::spawn(move || {
            if let Some(sig) = signals.forever().next() {
                stop(sig);
            }
        });
    });
}

#[cfg(not(unix))]
pub fn watch() {}

/// What the stop says of one output: the truth about its folder at exit.
fn stop_message(signal: &str, r: &Registered) -> String {
    let target = r.target.display();
    if r.swapped {
        format!("mmsim: stopped by {signal}; {target} holds the new output, complete")
    } else {
        format!("mmsim: stopped by {signal}; nothing was changed in {target}")
    }
}

#[cfg(unix)]
fn stop(sig: i32) -> ! {
    let _swap = swapping();
    let name = if sig == signal_hook::consts::SIGINT {
        "SIGINT"
    } else {
        "SIGTERM"
    };
    STOPPING.store(true, Ordering::SeqCst);
    let mut kept = Vec::new();
    let outputs = outputs();
    for r in outputs.iter() {
        tell!("{}", stop_message(name, r));
        if r.resumable {
            kept.push(r.staging.display().to_string());
        } else {
            // A writer that had passed its `stopping` check may still
            // create a file or folder in it: remove until it stays gone.
            for _ in 0..20 {
                let _ = std::fs::remove_dir_all(&r.staging);
                std::thread::sleep(std::time::Duration::from_millis(10));
                if !r.staging.exists() {
                    break;
                }
            }
        }
        let _ = std::fs::remove_file(&r.lock);
    }
    for k in kept {
        tell!("mmsim: finished runs are kept in {k}; the same command resumes them");
    }
    std::process::exit(128 + sig)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 31: a signal just after the swap said "nothing was changed"
    /// of a folder that held the new output.
    #[test]
    fn the_stop_message_follows_the_swap() {
        let staging = Path::new("/t/.run.mmsim-staging");
        registering().add(
            staging,
            Path::new("/t/.run.mmsim-lock"),
            Path::new("/t/run"),
            false,
        );
        let said = |o: &Vec<Registered>| {
            let r = o.iter().find(|r| r.staging == staging).unwrap();
            stop_message("SIGINT", r)
        };
        assert_eq!(
            said(&outputs()),
            "mmsim: stopped by SIGINT; nothing was changed in /t/run"
        );
        committed(staging);
        assert_eq!(
            said(&outputs()),
            "mmsim: stopped by SIGINT; /t/run holds the new output, complete"
        );
        unregister(staging);
        assert!(outputs().iter().all(|r| r.staging != staging));
    }
}
