//! What the tests of the real binary share: the binary, a fixture's path, a run's stderr.

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
