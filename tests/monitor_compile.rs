//! The protocol monitor's builds compile (with the stress perturbation beside it, as a checking run
//! builds them): every rmsnorm variant and control for sm_90 (bf16 rows of 4096), every GEMM
//! variant and control for sm_90 (sm_90a with wgmma) in bf16
//! [N x K]; and, where another precision or architecture changes only the compute body, the first
//! variant of each mechanism (copy; rmsnorm f32 rows of 1544 for sm_80; GEMM f32 [K x N] for sm_90,
//! f16 [K x N] for sm_80). And every kernel tree of scripts/mutate.py builds, monitored, the
//! variants its bug is in.
//! Needs NVRTC and the CUDA headers (and python3 for the trees); skipped with the reason without
//! them, unless TILEPIPE_REQUIRE_NVRTC is set (CI).

mod common;

use rayon::prelude::*;
use std::process::Command;
use tilepipe::arch::Arch;
use tilepipe::dtype::DType;
use tilepipe::gpu::cache::Cache;
use tilepipe::kernels;
use tilepipe::toolchain::Toolchain;
use tilepipe::variant::{BuildConfig, STRESS_BOTH, Variant};
use tilepipe::workload::KernelSource;
use tilepipe::workload::gemm::catalogue::GemmVariant;
use tilepipe::workload::gemm::{KERNEL, Layout, Problem};

struct Job {
    label: String,
    kernel: KernelSource,
    defines: Vec<String>,
    target: (Arch, bool),
}

fn arch(name: &str) -> Arch {
    name.parse().unwrap()
}

/// A row variant's monitor build (rmsnorm, or copy where `copy`); None where the architecture
/// lacks its mechanism.
fn row_job(v: &Variant, copy: bool, dt: DType, hidden: usize, target: Arch) -> Option<Job> {
    let w = tilepipe::workload::all()[usize::from(copy)];
    let cfg = v.config(&BuildConfig {
        stress: STRESS_BOTH,
        ..BuildConfig::new(dt, hidden, None)
    });
    if v.unsupported_on(target.sm(), 232448, &cfg).is_some() {
        return None;
    }
    let mut defines = v.defines(&cfg);
    defines.extend(w.defines(&cfg));
    defines.push(tilepipe::monitor::BUILD_DEFINE.into());
    Some(Job {
        label: format!("{} {} {dt} h{hidden} {target} monitored", w.name(), v.name),
        kernel: w.kernel(),
        defines,
        target: (target, false),
    })
}

/// A GEMM variant's monitor build for a 256^3 problem; None where the architecture lacks its
/// mechanism.
fn gemm_job(v: &GemmVariant, dt: DType, layout: Layout, target: Arch) -> Option<Job> {
    if target.sm() < v.pipe.mechanism.min_sm() || (v.tile.wgmma && target.sm() < 90) {
        return None;
    }
    let p = Problem::new(256, 256, 256, layout, dt).unwrap();
    let mut defines = v.defines(&p, STRESS_BOTH, 0);
    defines.push(tilepipe::monitor::BUILD_DEFINE.into());
    Some(Job {
        label: format!("gemm {} {dt} {} {target} monitored", v.name, layout.name()),
        kernel: KERNEL,
        defines,
        target: (target, v.tile.wgmma),
    })
}

fn compile_all(jobs: &[Job], tc: &Toolchain, nvrtc: &str) {
    jobs.par_iter().for_each(|j| {
        let built = kernels::build_with(
            j.kernel,
            &j.label,
            j.defines.clone(),
            j.target,
            tc,
            nvrtc,
            &Cache::disabled(),
        )
        .unwrap_or_else(|e| panic!("{}: {e}", j.label));
        assert!(!built.cubin.is_empty(), "{}", j.label);
    });
}

/// The first of each (mechanism, producer warp) among `all`: the builds that differ in their
/// pipeline template where another precision or architecture adds nothing new to the monitor.
fn one_per_mechanism<T: Clone>(all: &[T], pipe: impl Fn(&T) -> &Variant) -> Vec<T> {
    let mut seen = Vec::new();
    all.iter()
        .filter(|v| {
            let key = (pipe(v).mechanism, pipe(v).warp_specialized);
            let new = !seen.contains(&key);
            seen.push(key);
            new
        })
        .cloned()
        .collect()
}

#[test]
fn every_monitor_build_compiles() {
    let Some((tc, nvrtc)) = common::nvrtc() else {
        return;
    };
    let (sm90, sm80) = (arch("sm_90"), arch("sm_80"));
    let rows = |w: &dyn tilepipe::workload::Workload| -> Vec<Variant> {
        w.catalogue().into_iter().chain(w.controls()).collect()
    };
    let rmsnorm = rows(tilepipe::workload::all()[0]);
    let copy = one_per_mechanism(&rows(tilepipe::workload::all()[1]), |v| v);
    let mut jobs: Vec<Job> = rmsnorm
        .iter()
        .filter_map(|v| row_job(v, false, DType::Bf16, 4096, sm90))
        .collect();
    jobs.extend(
        copy.iter()
            .filter_map(|v| row_job(v, true, DType::Bf16, 4096, sm90)),
    );
    jobs.extend(
        one_per_mechanism(&rmsnorm, |v| v)
            .iter()
            .filter_map(|v| row_job(v, false, DType::F32, 1544, sm80)),
    );
    let gemm = |dt| -> Vec<GemmVariant> {
        GemmVariant::catalogue(dt)
            .into_iter()
            .chain(GemmVariant::controls(dt))
            .collect()
    };
    jobs.extend(
        gemm(DType::Bf16)
            .iter()
            .filter_map(|v| gemm_job(v, DType::Bf16, Layout::Nk, sm90)),
    );
    for (dt, target) in [(DType::F32, sm90), (DType::F16, sm80)] {
        let firsts = one_per_mechanism(&gemm(dt), |v| &v.pipe);
        jobs.extend(
            firsts
                .iter()
                .filter_map(|v| gemm_job(v, dt, Layout::Kn, target)),
        );
    }
    compile_all(&jobs, &tc, &nvrtc);
    eprintln!("{} monitor builds compiled", jobs.len());
}

/// scripts/mutate.py's mutants: name -> what it says of each.
fn mutants() -> serde_json::Map<String, serde_json::Value> {
    let out = Command::new("python3")
        .args([
            concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/mutate.py"),
            "--json",
        ])
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

#[test]
fn every_mutant_tree_builds_its_variants() {
    if common::nvrtc().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for name in mutants().keys() {
        let tree = dir.path().join(name);
        let made = Command::new("python3")
            .args([
                concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/mutate.py"),
                name,
            ])
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
            .env("TILEPIPE_KERNELS", &tree)
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
/// TILEPIPE_MUTANT is in and the first it cannot bite (every name it lists must be a variant);
/// run by every_mutant_tree_builds_its_variants.
#[test]
#[ignore = "run by every_mutant_tree_builds_its_variants, in a process whose TILEPIPE_KERNELS names the tree"]
fn mutant_tree_child() {
    let (tc, nvrtc) = common::nvrtc().expect("NVRTC");
    let name = std::env::var("TILEPIPE_MUTANT").expect("TILEPIPE_MUTANT");
    assert!(
        kernels::source_dir().is_some(),
        "TILEPIPE_KERNELS names the tree"
    );
    let m = &mutants()[&name];
    let rows: Vec<Variant> = tilepipe::workload::all()[0]
        .catalogue()
        .into_iter()
        .chain(tilepipe::workload::all()[0].controls())
        .collect();
    let gemm: Vec<GemmVariant> = GemmVariant::catalogue(DType::Bf16)
        .into_iter()
        .chain(GemmVariant::controls(DType::Bf16))
        .collect();
    let find_row = |want: &String| rows.iter().find(|v| &v.name == want);
    let find_gemm = |want: &String| gemm.iter().find(|v| &v.name == want);
    let listed: Vec<String> = ["rows", "gemm", "clean"]
        .iter()
        .flat_map(|k| names(m, k))
        .collect();
    for want in &listed {
        assert!(
            find_row(want).is_some() || find_gemm(want).is_some(),
            "{name}: no variant {want}"
        );
    }
    // the first row and GEMM variant it is in and the first it cannot bite, monitored (a monitor
    // build compiles every line of its clean build, and more)
    let mut jobs = Vec::new();
    for (key, as_row, as_gemm) in [
        ("rows", true, false),
        ("gemm", false, true),
        ("clean", true, true),
    ] {
        let Some(want) = names(m, key).into_iter().next() else {
            continue;
        };
        if let Some(v) = find_row(&want).filter(|_| as_row) {
            jobs.extend(row_job(v, false, DType::Bf16, 4096, arch("sm_90")));
        }
        if let Some(v) = find_gemm(&want).filter(|_| as_gemm) {
            jobs.extend(gemm_job(v, DType::Bf16, Layout::Nk, arch("sm_90")));
        }
    }
    assert!(!jobs.is_empty(), "{name} names no variant");
    compile_all(&jobs, &tc, &nvrtc);
}
