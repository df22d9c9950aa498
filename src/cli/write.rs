//! The one place that writes files. Each file goes to a temporary name in
//! its folder and is renamed into place, so an interrupted run never leaves
//! a half-written file under a final name.

use anyhow::{Context, Result};
use std::io::Write;
use std::path::Path;

pub fn write_whole(dir: &Path, name: &str, bytes: &[u8]) -> Result<()> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create output folder {}", dir.display()))?;
    let tmp = dir.join(format!(".{name}.partial-{}", std::process::id()));
    let target = dir.join(name);
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

/// Pretty JSON with a final newline.
pub fn json_bytes(value: &impl serde::Serialize) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(value).expect("in-memory JSON serializes");
    bytes.push(b'\n');
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_whole_files_and_leaves_no_temporaries() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("nested");
        write_whole(&out, "a.json", b"{}\n").unwrap();
        write_whole(&out, "a.json", b"{\"x\": 1}\n").unwrap();
        assert_eq!(std::fs::read(out.join("a.json")).unwrap(), b"{\"x\": 1}\n");
        let names: Vec<_> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }
}
