//! What a kernel claims (given with --claim, or read from its name and from the source lines its
//! SASS came from) and whether the census attests it: "claimed X, emitted Y".

use crate::evidence::sass::Census;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "mechanism")]
pub enum Claim {
    /// cp.async (LDGSTS) of `bytes` per instruction, any when None.
    Cpasync { bytes: Option<u32> },
    /// cp.async.bulk (UBLKCP, UBLKRED).
    Bulk,
    /// cp.async.bulk.tensor (UTMALDG, UTMASTG, UTMAREDG).
    Tma,
    /// wgmma.mma_async (HGMMA and its integer and fp8 forms).
    Wgmma,
    /// mma.sync / wmma (HMMA, IMMA, DMMA).
    Mma,
    /// A synchronous copy: LDG + STS, no asynchronous copy.
    Sync,
    /// Some asynchronous copy (LDGSTS, UBLKCP or UTMALDG), as `cuda::memcpy_async` promises.
    Async,
}

pub const ALLOWED: &str =
    "cpasync16, cpasync8, cpasync4, cpasync, bulk, tma, wgmma, mma, sync, async";

impl FromStr for Claim {
    type Err = Error;
    fn from_str(s: &str) -> Result<Claim> {
        Ok(match s.trim().to_ascii_lowercase().as_str() {
            "cpasync16" => Claim::Cpasync { bytes: Some(16) },
            "cpasync8" => Claim::Cpasync { bytes: Some(8) },
            "cpasync4" => Claim::Cpasync { bytes: Some(4) },
            "cpasync" => Claim::Cpasync { bytes: None },
            "bulk" => Claim::Bulk,
            "tma" => Claim::Tma,
            "wgmma" => Claim::Wgmma,
            "mma" => Claim::Mma,
            "sync" => Claim::Sync,
            "async" => Claim::Async,
            _ => {
                return Err(Error::InvalidArgument(format!(
                    "unknown claim '{s}' (allowed: {ALLOWED})"
                )));
            }
        })
    }
}

impl Claim {
    pub fn describe(self) -> String {
        match self {
            Claim::Cpasync { bytes: Some(b) } => format!("cp.async {b} B (LDGSTS{})", width(b)),
            Claim::Cpasync { bytes: None } => "cp.async (LDGSTS)".into(),
            Claim::Bulk => "a bulk copy, cp.async.bulk (UBLKCP)".into(),
            Claim::Tma => "TMA, cp.async.bulk.tensor (UTMALDG / UTMASTG)".into(),
            Claim::Wgmma => "warpgroup MMA, wgmma (HGMMA)".into(),
            Claim::Mma => "tensor-core MMA, mma.sync (HMMA / IMMA / DMMA)".into(),
            Claim::Sync => "a synchronous copy (LDG + STS, no asynchronous copy)".into(),
            Claim::Async => "an asynchronous copy (LDGSTS, UBLKCP or UTMALDG)".into(),
        }
    }

    fn is_math(self) -> bool {
        matches!(self, Claim::Wgmma | Claim::Mma)
    }
}

fn width(bytes: u32) -> &'static str {
    match bytes {
        16 => ".128",
        8 => ".64",
        _ => "",
    }
}

/// A claim and where it was read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stated {
    pub claim: Claim,
    /// "--claim", "the name copyAsyncLargeChunk", "a.cu:17: cuda::memcpy_async".
    pub from: String,
}

/// The words of an identifier: `copyAsyncLargeChunk` -> copy, async, large, chunk;
/// `TMALoad_v2` -> tma, load, v, 2.
fn words(name: &str) -> Vec<String> {
    let chars: Vec<char> = name.chars().collect();
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            out.extend((!cur.is_empty()).then(|| std::mem::take(&mut cur)));
            continue;
        }
        if let Some(p) = cur.chars().last() {
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            let split = (p.is_ascii_lowercase() && c.is_ascii_uppercase())
                || (p.is_ascii_digit() != c.is_ascii_digit())
                || (p.is_ascii_uppercase() && c.is_ascii_uppercase() && next_lower);
            if split {
                out.push(std::mem::take(&mut cur));
            }
        }
        cur.push(c);
    }
    out.extend((!cur.is_empty()).then_some(cur));
    out.into_iter().map(|w| w.to_ascii_lowercase()).collect()
}

/// The claims a kernel's name makes: async / cpasync[N] / bulk / tma / wgmma / mma in its words.
pub fn from_name(name: &str) -> Vec<Stated> {
    let w = words(&display_name(name));
    let mut out = Vec::new();
    for (i, word) in w.iter().enumerate() {
        let claim = match word.as_str() {
            "cpasync" => Claim::Cpasync {
                bytes: w
                    .get(i + 1)
                    .and_then(|n| n.parse().ok())
                    .filter(|b| [4, 8, 16].contains(b)),
            },
            "async" if i > 0 && w[i - 1] == "cp" => Claim::Cpasync { bytes: None },
            "async" => Claim::Async,
            "tma" => Claim::Tma,
            "bulk" => Claim::Bulk,
            "wgmma" | "gmma" => Claim::Wgmma,
            "mma" | "wmma" | "hmma" => Claim::Mma,
            _ => continue,
        };
        push(
            &mut out,
            Stated {
                claim,
                from: format!("the name {}", display_name(name)),
            },
        );
    }
    out
}

fn push(out: &mut Vec<Stated>, s: Stated) {
    if !out.iter().any(|o| o.claim == s.claim) {
        out.push(s);
    }
}

/// The claim one source line makes, with the text that makes it: a PTX copy or MMA in inline
/// assembly, or a CUDA API that promises one.
pub fn from_line(text: &str) -> Option<(Claim, &'static str)> {
    let code = text.split("//").next().unwrap_or(text);
    if code.contains("cp.async.bulk.tensor") || code.contains("cp_async_bulk_tensor") {
        return Some((Claim::Tma, "cp.async.bulk.tensor"));
    }
    if code.contains("cp.async.bulk.shared") || code.contains("cp.async.bulk.global") {
        return Some((Claim::Bulk, "cp.async.bulk"));
    }
    if code.contains("cp_async_bulk") || code.contains("memcpy_async_tx") {
        return Some((Claim::Bulk, "a bulk-copy API"));
    }
    if let Some(at) = code
        .find("cp.async.ca.")
        .or_else(|| code.find("cp.async.cg."))
    {
        // `cp.async.cg.shared.global [%0], [%1], 16;`: the size is the last operand
        let size = code[at..]
            .split(';')
            .next()
            .and_then(|s| s.rsplit(',').next());
        let bytes = size
            .and_then(|s| s.trim().parse().ok())
            .filter(|b| [4, 8, 16].contains(b));
        return Some((Claim::Cpasync { bytes }, "cp.async"));
    }
    if code.contains("memcpy_async") {
        return Some((Claim::Async, "memcpy_async"));
    }
    if code.contains("wgmma.mma_async") {
        return Some((Claim::Wgmma, "wgmma.mma_async"));
    }
    if code.contains("mma.sync") || code.contains("mma_sync") {
        return Some((Claim::Mma, "mma.sync"));
    }
    None
}

/// The claims of the source lines a kernel's SASS came from (`where` names each line).
pub fn from_source<'a>(lines: impl IntoIterator<Item = (String, &'a str)>) -> Vec<Stated> {
    let mut out = Vec::new();
    for (at, text) in lines {
        if let Some((claim, what)) = from_line(text) {
            push(
                &mut out,
                Stated {
                    claim,
                    from: format!("{at}: {what}"),
                },
            );
        }
    }
    out
}

/// The claim's verdict against the census.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    #[serde(flatten)]
    pub stated: Stated,
    pub attested: bool,
    /// What the SASS shows, in the claim's terms (movement or math).
    pub emitted: String,
}

impl Verdict {
    pub fn label(&self) -> String {
        if self.attested {
            format!("attested: {}", self.emitted)
        } else {
            format!(
                "CONTRADICTED: claimed {}, emitted {}",
                self.stated.claim.describe(),
                self.emitted
            )
        }
    }
}

fn sum(c: &Census, bases: &[&str]) -> u32 {
    bases.iter().map(|b| c.count(b)).sum()
}

pub const ASYNC_COPIES: [&str; 5] = ["LDGSTS", "UBLKCP", "UBLKRED", "UTMALDG", "UTMASTG"];
const TENSOR_CORE: [&str; 4] = ["HMMA", "IMMA", "DMMA", "BMMA"];
const WARPGROUP: [&str; 4] = ["HGMMA", "IGMMA", "QGMMA", "BGMMA"];

pub fn attest(s: &Stated, c: &Census) -> Verdict {
    let attested = match s.claim {
        Claim::Cpasync { bytes: Some(b) } => c.ldgsts(b, true) + c.ldgsts(b, false) > 0,
        Claim::Cpasync { bytes: None } => c.count("LDGSTS") > 0,
        Claim::Bulk => sum(c, &["UBLKCP", "UBLKRED"]) > 0,
        Claim::Tma => sum(c, &["UTMALDG", "UTMASTG", "UTMAREDG"]) > 0,
        Claim::Wgmma => sum(c, &WARPGROUP) > 0,
        Claim::Mma => sum(c, &TENSOR_CORE) > 0,
        Claim::Sync => sum(c, &ASYNC_COPIES) == 0 && c.count("LDG") > 0 && c.count("STS") > 0,
        Claim::Async => sum(c, &["LDGSTS", "UBLKCP", "UTMALDG"]) > 0,
    };
    Verdict {
        stated: s.clone(),
        attested,
        emitted: if s.claim.is_math() {
            math(c)
        } else {
            movement(c)
        },
    }
}

fn forms(c: &Census, bases: &[&str]) -> String {
    bases
        .iter()
        .flat_map(|b| c.forms(b))
        .collect::<Vec<_>>()
        .join(", ")
}

/// How bytes move from global to shared memory, in words, with the instructions that say so.
pub fn movement(c: &Census) -> String {
    let mut parts = Vec::new();
    if sum(c, &["UTMALDG", "UTMASTG", "UTMAREDG"]) > 0 {
        parts.push(format!(
            "TMA, cp.async.bulk.tensor ({})",
            forms(c, &["UTMALDG", "UTMASTG", "UTMAREDG"])
        ));
    }
    if sum(c, &["UBLKCP", "UBLKRED"]) > 0 {
        parts.push(format!(
            "bulk copy, cp.async.bulk ({})",
            forms(c, &["UBLKCP", "UBLKRED"])
        ));
    }
    for form in c.opcodes.keys().filter(|k| k.starts_with("LDGSTS")) {
        let bytes = crate::evidence::sass::census::access_width(form);
        let cache = if form.contains(".BYPASS") {
            ".cg, L2 only"
        } else {
            ".ca, L1 and L2"
        };
        parts.push(format!(
            "cp.async {bytes} B {cache} ({form} x{})",
            c.opcodes[form]
        ));
    }
    if parts.is_empty() {
        let ldg: Vec<String> = c.ldg_widths().iter().map(|w| format!("{w} B")).collect();
        parts.push(match (ldg.is_empty(), c.count("STS") > 0) {
            (false, true) => format!(
                "synchronous: global loads into registers (LDG {}) then shared stores ({})",
                ldg.join(", "),
                forms(c, &["STS"])
            ),
            (false, false) => format!(
                "global loads into registers only (LDG {}), no shared-memory staging",
                ldg.join(", ")
            ),
            (true, true) => format!("no global load; shared stores ({})", forms(c, &["STS"])),
            (true, false) => "no global-to-shared movement".into(),
        });
    }
    parts.join("; ")
}

/// The math units the kernel uses, in words.
pub fn math(c: &Census) -> String {
    let mut parts = Vec::new();
    if sum(c, &WARPGROUP) > 0 {
        parts.push(format!("warpgroup MMA, wgmma ({})", forms(c, &WARPGROUP)));
    }
    if sum(c, &TENSOR_CORE) > 0 {
        parts.push(format!(
            "tensor-core MMA, mma.sync ({})",
            forms(c, &TENSOR_CORE)
        ));
    }
    let simt = [
        "FFMA", "FMUL", "FADD", "HFMA2", "HMUL2", "HADD2", "DFMA", "DMUL", "DADD",
    ];
    let n: Vec<String> = simt
        .iter()
        .map(|b| (b, c.count(b)))
        .filter(|(_, n)| *n > 0)
        .map(|(b, n)| format!("{b} x{n}"))
        .collect();
    if !n.is_empty() {
        parts.push(format!("CUDA cores ({})", n.join(", ")));
    }
    if c.count("MUFU") > 0 {
        parts.push(format!("special-function unit ({})", forms(c, &["MUFU"])));
    }
    if parts.is_empty() {
        "no floating-point math".into()
    } else {
        parts.join("; ")
    }
}

/// A readable name from an Itanium-mangled one: `_Z10stage_rowsPKtPti` -> `stage_rows`,
/// `_ZN2ns6kernelILi4EEEvPf` -> `ns::kernel`; anything else unchanged. Only the names are read,
/// not the parameter or template types.
pub fn display_name(name: &str) -> String {
    let Some(rest) = name.strip_prefix("_Z") else {
        return name.to_string();
    };
    let rest = rest.strip_prefix('L').unwrap_or(rest);
    let (nested, mut s) = match rest.strip_prefix('N') {
        Some(r) => (true, r.trim_start_matches(['K', 'V', 'r'])),
        None => (false, rest),
    };
    let mut parts: Vec<&str> = Vec::new();
    loop {
        let digits = s.chars().take_while(char::is_ascii_digit).count();
        let Some(len) = s[..digits].parse::<usize>().ok() else {
            break;
        };
        let Some(id) = s.get(digits..digits + len) else {
            break;
        };
        parts.push(id);
        s = &s[digits + len..];
        if !nested {
            break;
        }
    }
    if parts.is_empty() {
        name.to_string()
    } else {
        parts.join("::")
    }
}

#[cfg(test)]
mod tests;
