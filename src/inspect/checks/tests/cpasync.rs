//! cp.async commit/wait: groups, waits, scoreboards, and what the read's address says.

use super::*;
use crate::inspect::checks::cpasync::NAME as CP_ASYNC;

/// Each thread copies its 16 bytes of the tile, commits, waits, syncs and reads another's.
fn copy_then_read(wait: &str, read: &str) -> String {
    with_prologue(&format!(
        "
    LDGSTS.E.BYPASS.128 [R2], [R8.64]
    LDGDEPBAR
    {wait}
    BAR.SYNC 0x0
    {read}
    EXIT
"
    ))
}

const WAIT: &str = "DEPBAR.LE SB0, 0x0";
const READ: &str = "LDS.128 R8, [R3]";

#[test]
fn reads_wait_for_a_committed_group() {
    assert_eq!(status(CP_ASYNC, &copy_then_read(WAIT, READ)), Status::Holds);
    let c = hazard(
        CP_ASYNC,
        &copy_then_read("NOP", READ),
        "the kernel has no wait_group (DEPBAR) at all",
    );
    let f = &c.findings[0];
    assert_eq!(
        f.sites.iter().map(|s| s.role.as_str()).collect::<Vec<_>>(),
        ["cp.async", "commit", "read"]
    );
    assert_eq!(f.path, [0x0, 0xb0]);
    // wait_group 1 with one group committed waits for nothing
    hazard(
        CP_ASYNC,
        &copy_then_read("DEPBAR.LE SB0, 0x1", READ),
        "(wait_group 1) leaves all 1 committed group(s) in flight",
    );
    // no commit: wait_group does not cover the copy
    let uncommitted = copy_then_read(WAIT, READ).replace("LDGDEPBAR", "NOP");
    hazard(CP_ASYNC, &uncommitted, "it was not committed");
    // an LDSM is a shared read too; a wait on another scoreboard is not a cp.async wait
    let ldsm = "LDSM.16.M88.4 R4, [R3]";
    assert_eq!(status(CP_ASYNC, &copy_then_read(WAIT, ldsm)), Status::Holds);
    let sb1 = copy_then_read("DEPBAR.LE SB1, 0x0", ldsm);
    assert_eq!(status(CP_ASYNC, &sb1), Status::Hazard);
    assert_eq!(status(CP_ASYNC, "EXIT"), Status::NotApplicable);
}

#[test]
fn a_read_of_bytes_no_copy_wrote_is_not_a_finding() {
    // an index table past the 16 KiB tile, written by the threads, read before any wait
    let table = "IMAD.SHL.U32 R4, R0, 0x4, RZ\n    STS [R4+0x4000], R0\n    LDS R9, [R4+0x4000]";
    assert_eq!(
        status(CP_ASYNC, &copy_then_read("NOP", table)),
        Status::Holds
    );
    // a read whose address was loaded cannot be told apart
    let loaded = "LDS R4, [R4+0x4000]\n    LDS R9, [R4]";
    let c = found(
        CP_ASYNC,
        &copy_then_read(
            "NOP",
            &format!("IMAD.SHL.U32 R4, R0, 0x4, RZ\n    {loaded}"),
        ),
        Status::Undecided,
        "whether the read touches the copied bytes is not known",
    );
    assert!(
        c.detail.contains("the value made by instruction"),
        "{}",
        c.detail
    );
}

#[test]
fn cp_async_through_an_mbarrier_is_not_judged_by_groups() {
    let c = run(
        CP_ASYNC,
        "
    LDGSTS.E [R4], [R10.64]
    ARRIVES.LDGSTSBAR.64 [URZ+0x1000]
    LDS R8, [R0]
    EXIT
",
    );
    assert_eq!(c.status, Status::NotApplicable);
    assert!(
        c.detail.contains("ARRIVES.LDGSTSBAR at 0x0010"),
        "{}",
        c.detail
    );
}

#[test]
fn a_two_stage_pipeline_may_keep_the_newest_group_in_flight() {
    // prologue commits stage 0; each iteration issues the next stage, commits, waits with
    // wait_group 1 (all but the newest complete) and reads
    let pipeline = with_prologue(
        "
    LDGSTS.E.BYPASS.128 [R2], [R8.64]
    LDGDEPBAR
.L_x_1:
    @P1 LDGSTS.E.BYPASS.128 [R2+0x1000], [R12.64]
    LDGDEPBAR
    DEPBAR.LE SB0, 0x1
    BAR.SYNC 0x0
    LDS.128 R8, [R3]
    BAR.SYNC 0x0
    @P0 BRA `(.L_x_1)
    EXIT
",
    );
    assert_eq!(status(CP_ASYNC, &pipeline), Status::Holds);
    // without the prologue's commit the first wait_group 1 completes nothing
    let short = pipeline.replacen("LDGDEPBAR", "NOP", 1);
    assert_eq!(status(CP_ASYNC, &short), Status::Hazard);
}

#[test]
fn a_copy_under_the_guard_its_address_was_made_under_writes_there() {
    // sgl-kernel's marlin_moe_wna16::Marlin: `@!P4 LEA R19, R210, UR11, 0x4` then
    // `@!P4 LDGSTS [R19+0x8800]`, where the path does not know P4 (tid > 15); the read of the
    // first KiB below is of bytes no copy wrote
    let body = |at: &str| {
        with_prologue(&format!(
            "
    ISETP.GT.U32.AND P4, PT, R0, 0xf, PT
    LEA R5, R0, UR4, 0x2
    @!P4 LEA R19, R0, UR4, 0x4
    @!P4 LDGSTS.E.BYPASS.128 [R19+{at}], [R10.64]
    LDGDEPBAR
    LDS R9, [R5+0x100]
    EXIT
"
        ))
    };
    assert_eq!(status(CP_ASYNC, &body("0x8800")), Status::Holds);
    hazard(CP_ASYNC, &body("0x100"), "no wait_group");
    // the predicate written between them: the copy's address is not the LEA's
    let rewritten = body("0x8800").replace(
        "@!P4 LDGSTS",
        "ISETP.GT.U32.AND P4, PT, R0, 0x1f, PT\n    @!P4 LDGSTS",
    );
    found(
        CP_ASYNC,
        &rewritten,
        Status::Undecided,
        "whether the read touches the copied bytes is not known",
    );
}

#[test]
fn a_masked_value_is_bounded_by_what_the_path_knows_of_its_thread_index() {
    // sgl-kernel's gptq_marlin_repack_kernel: R6 = (tid >> 2) & ~3 is made before the branch
    // that keeps threads 0..255; after it R6 is at most 60, so the read of [R6, R6 + 4) stays
    // below the copies at 0x40 and up
    let body = |at: &str| {
        with_prologue(&format!(
            "
    SHF.R.U32.HI R6, RZ, 0x2, R0
    LOP3.LUT R6, R6, 0x3ffffffc, RZ, 0xc0, !PT
    LEA R12, R0, UR4, 0x4
    ISETP.GT.U32.AND P0, PT, R0, 0xff, PT
    @P0 EXIT
    LDGSTS.E.BYPASS.128 [R12+{at}], [R8.64]
    LDGDEPBAR
    LDS R10, [R6+UR4]
    EXIT
"
        ))
    };
    assert_eq!(status(CP_ASYNC, &body("0x40")), Status::Holds);
    // four bytes lower, the copies may meet the read
    found(
        CP_ASYNC,
        &body("0x3c"),
        Status::Undecided,
        "their addresses are only bounded here, and the bounds meet",
    );
}
