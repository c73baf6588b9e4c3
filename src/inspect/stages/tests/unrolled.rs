//! Loops the compiler unrolled, in part (several tiles a trip) or whole (straight-line code).

use super::*;

/// Triton's wgmma ring unrolled `unroll` times by the compiler: four tiles (two groups each)
/// issued before the loop; each tile of a trip waits until WAIT groups are left, runs wgmma
/// (keeping one wgmma group in flight), then issues the tile four ahead into the slot that wgmma
/// group freed.
fn unrolled_ring(unroll: usize, wait: u32) -> String {
    let tile = "
        LDGSTS.E.BYPASS.128 [R3], desc[UR4][R4.64]
        LDGDEPBAR
        LDGSTS.E.64 [R5+0x5000], desc[UR4][R6.64]
        LDGDEPBAR
    ";
    let step = format!(
        "
        DEPBAR.LE SB0, {wait:#x}
        BAR.SYNC.DEFER_BLOCKING 0x0
        WARPGROUP.ARRIVE
        HGMMA.64x16x16.F32.BF16 R24, gdesc[UR4], R24, gsb0
        WARPGROUP.DEPBAR.LE gsb0, 0x1
        BAR.SYNC.DEFER_BLOCKING 0x0
        {tile}
        "
    );
    format!(
        "
        {}
        .L_x_0:
        {}
        @P0 BRA `(.L_x_0)
        WARPGROUP.DEPBAR.LE gsb0, 0x0
        DEPBAR.LE SB0, 0x0
        EXIT
        ",
        tile.repeat(4),
        step.repeat(unroll)
    )
}

#[test]
fn an_unrolled_loop_counts_the_groups_of_a_tile_not_of_a_trip() {
    // torch.compile's triton_mm (num_stages 5): 8 groups in flight at the back edge are 4 tiles
    // of 2, not one trip of 8
    let d = depth_of_listing(&unrolled_ring(4, 6));
    assert_eq!(d.stages, Some(5), "{}", d.detail);
    assert!(
        d.detail.contains(
            "8 cp.async group(s) in flight, 8 per trip of 4 tiles (unrolled: 4 waits before shared reads), 2 per tile: 4 tile(s) in flight ahead"
        ),
        "{}",
        d.detail
    );
    // the same ring unrolled twice, or not at all, keeps the same stages
    assert_eq!(stages(&unrolled_ring(2, 6)), 5);
    let d = depth_of_listing(&unrolled_ring(1, 6));
    assert_eq!(d.stages, Some(5), "{}", d.detail);
    assert!(
        d.detail
            .contains("8 cp.async group(s) in flight, 2 per trip: 4 tile(s) in flight ahead"),
        "{}",
        d.detail
    );
    // control: each wait leaving one tile (2 groups) in flight, the back edge holds 2 tiles: 3
    assert_eq!(stages(&unrolled_ring(4, 2)), 3);
}

#[test]
fn an_unrolled_tma_ring_counts_a_try_wait_and_its_retry_as_one_wait() {
    // two tiles per trip, each waited for by a try-wait that spins in a block of its own
    let fill = "
        @P3 SYNCS.ARRIVE.TRANS64 RZ, [UR16+0x20000], R0
        @UP5 UTMALDG.2D [UR16], [UR4]
    ";
    let body = format!(
        "
        SYNCS.EXCH.64 URZ, [UR16+0x20000], UR18
        SYNCS.EXCH.64 URZ, [UR16+0x20008], UR18
        SYNCS.EXCH.64 URZ, [UR16+0x20010], UR18
        BAR.SYNC.DEFER_BLOCKING 0x0
        {fill}
        {fill}
        .L_x_8:
        SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR9+0x20000], R5
        @!P0 BRA `(.L_x_6)
        .L_x_9:
        HGMMA.64x128x16.F32 R24, gdesc[UR4], R24, gsb0
        WARPGROUP.DEPBAR.LE gsb0, 0x1
        {fill}
        SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR9+0x20008], R5
        @!P0 BRA `(.L_x_7)
        .L_x_10:
        HGMMA.64x128x16.F32 R24, gdesc[UR4], R24, gsb0
        WARPGROUP.DEPBAR.LE gsb0, 0x1
        {fill}
        @P1 BRA `(.L_x_8)
        EXIT
        .L_x_6:
        SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR9+0x20000], R5
        @!P0 BRA `(.L_x_6)
        BRA `(.L_x_9)
        .L_x_7:
        SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR9+0x20008], R5
        @!P0 BRA `(.L_x_7)
        BRA `(.L_x_10)
        "
    );
    let d = depth_of_listing(&body);
    assert_eq!(d.stages, Some(3), "{}", d.detail);
    assert!(
        d.detail
            .contains("2 per trip of 2 tiles (unrolled: 2 waits before shared reads), 1 per tile"),
        "{}",
        d.detail
    );
}

#[test]
fn an_unrolled_loop_that_cannot_be_split_into_tiles_is_undecided() {
    // two waits before reads per trip, three groups committed: not a whole number per tile
    undecided(
        "
        LDGSTS.E.BYPASS.128 [R2], desc[UR4][R4.64]
        LDGDEPBAR
        .L_x_0:
        DEPBAR.LE SB0, 0x1
        LDS.128 R8, [R2]
        LDGSTS.E.BYPASS.128 [R3], desc[UR4][R4.64]
        LDGDEPBAR
        DEPBAR.LE SB0, 0x1
        LDS.128 R8, [R2+0x800]
        LDGSTS.E.BYPASS.128 [R3], desc[UR4][R4.64]
        LDGDEPBAR
        LDGSTS.E.BYPASS.128 [R3+0x800], desc[UR4][R4.64]
        LDGDEPBAR
        @P2 BRA `(.L_x_0)
        EXIT
        ",
        "commits 3 cp.async group(s) per trip over 2 tiles (waits before shared reads): not a whole number per tile",
    );
    // one path around the loop waits and reads twice, the other once
    undecided(
        "
        LDGSTS.E.BYPASS.128 [R2], desc[UR4][R4.64]
        LDGDEPBAR
        .L_x_0:
        DEPBAR.LE SB0, 0x1
        LDS.128 R8, [R2]
        @P1 BRA `(.L_x_1)
        DEPBAR.LE SB0, 0x0
        LDS.128 R12, [R2+0x800]
        .L_x_1:
        LDGSTS.E.BYPASS.128 [R3], desc[UR4][R4.64]
        LDGDEPBAR
        LDGSTS.E.BYPASS.128 [R3+0x800], desc[UR4][R4.64]
        LDGDEPBAR
        @P2 BRA `(.L_x_0)
        EXIT
        ",
        "wait for different numbers of tiles ({1, 2})",
    );
}

#[test]
fn a_wait_at_the_end_of_a_trip_waits_for_the_next_trip_s_tile() {
    // the trip reads first and waits last, twice: each wait guards the read after it, the last
    // one the read that opens the next trip; two tiles per trip, one group each
    let body = "
        LDGSTS.E.BYPASS.128 [R2], desc[UR4][R4.64]
        LDGDEPBAR
        LDGSTS.E.BYPASS.128 [R2+0x800], desc[UR4][R4.64]
        LDGDEPBAR
        DEPBAR.LE SB0, 0x1
        .L_x_0:
        LDS.128 R8, [R2]
        LDGSTS.E.BYPASS.128 [R3], desc[UR4][R4.64]
        LDGDEPBAR
        DEPBAR.LE SB0, 0x1
        LDS.128 R8, [R2+0x800]
        LDGSTS.E.BYPASS.128 [R3+0x800], desc[UR4][R4.64]
        LDGDEPBAR
        DEPBAR.LE SB0, 0x1
        @P2 BRA `(.L_x_0)
        EXIT
    ";
    let d = depth_of_listing(body);
    assert_eq!(d.stages, Some(2), "{}", d.detail);
    assert!(d.detail.contains("2 per trip of 2 tiles"), "{}", d.detail);
}

/// A K loop unrolled whole: `tiles` tiles of two groups each, `ahead` of them issued before the
/// first wait; each tile's step issues the next tile, waits until WAIT groups are left, then
/// reads (CUDA's order: issue, wait, read).
fn straight(tiles: usize, ahead: usize, wait: u32) -> String {
    let tile = "
        LDGSTS.E.BYPASS.128 [R0], desc[UR6][R2.64]
        LDGDEPBAR
        LDGSTS.E.BYPASS.128 [R0+0x2000], desc[UR6][R6.64]
        LDGDEPBAR
    ";
    let read = |wait: u32| {
        format!(
            "
            DEPBAR.LE SB0, {wait:#x}
            BAR.SYNC.DEFER_BLOCKING 0x0
            LDSM.16.M88.4 R20, [R2+UR4]
            HMMA.16816.F32.BF16 R36, R20, R32, R36
            BAR.SYNC.DEFER_BLOCKING 0x0
            "
        )
    };
    let mut out = tile.repeat(ahead);
    for i in 0..tiles {
        if i + ahead < tiles {
            out.push_str(tile);
        }
        // the drain: nothing left to issue, each wait leaves what is still to come
        let left = (tiles - 1 - i).min(ahead);
        out.push_str(&read(wait.min(2 * left as u32)));
    }
    out.push_str("STG.E desc[UR4][R6.64], R36\nEXIT\n");
    out
}

#[test]
fn straight_line_copies_are_read_at_the_shared_reads_after_each_wait() {
    // torch.compile's triton_mm with its K loop unrolled (33 tiles): each tile committed, then
    // waited for to the last group before it is read
    let d = depth_of_listing(&straight(4, 0, 0));
    assert_eq!(d.stages, Some(1), "{}", d.detail);
    assert_eq!(
        d.detail,
        "no loop: straight-line copies, 4 wait(s), each leaves 0 cp.async group(s) in flight before the shared reads: each tile is waited for before it is read"
    );
    // double buffering unrolled: the next tile is in flight while one is read
    let d = depth_of_listing(&straight(4, 1, 2));
    assert_eq!(d.stages, Some(2), "{}", d.detail);
    assert!(
        d.detail.contains(
            "at most 2 cp.async group(s) in flight at the shared reads after a wait, 2 per tile (the commits between consecutive waits): 1 tile(s) in flight ahead of the one read"
        ),
        "{}",
        d.detail
    );
    // three stages: two tiles in flight at each read
    assert_eq!(stages(&straight(6, 2, 4)), 3);
}

#[test]
fn straight_line_copies_issued_after_the_reads_count_from_the_next_tile() {
    // Triton's order (wait, read, issue) with no back edge to count at: the tile issued after
    // the reads is in flight only from the next tile's reads on, so the ring the loop form
    // counts as 3 stages reads as 2 unrolled (the limit the module documents)
    let ring = triton_ring(1);
    assert_eq!(stages(&ring), 3);
    let unrolled = "
        LDGSTS.E.BYPASS.128 [R2], desc[UR4][R4.64]
        LDGDEPBAR
        LDGSTS.E.BYPASS.128 [R2+0x800], desc[UR4][R6.64]
        LDGDEPBAR
        DEPBAR.LE SB0, 0x1
        LDS.128 R8, [R2]
        LDGSTS.E.BYPASS.128 [R3], desc[UR4][R4.64]
        LDGDEPBAR
        DEPBAR.LE SB0, 0x1
        LDS.128 R8, [R2+0x800]
        LDGSTS.E.BYPASS.128 [R3+0x800], desc[UR4][R4.64]
        LDGDEPBAR
        DEPBAR.LE SB0, 0x1
        LDS.128 R8, [R2]
        DEPBAR.LE SB0, 0x0
        LDS.128 R8, [R2+0x800]
        EXIT
    ";
    assert_eq!(stages(unrolled), 2);
}

#[test]
fn straight_line_copies_that_do_not_say_their_tile_are_undecided() {
    // one group committed, a wait that leaves it in flight, a read: no two waits tell a tile
    undecided(
        "
        LDGSTS.E.BYPASS.128 [R2], desc[UR4][R4.64]
        LDGDEPBAR
        DEPBAR.LE SB0, 0x1
        BAR.SYNC.DEFER_BLOCKING 0x0
        LDS.128 R8, [R2]
        EXIT
        ",
        "no commits between consecutive waits tell how many one tile takes",
    );
    // tiles of one group, then of two
    undecided(
        "
        LDGSTS.E.BYPASS.128 [R2], desc[UR4][R4.64]
        LDGDEPBAR
        LDGSTS.E.BYPASS.128 [R2+0x800], desc[UR4][R4.64]
        LDGDEPBAR
        DEPBAR.LE SB0, 0x1
        LDS.128 R8, [R2]
        LDGSTS.E.BYPASS.128 [R3], desc[UR4][R4.64]
        LDGDEPBAR
        DEPBAR.LE SB0, 0x1
        LDS.128 R8, [R2+0x800]
        LDGSTS.E.BYPASS.128 [R3], desc[UR4][R4.64]
        LDGDEPBAR
        LDGSTS.E.BYPASS.128 [R3+0x800], desc[UR4][R4.64]
        LDGDEPBAR
        DEPBAR.LE SB0, 0x1
        LDS.128 R8, [R2]
        EXIT
        ",
        "the commits between consecutive waits differ ({1, 2})",
    );
    // copies committed and read with no wait at all
    undecided(
        "
        LDGSTS.E.BYPASS.128 [R2], desc[UR4][R4.64]
        LDGDEPBAR
        BAR.SYNC.DEFER_BLOCKING 0x0
        LDS.128 R8, [R2]
        EXIT
        ",
        "no shared read follows a wait",
    );
}
