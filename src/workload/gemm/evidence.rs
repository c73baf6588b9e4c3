//! What a GEMM build's SASS must show of its math: the MMAs its tile claims.

use crate::dtype::DType;
use crate::evidence::sass::{Attestation, Census};

/// The math the SASS must show: warpgroup MMAs (HGMMA) on Hopper tiles, tensor-core MMAs fed by
/// ldmatrix for f16/bf16, FFMA for f32.
fn compute_opcodes(dtype: DType, wgmma: bool) -> &'static [&'static str] {
    match dtype {
        DType::F32 => &["FFMA"],
        _ if wgmma => &["HGMMA"],
        _ => &["HMMA", "LDSM"],
    }
}

/// Does a build's census show the math its tile claims (and, for f32, no tensor cores)? HGMMA is
/// listed with its shape and types.
pub fn math_attestation(census: Option<&Census>, dtype: DType, wgmma: bool) -> Attestation {
    let Some(c) = census else {
        return Attestation::Unverified {
            reason: "no disassembler: the math was not checked".into(),
        };
    };
    let mut seen: Vec<String> = ["HMMA", "LDSM", "FFMA"]
        .iter()
        .map(|op| format!("{op} x{}", c.count(op)))
        .collect();
    if wgmma {
        seen = c.forms("HGMMA");
        seen.extend(c.forms("USETMAXREG"));
        seen.push(format!("HMMA x{}", c.count("HMMA")));
    }
    let emitted = seen.join(", ");
    let want = compute_opcodes(dtype, wgmma);
    let tensor_cores = c.count("HMMA") + c.count("HGMMA");
    let clean = match dtype {
        DType::F32 => tensor_cores == 0,
        _ => !wgmma || c.count("HMMA") == 0,
    };
    if want.iter().all(|op| c.count(op) > 0) && clean {
        Attestation::Attested { evidence: emitted }
    } else {
        Attestation::Mismatch {
            claimed: want.join(" + "),
            emitted,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn math_must_match_the_precision() {
        let census = |ops: &[(&str, u32)]| Census {
            kernel: "k".into(),
            total: 1,
            opcodes: ops.iter().map(|(o, n)| (o.to_string(), *n)).collect(),
        };
        let mma = census(&[("HMMA.16816.F32.BF16", 64), ("LDSM.16.M88.4", 16)]);
        assert!(math_attestation(Some(&mma), DType::Bf16, false).is_attested());
        assert!(!math_attestation(Some(&mma), DType::F32, false).is_attested());
        assert!(!math_attestation(Some(&mma), DType::Bf16, true).is_attested());
        let ffma = census(&[("FFMA", 1024)]);
        assert!(math_attestation(Some(&ffma), DType::F32, false).is_attested());
        let no_ldsm = census(&[("HMMA.16816.F32.BF16", 64), ("FFMA", 3)]);
        assert!(!math_attestation(Some(&no_ldsm), DType::F16, false).is_attested());
        assert!(!math_attestation(None, DType::F32, false).is_attested());
        let hgmma = census(&[("HGMMA.64x256x16.F32.BF16", 4), ("SYNCS.ARRIVE.TRANS64", 2)]);
        match math_attestation(Some(&hgmma), DType::Bf16, true) {
            Attestation::Attested { evidence } => {
                assert!(
                    evidence.contains("HGMMA.64x256x16.F32.BF16 x4"),
                    "{evidence}"
                )
            }
            other => panic!("{other:?}"),
        }
        assert!(!math_attestation(Some(&hgmma), DType::F32, false).is_attested());
    }
}
