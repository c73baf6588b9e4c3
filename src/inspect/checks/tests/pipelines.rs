//! cp.async pipelines whose verdict needs more than the graph: libcu++'s run-time wait count,
//! a loop that may run zero times, an indirect branch with the targets nvdisasm lists.

use super::*;
use crate::inspect::checks::cpasync::NAME as CP_ASYNC;

/// libcu++'s `cuda::pipeline<thread_scope_thread>` as NVCC lays it out: byte counters head (R12)
/// and tail (R13) from a byte insert, two stages in the prologue, a producer that commits only
/// while tiles remain, and `consumer_wait()` switching over `DEPBAR.LE SB0, head - tail - 1`.
fn libcu(selector: &str) -> String {
    with_prologue(&format!(
        "
    IMAD.MOV.U32 R14, RZ, RZ, c[0x0][0x170]
    PRMT R12, RZ, 0x7610, R12
    PRMT R13, RZ, 0x7610, R13
    ISETP.GE.AND P0, PT, R14, 0x1, PT
    @!P0 BRA `(.L_x_9)
    LDGSTS.E.BYPASS.128 [R2], [R8.64]
    IADD3 R12, R12, 0x1, RZ
    LDGDEPBAR
    LDGSTS.E.BYPASS.128 [R2+0x1000], [R8.64]
    IADD3 R12, R12, 0x1, RZ
    LDGDEPBAR
.L_x_1:
    ISETP.GE.AND P1, PT, R15, c[0x0][0x170], PT
    @P1 BRA `(.L_x_2)
    LDGSTS.E.BYPASS.128 [R2+0x2000], [R8.64]
    IADD3 R12, R12, 0x1, RZ
    LDGDEPBAR
.L_x_2:
    {selector}
    LOP3.LUT R9, R9, 0xff, RZ, 0xc0, !PT
    ISETP.GT.AND P2, PT, R9, 0x1, PT
    @P2 BRA `(.L_x_5)
    ISETP.NE.AND P2, PT, R9, RZ, PT
    @!P2 BRA `(.L_x_3)
    DEPBAR.LE SB0, 0x1
    BRA `(.L_x_4)
.L_x_3:
    DEPBAR.LE SB0, 0x0
    BRA `(.L_x_4)
.L_x_5:
    ISETP.NE.AND P2, PT, R9, 0x2, PT
    @P2 BRA `(.L_x_6)
    DEPBAR.LE SB0, 0x2
    BRA `(.L_x_4)
.L_x_6:
    DEPBAR.LE SB0, 0x8
.L_x_4:
    IADD3 R13, R13, 0x1, RZ
    BAR.SYNC 0x0
    LDS.128 R8, [R3]
    BAR.SYNC 0x0
    IADD3 R15, R15, 0x1, RZ
    ISETP.LT.AND P3, PT, R15, R14, PT
    @P3 BRA `(.L_x_1)
.L_x_9:
    EXIT
"
    ))
}

const HEAD_MINUS_TAIL: &str = "LOP3.LUT R9, RZ, R13, RZ, 0x33, !PT\n    IMAD.IADD R9, R12, 0x1, R9";
/// head - tail, without the - 1: a count one too weak.
const OFF_BY_ONE: &str = "LOP3.LUT R9, RZ, R13, RZ, 0x33, !PT\n    IMAD.IADD R9, R12, 0x1, R9\n    IADD3 R9, R9, 0x1, RZ";

#[test]
fn a_wait_count_chosen_at_run_time_is_followed_per_count() {
    assert_eq!(status(CP_ASYNC, &libcu(HEAD_MINUS_TAIL)), Status::Holds);
    // a selector the analysis cannot follow: the weak counts are not ruled out, nor known to run
    let c = found(
        CP_ASYNC,
        &libcu("LDG.E R9, desc[UR6][R4.64]"),
        Status::Undecided,
        "its count is chosen at run time among wait_group 0, 1, 2, 8",
    );
    assert!(
        c.detail.contains("committed group(s) in flight"),
        "{}",
        c.detail
    );
    // the count is known, and one too weak: a hazard
    hazard(CP_ASYNC, &libcu(OFF_BY_ONE), "committed group(s) in flight");
}

/// Copies in a loop that runs `n` times, then a wait only `if (n > 0)`, then a read.
fn zero_trip(guard: &str) -> String {
    with_prologue(&format!(
        "
    IMAD.MOV.U32 R14, RZ, RZ, c[0x0][0x170]
    ISETP.GE.AND P0, PT, R14, 0x1, PT
    @!P0 BRA `(.L_x_2)
.L_x_1:
    LDGSTS.E.BYPASS.128 [R2], [R8.64]
    LDGDEPBAR
    IADD3 R15, R15, 0x1, RZ
    ISETP.LT.AND P1, PT, R15, R14, PT
    @P1 BRA `(.L_x_1)
.L_x_2:
    {guard}
    @P2 DEPBAR.LE SB0, 0x0
    BAR.SYNC 0x0
    LDS.128 R8, [R3]
    EXIT
"
    ))
}

#[test]
fn a_loop_that_ran_is_remembered_past_it() {
    // n > 0 where the loop ran (n >= 1): the wait runs
    let same = "ISETP.GT.AND P2, PT, R14, RZ, PT";
    assert_eq!(status(CP_ASYNC, &zero_trip(same)), Status::Holds);
    // a condition on another value: the path that copies and skips the wait is feasible
    let other = "ISETP.GT.AND P2, PT, R16, RZ, PT";
    hazard(
        CP_ASYNC,
        &zero_trip(other),
        "no wait_group stands between them",
    );
}

/// An indirect branch whose targets both wait; a labelled block that skips the wait lies next
/// to them.
fn indirect(targets: &str) -> String {
    with_prologue(&format!(
        "
    LDGSTS.E.BYPASS.128 [R2], [R8.64]
    LDGDEPBAR
    BRX R4 -0x100 {targets}
.L_x_1:
    DEPBAR.LE SB0, 0x0
    BRA `(.L_x_3)
.L_x_2:
    DEPBAR.LE SB0, 0x0
    BRA `(.L_x_3)
.L_x_4:
    NOP
.L_x_3:
    BAR.SYNC 0x0
    LDS.128 R8, [R3]
    EXIT
"
    ))
}

#[test]
fn an_indirect_branch_goes_where_nvdisasm_says() {
    let listed = "(*\"BRANCH_TARGETS .L_x_1,.L_x_2\"*)";
    assert_eq!(status(CP_ASYNC, &indirect(listed)), Status::Holds);
    // without the list (cuobjdump) it may reach every label, the one that skips the wait too
    assert_eq!(status(CP_ASYNC, &indirect("")), Status::Hazard);
}

/// Marlin's layout: `P0 = !UP3` skips the prologue's three groups when there is no work, and
/// the same `P0 = !UP3` exits before the main loop, whose one commit is followed by
/// `wait_group 2`. Both guards test one comparison, so no path reaches the wait with one group.
/// The read's address (R5) is set in the prologue; without it, it is the main loop's tile.
fn skip_then_exit(exit_guard: &str) -> String {
    with_prologue(&format!(
        "
    IMAD.MOV.U32 R14, RZ, RZ, c[0x0][0x170]
    UISETP.NE.AND UP3, UPT, UR6, URZ, UPT
    IADD3 R5, R3, 0xc000, RZ
    PLOP3.LUT P0, PT, PT, PT, UP3, 0x40, 0x0
    @P0 BRA `(.L_x_1)
    IMAD.MOV.U32 R5, RZ, RZ, R3
    LDGSTS.E.BYPASS.128 [R2], [R8.64]
    LDGDEPBAR
    LDGSTS.E.BYPASS.128 [R2+0x4000], [R8.64]
    LDGDEPBAR
    LDGSTS.E.BYPASS.128 [R2+0x8000], [R8.64]
    LDGDEPBAR
    DEPBAR.LE SB0, 0x2
    BAR.SYNC 0x0
.L_x_1:
    {exit_guard}
    @P0 EXIT
    LDGSTS.E.BYPASS.128 [R2+0xc000], [R8.64]
    LDGDEPBAR
    DEPBAR.LE SB0, 0x2
    BAR.SYNC 0x0
    LDS.128 R8, [R5]
    EXIT
"
    ))
}

#[test]
fn a_predicate_copied_by_plop3_keeps_its_comparison() {
    let same = "PLOP3.LUT P0, PT, PT, PT, UP3, 0x40, 0x0";
    assert_eq!(status(CP_ASYNC, &skip_then_exit(same)), Status::Holds);
    // the MoE Marlin's spelling on sm_100a: the exit compares the same register the other way
    // round, in a plain predicate (`0 == UR6` is `!UP3`)
    let mirrored = "ISETP.EQ.AND P0, PT, RZ, UR6, PT";
    assert_eq!(status(CP_ASYNC, &skip_then_exit(mirrored)), Status::Holds);
    // an exit on another comparison lets the no-prologue path reach the read
    let other = "ISETP.EQ.AND P0, PT, R14, RZ, PT";
    hazard(
        CP_ASYNC,
        &skip_then_exit(other),
        "(wait_group 2) leaves all 1 committed group(s) in flight",
    );
}

/// Threads that copy exit; the others read. No path goes on past an unguarded EXIT into the
/// label after it.
fn copy_and_exit(end: &str) -> String {
    with_prologue(&format!(
        "
    ISETP.GE.AND P0, PT, R0, 0x80, PT
    @P0 BRA `(.L_x_1)
    LDGSTS.E.BYPASS.128 [R2], [R8.64]
    LDGDEPBAR
    {end}
.L_x_1:
    LDS.128 R8, [R2]
    EXIT
"
    ))
}

#[test]
fn no_path_goes_on_past_an_exit() {
    assert_eq!(status(CP_ASYNC, &copy_and_exit("EXIT")), Status::Holds);
    hazard(
        CP_ASYNC,
        &copy_and_exit("NOP"),
        "the kernel has no wait_group (DEPBAR) at all",
    );
}
