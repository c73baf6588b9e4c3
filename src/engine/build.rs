//! The CUDA sources (embedded) and their compilation for one variant of one workload: options,
//! cache, NVRTC. Every kernel sees the same headers, by the names its #include lines use.

use crate::Result;
use crate::arch::Arch;
use crate::gpu::{cache, nvrtc};
use crate::pipeline::{Instrument, Variant};
use crate::toolchain::Toolchain;
use crate::workload::{KernelSource, Workload};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The PTX wrappers, the hooks and element types every kernel shares, the protocol monitor, the
/// row-tile producer with its aligned windows and split stores, and one pipeline template per
/// mechanism.
pub const HEADERS: [(&str, &str); 13] = [
    (
        "common/ptx.cuh",
        include_str!("../../kernels/common/ptx.cuh"),
    ),
    (
        "common/hooks.cuh",
        include_str!("../../kernels/common/hooks.cuh"),
    ),
    (
        "common/monitor.cuh",
        include_str!("../../kernels/common/monitor.cuh"),
    ),
    (
        "common/body_ops.cuh",
        include_str!("../../kernels/common/body_ops.cuh"),
    ),
    (
        "common/elem.cuh",
        include_str!("../../kernels/common/elem.cuh"),
    ),
    (
        "common/align.cuh",
        include_str!("../../kernels/common/align.cuh"),
    ),
    (
        "common/rows.cuh",
        include_str!("../../kernels/common/rows.cuh"),
    ),
    (
        "pipeline/pipeline.cuh",
        include_str!("../../kernels/pipeline/pipeline.cuh"),
    ),
    (
        "pipeline/staged.cuh",
        include_str!("../../kernels/pipeline/staged.cuh"),
    ),
    (
        "pipeline/cpasync.cuh",
        include_str!("../../kernels/pipeline/cpasync.cuh"),
    ),
    (
        "pipeline/memcpy_async.cuh",
        include_str!("../../kernels/pipeline/memcpy_async.cuh"),
    ),
    (
        "pipeline/ring.cuh",
        include_str!("../../kernels/pipeline/ring.cuh"),
    ),
    (
        "pipeline/direct.cuh",
        include_str!("../../kernels/pipeline/direct.cuh"),
    ),
];

/// TILEPIPE_KERNELS=DIR: a folder laid out as kernels/ whose files replace the embedded sources,
/// so that a deliberately broken kernel (a wait one group short, a missing barrier) can be put
/// through `check` and `run` to see that they catch it. Runs say when it is set.
pub const SOURCE_DIR_ENV: &str = "TILEPIPE_KERNELS";

/// The folder TILEPIPE_KERNELS names, if set and not empty.
pub fn source_dir() -> Option<PathBuf> {
    std::env::var_os(SOURCE_DIR_ENV)
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
}

/// The kernel's text, the shared headers and its own, embedded or read from `dir`.
fn sources(k: KernelSource, dir: Option<&Path>) -> Result<(String, Vec<(&'static str, String)>)> {
    let read = |name: &str, embedded: &str| match dir {
        None => Ok(embedded.to_string()),
        Some(d) => {
            let path = d.join(name);
            std::fs::read_to_string(&path).map_err(|e| crate::Error::io(&path, e))
        }
    };
    let text = read(k.file, k.text)?;
    let headers = HEADERS
        .iter()
        .chain(k.headers)
        .map(|&(name, embedded)| Ok((name, read(name, embedded)?)))
        .collect::<Result<Vec<_>>>()?;
    Ok((text, headers))
}

/// The options every build takes, for a named target: "sm_90", or "sm_90a" where the kernel uses
/// instructions of that architecture alone (wgmma, setmaxnreg).
fn target_options(target: &str, tc: &Toolchain) -> Vec<String> {
    let mut o = vec![
        format!("--gpu-architecture={target}"),
        "-std=c++17".to_string(),
        "--generate-line-info".to_string(),
    ];
    o.extend(tc.include_options());
    o
}

/// Options for one build: a real architecture (a cubin, never PTX only; sm_90a where the build
/// uses instructions of that architecture alone), C++17, line info for annotated SASS, the
/// toolkit's include folders, then the variant's and the workload's -D selections.
pub fn options<W: Workload>(
    w: &W,
    v: &Variant<W::Shape>,
    p: &W::Problem,
    instrument: Instrument,
    arch: Arch,
    tc: &Toolchain,
) -> Vec<String> {
    let b = w.build(v, p, instrument);
    let target = format!("{arch}{}", if b.arch_specific { "a" } else { "" });
    let mut o = target_options(&target, tc);
    o.extend(b.defines);
    o
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Built {
    #[serde(skip)]
    pub cubin: Vec<u8>,
    pub cache_hit: bool,
    pub options: Vec<String>,
    /// NVRTC's warnings, if any.
    pub log: String,
    /// What went wrong with the cache (an entry rejected, a cubin not stored): the build itself
    /// stands, the caller reports these.
    #[serde(skip)]
    pub cache_warnings: Vec<String>,
}

/// Compiles a variant of `w` for `p` with `instrument` added, through the cache: a hit returns
/// the stored cubin without invoking NVRTC.
pub fn build<W: Workload>(
    w: &W,
    v: &Variant<W::Shape>,
    p: &W::Problem,
    instrument: Instrument,
    (arch, tc): (Arch, &Toolchain),
    nvrtc_version: &str,
    cache: &cache::Cache,
) -> Result<Built> {
    let options = options(w, v, p, instrument, arch, tc);
    let k = w.kernel();
    let label = format!("{} [{}]", k.entry, v.name);
    compile_cached(k, &label, options, arch, nvrtc_version, cache)
}

/// NVRTC's log with a line that names the fix where the cause is the setup, not the source: no
/// CUDA headers found, or an NVRTC too new for the architecture.
fn with_hints(mut log: String, options: &str) -> String {
    let no_includes = !options.split(' ').any(|o| o.starts_with("-I"));
    if log.contains("open source file") || no_includes {
        log.push_str(
            "\nhint: the CUDA headers were not found: set CUDA_HOME to a CUDA toolkit (or the nvidia-cuda-runtime/-cccl wheels)",
        );
    }
    if log.contains("invalid value for --gpu-architecture") {
        log.push_str(
            "\nhint: this NVRTC does not compile for that architecture (CUDA 13 starts at sm_75; sm_70 needs a CUDA 12 NVRTC)",
        );
    }
    log
}

pub const POISON: KernelSource = KernelSource {
    file: "poison.cu",
    text: include_str!("../../kernels/poison.cu"),
    entry: "tilepipe_smem_poison",
    headers: &[],
};

/// The wait a timed batch is queued behind (`Engine::hold`).
pub const HOLD: KernelSource = KernelSource {
    file: "hold.cu",
    text: include_str!("../../kernels/hold.cu"),
    entry: "tilepipe_hold",
    headers: &[],
};

/// The plain device copy measured beside cuMemcpyDtoD for the copy ceiling.
pub const PLAIN_COPY: KernelSource = KernelSource {
    file: "plain_copy.cu",
    text: include_str!("../../kernels/plain_copy.cu"),
    entry: "tilepipe_plain_copy",
    headers: &[],
};

/// A kernel of tilepipe's own machinery (the shared-memory poison, the plain copy), through the
/// cache like every variant.
pub fn build_utility(
    k: KernelSource,
    arch: Arch,
    tc: &Toolchain,
    nvrtc_version: &str,
    cache: &cache::Cache,
) -> Result<Built> {
    let mut options = vec![
        format!("--gpu-architecture={arch}"),
        "-std=c++17".to_string(),
    ];
    options.extend(tc.include_options());
    compile_cached(k, k.entry, options, arch, nvrtc_version, cache)
}

/// NVRTC on a kernel source through the on-disk cache keyed by (source, headers, options, arch,
/// NVRTC version); a compile error names `label`. The cache only ever saves time: an entry it
/// rejects is compiled afresh, and a cubin it cannot store is still used.
fn compile_cached(
    k: KernelSource,
    label: &str,
    options: Vec<String>,
    arch: Arch,
    nvrtc_version: &str,
    cache: &cache::Cache,
) -> Result<Built> {
    let (text, owned) = sources(k, source_dir().as_deref())?;
    let headers: Vec<(&str, &str)> = owned.iter().map(|(n, t)| (*n, t.as_str())).collect();
    let key = cache::key(&text, &headers, &options, &arch.to_string(), nvrtc_version);
    let found = cache.get(&key);
    let mut cache_warnings: Vec<String> = found.warning().into_iter().collect();
    if let cache::Lookup::Hit(cubin, log) = found {
        return Ok(Built {
            cubin,
            cache_hit: true,
            options,
            log,
            cache_warnings,
        });
    }
    let out = nvrtc::compile(&text, &headers, k.entry, &options).map_err(|e| match e {
        crate::Error::Compile {
            arch, options, log, ..
        } => crate::Error::Compile {
            kernel: label.to_string(),
            log: with_hints(log, &options),
            arch,
            options,
        },
        other => other,
    })?;
    if let Err(e) = cache.put(&key, &out.cubin, &out.log) {
        cache_warnings.push(format!("cubin cache: not stored: {e}"));
    }
    Ok(Built {
        cubin: out.cubin,
        cache_hit: false,
        options,
        log: out.log,
        cache_warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_folder_replaces_every_embedded_file() {
        let (text, headers) = sources(POISON, None).unwrap();
        assert_eq!(text, POISON.text);
        assert_eq!(headers.len(), HEADERS.len());
        let gemm = crate::workload::gemm::KERNEL;
        let (_, with_own) = sources(gemm, None).unwrap();
        assert_eq!(with_own.len(), HEADERS.len() + gemm.headers.len());
        assert!(with_own.iter().any(|(n, _)| *n == "gemm/wgmma.cuh"));
        let dir = tempfile::tempdir().unwrap();
        let e = sources(POISON, Some(dir.path())).unwrap_err().to_string();
        assert!(e.contains("poison.cu"), "{e}");
        std::fs::write(dir.path().join("poison.cu"), "// mutated").unwrap();
        let e = sources(POISON, Some(dir.path())).unwrap_err().to_string();
        assert!(
            e.contains("common/ptx.cuh"),
            "a missing header is named: {e}"
        );
        for (name, embedded) in HEADERS {
            let p = dir.path().join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, format!("{embedded}\n// mutated")).unwrap();
        }
        let (text, headers) = sources(POISON, Some(dir.path())).unwrap();
        assert_eq!(text, "// mutated");
        assert!(headers.iter().all(|(_, t)| t.ends_with("// mutated")));
    }

    #[test]
    fn a_setup_fault_in_the_log_gets_its_hint() {
        let missing =
            r#"common/elem.cuh(12): catastrophic error: could not open source file "cuda_bf16.h""#;
        let with = "--gpu-architecture=sm_90 -I/usr/local/cuda/include";
        assert!(with_hints(missing.into(), with).ends_with(
            "\nhint: the CUDA headers were not found: set CUDA_HOME to a CUDA toolkit (or the nvidia-cuda-runtime/-cccl wheels)"
        ));
        let bare = with_hints("error: x".into(), "--gpu-architecture=sm_90");
        assert!(bare.contains("set CUDA_HOME"), "{bare}");
        assert_eq!(with_hints("error: x".into(), with), "error: x");
        let old = with_hints(
            "nvrtc: error: invalid value for --gpu-architecture (-arch)".into(),
            with,
        );
        assert!(
            old.contains("CUDA 13 starts at sm_75") && !old.contains("CUDA_HOME"),
            "{old}"
        );
    }
}
