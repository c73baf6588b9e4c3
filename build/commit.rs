//! The commit a build is made from, as `--version` and every result's `tilepipe_version` name it:
//! the short hash of HEAD, "+changes" after it when the built sources differ from that commit, or
//! "unknown" outside a checkout (a copy of the tree without its `.git`). build.rs and the test of
//! `--version` both use it, so that the test judges the binary by the same rule.

use std::path::{Path, PathBuf};
use std::process::Command;

/// What the binary is built from, relative to the crate's root: a change anywhere else (docs,
/// tests, benchmarks, scripts) leaves the binary what the commit builds.
pub const SOURCES: [&str; 6] = [
    "src",
    "kernels",
    "build.rs",
    "build",
    "Cargo.toml",
    "Cargo.lock",
];

/// git's answer in `root`, trimmed; None when git is missing or fails.
fn git(root: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Whether `root` is the top of a git checkout; a tree copied without `.git` into some other
/// repository's folder is not that repository's commit.
fn is_checkout(root: &Path) -> bool {
    let top = git(root, &["rev-parse", "--show-toplevel"]).map(PathBuf::from);
    match (top.and_then(|t| t.canonicalize().ok()), root.canonicalize()) {
        (Some(top), Ok(root)) => top == root,
        _ => false,
    }
}

/// "930eb83", "930eb83+changes" or "unknown", for the crate whose root is `root`.
pub fn describe(root: &Path) -> String {
    if !is_checkout(root) {
        return "unknown".into();
    }
    let Some(hash) = git(root, &["rev-parse", "--short", "HEAD"]) else {
        return "unknown".into();
    };
    let mut status = vec!["status", "--porcelain", "--"];
    status.extend(SOURCES);
    match git(root, &status) {
        Some(s) if s.is_empty() => hash,
        Some(_) => format!("{hash}+changes"),
        None => "unknown".into(),
    }
}

/// The files whose change can change `describe`'s answer besides the sources: HEAD (another
/// branch or commit checked out) and the branch it names (a commit), found through git, since in
/// a linked worktree `.git` is a file and the branch lives in the main checkout's folder. A
/// branch held only in packed-refs is watched by its folder, where a commit writes it.
pub fn git_files(root: &Path) -> Vec<PathBuf> {
    if !is_checkout(root) {
        return Vec::new();
    }
    let path = |name: &str| git(root, &["rev-parse", "--git-path", name]).map(|p| root.join(p));
    let mut files: Vec<PathBuf> = ["HEAD", "packed-refs"]
        .into_iter()
        .filter_map(path)
        .collect();
    if let Some(branch) = git(root, &["symbolic-ref", "-q", "HEAD"])
        && let Some(file) = path(&branch)
    {
        match file.is_file() {
            true => files.push(file),
            false => files.extend(file.parent().map(Path::to_path_buf)),
        }
    }
    files.retain(|f| f.exists());
    files
}
