//! On-disk cubin cache keyed by (source, headers, options, architecture, NVRTC version).

use crate::{Error, Result};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// Environment variables that set the cache folder and switch the cache off.
pub const DIR_ENV: &str = "TILEPIPE_CACHE_DIR";
pub const OFF_ENV: &str = "TILEPIPE_NO_CACHE";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cache {
    dir: Option<PathBuf>,
}

/// Every input that changes the cubin. Each part is length-prefixed so that no two different
/// inputs can hash the same bytes by shifting text between parts.
pub fn key(
    source: &str,
    headers: &[(&str, &str)],
    options: &[String],
    arch: &str,
    nvrtc: &str,
) -> String {
    let mut h = Sha256::new();
    let mut part = |b: &[u8]| {
        h.update((b.len() as u64).to_le_bytes());
        h.update(b);
    };
    part(source.as_bytes());
    for (name, text) in headers {
        part(name.as_bytes());
        part(text.as_bytes());
    }
    for o in options {
        part(o.as_bytes());
    }
    part(arch.as_bytes());
    part(nvrtc.as_bytes());
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

impl Cache {
    /// `--no-cache` or TILEPIPE_NO_CACHE=1 switch it off; `--cache-dir`, then TILEPIPE_CACHE_DIR,
    /// then the user's cache folder (~/.cache/tilepipe) say where it lives.
    pub fn configure(flag_dir: Option<PathBuf>, off: bool) -> Cache {
        let env_off = std::env::var(OFF_ENV).is_ok_and(|v| !v.is_empty() && v != "0");
        if off || env_off {
            return Cache { dir: None };
        }
        let dir = flag_dir
            .or_else(|| std::env::var_os(DIR_ENV).map(PathBuf::from))
            .or_else(|| dirs::cache_dir().map(|d| d.join("tilepipe")));
        Cache { dir }
    }

    pub fn at(dir: impl Into<PathBuf>) -> Cache {
        Cache {
            dir: Some(dir.into()),
        }
    }

    pub fn disabled() -> Cache {
        Cache { dir: None }
    }

    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    fn path(&self, key: &str) -> Option<PathBuf> {
        self.dir.as_ref().map(|d| d.join(format!("{key}.cubin")))
    }

    pub fn get(&self, key: &str) -> Option<Vec<u8>> {
        self.path(key)
            .and_then(|p| std::fs::read(p).ok())
            .filter(|b| !b.is_empty())
    }

    /// Stores atomically (write then rename), so a crash never leaves half a cubin under the key.
    pub fn put(&self, key: &str, cubin: &[u8]) -> Result<()> {
        let (Some(dir), Some(path)) = (self.dir.as_ref(), self.path(key)) else {
            return Ok(());
        };
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let tmp = dir.join(format!("{key}.{}.tmp", std::process::id()));
        std::fs::write(&tmp, cubin).map_err(|e| Error::io(&tmp, e))?;
        std::fs::rename(&tmp, &path).map_err(|e| Error::io(&path, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(src: &str, opts: &[&str], arch: &str, nvrtc: &str) -> String {
        let o: Vec<String> = opts.iter().map(|s| s.to_string()).collect();
        key(src, &[("ptx.cuh", "h")], &o, arch, nvrtc)
    }

    #[test]
    fn key_changes_with_every_input() {
        let base = k("src", &["-DA=1"], "sm_90", "13.0");
        assert_eq!(base, k("src", &["-DA=1"], "sm_90", "13.0"));
        assert_eq!(base.len(), 64);
        for other in [
            k("src2", &["-DA=1"], "sm_90", "13.0"),
            k("src", &["-DA=2"], "sm_90", "13.0"),
            k("src", &["-DA=1"], "sm_80", "13.0"),
            k("src", &["-DA=1"], "sm_90", "12.8"),
            k("src", &["-DA=1", "-lineinfo"], "sm_90", "13.0"),
            key(
                "src",
                &[("ptx.cuh", "h2")],
                &["-DA=1".into()],
                "sm_90",
                "13.0",
            ),
        ] {
            assert_ne!(base, other);
        }
        // moving text between parts must not collide
        assert_ne!(
            k("ab", &["c"], "sm_90", "13.0"),
            k("a", &["bc"], "sm_90", "13.0")
        );
    }

    #[test]
    fn put_then_get_and_disabled_cache_stores_nothing() {
        let d = tempfile::tempdir().unwrap();
        let c = Cache::at(d.path().join("sub"));
        assert_eq!(c.get("abc"), None);
        c.put("abc", b"cubin").unwrap();
        assert_eq!(c.get("abc").as_deref(), Some(&b"cubin"[..]));
        let off = Cache::disabled();
        off.put("abc", b"x").unwrap();
        assert_eq!(off.get("abc"), None);
        assert!(
            Cache::configure(Some(d.path().into()), true)
                .dir()
                .is_none()
        );
        assert_eq!(
            Cache::configure(Some(d.path().into()), false).dir(),
            Some(d.path())
        );
    }
}
