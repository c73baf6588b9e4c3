//! The CUDA sources (embedded) and their compilation for one variant: options, cache, NVRTC.

use crate::Result;
use crate::arch::Arch;
use crate::gpu::{cache, nvrtc};
use crate::toolchain::Toolchain;
use crate::variant::{BuildConfig, Variant};
use serde::{Deserialize, Serialize};

pub const PTX_HEADER: (&str, &str) = ("ptx.cuh", include_str!("../kernels/ptx.cuh"));
pub const RMSNORM_SOURCE: &str = include_str!("../kernels/rmsnorm.cu");
pub const KERNEL_NAME: &str = "tilepipe_rmsnorm";

/// Options for one build: a real architecture (a cubin, never PTX only), C++17, line info for
/// annotated SASS, the toolkit's include folders, then the variant's -D selections.
pub fn options(variant: &Variant, cfg: &BuildConfig, arch: Arch, tc: &Toolchain) -> Vec<String> {
    let mut o = vec![
        format!("--gpu-architecture={arch}"),
        "-std=c++17".to_string(),
        "--generate-line-info".to_string(),
    ];
    o.extend(tc.include_options());
    o.extend(variant.defines(cfg));
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
}

/// Compiles a variant through the cache: a hit returns the stored cubin without invoking NVRTC.
pub fn build(
    variant: &Variant,
    cfg: &BuildConfig,
    arch: Arch,
    tc: &Toolchain,
    nvrtc_version: &str,
    cache: &cache::Cache,
) -> Result<Built> {
    let options = options(variant, cfg, arch, tc);
    let label = format!("{KERNEL_NAME} [{}]", variant.name);
    let source = (RMSNORM_SOURCE, KERNEL_NAME);
    compile_cached(source, &label, options, arch, nvrtc_version, cache)
}

pub const POISON_SOURCE: &str = include_str!("../kernels/poison.cu");
pub const POISON_KERNEL: &str = "tilepipe_smem_poison";

/// The shared-memory poison kernel, through the cache like every variant.
pub fn build_poison(
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
    let source = (POISON_SOURCE, POISON_KERNEL);
    compile_cached(source, POISON_KERNEL, options, arch, nvrtc_version, cache)
}

/// NVRTC on (source text, kernel name) through the on-disk cache keyed by (source, header,
/// options, arch, NVRTC version); a compile error names `label`.
fn compile_cached(
    (source, kernel): (&str, &str),
    label: &str,
    options: Vec<String>,
    arch: Arch,
    nvrtc_version: &str,
    cache: &cache::Cache,
) -> Result<Built> {
    let key = cache::key(
        source,
        &[PTX_HEADER],
        &options,
        &arch.to_string(),
        nvrtc_version,
    );
    if let Some(cubin) = cache.get(&key) {
        return Ok(Built {
            cubin,
            cache_hit: true,
            options,
            log: String::new(),
        });
    }
    let out = nvrtc::compile(source, &[PTX_HEADER], kernel, &options).map_err(|e| match e {
        crate::Error::Compile {
            arch, options, log, ..
        } => crate::Error::Compile {
            kernel: label.to_string(),
            arch,
            options,
            log,
        },
        other => other,
    })?;
    cache.put(&key, &out.cubin)?;
    Ok(Built {
        cubin: out.cubin,
        cache_hit: false,
        options,
        log: out.log,
    })
}
