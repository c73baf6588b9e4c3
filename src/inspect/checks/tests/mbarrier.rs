//! mbarrier init published: barriers, partial and predicated ones, layout order against
//! execution order, and which mbarrier a wait waits on.

use super::*;
use crate::inspect::checks::mbarrier::NAME as MBARRIER;

/// Thread 0 initialises the mbarrier at the shared window's start, the block syncs, all wait.
fn init_bar_wait(barrier: &str) -> String {
    with_prologue(&format!(
        "
    ISETP.NE.AND P0, PT, R0, RZ, PT
    @!P0 SYNCS.EXCH.64 URZ, [UR4], UR6
    {barrier}
.L_x_1:
    SYNCS.PHASECHK.TRANS64.TRYWAIT P1, [UR4], R7
    @!P1 BRA `(.L_x_1)
    EXIT
"
    ))
}

#[test]
fn an_init_needs_a_block_barrier_before_the_wait() {
    assert_eq!(
        status(MBARRIER, &init_bar_wait("BAR.SYNC.DEFER_BLOCKING 0x0")),
        Status::Holds
    );
    let c = hazard(
        MBARRIER,
        &init_bar_wait("NOP"),
        "the mbarrier wait at 0x00a0 can follow the init at 0x0080",
    );
    let f = &c.findings[0];
    assert_eq!(
        f.sites.iter().map(|s| s.role.as_str()).collect::<Vec<_>>(),
        ["init", "wait"]
    );
    assert_eq!(f.path.last(), Some(&0xa0));
    // a barrier over part of the block, or one some threads skip, publishes nothing
    for partial in [
        "BAR.SYNC.DEFER_BLOCKING 0x1, 0x80",
        "BAR.ARV 0x0, 0x80",
        "@P2 BAR.SYNC 0x0",
    ] {
        assert_eq!(
            status(MBARRIER, &init_bar_wait(partial)),
            Status::Hazard,
            "{partial}"
        );
    }
    // __syncthreads_or and a cluster barrier wait publish as well
    for full in ["BAR.RED.OR.DEFER_BLOCKING 0x0, P2", "UCGABAR_WAIT"] {
        assert_eq!(
            status(MBARRIER, &init_bar_wait(full)),
            Status::Holds,
            "{full}"
        );
    }
    assert_eq!(status(MBARRIER, "EXIT"), Status::NotApplicable);
}

#[test]
fn a_barrier_under_a_predicate_the_path_knows_true_publishes() {
    let known = "PLOP3.LUT P2, PT, PT, PT, PT, 0x80, 0x0\n    @P2 BAR.SYNC 0x0";
    assert_eq!(status(MBARRIER, &init_bar_wait(known)), Status::Holds);
    // the same predicate known false does not
    let off = "PLOP3.LUT P2, PT, PT, PT, PT, 0x8, 0x0\n    @P2 BAR.SYNC 0x0";
    assert_eq!(status(MBARRIER, &init_bar_wait(off)), Status::Hazard);
    // a branch around the barrier on the condition that also guards the init: only thread 0
    // skips it, and thread 0 is the one that initialised
    let skip = with_prologue(
        "
    ISETP.NE.AND P0, PT, R0, RZ, PT
    @!P0 SYNCS.EXCH.64 URZ, [UR4], UR6
    @!P0 BRA `(.L_x_2)
    BAR.SYNC 0x0
.L_x_2:
    @P0 SYNCS.PHASECHK.TRANS64.TRYWAIT P1, [UR4], R7
    EXIT
",
    );
    assert_eq!(status(MBARRIER, &skip), Status::Holds);
}

#[test]
fn a_wait_laid_out_before_the_barrier_but_run_after_it_holds() {
    let body = with_prologue(
        "
    BRA `(.L_x_2)
.L_x_1:
    SYNCS.PHASECHK.TRANS64.TRYWAIT P1, [UR4], R0
    EXIT
.L_x_2:
    SYNCS.EXCH.64 URZ, [UR4], UR6
    BAR.SYNC 0x0
    BRA `(.L_x_1)
",
    );
    assert_eq!(status(MBARRIER, &body), Status::Holds);
    // an init re-run in a loop whose barrier comes after the wait is caught on the back edge
    let looped = with_prologue(
        "
.L_x_1:
    SYNCS.PHASECHK.TRANS64.TRYWAIT P1, [UR4], R0
    SYNCS.EXCH.64 URZ, [UR4], UR6
    @P0 BRA `(.L_x_1)
    BAR.SYNC 0x0
    EXIT
",
    );
    assert_eq!(status(MBARRIER, &looped), Status::Hazard);
}

#[test]
fn a_wait_on_another_mbarrier_is_not_a_finding() {
    let other = init_bar_wait("NOP").replace("TRYWAIT P1, [UR4]", "TRYWAIT P1, [UR4+0x8]");
    assert_eq!(status(MBARRIER, &other), Status::Holds);
    // one whose address is read from memory cannot be told apart
    let loaded = init_bar_wait("LDS R9, [R2]\n    R2UR UR9, R9")
        .replace("TRYWAIT P1, [UR4]", "TRYWAIT P1, [UR9]");
    found(
        MBARRIER,
        &loaded,
        Status::Undecided,
        "whether it is the same mbarrier is not known",
    );
}

/// CUTLASS's layout: the mbarrier initialised, NVCC's call of a helper (`__cuda_sm20_div_u64`:
/// the return address in R26, then CALL), the block barrier, the same helper called again, then
/// the wait. The helper returns through R26 to its own call, never past the barrier.
fn called_twice(first_return: &str) -> String {
    with_prologue(&format!(
        "
    ISETP.NE.AND P0, PT, R0, RZ, PT
    @!P0 SYNCS.EXCH.64 URZ, [UR4], UR6
    MOV R26, {first_return}
    CALL.REL.NOINC `(.L_x_9)
    BAR.SYNC.DEFER_BLOCKING 0x0
    MOV R26, 0xe0
    CALL.REL.NOINC `(.L_x_9)
.L_x_1:
    SYNCS.PHASECHK.TRANS64.TRYWAIT P1, [UR4], R7
    @!P1 BRA `(.L_x_1)
    EXIT
.L_x_9:
    IADD3 R20, R20, 0x1, RZ
    RET.REL.NODEC R26 `(k)
"
    ))
}

#[test]
fn a_ret_goes_back_to_its_own_call() {
    assert_eq!(status(MBARRIER, &called_twice("0xb0")), Status::Holds);
    // a first call whose return address is past the barrier
    hazard(
        MBARRIER,
        &called_twice("0xe0"),
        "the mbarrier wait at 0x00e0 can follow the init at 0x0080",
    );
}
