//! `tilepipe inspect` on kernels written for the tests (tests/fixtures/inspect/*.cu), compiled by
//! NVRTC for sm_80, sm_90 and sm_90a: claims that hold and claims that must fail, protocols that
//! are broken and their correct versions; a cubin saved from cpasync.cu (NVRTC 13.5, sm_80, line
//! info) read without NVRTC; and, when TILEPIPE_INSPECT_BINARY names one, a library built by
//! someone else. Needs NVRTC, the CUDA headers, nvdisasm and cuobjdump (CUDA_HOME); without them
//! at build time each test is ignored with the reason (build.rs), unless TILEPIPE_REQUIRE_NVRTC is
//! set (CI), where it fails.

use std::path::{Path, PathBuf};
use tilepipe::inspect::checks::{Check, Status};
use tilepipe::inspect::claims::Claim;
use tilepipe::inspect::input::Kind;
use tilepipe::inspect::usage::Launch;
use tilepipe::inspect::{Exit, FailOn};
use tilepipe::inspect::{KernelReport, Report, Request};
use tilepipe::progress::Progress;
use tilepipe::toolchain::Toolchain;

/// The toolchain. Each test is ignored, with the reason, where build.rs did not find what it
/// needs; here it was found, so a tool missing now fails the test.
fn tools(needs_nvrtc: bool) -> Toolchain {
    let tc = Toolchain::discover();
    let mut missing = Vec::new();
    if tc.nvdisasm.is_none() || tc.cuobjdump.is_none() {
        missing.push("nvdisasm and cuobjdump".to_string());
    }
    if needs_nvrtc {
        if let Err(e) = tilepipe::gpu::nvrtc::version() {
            missing.push(e.to_string());
        }
        if tc.include_dirs.is_empty() {
            missing.push("the CUDA headers (set CUDA_HOME)".into());
        }
    }
    assert!(
        missing.is_empty(),
        "found at build time (or TILEPIPE_REQUIRE_NVRTC is set), missing now: {}",
        missing.join("; ")
    );
    tc
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/inspect")
        .join(name)
}

fn inspect(req: &Request, tc: &Toolchain) -> tilepipe::Result<Report> {
    tilepipe::inspect::inspect(req, tc, &Progress::silent())
}

fn run(tc: &Toolchain, file: &str, arch: &str, edit: impl FnOnce(&mut Request)) -> Report {
    let mut req = Request {
        path: fixture(file),
        target: Some(arch.parse().unwrap()),
        ..Request::default()
    };
    edit(&mut req);
    inspect(&req, tc).unwrap_or_else(|e| panic!("{file} for {arch}: {e}"))
}

fn kernel<'a>(r: &'a Report, name: &str) -> &'a KernelReport {
    r.kernels
        .iter()
        .find(|k| k.name == name || k.display_name == name)
        .unwrap_or_else(|| panic!("{name} is not in {}", r.input))
}

fn check<'a>(k: &'a KernelReport, name: &str) -> &'a Check {
    k.checks.iter().find(|c| c.name == name).unwrap()
}

/// The check found a hazard and says `text` about it.
fn hazard(c: &Check, text: &str) {
    assert_eq!(c.status, Status::Hazard, "{}", c.detail);
    assert!(c.detail.contains(text), "{}", c.detail);
}

/// The one claim a kernel makes, as (attested, emitted).
fn only_claim(k: &KernelReport) -> (bool, &str) {
    assert_eq!(k.claims.len(), 1, "{}: {:?}", k.name, k.claims);
    (k.claims[0].attested(), &k.claims[0].emitted)
}

/// The 1-based line of the fixture that contains `text`.
fn line_of(file: &str, text: &str) -> usize {
    let src = std::fs::read_to_string(fixture(file)).unwrap();
    1 + src.lines().position(|l| l.contains(text)).unwrap()
}

const CP: &str = "cp.async commit/wait";
const MBAR: &str = "mbarrier init published";
const FENCE: &str = "fence.proxy.async";

fn cp_async_verdicts(r: &Report) {
    let k = kernel(r, "copy_cpasync16");
    assert_eq!(k.claims[0].stated.claim, Claim::Cpasync { bytes: Some(16) });
    assert!(only_claim(k).0, "{:?}", k.claims);
    assert!(k.movement.contains("cp.async 16 B .cg"), "{}", k.movement);
    assert_eq!(check(k, CP).status, Status::Holds);
    // the name claims an asynchronous copy; the SASS is a load and a store through registers
    let k = kernel(r, "copyAsyncLargeChunk");
    let (attested, emitted) = only_claim(k);
    assert!(!attested);
    assert!(
        emitted.starts_with("synchronous: global loads into registers (LDG 16 B)"),
        "{emitted}"
    );
    assert!(k.claims[0].stated.from.contains("copyAsyncLargeChunk"));
    hazard(
        check(kernel(r, "cpasync_no_wait"), CP),
        "no wait_group (DEPBAR) at all",
    );
    hazard(
        check(kernel(r, "cpasync_wait_short"), CP),
        "(wait_group 1) leaves all 1 committed group(s) in flight",
    );
    assert_eq!(
        check(kernel(r, "cpasync_two_stage"), CP).status,
        Status::Holds
    );
    assert_eq!(r.kernels.iter().map(|k| k.hazards()).sum::<usize>(), 2);
    assert_eq!(r.outcome(FailOn::Both), Exit::Failed);
}

#[test]
#[cfg_attr(
    not(all(nvrtc_found, disassemblers_found)),
    ignore = "NVRTC, the CUDA headers, nvdisasm or cuobjdump not found at build time; .ci/run installs them"
)]
fn cp_async_claims_and_commit_wait_pairing() {
    let tc = tools(true);
    let r = run(&tc, "cpasync.cu", "sm_80", |_| {});
    assert_eq!(r.kind, Kind::Source);
    cp_async_verdicts(&r);
    // the hazard names the read's source line: the kernel's call of the template, then the read
    let call = line_of("cpasync.cu", "cpasync_no_wait(");
    let read = line_of("cpasync.cu", "out[blockIdx.x * 256 + t] = tile[255 - t];");
    let c = check(kernel(&r, "cpasync_no_wait"), CP);
    let site = c.findings[0]
        .sites
        .iter()
        .find(|s| s.role == "read")
        .unwrap();
    let at = site.source.as_deref().unwrap();
    let want = format!("cpasync.cu:{call} (inlined tests/fixtures/inspect/cpasync.cu:{read})");
    assert!(at.ends_with(&want), "{at} does not end with {want}");
    // a claim given on the command line replaces those read from the name
    let r = run(&tc, "cpasync.cu", "sm_80", |q| {
        q.claim = Some(Claim::Tma);
        q.kernel = Some("copy_cpasync16".into());
    });
    assert_eq!(r.kernels.len(), 1);
    let (attested, emitted) = only_claim(&r.kernels[0]);
    assert!(
        !attested && emitted.contains("LDGSTS.E.BYPASS.128"),
        "{emitted}"
    );
    assert_eq!(r.kernels[0].claims[0].stated.from, "--claim");
}

#[test]
#[cfg_attr(
    not(all(nvrtc_found, disassemblers_found)),
    ignore = "NVRTC, the CUDA headers, nvdisasm or cuobjdump not found at build time; .ci/run installs them"
)]
fn memcpy_async_is_read_from_the_source_and_judged_by_the_sass() {
    let tc = tools(true);
    let r = run(&tc, "memcpy_async.cu", "sm_80", |_| {});
    let k = kernel(&r, "stage_rows");
    assert_eq!(k.name, "_Z10stage_rowsPKtPti");
    let (attested, emitted) = only_claim(k);
    assert!(
        !attested,
        "element-aligned memcpy_async lowered to cp.async: {emitted}"
    );
    assert!(
        emitted.contains("LDG 2 B") && emitted.contains("STS.U16"),
        "{emitted}"
    );
    let call = line_of("memcpy_async.cu", "sizeof(u16) * n, pipe);");
    assert!(
        k.claims[0]
            .stated
            .from
            .ends_with(&format!("memcpy_async.cu:{call}: memcpy_async")),
        "{}",
        k.claims[0].stated.from
    );
    let k = kernel(&r, "stage_rows_aligned");
    assert!(only_claim(k).0, "{:?}", k.claims);
    assert!(k.movement.contains("LDGSTS.E.BYPASS.128"));
    // completion through the pipeline's mbarrier, not commit groups
    assert_eq!(check(k, CP).status, Status::NotApplicable);
    assert!(check(k, CP).detail.contains("ARRIVES.LDGSTSBAR"));
}

#[test]
#[cfg_attr(
    not(all(nvrtc_found, disassemblers_found)),
    ignore = "NVRTC, the CUDA headers, nvdisasm or cuobjdump not found at build time; .ci/run installs them"
)]
fn hopper_copies_mbarrier_publication_and_proxy_fences() {
    let tc = tools(true);
    let r = run(&tc, "hopper.cu", "sm_90", |_| {});
    for (name, claim) in [("bulk_copy", Claim::Bulk), ("tma_load", Claim::Tma)] {
        let k = kernel(&r, name);
        assert_eq!(k.claims[0].stated.claim, claim);
        assert!(only_claim(k).0, "{name}: {:?}", k.claims);
        assert_eq!(check(k, MBAR).status, Status::Holds, "{name}");
    }
    hazard(
        check(kernel(&r, "bulk_copy_unpublished"), MBAR),
        "with no block barrier (BAR.SYNC 0x0) between them",
    );
    assert_eq!(
        check(kernel(&r, "tma_store_fenced"), FENCE).status,
        Status::Holds
    );
    hazard(check(kernel(&r, "tma_store_unfenced"), FENCE), "UTMASTG");
    // the TMA kernel does not attest a bulk copy, nor the bulk kernel TMA
    let r = run(&tc, "hopper.cu", "sm_90", |q| q.claim = Some(Claim::Bulk));
    assert!(!only_claim(kernel(&r, "tma_load")).0);
    assert!(only_claim(kernel(&r, "bulk_copy")).0);
}

#[test]
#[cfg_attr(
    not(all(nvrtc_found, disassemblers_found)),
    ignore = "NVRTC, the CUDA headers, nvdisasm or cuobjdump not found at build time; .ci/run installs them"
)]
fn tensor_core_claims() {
    let tc = tools(true);
    let r = run(&tc, "mma.cu", "sm_80", |_| {});
    let k = kernel(&r, "mma_tile");
    let (attested, emitted) = only_claim(k);
    assert!(attested && emitted.contains("HMMA.16816.F32"), "{emitted}");
    let r = run(&tc, "mma.cu", "sm_80", |q| q.claim = Some(Claim::Wgmma));
    assert!(!only_claim(kernel(&r, "mma_tile")).0);
    let r = run(&tc, "wgmma.cu", "sm_90a", |_| {});
    assert_eq!(r.kernels[0].arch.as_deref(), Some("sm_90a"));
    for (name, status) in [
        ("wgmma_fenced", Status::Holds),
        // wgmma reads through a descriptor whose address the check does not decode
        ("wgmma_unfenced", Status::Undecided),
    ] {
        let k = kernel(&r, name);
        assert!(only_claim(k).0, "{name}: {:?}", k.claims);
        assert_eq!(
            check(k, FENCE).status,
            status,
            "{name}: {}",
            check(k, FENCE).detail
        );
    }
}

#[test]
#[cfg_attr(
    not(all(nvrtc_found, disassemblers_found)),
    ignore = "NVRTC, the CUDA headers, nvdisasm or cuobjdump not found at build time; .ci/run installs them"
)]
fn a_wgmma_that_ptxas_serialised_contradicts_the_claim() {
    let tc = tools(true);
    let r = run(&tc, "wgmma_serialised.cu", "sm_90a", |_| {});
    let (attested, emitted) = only_claim(kernel(&r, "wgmma_pipelined"));
    assert!(attested, "{emitted}");
    let (attested, emitted) = only_claim(kernel(&r, "wgmma_serialised"));
    assert!(!attested, "{emitted}");
    assert!(
        emitted.contains("HGMMA.64x256x16")
            && emitted.contains("serialised by ptxas")
            && emitted.contains("C7512"),
        "{emitted}"
    );
}

#[test]
#[cfg_attr(
    not(all(nvrtc_found, disassemblers_found)),
    ignore = "NVRTC, the CUDA headers, nvdisasm or cuobjdump not found at build time; .ci/run installs them"
)]
fn occupancy_of_a_launch_shape_on_the_architecture() {
    let tc = tools(true);
    let launch = |threads, dynamic_smem| {
        Some(Launch {
            threads,
            dynamic_smem,
        })
    };
    let r = run(&tc, "cpasync.cu", "sm_80", |q| {
        q.kernel = Some("cpasync_two_stage".into());
        q.launch = launch(256, 64 * 1024);
    });
    let res = &r.kernels[0].resources;
    let u = res.usage.expect("cuobjdump -res-usage");
    assert_eq!(u.static_smem, 8192);
    let o = res.occupancy.unwrap();
    // 8192 + 65536 + 1024 reserved per block: 167936 / 74752 = 2 on sm_80
    assert_eq!((o.blocks_per_sm, o.limiter.name()), (2, "shared memory"));
    // the same kernel compiled for sm_86 fits only one block of that size
    let r = run(&tc, "cpasync.cu", "sm_86", |q| {
        q.kernel = Some("cpasync_two_stage".into());
        q.launch = launch(256, 64 * 1024);
    });
    assert_eq!(r.kernels[0].resources.occupancy.unwrap().blocks_per_sm, 1);
}

#[test]
#[cfg_attr(
    not(all(nvrtc_found, disassemblers_found)),
    ignore = "NVRTC, the CUDA headers, nvdisasm or cuobjdump not found at build time; .ci/run installs them"
)]
fn defines_and_include_folders_reach_nvrtc_and_compile_errors_carry_the_log() {
    let tc = tools(true);
    let dir = tempfile::tempdir().unwrap();
    let inc = dir.path().join("inc");
    std::fs::create_dir(&inc).unwrap();
    std::fs::write(inc.join("width.cuh"), "#define COPY_BYTES WIDTH\n").unwrap();
    let cu = dir.path().join("k.cu");
    std::fs::write(
        &cu,
        "#include \"width.cuh\"\n#ifndef WIDTH\n#error WIDTH is not defined\n#endif\n\
         extern \"C\" __global__ void k(float4* o) {\n\
           __shared__ float4 s[32];\n\
           asm volatile(\"cp.async.ca.shared.global [%0], [%1], %2;\" :: \"r\"((unsigned)__cvta_generic_to_shared(&s[threadIdx.x])), \"l\"(o + threadIdx.x), \"n\"(COPY_BYTES));\n\
           asm volatile(\"cp.async.wait_all;\");\n\
           __syncthreads();\n\
           o[threadIdx.x] = s[31 - threadIdx.x];\n\
         }\n",
    )
    .unwrap();
    let mut req = Request {
        path: cu.clone(),
        target: Some("sm_80".parse().unwrap()),
        defines: vec!["WIDTH=8".into()],
        includes: vec![inc],
        claim: Some(Claim::Cpasync { bytes: Some(8) }),
        ..Request::default()
    };
    let r = inspect(&req, &tc).unwrap();
    assert!(only_claim(&r.kernels[0]).0, "{:?}", r.kernels[0].claims);
    // cp.async.wait_all commits and waits
    assert_eq!(check(&r.kernels[0], CP).status, Status::Holds);
    req.defines.clear();
    let e = inspect(&req, &tc).unwrap_err().to_string();
    assert!(e.contains("WIDTH is not defined"), "{e}");
}

#[test]
#[cfg_attr(
    not(disassemblers_found),
    ignore = "nvdisasm or cuobjdump not found at build time; .ci/run installs them"
)]
fn a_saved_cubin_is_read_without_nvrtc() {
    let tc = tools(false);
    let r = run(&tc, "cpasync.sm_80.cubin", "sm_80", |_| {});
    assert_eq!(r.kind, Kind::Cubin);
    assert!(r.compiled.is_none());
    cp_async_verdicts(&r);
    assert!(r.kernels.iter().all(|k| k.resources.usage.is_some()));
    let req = Request {
        path: fixture("cpasync.sm_80.cubin"),
        target: Some("sm_90".parse().unwrap()),
        ..Request::default()
    };
    let e = inspect(&req, &tc).unwrap_err().to_string();
    assert!(e.contains("is a cubin for sm_80, not sm_90"), "{e}");
}

#[test]
#[cfg_attr(
    not(all(disassemblers_found, cudart_found)),
    ignore = "nvdisasm, cuobjdump or libcudart.so.13 beside the CUDA headers not found at build time; .ci/run installs them"
)]
fn a_library_without_device_code_is_refused() {
    let tc = tools(false);
    let cudart = tc
        .include_dirs
        .first()
        .and_then(|i| i.parent())
        .map(|root| root.join("lib/libcudart.so.13"))
        .filter(|p| p.is_file())
        .expect("libcudart.so.13 beside the CUDA headers, as at build time");
    let req = Request {
        path: cudart,
        ..Request::default()
    };
    let e = inspect(&req, &tc).unwrap_err().to_string();
    assert!(e.contains("holds no device code"), "{e}");
}

/// TILEPIPE_INSPECT_BINARY: an executable or library with device code built by someone else
/// (checked by hand with NVIDIA's libnvjpeg.so.13 from the nvidia-nvjpeg wheel).
#[test]
#[cfg_attr(
    not(all(disassemblers_found, inspect_binary_given)),
    ignore = "TILEPIPE_INSPECT_BINARY was not set at build time (a binary with device code), or nvdisasm or cuobjdump not found"
)]
fn a_binary_built_by_someone_else() {
    let path = std::env::var_os("TILEPIPE_INSPECT_BINARY")
        .expect("TILEPIPE_INSPECT_BINARY, set at build time, is set now");
    let tc = tools(false);
    let req = Request {
        path: PathBuf::from(path),
        target: Some("sm_90".parse().unwrap()),
        claim: Some(Claim::Sync),
        ..Request::default()
    };
    let r = inspect(&req, &tc).unwrap();
    assert_eq!(r.kind, Kind::HostBinary);
    assert!(!r.kernels.is_empty());
    for k in &r.kernels {
        assert_eq!(k.arch.as_deref(), Some("sm_90"));
        // the verdict follows the census: a synchronous copy is LDG + STS and no async copy
        let get = |b: &str| -> u32 {
            k.movement_census
                .iter()
                .filter(|(f, _)| f.split('.').next() == Some(b))
                .map(|(_, n)| n)
                .sum()
        };
        let asynchronous = ["LDGSTS", "UBLKCP", "UTMALDG", "UTMASTG"]
            .iter()
            .map(|b| get(b))
            .sum::<u32>();
        let sync = asynchronous == 0 && get("LDG") > 0 && get("STS") > 0;
        assert_eq!(k.claims[0].attested(), sync, "{}", k.name);
        assert!(k.resources.usage.is_some(), "{}", k.name);
    }
    eprintln!("{}: {} kernels for sm_90", r.input, r.kernels.len());
}

/// Cubins from sgl-kernel's wheel (tests/fixtures/inspect/vendor): correct vendor kernels the
/// checks must not flag, and whose census is nvdisasm's.
#[test]
#[cfg_attr(
    not(disassemblers_found),
    ignore = "nvdisasm or cuobjdump not found at build time; .ci/run installs them"
)]
fn vendor_cubins_hold() {
    let tc = tools(false);
    let r = run(
        &tc,
        "vendor/sgl-kernel-awq-repack.sm_80.cubin",
        "sm_80",
        |_| {},
    );
    assert_eq!(r.kernels.len(), 2);
    for k in &r.kernels {
        assert!(
            k.display_name
                .starts_with("marlin::awq_marlin_repack_kernel")
        );
        assert_eq!(k.movement_census.get("LDGSTS.E.BYPASS.128"), Some(&15));
        assert_eq!(
            check(k, CP).status,
            Status::Holds,
            "{}",
            check(k, CP).detail
        );
    }
    let r = run(
        &tc,
        "vendor/sgl-kernel-mxfp8-quant.sm_100a.cubin",
        "sm_100a",
        |_| {},
    );
    assert_eq!(r.kernels.len(), 2);
    for k in &r.kernels {
        assert_eq!(k.copies(), ["bulk"]);
        assert_eq!(
            check(k, FENCE).status,
            Status::Holds,
            "{}",
            check(k, FENCE).detail
        );
    }
    assert_eq!(r.outcome(FailOn::Hazards), Exit::Clean);
}
