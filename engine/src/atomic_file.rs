//! The one way the project writes a file that must never be seen half-written: a temporary file
//! in the target's directory (from the `tempfile` crate), written, synced to disk, renamed over
//! the target, and the directory synced. A crash at any moment leaves the old file or the new
//! one, never a mix.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Writing `path` failed; the error names the file.
#[derive(Debug, thiserror::Error)]
#[error("writing {}: {source}", path.display())]
pub struct WriteError {
    /// The file that was being written.
    pub path: PathBuf,
    /// What went wrong.
    #[source]
    pub source: io::Error,
}

/// The directory a path lives in (`.` for a bare file name).
fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Syncs a directory so a rename inside it is durable. Some platforms and file systems cannot
/// open or sync a directory; that only weakens durability after a power cut, the rename itself
/// has happened, so such a failure is ignored on purpose.
pub fn sync_dir(dir: &Path) {
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Writes `bytes` to `path` atomically.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    write_atomic_with(path, |w| w.write_all(bytes))
}

/// Writes `path` atomically with whatever `fill` writes into the (buffered) temporary file.
pub fn write_atomic_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<(), WriteError> {
    let err = |source| WriteError {
        path: path.to_path_buf(),
        source,
    };
    let dir = parent_dir(path);
    let name = path.file_name().ok_or_else(|| {
        err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a file path",
        ))
    })?;
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{}.", name.to_string_lossy()))
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(err)?;
    {
        let mut w = io::BufWriter::new(tmp.as_file_mut());
        fill(&mut w).map_err(err)?;
        w.flush().map_err(err)?;
    }
    tmp.as_file().sync_all().map_err(err)?;
    // On error the temporary file is removed when `tmp` drops.
    tmp.persist(path).map_err(|e| err(e.error))?;
    sync_dir(dir);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_whole_files_and_leaves_no_temporaries() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("state.txt");
        write_atomic(&path, b"first").expect("write");
        write_atomic(&path, b"second, longer").expect("overwrite");
        assert_eq!(std::fs::read(&path).expect("read"), b"second, longer");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .expect("list")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("state.txt")]);
    }

    #[test]
    fn a_failed_fill_keeps_the_old_file() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("keep.txt");
        write_atomic(&path, b"old").expect("write");
        let e = write_atomic_with(&path, |w| {
            w.write_all(b"partial")?;
            Err(io::Error::other("disk full"))
        })
        .expect_err("fails");
        assert!(e.to_string().contains("keep.txt"), "{e}");
        assert_eq!(std::fs::read(&path).expect("read"), b"old");
        assert_eq!(std::fs::read_dir(dir.path()).expect("list").count(), 1);
    }

    #[test]
    fn a_missing_directory_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("no/such/dir/file.txt");
        let e = write_atomic(&path, b"x").expect_err("fails");
        assert!(e.to_string().contains("file.txt"), "{e}");
    }
}
