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
use std::time::Duration;

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

/// How long a watched process may print nothing: until its first byte (its builds), and between
/// bytes after that. A kernel that hangs past its bounded waits shows as silence, however many
/// runs the process was given.
#[derive(Clone, Copy, Debug)]
pub struct Silence {
    pub first: Duration,
    pub then: Duration,
}

/// Runs `cmd` to the end, with its stdout and stderr collected, unless it stays silent past
/// `limit`: then it is killed and what it printed so far comes back with the silence that ended
/// it. A kernel that hangs must not stall the process that is waiting for it.
pub fn output_within(
    cmd: &mut std::process::Command,
    limit: Silence,
) -> std::io::Result<(std::process::Output, Option<Duration>)> {
    use std::io::Read;
    use std::process::Stdio;
    use std::sync::Arc;
    use std::sync::atomic::AtomicU64;
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
    let start = std::time::Instant::now();
    // milliseconds from `start` to the last byte either stream gave, plus one (0: none yet)
    let last = Arc::new(AtomicU64::new(0));
    let drain = |mut r: Box<dyn Read + Send>| {
        let last = Arc::clone(&last);
        std::thread::spawn(move || {
            let (mut all, mut chunk) = (Vec::new(), [0u8; 4096]);
            while let Ok(n @ 1..) = r.read(&mut chunk) {
                all.extend_from_slice(&chunk[..n]);
                last.store(start.elapsed().as_millis() as u64 + 1, Ordering::Relaxed);
            }
            all
        })
    };
    let out = drain(Box::new(child.stdout.take().expect("piped stdout")));
    let err = drain(Box::new(child.stderr.take().expect("piped stderr")));
    let (status, killed) = loop {
        if let Some(s) = child.try_wait()? {
            break (s, None);
        }
        let heard = last.load(Ordering::Relaxed);
        let (since, allowed) = match heard {
            0 => (start.elapsed(), limit.first),
            ms => (
                start
                    .elapsed()
                    .saturating_sub(Duration::from_millis(ms - 1)),
                limit.then,
            ),
        };
        if since > allowed {
            let _ = child.kill();
            break (child.wait()?, Some(allowed));
        }
        std::thread::sleep(Duration::from_millis(50));
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

    fn sh(script: &str) -> std::process::Command {
        let mut c = std::process::Command::new("sh");
        c.args(["-c", script]);
        c
    }

    const BRIEF: Silence = Silence {
        first: Duration::from_millis(1500),
        then: Duration::from_millis(700),
    };

    #[test]
    fn a_process_silent_past_its_limit_is_killed_with_what_it_printed() {
        let t = std::time::Instant::now();
        let (out, killed) =
            output_within(&mut sh("echo run 0: passed; exec sleep 30"), BRIEF).unwrap();
        assert_eq!(killed, Some(BRIEF.then));
        assert!(t.elapsed() < Duration::from_secs(10));
        assert_eq!(String::from_utf8_lossy(&out.stdout), "run 0: passed\n");
        // silent from the start: the first limit applies
        let (out, killed) = output_within(&mut sh("exec sleep 30"), BRIEF).unwrap();
        assert_eq!(killed, Some(BRIEF.first));
        assert!(out.stdout.is_empty());
    }

    /// A process that keeps printing lives however long it takes in all; its silences, each
    /// shorter than the limit, are not summed.
    #[test]
    fn a_process_that_keeps_printing_is_not_killed() {
        let talk =
            "sleep 1; for i in 1 2 3 4 5 6; do echo run $i; sleep 0.4; done; echo err >&2; exit 3";
        let t = std::time::Instant::now();
        let (out, killed) = output_within(&mut sh(talk), BRIEF).unwrap();
        assert!(t.elapsed() > BRIEF.first + BRIEF.then);
        assert!(killed.is_none() && out.status.code() == Some(3));
        assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 6);
        assert_eq!(out.stderr, b"err\n");
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
