//! What the compiler really emitted: disassembly of each cubin, the instruction census and the
//! attestation of the claimed mechanism.

pub mod attest;
pub mod census;
pub mod loops;
pub mod parse;
pub mod protocol;
pub mod ptxas;

pub use attest::{Attestation, attest};
pub use census::Census;

use crate::pipeline::Claim;
use crate::toolchain::Toolchain;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Evidence read from a variant's SASS.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SassEvidence {
    /// The disassembler used, or None when there was none.
    pub tool: Option<String>,
    pub census: Option<Census>,
    pub attestation: Attestation,
    /// The listing around the movement instructions, at most EXCERPT_LINES lines: what a report
    /// shows of the SASS (the whole listing is too big to keep per variant).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub excerpt: Option<String>,
    #[serde(skip)]
    pub listing: String,
}

/// Disassembles a cubin with nvdisasm (with line info) or, failing that, cuobjdump.
pub fn disassemble(cubin: &[u8], tc: &Toolchain) -> Result<Option<(String, String)>> {
    let tools: Vec<(std::path::PathBuf, Vec<&str>)> = [
        tc.nvdisasm.clone().map(|p| (p, vec!["-c", "-g"])),
        tc.cuobjdump.clone().map(|p| (p, vec!["-sass"])),
    ]
    .into_iter()
    .flatten()
    .collect();
    if tools.is_empty() {
        return Ok(None);
    }
    with_cubin_file(cubin, |path| first_that_works(&tools, path))?
        .map(Some)
        .map_err(|detail| Error::Disassembler {
            what: "cubin".into(),
            detail,
        })
}

/// Calls `f` on a temporary file holding `cubin` (the CUDA tools read files), removed after.
pub fn with_cubin_file<T>(cubin: &[u8], f: impl FnOnce(&std::path::Path) -> T) -> Result<T> {
    static SERIAL: AtomicUsize = AtomicUsize::new(0);
    let n = SERIAL.fetch_add(1, Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!("tilepipe-{}-{n}.cubin", std::process::id()));
    std::fs::write(&path, cubin).map_err(|e| Error::io(&path, e))?;
    let out = f(&path);
    let _ = std::fs::remove_file(&path);
    Ok(out)
}

/// Runs each (tool, arguments) on `file` until one succeeds: its name and its output, or the
/// last failure.
pub fn first_that_works(
    tools: &[(std::path::PathBuf, Vec<&str>)],
    file: &std::path::Path,
) -> std::result::Result<(String, String), String> {
    let mut last_err = String::from("no disassembler");
    for (tool, args) in tools {
        match Command::new(tool).args(args).arg(file).output() {
            Ok(out) if out.status.success() => {
                return Ok((
                    tool.display().to_string(),
                    String::from_utf8_lossy(&out.stdout).into_owned(),
                ));
            }
            Ok(out) => {
                last_err = format!(
                    "{}: {}",
                    tool.display(),
                    String::from_utf8_lossy(&out.stderr).trim()
                )
            }
            Err(e) => last_err = format!("{}: {e}", tool.display()),
        }
    }
    Err(last_err)
}

/// Census and attestation of `kernel` in a listing.
pub fn examine_listing(
    tool: Option<String>,
    listing: String,
    kernel: &str,
    claim: Claim,
) -> SassEvidence {
    let functions = parse::parse(&listing);
    match functions.iter().find(|f| f.name == kernel) {
        Some(f) => {
            let census = Census::of(f);
            let attestation = attest(claim, &census);
            SassEvidence {
                tool,
                census: Some(census),
                attestation,
                excerpt: Some(bounded_excerpt(&listing, EXCERPT_LINES)),
                listing,
            }
        }
        None => SassEvidence {
            tool,
            census: None,
            attestation: Attestation::Unverified {
                reason: format!("kernel {kernel} not found in the listing"),
            },
            excerpt: None,
            listing,
        },
    }
}

/// Disassembles and examines; no disassembler gives "unverified", never "attested".
pub fn examine(cubin: &[u8], tc: &Toolchain, kernel: &str, claim: Claim) -> Result<SassEvidence> {
    Ok(match disassemble(cubin, tc)? {
        Some((tool, listing)) => examine_listing(Some(tool), listing, kernel, claim),
        None => SassEvidence {
            tool: None,
            census: None,
            attestation: Attestation::Unverified {
                reason: "no disassembler found (nvdisasm or cuobjdump under CUDA_HOME, CUDA_PATH, /usr/local/cuda or PATH)"
                    .into(),
            },
            excerpt: None,
            listing: String::new(),
        },
    })
}

const MOVEMENT: [&str; 8] = [
    "LDGSTS",
    "LDGDEPBAR",
    "DEPBAR",
    "UBLKCP",
    "UTMALDG",
    "SYNCS",
    "ARRIVES",
    "BAR",
];

/// The listing around each movement or synchronisation instruction (`context` lines either side),
/// with the line-info comments nvdisasm interleaves, gaps marked by "...".
pub fn excerpt(listing: &str, context: usize) -> String {
    let lines: Vec<&str> = listing.lines().collect();
    let mut keep = vec![false; lines.len()];
    for f in parse::parse(listing) {
        for i in f.instructions {
            let b = i.opcode.split('.').next().unwrap_or("");
            if MOVEMENT.contains(&b) {
                let lo = i.line.saturating_sub(context);
                let hi = (i.line + context).min(lines.len() - 1);
                keep[lo..=hi].iter_mut().for_each(|k| *k = true);
            }
        }
    }
    let mut out = String::new();
    let mut gap = false;
    for (line, k) in lines.iter().zip(&keep) {
        if *k {
            let marked = MOVEMENT.iter().any(|m| line.contains(&format!(" {m}")));
            out.push_str(if marked { ">> " } else { "   " });
            out.push_str(&source_by_name(line.trim_end()));
            out.push('\n');
            gap = false;
        } else if !gap && !out.is_empty() {
            out.push_str("   ...\n");
            gap = true;
        }
    }
    out
}

/// A line-info comment (`//## File "/build/dir/tilepipe_rmsnorm.cu", line 692`) with the file
/// named without its folder: NVRTC resolves a program's name against the folder the build ran
/// in, which names no file of the source and differs from machine to machine. Other lines as
/// they are.
pub fn source_by_name(line: &str) -> std::borrow::Cow<'_, str> {
    let Some((before, rest)) = line.split_once("//## File \"") else {
        return line.into();
    };
    let Some((path, after)) = rest.split_once('"') else {
        return line.into();
    };
    let name = path.rsplit('/').next().unwrap_or(path);
    format!("{before}//## File \"{name}\"{after}").into()
}

/// Lines of SASS a variant's results keep: one line of context around each movement instruction.
pub const EXCERPT_LINES: usize = 80;

/// `excerpt` with one line of context, cut after `max` lines with a last line that says how many
/// were left out.
pub fn bounded_excerpt(listing: &str, max: usize) -> String {
    let all = excerpt(listing, 1);
    let n = all.lines().count();
    if n <= max {
        return all;
    }
    let mut out: String = all.lines().take(max).flat_map(|l| [l, "\n"]).collect();
    out += &format!(
        "   ... {} more lines (`tilepipe sass VARIANT` shows them all)\n",
        n - max
    );
    out
}
