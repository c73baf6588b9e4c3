//! Every variant, control, stress, timeline and stage-probe build of every workload, and the
//! shared-memory poison kernel, compiles for sm_80 and sm_90.
//! Needs NVRTC and the CUDA headers (a CUDA toolkit, or NVIDIA's wheels as `.ci/run` installs
//! them, with CUDA_HOME). Without them it says so and is skipped, unless TILEPIPE_REQUIRE_NVRTC is
//! set (CI), where a missing NVRTC fails it.

mod common;

use rayon::prelude::*;
use tilepipe::arch::Arch;
use tilepipe::dtype::DType;
use tilepipe::evidence::sass;
use tilepipe::gpu::cache::Cache;
use tilepipe::kernels;
use tilepipe::pipeline::{BuildConfig, Variant};
use tilepipe::toolchain::Toolchain;

#[test]
fn every_build_compiles_and_attests() {
    let Some((tc, nvrtc)) = common::nvrtc() else {
        return;
    };
    for w in tilepipe::workload::all() {
        every_build_of(w, &tc, &nvrtc);
    }
}

fn every_build_of(w: &dyn tilepipe::workload::Workload, tc: &Toolchain, nvrtc: &str) {
    let all: Vec<Variant> = w.catalogue().into_iter().chain(w.controls()).collect();
    let mut jobs = Vec::new();
    for arch in ["sm_90", "sm_80"] {
        let arch: Arch = arch.parse().unwrap();
        for utility in [kernels::POISON, kernels::HOLD, kernels::PLAIN_COPY] {
            let built = kernels::build_utility(utility, arch, tc, nvrtc, &Cache::disabled());
            assert!(!built.unwrap().cubin.is_empty());
        }
        for dt in DType::ALL {
            for hidden in [4096, 1544] {
                let base = BuildConfig::new(dt, hidden, None);
                let mut cfgs = vec![base];
                // the flag builds once per architecture: they change the loop, not the types
                if dt == DType::Bf16 && hidden == 4096 {
                    cfgs.extend([
                        BuildConfig { stress: 3, ..base },
                        BuildConfig {
                            trace_tiles: 8,
                            ..base
                        },
                        BuildConfig { only: 1, ..base },
                        BuildConfig { only: 2, ..base },
                    ]);
                }
                for cfg in cfgs {
                    jobs.extend(
                        all.iter()
                            .map(|v| (v, v.config(&cfg), v.config(&base), arch))
                            .filter(|(v, cfg, _, _)| {
                                v.unsupported_on(arch.sm(), 232448, cfg).is_none()
                            })
                            // the compute-only probe is built from the baseline alone (sweep's probes)
                            .filter(|(v, cfg, _, _)| cfg.only != 2 || v.name == all[0].name),
                    );
                }
            }
        }
    }
    jobs.par_iter().for_each(|&(v, cfg, base, arch)| {
        let built = kernels::build(w, v, &cfg, arch, tc, nvrtc, &Cache::disabled())
            .unwrap_or_else(|e| panic!("{} {} {cfg:?}: {e}", w.name(), v.name));
        assert!(!built.cubin.is_empty());
        if cfg == base && tc.nvdisasm.is_some() {
            let entry = w.kernel().entry;
            let ev = sass::examine(&built.cubin, tc, entry, v.claim()).unwrap();
            assert!(
                v.claim() == tilepipe::pipeline::Claim::AnyAsync || ev.attestation.is_attested(),
                "{} {cfg:?} {arch}: {}",
                v.name,
                ev.attestation.label()
            );
            let published = sass::parse::parse(&ev.listing)
                .iter()
                .find(|f| f.name == entry)
                .and_then(sass::protocol::init_published);
            assert!(
                published.is_none_or(|p| p.is_ok()),
                "{} {cfg:?} {arch}: mbarrier init not published",
                v.name
            );
        }
    });
    eprintln!("{}: {} builds compiled", w.name(), jobs.len());
}
