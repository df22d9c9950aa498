//! Ctrl-C and SIGTERM while an output is being written: stop at once with
//! exit 130 or 143 and leave `--out` as it was.
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
    pub fn add(mut self, staging: &Path, lock: &Path, resumable: bool) {
        self.0.push(Registered {
            staging: staging.to_owned(),
            lock: lock.to_owned(),
            resumable,
        });
    }
}

/// The output is swapped in: whatever is left under its staging name is
/// the previous output, to be removed even for a resumable one. It stays
/// recorded until dropped, as its lock does.
pub fn committed(staging: &Path) {
    for r in outputs().iter_mut().filter(|r| r.staging == staging) {
        r.resumable = false;
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
    if !outputs.is_empty() {
        eprintln!("mmsim: stopped by {name}; nothing was changed in --out");
    }
    for k in kept {
        eprintln!("mmsim: finished runs are kept in {k}; the same command resumes them");
    }
    std::process::exit(128 + sig)
}
