//! What the tests of the real binary share: the binary, a fixture's path, a run's stderr and
//! what it must say.

use assert_cmd::Command;

pub fn tilepipe() -> Command {
    Command::cargo_bin("tilepipe").unwrap()
}

pub fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

pub fn stderr_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Fails, quoting stderr, unless the run's stderr contains `needle`.
pub fn assert_says(out: &std::process::Output, needle: &str) {
    let said = stderr_of(out);
    assert!(said.contains(needle), "stderr lacks '{needle}': {said}");
}

/// Runs the binary with `args` and fails unless it refuses them: exit 2, `needle` on stderr.
pub fn refuses(args: &[&str], needle: &str) {
    let out = tilepipe().args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    assert_says(&out, needle);
}
