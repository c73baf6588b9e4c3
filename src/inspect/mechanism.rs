//! The census in a reader's words: how bytes move from global to shared memory and which math
//! units run, with the instructions that say so; and the instruction families behind both,
//! Blackwell's included (tcgen05 MMA and its tensor-memory loads and stores, packed FP32).

use crate::evidence::sass::Census;

pub const TMA: [&str; 3] = ["UTMALDG", "UTMASTG", "UTMAREDG"];
pub const BULK: [&str; 2] = ["UBLKCP", "UBLKRED"];
pub const ASYNC_COPIES: [&str; 5] = ["LDGSTS", "UBLKCP", "UBLKRED", "UTMALDG", "UTMASTG"];
/// mma.sync: QMMA is the fp8 form (sm_89, sm_120), OMMA the fp4 one (sm_120's block-scaled
/// `kind::mxf4`).
pub const TENSOR_CORE: [&str; 6] = ["HMMA", "IMMA", "DMMA", "BMMA", "QMMA", "OMMA"];
pub const WARPGROUP: [&str; 4] = ["HGMMA", "IGMMA", "QGMMA", "BGMMA"];
/// tcgen05.mma (sm_100 and newer): the MMA reads shared memory and accumulates in tensor memory.
pub const TCGEN05: [&str; 5] = ["UTCHMMA", "UTCQMMA", "UTCIMMA", "UTCOMMA", "UTCMMA"];
/// tcgen05.ld / .st / .cp: tensor memory to and from registers, shared memory into it.
pub const TENSOR_MEMORY: [&str; 3] = ["LDTM", "STTM", "UTCCP"];
const SIMT: [&str; 12] = [
    "FFMA", "FMUL", "FADD", "FFMA2", "FMUL2", "FADD2", "HFMA2", "HMUL2", "HADD2", "DFMA", "DMUL",
    "DADD",
];

pub fn sum(c: &Census, bases: &[&str]) -> u32 {
    bases.iter().map(|b| c.count(b)).sum()
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
    if sum(c, &TMA) > 0 {
        parts.push(format!("TMA, cp.async.bulk.tensor ({})", forms(c, &TMA)));
    }
    if sum(c, &BULK) > 0 {
        parts.push(format!("bulk copy, cp.async.bulk ({})", forms(c, &BULK)));
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
    if sum(c, &TENSOR_MEMORY) > 0 {
        parts.push(format!(
            "tensor memory (tcgen05.ld/st/cp: {})",
            forms(c, &TENSOR_MEMORY)
        ));
    }
    parts.join("; ")
}

/// The math units the kernel uses, in words.
pub fn math(c: &Census) -> String {
    let mut parts = Vec::new();
    if sum(c, &TCGEN05) > 0 {
        parts.push(format!(
            "tcgen05 MMA, tensor memory ({})",
            forms(c, &TCGEN05)
        ));
    }
    if sum(c, &WARPGROUP) > 0 {
        parts.push(format!("warpgroup MMA, wgmma ({})", forms(c, &WARPGROUP)));
    }
    if sum(c, &TENSOR_CORE) > 0 {
        parts.push(format!(
            "tensor-core MMA, mma.sync ({})",
            forms(c, &TENSOR_CORE)
        ));
    }
    let n: Vec<String> = SIMT
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

/// Instructions that do nothing to memory or math: control, barriers, moves of constants.
fn inert(base: &str) -> bool {
    matches!(
        base,
        "EXIT"
            | "BRA"
            | "NOP"
            | "RET"
            | "BPT"
            | "CALL"
            | "LEPC"
            | "MOV"
            | "IMAD"
            | "ULDC"
            | "LDC"
            | "LDCU"
            | "UMOV"
            | "S2R"
            | "S2UR"
            | "CS2R"
            | "BSSY"
            | "BSYNC"
            | "WARPSYNC"
            | "YIELD"
            | "PRMT"
            | "SHF"
            | "IADD3"
            | "LEA"
            | "LOP3"
            | "ISETP"
            | "R2UR"
            | "MOV32I"
    )
}

/// An arch-guarded empty stub (`#if __CUDA_ARCH__ >= 900 ... #endif` compiled for an older
/// architecture, CUTLASS's "this kernel needs sm90a" body): no memory access and no math, at
/// most a printf and a trap. Its name still claims what the real build does.
pub fn stub(c: &Census) -> Option<String> {
    let real = c.opcodes.iter().filter(|(k, _)| !inert(base(k))).count();
    let small = c.total <= 64;
    (real == 0 && small).then(|| {
        let trap = c.count("BPT") > 0;
        let call = c.count("CALL") > 0;
        format!(
            "an empty stub for this architecture: {} instructions, no memory access or math{}",
            c.total,
            match (call, trap) {
                (true, true) => ", a call (a printf) and a trap",
                (false, true) => ", a trap",
                (true, false) => ", a call (a printf)",
                (false, false) => "",
            }
        )
    })
}

fn base(k: &str) -> &str {
    k.split('.').next().unwrap_or(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn census(ops: &[(&str, u32)]) -> Census {
        Census {
            kernel: "k".into(),
            total: ops.iter().map(|(_, n)| n).sum(),
            opcodes: ops.iter().map(|(o, n)| (o.to_string(), *n)).collect(),
        }
    }

    #[test]
    fn blackwell_families_are_named() {
        let c = census(&[
            ("UTCHMMA.2CTA", 52),
            ("LDTM.x32", 8),
            ("FFMA2", 32),
            ("UTMALDG.2D.2CTA", 9),
        ]);
        let m = math(&c);
        assert!(
            m.starts_with("tcgen05 MMA, tensor memory (UTCHMMA.2CTA x52)"),
            "{m}"
        );
        assert!(m.contains("CUDA cores (FFMA2 x32)"), "{m}");
        assert!(movement(&c).contains("tensor memory (tcgen05.ld/st/cp: LDTM.x32 x8)"));
        assert_eq!(stub(&c), None);
    }

    #[test]
    fn empty_stubs_are_told_from_kernels() {
        let c = census(&[("EXIT", 1), ("BRA", 1)]);
        assert!(stub(&c).unwrap().contains("2 instructions"));
        let p = census(&[
            ("MOV", 4),
            ("CALL.ABS.NOINC", 1),
            ("BPT.TRAP", 1),
            ("EXIT", 1),
        ]);
        assert!(stub(&p).unwrap().contains("a printf) and a trap"));
        // CUTLASS's sm90 kernel in an sm_80..sm_120a cubin of sgl-kernel: the printf's return
        // address comes from LEPC, its format from the constant bank
        let cutlass = census(&[
            ("LDC", 1),
            ("MOV", 1),
            ("ULDC.64", 1),
            ("CS2R", 1),
            ("IMAD.U32", 2),
            ("LDC.64", 1),
            ("LEPC", 1),
            ("CALL.ABS.NOINC", 1),
            ("EXIT", 1),
            ("BRA", 1),
            ("NOP", 13),
        ]);
        assert!(stub(&cutlass).unwrap().contains("a call (a printf)"));
        assert_eq!(stub(&census(&[("LDG.E", 1), ("EXIT", 1)])), None);
        assert_eq!(stub(&census(&[("FADD", 1), ("EXIT", 1)])), None);
    }
}
