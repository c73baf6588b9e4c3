#!/usr/bin/env python3
"""Copies kernels/ to OUTDIR and applies one named protocol bug, for TILEPIPE_KERNELS=OUTDIR: the
bugs a reviewer might not think of, to see that `check` and `run` catch each with a clear report
and still finish. Usage: scripts/mutate.py MUTANT OUTDIR   (scripts/mutate.py --list)"""
import pathlib
import shutil
import sys

# name: (file under kernels/, exact text, replacement, what the bug is)
MUTANTS = {
    "fault-cpasync": (
        "pipeline/cpasync.cuh",
        "    if (!w.has(k)) return;  // draining: never copy past the last step\n",
        "    if (!w.has(k)) return;  // draining: never copy past the last step\n"
        "    if (k == 2 && threadIdx.x == 0) *reinterpret_cast<volatile int*>(8) = k;\n",
        "every cp.async variant stores through a null pointer on its third step (a sticky fault)",
    ),
    "sync-no-release-barrier": (
        "pipeline/staged.cuh",
        "        trace(c, k, EV_COMPUTE_END, rec);\n        __syncthreads();\n",
        "        trace(c, k, EV_COMPUTE_END, rec);\n",
        "the sync baseline overwrites its one slot while slower warps still read it",
    ),
    "cpasync-wait-one-short": (
        "pipeline/cpasync.cuh",
        "        cp_async_wait<LEAD - 1>();\n",
        "        cp_async_wait<LEAD>();\n",
        "cp.async waits for one group fewer than the step it reads",
    ),
    "ring-wrong-parity": (
        "pipeline/ring.cuh",
        "    wait_phase(c, &full[s], st.phase(), s, ROLE_CONSUMER, k);\n",
        "    wait_phase(c, &full[s], st.phase() ^ 1U, s, ROLE_CONSUMER, k);\n",
        "the consumer of every bulk/TMA variant waits on the wrong phase of its full barrier",
    ),
    "tma-short-tx": (
        "pipeline/ring.cuh",
        "mbar_arrive_expect_tx(&full[s], w.tma_bytes());",
        "mbar_arrive_expect_tx(&full[s], w.tma_bytes() - 16);",
        "TMA announces 16 bytes fewer than its box delivers",
    ),
}


def main():
    if sys.argv[1:] == ["--list"]:
        for name, (_, _, _, what) in MUTANTS.items():
            print(f"{name}: {what}")
        return
    if len(sys.argv) != 3 or sys.argv[1] not in MUTANTS:
        sys.exit(f"usage: {sys.argv[0]} MUTANT OUTDIR (MUTANT: {', '.join(MUTANTS)})")
    name, out = sys.argv[1], pathlib.Path(sys.argv[2])
    src = pathlib.Path(__file__).resolve().parent.parent / "kernels"
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(src, out)
    file, old, new, what = MUTANTS[name]
    path = out / file
    text = path.read_text()
    if text.count(old) != 1:
        sys.exit(f"{name}: the text to mutate is not in {file} exactly once; update scripts/mutate.py")
    path.write_text(text.replace(old, new))
    print(f"{name}: {what} ({file})")


if __name__ == "__main__":
    main()
