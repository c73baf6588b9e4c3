//! Going on in a new process. After a sticky fault (an illegal address, a trap) a CUDA context is
//! lost for good, and with it this process's use of the GPU: CUDA's own advice is that the process
//! must end and start again. So the rest of a run or a suite is handed to a new process of this
//! same binary, given this one's arguments plus what to leave out; it writes what it measured as
//! JSON to a file, which this process reads back and merges.

use crate::{Error, Result};
use serde::de::DeserializeOwned;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// The flag that puts a command in child mode: print nothing, write the outcome to this file.
pub const RESULTS_FLAG: &str = "--child-results";

/// `command` (argv, program first) without its program and without each of `flags` and its value
/// (`--flag V` or `--flag=V`).
pub fn without(command: &[String], flags: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    let mut it = command.iter().skip(1);
    while let Some(a) = it.next() {
        if flags.contains(&a.as_str()) {
            it.next();
        } else if !flags.iter().any(|f| a.starts_with(&format!("{f}="))) {
            out.push(a.clone());
        }
    }
    out
}

/// `args` plus `flag` unless it is there already (clap refuses a repeated switch).
pub fn with_switch(mut args: Vec<String>, flag: &str, short: &str) -> Vec<String> {
    if !args.iter().any(|a| a == flag || a == short) {
        args.push(flag.to_string());
    }
    args
}

/// `command` without any `--child-results FILE`, then `extra`, then child mode writing to `file`,
/// quietly.
pub fn args(command: &[String], extra: &[String], file: &Path) -> Vec<String> {
    let mut out = without(command, &[RESULTS_FLAG]);
    out.extend(extra.iter().cloned());
    out.extend([RESULTS_FLAG.to_string(), file.display().to_string()]);
    with_switch(out, "--quiet", "-q")
}

fn results_file() -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    std::env::temp_dir().join(format!(
        "tilepipe-child-{}-{}.json",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ))
}

/// Runs this binary on `command` plus `extra` in child mode and returns what it wrote. The child's
/// exit status is not an error (its failures are in what it wrote); no file is.
pub fn continue_in<T: DeserializeOwned>(command: &[String], extra: &[String]) -> Result<T> {
    let exe = std::env::current_exe().map_err(|e| Error::io("current executable", e))?;
    let file = results_file();
    let status = std::process::Command::new(&exe)
        .args(args(command, extra, &file))
        .status()
        .map_err(|e| Error::io(&exe, e))?;
    let text = std::fs::read_to_string(&file).map_err(|e| Error::InChild {
        detail: format!("it wrote no results ({status}): {}", Error::io(&file, e)),
    });
    let _ = std::fs::remove_file(&file);
    serde_json::from_str(&text?).map_err(|e| Error::InChild {
        detail: format!("its results do not parse: {e}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_child_gets_the_arguments_without_an_earlier_results_file() {
        let argv: Vec<String> = [
            "tilepipe",
            "run",
            "--tokens",
            "64",
            "--child-results",
            "/tmp/a.json",
            "--child-results=/tmp/b.json",
            "--quiet",
        ]
        .map(String::from)
        .to_vec();
        let got = args(
            &argv,
            &["--exclude".into(), "x,y".into()],
            Path::new("/tmp/c.json"),
        );
        assert_eq!(
            got,
            [
                "run",
                "--tokens",
                "64",
                "--quiet",
                "--exclude",
                "x,y",
                "--child-results",
                "/tmp/c.json",
            ]
        );
        let loud = args(&argv[..4], &[], Path::new("/tmp/d.json"));
        assert_eq!(loud.last().map(String::as_str), Some("--quiet"));
    }
}
