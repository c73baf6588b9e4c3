//! From the path a user gives to cubins with their listings: a `.cu` compiled by NVRTC, a cubin
//! as it is, a fatbinary or a host executable / shared library unpacked by `cuobjdump -xelf all`,
//! or a folder of Triton's kernels with their metadata.

use crate::arch::Arch;
use crate::toolchain::Toolchain;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::str::FromStr;

/// An architecture as NVRTC and cuobjdump name it, with its arch-specific suffix kept
/// (`sm_90a` compiles wgmma; its limits are sm_90's).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Target {
    pub arch: Arch,
    pub name: String,
}

impl FromStr for Target {
    type Err = Error;
    fn from_str(s: &str) -> Result<Target> {
        let t = s.trim();
        let plain = t.strip_suffix(['a', 'f']).unwrap_or(t);
        // the refusal quotes what was given, suffix and all
        let arch: Arch = plain.parse().map_err(|e| match e {
            Error::InvalidArgument(m) => {
                Error::InvalidArgument(m.replacen(&format!("'{plain}'"), &format!("'{t}'"), 1))
            }
            e => e,
        })?;
        Ok(Target {
            arch,
            name: format!("{arch}{}", &t[plain.len()..]),
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Source,
    Cubin,
    Fatbinary,
    HostBinary,
    /// A folder: Triton's cache, torch.compile's, or one kernel's.
    Triton,
}

impl Kind {
    pub fn describe(self) -> &'static str {
        match self {
            Kind::Source => "CUDA source",
            Kind::Cubin => "cubin",
            Kind::Fatbinary => "fatbinary",
            Kind::HostBinary => "executable or library with device code",
            Kind::Triton => "Triton cache folder",
        }
    }
}

/// The text of the `.cu` a cubin was compiled from.
#[derive(Debug, Clone)]
pub struct Source {
    pub path: PathBuf,
    pub text: String,
    /// Folders whose files line info may name and whose lines are read for claims: the `.cu`'s
    /// own folder and the -I folders the user gave (never the toolkit's headers).
    pub roots: Vec<PathBuf>,
}

#[derive(Debug, Clone)]
pub struct Cubin {
    /// The file's name: the one given, or cuobjdump's `lib.so.3.sm_90.cubin`.
    pub name: String,
    pub path: PathBuf,
    /// The architecture its name or compilation says, before the listing is read.
    pub target: Option<Target>,
    /// Triton's metadata, for a cubin of a Triton cache.
    pub triton: Option<super::triton::Meta>,
}

/// A folder of this process's that is removed when dropped.
#[derive(Debug)]
pub struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Scratch> {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static SERIAL: AtomicUsize = AtomicUsize::new(0);
        let n = SERIAL.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("tilepipe-inspect-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// What was read from the path.
#[derive(Debug)]
pub struct Loaded {
    pub kind: Kind,
    pub cubins: Vec<Cubin>,
    pub source: Option<Source>,
    /// How the cubin was made from a `.cu`: NVRTC's version, architecture and options.
    pub compiled: Option<String>,
    /// NVRTC's warnings, if any.
    pub log: String,
    /// Cubins left out because they are not for the --arch asked.
    pub skipped_by_arch: usize,
    /// Where compiled and extracted cubins lie; removed with the `Loaded`.
    scratch: Scratch,
}

fn kind(path: &Path) -> Result<Kind> {
    if path.is_dir() {
        return Ok(Kind::Triton);
    }
    if path.extension().is_some_and(|e| e == "cu") {
        return Ok(Kind::Source);
    }
    let mut head = [0u8; 20];
    let mut f = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let n = f.read(&mut head).map_err(|e| Error::io(path, e))?;
    const EM_CUDA: u16 = 190;
    match &head[..n.min(4)] {
        b"\x7fELF" if n >= 20 => Ok(if u16::from_le_bytes([head[18], head[19]]) == EM_CUDA {
            Kind::Cubin
        } else {
            Kind::HostBinary
        }),
        [0x50, 0xED, 0x55, 0xBA] => Ok(Kind::Fatbinary),
        _ => Err(Error::InvalidArgument(format!(
            "{}: not a CUDA source, cubin, fatbinary or ELF executable/library (allowed: a .cu file, a cubin, a fatbinary, an executable or shared library with device code, a Triton cache folder)",
            path.display()
        ))),
    }
}

/// What the user asked to be compiled or extracted.
pub struct Spec<'a> {
    pub path: &'a Path,
    pub target: Option<&'a Target>,
    pub defines: &'a [String],
    pub includes: &'a [PathBuf],
}

pub fn load(spec: &Spec, tc: &Toolchain) -> Result<Loaded> {
    let scratch = Scratch::new()?;
    let kind = kind(spec.path)?;
    let mut loaded = Loaded {
        kind,
        cubins: Vec::new(),
        source: None,
        compiled: None,
        log: String::new(),
        skipped_by_arch: 0,
        scratch,
    };
    match kind {
        Kind::Source => compile(spec, tc, &mut loaded)?,
        Kind::Cubin => loaded.cubins.push(Cubin {
            name: file_name(spec.path),
            path: spec.path.to_path_buf(),
            target: None,
            triton: None,
        }),
        Kind::Fatbinary | Kind::HostBinary => {
            loaded.cubins = extract(spec.path, tc, &loaded.scratch.0)?;
            keep_arch(spec, &mut loaded)?;
        }
        Kind::Triton => {
            loaded.cubins = super::triton::scan(spec.path)?
                .into_iter()
                .map(|e| Cubin {
                    name: e.name,
                    path: e.cubin,
                    target: e.meta.cuda_arch().and_then(|a| a.to_string().parse().ok()),
                    triton: Some(e.meta),
                })
                .collect();
            keep_arch(spec, &mut loaded)?;
        }
    }
    Ok(loaded)
}

/// Leaves out the cubins whose architecture is known and is not --arch's.
fn keep_arch(spec: &Spec, loaded: &mut Loaded) -> Result<()> {
    let Some(t) = spec.target else { return Ok(()) };
    let mut held: Vec<String> = loaded
        .cubins
        .iter()
        .filter_map(|c| c.target.as_ref().map(|t| t.name.clone()))
        .collect();
    let before = loaded.cubins.len();
    loaded
        .cubins
        .retain(|c| c.target.as_ref().is_none_or(|ct| ct.arch == t.arch));
    loaded.skipped_by_arch = before - loaded.cubins.len();
    if loaded.cubins.is_empty() {
        held.sort();
        held.dedup();
        return Err(Error::InvalidArgument(format!(
            "{} holds no cubin for {} (it holds {})",
            spec.path.display(),
            t.name,
            held.join(", ")
        )));
    }
    Ok(())
}

fn file_name(p: &Path) -> String {
    p.file_name().map_or_else(
        || p.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

fn compile(spec: &Spec, tc: &Toolchain, loaded: &mut Loaded) -> Result<()> {
    let path = spec.path;
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let dirs: Vec<PathBuf> = spec
        .includes
        .iter()
        .chain(&tc.include_dirs)
        .cloned()
        .collect();
    if !super::declares::may_declare_kernel(path, &text, &dirs) {
        return Err(Error::InvalidArgument(format!(
            "{}: nothing to judge: neither it nor a header it includes declares a __global__ \
             function (allowed: a .cu with a __global__ function, a cubin, a fatbinary or an \
             executable with device code)",
            path.display()
        )));
    }
    let target = match spec.target {
        Some(t) => t.clone(),
        None => {
            let arch = crate::gpu::Gpu::open(0).map(|g| g.info.arch).map_err(|e| {
                Error::InvalidArgument(format!(
                    "no --arch given and no GPU to take it from ({e}); give one, e.g. --arch sm_90"
                ))
            })?;
            Target {
                arch,
                name: arch.to_string(),
            }
        }
    };
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut options = vec![
        format!("--gpu-architecture={}", target.name),
        "-std=c++17".to_string(),
        "--generate-line-info".to_string(),
        format!("-I{}", dir.display()),
    ];
    options.extend(spec.includes.iter().map(|d| format!("-I{}", d.display())));
    options.extend(tc.include_options());
    options.extend(spec.defines.iter().map(|d| format!("-D{d}")));
    let stem = path
        .file_stem()
        .map_or("kernel".into(), |s| s.to_string_lossy().into_owned());
    // NVRTC names the program `{name}.cu`: the path itself, so that its log and the line info
    // point at the user's file
    let program = path.with_extension("").display().to_string();
    let (major, minor) = crate::gpu::nvrtc::version()?;
    let out = crate::gpu::nvrtc::compile(&text, &[], &program, &options)?;
    let cubin = loaded
        .scratch
        .0
        .join(format!("{stem}.{}.cubin", target.name));
    std::fs::write(&cubin, &out.cubin).map_err(|e| Error::io(&cubin, e))?;
    loaded.compiled = Some(format!(
        "NVRTC {major}.{minor} for {} ({})",
        target.name,
        options.join(" ")
    ));
    loaded.log = out.log;
    loaded.cubins.push(Cubin {
        name: format!("{stem}.{}.cubin", target.name),
        path: cubin,
        target: Some(target),
        triton: None,
    });
    let mut roots = vec![dir.to_path_buf()];
    roots.extend(spec.includes.iter().cloned());
    loaded.source = Some(Source {
        path: path.canonicalize().map_err(|e| Error::io(path, e))?,
        text,
        roots,
    });
    Ok(())
}

fn missing(name: &str, what: &str) -> Error {
    Error::Disassembler {
        what: what.to_string(),
        detail: format!(
            "{name} not found (looked under CUDA_HOME, CUDA_PATH, /usr/local/cuda and PATH); NVIDIA's nvidia-cuda-nvdisasm and nvidia-cuda-cuobjdump wheels have them"
        ),
    }
}

/// Every cubin (SASS) the file embeds, by `cuobjdump -xelf all`.
fn extract(path: &Path, tc: &Toolchain, into: &Path) -> Result<Vec<Cubin>> {
    let what = path.display().to_string();
    let cuobjdump = tc
        .cuobjdump
        .as_ref()
        .ok_or_else(|| missing("cuobjdump", &what))?;
    let abs = path.canonicalize().map_err(|e| Error::io(path, e))?;
    let out = Command::new(cuobjdump)
        .args(["-xelf", "all"])
        .arg(&abs)
        .current_dir(into)
        .output()
        .map_err(|e| Error::io(cuobjdump, e))?;
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if said.contains("does not contain device code") {
        return Err(Error::InvalidArgument(format!(
            "{what} holds no device code (cuobjdump: {})",
            said.trim()
        )));
    }
    if !out.status.success() {
        return Err(Error::Disassembler {
            what,
            detail: said.trim().to_string(),
        });
    }
    let mut cubins: Vec<Cubin> = std::fs::read_dir(into)
        .map_err(|e| Error::io(into, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "cubin"))
        .map(|p| {
            let name = file_name(&p);
            // lib.so.12.sm_80.cubin -> sm_80
            let target = name
                .rsplit('.')
                .nth(1)
                .and_then(|t| t.parse::<Target>().ok());
            Cubin {
                name,
                path: p,
                target,
                triton: None,
            }
        })
        .collect();
    if cubins.is_empty() {
        return Err(Error::InvalidArgument(format!(
            "{what} holds no cubin (SASS): only PTX, which this command does not compile"
        )));
    }
    // cuobjdump numbers them in file order: keep it
    let order = |c: &Cubin| -> (u64, String) {
        let n = c.name.split('.').rev().nth(2).and_then(|n| n.parse().ok());
        (n.unwrap_or(u64::MAX), c.name.clone())
    };
    cubins.sort_by_key(order);
    Ok(cubins)
}

/// nvdisasm with line info and inlining chains (`-c -g -gi`; only the functions of these symbol
/// indices when given, `-fun`), else cuobjdump's SASS: the tool used and the listing.
pub fn disassemble(
    cubin: &Path,
    tc: &Toolchain,
    only: Option<&[usize]>,
) -> Result<(String, String)> {
    let what = cubin.display().to_string();
    let list = only.map(|o| o.iter().map(usize::to_string).collect::<Vec<_>>().join(","));
    let mut nvdisasm = vec!["-c"];
    // source lines only where the cubin has them: on a library built without line info the
    // flags add nothing to the listing and about a third to nvdisasm's time
    if line_info(cubin) {
        nvdisasm.extend(["-g", "-gi"]);
    }
    if let Some(l) = &list {
        nvdisasm.extend(["-fun", l.as_str()]);
    }
    let tools: Vec<(PathBuf, Vec<&str>)> = [
        tc.nvdisasm.clone().map(|p| (p, nvdisasm)),
        tc.cuobjdump.clone().map(|p| (p, vec!["-sass"])),
    ]
    .into_iter()
    .flatten()
    .collect();
    if tools.is_empty() {
        return Err(missing("nvdisasm or cuobjdump", &what));
    }
    crate::evidence::sass::first_that_works(&tools, cubin).map_err(|detail| Error::Disassembler {
        what,
        detail: format!(
            "{detail} (allowed: a cubin this CUDA's nvdisasm or cuobjdump reads; an architecture it dropped or does not know yet needs the toolkit its message names)"
        ),
    })
}

/// Whether a cubin carries line info (`.nv_debug_line_sass` or `.debug_line`); true when its
/// sections cannot be read, so that nvdisasm is asked for lines and says what it finds.
fn line_info(cubin: &Path) -> bool {
    use object::{Object, ObjectSection};
    let Ok(data) = std::fs::read(cubin) else {
        return true;
    };
    match object::read::elf::ElfFile64::<object::Endianness>::parse(&*data) {
        Ok(elf) => elf.sections().any(|s| {
            s.name()
                .is_ok_and(|n| n == ".nv_debug_line_sass" || n == ".debug_line")
        }),
        Err(_) => true,
    }
}

/// `cuobjdump -res-usage` of a cubin; Err with the reason when there is no cuobjdump or it fails.
pub fn res_usage(cubin: &Path, tc: &Toolchain) -> std::result::Result<String, String> {
    let t = tc
        .cuobjdump
        .as_ref()
        .ok_or("cuobjdump not found: registers and shared memory unknown")?;
    let o = Command::new(t)
        .arg("-res-usage")
        .arg(cubin)
        .output()
        .map_err(|e| format!("{}: {e}", t.display()))?;
    if o.status.success() {
        Ok(String::from_utf8_lossy(&o.stdout).into_owned())
    } else {
        Err(format!(
            "cuobjdump -res-usage: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_keep_their_suffix() {
        let t: Target = "sm_90a".parse().unwrap();
        assert_eq!((t.arch.sm(), t.name.as_str()), (90, "sm_90a"));
        let t: Target = "86".parse().unwrap();
        assert_eq!(t.name, "sm_86");
        assert!("sm_9x".parse::<Target>().is_err());
        // a refusal names what was typed, not what is left once the suffix is off
        let e = "sm_100a,sm_120a".parse::<Target>().unwrap_err().to_string();
        assert!(e.contains("unknown architecture 'sm_100a,sm_120a'"), "{e}");
    }

    #[test]
    fn files_are_told_apart_by_their_first_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, bytes: &[u8]| {
            let p = dir.path().join(name);
            std::fs::write(&p, bytes).unwrap();
            p
        };
        let mut elf = b"\x7fELF".to_vec();
        elf.resize(20, 0);
        elf[18] = 190;
        assert_eq!(kind(&write("k.cubin", &elf)).unwrap(), Kind::Cubin);
        elf[18] = 62; // x86-64
        assert_eq!(kind(&write("app", &elf)).unwrap(), Kind::HostBinary);
        assert_eq!(
            kind(&write("k.fatbin", &[0x50, 0xED, 0x55, 0xBA, 1, 0])).unwrap(),
            Kind::Fatbinary
        );
        assert_eq!(
            kind(&write("k.cu", b"__global__ void k() {}")).unwrap(),
            Kind::Source
        );
        let e = kind(&write("notes.txt", b"hello")).unwrap_err().to_string();
        assert!(e.contains("not a CUDA source, cubin, fatbinary"), "{e}");
        let e = kind(&dir.path().join("missing.cubin"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("missing.cubin"), "{e}");
    }
}
