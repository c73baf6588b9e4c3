#!/usr/bin/env python3
"""Runs `tilepipe inspect` on libraries built by others and checks what it says.

For each library (a wheel from PyPI, pinned, downloaded with pip): the wheel is fetched and the
library unpacked; `tilepipe inspect LIB --format json` runs (timed); every kernel's census is
compared with an independent count of nvdisasm's listing (cubins unpacked with cuobjdump
-xelf); every hazard must be in tests/fixtures/inspect/corpus-verdicts.md, where each one
checked by hand is explained. It prints, per library, the kernels, the cp.async / bulk / TMA
kernels among them, the hazards and undecided findings on those, census mismatches and the wall
time, and exits 1 when a census differs or a hazard is not explained.

Needs: python3 with pip, the CUDA tools (`bash .ci/run` installs them under target/ci-cuda),
a release build (`cargo build --release`), network access to PyPI, and a few GB of disk.

    scripts/inspect-corpus.py [--only NAME ...] [--arch SM] [--work DIR] [--no-census] [--jobs N]
"""

import argparse
import collections
import concurrent.futures as cf
import json
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VERDICTS = os.path.join(ROOT, "tests/fixtures/inspect/corpus-verdicts.md")

# name: (pip requirement, library inside the wheel, licence)
LIBRARIES = {
    "bitsandbytes": (
        "bitsandbytes==0.50.2",
        "bitsandbytes/libbitsandbytes_cuda128.so",
        "MIT",
    ),
    "flashmla": (
        "sgl-kernel==0.3.21",
        "sgl_kernel/flashmla_ops.abi3.so",
        "Apache-2.0 (sgl-kernel; FlashMLA is MIT)",
    ),
    "sgl-kernel-sm90": (
        "sgl-kernel==0.3.21",
        "sgl_kernel/sm90/common_ops.abi3.so",
        "Apache-2.0",
    ),
    "sgl-kernel-sm100": (
        "sgl-kernel==0.3.21",
        "sgl_kernel/sm100/common_ops.abi3.so",
        "Apache-2.0",
    ),
    "cusparse": (
        "nvidia-cusparse==12.9.4.2",
        "nvidia/cu13/lib/libcusparse.so.12",
        "NVIDIA Software License (downloaded for analysis, not redistributed)",
    ),
    "cublaslt": (
        "nvidia-cublas==13.1.0.3",
        "nvidia/cu13/lib/libcublasLt.so.13",
        "NVIDIA Software License (downloaded for analysis, not redistributed)",
    ),
}

CUDA = os.path.join(ROOT, "target/ci-cuda/nvidia/cu13")


def tool(name):
    for d in [os.path.join(CUDA, "bin"), *os.environ.get("PATH", "").split(os.pathsep)]:
        p = os.path.join(d, name)
        if os.access(p, os.X_OK):
            return p
    sys.exit(f"{name} not found (bash .ci/run installs it under {CUDA}/bin)")


def fetch(requirement, member, work):
    """The library `member` of the wheel `requirement`, downloaded once into `work`."""
    wheels = os.path.join(work, "wheels")
    os.makedirs(wheels, exist_ok=True)
    name = requirement.split("==")[0].replace("-", "_").lower()
    have = [w for w in os.listdir(wheels) if w.lower().startswith(name) and w.endswith(".whl")]
    if not have:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check",
             "--quiet", "-d", wheels, requirement],
            check=True,
        )
        have = [w for w in os.listdir(wheels) if w.lower().startswith(name) and w.endswith(".whl")]
    out = os.path.join(work, "lib", name, member)
    if not os.path.exists(out):
        with zipfile.ZipFile(os.path.join(wheels, have[0])) as z:
            z.extract(member, os.path.join(work, "lib", name))
    return out


OPCODE = re.compile(r"^\s*/\*[0-9a-f]+\*/\s+(@!?U?P[0-6T]\s+)?([A-Z][A-Z0-9_]*(?:\.[A-Za-z0-9_]+)*)")
SECTION = re.compile(r"^\.text\.(\S+):$")


def census(cubin, nvdisasm):
    """Per function of a cubin: opcode -> count, from nvdisasm, `@!PT` left out."""
    out = subprocess.run([nvdisasm, "-c", cubin], capture_output=True, text=True)
    if out.returncode != 0:
        return None
    counts, current = {}, None
    for line in out.stdout.splitlines():
        m = SECTION.match(line.strip())
        if m:
            current = counts.setdefault(m.group(1), collections.Counter())
            continue
        m = OPCODE.match(line)
        if m and current is not None and (m.group(1) or "").strip() != "@!PT":
            current[m.group(2)] += 1
    return counts


def compare_census(lib, report, work, jobs):
    """Mismatches between the report's censuses and nvdisasm's counts, as lines."""
    cubins = os.path.join(work, "cubins", os.path.basename(lib))
    shutil.rmtree(cubins, ignore_errors=True)
    os.makedirs(cubins)
    subprocess.run([tool("cuobjdump"), "-xelf", "all", os.path.abspath(lib)], cwd=cubins,
                   check=True, capture_output=True)
    wanted = {k["cubin"] for k in report["kernels"]}
    nvdisasm = tool("nvdisasm")
    with cf.ThreadPoolExecutor(jobs) as pool:
        counted = dict(zip(wanted, pool.map(lambda c: census(os.path.join(cubins, c), nvdisasm), wanted)))
    bad = []
    for k in report["kernels"]:
        theirs = (counted.get(k["cubin"]) or {}).get(k["name"])
        if theirs is None:
            bad.append(f"{k['id']}: not in nvdisasm's listing")
            continue
        if sum(theirs.values()) != k["instructions"]:
            bad.append(f"{k['id']}: {k['instructions']} instructions, nvdisasm {sum(theirs.values())}")
        for form, n in {**k["movement_census"], **k["math_census"]}.items():
            if theirs.get(form, 0) != n:
                bad.append(f"{k['id']}: {form} x{n}, nvdisasm x{theirs.get(form, 0)}")
    shutil.rmtree(cubins, ignore_errors=True)
    return bad


def verdicts():
    """(library, kernel id pattern, check) of each hazard checked by hand, from the table."""
    rows = []
    for line in open(VERDICTS):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 5 and cells[3] == "hazard":
            rows.append((cells[0], re.compile(cells[1].strip("`")), cells[2]))
    return rows


def copies(k):
    bases = {f.split(".")[0] for f in k["movement_census"]}
    out = []
    if "LDGSTS" in bases:
        out.append("cp.async")
    if bases & {"UBLKCP", "UBLKRED"}:
        out.append("bulk")
    if bases & {"UTMALDG", "UTMASTG", "UTMAREDG"}:
        out.append("TMA")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", nargs="*", choices=sorted(LIBRARIES), help="these libraries only")
    ap.add_argument("--work", default=os.path.join(ROOT, "target/corpus"))
    ap.add_argument("--no-census", action="store_true", help="skip the nvdisasm census comparison")
    ap.add_argument("--arch", help="only the cubins for this architecture (inspect's --arch)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count())
    ap.add_argument("--tilepipe", default=os.path.join(ROOT, "target/release/tilepipe"))
    a = ap.parse_args()
    env = dict(os.environ, CUDA_HOME=CUDA, PATH=f"{CUDA}/bin:{os.environ.get('PATH', '')}")
    known = verdicts()
    failed = False
    summary = []
    for name in a.only or LIBRARIES:
        requirement, member, licence = LIBRARIES[name]
        lib = fetch(requirement, member, a.work)
        start = time.monotonic()
        arch = ["--arch", a.arch] if a.arch else []
        run = subprocess.run([a.tilepipe, "inspect", lib, "--format", "json", "--quiet", *arch],
                             capture_output=True, text=True, env=env)
        wall = time.monotonic() - start
        if run.returncode not in (0, 1):
            print(f"{name}: tilepipe inspect exited {run.returncode}: {run.stderr.strip()}")
            failed = True
            continue
        report = json.loads(run.stdout)
        with open(os.path.join(a.work, f"{name}.json"), "w") as f:
            f.write(run.stdout)
        ks = report["kernels"]
        line = collections.OrderedDict(library=name, licence=licence, kernels=len(ks),
                                       unreadable=len(report["unreadable"]), seconds=round(wall))
        for mech in ["cp.async", "bulk", "TMA"]:
            with_mech = [k for k in ks if mech in copies(k)]
            line[mech] = len(with_mech)
        judged = [k for k in ks if copies(k)]
        status = lambda k, s: any(c["status"] == s for c in k["checks"])
        line["hazard"] = sum(status(k, "hazard") for k in judged)
        line["undecided"] = sum(status(k, "undecided") and not status(k, "hazard") for k in judged)
        unexplained = [
            (k["id"], c["name"]) for k in ks for c in k["checks"] if c["status"] == "hazard"
            and not any(l == name and p.search(k["id"]) and ch == c["name"] for l, p, ch in known)
        ]
        line["unexplained hazards"] = len(unexplained)
        for kid, check in unexplained[:20]:
            print(f"{name}: unexplained hazard: {check}: {kid}")
        if unexplained:
            failed = True
        if not a.no_census:
            bad = compare_census(lib, report, a.work, a.jobs)
            line["census mismatches"] = len(bad)
            for b in bad[:20]:
                print(f"{name}: census: {b}")
            failed |= bool(bad)
        summary.append(line)
        print(json.dumps(line))
    if summary:
        keys = list(summary[0].keys())
        print("\n| " + " | ".join(keys) + " |\n|" + "---|" * len(keys))
        for s in summary:
            print("| " + " | ".join(str(s.get(k, "")) for k in keys) + " |")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
