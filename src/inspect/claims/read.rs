//! Claims read where a kernel states them: the words of its name (`copy_cpasync16`,
//! `_attn_fwd_tma_ws`), the CUTLASS and CuTe atoms its template arguments name
//! (`cute::SM90_TMA_LOAD`, `MainloopSm90TmaGmmaWarpSpecialized`, `SM80_CP_ASYNC_CACHEGLOBAL`),
//! and the source lines its SASS came from (inline PTX, `cuda::memcpy_async`).

use super::{Claim, Stated};
use crate::inspect::names::{demangle, display_name, words};

fn push(out: &mut Vec<Stated>, s: Stated) {
    if !out.iter().any(|o| o.claim == s.claim) {
        out.push(s);
    }
}

/// The claims of a name's words: async / cpasync[N] / bulk / tma / wgmma / mma / tcgen05.
fn from_words(name: &str) -> Vec<Stated> {
    let short = display_name(name);
    let w = words(&short);
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
            "tcgen05" | "umma" => Claim::Tcgen05,
            _ => continue,
        };
        push(
            &mut out,
            Stated {
                claim,
                from: format!("the name {short}"),
                arch: None,
            },
        );
    }
    out
}

/// The claims one CUTLASS/CuTe identifier makes: copy atoms (`SM90_TMA_LOAD_MULTICAST`,
/// `SM90_BULK_COPY_G2S`, `SM80_CP_ASYNC_CACHEGLOBAL`), MMA atoms (`SM90_64x128x16_F32BF16BF16_SS`,
/// `MMA_64x64x16_F32F16F16_SS`, `SM80_16x8x16_F32F16F16F32_TN`, `SM100_MMA_F16BF16_SS`) and
/// collective mainloops (`MainloopSm90TmaGmmaWarpSpecialized`, `MainloopSm80CpAsync`,
/// `MainloopSm100TmaUmmaWarpSpecialized`, `MmaMultistage`).
fn from_identifier(id: &str) -> Vec<Claim> {
    let upper = id.to_ascii_uppercase();
    let mut out = Vec::new();
    let sm = |p: &str| {
        upper
            .strip_prefix("SM")
            .and_then(|r| r.split_once('_'))
            .is_some_and(|(n, rest)| n.chars().all(|c| c.is_ascii_digit()) && rest.starts_with(p))
    };
    if sm("TMA_") || sm("2SM_TMA") {
        out.push(Claim::Tma);
    }
    if sm("BULK_COPY") {
        out.push(Claim::Bulk);
    }
    if sm("CP_ASYNC") {
        out.push(Claim::Cpasync { bytes: None });
    }
    let shape = |s: &str| {
        let mut it = s.split('_').next().unwrap_or("").split('x');
        it.clone().count() == 3
            && it.all(|d| !d.is_empty() && d.chars().all(|c| c.is_ascii_digit()))
    };
    if let Some(rest) = id.strip_prefix("SM90_").or_else(|| id.strip_prefix("MMA_"))
        && shape(rest)
        && rest.starts_with("64x")
    {
        out.push(Claim::Wgmma);
    }
    if ["SM70_", "SM75_", "SM80_", "SM89_", "SM120_"]
        .iter()
        .any(|arch| id.strip_prefix(arch).is_some_and(shape))
    {
        out.push(Claim::Mma);
    }
    if upper.starts_with("SM100_MMA") || upper.starts_with("SM100_2SM_MMA") {
        out.push(Claim::Tcgen05);
    }
    if let Some(m) = id.strip_prefix("Mainloop") {
        if m.contains("Tma") {
            out.push(Claim::Tma);
        }
        if m.contains("CpAsync") {
            out.push(Claim::Cpasync { bytes: None });
        }
        if m.contains("Gmma") {
            out.push(Claim::Wgmma);
        }
        if m.contains("Umma") {
            out.push(Claim::Tcgen05);
        }
    }
    if id == "MmaMultistage" {
        out.push(Claim::Cpasync { bytes: None });
    }
    out
}

/// The architecture a CUTLASS/CuTe identifier is written for: `SM120_16x8x32_TN` and
/// `MainloopSm100TmaUmmaWarpSpecialized` name theirs.
fn arch_of(id: &str) -> Option<u32> {
    let upper = id.to_ascii_uppercase();
    let rest = upper.strip_prefix("MAINLOOP").unwrap_or(&upper);
    let digits: String = rest
        .strip_prefix("SM")?
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// The claims a kernel's name makes: its words, then the CUTLASS/CuTe atoms of its template
/// arguments.
pub fn from_name(name: &str) -> Vec<Stated> {
    let mut out = from_words(name);
    let Some(full) = demangle(name) else {
        return out;
    };
    for id in full.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
        for claim in from_identifier(id) {
            push(
                &mut out,
                Stated {
                    claim,
                    from: format!("the template argument {id}"),
                    arch: arch_of(id),
                },
            );
        }
    }
    out
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
    if code.contains("tcgen05.mma") {
        return Some((Claim::Tcgen05, "tcgen05.mma"));
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
                    arch: None,
                },
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(n: &str) -> Vec<Claim> {
        from_name(n).into_iter().map(|s| s.claim).collect()
    }

    #[test]
    fn cutlass_and_cute_atoms_claim_their_mechanism() {
        let ids = |id: &str| from_identifier(id);
        assert_eq!(ids("SM90_TMA_LOAD_MULTICAST"), [Claim::Tma]);
        assert_eq!(ids("SM100_TMA_2SM_LOAD_NOSPLIT"), [Claim::Tma]);
        assert_eq!(ids("SM90_BULK_COPY_G2S"), [Claim::Bulk]);
        assert_eq!(
            ids("SM80_CP_ASYNC_CACHEGLOBAL"),
            [Claim::Cpasync { bytes: None }]
        );
        assert_eq!(ids("SM90_64x128x16_F32BF16BF16_SS"), [Claim::Wgmma]);
        assert_eq!(ids("MMA_64x64x16_F32F16F16_SS"), [Claim::Wgmma]);
        assert_eq!(ids("SM80_16x8x16_F32F16F16F32_TN"), [Claim::Mma]);
        assert_eq!(ids("SM100_MMA_F16BF16_SS"), [Claim::Tcgen05]);
        assert_eq!(
            ids("MainloopSm90TmaGmmaWarpSpecialized"),
            [Claim::Tma, Claim::Wgmma]
        );
        assert_eq!(
            ids("MainloopSm90CpAsyncGmmaWarpSpecialized"),
            [Claim::Cpasync { bytes: None }, Claim::Wgmma]
        );
        assert_eq!(
            ids("MainloopSm100TmaUmmaWarpSpecialized"),
            [Claim::Tma, Claim::Tcgen05]
        );
        assert!(
            ids("SM90").is_empty() && ids("Sm90").is_empty() && ids("SM75_U32x4_LDSM_N").is_empty()
        );
        assert_eq!(arch_of("SM120_16x8x32_TN"), Some(120));
        assert_eq!(arch_of("MainloopSm100TmaUmmaWarpSpecialized"), Some(100));
        assert_eq!(arch_of("MmaMultistage"), None);
    }

    #[test]
    fn names_claim_in_words_and_template_arguments() {
        assert_eq!(claims("copyAsyncLargeChunk"), [Claim::Async]);
        assert_eq!(
            claims("copy_cpasync16"),
            [Claim::Cpasync { bytes: Some(16) }]
        );
        assert_eq!(claims("cp_async_tile"), [Claim::Cpasync { bytes: None }]);
        assert_eq!(claims("gemm_tma_wgmma"), [Claim::Tma, Claim::Wgmma]);
        assert_eq!(claims("hgemm_mma_sync"), [Claim::Mma]);
        assert!(claims("asynchronous_gemma_bulky").is_empty());
        assert!(claims("_Z10stage_rowsPKtPti").is_empty());
        assert_eq!(
            from_name("_Z18MatrixMulAsyncCopyPfS_")[0].from,
            "the name MatrixMulAsyncCopy"
        );
        // cutlass::device_kernel<...SM90_TMA_LOAD...>
        let k = "_ZN7cutlass13device_kernelIN4cute13SM90_TMA_LOADEEEvNT_6ParamsE";
        let s = from_name(k);
        assert_eq!(s.len(), 1, "{s:?}");
        assert_eq!(s[0].claim, Claim::Tma);
        assert_eq!(s[0].from, "the template argument SM90_TMA_LOAD");
    }
}
