//! Where the vectors shared with the Node.js package live (`test/vectors/`).

use std::fs;
use std::path::{Path, PathBuf};

/// `test/vectors/<kind>`.
pub fn vectors_dir(kind: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../test/vectors")
        .join(kind)
}

/// The `.json` files of `test/vectors/<kind>`, sorted by name, without `expected.json`.
pub fn vector_files(kind: &str) -> Vec<PathBuf> {
    let dir = vectors_dir(kind);
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|err| panic!("cannot read {}: {err}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .filter(|path| path.file_name().is_some_and(|name| name != "expected.json"))
        .collect();
    files.sort();
    files
}
