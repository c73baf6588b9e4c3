//! Names, source lines and censuses against the claims they make or attest.

use super::*;

#[test]
fn source_lines_claim_what_they_call() {
    let c = |t: &str| from_line(t).map(|(c, _)| c);
    assert_eq!(
        c(r#"asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(a), "l"(b));"#),
        Some(Claim::Cpasync { bytes: Some(16) })
    );
    assert_eq!(
        c(r#"asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" :: "n"(BYTES));"#),
        Some(Claim::Cpasync { bytes: None })
    );
    assert_eq!(
        c("cuda::memcpy_async(block, tile, in, sizeof(u16) * n, pipe);"),
        Some(Claim::Async)
    );
    assert_eq!(
        c(r#""cp.async.bulk.tensor.2d.shared::cluster.global.tile [%0], [%1, {%2, %3}], [%4];""#),
        Some(Claim::Tma)
    );
    assert_eq!(
        c(r#""cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0]""#),
        Some(Claim::Bulk)
    );
    assert_eq!(c(r#"asm("cp.async.bulk.commit_group;");"#), None);
    assert_eq!(c("wmma::mma_sync(acc, a, b, acc);"), Some(Claim::Mma));
    assert_eq!(
        c(r#"asm volatile("tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3;""#),
        Some(Claim::Tcgen05)
    );
    assert_eq!(c("// cuda::memcpy_async would be faster"), None);
    assert_eq!(c("out[i] = tile[i];"), None);
}

#[test]
fn claims_parse_and_refuse_with_the_list() {
    assert_eq!(
        "cpasync8".parse::<Claim>().unwrap(),
        Claim::Cpasync { bytes: Some(8) }
    );
    assert_eq!("TMA".parse::<Claim>().unwrap(), Claim::Tma);
    let e = "ldgsts".parse::<Claim>().unwrap_err().to_string();
    assert!(
        e.contains("unknown claim 'ldgsts'") && e.contains(ALLOWED),
        "{e}"
    );
}

fn census(ops: &[(&str, u32)]) -> Census {
    Census {
        kernel: "k".into(),
        total: ops.iter().map(|(_, n)| n).sum(),
        opcodes: ops.iter().map(|(o, n)| (o.to_string(), *n)).collect(),
    }
}

/// What a kernel without a pipelined loop keeps.
fn flat() -> Depth {
    Depth {
        stages: Some(1),
        detail: "no loop: nothing is pipelined".into(),
    }
}

#[test]
fn stage_claims_are_judged_by_the_stages_kept() {
    let stated = |stages| Stated {
        claim: Claim::Stages { stages },
        from: "k.json: num_stages=3".into(),
        arch: None,
    };
    let c = census(&[("LDG.E", 1)]);
    let v = attest(&stated(3), &c, &flat());
    assert_eq!(
        v.label(),
        "CONTRADICTED: claimed 3 stages, emitted 1: no loop: nothing is pipelined"
    );
    assert!(attest(&stated(1), &c, &flat()).attested());
    let unknown = Depth {
        stages: None,
        detail: "the groups grow without bound".into(),
    };
    let v = attest(&stated(3), &c, &unknown);
    assert_eq!(v.outcome, Outcome::Undecided);
    assert_eq!(
        v.label(),
        "undecided: claimed 3 stages; the groups grow without bound"
    );
    assert_eq!(Claim::Stages { stages: 3 }.short(), "3 stages");
    assert_eq!(Claim::Cpasync { bytes: Some(16) }.short(), "cpasync16");
}

#[test]
fn verdicts_say_what_was_emitted() {
    let stated = |claim| Stated {
        claim,
        from: "--claim".into(),
        arch: None,
    };
    let sync = census(&[("LDG.E.128", 1), ("STS.128", 1), ("FFMA", 4)]);
    let v = attest(&stated(Claim::Async), &sync, &flat());
    assert_eq!(v.outcome, Outcome::Contradicted);
    assert_eq!(
        v.label(),
        "CONTRADICTED: claimed an asynchronous copy (LDGSTS, UBLKCP or UTMALDG), emitted synchronous: global loads into registers (LDG 16 B) then shared stores (STS.128 x1)"
    );
    assert!(attest(&stated(Claim::Sync), &sync, &flat()).attested());
    let v = attest(&stated(Claim::Mma), &sync, &flat());
    assert_eq!(v.emitted, "CUDA cores (FFMA x4)");
    assert_eq!(
        mechanism::math(&census(&[("MUFU.RCP", 2)])),
        "special-function unit (MUFU.RCP x2)"
    );
    assert_eq!(
        mechanism::math(&census(&[("IADD3", 2)])),
        "no floating-point math"
    );
    let cp = census(&[("LDGSTS.E.BYPASS.128", 8), ("LDGDEPBAR", 1)]);
    assert!(attest(&stated(Claim::Cpasync { bytes: Some(16) }), &cp, &flat()).attested());
    assert!(!attest(&stated(Claim::Cpasync { bytes: Some(4) }), &cp, &flat()).attested());
    assert!(!attest(&stated(Claim::Sync), &cp, &flat()).attested());
    assert_eq!(
        mechanism::movement(&cp),
        "cp.async 16 B .cg, L2 only (LDGSTS.E.BYPASS.128 x8)"
    );
    let hopper = census(&[("UTMALDG.2D", 1), ("HGMMA.64x8x16.F32", 2)]);
    assert!(attest(&stated(Claim::Tma), &hopper, &flat()).attested());
    assert!(!attest(&stated(Claim::Bulk), &hopper, &flat()).attested());
    assert!(attest(&stated(Claim::Wgmma), &hopper, &flat()).attested());
    assert!(!attest(&stated(Claim::Mma), &hopper, &flat()).attested());
    // sm_120's fp8 and block-scaled fp4 mma.sync (sgl-kernel's sm_120a CUTLASS GEMMs)
    let sm120 = census(&[
        ("QMMA.16832.F32.E4M3.E4M3", 256),
        ("OMMA.SF.16864.F32.E2M1.E2M1.UE4M3.4X", 8),
    ]);
    assert!(attest(&stated(Claim::Mma), &sm120, &flat()).attested());
    assert_eq!(
        mechanism::math(&sm120),
        "tensor-core MMA, mma.sync (QMMA.16832.F32.E4M3.E4M3 x256, OMMA.SF.16864.F32.E2M1.E2M1.UE4M3.4X x8)"
    );
    let blackwell = census(&[("UTCHMMA.2CTA", 4), ("UTMALDG.2D.2CTA", 1)]);
    assert!(attest(&stated(Claim::Tcgen05), &blackwell, &flat()).attested());
    assert!(!attest(&stated(Claim::Wgmma), &blackwell, &flat()).attested());
    let v = Verdict::not_judged(&stated(Claim::Tma), "an empty stub");
    assert_eq!(
        (v.outcome, v.label().as_str()),
        (Outcome::NotJudged, "not judged: an empty stub")
    );
}
