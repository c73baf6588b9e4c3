//! Every variant, control, stress, timeline and stage-probe build of every workload, and the
//! shared-memory poison kernel, compiles for sm_80 and sm_90.
//! Needs NVRTC (a CUDA toolkit, CUDA_HOME for headers), so it is ignored by default:
//! `cargo test --test kernels_compile -- --ignored`.

use tilepipe::arch::Arch;
use tilepipe::dtype::DType;
use tilepipe::gpu::cache::Cache;
use tilepipe::kernels;
use tilepipe::sass;
use tilepipe::toolchain::Toolchain;
use tilepipe::variant::{BuildConfig, Variant};

#[test]
#[ignore = "needs NVRTC and the CUDA headers"]
fn every_build_compiles_and_attests() {
    let tc = Toolchain::discover();
    let (a, b) = tilepipe::gpu::nvrtc::version().expect("NVRTC");
    let nvrtc = format!("{a}.{b}");
    for w in tilepipe::workload::all() {
        every_build_of(w, &tc, &nvrtc);
    }
}

fn every_build_of(w: &dyn tilepipe::workload::Workload, tc: &Toolchain, nvrtc: &str) {
    let all: Vec<Variant> = w.catalogue().into_iter().chain(w.controls()).collect();
    let entry = w.kernel().entry;
    for arch in ["sm_90", "sm_80"] {
        let arch: Arch = arch.parse().unwrap();
        let poison = kernels::build_poison(arch, tc, nvrtc, &Cache::disabled()).unwrap();
        assert!(!poison.cubin.is_empty());
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
                    for (v, cfg) in all
                        .iter()
                        .map(|v| (v, v.config(&cfg)))
                        .filter(|(v, cfg)| v.unsupported_on(arch.sm(), 232448, cfg).is_none())
                    {
                        let built = kernels::build(w, v, &cfg, arch, tc, nvrtc, &Cache::disabled())
                            .unwrap_or_else(|e| {
                                panic!("{} {} {dt} {hidden} {cfg:?}: {e}", w.name(), v.name)
                            });
                        assert!(!built.cubin.is_empty());
                        if cfg == v.config(&base) && tc.nvdisasm.is_some() {
                            let ev = sass::examine(&built.cubin, tc, entry, v.claim()).unwrap();
                            assert!(
                                v.claim() == tilepipe::variant::Claim::AnyAsync
                                    || ev.attestation.is_attested(),
                                "{} {dt} {arch}: {}",
                                v.name,
                                ev.attestation.label()
                            );
                            let published = sass::parse::parse(&ev.listing)
                                .iter()
                                .find(|f| f.name == entry)
                                .and_then(sass::protocol::init_published);
                            assert!(
                                published.is_none_or(|p| p.is_ok()),
                                "{} {dt} {arch}: mbarrier init not published",
                                v.name
                            );
                        }
                    }
                }
            }
        }
    }
}
