//! Every variant and control of every workload compiles, for sm_90 and sm_80, in each of its suite
//! groups (a precision and the workload's own axis: hidden sizes, B's layouts, views whose rows
//! start inside 16-byte chunks) and fitted to each suite case (the narrower copies, aligned
//! windows and split stores such rows need), each distinct build once, as do the instrumented builds (stress, timeline,
//! stage probes) and tilepipe's own kernels; each clean build shows in its SASS the movement it
//! claims (and the math its workload claims), publishes its mbarriers' initialisation before the
//! first wait, retires its wgmma before it releases a slot, and no warp-specialised wgmma build
//! spills after handing registers over; a consumer that releases its slot with its wgmma still in
//! flight (the last wait taken out of a copy of kernels/) is named by `tilepipe sass`.
//! Needs NVRTC and the CUDA headers (a CUDA toolkit, or NVIDIA's wheels as `.ci/run` installs
//! them, with CUDA_HOME) and nvdisasm. Without them at build time it is ignored with the reason,
//! unless TILEPIPE_REQUIRE_NVRTC is set (CI), where a missing NVRTC fails it.

mod common;

use rayon::prelude::*;
use std::collections::BTreeSet;
use tilepipe::arch::Arch;
use tilepipe::dtype::DType;
use tilepipe::engine::build;
use tilepipe::evidence::sass;
use tilepipe::gpu::DeviceInfo;
use tilepipe::gpu::cache::Cache;
use tilepipe::pipeline::{Claim, Instrument, Variant};
use tilepipe::toolchain::Toolchain;
use tilepipe::workload::{VariantOf, Visitor, Workload};

/// The GPU a recorded H200 run describes, as another architecture where asked (the sm_80 builds
/// are judged against what an sm_80 GPU allows).
fn device(arch: Arch) -> DeviceInfo {
    let text = include_str!("fixtures/h200-run.json");
    let v: serde_json::Value = serde_json::from_str(text).unwrap();
    let mut d: DeviceInfo = serde_json::from_value(v["device"].clone()).unwrap();
    d.arch = arch;
    d
}

struct CompileAll<'a> {
    tc: &'a Toolchain,
    nvrtc: &'a str,
}

impl Visitor for CompileAll<'_> {
    type Output = usize;

    fn visit<W: Workload>(self, w: &'static W) -> usize {
        let mut jobs: Vec<(VariantOf<W>, W::Problem, Instrument, Arch)> = Vec::new();
        let mut seen = BTreeSet::new();
        for arch in ["sm_90", "sm_80"] {
            let arch: Arch = arch.parse().unwrap();
            let gpu = device(arch);
            for (tag, group) in w.suite_groups(w.dtypes(), None).unwrap() {
                let dtype = tilepipe::workload::Problem::dtype(&group);
                let all: Vec<_> = w
                    .catalogue(dtype)
                    .into_iter()
                    .chain(w.controls(dtype))
                    .collect();
                for case in w.suite_cases(&group, 1).unwrap() {
                    for v in &all {
                        let f = w.fit(v, &[&case.problem]);
                        // a build is its options: groups of one precision and width share theirs
                        let b = w.build(&f, &group, Instrument::CLEAN);
                        let key = (b.defines, b.arch_specific, b.cluster, arch.to_string());
                        if w.can_implement(&f, &case.problem, &gpu).is_ok() && seen.insert(key) {
                            jobs.push((f, group.clone(), Instrument::CLEAN, arch));
                        }
                    }
                }
                // the instrumented builds once per architecture, in bf16: they change the loop,
                // not the types
                if dtype == DType::Bf16 && tag == w.suite_groups(&[dtype], None).unwrap()[0].0 {
                    let baseline = w.catalogue(dtype).remove(0);
                    let only = |only| Instrument {
                        only,
                        ..Instrument::CLEAN
                    };
                    let runnable =
                        |v: &&Variant<W::Shape>| w.can_implement(v, &group, &gpu).is_ok();
                    for v in all.iter().filter(runnable) {
                        jobs.push((v.clone(), group.clone(), Instrument::STRESSED, arch));
                    }
                    for v in all.iter().filter(|v| !v.is_control()).filter(runnable) {
                        jobs.push((v.clone(), group.clone(), Instrument::traced(8), arch));
                    }
                    if w.stage_probes() {
                        for v in all.iter().filter(|v| !v.is_control()).filter(runnable) {
                            jobs.push((v.clone(), group.clone(), only(1), arch));
                        }
                        jobs.push((baseline, group.clone(), only(2), arch));
                    }
                }
            }
        }
        jobs.par_iter().for_each(|(v, p, ins, arch)| {
            let label = format!("{} {} {ins:?} {arch}", w.name(), v.name);
            let built = build::build(
                w,
                v,
                p,
                *ins,
                (*arch, self.tc),
                self.nvrtc,
                &Cache::disabled(),
            )
            .unwrap_or_else(|e| panic!("{label}: {e}"));
            assert!(!built.cubin.is_empty());
            if !ins.is_clean() {
                return;
            }
            let entry = w.kernel().entry;
            let ev = sass::examine(&built.cubin, self.tc, entry, v.claim()).unwrap();
            let math = w.math(v, p, ev.census.as_ref(), &built.log);
            if v.claim() != Claim::AnyAsync || math.is_some() {
                assert!(
                    ev.attestation.is_attested(),
                    "{label}: {}",
                    ev.attestation.label()
                );
            }
            if let Some(m) = &math {
                assert!(m.is_attested(), "{label}: math {}", m.label());
            }
            let kernel = sass::parse::parse(&ev.listing)
                .into_iter()
                .find(|f| f.name == entry);
            let lag = sass::protocol::mma_lag(&built.options);
            let retired = |f: &_| sass::protocol::wgmma_retired(f, lag);
            let facts: [sass::protocol::Fact; 3] = [
                &sass::protocol::init_published,
                &retired,
                &sass::protocol::uniforms_written,
            ];
            for fact in facts {
                let verdict = kernel.as_ref().and_then(fact);
                assert!(
                    verdict.as_ref().is_none_or(|v| v.is_ok()),
                    "{label}: {verdict:?}"
                );
            }
            let c = ev.census.as_ref().unwrap();
            if c.count("USETMAXREG") > 0 {
                assert_eq!(c.count("USETMAXREG"), 2, "{label}: registers handed over");
                assert_eq!(c.count("STL"), 0, "{label}: no spills");
            }
        });
        jobs.len()
    }
}

#[test]
#[cfg_attr(
    not(all(nvrtc_found, disassemblers_found)),
    ignore = "NVRTC, the CUDA headers, nvdisasm or cuobjdump not found at build time (CUDA_HOME, CUDA_PATH, /usr/local/cuda); .ci/run installs them"
)]
fn every_build_compiles_and_attests() {
    let (tc, nvrtc) = common::nvrtc();
    assert!(
        tc.nvdisasm.is_some(),
        "nvdisasm, found at build time, is missing now"
    );
    for name in tilepipe::workload::all() {
        let visitor = CompileAll {
            tc: &tc,
            nvrtc: &nvrtc,
        };
        let n = tilepipe::workload::visit(name, visitor).unwrap();
        eprintln!("{name}: {n} builds compiled");
    }
    for arch in ["sm_90", "sm_80"] {
        let arch: Arch = arch.parse().unwrap();
        for utility in [build::POISON, build::HOLD, build::PLAIN_COPY] {
            let built = build::build_utility(utility, arch, &tc, &nvrtc, &Cache::disabled());
            assert!(!built.unwrap().cubin.is_empty());
        }
    }
}

/// `tilepipe sass` on attention's and GEMM's wgmma rings built from a copy of kernels/ whose
/// consumers skip their last wgmma wait (the overlapped ring's: the wait after its last P V, in
/// flush): each names the MMA still in flight at the release.
#[test]
#[cfg_attr(
    not(all(nvrtc_found, disassemblers_found)),
    ignore = "NVRTC, the CUDA headers, nvdisasm or cuobjdump not found at build time (CUDA_HOME, CUDA_PATH, /usr/local/cuda); .ci/run installs them"
)]
fn a_wgmma_still_in_flight_at_a_release_is_named() {
    let _ = common::nvrtc();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let copy = |from: &std::path::Path, to: &std::path::Path| {
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            let dst = to.join(e.file_name());
            if e.file_type().unwrap().is_dir() {
                std::fs::create_dir_all(&dst).unwrap();
                for f in std::fs::read_dir(e.path()).unwrap() {
                    let f = f.unwrap();
                    std::fs::copy(f.path(), dst.join(f.file_name())).unwrap();
                }
            } else {
                std::fs::copy(e.path(), dst).unwrap();
            }
        }
    };
    copy(&root.join("kernels"), dir.path());
    // the last `from` in `file` becomes `to`
    let mutate = |file: &str, from: &str, to: &str| {
        let path = dir.path().join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        let (last, _) = text.rmatch_indices(from).next().unwrap();
        let cut = format!("{}{to}{}", &text[..last], &text[last + from.len()..]);
        std::fs::write(path, cut).unwrap();
    };
    let sass = |kernels: Option<&std::path::Path>, args: &[&str]| {
        let mut cmd = assert_cmd::Command::cargo_bin("tilepipe").unwrap();
        cmd.args(["sass", "--dtype", "bf16", "--arch", "sm_90", "--no-cache"])
            .args(args);
        if let Some(k) = kernels {
            cmd.env("TILEPIPE_KERNELS", k);
        }
        String::from_utf8(cmd.output().unwrap().stdout).unwrap()
    };
    let attention = ["tma-wgmma-s2", "--workload", "attention"];
    let gemm = ["tma-wgmma-ws-s4", "--workload", "gemm", "--layout", "nk"];
    let overlap = ["tma-wgmma-ws-ov-s2", "--workload", "attention"];
    // ping-pong leaves a step's own group in flight at the previous step's release: one allowed
    let pingpong = ["tma-wgmma-ws-pp-s4", "--workload", "gemm", "--layout", "nk"];
    let all = [&attention[..], &gemm[..], &overlap[..], &pingpong[..]];
    for args in all {
        let clean = sass(None, args);
        assert!(clean.contains("protocol: every one of"), "{clean}");
    }
    // the wait after a P V that ends a step's reads: each step's without the overlap, and with it
    // the last one's (flush), before its slot's late release
    mutate(
        "attention/wgmma.cuh",
        "        pv(k);\n        mma_wait<0>();\n",
        "        pv(k);\n",
    );
    mutate("gemm/wgmma.cuh", "        mma_wait<RELEASE_LAG>();\n", "");
    for args in all {
        let broken = sass(Some(dir.path()), args);
        assert!(
            broken.contains("protocol: HAZARD: the wgmma at")
                && broken.contains("is still in flight at the mbarrier arrive"),
            "{args:?}: {broken}"
        );
    }
}

/// `tilepipe sass` on the one build NVRTC 13.0 is known to miscompile: `cpasync-cg16-s2-el` on
/// rows that start inside a chunk, whose hinted cp.async reads UR0 and UR1 that nothing writes
/// (an illegal instruction on the GPU; `run` and `check` refuse the build with that reason). The
/// same variant on dense rows, built by the same compiler, reads only what it wrote.
#[test]
#[cfg_attr(
    not(all(nvrtc_found, disassemblers_found)),
    ignore = "NVRTC, the CUDA headers, nvdisasm or cuobjdump not found at build time (CUDA_HOME, CUDA_PATH, /usr/local/cuda); .ci/run installs them"
)]
fn a_uniform_register_nothing_wrote_is_named() {
    let (_, nvrtc) = common::nvrtc();
    let sass = |view: &[&str]| {
        let out = assert_cmd::Command::cargo_bin("tilepipe")
            .unwrap()
            .args([
                "sass",
                "cpasync-cg16-s2-el",
                "--dtype",
                "bf16",
                "--arch",
                "sm_90",
            ])
            .args(["--no-cache", "--tokens", "4099", "--hidden", "3072"])
            .args(view)
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    let dense = sass(&[]);
    assert!(
        dense.contains("protocol: every one of")
            && dense.contains("uniform register read(s) is written"),
        "{dense}"
    );
    let window = sass(&["--row-stride", "3200", "--offset", "1"]);
    assert!(
        window.contains("protocol: HAZARD: the LDGSTS.E.BYPASS.128 at")
            && window.contains("reads UR0, which no instruction of the kernel writes"),
        "NVRTC {nvrtc} no longer reads an unwritten uniform register here (if it is fixed, the refusal in rows/fit.rs can go): {window}"
    );
}

/// `tilepipe sass` reports the kernel's main loop, registers and spills, and they are what the
/// cubin holds: f32's 128 x 256 tile on B [N x K] issues a thread's 16 x 8 outputs times 16 k,
/// 2048 FFMA, a pass of its main loop; it fits its 255 registers with 32-bit copy offsets, and
/// spilled with the 64-bit ones it had before (the same kernels/ with the Step's strides put
/// back to `long long`).
#[test]
#[cfg_attr(
    not(all(nvrtc_found, disassemblers_found)),
    ignore = "NVRTC, the CUDA headers, nvdisasm or cuobjdump not found at build time (CUDA_HOME, CUDA_PATH, /usr/local/cuda); .ci/run installs them"
)]
fn sass_reports_the_main_loop_registers_and_spills() {
    let (_, nvrtc) = common::nvrtc();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let status = std::process::Command::new("cp")
        .arg("-r")
        .arg(root.join("kernels/."))
        .arg(dir.path())
        .status()
        .unwrap();
    assert!(status.success());
    let gemm = dir.path().join("gemm.cu");
    let mut text = std::fs::read_to_string(&gemm).unwrap();
    for (from, to) in [
        ("        int lda, ldb;", "        long long lda, ldb;"),
        ("a + (u32)(r * lda + c)", "a + (r * lda + c)"),
        ("b + (u32)(r * ldb + c)", "b + (r * ldb + c)"),
        ("(int)p.lda, (int)p.ldb", "p.lda, p.ldb"),
    ] {
        assert!(
            text.contains(from),
            "kernels/gemm.cu no longer has {from:?}"
        );
        text = text.replace(from, to);
    }
    std::fs::write(&gemm, text).unwrap();
    let sass = |kernels: Option<&std::path::Path>| {
        let mut cmd = assert_cmd::Command::cargo_bin("tilepipe").unwrap();
        cmd.args([
            "sass",
            "cpasync-cg16-s4-128x256x16-8w",
            "--workload",
            "gemm",
        ])
        .args([
            "--dtype",
            "f32",
            "--layout",
            "nk",
            "--arch",
            "sm_90",
            "--no-cache",
        ]);
        if let Some(k) = kernels {
            cmd.env("TILEPIPE_KERNELS", k);
        }
        let out = String::from_utf8(cmd.output().unwrap().stdout).unwrap();
        assert!(
            out.lines()
                .any(|l| l.starts_with("main loop: ") && l.contains(": FFMA 2048, LDS 96,")),
            "{out}"
        );
        let line = out
            .lines()
            .find(|l| l.starts_with("resources: "))
            .unwrap_or_else(|| panic!("no resources line: {out}"))
            .to_string();
        let registers: u32 = line["resources: ".len()..]
            .split_whitespace()
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{line}"));
        (registers, line)
    };
    let (registers, now) = sass(None);
    assert!(
        (200..=255).contains(&registers)
            && now.contains(" registers a thread, 0 B stack, 0 B local,")
            && now.ends_with("; LDL 0, STL 0"),
        "{now}"
    );
    let (_, wide) = sass(Some(dir.path()));
    assert!(
        !wide.contains("0 B stack") && !wide.ends_with("LDL 0, STL 0"),
        "NVRTC {nvrtc} no longer spills the 64-bit offsets' build (the test needs another spilling build): {wide}"
    );
}
