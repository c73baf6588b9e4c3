//! The SASS parser, census and attestation on listings recorded on the H200 (nvdisasm of CUDA 13.0
//! on NVRTC 13.0 cubins, tests/fixtures/sass/TOOLS; direct's without a GPU, by NVRTC and nvdisasm
//! 13.5 with `tilepipe sass direct --arch sm_90`), including claims that must not attest.

use tilepipe::evidence::sass::protocol::init_published;
use tilepipe::evidence::sass::{
    Attestation, Census, EXCERPT_LINES, SassEvidence, attest, bounded_excerpt, examine_listing,
    excerpt, parse,
};
use tilepipe::pipeline::Claim;

fn listing(name: &str) -> String {
    let path = format!(
        "{}/tests/fixtures/sass/{name}.bf16.sass",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn census(name: &str) -> Census {
    let f = parse::parse(&listing(name));
    Census::of(
        f.iter()
            .find(|f| f.name == "tilepipe_rmsnorm")
            .expect("the kernel is in the listing"),
    )
}

#[test]
fn cp_async_16_bytes_is_ldgsts_bypass_128() {
    let c = census("cpasync-cg16-s2");
    assert!(c.ldgsts(16, true) > 0, "{:?}", c.forms("LDGSTS"));
    assert_eq!(c.forms("LDGSTS"), vec!["LDGSTS.E.BYPASS.128 x8"]);
    assert!(c.count("LDGDEPBAR") > 0 && c.count("DEPBAR") > 0);
    assert!(
        attest(
            Claim::Ldgsts {
                bytes: 16,
                bypass: true
            },
            &c
        )
        .is_attested()
    );
    // the same SASS does not attest other widths or the L1-allocating form
    assert!(
        !attest(
            Claim::Ldgsts {
                bytes: 4,
                bypass: false
            },
            &c
        )
        .is_attested()
    );
    assert!(
        !attest(
            Claim::Ldgsts {
                bytes: 16,
                bypass: false
            },
            &c
        )
        .is_attested()
    );
    assert!(!attest(Claim::Synchronous, &c).is_attested());
}

#[test]
fn four_byte_cp_async_has_no_width_suffix() {
    let c = census("cpasync-ca4-s2");
    assert_eq!(c.forms("LDGSTS"), vec!["LDGSTS.E x32"]);
    assert!(
        attest(
            Claim::Ldgsts {
                bytes: 4,
                bypass: false
            },
            &c
        )
        .is_attested()
    );
}

#[test]
fn a_cp_async_claim_against_plain_loads_does_not_attest() {
    let c = census("sync");
    assert_eq!(c.count("LDGSTS"), 0);
    assert!(attest(Claim::Synchronous, &c).is_attested());
    match attest(
        Claim::Ldgsts {
            bytes: 16,
            bypass: true,
        },
        &c,
    ) {
        Attestation::Mismatch { claimed, emitted } => {
            assert!(claimed.contains("LDGSTS.BYPASS.128"), "{claimed}");
            assert!(
                emitted.contains("synchronous LDG (16 B) + STS"),
                "{emitted}"
            );
        }
        other => panic!("attested cp.async on synchronous SASS: {other:?}"),
    }
}

#[test]
fn direct_loads_the_tile_into_registers_and_stores_none_of_it() {
    let c = census("direct");
    // the tile's two vectors per thread, read by each of the body's two passes, and gamma's two
    assert_eq!(
        c.forms("LDG"),
        vec!["LDG.E.128 x4", "LDG.E.128.CONSTANT x2"]
    );
    // the only shared store is the row reduction's 4-byte partial
    assert_eq!(c.forms("STS"), vec!["STS x1"]);
    assert_eq!(
        attest(Claim::Direct, &c),
        Attestation::Attested {
            evidence: "LDG.E.128 x4, LDG.E.128.CONSTANT x2, STS x1".into()
        }
    );
    assert!(!attest(Claim::AnyAsync, &c).is_attested());
}

/// The Direct claim against `listing`: the mismatch's "emitted" text.
fn direct_mismatch(listing: &str) -> String {
    match attest(Claim::Direct, &Census::of(&kernel(listing))) {
        Attestation::Mismatch { claimed, emitted } => {
            assert!(claimed.contains("no STS.128"), "{claimed}");
            emitted
        }
        other => panic!("attested direct loads: {other:?}"),
    }
}

#[test]
fn a_staged_tile_fails_the_direct_claim() {
    // staged through registers (LDG + STS.128), by cp.async (LDGSTS), by TMA (UTMALDG)
    for (name, found) in [
        ("sync", "STS.128 x4"),
        ("cpasync-cg16-s2", "LDGSTS.E.BYPASS.128 x8"),
        ("tma-s3", "UTMALDG.3D"),
    ] {
        let emitted = direct_mismatch(&listing(name));
        assert!(emitted.contains(found), "{name}: {emitted}");
    }
    // direct's own listing with a tile store, a cp.async, or the tile read through a generic
    // pointer (gamma's LDG.E.128.CONSTANT alone must not attest it) planted in it
    let direct = listing("direct");
    for (from, to, found) in [
        (
            "@!P1 STS [R8], R13 ;",
            "@!P1 STS.128 [R8], R12 ;",
            "STS.128 x1",
        ),
        (
            "@!P1 LDG.E.128 R8, desc[UR12][R32.64] ;",
            "@!P1 LDGSTS.E.BYPASS.128 [R8], desc[UR12][R32.64] ;",
            "LDGSTS.E.BYPASS.128 x1",
        ),
        ("LDG.E.128 R", "LD.E.128 R", "LD.E.128 x4"),
    ] {
        assert!(direct.contains(from), "{from}");
        let emitted = direct_mismatch(&direct.replace(from, to));
        assert!(emitted.contains(found), "{to}: {emitted}");
    }
}

#[test]
fn high_level_api_lowerings_are_read_not_assumed() {
    // cuda::memcpy_async + cuda::barrier with aligned_size_t<16> became a bulk copy on sm_90
    let bar = census("mca-barrier-a16-s2");
    assert!(bar.count("UBLKCP") > 0 && bar.count("LDGSTS") == 0);
    assert!(attest(Claim::AnyAsync, &bar).is_attested());
    // with only the element's 2-byte alignment known it fell back to 2-byte loads and stores
    let elem = census("mca-pipeline-elem-s2");
    assert_eq!(
        elem.count("LDGSTS") + elem.count("UBLKCP") + elem.count("UTMALDG"),
        0
    );
    assert!(elem.ldg_widths().contains(&2));
    let a = attest(Claim::AnyAsync, &elem);
    assert!(
        a.label().starts_with("claimed an asynchronous copy"),
        "{}",
        a.label()
    );
}

#[test]
fn tma_and_bulk_show_their_instructions() {
    let tma = census("tma-s3");
    assert!(
        tma.forms("UTMALDG")
            .iter()
            .any(|f| f.starts_with("UTMALDG.3D"))
    );
    assert!(attest(Claim::TensorCopy, &tma).is_attested());
    assert!(!attest(Claim::BulkCopy, &tma).is_attested());
    assert!(tma.count("SYNCS") > 0, "mbarrier operations");
    let bulk = census("bulk-s2");
    assert!(attest(Claim::BulkCopy, &bulk).is_attested());
    assert!(!attest(Claim::TensorCopy, &bulk).is_attested());
}

#[test]
fn missing_kernel_is_unverified_and_excerpt_marks_movement() {
    let ev = examine_tma("other_kernel");
    assert!(matches!(ev.attestation, Attestation::Unverified { .. }));
    assert!(!ev.attestation.is_attested());
    let x = excerpt(&listing("cpasync-cg16-s2"), 1);
    assert!(
        x.lines()
            .any(|l| l.starts_with(">>") && l.contains("LDGSTS.E.BYPASS.128"))
    );
    assert!(x.contains("..."));
}

/// The evidence of `kernel` in tma-s3's listing, as a run records it.
fn examine_tma(kernel: &str) -> SassEvidence {
    examine_listing(
        Some("nvdisasm".into()),
        listing("tma-s3"),
        kernel,
        Claim::TensorCopy,
    )
}

#[test]
fn results_keep_a_bounded_excerpt_and_not_the_listing() {
    let ev = examine_tma("tilepipe_rmsnorm");
    let x = ev
        .excerpt
        .as_deref()
        .expect("an examined kernel keeps its excerpt");
    assert!(
        x.lines()
            .any(|l| l.starts_with(">>") && l.contains("UTMALDG.3D"))
    );
    assert!(x.lines().count() <= EXCERPT_LINES);
    let json = serde_json::to_value(&ev).unwrap();
    assert_eq!(json["excerpt"].as_str(), Some(x));
    assert!(json.get("listing").is_none());
    // 4-byte cp.async moves a row in 32 copies: more movement lines than are kept
    let whole = excerpt(&listing("cpasync-ca4-s2"), 1);
    let cut = bounded_excerpt(&listing("cpasync-ca4-s2"), 20);
    assert_eq!(cut.lines().count(), 21);
    let left = whole.lines().count() - 20;
    assert!(
        cut.lines()
            .last()
            .unwrap()
            .contains(&format!("{left} more lines")),
        "{cut}"
    );
    assert_eq!(
        bounded_excerpt(&listing("sync"), 1000),
        excerpt(&listing("sync"), 1)
    );
}

fn kernel(listing: &str) -> parse::Function {
    parse::parse(listing)
        .into_iter()
        .find(|f| f.name == "tilepipe_rmsnorm")
        .expect("the kernel is in the listing")
}

#[test]
fn mbarrier_init_is_published_before_any_wait() {
    for name in [
        "tma-s3",
        "bulk-s2",
        "mca-barrier-a16-s2",
        "mca-pipeline-elem-s2",
    ] {
        let v = init_published(&kernel(&listing(name))).expect("these kernels init mbarriers");
        assert!(v.is_ok(), "{name}: {v:?}");
    }
    // kernels without mbarriers have nothing to publish
    assert_eq!(init_published(&kernel(&listing("cpasync-cg16-s2"))), None);
    assert_eq!(init_published(&kernel(&listing("sync"))), None);
}

#[test]
fn a_missing_barrier_after_mbarrier_init_is_reported() {
    // the recorded TMA kernel with its block barrier taken out
    let without: String = listing("tma-s3")
        .lines()
        .filter(|l| !l.contains("BAR.SYNC.DEFER_BLOCKING 0x0 ;"))
        .collect::<Vec<_>>()
        .join("\n");
    let e = init_published(&kernel(&without)).unwrap().unwrap_err();
    assert!(
        e.contains("no block barrier between the last mbarrier init at 0x04c0"),
        "{e}"
    );
    // a named barrier over the consumers alone does not publish to the whole block
    let named = listing("tma-s3").replace(
        "BAR.SYNC.DEFER_BLOCKING 0x0 ;",
        "BAR.SYNC.DEFER_BLOCKING 0x1, 0x100 ;",
    );
    assert!(init_published(&kernel(&named)).unwrap().is_err());
}
