//! Going on in a new process. After a sticky fault (an illegal address, a trap) a CUDA context is
//! lost for good, and with it this process's use of the GPU: CUDA's own advice is that the process
//! must end and start again. So the rest of a run or a suite is handed to a new process of this
//! same binary, given this one's arguments plus what to leave out; it writes what it measured as
//! JSON to a file, which this process reads back and merges.

use super::Engine;
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

/// `command` without any `--child-results FILE` and without the flags `extra` sets (a child of a
/// child gets the newer value once: clap refuses a repeated flag), then `extra`, then child mode
/// writing to `file`, quietly.
pub fn args(command: &[String], extra: &[String], file: &Path) -> Vec<String> {
    let mut flags = vec![RESULTS_FLAG];
    flags.extend(
        extra
            .iter()
            .filter(|a| a.starts_with("--"))
            .map(String::as_str),
    );
    let mut out = without(command, &flags);
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

/// Runs `cmd` to the end, with its stdout and stderr collected, unless it takes longer than
/// `limit`: then it is killed and what it printed so far comes back with `killed` set. A kernel
/// that hangs past its bounded waits must not stall the process that is waiting for it.
pub fn output_within(
    cmd: &mut std::process::Command,
    limit: std::time::Duration,
) -> std::io::Result<(std::process::Output, bool)> {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut b = Vec::new();
            let _ = r.read_to_end(&mut b);
            b
        })
    };
    let out = drain(Box::new(child.stdout.take().expect("piped stdout")));
    let err = drain(Box::new(child.stderr.take().expect("piped stderr")));
    let start = std::time::Instant::now();
    let (status, killed) = loop {
        if let Some(s) = child.try_wait()? {
            break (s, false);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            break (child.wait()?, true);
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let joined = |h: std::thread::JoinHandle<Vec<u8>>| h.join().unwrap_or_default();
    let (stdout, stderr) = (joined(out), joined(err));
    Ok((
        std::process::Output {
            status,
            stdout,
            stderr,
        },
        killed,
    ))
}

/// `e`, from `variant`'s kernel on `case`, as `ContextLost` when it left the context unusable (a
/// sticky fault such as an illegal address: the variant's failure, after which nothing more can
/// run in this context and the caller goes on in a fresh one).
pub fn sticky(engine: &Engine, variant: &str, case: &str, e: Error) -> Error {
    if engine.healthy() {
        e
    } else {
        Error::ContextLost {
            variant: variant.to_string(),
            case: case.to_string(),
            cause: Box::new(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_past_its_limit_is_killed_with_what_it_printed() {
        let mut slow = std::process::Command::new("sh");
        slow.args(["-c", "echo run 0: passed; exec sleep 30"]);
        let t = std::time::Instant::now();
        let (out, killed) =
            output_within(&mut slow, std::time::Duration::from_millis(500)).unwrap();
        assert!(killed && t.elapsed() < std::time::Duration::from_secs(10));
        assert_eq!(String::from_utf8_lossy(&out.stdout), "run 0: passed\n");
        let mut quick = std::process::Command::new("sh");
        quick.args(["-c", "echo out; echo err >&2; exit 3"]);
        let (out, killed) = output_within(&mut quick, std::time::Duration::from_secs(20)).unwrap();
        assert!(!killed && out.status.code() == Some(3));
        assert_eq!(
            (out.stdout, out.stderr),
            (b"out\n".to_vec(), b"err\n".to_vec())
        );
    }

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
        // a second fault: the child's own --exclude gives way to the longer list
        let mut again = argv.clone();
        again.extend(["--exclude", "x,y", "--from-group", "1"].map(String::from));
        let extra = ["--exclude", "x,y,z", "--from-group", "2"].map(String::from);
        let got = args(&again, &extra, Path::new("/tmp/e.json"));
        assert_eq!(got.iter().filter(|a| *a == "--exclude").count(), 1);
        assert_eq!(got.iter().filter(|a| *a == "--from-group").count(), 1);
        assert!(
            got.windows(2).any(|w| w == ["--exclude", "x,y,z"]),
            "{got:?}"
        );
        assert!(
            got.windows(2).any(|w| w == ["--from-group", "2"]),
            "{got:?}"
        );
        let loud = args(&argv[..4], &[], Path::new("/tmp/d.json"));
        assert_eq!(loud.last().map(String::as_str), Some("--quiet"));
    }
}
