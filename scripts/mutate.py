#!/usr/bin/env python3
"""Copies kernels/ to OUTDIR and applies one named protocol bug, for TILEPIPE_KERNELS=OUTDIR: the
bugs a reviewer might not think of, to see that `check` and `run` catch each with a clear report
and still finish. Usage: scripts/mutate.py MUTANT OUTDIR   (--list, --json, --fields MUTANT)

Each mutant names the protocol edge it breaks, the monitor rule(s) that must fire on it
(src/monitor/rule.rs), and the variants its bug is in: row variants (rmsnorm and copy) and GEMM
variants (bf16, the ring's and wgmma's precision). Where a variant is listed under "clean", the
mutated line is compiled into it but cannot bite there, and the monitor must stay silent on it."""
import json
import pathlib
import shutil
import sys

M = {}


def mutant(name, file, edits, what, edge, rules, rows=(), gemm=(), clean=()):
    M[name] = dict(file=file, edits=edits, what=what, edge=edge, rules=list(rules), rows=list(rows),
                   gemm=list(gemm), clean=list(clean))


CPASYNC_ROWS = ["cpasync-cg16-s2", "cpasync-cg16-s3", "cpasync-ca4-s2"]
CPASYNC_GEMM = ["cpasync-cg16-s2", "cpasync-cg16-s3"]
RING_ROWS = ["bulk-s2", "tma-s2", "tma-s3", "tma-ws-s3"]
WGMMA = ["tma-wgmma-s2", "tma-wgmma-s3", "tma-wgmma-ws-s3", "tma-wgmma-ws-persist-s3"]

mutant("fault-cpasync", "pipeline/cpasync.cuh",
       [("    if (!w.has(k)) return;  // draining: never copy past the last step\n",
         "    if (!w.has(k)) return;  // draining: never copy past the last step\n"
         "    if (k == 2 && threadIdx.x == 0) *reinterpret_cast<volatile int*>(8) = k;\n")],
       "every cp.async variant stores through a null pointer on its third step (a sticky fault)",
       "none", [], rows=CPASYNC_ROWS, gemm=CPASYNC_GEMM)
mutant("sync-no-release-barrier", "pipeline/staged.cuh",
       [("        perturb(c, k, EDGE_RELEASE);\n        m.sync();\n", "        perturb(c, k, EDGE_RELEASE);\n")],
       "the sync baseline overwrites its one slot while slower warps still read it",
       "release", ["refill-unacquired"], rows=["sync"], gemm=["sync"])
mutant("cpasync-wait-one-short", "pipeline/cpasync.cuh",
       [("        group_wait<LEAD - 1>(m);\n", "        group_wait<LEAD>(m);\n")],
       "cp.async waits for one group fewer than the step it reads",
       "wait count", ["read-incomplete-group"], rows=CPASYNC_ROWS, gemm=CPASYNC_GEMM)
mutant("ring-wrong-parity", "pipeline/ring.cuh",
       [("    ring_wait(m, c, &full[s], st.phase(), s, ROLE_CONSUMER, k);\n",
         "    ring_wait(m, c, &full[s], st.phase() ^ 1U, s, ROLE_CONSUMER, k);\n")],
       "the consumer of every bulk/TMA variant waits on the wrong phase of its full barrier",
       "parity", ["wait-parity"], rows=RING_ROWS, gemm=WGMMA)
mutant("tma-short-tx", "pipeline/ring.cuh",
       [("ring_arm(m, &full[s], s, k, tma_step_bytes(w, k, 0) + ", "ring_arm(m, &full[s], s, k, tma_step_bytes(w, k, 0) - 16 + ")],
       "TMA announces 16 bytes fewer than its box delivers",
       "expect_tx", ["tx-bytes"], rows=["tma-s2", "tma-ws-s3"], gemm=WGMMA)

# ---- written for the protocol monitor: none repeats a CONTROL of kernels/common/hooks.cuh ----

mutant("mca-pipeline-no-acquire", "pipeline/memcpy_async.cuh",
       [("            trace(c, k + STAGES - 1, EV_ISSUE, rec);\n            pipe_acquire(m, pipe);\n",
         "            trace(c, k + STAGES - 1, EV_ISSUE, rec);\n")],
       "the cuda::pipeline ring refills a slot without producer_acquire (slower warps still read it)",
       "acquire", ["refill-unacquired"], rows=["mca-pipeline-a16-s2", "mca-pipeline-a16-s3"],
       gemm=["mca-pipeline-a16-s3"])
mutant("mca-pipeline-release-before-read", "pipeline/memcpy_async.cuh",
       [("        pipe_wait(m, pipe);\n", "        pipe_wait(m, pipe);\n        pipe_release(m, pipe);\n"),
        ("        perturb(c, k, EDGE_RELEASE);\n        pipe_release(m, pipe);\n", "        perturb(c, k, EDGE_RELEASE);\n")],
       "consumer_release runs right after consumer_wait, before the compute body reads the stage",
       "release", ["release-unread"], rows=["mca-pipeline-a16-s2", "mca-pipeline-elem-s2"],
       gemm=["mca-pipeline-a16-s3"])
mutant("mca-pipeline-deeper-than-slots", "pipeline/memcpy_async.cuh",
       [("cuda::pipeline_shared_state<cuda::thread_scope_block, STAGES> state;",
         "cuda::pipeline_shared_state<cuda::thread_scope_block, STAGES + 1> state;")],
       "the cuda::pipeline has a stage more than the ring has slots: producer_acquire lets a refill in one "
       "step early (a cross-thread count: caught when a stress run's sleeps let a warp fall behind)",
       "acquire", ["refill-before-release"], rows=["mca-pipeline-a16-s2", "mca-pipeline-a16-s3"],
       gemm=["mca-pipeline-a16-s3"])
mutant("mca-barrier-no-refill-sync", "pipeline/memcpy_async.cuh",
       [("    for (int k = 0; k < n; ++k, fill.advance(), read.advance()) {\n        m.sync();\n",
         "    for (int k = 0; k < n; ++k, fill.advance(), read.advance()) {\n")],
       "the cuda::barrier ring refills the slot just read with no bar.sync after every thread's reads",
       "release", ["refill-unacquired"], rows=["mca-barrier-a16-s2", "mca-barrier-elem-s2"])
mutant("mca-barrier-waits-fill-slot", "pipeline/memcpy_async.cuh",
       [("slot_arrive_and_wait(m, bar, read.slot(), k);", "slot_arrive_and_wait(m, bar, fill.slot(), k);")],
       "arrive_and_wait on the barrier of the slot being filled, not the one about to be read",
       "wait", ["read-unwaited"], rows=["mca-barrier-a16-s2", "mca-barrier-elem-s2"])
mutant("cpasync-commit-before-issue", "pipeline/cpasync.cuh",
       [("        cpasync_issue(m, w, k + LEAD, fill.slot(), tid);\n#if CONTROL != CTL_COMMIT_AFTER_WAIT\n"
         "        commit_step(m, w, k + LEAD);\n#endif\n",
         "#if CONTROL != CTL_COMMIT_AFTER_WAIT\n        commit_step(m, w, k + LEAD);\n#endif\n"
         "        cpasync_issue(m, w, k + LEAD, fill.slot(), tid);\n")],
       "each refill's copies join the group after the one committed for them (commit before issue)",
       "commit", ["read-incomplete-group"], rows=CPASYNC_ROWS, gemm=CPASYNC_GEMM)
mutant("cpasync-no-wait-in-drain", "pipeline/cpasync.cuh",
       [("#elif CONTROL != CTL_SKIP_WAIT\n        group_wait<LEAD - 1>(m);\n",
         "#elif CONTROL != CTL_SKIP_WAIT\n        if (k + LEAD < n) group_wait<LEAD - 1>(m);\n")],
       "no wait_group once no more copies are issued: the last steps are read still in flight",
       "wait count", ["read-incomplete-group"], rows=CPASYNC_ROWS, gemm=CPASYNC_GEMM)
mutant("cpasync-barrier-before-wait", "pipeline/cpasync.cuh",
       [("#if CONTROL == CTL_WAIT_SHORT\n        group_wait<LEAD>(m);\n",
         "        m.sync();\n#if CONTROL == CTL_WAIT_SHORT\n        group_wait<LEAD>(m);\n"),
        ("#if CONTROL != CTL_NO_BARRIER\n        m.sync();\n#endif\n", "")],
       "bar.sync before wait_group, not after: other threads' copies of the step are read unpublished",
       "wait / publish", ["read-unpublished"], rows=CPASYNC_ROWS, gemm=CPASYNC_GEMM)
mutant("cpasync-drain-one-short", "pipeline/cpasync.cuh",
       [("    for (int k = 0; k < n; ++k, fill.advance(), read.advance()) {\n",
         "    for (int k = 0; k + 1 < n; ++k, fill.advance(), read.advance()) {\n")],
       "the cp.async loop stops one step early: the last tile (K slice) is copied and never read",
       "drain", ["drain"], rows=CPASYNC_ROWS, gemm=CPASYNC_GEMM)
mutant("regprefetch-no-publish-barrier", "pipeline/staged.cuh",
       [("        stage_store(m, w, k, ring.slot(), tid, st);\n        m.sync();\n",
         "        stage_store(m, w, k, ring.slot(), tid, st);\n")],
       "regprefetch reads its slot with no bar.sync after every thread's stores (and refills with none)",
       "publish / release", ["read-unpublished", "refill-unacquired"], rows=["regprefetch"], gemm=["regprefetch"])
mutant("ring-refill-skips-first-wait", "pipeline/ring.cuh",
       [("    if (k >= STAGES && !__all_sync(", "    if (k > STAGES && !__all_sync(")],
       "the producer's first refill of slot 0 (step STAGES) skips the wait on empty[0]",
       "acquire", ["refill-unacquired"], rows=RING_ROWS, gemm=WGMMA)
mutant("ring-phase-hardcoded-2", "pipeline/pipeline.cuh",
       [("u32 phase() const { return (count / S) & 1U; }", "u32 phase() const { return (count / 2) & 1U; }")],
       "the ring's phase flips every two steps, right for double buffering only",
       "phase flip on wrap", ["wait-parity"], rows=["tma-s3", "bulk-s3", "tma-ws-s3"],
       gemm=["tma-wgmma-s3", "tma-wgmma-ws-s3"], clean=["tma-s2", "bulk-s2"])
mutant("ring-empty-count-short", "pipeline/ring.cuh",
       [("bar_init(m, &empty[s], STAGES + s, NWARPS_R * CLUSTER);", "bar_init(m, &empty[s], STAGES + s, NWARPS_R * CLUSTER - 1);")],
       "empty[s] completes after all consumer warps but one released the slot",
       "mbarrier init", ["init-count"], rows=RING_ROWS, gemm=WGMMA)
mutant("ring-no-init-fence", "pipeline/ring.cuh",
       [("        bar_fence(m);\n", "")],
       "no fence.mbarrier_init after the ring's inits: the async proxy may complete copies on stale barriers",
       "fence", ["fence-missing"], rows=RING_ROWS, gemm=WGMMA)
mutant("ring-no-init-sync", "pipeline/ring.cuh",
       [("    }\n    m.sync();\n#if CLUSTER > 1\n", "    }\n#if CLUSTER > 1\n")],
       "no bar.sync after thread 0 initialises the ring's barriers: other warps may wait on them first",
       "mbarrier init", ["init-unsynced", "init-missing"], rows=RING_ROWS, gemm=WGMMA)
mutant("tma-tail-tx-rows", "pipeline/ring.cuh",
       [("ring_arm(m, &full[s], s, k, tma_step_bytes(w, k, 0) + ",
         "ring_arm(m, &full[s], s, k, tma_step_bytes(w, k, 0) * step.units() / W::MAX_UNITS + ")],
       "TMA announces only the tail tile's rows, though its box lands whole (zero-filled past the end)",
       "expect_tx (tail)", ["tx-bytes"], rows=["tma-s2", "tma-s3", "tma-ws-s3"], clean=WGMMA)
mutant("bulk-tail-tx-full-tile", "pipeline/ring.cuh",
       [("ring_arm(m, &full[s], s, k, step.bytes());", "ring_arm(m, &full[s], s, k, W::MAX_UNITS * COPY_BYTES);")],
       "bulk announces a whole tile for the tail tile, whose rows past the end are never copied",
       "expect_tx (tail)", ["tx-bytes"], rows=["bulk-s2", "bulk-s3"])
mutant("ring-drain-past-end", "pipeline/ring.cuh",
       [("    if (!w.has(k)) return;\n    const Ctl& c = w.ctl();\n", "    const Ctl& c = w.ctl();\n")],
       "the producer issues past the block's last step while the ring drains (copies land after the block)",
       "drain", ["issue-past-end"], rows=["bulk-s2", "tma-s2", "tma-s3"], gemm=["tma-wgmma-s2", "tma-wgmma-s3"])
mutant("wgmma-wait-one", "gemm/wgmma.cuh",
       [("        mma_wait<0>();\n", "        mma_wait<1>();\n")],
       "wgmma.wait_group 1 before the slot's release: the step's MMAs may still read the slot",
       "wgmma wait", ["wgmma-in-flight"], gemm=WGMMA)
mutant("gemm-ktail-overread", "gemm.cu",
       [("inside = r < mrows && c < kcols;", "inside = r < mrows;")],
       "A's K tail is read past K instead of zero-filled (B's zero rows hide it from the output)",
       "K tail", ["tail-read"], gemm=["sync", "regprefetch", "cpasync-cg16-s2", "mca-pipeline-a16-s3"])


def main():
    if sys.argv[1:] == ["--list"]:
        for name, m in M.items():
            print(f"{name}: {m['what']} [{m['edge']}: {', '.join(m['rules']) or 'a fault'}]")
        return
    if sys.argv[1:] == ["--json"]:
        print(json.dumps(M, indent=1))
        return
    if len(sys.argv) == 3 and sys.argv[1] == "--fields" and sys.argv[2] in M:
        # for shell scripts: row variants, GEMM variants, clean variants, rules (comma lists, - if none)
        m = M[sys.argv[2]]
        print(" ".join(",".join(m[k]) or "-" for k in ("rows", "gemm", "clean", "rules")))
        return
    if len(sys.argv) != 3 or sys.argv[1] not in M:
        sys.exit(f"usage: {sys.argv[0]} MUTANT OUTDIR (MUTANT: {', '.join(M)})")
    name, out = sys.argv[1], pathlib.Path(sys.argv[2])
    src = pathlib.Path(__file__).resolve().parent.parent / "kernels"
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(src, out)
    m = M[name]
    path = out / m["file"]
    text = path.read_text()
    for old, new in m["edits"]:
        if text.count(old) != 1:
            sys.exit(f"{name}: the text to mutate is not in {m['file']} exactly once; update scripts/mutate.py")
        text = text.replace(old, new)
    path.write_text(text)
    print(f"{name}: {m['what']} ({m['file']})")


if __name__ == "__main__":
    main()
