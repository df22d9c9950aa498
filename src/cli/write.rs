//! The one place that writes files. Each file goes to a temporary name in
//! its folder and is renamed into place, so an interrupted run never leaves
//! a half-written file under a final name.

use crate::report::Artifact;
use anyhow::{Context, Result};
use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `dir/name`; `name` may hold sub-folders (`plots/a.png`).
pub fn write_whole(dir: &Path, name: &str, bytes: &[u8]) -> Result<()> {
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

/// The lock file a writer keeps in its output folder while it runs.
pub const LOCK_NAME: &str = ".mmsim.lock";

/// An output folder held by one writer, taken before any simulation so a
/// folder that cannot be written fails at once, not after the run. The
/// lock file holds the writer's pid: a second writer is refused while that
/// process lives, and a lock left by a killed one is taken over. Dropped,
/// it removes the lock, and the folder too if it made it and nothing was
/// written (a run refused later leaves no empty folder behind).
pub struct OutDir {
    dir: std::path::PathBuf,
    lock: std::path::PathBuf,
    created: bool,
}

impl OutDir {
    pub fn lock(dir: &Path) -> std::result::Result<OutDir, String> {
        let created = !dir.exists();
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("--out {}: cannot create the folder: {e}", dir.display()))?;
        let lock = dir.join(LOCK_NAME);
        let held = OutDir {
            dir: dir.to_owned(),
            lock: lock.clone(),
            created,
        };
        // Twice: once more after clearing a stale lock.
        for _ in 0..2 {
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&lock)
            {
                Ok(mut f) => {
                    writeln!(f, "{}", std::process::id()).map_err(|e| {
                        format!("--out {}: cannot write in the folder: {e}", dir.display())
                    })?;
                    return Ok(held);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let text = std::fs::read_to_string(&lock).unwrap_or_default();
                    match text.trim().parse::<u32>() {
                        Ok(pid) if process_alive(pid) => {
                            std::mem::forget(held);
                            return Err(format!(
                                "--out {}: another mmsim (pid {pid}) is writing this folder; wait for it to finish or choose another --out",
                                dir.display()
                            ));
                        }
                        Ok(_) => {
                            // Its writer is gone (killed): the lock is stale.
                            let _ = std::fs::remove_file(&lock);
                        }
                        Err(_) => {
                            std::mem::forget(held);
                            return Err(format!(
                                "--out {}: {} exists but names no process; if no mmsim is writing this folder, delete it",
                                dir.display(),
                                lock.display()
                            ));
                        }
                    }
                }
                Err(e) => {
                    return Err(format!(
                        "--out {}: cannot write in the folder: {e}",
                        dir.display()
                    ))
                }
            }
        }
        std::mem::forget(held);
        Err(format!(
            "--out {}: another mmsim took the folder's lock at the same moment; choose another --out",
            dir.display()
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
}

impl Drop for OutDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.lock);
        if self.created {
            // Fails, as it should, unless the folder is empty.
            let _ = std::fs::remove_dir(&self.dir);
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
        let held = OutDir::lock(&out).unwrap();
        let lock = std::fs::read_to_string(out.join(LOCK_NAME)).unwrap();
        assert_eq!(lock.trim(), std::process::id().to_string());
        let err = OutDir::lock(&out).err().unwrap();
        assert!(
            err.contains("another mmsim") && err.contains(lock.trim()),
            "{err}"
        );
        drop(held);
        // Made and left empty: removed with the lock.
        assert!(!out.exists());

        // A lock whose process has ended is stale.
        std::fs::create_dir_all(&out).unwrap();
        let mut gone = std::process::Command::new("true").spawn().unwrap();
        gone.wait().unwrap();
        std::fs::write(out.join(LOCK_NAME), format!("{}\n", gone.id())).unwrap();
        let held = OutDir::lock(&out).unwrap();
        write_whole(&out, "a.json", b"{}").unwrap();
        drop(held);
        assert_eq!(names(&out), vec!["a.json"]);

        std::fs::write(out.join(LOCK_NAME), "?").unwrap();
        assert!(OutDir::lock(&out).err().unwrap().contains("delete it"));
    }

    #[test]
    fn a_folder_under_a_file_is_refused_before_anything_is_written() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("file"), b"x").unwrap();
        let out = tmp.path().join("file/run");
        assert!(OutDir::lock(&out)
            .err()
            .unwrap()
            .contains("cannot create the folder"));
        assert!(OutDir::check_writable(&out).is_err());
        OutDir::check_writable(&tmp.path().join("fresh")).unwrap();
        assert_eq!(names(&tmp.path().join("fresh")), Vec::<String>::new());
    }
}
