//! Names the commit the binary is built from (`TILEPIPE_VERSION`, "0.1.0 (930eb83)": build/commit.rs),
//! and says which of the tools some tests need can be found, so that a test that cannot
//! run here is ignored with the reason in `cargo test`'s own summary rather than passing quietly:
//! NVRTC and the CUDA headers (`nvrtc_found`: CUDA_HOME, CUDA_PATH, /usr/local/cuda,
//! LD_LIBRARY_PATH, as `Toolchain::discover` and the NVRTC loader look), nvdisasm and cuobjdump
//! (`disassemblers_found`: those roots' bin/ and PATH), the CUDA runtime library beside the
//! headers (`cudart_found`: a library without device code), Chromium (`chromium_found`: PATH and
//! /usr/bin) and a binary of someone else's to inspect (`inspect_binary_given`:
//! TILEPIPE_INSPECT_BINARY). TILEPIPE_REQUIRE_NVRTC and TILEPIPE_REQUIRE_BROWSER (CI) keep their
//! tests in, where a missing tool fails them.

#[path = "build/commit.rs"]
mod commit;

use std::path::PathBuf;

fn main() {
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    println!(
        "cargo::rustc-env=TILEPIPE_VERSION={} ({})",
        env!("CARGO_PKG_VERSION"),
        commit::describe(&root)
    );
    for path in commit::SOURCES
        .map(PathBuf::from)
        .into_iter()
        .chain(commit::git_files(&root))
    {
        println!("cargo::rerun-if-changed={}", path.display());
    }
    for var in [
        "CUDA_HOME",
        "CUDA_PATH",
        "LD_LIBRARY_PATH",
        "PATH",
        "TILEPIPE_REQUIRE_NVRTC",
        "TILEPIPE_REQUIRE_BROWSER",
        "TILEPIPE_INSPECT_BINARY",
    ] {
        println!("cargo::rerun-if-env-changed={var}");
    }
    for cfg in [
        "nvrtc_found",
        "disassemblers_found",
        "cudart_found",
        "chromium_found",
        "inspect_binary_given",
    ] {
        println!("cargo::rustc-check-cfg=cfg({cfg})");
    }
    let required = |var: &str| std::env::var_os(var).is_some();
    let roots: Vec<PathBuf> = ["CUDA_HOME", "CUDA_PATH"]
        .iter()
        .filter_map(std::env::var_os)
        .map(PathBuf::from)
        .chain([PathBuf::from("/usr/local/cuda")])
        .collect();
    let headers = roots.iter().any(|r| r.join("include/cuda.h").is_file());
    let lib_dirs = roots
        .iter()
        .flat_map(|r| [r.join("lib"), r.join("lib64")])
        .chain(
            std::env::var_os("LD_LIBRARY_PATH")
                .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
                .unwrap_or_default(),
        );
    let nvrtc = lib_dirs.into_iter().any(|d| {
        std::fs::read_dir(d).is_ok_and(|entries| {
            entries
                .flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with("libnvrtc.so"))
        })
    });
    if (headers && nvrtc) || required("TILEPIPE_REQUIRE_NVRTC") {
        println!("cargo::rustc-cfg=nvrtc_found");
    }
    let cudart = roots.iter().any(|r| {
        r.join("include/cuda_fp16.h").is_file() && r.join("lib/libcudart.so.13").is_file()
    });
    if cudart || required("TILEPIPE_REQUIRE_NVRTC") {
        println!("cargo::rustc-cfg=cudart_found");
    }
    if required("TILEPIPE_INSPECT_BINARY") {
        println!("cargo::rustc-cfg=inspect_binary_given");
    }
    let path: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    let on = |dirs: &[PathBuf], names: &[&str]| {
        dirs.iter()
            .any(|d| names.iter().any(|n| d.join(n).is_file()))
    };
    let bins: Vec<PathBuf> = roots
        .iter()
        .map(|r| r.join("bin"))
        .chain(path.clone())
        .collect();
    if (on(&bins, &["nvdisasm"]) && on(&bins, &["cuobjdump"])) || required("TILEPIPE_REQUIRE_NVRTC")
    {
        println!("cargo::rustc-cfg=disassemblers_found");
    }
    let browsers: Vec<PathBuf> = path
        .into_iter()
        .chain([PathBuf::from("/usr/bin")])
        .collect();
    if on(&browsers, &["chromium", "chromium-browser"]) || required("TILEPIPE_REQUIRE_BROWSER") {
        println!("cargo::rustc-cfg=chromium_found");
    }
}
