"""Compiles one @triton.jit kernel for a CUDA target, without a GPU, into a Triton cache folder
and runs `tilepipe inspect` on it: the metadata's num_stages and tensor descriptors are the
claims, the cubin's SASS says what was emitted.

From Python:

    from tilepipe.triton import compile_kernel, inspect
    inspect(matmul_kernel, {"a_ptr": "*fp16", ...}, {"BLOCK_M": 128}, num_stages=3)

From a shell (the signature and constexprs as JSON, as Triton's ASTSource takes them):

    python -m tilepipe.triton kernels.py:matmul_kernel \\
        --signature '{"a_ptr": "*fp16", "M": "i32", "BLOCK_M": "constexpr"}' \\
        --constexprs '{"BLOCK_M": 128}' --divisible a_ptr,M --arch 90 --num-stages 3 \\
        -- --format json

Everything after `--` goes to `tilepipe inspect`. Arguments named by --divisible get Triton's
`tt.divisibility = 16` hint, as the launcher gives to pointers and integers divisible by 16.
"""

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


def compile_kernel(fn, signature, constexprs=None, *, divisible=(), arch=90, num_stages=3,
                   num_warps=4, out=None, **options):
    """Compiles `fn` for sm_`arch` into the Triton cache folder `out` (an empty or new folder;
    a new temporary one when None, left for the caller) and returns that folder: one kernel
    folder inside, its NAME.json beside NAME.cubin."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    names = list(signature)
    unknown = [a for a in divisible if a not in names]
    if unknown:
        raise ValueError(f"divisible names {unknown}, not in the signature "
                         f"(allowed: {', '.join(names)})")
    attrs = {(names.index(a),): [["tt.divisibility", 16]] for a in divisible}
    out = Path(out) if out is not None else Path(tempfile.mkdtemp(prefix="tilepipe-triton-"))
    out.mkdir(parents=True, exist_ok=True)
    if any(out.iterdir()):
        raise ValueError(f"{out} is not empty "
                         "(allowed: a new or empty folder, so that it holds this kernel only)")
    # Triton reads its cache folder from the environment at each compile
    before = os.environ.get("TRITON_CACHE_DIR")
    os.environ["TRITON_CACHE_DIR"] = str(out)
    try:
        src = ASTSource(fn=fn, signature=signature, constexprs=constexprs or {}, attrs=attrs)
        triton.compile(src, target=GPUTarget("cuda", arch, 32),
                       options=dict(num_stages=num_stages, num_warps=num_warps, **options))
    finally:
        if before is None:
            del os.environ["TRITON_CACHE_DIR"]
        else:
            os.environ["TRITON_CACHE_DIR"] = before
    return out


def inspect(fn, signature, constexprs=None, *, args=(), out=None, **compile_options):
    """Compiles `fn` (see compile_kernel) and runs `tilepipe inspect` on it with `args`;
    returns its exit code (0 clean, 1 a contradicted claim or a hazard, 2 nothing judged). The
    cache folder is kept only when `out` names it."""
    tilepipe = _tilepipe()
    with tempfile.TemporaryDirectory(prefix="tilepipe-triton-") as scratch:
        folder = compile_kernel(fn, signature, constexprs, out=out or scratch,
                                **compile_options)
        return subprocess.call([tilepipe, "inspect", str(folder), *args])


def _tilepipe():
    found = shutil.which("tilepipe")
    if found is None:
        raise FileNotFoundError("no `tilepipe` command on PATH: `pip install tilepipe` "
                                "(or `cargo install --path .`) installs it")
    return found


def _load(spec):
    path, _, name = spec.rpartition(":")
    if not path or not name:
        raise ValueError(f"'{spec}' is not FILE.py:KERNEL "
                         "(allowed: a Python file and the name of a @triton.jit function in it)")
    module_spec = importlib.util.spec_from_file_location(Path(path).stem, path)
    if module_spec is None:
        raise ValueError(f"{path} is not a Python file (allowed: FILE.py:KERNEL)")
    module = importlib.util.module_from_spec(module_spec)
    # the module's folder first, as `python FILE.py` would have it
    sys.path.insert(0, str(Path(path).resolve().parent))
    module_spec.loader.exec_module(module)
    if not hasattr(module, name):
        raise ValueError(f"{path} defines no '{name}' "
                         "(allowed: a @triton.jit function defined at its top level)")
    return getattr(module, name)


def _json(flag, text):
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"{flag} is not JSON: {e} (allowed: an object, name -> value)") from None
    if not isinstance(value, dict):
        raise ValueError(f"{flag} is not a JSON object (allowed: an object, name -> value)")
    return value


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    rest = []
    if "--" in argv:
        at = argv.index("--")
        argv, rest = argv[:at], argv[at + 1:]
    p = argparse.ArgumentParser(prog="python -m tilepipe.triton",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("kernel", help="FILE.py:KERNEL, a @triton.jit function")
    p.add_argument("--signature", required=True, help="JSON: argument name -> Triton type")
    p.add_argument("--constexprs", default="{}", help="JSON: constexpr name -> value")
    p.add_argument("--divisible", default="", help="arguments divisible by 16, comma-separated")
    p.add_argument("--arch", type=int, default=90, help="compute capability, e.g. 80 or 90")
    p.add_argument("--num-stages", type=int, default=3)
    p.add_argument("--num-warps", type=int, default=4)
    p.add_argument("--out",
                   help="a new folder to keep the Triton cache in (default: a temporary one)")
    a = p.parse_args(argv)
    try:
        signature = _json("--signature", a.signature)
        constexprs = _json("--constexprs", a.constexprs)
        fn = _load(a.kernel)
        return inspect(fn, signature, constexprs, args=rest,
                       out=a.out, divisible=[d for d in a.divisible.split(",") if d],
                       arch=a.arch, num_stages=a.num_stages, num_warps=a.num_warps)
    except (ValueError, FileNotFoundError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
