//! Every GEMM variant and control compiles for sm_90 in each precision and layout (the catalogue
//! for sm_80 too), as do the stressed builds and the narrower copies odd rows need; each clean build
//! shows in its SASS the movement it claims and the math its precision claims (HMMA + LDSM, HGMMA
//! on Hopper tiles, or FFMA), and no wgmma build is serialised by ptxas or spills after handing
//! registers over. Needs NVRTC and the CUDA headers; skipped with the reason without them, unless
//! TILEPIPE_REQUIRE_NVRTC is set (CI).

mod common;

use rayon::prelude::*;
use tilepipe::arch::Arch;
use tilepipe::dtype::DType;
use tilepipe::evidence::sass;
use tilepipe::evidence::sass::ptxas::wgmma_serialised;
use tilepipe::gpu::cache::Cache;
use tilepipe::kernels;
use tilepipe::workload::gemm::catalogue::GemmVariant;
use tilepipe::workload::gemm::evidence::math_attestation;
use tilepipe::workload::gemm::{KERNEL, Layout, Problem};

#[test]
fn every_gemm_build_compiles_and_attests() {
    let Some((tc, nvrtc)) = common::nvrtc() else {
        return;
    };
    let (sm90, sm80): (Arch, Arch) = ("sm_90".parse().unwrap(), "sm_80".parse().unwrap());
    let mut jobs: Vec<(GemmVariant, Problem, u32, Arch)> = Vec::new();
    for dt in DType::ALL {
        for layout in [Layout::Kn, Layout::Nk] {
            let p = Problem::new(256, 256, 256, layout, dt).unwrap();
            for v in GemmVariant::catalogue(dt) {
                jobs.push((v.clone(), p, 0, sm90));
                // odd K: the widest copy the rows allow
                let odd = Problem::new(64, 64, 1001, layout, dt).unwrap();
                let f = v.fit(&odd);
                if f != v && f.can_implement(&odd).is_ok() {
                    jobs.push((f, odd, 0, sm90));
                }
            }
            if layout == Layout::Kn {
                jobs.extend(
                    GemmVariant::controls(dt)
                        .into_iter()
                        .map(|v| (v, p, 0, sm90)),
                );
                let base = GemmVariant::catalogue(dt).remove(0);
                jobs.push((base, p, 3, sm90));
            } else {
                jobs.extend(
                    GemmVariant::catalogue(dt)
                        .into_iter()
                        .filter(|v| v.tile.wgmma)
                        .map(|v| (v, p, 3, sm90)),
                );
            }
            if (dt == DType::F32) == (layout == Layout::Kn) {
                jobs.extend(
                    GemmVariant::catalogue(dt)
                        .into_iter()
                        .filter(|v| !v.tile.wgmma)
                        .map(|v| (v, p, 0, sm80)),
                );
            }
        }
    }
    jobs.par_iter().for_each(|(v, p, stress, arch)| {
        let label = format!(
            "{} {} {} {arch} stress {stress}",
            v.name,
            p.dtype,
            p.layout.name()
        );
        let built = kernels::build_with(
            KERNEL,
            &label,
            v.defines(p, *stress, 0),
            (*arch, v.tile.wgmma),
            &tc,
            &nvrtc,
            &Cache::disabled(),
        )
        .unwrap_or_else(|e| panic!("{label}: {e}"));
        if *stress == 0 && tc.nvdisasm.is_some() {
            let ev = sass::examine(&built.cubin, &tc, KERNEL.entry, v.claim()).unwrap();
            assert!(
                ev.attestation.is_attested(),
                "{label}: {}",
                ev.attestation.label()
            );
            let math = math_attestation(ev.census.as_ref(), p.dtype, v.tile.wgmma);
            assert!(math.is_attested(), "{label}: {}", math.label());
            assert_eq!(wgmma_serialised(&built.log, None), None, "{label}");
            if v.tile.wgmma && v.pipe.warp_specialized {
                let c = ev.census.as_ref().unwrap();
                assert_eq!(c.count("USETMAXREG"), 2, "{label}: registers handed over");
                assert_eq!(c.count("STL"), 0, "{label}: no spills");
            }
        }
    });
    eprintln!("gemm: {} builds compiled", jobs.len());
}
