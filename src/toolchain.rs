//! Where the CUDA toolkit's headers and tools are: CUDA_HOME, CUDA_PATH, then /usr/local/cuda,
//! then PATH for the tools.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Toolchain {
    /// Folders NVRTC gets as -I: the toolkit's include/ and, where CCCL lives apart (CUDA 13),
    /// include/cccl.
    pub include_dirs: Vec<PathBuf>,
    pub nvdisasm: Option<PathBuf>,
    pub cuobjdump: Option<PathBuf>,
    pub compute_sanitizer: Option<PathBuf>,
}

fn roots() -> Vec<PathBuf> {
    let mut r: Vec<PathBuf> = ["CUDA_HOME", "CUDA_PATH"]
        .iter()
        .filter_map(std::env::var_os)
        .map(PathBuf::from)
        .collect();
    r.push(PathBuf::from("/usr/local/cuda"));
    r
}

fn find_tool(name: &str, roots: &[PathBuf]) -> Option<PathBuf> {
    roots
        .iter()
        .map(|r| r.join("bin").join(name))
        .chain(
            std::env::var_os("PATH")
                .iter()
                .flat_map(std::env::split_paths)
                .map(|p| p.join(name)),
        )
        .find(|p| p.is_file())
}

impl Toolchain {
    pub fn discover() -> Toolchain {
        let roots = roots();
        let include_dirs = roots
            .iter()
            .map(|r| r.join("include"))
            .find(|inc| inc.join("cuda_fp16.h").is_file())
            .map(|inc| {
                let cccl = inc.join("cccl");
                if cccl.join("cuda").join("pipeline").is_file() {
                    vec![inc, cccl]
                } else {
                    vec![inc]
                }
            })
            .unwrap_or_default();
        Toolchain {
            include_dirs,
            nvdisasm: find_tool("nvdisasm", &roots),
            cuobjdump: find_tool("cuobjdump", &roots),
            compute_sanitizer: find_tool("compute-sanitizer", &roots),
        }
    }

    /// A short account for the report and error messages.
    pub fn describe(&self) -> String {
        let show = |p: &Option<PathBuf>| {
            p.as_deref()
                .map_or("not found".to_string(), |p| p.display().to_string())
        };
        format!(
            "headers: {}; nvdisasm: {}; cuobjdump: {}; compute-sanitizer: {}",
            if self.include_dirs.is_empty() {
                "not found (set CUDA_HOME)".to_string()
            } else {
                self.include_dirs
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            },
            show(&self.nvdisasm),
            show(&self.cuobjdump),
            show(&self.compute_sanitizer)
        )
    }

    pub fn include_options(&self) -> Vec<String> {
        self.include_dirs
            .iter()
            .map(|d| format!("-I{}", d.display()))
            .collect()
    }
}
