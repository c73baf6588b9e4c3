//! Each check on small listings written for it: the broken protocol is caught, the correct one
//! holds, and the path-sensitive cases (loops, out-of-line retries, conditional barriers) go the
//! way the control flow says.

use super::*;
use crate::inspect::listing::kernels;

fn run(name: &str, body: &str) -> Check {
    let k = kernels(&format!(".text.k:\n{body}")).remove(0);
    let cfg = Cfg::of(&k);
    all(&k, &cfg)
        .into_iter()
        .find(|c| c.name == name)
        .expect("every check reports")
}

fn status(name: &str, body: &str) -> Status {
    run(name, body).status
}

/// The check finds a hazard and says `text` about it.
fn hazard(name: &str, body: &str, text: &str) -> Check {
    let c = run(name, body);
    assert_eq!(c.status, Status::Hazard, "{}", c.detail);
    assert!(c.detail.contains(text), "{}", c.detail);
    c
}

const INIT_BAR_WAIT: &str = "
        /*0000*/              @!P0 SYNCS.EXCH.64 URZ, [UR6], UR4 ;
        /*0010*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
.L_x_1:
        /*0020*/                   SYNCS.PHASECHK.TRANS64.TRYWAIT P1, [UR6], R0 ;
        /*0030*/              @!P1 BRA `(.L_x_1) ;
        /*0040*/                   EXIT ;
";

#[test]
fn mbarrier_init_needs_a_block_barrier_on_every_path() {
    assert_eq!(status(MBARRIER, INIT_BAR_WAIT), Status::Holds);
    let without = INIT_BAR_WAIT.replace("BAR.SYNC.DEFER_BLOCKING 0x0", "NOP");
    let c = hazard(
        MBARRIER,
        &without,
        "the mbarrier wait at 0x0020 can follow the init at 0x0000",
    );
    assert_eq!(
        c.sites.iter().map(|s| s.role.as_str()).collect::<Vec<_>>(),
        ["init", "wait"]
    );
    // a barrier over part of the block, or one some threads skip, publishes nothing
    for partial in ["BAR.SYNC.DEFER_BLOCKING 0x1, 0x80", "BAR.ARV 0x0, 0x80"] {
        let s = INIT_BAR_WAIT.replace("BAR.SYNC.DEFER_BLOCKING 0x0", partial);
        assert_eq!(status(MBARRIER, &s), Status::Hazard, "{partial}");
    }
    let skipped =
        INIT_BAR_WAIT.replace("                   BAR.SYNC", "               @P2 BAR.SYNC");
    assert_eq!(status(MBARRIER, &skipped), Status::Hazard);
    // __syncthreads_or and a cluster barrier wait publish as well
    let red = INIT_BAR_WAIT.replace(
        "BAR.SYNC.DEFER_BLOCKING 0x0",
        "BAR.RED.OR.DEFER_BLOCKING 0x0, P2",
    );
    assert_eq!(status(MBARRIER, &red), Status::Holds);
    let cluster = INIT_BAR_WAIT.replace("BAR.SYNC.DEFER_BLOCKING 0x0", "UCGABAR_WAIT");
    assert_eq!(status(MBARRIER, &cluster), Status::Holds);
    assert_eq!(
        status(MBARRIER, "        /*0000*/ EXIT ;\n"),
        Status::NotApplicable
    );
}

#[test]
fn a_wait_laid_out_before_the_barrier_but_run_after_it_holds() {
    // listing order is not execution order: the wait sits first and is reached by a branch
    let body = "
        /*0000*/                   BRA `(.L_x_2) ;
.L_x_1:
        /*0010*/                   SYNCS.PHASECHK.TRANS64.TRYWAIT P1, [UR6], R0 ;
        /*0020*/                   EXIT ;
.L_x_2:
        /*0030*/                   SYNCS.EXCH.64 URZ, [UR6], UR4 ;
        /*0040*/                   BAR.SYNC 0x0 ;
        /*0050*/                   BRA `(.L_x_1) ;
";
    assert_eq!(status(MBARRIER, body), Status::Holds);
    // and an init re-run in a loop whose barrier comes after the wait is caught on the back edge
    let looped = "
.L_x_1:
        /*0000*/                   SYNCS.PHASECHK.TRANS64.TRYWAIT P1, [UR6], R0 ;
        /*0010*/                   SYNCS.EXCH.64 URZ, [UR6], UR4 ;
        /*0020*/              @P0 BRA `(.L_x_1) ;
        /*0030*/                   BAR.SYNC 0x0 ;
        /*0040*/                   EXIT ;
";
    assert_eq!(status(MBARRIER, looped), Status::Hazard);
}

const CP_ASYNC_OK: &str = "
        /*0000*/                   LDGSTS.E.BYPASS.128 [R2], [R8.64] ;
        /*0010*/                   LDGDEPBAR ;
        /*0020*/                   DEPBAR.LE SB0, 0x0 ;
        /*0030*/                   BAR.SYNC 0x0 ;
        /*0040*/                   LDS.128 R8, [R0.X16] ;
        /*0050*/                   EXIT ;
";

#[test]
fn cp_async_reads_wait_for_a_committed_group() {
    assert_eq!(status(CP_ASYNC, CP_ASYNC_OK), Status::Holds);
    // no wait at all
    let c = hazard(
        CP_ASYNC,
        &CP_ASYNC_OK.replace("DEPBAR.LE SB0, 0x0", "NOP"),
        "the kernel has no wait_group (DEPBAR) at all",
    );
    assert_eq!(c.sites.last().unwrap().role, "read");
    // wait_group 1 with one group committed waits for nothing
    hazard(
        CP_ASYNC,
        &CP_ASYNC_OK.replace("SB0, 0x0", "SB0, 0x1"),
        "(wait_group 1) leaves all 1 committed group(s) in flight",
    );
    // no commit: wait_group does not cover the copy
    hazard(
        CP_ASYNC,
        &CP_ASYNC_OK.replace("LDGDEPBAR", "NOP"),
        "without a commit",
    );
    // an LDSM is a shared read too; a wait on another scoreboard is not a cp.async wait
    let ldsm = CP_ASYNC_OK.replace("LDS.128 R8, [R0.X16]", "LDSM.16.M88.4 R4, [R3]");
    assert_eq!(
        status(CP_ASYNC, &ldsm.replace("SB0", "SB1")),
        Status::Hazard
    );
    assert_eq!(status(CP_ASYNC, &ldsm), Status::Holds);
    assert_eq!(status(CP_ASYNC, INIT_BAR_WAIT), Status::NotApplicable);
}

#[test]
fn a_two_stage_pipeline_may_keep_the_newest_group_in_flight() {
    // prologue commits stage 0; each iteration issues the next stage, commits, waits with
    // wait_group 1 (all but the newest complete) and reads
    let pipeline = "
        /*0000*/                   LDGSTS.E.BYPASS.128 [R2], [R8.64] ;
        /*0010*/                   LDGDEPBAR ;
.L_x_1:
        /*0020*/              @P1 LDGSTS.E.BYPASS.128 [R2+0x1000], [R12.64] ;
        /*0030*/                   LDGDEPBAR ;
        /*0040*/                   DEPBAR.LE SB0, 0x1 ;
        /*0050*/                   BAR.SYNC 0x0 ;
        /*0060*/                   LDS.128 R8, [R25.X16] ;
        /*0070*/                   BAR.SYNC 0x0 ;
        /*0080*/              @P0 BRA `(.L_x_1) ;
        /*0090*/                   EXIT ;
";
    assert_eq!(status(CP_ASYNC, pipeline), Status::Holds);
    // without the prologue's commit the first wait_group 1 completes nothing
    let short = pipeline.replacen("LDGDEPBAR", "NOP", 1);
    assert_eq!(status(CP_ASYNC, &short), Status::Hazard);
}

#[test]
fn cp_async_through_an_mbarrier_is_not_judged_by_groups() {
    let c = run(
        CP_ASYNC,
        "
        /*0000*/                   LDGSTS.E [R4], [R10.64] ;
        /*0010*/                   ARRIVES.LDGSTSBAR.64 [URZ+0x1000] ;
        /*0020*/                   LDS R8, [R0] ;
        /*0030*/                   EXIT ;
",
    );
    assert_eq!(c.status, Status::NotApplicable);
    assert!(
        c.detail.contains("ARRIVES.LDGSTSBAR at 0x0010"),
        "{}",
        c.detail
    );
}

const TMA_STORE: &str = "
        /*0000*/                   STS [R5], R0 ;
        /*0010*/                   FENCE.VIEW.ASYNC.S ;
        /*0020*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*0030*/               @P0 EXIT ;
        /*0040*/                   UTMASTG.2D [UR4], [UR8] ;
        /*0050*/                   EXIT ;
";

#[test]
fn async_proxy_reads_need_the_proxy_fence() {
    assert_eq!(status(FENCE, TMA_STORE), Status::Holds);
    let c = hazard(
        FENCE,
        &TMA_STORE.replace("FENCE.VIEW.ASYNC.S", "NOP"),
        "UTMASTG.2D at 0x0040 reads shared memory through the async proxy",
    );
    assert_eq!(c.sites[0].offset, 0x0);
    // a fence only some threads take does not order the others' stores
    let some = TMA_STORE.replace("                   FENCE", "               @P1 FENCE");
    assert_eq!(status(FENCE, &some), Status::Hazard);
    // a bulk store (shared -> global) and wgmma's descriptors read through the async proxy;
    // a bulk load (global -> shared) does not read shared memory
    let unfenced = TMA_STORE.replace("FENCE.VIEW.ASYNC.S", "NOP");
    let bulk_store = unfenced.replace("UTMASTG.2D [UR4], [UR8]", "UBLKCP.G.S [UR6], [UR4], UR5");
    assert_eq!(status(FENCE, &bulk_store), Status::Hazard);
    let gmma = unfenced.replace(
        "UTMASTG.2D [UR4], [UR8]",
        "HGMMA.64x8x16.F32 R24, gdesc[UR4], RZ, !UPT, gsb0",
    );
    assert_eq!(status(FENCE, &gmma), Status::Hazard);
    let bulk_load = unfenced.replace("UTMASTG.2D [UR4], [UR8]", "UBLKCP.S.G [UR8], [UR4], UR6");
    assert_eq!(status(FENCE, &bulk_load), Status::NotApplicable);
}

#[test]
fn sites_carry_the_source_line() {
    let body = "
	//## File \"k.cu\", line 7
        /*0000*/                   STS [R5], R0 ;
	//## File \"k.cu\", line 42 inlined at \"k.cu\", line 9
	//## File \"k.cu\", line 9
        /*0010*/                   UTMASTG.2D [UR4], [UR8] ;
        /*0020*/                   EXIT ;
";
    let c = run(FENCE, body);
    assert_eq!(c.status, Status::Hazard);
    assert_eq!(c.sites[0].source.as_deref(), Some("k.cu:7"));
    assert_eq!(
        c.sites[1].source.as_deref(),
        Some("k.cu:9 (inlined k.cu:42)")
    );
    assert!(
        c.detail.contains("0x0010 (k.cu:9 (inlined k.cu:42))"),
        "{}",
        c.detail
    );
}
