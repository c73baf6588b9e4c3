//! Saving files so that a crash, a full disk or a bad path never leaves a half-written one: the
//! bytes go to a temporary file beside the target, reach the disk, then replace the target in one
//! rename. Readers see the old file or the new one, nothing in between.

use crate::{Error, Result};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Replaces `path` with `bytes` atomically. On failure the target is untouched, the temporary
/// file is removed and the error names `path`.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_with(path, |f| f.write_all(bytes))
}

/// Creates `dir` and its parents; the error names `dir`.
pub fn create_dir_all(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))
}

/// Makes sure `dir` is a folder this process can write, before any long work, so that a bad
/// output folder is said at once rather than after the measurements: creates it (and its parents)
/// if missing, then creates and removes a probe file in it.
pub fn writable_dir(dir: &Path) -> Result<()> {
    writable_folder(dir, "output folder")
}

/// `writable_dir` for a folder that is named `noun` in the refusal.
pub fn writable_folder(dir: &Path, noun: &str) -> Result<()> {
    let refuse = |what: String| {
        Error::InvalidArgument(format!(
            "{noun} {}: {what}; allowed: a folder that exists or can be created, and can be written",
            dir.display()
        ))
    };
    if dir.exists() && !dir.is_dir() {
        return Err(refuse("is a file, not a folder".into()));
    }
    std::fs::create_dir_all(dir).map_err(|e| refuse(format!("cannot be created ({e})")))?;
    let probe = temp_beside(&dir.join("probe"))?;
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .map_err(|e| refuse(format!("cannot be written ({e})")))?;
    std::fs::remove_file(&probe).map_err(|e| Error::io(&probe, e))
}

/// Makes sure a file can be written at `path` (given as `flag`) before the work that produces it:
/// not a folder, in a folder this process can write (created if missing).
pub fn writable_file(path: &Path, flag: &str) -> Result<()> {
    if path.is_dir() {
        return Err(Error::InvalidArgument(format!(
            "{flag} {}: is a folder; allowed: a file's path in a folder that can be written",
            path.display()
        )));
    }
    writable_folder(
        parent(path),
        &format!("{flag} {}: its folder", path.display()),
    )
}

/// `write_atomic` with the writing step given, so that tests can make it fail half way.
fn write_atomic_with(
    path: &Path,
    write: impl FnOnce(&mut File) -> std::io::Result<()>,
) -> Result<()> {
    let tmp = temp_beside(path)?;
    let saved = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .and_then(|mut f| {
            write(&mut f)?;
            f.sync_all()
        })
        .and_then(|()| std::fs::rename(&tmp, path));
    if let Err(e) = saved {
        // The temporary file may not exist (open failed): nothing to report then.
        let _ = std::fs::remove_file(&tmp);
        return Err(Error::io(path, e));
    }
    // The rename itself reaches the disk with the folder's entry; a folder that cannot be opened
    // or synced (some file systems) leaves the new file in place, so that is not an error.
    if let Ok(d) = File::open(parent(path)) {
        let _ = d.sync_all();
    }
    Ok(())
}

fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// A name no other writer uses: hidden, beside the target (a rename across file systems would not
/// be atomic), unique per process and per call.
fn temp_beside(path: &Path) -> Result<PathBuf> {
    static SERIAL: AtomicU64 = AtomicU64::new(0);
    let name = path.file_name().ok_or_else(|| {
        Error::io(
            path,
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file name"),
        )
    })?;
    let n = SERIAL.fetch_add(1, Ordering::Relaxed);
    Ok(parent(path).join(format!(
        ".{}.{}.{n}.tmp",
        name.to_string_lossy(),
        std::process::id()
    )))
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
    fn success_replaces_the_whole_file_and_leaves_no_temporary() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("results.json");
        std::fs::write(&p, "an older and much longer content than the new one").unwrap();
        write_atomic(&p, b"new").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        assert_eq!(names(d.path()), ["results.json"]);
    }

    #[test]
    fn a_write_failing_half_way_leaves_the_old_file_intact() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("report.html");
        std::fs::write(&p, "old").unwrap();
        let e = write_atomic_with(&p, |f| {
            f.write_all(b"half of the ")?;
            Err(std::io::Error::other("disk full"))
        })
        .unwrap_err();
        assert_eq!(std::fs::read(&p).unwrap(), b"old");
        assert_eq!(names(d.path()), ["report.html"]);
        let msg = e.to_string();
        assert!(
            msg.contains("report.html") && msg.contains("disk full"),
            "{msg}"
        );
    }

    #[test]
    fn a_target_that_is_a_folder_is_refused_and_kept() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.html");
        std::fs::create_dir(&p).unwrap();
        std::fs::write(p.join("inside"), "kept").unwrap();
        let msg = write_atomic(&p, b"new").unwrap_err().to_string();
        assert!(msg.contains("x.html"), "{msg}");
        assert_eq!(std::fs::read(p.join("inside")).unwrap(), b"kept");
        assert_eq!(names(d.path()), ["x.html"]);
    }

    #[test]
    fn a_parent_that_is_a_file_is_an_error_naming_the_path() {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("plain");
        std::fs::write(&file, "kept").unwrap();
        let p = file.join("check.json");
        let msg = write_atomic(&p, b"new").unwrap_err().to_string();
        assert!(msg.contains("plain/check.json"), "{msg}");
        assert_eq!(std::fs::read(&file).unwrap(), b"kept");
        assert_eq!(names(d.path()), ["plain"]);
    }

    #[test]
    fn an_output_folder_is_created_and_probed_or_refused() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("a/b");
        writable_dir(&out).unwrap();
        assert!(out.is_dir());
        assert!(names(&out).is_empty(), "the probe file is removed");
        writable_dir(&out).unwrap();
        let file = d.path().join("plain");
        std::fs::write(&file, "kept").unwrap();
        let msg = writable_dir(&file).unwrap_err().to_string();
        assert!(
            msg.contains("is a file") && msg.contains("allowed: a folder"),
            "{msg}"
        );
        let msg = writable_dir(&file.join("below")).unwrap_err().to_string();
        assert!(msg.contains("cannot be created"), "{msg}");
        assert_eq!(std::fs::read(&file).unwrap(), b"kept");
    }

    #[test]
    fn a_bare_file_name_gets_its_temporary_in_the_current_folder() {
        assert_eq!(parent(Path::new("out.json")), Path::new("."));
        let t = temp_beside(Path::new("out.json")).unwrap();
        assert!(t.starts_with(".") && t.to_string_lossy().ends_with(".tmp"));
        assert!(temp_beside(Path::new("/")).is_err());
    }
}
