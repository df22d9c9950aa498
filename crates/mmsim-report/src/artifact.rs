//! What every page and run hands to the writer: a file's name and bytes.

/// One output file, named relative to the run's folder (`/` separates a subfolder).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Artifact {
    pub name: String,
    pub bytes: Vec<u8>,
}
