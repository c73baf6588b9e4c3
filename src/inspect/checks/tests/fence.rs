//! fence.proxy.async: TMA and bulk stores, MMA operands, and what the store's address says.

use super::*;
use crate::inspect::checks::fence::NAME as FENCE;

/// Each thread stores its word at the window's start, fences, syncs; thread 0 TMA-stores.
fn tma_store(fence: &str, read: &str) -> String {
    with_prologue(&format!(
        "
    LEA R5, R0, UR4, 0x2
    STS [R5], R7
    {fence}
    BAR.SYNC.DEFER_BLOCKING 0x0
    ISETP.NE.AND P0, PT, R0, RZ, PT
    @P0 EXIT
    {read}
    EXIT
"
    ))
}

const TMA: &str = "UTMASTG.2D [UR4], [UR8]";

#[test]
fn async_proxy_reads_need_the_proxy_fence() {
    assert_eq!(
        status(FENCE, &tma_store("FENCE.VIEW.ASYNC.S", TMA)),
        Status::Holds
    );
    let c = hazard(
        FENCE,
        &tma_store("NOP", TMA),
        "UTMASTG.2D at 0x00d0 reads shared memory through the async proxy",
    );
    assert_eq!(c.findings[0].sites[0].offset, 0x80);
    // a fence only some threads take does not order the others' stores
    assert_eq!(
        status(FENCE, &tma_store("@P1 FENCE.VIEW.ASYNC.S", TMA)),
        Status::Hazard
    );
    // a bulk store reads the bytes its size says
    let bulk = "UMOV UR5, 0x100\n    UBLKCP.G.S [UR6], [UR4], UR5";
    assert_eq!(status(FENCE, &tma_store("NOP", bulk)), Status::Hazard);
    // a bulk load (global -> shared) reads no shared memory
    let load = "UBLKCP.S.G [UR4], [UR6], UR5";
    assert_eq!(
        status(FENCE, &tma_store("NOP", load)),
        Status::NotApplicable
    );
}

#[test]
fn what_the_store_wrote_decides() {
    // the stores end below a TMA store of the next 4 KiB
    let later = tma_store("NOP", "UTMASTG.2D [UR4+0x1000], [UR8]");
    assert_eq!(status(FENCE, &later), Status::Holds);
    // stores past the TMA store's first 16 bytes: whether its box reaches them is not known
    let past = tma_store("NOP", TMA).replace("STS [R5], R7", "STS [R5+0x100], R7");
    found(
        FENCE,
        &past,
        Status::Undecided,
        "how far that read reaches is not known",
    );
    // a wgmma reads through a descriptor
    let gmma = tma_store("NOP", "HGMMA.64x8x16.F32 R24, gdesc[UR4], RZ, !UPT, gsb0");
    found(FENCE, &gmma, Status::Undecided, "descriptor");
}

#[test]
fn sites_carry_the_source_line() {
    let body = with_prologue(
        "
    LEA R5, R0, UR4, 0x2
//## File \"k.cu\", line 7
    STS [R5], R7
//## File \"k.cu\", line 42 inlined at \"k.cu\", line 9
//## File \"k.cu\", line 9
    UTMASTG.2D [UR4], [UR8]
    EXIT
",
    );
    let c = run(FENCE, &body);
    assert_eq!(c.status, Status::Hazard);
    let s = &c.findings[0].sites;
    assert_eq!(s[0].source.as_deref(), Some("k.cu:7"));
    assert_eq!(s[1].source.as_deref(), Some("k.cu:9 (inlined k.cu:42)"));
    assert!(
        c.detail.contains("0x0090 (k.cu:9 (inlined k.cu:42))"),
        "{}",
        c.detail
    );
}
