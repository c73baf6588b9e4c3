//! On-disk cubin cache keyed by (source, headers, options, architecture, NVRTC version). Each
//! entry carries its key and the SHA-256 of its cubin, so a damaged or misplaced entry is a miss.

use crate::{Result, fsio};
use sha2::{Digest, Sha256};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Environment variables that set the cache folder and switch the cache off.
pub const DIR_ENV: &str = "TILEPIPE_CACHE_DIR";
pub const OFF_ENV: &str = "TILEPIPE_NO_CACHE";

/// An entry begins with this, then the key it was stored under (u32 length, bytes), the SHA-256
/// of the cubin, the cubin's length (u64) and the cubin: a lookup returns only a cubin stored
/// under its own key whose bytes hash as they did when stored.
const MAGIC: &[u8] = b"tilepipe cubin v2\n";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cache {
    dir: Option<PathBuf>,
}

/// What a lookup found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    /// The cubin and the log its compile left (ptxas's warnings are evidence too).
    Hit(Vec<u8>, String),
    /// Nothing stored under the key, or no cache.
    Miss,
    /// An entry that is not this key's intact cubin (changed on disk, cut short, another key's,
    /// unreadable): never returned; the caller compiles afresh and overwrites it.
    Rejected { path: PathBuf, why: String },
}

impl Lookup {
    /// The warning a rejected entry deserves, naming its file.
    pub fn warning(&self) -> Option<String> {
        match self {
            Lookup::Rejected { path, why } => Some(format!(
                "cubin cache: {}: {why}; compiling afresh and replacing it",
                path.display()
            )),
            _ => None,
        }
    }
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
        Cache::resolve(
            flag_dir,
            off,
            std::env::var_os(OFF_ENV),
            std::env::var_os(DIR_ENV),
            dirs::cache_dir(),
        )
    }

    /// `configure` on given values instead of the process's environment. An empty folder (flag or
    /// variable) counts as unset: an empty path would put cubins in the current folder.
    pub fn resolve(
        flag_dir: Option<PathBuf>,
        off: bool,
        env_off: Option<OsString>,
        env_dir: Option<OsString>,
        user_cache: Option<PathBuf>,
    ) -> Cache {
        let env_off = env_off.is_some_and(|v| !v.is_empty() && v != "0");
        if off || env_off {
            return Cache { dir: None };
        }
        let dir = flag_dir
            .filter(|d| !d.as_os_str().is_empty())
            .or_else(|| env_dir.filter(|d| !d.is_empty()).map(PathBuf::from))
            .or_else(|| user_cache.map(|d| d.join("tilepipe")));
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

    pub fn get(&self, key: &str) -> Lookup {
        let Some(path) = self.path(key) else {
            return Lookup::Miss;
        };
        let entry = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Lookup::Miss,
            Err(e) => {
                return Lookup::Rejected {
                    path,
                    why: format!("unreadable ({e})"),
                };
            }
        };
        match decode(&entry, key) {
            Ok((cubin, log)) => Lookup::Hit(cubin.to_vec(), log.to_string()),
            Err(why) => Lookup::Rejected { path, why },
        }
    }

    /// Stores atomically (write then rename), so a crash never leaves half an entry under the key.
    pub fn put(&self, key: &str, cubin: &[u8], log: &str) -> Result<()> {
        let (Some(dir), Some(path)) = (self.dir.as_ref(), self.path(key)) else {
            return Ok(());
        };
        fsio::create_dir_all(dir)?;
        fsio::write_atomic(&path, &encode(key, cubin, log))
    }
}

/// MAGIC, the key (length first), a SHA-256 of cubin and log, their lengths, the cubin, the log.
fn encode(key: &str, cubin: &[u8], log: &str) -> Vec<u8> {
    let mut e = Vec::with_capacity(MAGIC.len() + 4 + key.len() + 48 + cubin.len() + log.len());
    e.extend_from_slice(MAGIC);
    e.extend_from_slice(&(key.len() as u32).to_le_bytes());
    e.extend_from_slice(key.as_bytes());
    e.extend_from_slice(&digest(cubin, log.as_bytes()));
    e.extend_from_slice(&(cubin.len() as u64).to_le_bytes());
    e.extend_from_slice(&(log.len() as u64).to_le_bytes());
    e.extend_from_slice(cubin);
    e.extend_from_slice(log.as_bytes());
    e
}

fn digest(cubin: &[u8], log: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(cubin);
    h.update(log);
    h.finalize().into()
}

/// The cubin and log of an entry stored under `key`, or why the entry is not one.
fn decode<'a>(entry: &'a [u8], key: &str) -> Result<(&'a [u8], &'a str), String> {
    let short = || "cut short (truncated header)".to_string();
    let rest = entry.strip_prefix(MAGIC).ok_or_else(|| {
        "not a tilepipe cache entry (an older tilepipe's, or something else)".to_string()
    })?;
    let (n, rest) = rest.split_first_chunk::<4>().ok_or_else(short)?;
    let n = u32::from_le_bytes(*n) as usize;
    let stored = rest.get(..n).ok_or_else(short)?;
    if stored != key.as_bytes() {
        return Err(format!(
            "stored under another key ({})",
            String::from_utf8_lossy(stored)
        ));
    }
    let (sum, rest) = rest[n..].split_first_chunk::<32>().ok_or_else(short)?;
    let (len, rest) = rest.split_first_chunk::<8>().ok_or_else(short)?;
    let (log_len, body) = rest.split_first_chunk::<8>().ok_or_else(short)?;
    let (len, log_len) = (u64::from_le_bytes(*len), u64::from_le_bytes(*log_len));
    if body.len() as u64 != len + log_len {
        return Err(format!(
            "{} bytes where the header says {len} of cubin and {log_len} of log (cut short or appended to)",
            body.len()
        ));
    }
    let (cubin, log) = body.split_at(len as usize);
    if cubin.is_empty() {
        return Err("empty cubin".into());
    }
    if digest(cubin, log) != *sum {
        return Err("content hash mismatch: the cubin changed on disk".into());
    }
    let log = std::str::from_utf8(log).map_err(|_| "a log that is not UTF-8".to_string())?;
    Ok((cubin, log))
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
        assert_eq!(c.get("abc"), Lookup::Miss);
        c.put("abc", b"cubin", "ptxas info: a warning").unwrap();
        assert_eq!(
            c.get("abc"),
            Lookup::Hit(b"cubin".to_vec(), "ptxas info: a warning".into())
        );
        assert_eq!(c.get("abc").warning(), None);
        let off = Cache::disabled();
        off.put("abc", b"x", "").unwrap();
        assert_eq!(off.get("abc"), Lookup::Miss);
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

    /// Stores `cubin` under `key`, lets `damage` change the file, and looks the key up again.
    fn damaged(key: &str, cubin: &[u8], damage: impl FnOnce(&Path, Vec<u8>)) -> (Lookup, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let c = Cache::at(d.path());
        c.put(key, cubin, "").unwrap();
        let file = d.path().join(format!("{key}.cubin"));
        damage(&file, std::fs::read(&file).unwrap());
        let found = c.get(key);
        // the caller compiles afresh and overwrites: the key hits again
        c.put(key, cubin, "").unwrap();
        assert_eq!(c.get(key), Lookup::Hit(cubin.to_vec(), String::new()));
        (found, file)
    }

    fn rejected(found: &Lookup, file: &Path, why: &str) {
        match found {
            Lookup::Rejected { path, why: w } => {
                assert_eq!(path, file);
                assert!(w.contains(why), "{w}");
            }
            other => panic!("{other:?} where a rejection was due"),
        }
        let warning = found.warning().unwrap();
        assert!(warning.contains(&file.display().to_string()), "{warning}");
    }

    #[test]
    fn a_corrupted_entry_is_a_miss_with_a_warning_never_a_hit() {
        let cubin: Vec<u8> = (0..=255u8).cycle().take(4000).collect();
        let (found, file) = damaged("k1", &cubin, |f, mut b| {
            let last = b.len() - 1;
            b[last] ^= 0x10;
            std::fs::write(f, b).unwrap();
        });
        rejected(&found, &file, "content hash mismatch");
        let (found, file) = damaged("k1", &cubin, |f, b| {
            std::fs::write(f, &b[..b.len() - 100]).unwrap()
        });
        rejected(&found, &file, "cut short");
        let (found, file) = damaged("k1", &cubin, |f, b| std::fs::write(f, &b[..20]).unwrap());
        rejected(&found, &file, "truncated header");
        let (found, file) = damaged("k1", &cubin, |f, _| std::fs::write(f, &cubin).unwrap());
        rejected(&found, &file, "not a tilepipe cache entry");
        let (found, file) = damaged("k1", &cubin, |f, _| std::fs::write(f, b"").unwrap());
        rejected(&found, &file, "not a tilepipe cache entry");
    }

    #[test]
    fn another_keys_entry_copied_over_is_a_miss() {
        let d = tempfile::tempdir().unwrap();
        let c = Cache::at(d.path());
        c.put("k1", b"cubin one", "").unwrap();
        c.put("k2", b"cubin two", "").unwrap();
        let k1 = d.path().join("k1.cubin");
        std::fs::copy(d.path().join("k2.cubin"), &k1).unwrap();
        rejected(&c.get("k1"), &k1, "stored under another key (k2)");
        assert_eq!(
            c.get("k2"),
            Lookup::Hit(b"cubin two".to_vec(), String::new())
        );
    }

    #[test]
    fn an_unreadable_entry_is_rejected_not_an_error() {
        let d = tempfile::tempdir().unwrap();
        let c = Cache::at(d.path());
        let k = d.path().join("k.cubin");
        std::fs::create_dir(&k).unwrap();
        rejected(&c.get("k"), &k, "unreadable");
    }

    #[test]
    fn an_empty_folder_setting_counts_as_unset() {
        let user = Some(PathBuf::from("/home/u/.cache"));
        let resolve = |flag: Option<&str>, env: Option<&str>| {
            Cache::resolve(
                flag.map(PathBuf::from),
                false,
                None,
                env.map(OsString::from),
                user.clone(),
            )
            .dir()
            .map(Path::to_path_buf)
        };
        let fallback = Some(PathBuf::from("/home/u/.cache/tilepipe"));
        assert_eq!(resolve(None, Some("")), fallback);
        assert_eq!(resolve(Some(""), Some("")), fallback);
        assert_eq!(resolve(Some(""), Some("/e")), Some(PathBuf::from("/e")));
        assert_eq!(resolve(None, Some("/e")), Some(PathBuf::from("/e")));
        assert_eq!(resolve(Some("/f"), Some("/e")), Some(PathBuf::from("/f")));
        assert_eq!(resolve(None, None), fallback);
        let off = |v: &str| Cache::resolve(None, false, Some(v.into()), None, user.clone());
        assert!(off("1").dir().is_none());
        assert!(off("").dir().is_some() && off("0").dir().is_some());
    }
}
