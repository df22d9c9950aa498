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
}
