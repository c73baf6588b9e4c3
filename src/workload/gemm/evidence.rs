//! What a GEMM build's SASS must show of its math: the MMAs its tile claims.

use super::GemmShape;
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

/// The Hopper rungs' own instructions, each with the opcode form the SASS must show: B's
/// multicast TMA loads in a cluster, the TMA stores of a staged epilogue, ping-pong's passes of
/// the turn (a named barrier's arrival, which no other Hopper build has).
fn rung_forms(shape: &GemmShape) -> Vec<&'static str> {
    let mut forms = Vec::new();
    if shape.cluster > 1 {
        forms.push("UTMALDG.2D.MULTICAST");
    }
    if shape.tma_store {
        forms.push("UTMASTG.2D");
    }
    if shape.pingpong {
        forms.push("BAR.ARV");
    }
    forms
}

/// Does a build's census show the math its tile claims (and, for f32, no tensor cores), and a
/// Hopper build the multicast loads and TMA stores its shape claims? HGMMA is listed with its
/// shape and types.
pub fn math_attestation(census: Option<&Census>, dtype: DType, shape: &GemmShape) -> Attestation {
    let Some(c) = census else {
        return Attestation::Unverified {
            reason: "no disassembler: the math was not checked".into(),
        };
    };
    let wgmma = shape.tile.wgmma;
    let rungs = rung_forms(shape);
    let missing: Vec<&str> = rungs
        .iter()
        .copied()
        .filter(|f| !c.opcodes.iter().any(|(op, _)| op == f))
        .collect();
    let mut seen: Vec<String> = ["HMMA", "LDSM", "FFMA"]
        .iter()
        .map(|op| format!("{op} x{}", c.count(op)))
        .collect();
    if wgmma {
        seen = c.forms("HGMMA");
        seen.extend(c.forms("USETMAXREG"));
        seen.push(format!("HMMA x{}", c.count("HMMA")));
        for op in ["UTMALDG", "UTMASTG"]
            .iter()
            .filter(|op| rungs.iter().any(|f| f.starts_with(*op)))
        {
            seen.extend(c.forms(op));
        }
    }
    let emitted = seen.join(", ");
    let want = compute_opcodes(dtype, wgmma);
    let tensor_cores = c.count("HMMA") + c.count("HGMMA");
    let clean = match dtype {
        DType::F32 => tensor_cores == 0,
        _ => !wgmma || c.count("HMMA") == 0,
    };
    if want.iter().all(|op| c.count(op) > 0) && clean && missing.is_empty() {
        Attestation::Attested { evidence: emitted }
    } else {
        Attestation::Mismatch {
            claimed: want
                .iter()
                .chain(&rungs)
                .copied()
                .collect::<Vec<_>>()
                .join(" + "),
            emitted,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::gemm::Tile;

    fn plain() -> GemmShape {
        GemmShape::plain(Tile::family(DType::Bf16))
    }

    fn hopper() -> GemmShape {
        GemmShape::plain(Tile::hopper(true))
    }

    #[test]
    fn math_must_match_the_precision() {
        let census = |ops: &[(&str, u32)]| Census {
            kernel: "k".into(),
            total: 1,
            opcodes: ops.iter().map(|(o, n)| (o.to_string(), *n)).collect(),
        };
        let mma = census(&[("HMMA.16816.F32.BF16", 64), ("LDSM.16.M88.4", 16)]);
        assert!(math_attestation(Some(&mma), DType::Bf16, &plain()).is_attested());
        assert!(!math_attestation(Some(&mma), DType::F32, &plain()).is_attested());
        assert!(!math_attestation(Some(&mma), DType::Bf16, &hopper()).is_attested());
        let ffma = census(&[("FFMA", 1024)]);
        assert!(math_attestation(Some(&ffma), DType::F32, &plain()).is_attested());
        let no_ldsm = census(&[("HMMA.16816.F32.BF16", 64), ("FFMA", 3)]);
        assert!(!math_attestation(Some(&no_ldsm), DType::F16, &plain()).is_attested());
        assert!(!math_attestation(None, DType::F32, &plain()).is_attested());
        let hgmma = census(&[("HGMMA.64x256x16.F32.BF16", 4), ("SYNCS.ARRIVE.TRANS64", 2)]);
        match math_attestation(Some(&hgmma), DType::Bf16, &hopper()) {
            Attestation::Attested { evidence } => {
                assert!(
                    evidence.contains("HGMMA.64x256x16.F32.BF16 x4"),
                    "{evidence}"
                )
            }
            other => panic!("{other:?}"),
        }
        assert!(!math_attestation(Some(&hgmma), DType::F32, &plain()).is_attested());
    }

    #[test]
    fn a_cluster_and_a_staged_epilogue_must_show_their_instructions() {
        let census = |ops: &[&str]| Census {
            kernel: "k".into(),
            total: 1,
            opcodes: ops
                .iter()
                .map(|o| (o.to_string(), 1))
                .chain([("HGMMA.64x256x16.F32.BF16".to_string(), 4)])
                .collect(),
        };
        let both = GemmShape {
            cluster: 2,
            tma_store: true,
            ..hopper()
        };
        let all = census(&["UTMALDG.2D", "UTMALDG.2D.MULTICAST", "UTMASTG.2D"]);
        match math_attestation(Some(&all), DType::Bf16, &both) {
            Attestation::Attested { evidence } => assert!(
                evidence.contains("UTMALDG.2D.MULTICAST x1") && evidence.contains("UTMASTG.2D x1"),
                "{evidence}"
            ),
            other => panic!("{other:?}"),
        }
        let unicast = census(&["UTMALDG.2D", "UTMASTG.2D"]);
        match math_attestation(Some(&unicast), DType::Bf16, &both) {
            Attestation::Mismatch { claimed, .. } => {
                assert!(claimed.contains("UTMALDG.2D.MULTICAST"), "{claimed}")
            }
            other => panic!("{other:?}"),
        }
        let from_registers = census(&["UTMALDG.2D", "UTMALDG.2D.MULTICAST"]);
        assert!(!math_attestation(Some(&from_registers), DType::Bf16, &both).is_attested());
        assert!(math_attestation(Some(&from_registers), DType::Bf16, &hopper()).is_attested());
    }
}
