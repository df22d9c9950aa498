//! The one place that writes files. Each file goes to a temporary name in
//! its folder and is renamed into place, so an interrupted run never leaves
//! a half-written file under a final name.

use crate::report::Artifact;
use crate::tune::resume::{RunKey, RunStore};
use anyhow::{Context, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes `bytes` to `dir/name`; `name` may hold sub-folders (`plots/a.png`).
pub fn write_whole(dir: &Path, name: &str, bytes: &[u8]) -> Result<()> {
    if super::interrupt::stopping() {
        anyhow::bail!("stopped by a signal");
    }
    let target = dir.join(name);
    let folder = target.parent().unwrap_or(dir);
    std::fs::create_dir_all(folder)
        .with_context(|| format!("cannot create output folder {}", folder.display()))?;
    let file_name = target
        .file_name()
        .with_context(|| format!("output name {name:?} has no file name"))?
        .to_string_lossy()
        .into_owned();
    let tmp = folder.join(format!(".{file_name}.partial-{}", std::process::id()));
    let result = (|| -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, &target)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("cannot write {}", target.display()));
    }
    Ok(())
}

/// Writes `bytes` to a new file `dir/STEM-K.EXT`, K the first number from 1
/// whose name is free (never replacing a file), and returns its path: how
/// `mmsim serve` saves a scenario without the page naming any path.
pub(crate) fn write_new_file(dir: &Path, stem: &str, ext: &str, bytes: &[u8]) -> Result<PathBuf> {
    for k in 1..10_000 {
        let path = dir.join(format!("{stem}-{k}.{ext}"));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(mut f) => {
                let written = f.write_all(bytes).and_then(|()| f.sync_all());
                if let Err(e) = written {
                    let _ = std::fs::remove_file(&path);
                    return Err(e).with_context(|| format!("cannot write {}", path.display()));
                }
                return Ok(path);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).with_context(|| format!("cannot write {}", path.display())),
        }
    }
    anyhow::bail!("{}: no free name {stem}-K.{ext} below 10000", dir.display())
}

/// A file written while the run goes (a streamed table): it grows under a
/// hidden temporary name and takes its real name only on `commit`, so a run
/// that fails or is interrupted never leaves a half-written table under a
/// real name. Dropped without `commit`, it removes itself.
pub struct PartialFile {
    tmp: std::path::PathBuf,
    target: std::path::PathBuf,
    pub out: std::io::BufWriter<std::fs::File>,
}

impl PartialFile {
    pub fn create(dir: &Path, name: &str) -> Result<PartialFile> {
        if super::interrupt::stopping() {
            anyhow::bail!("stopped by a signal");
        }
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create output folder {}", dir.display()))?;
        let target = dir.join(name);
        let tmp = dir.join(format!(".{name}.partial-{}", std::process::id()));
        let file = std::fs::File::create(&tmp)
            .with_context(|| format!("cannot write {}", target.display()))?;
        Ok(PartialFile {
            tmp,
            target,
            out: std::io::BufWriter::new(file),
        })
    }

    pub fn commit(mut self) -> Result<()> {
        let result = (|| -> std::io::Result<()> {
            self.out.flush()?;
            self.out.get_ref().sync_all()?;
            std::fs::rename(&self.tmp, &self.target)
        })();
        result.with_context(|| format!("cannot write {}", self.target.display()))
    }
}

impl Drop for PartialFile {
    fn drop(&mut self) {
        // After a commit the temporary name is gone and this does nothing.
        let _ = std::fs::remove_file(&self.tmp);
    }
}

/// The hidden names kept beside an output folder `NAME`: its writer's
/// lock (`.NAME.mmsim-lock`), the staging folder the new output is written
/// into (`.NAME.mmsim-staging`), and the previous output while the two
/// swap (`.NAME.mmsim-old`). Beside, not inside: the swap replaces the
/// whole folder, and all three must be on its file system for `rename`.
fn sibling(target: &Path, what: &str) -> PathBuf {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    target
        .parent()
        .unwrap_or(Path::new(""))
        .join(format!(".{name}.mmsim-{what}"))
}

/// The folder inside the staging folder where sweeps and replications keep
/// each finished run (`tune::RunStore`); removed before the swap, so it
/// never reaches the output.
pub const JOBS_DIR: &str = ".mmsim-jobs";

/// An output folder held by one writer, taken before any simulation so a
/// folder that cannot be written fails at once, not after the run.
///
/// Everything is written into a fresh staging folder beside the target
/// (`path()`), and `commit` swaps it in whole, so a reader of the target
/// sees the previous complete output or the new complete one, never a mix.
/// The lock file beside the target holds the writer's pid: a second writer
/// is refused while that process lives, and a lock left by a killed one is
/// taken over, with the killed run's staging folder (removed, or for a
/// resumable sweep kept and reused) and any previous output left mid-swap
/// (restored or removed; see `commit`). Dropped without `commit`, it
/// removes its staging folder (a resumable one only when it holds no
/// finished run) and the lock: the target is never touched.
pub struct OutDir {
    target: PathBuf,
    staging: PathBuf,
    old: PathBuf,
    lock: PathBuf,
    resumable: bool,
    committed: bool,
    /// Known to the signal handler (`interrupt`), so it must be forgotten there.
    registered: bool,
}

impl OutDir {
    /// Takes `dir` for a new output. `resumable`: keep the staging folder
    /// of an interrupted attempt (its finished runs) instead of clearing it.
    pub fn lock(dir: &Path, resumable: bool) -> std::result::Result<OutDir, String> {
        Self::lock_keeping(dir, resumable, &|_| false)
    }

    /// `lock`, where the entries `also_ours` names may stand in the target
    /// beside a marked output (the shard files `merge` has just read and
    /// checked, which it carries over).
    pub fn lock_keeping(
        dir: &Path,
        resumable: bool,
        also_ours: &dyn Fn(&str) -> bool,
    ) -> std::result::Result<OutDir, String> {
        let shown = dir.display();
        let target = if dir.file_name().is_some() {
            dir.to_owned()
        } else {
            // `.` or `..`: the swap needs the folder's own name.
            dir.canonicalize()
                .ok()
                .filter(|d| d.file_name().is_some())
                .ok_or_else(|| {
                    format!("--out {shown}: name the output folder itself, e.g. --out results")
                })?
        };
        let parent = target.parent().unwrap_or(Path::new("")).to_owned();
        std::fs::create_dir_all(&parent)
            .map_err(|e| format!("--out {shown}: cannot create the folder: {e}"))?;
        if target.exists() {
            if !target.is_dir() {
                return Err(format!(
                    "--out {shown}: is a file; the output is a folder, choose another --out"
                ));
            }
            if let Some(foreign) = foreign_entry(&target, also_ours) {
                return Err(format!(
                    "--out {shown}: holds `{foreign}`, which mmsim did not write (an output folder is mmsim's only when its {MARKER} lists every entry); a new output replaces the whole folder, so choose a new or empty folder, or move `{foreign}` out"
                ));
            }
        }
        let lock = sibling(&target, "lock");
        let registering = super::interrupt::registering();
        // Refused, this writer must not touch the holder's lock or staging:
        // `held` (whose drop cleans up) exists only once the lock is ours.
        take_lock(&lock, dir)?;
        let held = OutDir {
            staging: sibling(&target, "staging"),
            old: sibling(&target, "old"),
            lock,
            target,
            resumable,
            committed: false,
            registered: false,
        };
        let cannot =
            |e: std::io::Error| format!("--out {shown}: cannot write beside the folder: {e}");
        held.recover().map_err(cannot)?;
        if held.staging.exists() {
            if resumable {
                // Keep the finished runs; any output half-written by the
                // interrupted attempt is written anew.
                for e in std::fs::read_dir(&held.staging).map_err(cannot)? {
                    let e = e.map_err(cannot)?;
                    if e.file_name() != JOBS_DIR {
                        let p = e.path();
                        if e.file_type().map_err(cannot)?.is_dir() {
                            std::fs::remove_dir_all(&p).map_err(cannot)?;
                        } else {
                            std::fs::remove_file(&p).map_err(cannot)?;
                        }
                    }
                }
            } else {
                std::fs::remove_dir_all(&held.staging).map_err(cannot)?;
            }
        }
        std::fs::create_dir_all(&held.staging).map_err(cannot)?;
        let probe = held.staging.join(".mmsim-probe");
        std::fs::File::create(&probe).map_err(cannot)?;
        std::fs::remove_file(&probe).map_err(cannot)?;
        registering.add(&held.staging, &held.lock, &held.target, resumable);
        let mut held = held;
        held.registered = true;
        Ok(held)
    }

    /// Where this writer writes: the staging folder.
    pub fn path(&self) -> &Path {
        &self.staging
    }

    /// The folder the output will have once committed.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// A previous writer killed mid-swap left the previous output under
    /// `.NAME.mmsim-old`: back in place if the target is gone (the new one
    /// never arrived), removed if the target is there (the swap finished).
    fn recover(&self) -> std::io::Result<()> {
        if self.old.exists() {
            if self.target.exists() {
                std::fs::remove_dir_all(&self.old)?;
            } else {
                std::fs::rename(&self.old, &self.target)?;
            }
        }
        Ok(())
    }

    /// Copies the target's files named by `keep` into the staging folder,
    /// so they survive the swap (`merge` writing into the shards' folder
    /// keeps the shards).
    pub fn carry(&self, keep: impl Fn(&str) -> bool) -> Result<()> {
        let Ok(entries) = std::fs::read_dir(&self.target) else {
            return Ok(());
        };
        for e in entries {
            let e = e?;
            let name = e.file_name().to_string_lossy().into_owned();
            if keep(&name) && e.file_type()?.is_file() {
                let bytes = std::fs::read(e.path())
                    .with_context(|| format!("cannot read {}", e.path().display()))?;
                write_whole(&self.staging, &name, &bytes)?;
            }
        }
        Ok(())
    }

    /// Swaps the staging folder in as the target. On Linux both names are
    /// exchanged in one `renameat2(RENAME_EXCHANGE)`: a reader sees the old
    /// folder or the new, always complete. Where that is not available, the
    /// three-step dance: target -> `.NAME.mmsim-old`, staging -> target,
    /// remove `.NAME.mmsim-old`. Killed between the first two steps, the
    /// target is briefly absent and the previous output is whole under
    /// `.NAME.mmsim-old`; the next writer (`recover`) puts it back.
    /// Killed after the exchange or the second step, the previous output
    /// is left under the staging or old name, and the next writer removes
    /// it. SIGINT and SIGTERM wait for the swap to finish (`interrupt`).
    ///
    /// Last before the swap, `MARKER` is written, listing what the folder
    /// holds and `run_sha256`, the run's identity: the next writer replaces
    /// the folder only while it holds nothing else.
    pub fn commit(mut self, run_sha256: &str) -> Result<()> {
        let jobs = self.staging.join(JOBS_DIR);
        if jobs.exists() {
            std::fs::remove_dir_all(&jobs)
                .with_context(|| format!("cannot remove {}", jobs.display()))?;
        }
        let marker = Marker {
            mmsim_version: crate::scenario::provenance::MMSIM_VERSION.to_owned(),
            run_sha256: run_sha256.to_owned(),
            entries: entry_names(&self.staging)
                .with_context(|| format!("cannot list {}", self.staging.display()))?
                .into_iter()
                .filter(|n| n != MARKER)
                .collect(),
        };
        write_whole(&self.staging, MARKER, &json_bytes(&marker))?;
        let _swapping = super::interrupt::swapping();
        swap(&self.target, &self.staging, &self.old, true).with_context(|| {
            format!(
                "cannot put the new output in place at {}",
                self.target.display()
            )
        })?;
        self.committed = true;
        super::interrupt::committed(&self.staging);
        Ok(())
    }
}

/// The swap itself; `exchange: false` forces the three-step dance (tests).
fn swap(target: &Path, staging: &Path, old: &Path, exchange: bool) -> std::io::Result<()> {
    if !target.exists() {
        return std::fs::rename(staging, target);
    }
    if exchange && rename_exchange(staging, target).is_ok() {
        // The staging name now holds the previous output.
        return std::fs::remove_dir_all(staging);
    }
    std::fs::rename(target, old)?;
    std::fs::rename(staging, target)?;
    std::fs::remove_dir_all(old)
}

#[cfg(target_os = "linux")]
fn rename_exchange(a: &Path, b: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c =
        |p: &Path| std::ffi::CString::new(p.as_os_str().as_bytes()).map_err(std::io::Error::other);
    let (a, b) = (c(a)?, c(b)?);
    // SAFETY: two valid NUL-terminated paths; the raw syscall avoids
    // needing a glibc new enough to wrap renameat2.
    let r = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(not(target_os = "linux"))]
fn rename_exchange(_a: &Path, _b: &Path) -> std::io::Result<()> {
    Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
}

/// The file, inside every output folder mmsim swaps in, that says the
/// folder is mmsim's: the version, the run's hash and every entry the
/// output holds. Only a folder carrying it may be replaced, and only while
/// it holds nothing else: a file's name alone (`summary.json`) proves
/// nothing, and a user's file added to an output folder later is theirs.
pub const MARKER: &str = ".mmsim-output.json";

/// What `MARKER` holds.
#[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
struct Marker {
    mmsim_version: String,
    /// The run's identity: the effective scenario's SHA-256 for a run,
    /// sweep or replication; the comparison's own hash for `compare`.
    run_sha256: String,
    /// The folder's top-level entries as written, sorted.
    entries: Vec<String>,
}

fn entry_names(dir: &Path) -> std::io::Result<Vec<String>> {
    let mut names = std::fs::read_dir(dir)?
        .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect::<std::io::Result<Vec<String>>>()?;
    names.sort();
    Ok(names)
}

/// Why `dir` may not be replaced, if it may not: the first entry (sorted)
/// that mmsim's marker does not list and `also_ours` does not claim. A
/// folder without a marker, or with one that does not parse, is foreign
/// through and through. An empty folder is free.
fn foreign_entry(dir: &Path, also_ours: &dyn Fn(&str) -> bool) -> Option<String> {
    let names = match entry_names(dir) {
        Ok(n) => n,
        // Unreadable: refuse, naming the folder itself.
        Err(_) => return Some(".".into()),
    };
    let listed: Option<Vec<String>> = std::fs::read(dir.join(MARKER))
        .ok()
        .and_then(|b| serde_json::from_slice::<Marker>(&b).ok())
        .map(|m| m.entries);
    let ours = |n: &str| match &listed {
        Some(l) => n == MARKER || l.iter().any(|e| e == n),
        None => false,
    };
    names.into_iter().find(|n| !(also_ours(n) || ours(n)))
}

/// A hash of outputs that have no scenario of their own (`compare`): each
/// artifact's name and bytes, in order.
pub fn artifacts_sha256(artifacts: &[Artifact]) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for a in artifacts {
        h.update((a.name.len() as u64).to_le_bytes());
        h.update(a.name.as_bytes());
        h.update((a.bytes.len() as u64).to_le_bytes());
        h.update(&a.bytes);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Creates `lock` holding this process's pid; a lock whose process is gone
/// is taken over.
fn take_lock(lock: &Path, dir: &Path) -> std::result::Result<(), String> {
    let shown = dir.display();
    // Twice: once more after clearing a stale lock.
    for _ in 0..2 {
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(lock)
        {
            Ok(mut f) => {
                return writeln!(f, "{}", std::process::id()).map_err(|e| {
                    let _ = std::fs::remove_file(lock);
                    format!("--out {shown}: cannot write beside the folder: {e}")
                });
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let text = std::fs::read_to_string(lock).unwrap_or_default();
                match text.trim().parse::<u32>() {
                    Ok(pid) if process_alive(pid) => {
                        return Err(format!(
                            "--out {shown}: another mmsim (pid {pid}) is writing this folder; wait for it to finish or choose another --out"
                        ));
                    }
                    Ok(_) => {
                        // Its writer is gone (killed): the lock is stale.
                        let _ = std::fs::remove_file(lock);
                    }
                    Err(_) => {
                        return Err(format!(
                            "--out {shown}: {} exists but names no process; if no mmsim is writing this folder, delete it",
                            lock.display()
                        ));
                    }
                }
            }
            Err(e) => {
                return Err(format!(
                    "--out {shown}: cannot write beside the folder: {e}"
                ))
            }
        }
    }
    Err(format!(
        "--out {shown}: another mmsim took the folder's lock at the same moment; choose another --out"
    ))
}

/// Checks only that `dir` can be written, holding no lock: for the
/// shards of one sweep, which share a folder by design and write
/// different files.
pub fn check_writable(dir: &Path) -> std::result::Result<(), String> {
    let bad =
        |e: std::io::Error| format!("--out {}: cannot write in the folder: {e}", dir.display());
    std::fs::create_dir_all(dir).map_err(bad)?;
    let probe = dir.join(format!(".mmsim.probe-{}", std::process::id()));
    std::fs::File::create(&probe).map_err(bad)?;
    std::fs::remove_file(&probe).map_err(bad)
}

impl Drop for OutDir {
    fn drop(&mut self) {
        if !self.committed {
            let finished_runs = std::fs::read_dir(self.staging.join(JOBS_DIR))
                .is_ok_and(|mut d| d.next().is_some());
            if !(self.resumable && finished_runs) {
                let _ = std::fs::remove_dir_all(&self.staging);
            }
        }
        let _ = std::fs::remove_file(&self.lock);
        // Last: a signal until here still removes the lock itself.
        if self.registered {
            super::interrupt::unregister(&self.staging);
        }
    }
}

#[cfg(unix)]
fn process_alive(pid: u32) -> bool {
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks that the process exists; nothing is sent.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(not(unix))]
fn process_alive(_pid: u32) -> bool {
    // No portable check: a lock is taken as live, and the message says
    // how to clear it.
    true
}

/// The finished runs of a sweep or replication (`tune::resume::RunStore`):
/// one file per run holding its key and its record, each written whole as
/// the run finishes, so an interruption loses only the runs under way.
pub struct RunFiles {
    dir: PathBuf,
    reused: std::sync::atomic::AtomicUsize,
}

impl RunFiles {
    pub fn new(dir: &Path) -> RunFiles {
        RunFiles {
            dir: dir.to_owned(),
            reused: Default::default(),
        }
    }

    /// How many runs `load` gave back (finished by an earlier attempt).
    pub fn reused(&self) -> usize {
        self.reused.load(std::sync::atomic::Ordering::Relaxed)
    }
}

#[derive(serde::Serialize, serde::Deserialize)]
struct StoredRun {
    key: RunKey,
    record: serde_json::Value,
}

impl RunStore for RunFiles {
    fn load(&self, key: &RunKey) -> Option<serde_json::Value> {
        let bytes = std::fs::read(self.dir.join(key.file_name())).ok()?;
        // A file that does not parse or names another key is run again.
        let stored: StoredRun = serde_json::from_slice(&bytes).ok()?;
        (stored.key == *key).then(|| {
            self.reused
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            stored.record
        })
    }

    fn save(&self, key: &RunKey, record: &serde_json::Value) -> Result<()> {
        let stored = StoredRun {
            key: key.clone(),
            record: record.clone(),
        };
        let bytes = serde_json::to_vec(&stored).context("a run record serializes")?;
        write_whole(&self.dir, &key.file_name(), &bytes)
    }
}

pub fn write_artifacts(dir: &Path, artifacts: &[Artifact]) -> Result<()> {
    artifacts
        .iter()
        .try_for_each(|a| write_whole(dir, &a.name, &a.bytes))
}

/// Pretty JSON with a final newline.
pub fn json_bytes(value: &impl serde::Serialize) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(value).expect("in-memory JSON serializes");
    bytes.push(b'\n');
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    /// Marks `dir` as an mmsim output of what it holds now, as `commit` does.
    fn mark(dir: &Path) {
        let entries = entry_names(dir).unwrap();
        let m = Marker {
            mmsim_version: "test".into(),
            run_sha256: "h".into(),
            entries: entries.into_iter().filter(|n| n != MARKER).collect(),
        };
        write_whole(dir, MARKER, &json_bytes(&m)).unwrap();
    }

    #[test]
    fn writes_whole_files_in_nested_folders_and_leaves_no_temporaries() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("run");
        write_whole(&out, "a.json", b"{}\n").unwrap();
        write_whole(&out, "a.json", b"{\"x\": 1}\n").unwrap();
        let arts = [Artifact {
            name: "plots/b.svg".into(),
            bytes: b"<svg/>".to_vec(),
        }];
        write_artifacts(&out, &arts).unwrap();
        assert_eq!(std::fs::read(out.join("a.json")).unwrap(), b"{\"x\": 1}\n");
        assert_eq!(std::fs::read(out.join("plots/b.svg")).unwrap(), b"<svg/>");
        assert_eq!(names(&out), vec!["a.json", "plots"]);
        assert_eq!(names(&out.join("plots")), vec!["b.svg"]);
    }

    #[test]
    fn a_failed_write_leaves_nothing_under_the_final_name() {
        let dir = tempfile::tempdir().unwrap();
        // A folder where the file should go makes the rename fail.
        std::fs::create_dir_all(dir.path().join("x.json/inner")).unwrap();
        assert!(write_whole(dir.path(), "x.json", b"data").is_err());
        assert_eq!(names(dir.path()), vec!["x.json"]);
        assert!(dir.path().join("x.json").is_dir());
    }

    #[test]
    fn an_out_folder_takes_one_writer_and_a_stale_lock_is_taken_over() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("run");
        let lock = tmp.path().join(".run.mmsim-lock");
        let held = OutDir::lock(&out, false).unwrap();
        let pid = std::fs::read_to_string(&lock).unwrap();
        assert_eq!(pid.trim(), std::process::id().to_string());
        write_whole(held.path(), "summary.json", b"1").unwrap();
        let err = OutDir::lock(&out, false).err().unwrap();
        assert!(
            err.contains("another mmsim") && err.contains(pid.trim()),
            "{err}"
        );
        // The refused writer left the holder's lock and staging alone.
        assert!(lock.exists() && held.path().join("summary.json").exists());
        drop(held);
        // Nothing committed: no folder, no staging, no lock.
        assert_eq!(names(tmp.path()), Vec::<String>::new());

        // A lock whose process has ended is stale.
        let mut gone = std::process::Command::new("true").spawn().unwrap();
        gone.wait().unwrap();
        std::fs::write(&lock, format!("{}\n", gone.id())).unwrap();
        let held = OutDir::lock(&out, false).unwrap();
        write_whole(held.path(), "summary.json", b"{}").unwrap();
        held.commit("h").unwrap();
        assert_eq!(names(tmp.path()), vec!["run"]);
        assert_eq!(names(&out), vec![MARKER, "summary.json"]);

        std::fs::write(&lock, "?").unwrap();
        assert!(OutDir::lock(&out, false)
            .err()
            .unwrap()
            .contains("delete it"));
    }

    #[test]
    fn a_commit_replaces_the_whole_folder_and_a_drop_leaves_it_untouched() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("run");
        let first = OutDir::lock(&out, false).unwrap();
        write_whole(first.path(), "summary.json", b"1").unwrap();
        write_whole(first.path(), "plots/a.svg", b"1").unwrap();
        first.commit("h").unwrap();
        // A second output, abandoned half-way: the first stays as it was.
        let second = OutDir::lock(&out, false).unwrap();
        write_whole(second.path(), "summary.json", b"2").unwrap();
        drop(second);
        assert_eq!(std::fs::read(out.join("summary.json")).unwrap(), b"1");
        assert_eq!(names(tmp.path()), vec!["run"]);
        // A third, committed: nothing of the first is left (no stale plot).
        let third = OutDir::lock(&out, false).unwrap();
        write_whole(third.path(), "summary.json", b"3").unwrap();
        third.commit("h").unwrap();
        assert_eq!(names(&out), vec![MARKER, "summary.json"]);
        assert_eq!(std::fs::read(out.join("summary.json")).unwrap(), b"3");
        assert_eq!(names(tmp.path()), vec!["run"]);
    }

    #[test]
    fn the_three_step_swap_and_its_recovery_after_a_crash_between_steps() {
        let tmp = tempfile::tempdir().unwrap();
        let (target, staging, old) = (
            tmp.path().join("run"),
            tmp.path().join(".run.mmsim-staging"),
            tmp.path().join(".run.mmsim-old"),
        );
        write_whole(&target, "summary.json", b"old").unwrap();
        mark(&target);
        write_whole(&staging, "summary.json", b"new").unwrap();
        mark(&staging);
        swap(&target, &staging, &old, false).unwrap();
        assert_eq!(std::fs::read(target.join("summary.json")).unwrap(), b"new");
        assert_eq!(names(tmp.path()), vec!["run"]);

        // Killed after the first step: the target is gone, the previous
        // output whole under the old name. The next writer restores it.
        std::fs::rename(&target, &old).unwrap();
        write_whole(&staging, "summary.json", b"half").unwrap();
        let next = OutDir::lock(&target, false).unwrap();
        assert_eq!(std::fs::read(target.join("summary.json")).unwrap(), b"new");
        drop(next);
        assert_eq!(names(tmp.path()), vec!["run"]);

        // Killed after the second step: the new output is in place and
        // the previous one lingers under the old name; it is removed.
        write_whole(&old, "summary.json", b"older").unwrap();
        let next = OutDir::lock(&target, false).unwrap();
        assert_eq!(std::fs::read(target.join("summary.json")).unwrap(), b"new");
        drop(next);
        assert_eq!(names(tmp.path()), vec!["run"]);
    }

    #[test]
    fn a_resumable_staging_keeps_its_finished_runs_and_nothing_else() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("sweep");
        let held = OutDir::lock(&out, true).unwrap();
        write_whole(&held.path().join(JOBS_DIR), "seed-1.json", b"{}").unwrap();
        write_whole(held.path(), "sweep.csv", b"half").unwrap();
        drop(held);
        assert_eq!(names(tmp.path()), vec![".sweep.mmsim-staging"]);
        let held = OutDir::lock(&out, true).unwrap();
        assert_eq!(names(held.path()), vec![JOBS_DIR]);
        write_whole(held.path(), "sweep.csv", b"whole").unwrap();
        held.commit("h").unwrap();
        assert_eq!(names(&out), vec![MARKER, "sweep.csv"]);
        assert_eq!(names(tmp.path()), vec!["sweep"]);
        // Not resumable, or nothing finished: the staging goes.
        let held = OutDir::lock(&out, true).unwrap();
        drop(held);
        assert_eq!(names(tmp.path()), vec!["sweep"]);
    }

    #[test]
    fn a_folder_of_other_files_or_under_a_file_is_refused_before_anything_is_written() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("file"), b"x").unwrap();
        let out = tmp.path().join("file/run");
        assert!(OutDir::lock(&out, false)
            .err()
            .unwrap()
            .contains("cannot create the folder"));
        assert!(check_writable(&out).is_err());
        check_writable(&tmp.path().join("fresh")).unwrap();
        assert_eq!(names(&tmp.path().join("fresh")), Vec::<String>::new());
        let mine = tmp.path().join("mine");
        std::fs::create_dir(&mine).unwrap();
        std::fs::write(mine.join("thesis.tex"), b"x").unwrap();
        let err = OutDir::lock(&mine, false).err().unwrap();
        assert!(
            err.contains("thesis.tex") && err.contains("did not write"),
            "{err}"
        );
        assert_eq!(names(&mine), vec!["thesis.tex"]);
    }

    /// The data-loss reproducer of issue 31 and its variants: a folder of
    /// the user's that holds one file named like an mmsim output (whatever
    /// its content), an empty `plots/`, or a forged or unreadable marker,
    /// is refused and left exactly as it was.
    #[test]
    fn a_folder_is_replaced_only_when_mmsim_marked_it_and_it_holds_nothing_else() {
        let tmp = tempfile::tempdir().unwrap();
        let lookalikes: [(&str, &[u8]); 8] = [
            ("summary.json", b"{}"),
            ("report.html", b"<p>mine</p>"),
            ("perf.json", b"{}"),
            ("scenario.toml", b"x = 1"),
            ("sweep.csv", b"a,b"),
            ("shard-1-of-2.json", b"{}"),
            (".mmsim-lock", b"1"),
            (MARKER, b"not json"),
        ];
        for (i, (name, bytes)) in lookalikes.iter().enumerate() {
            let out = tmp.path().join(format!("mine{i}"));
            write_whole(&out, "thesis.txt", b"my thesis").unwrap();
            write_whole(&out, name, bytes).unwrap();
            let before = names(&out);
            let err = OutDir::lock(&out, false).err().unwrap_or_else(|| {
                panic!("a folder with thesis.txt and {name} was taken for mmsim's")
            });
            assert!(err.contains("did not write"), "{err}");
            assert_eq!(names(&out), before, "{name}");
            assert_eq!(std::fs::read(out.join("thesis.txt")).unwrap(), b"my thesis");
        }
        // An empty plots/ folder and nothing else.
        let out = tmp.path().join("plots-only");
        std::fs::create_dir_all(out.join("plots")).unwrap();
        let err = OutDir::lock(&out, false).err().unwrap();
        assert!(err.contains("`plots`"), "{err}");
        assert!(out.join("plots").is_dir());

        // A marked output to which the user added a file: that file is
        // named, and kept.
        let out = tmp.path().join("run");
        let held = OutDir::lock(&out, false).unwrap();
        write_whole(held.path(), "summary.json", b"1").unwrap();
        held.commit("h").unwrap();
        std::fs::write(out.join("notes.txt"), b"mine").unwrap();
        let err = OutDir::lock(&out, false).err().unwrap();
        assert!(err.contains("`notes.txt`"), "{err}");
        assert_eq!(std::fs::read(out.join("notes.txt")).unwrap(), b"mine");
        // Moved out, the folder is mmsim's again and is replaced.
        std::fs::remove_file(out.join("notes.txt")).unwrap();
        OutDir::lock(&out, false).unwrap().commit("h2").unwrap();
        let m: Marker = serde_json::from_slice(&std::fs::read(out.join(MARKER)).unwrap()).unwrap();
        assert_eq!(m.run_sha256, "h2");
        assert_eq!(m.entries, Vec::<String>::new());
        // An empty folder is free.
        let empty = tmp.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        OutDir::lock(&empty, false).unwrap();
    }

    #[test]
    fn the_marker_lists_what_the_output_holds_and_the_run_s_hash() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("run");
        let held = OutDir::lock(&out, true).unwrap();
        write_whole(held.path(), "summary.json", b"1").unwrap();
        write_whole(held.path(), "plots/a.svg", b"1").unwrap();
        write_whole(&held.path().join(JOBS_DIR), "seed-1.json", b"{}").unwrap();
        held.commit("abc").unwrap();
        let m: Marker = serde_json::from_slice(&std::fs::read(out.join(MARKER)).unwrap()).unwrap();
        assert_eq!(m.entries, vec!["plots", "summary.json"]);
        assert_eq!(m.run_sha256, "abc");
        assert_eq!(m.mmsim_version, crate::scenario::provenance::MMSIM_VERSION);
        // `merge` names the shard files it has read as its own too.
        std::fs::write(out.join("shard-1-of-2.json"), b"{}").unwrap();
        assert!(OutDir::lock(&out, false).is_err());
        OutDir::lock_keeping(&out, false, &|n: &str| n.starts_with("shard-")).unwrap();
    }
}
