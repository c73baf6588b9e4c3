//! Triton's output: a cache folder (`TRITON_CACHE_DIR`, `~/.triton/cache`, torch.compile's
//! inductor cache, which nests them) or one kernel's folder, where each compiled kernel is a
//! `NAME.cubin` beside the `NAME.json` of its metadata. The metadata states what the kernel was
//! asked to be: `num_stages` (a pipeline of that many stages; 1: none) and `tensordesc_meta`
//! (tensor descriptors: TMA); the cubin says what it is.

use super::claims::{Claim, Stated};
use super::usage::Launch;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// What a Triton metadata file says that inspect reads; the other fields are left.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Meta {
    pub name: String,
    pub num_stages: u32,
    pub num_warps: u32,
    /// Dynamic shared memory the launcher asks for, bytes.
    pub shared: u32,
    #[serde(default)]
    pub num_ctas: Option<u32>,
    #[serde(default)]
    pub target: Option<MetaTarget>,
    /// One entry per host-side tensor descriptor argument (Triton 3.4 and newer).
    #[serde(default)]
    pub tensordesc_meta: Option<Vec<serde_json::Value>>,
    #[serde(default)]
    pub triton_version: Option<String>,
    /// The metadata file, relative to the folder given.
    #[serde(skip_deserializing)]
    pub file: String,
}

/// `{"backend": "cuda", "arch": 90, "warp_size": 32}`; HIP's arch is a string (`gfx942`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MetaTarget {
    pub backend: String,
    pub arch: serde_json::Value,
}

impl Meta {
    pub fn descriptors(&self) -> usize {
        self.tensordesc_meta.as_ref().map_or(0, Vec::len)
    }

    /// What the metadata claims: its stages, and TMA where it has tensor descriptors.
    pub fn claims(&self) -> Vec<Stated> {
        let from = |what: String| format!("{}: {what}", self.file);
        let mut out = vec![Stated {
            claim: Claim::Stages {
                stages: self.num_stages,
            },
            from: from(format!("num_stages={}", self.num_stages)),
            arch: None,
        }];
        if self.descriptors() > 0 {
            out.push(Stated {
                claim: Claim::Tma,
                from: from(format!("{} tensor descriptor(s)", self.descriptors())),
                arch: None,
            });
        } else if self.num_stages > 1 {
            out.push(Stated {
                claim: Claim::Async,
                from: from(format!("num_stages={}", self.num_stages)),
                arch: None,
            });
        }
        out
    }

    /// The launch Triton makes: num_warps warps and `shared` bytes of dynamic shared memory.
    pub fn launch(&self) -> Launch {
        Launch {
            threads: self.num_warps * 32,
            dynamic_smem: self.shared,
        }
    }

    /// The compute capability (90) the target names, when it is a CUDA one.
    pub fn cuda_arch(&self) -> Option<u64> {
        let t = self.target.as_ref().filter(|t| t.backend == "cuda")?;
        t.arch.as_u64()
    }
}

/// Reads one metadata file.
pub fn read_meta(path: &Path, file: String) -> Result<Meta> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let mut meta: Meta = serde_json::from_str(&text).map_err(|e| Error::Format {
        path: path.to_path_buf(),
        detail: format!(
            "not Triton kernel metadata: {e} (allowed: the NAME.json Triton writes beside NAME.cubin, with name, num_stages, num_warps and shared)"
        ),
    })?;
    meta.file = file;
    Ok(meta)
}

/// A kernel of the folder: its cubin (the path and its name relative to the folder) and its
/// metadata.
#[derive(Debug)]
pub struct Entry {
    pub name: String,
    pub cubin: PathBuf,
    pub meta: Meta,
}

/// Every kernel under `dir`, in path order: a `NAME.cubin` beside a `NAME.json` (Triton's
/// `__grp__NAME.json` lists a kernel's files and is not one).
pub fn scan(dir: &Path) -> Result<Vec<Entry>> {
    let mut cubins = Vec::new();
    let mut lone: Vec<PathBuf> = Vec::new();
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let entry = entry.map_err(|e| {
            let at = e.path().unwrap_or(dir).to_path_buf();
            Error::io(at, e.into())
        })?;
        let path = entry.path();
        let is_meta = path.extension().is_some_and(|x| x == "json")
            && !entry.file_name().to_string_lossy().starts_with("__grp__")
            && entry.file_type().is_file();
        if !is_meta {
            continue;
        }
        let cubin = path.with_extension("cubin");
        if !cubin.is_file() {
            lone.push(path.to_path_buf());
            continue;
        }
        let rel = |p: &Path| p.strip_prefix(dir).unwrap_or(p).display().to_string();
        let meta = read_meta(path, rel(path))?;
        cubins.push(Entry {
            name: rel(&cubin),
            cubin,
            meta,
        });
    }
    if cubins.is_empty() {
        return Err(Error::InvalidArgument(format!(
            "{}: no Triton kernel in this folder{} (allowed: a Triton cache folder, TRITON_CACHE_DIR or ~/.triton/cache, torch.compile's inductor cache, or one kernel's folder: NAME.json beside NAME.cubin)",
            dir.display(),
            match lone.first() {
                Some(j) => format!(
                    " ({} metadata file(s) without a cubin beside them, e.g. {})",
                    lone.len(),
                    j.display()
                ),
                None => String::new(),
            }
        )));
    }
    Ok(cubins)
}

#[cfg(test)]
mod tests {
    use super::*;

    const META: &str = r#"{"hash": "7fc1", "target": {"backend": "cuda", "arch": 90, "warp_size": 32},
        "num_warps": 4, "num_ctas": 1, "num_stages": 3, "shared": 49152, "name": "matmul_kernel",
        "tensordesc_meta": [], "triton_version": "3.6.0", "debug": false}"#;

    #[test]
    fn a_kernel_is_a_cubin_beside_its_metadata() {
        let dir = tempfile::tempdir().unwrap();
        let entry = dir.path().join("P7A6J6EF");
        std::fs::create_dir(&entry).unwrap();
        std::fs::write(entry.join("matmul_kernel.json"), META).unwrap();
        std::fs::write(entry.join("matmul_kernel.cubin"), b"").unwrap();
        std::fs::write(entry.join("__grp__matmul_kernel.json"), "{}").unwrap();
        let found = scan(dir.path()).unwrap();
        assert_eq!(found.len(), 1, "the __grp__ file is no kernel");
        let c = &found[0];
        assert_eq!(c.name, "P7A6J6EF/matmul_kernel.cubin");
        let m = &c.meta;
        assert_eq!(m.cuda_arch(), Some(90));
        assert_eq!((m.num_stages, m.shared, m.descriptors()), (3, 49152, 0));
        let claims: Vec<Claim> = m.claims().into_iter().map(|s| s.claim).collect();
        assert_eq!(claims, [Claim::Stages { stages: 3 }, Claim::Async]);
        assert_eq!(m.launch().threads, 128);
    }

    #[test]
    fn what_is_not_a_triton_kernel_is_refused_with_what_is_allowed() {
        let dir = tempfile::tempdir().unwrap();
        let e = scan(dir.path()).unwrap_err().to_string();
        assert!(e.contains("no Triton kernel in this folder"), "{e}");
        assert!(e.contains("NAME.json beside NAME.cubin"), "{e}");
        // metadata whose cubin is missing (an AMD entry has a .hsaco) is said to be there
        std::fs::write(dir.path().join("k.json"), META).unwrap();
        let e = scan(dir.path()).unwrap_err().to_string();
        assert!(e.contains("1 metadata file(s) without a cubin"), "{e}");
        // a cubin beside a file that is not Triton's metadata
        std::fs::write(dir.path().join("k.cubin"), b"").unwrap();
        std::fs::write(
            dir.path().join("k.json"),
            r#"{"name": "k", "num_warps": 4}"#,
        )
        .unwrap();
        let e = scan(dir.path()).unwrap_err().to_string();
        assert!(
            e.contains("k.json: not Triton kernel metadata: missing field `num_stages`"),
            "{e}"
        );
    }

    #[test]
    fn descriptors_claim_tma_and_one_stage_claims_no_copy() {
        let mut m: Meta = serde_json::from_str(META).unwrap();
        m.tensordesc_meta = Some(vec![serde_json::json!({"swizzle": 3})]);
        let claims: Vec<Claim> = m.claims().into_iter().map(|s| s.claim).collect();
        assert_eq!(claims, [Claim::Stages { stages: 3 }, Claim::Tma]);
        m.tensordesc_meta = None;
        m.num_stages = 1;
        let claims: Vec<Claim> = m.claims().into_iter().map(|s| s.claim).collect();
        assert_eq!(claims, [Claim::Stages { stages: 1 }]);
    }
}
