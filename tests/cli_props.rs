//! Command lines with random and extreme numbers through the real binary (and its clap parser):
//! whatever the values, tilepipe refuses them with one line or gets as far as opening the GPU
//! (none is visible here), and never panics.

use assert_cmd::Command;
use proptest::prelude::*;

fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("0".to_string()),
        Just("1".to_string()),
        Just("-1".to_string()),
        Just("3".to_string()),
        Just(i32::MAX.to_string()),
        Just((i32::MAX as u64 + 1).to_string()),
        Just(u32::MAX.to_string()),
        Just(u64::MAX.to_string()),
        Just("18446744073709551616".to_string()),
        Just("1e15".to_string()),
        (0u32..64).prop_map(|b| (1u64 << b).to_string()),
        (0u64..100_000).prop_map(|v| v.to_string()),
        any::<u64>().prop_map(|v| v.to_string()),
    ]
}

const RUN: [&str; 9] = [
    "--tokens",
    "--hidden",
    "--row-stride",
    "--offset",
    "--alloc",
    "--tile-rows",
    "--repeats",
    "--warmup",
    "--seed",
];
const TIMELINE: [&str; 5] = ["--blocks", "--tiles", "--tokens", "--hidden", "--tile-rows"];
const PROBE: [&str; 6] = [
    "--stress",
    "--blocks",
    "--wait-timeout-ms",
    "--runs",
    "--seed",
    "--tokens",
];
const CHECK: [&str; 3] = ["--runs", "--suite-hidden", "--seed"];
const LAB: [&str; 2] = ["--dt", "--slots"];

fn command_line() -> impl Strategy<Value = Vec<String>> {
    let flags = |cmd: &'static [&'static str], flags: &'static [&'static str]| {
        proptest::collection::vec((proptest::sample::select(flags), number()), 1..5).prop_map(
            move |pairs| {
                let mut v: Vec<String> = cmd.iter().map(|s| s.to_string()).collect();
                for (f, n) in pairs {
                    v.push(f.to_string());
                    v.push(n);
                }
                v
            },
        )
    };
    prop_oneof![
        flags(&["run", "--quiet"], &RUN),
        flags(&["timeline", "--quiet"], &TIMELINE),
        flags(&["probe", "sync", "--quiet"], &PROBE),
        flags(&["check", "--quiet"], &CHECK),
        flags(&["lab", "queue", "--script", "step 3"], &LAB),
        number().prop_map(|n| vec![
            "lab".into(),
            "queue".into(),
            "--script".into(),
            format!("arrival {n}; service 1; step {n}; predict {n}; step")
        ]),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn no_command_line_panics(args in command_line()) {
        let out = Command::cargo_bin("tilepipe")
            .unwrap()
            .args(&args)
            .env("CUDA_VISIBLE_DEVICES", "")
            .timeout(std::time::Duration::from_secs(60))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        prop_assert!(!err.contains("panicked"), "{args:?}: {err}");
        let code = out.status.code();
        if args[0] == "lab" {
            prop_assert!(matches!(code, Some(0 | 2)), "{args:?}: {code:?} {err}");
        } else {
            // 2: refused (clap or tilepipe), 1: got as far as the GPU, which is not there
            prop_assert!(matches!(code, Some(1 | 2)), "{args:?}: {code:?} {err}");
            prop_assert!(err.starts_with("tilepipe: error: ") || err.starts_with("error: "), "{err}");
            if code == Some(1) {
                prop_assert!(err.contains("no CUDA"), "{args:?}: {err}");
            }
        }
    }
}
