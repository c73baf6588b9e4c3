//! The stage count on small listings shaped as Triton and CUDA C++ emit their rings: the depth
//! each keeps, the same loop with a stronger wait keeping fewer, and each undecided case.

use super::*;
use crate::inspect::checks::tests::listing;
use crate::inspect::listing::kernels;

fn depth_of_listing(body: &str) -> Depth {
    let k = kernels(&listing(body)).remove(0);
    depth(&k, &Cfg::of(&k))
}

fn stages(body: &str) -> u32 {
    let d = depth_of_listing(body);
    d.stages
        .unwrap_or_else(|| panic!("undecided: {}", d.detail))
}

fn undecided(body: &str, text: &str) {
    let d = depth_of_listing(body);
    assert_eq!(d.stages, None, "{}", d.detail);
    assert!(d.detail.contains(text), "{}", d.detail);
}

/// Triton's order: two tiles issued before the loop; each trip waits for the oldest (leaving
/// WAIT groups in flight), reads it, then issues the tile two ahead.
fn triton_ring(wait: u32) -> String {
    format!(
        "
        LDGSTS.E.BYPASS.128 [R2], desc[UR4][R4.64]
        LDGDEPBAR
        LDGSTS.E.BYPASS.128 [R2+0x800], desc[UR4][R6.64]
        LDGDEPBAR
        @!P0 BRA `(.L_x_1)
        .L_x_0:
        DEPBAR.LE SB0, {wait:#x}
        BAR.SYNC.DEFER_BLOCKING 0x0
        LDS.128 R8, [R2]
        BAR.SYNC.DEFER_BLOCKING 0x0
        @P1 LDGSTS.E.BYPASS.128 [R3], desc[UR4][R4.64]
        LDGDEPBAR
        @P2 BRA `(.L_x_0)
        .L_x_1:
        DEPBAR.LE SB0, 0x0
        EXIT
        "
    )
}

#[test]
fn a_triton_ring_keeps_two_tiles_ahead_of_the_one_it_reads() {
    assert_eq!(stages(&triton_ring(1)), 3);
    let d = depth_of_listing(&triton_ring(1));
    assert!(
        d.detail
            .contains("2 cp.async group(s) in flight, 1 per trip"),
        "{}",
        d.detail
    );
    // the same loop waiting for everything keeps one tile ahead, and so two stages
    assert_eq!(stages(&triton_ring(0)), 2);
}

#[test]
fn two_groups_per_tile_count_as_one_trip() {
    // A and B committed as two groups per tile (Triton's matmul): 4 in flight is 2 trips
    let body = "
        LDGSTS.E.BYPASS.128 [R2], desc[UR4][R4.64]
        LDGDEPBAR
        LDGSTS.E.BYPASS.128 [R2+0x4000], desc[UR4][R6.64]
        LDGDEPBAR
        LDGSTS.E.BYPASS.128 [R2+0x800], desc[UR4][R4.64]
        LDGDEPBAR
        LDGSTS.E.BYPASS.128 [R2+0x4800], desc[UR4][R6.64]
        LDGDEPBAR
        .L_x_0:
        DEPBAR.LE SB0, 0x2
        BAR.SYNC.DEFER_BLOCKING 0x0
        HGMMA.64x128x16.F32 R24, gdesc[UR8].tnspB, R24, gsb0
        LDGSTS.E.BYPASS.128 [R3], desc[UR4][R4.64]
        LDGDEPBAR
        LDGSTS.E.BYPASS.128 [R3+0x4000], desc[UR4][R6.64]
        LDGDEPBAR
        @P2 BRA `(.L_x_0)
        EXIT
    ";
    assert_eq!(stages(body), 3);
}

#[test]
fn cuda_double_buffering_issues_before_it_waits() {
    // tile i+1 committed, then wait_group 1 completes tile i: one tile in flight at the back
    // edge, two stages; with wait_group 0 the copy is waited for at once: one stage
    let ring = |wait: u32| {
        format!(
            "
            LDGSTS.E.BYPASS.128 [R2], desc[UR4][R4.64]
            LDGDEPBAR
            .L_x_0:
            LDGSTS.E.BYPASS.128 [R3], desc[UR4][R4.64]
            LDGDEPBAR
            DEPBAR.LE SB0, {wait:#x}
            BAR.SYNC.DEFER_BLOCKING 0x0
            LDS.128 R8, [R2]
            @P2 BRA `(.L_x_0)
            EXIT
            "
        )
    };
    assert_eq!(stages(&ring(1)), 2);
    let d = depth_of_listing(&ring(0));
    assert_eq!(d.stages, Some(1));
    assert!(
        d.detail
            .contains("each copy is waited for in the trip that issues it")
    );
}

/// Triton's TMA ring: an expect-tx arrive and the loads per tile, two tiles before the loop;
/// each trip waits (spinning on try_wait) for the oldest slot, runs wgmma, fills the next one.
fn tma_ring(prologue_fills: usize) -> String {
    let fill = "
        @P3 SYNCS.ARRIVE.TRANS64 RZ, [UR16+0x20000], R0
        @UP5 UTMALDG.2D [UR16], [UR4]
    ";
    format!(
        "
        SYNCS.EXCH.64 URZ, [UR16+0x20000], UR18
        SYNCS.EXCH.64 URZ, [UR16+0x20008], UR18
        SYNCS.EXCH.64 URZ, [UR16+0x20010], UR18
        BAR.SYNC.DEFER_BLOCKING 0x0
        {}
        .L_x_8:
        SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR9+0x20000], R5
        @!P0 BRA `(.L_x_6)
        .L_x_9:
        HGMMA.64x128x16.F32 R24, gdesc[UR4], R24, gsb0
        WARPGROUP.DEPBAR.LE gsb0, 0x1
        SYNCS.ARRIVE.TRANS64.A1T0 RZ, [R7+URZ], RZ
        @P4 SYNCS.ARRIVE.TRANS64 RZ, [UR29+0x20000], R5
        @UP0 UTMALDG.2D [UR24], [UR8]
        @P0 BRA `(.L_x_8)
        EXIT
        .L_x_6:
        SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR9+0x20000], R5
        @!P0 BRA `(.L_x_6)
        BRA `(.L_x_9)
        ",
        fill.repeat(prologue_fills)
    )
}

#[test]
fn a_tma_ring_counts_fills_not_plain_arrives() {
    let d = depth_of_listing(&tma_ring(2));
    assert_eq!(d.stages, Some(3), "{}", d.detail);
    assert!(
        d.detail.contains("(3 mbarrier(s) initialised)"),
        "{}",
        d.detail
    );
    // one tile filled ahead: two stages, whatever the mbarriers allocated
    assert_eq!(stages(&tma_ring(1)), 2);
}

#[test]
fn no_loop_or_no_async_copy_is_one_stage() {
    let d = depth_of_listing("LDG.E R2, desc[UR4][R4.64]\nSTG.E desc[UR4][R6.64], R2\nEXIT");
    assert_eq!(d.stages, Some(1));
    assert!(d.detail.contains("no loop"), "{}", d.detail);
    let d = depth_of_listing(
        "
        .L_x_0:
        LDG.E.128 R8, desc[UR4][R4.64]
        STS.128 [R2], R8
        BAR.SYNC.DEFER_BLOCKING 0x0
        LDS.128 R12, [R2]
        @P0 BRA `(.L_x_0)
        EXIT
        ",
    );
    assert_eq!(d.stages, Some(1));
    assert!(d.detail.contains("no loop issues an asynchronous copy"));
}

#[test]
fn what_cannot_be_told_is_undecided() {
    // no wait in the loop: the groups pile up
    undecided(
        "
        .L_x_0:
        LDGSTS.E.BYPASS.128 [R3], desc[UR4][R4.64]
        LDGDEPBAR
        LDS.128 R8, [R2]
        @P2 BRA `(.L_x_0)
        EXIT
        ",
        "grow without bound",
    );
    // one path around the loop commits twice, the other once
    undecided(
        "
        .L_x_0:
        DEPBAR.LE SB0, 0x1
        LDS.128 R8, [R2]
        LDGSTS.E.BYPASS.128 [R3], desc[UR4][R4.64]
        LDGDEPBAR
        @P1 BRA `(.L_x_1)
        LDGSTS.E.BYPASS.128 [R3+0x800], desc[UR4][R4.64]
        LDGDEPBAR
        .L_x_1:
        @P2 BRA `(.L_x_0)
        EXIT
        ",
        "commit different numbers of cp.async group(s) ({1, 2})",
    );
    // a producer loop that never reads what it copies
    undecided(
        "
        .L_x_0:
        SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR9+0x20008], R5
        SYNCS.ARRIVE.TRANS64 RZ, [UR16+0x20000], R0
        UTMALDG.2D [UR16], [UR4]
        @P2 BRA `(.L_x_0)
        EXIT
        ",
        "warp specialisation",
    );
}

#[test]
fn each_trip_of_an_enclosing_loop_starts_the_ring_anew() {
    // a persistent kernel: per output tile, fill two slots, then the k loop; the trailing fills
    // of one tile (predicated off at run time) must not pile up across tiles
    let body = "
        .L_x_0:
        @P3 SYNCS.ARRIVE.TRANS64 RZ, [UR16+0x20000], R0
        @P3 UTMALDG.2D [UR16], [UR4]
        @P3 SYNCS.ARRIVE.TRANS64 RZ, [UR16+0x20008], R0
        @P3 UTMALDG.2D [UR16], [UR4]
        .L_x_1:
        SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR9+0x20000], R5
        HGMMA.64x128x16.F32 R24, gdesc[UR4], R24, gsb0
        @P4 SYNCS.ARRIVE.TRANS64 RZ, [UR29+0x20000], R5
        @P4 UTMALDG.2D [UR24], [UR8]
        @P5 BRA `(.L_x_1)
        @P6 BRA `(.L_x_0)
        EXIT
    ";
    assert_eq!(stages(body), 3);
}

mod unrolled;
