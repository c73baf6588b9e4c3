//! Every kernel tree of scripts/mutate.py builds, as a checking run builds it (stressed and
//! monitored), the first row and GEMM variant its bug is in and the first it cannot bite; and every
//! variant a mutant names exists. (`tests/kernels_compile.rs` builds every variant's and control's
//! monitored build from the embedded sources.)
//! Needs NVRTC, the CUDA headers and python3; ignored with the reason without NVRTC at build time,
//! unless TILEPIPE_REQUIRE_NVRTC is set (CI).

mod common;

use std::process::Command;
use tilepipe::arch::Arch;
use tilepipe::dtype::DType;
use tilepipe::engine::build;
use tilepipe::gpu::cache::Cache;
use tilepipe::pipeline::Instrument;
use tilepipe::toolchain::Toolchain;
use tilepipe::workload::{Visitor, Workload};

const MUTATE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/mutate.py");

/// scripts/mutate.py's mutants: name -> what it says of each.
fn mutants() -> serde_json::Map<String, serde_json::Value> {
    let out = Command::new("python3")
        .args([MUTATE, "--json"])
        .output()
        .expect("python3 runs scripts/mutate.py");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn names(m: &serde_json::Value, key: &str) -> Vec<String> {
    m[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

/// Builds the variants (or controls) named, in bf16, in the workload's first suite group, for
/// sm_90 and monitored; returns how many it found and built.
struct BuildNamed<'a> {
    names: &'a [String],
    tc: &'a Toolchain,
    nvrtc: &'a str,
}

impl Visitor for BuildNamed<'_> {
    type Output = usize;

    fn visit<W: Workload>(self, w: &'static W) -> usize {
        let (_, group) = w.suite_groups(&[DType::Bf16], None).unwrap().remove(0);
        let arch: Arch = "sm_90".parse().unwrap();
        let all: Vec<_> = w
            .catalogue(DType::Bf16)
            .into_iter()
            .chain(w.controls(DType::Bf16))
            .collect();
        let mut built = 0;
        for v in all.iter().filter(|v| self.names.contains(&v.name)) {
            let label = format!("{} {} monitored", w.name(), v.name);
            let b = build::build(
                w,
                v,
                &group,
                Instrument::STRESSED,
                (arch, self.tc),
                self.nvrtc,
                &Cache::disabled(),
            )
            .unwrap_or_else(|e| panic!("{label}: {e}"));
            assert!(!b.cubin.is_empty(), "{label}");
            built += 1;
        }
        built
    }
}

/// Whether the workload named has a variant or control called `name` in bf16.
struct Has<'a>(&'a str);

impl Visitor for Has<'_> {
    type Output = bool;

    fn visit<W: Workload>(self, w: &'static W) -> bool {
        w.catalogue(DType::Bf16)
            .into_iter()
            .chain(w.controls(DType::Bf16))
            .any(|v| v.name == self.0)
    }
}

#[test]
fn every_mutant_names_real_variants() {
    for (name, m) in mutants() {
        for (key, workloads) in [
            ("rows", &["rmsnorm"][..]),
            ("gemm", &["gemm"]),
            ("clean", &["rmsnorm", "gemm"]),
        ] {
            for v in names(&m, key) {
                let found = workloads
                    .iter()
                    .any(|w| tilepipe::workload::visit(w, Has(&v)).unwrap());
                assert!(found, "{name}: {key} names {v}, which no workload has");
            }
        }
    }
}

#[test]
#[cfg_attr(
    not(nvrtc_found),
    ignore = "NVRTC or the CUDA headers not found at build time (CUDA_HOME, CUDA_PATH, /usr/local/cuda); .ci/run installs them"
)]
fn every_mutant_tree_builds_its_variants() {
    common::nvrtc();
    let dir = tempfile::tempdir().unwrap();
    for name in mutants().keys() {
        let tree = dir.path().join(name);
        let made = Command::new("python3")
            .args([MUTATE, name])
            .arg(&tree)
            .output()
            .unwrap();
        assert!(
            made.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&made.stderr)
        );
        // in a process of its own: TILEPIPE_KERNELS is read by every build of the process
        let child = Command::new(std::env::current_exe().unwrap())
            .args(["--ignored", "--exact", "mutant_tree_child", "--nocapture"])
            .env(build::SOURCE_DIR_ENV, &tree)
            .env("TILEPIPE_MUTANT", name)
            .output()
            .unwrap();
        assert!(
            child.status.success(),
            "{name}: {}{}",
            String::from_utf8_lossy(&child.stdout),
            String::from_utf8_lossy(&child.stderr)
        );
    }
}

/// Builds, from the tree TILEPIPE_KERNELS names, the first row and GEMM variant the mutant
/// TILEPIPE_MUTANT is in and the first it cannot bite; run by every_mutant_tree_builds_its_variants.
#[test]
#[ignore = "run by every_mutant_tree_builds_its_variants, in a process whose TILEPIPE_KERNELS names the tree"]
fn mutant_tree_child() {
    let (tc, nvrtc) = common::nvrtc();
    let name = std::env::var("TILEPIPE_MUTANT").expect("TILEPIPE_MUTANT");
    assert!(
        build::source_dir().is_some(),
        "TILEPIPE_KERNELS names the tree"
    );
    let m = &mutants()[&name];
    let first = |key: &str| names(m, key).into_iter().take(1).collect::<Vec<_>>();
    let mut built = 0;
    for (workload, key) in [
        ("rmsnorm", "rows"),
        ("gemm", "gemm"),
        ("rmsnorm", "clean"),
        ("gemm", "clean"),
    ] {
        let names = first(key);
        let b = BuildNamed {
            names: &names,
            tc: &tc,
            nvrtc: &nvrtc,
        };
        built += tilepipe::workload::visit(workload, b).unwrap();
    }
    assert!(built > 0, "{name} names no variant");
}
