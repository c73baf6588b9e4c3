//! `tilepipe inspect` on Triton cache entries (tests/fixtures/triton: Triton 3.6.0, sm_90, made
//! by scripts/triton-fixtures.py, and three of torch.compile's from an H100's inductor cache),
//! through the real binary: each verdict, and the same entry with its metadata edited so that
//! the verdict must turn. Needs nvdisasm and cuobjdump
//! (CUDA_HOME); without them each test says so and is skipped, unless TILEPIPE_REQUIRE_NVRTC is
//! set (CI), where it fails.

#[path = "common/bin.rs"]
mod bin;

use bin::{assert_says, fixture, refuses, stderr_of, tilepipe};
use serde_json::Value;
use std::path::Path;

/// Whether the disassemblers are there; a line saying why not when CI did not ask for them.
fn tools() -> bool {
    let tc = tilepipe::toolchain::Toolchain::discover();
    if tc.nvdisasm.is_some() && tc.cuobjdump.is_some() {
        return true;
    }
    if std::env::var_os("TILEPIPE_REQUIRE_NVRTC").is_some() {
        panic!("TILEPIPE_REQUIRE_NVRTC is set: no nvdisasm and cuobjdump");
    }
    eprintln!("skipped: no nvdisasm and cuobjdump; .ci/run installs them");
    false
}

/// `inspect PATH --format json`: the exit code and the report.
fn inspect(path: &Path) -> (i32, Value) {
    let out = tilepipe()
        .args(["inspect", "--quiet", "--format", "json"])
        .arg(path)
        .output()
        .unwrap();
    let code = out.status.code().unwrap();
    let report =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr_of(&out)));
    (code, report)
}

fn entry(name: &str) -> std::path::PathBuf {
    fixture(&format!("triton/{name}")).into()
}

/// A copy of a fixture folder whose metadata `edit` changed.
fn edited(name: &str, edit: impl Fn(&mut Value)) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for f in std::fs::read_dir(entry(name)).unwrap() {
        let f = f.unwrap().path();
        let to = dir.path().join(f.file_name().unwrap());
        if f.extension().is_some_and(|x| x == "json") {
            let mut meta: Value =
                serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
            edit(&mut meta);
            std::fs::write(&to, meta.to_string()).unwrap();
        } else {
            std::fs::copy(&f, &to).unwrap();
        }
    }
    dir
}

/// The one kernel of a report.
fn only(r: &Value) -> &Value {
    let ks = r["kernels"].as_array().unwrap();
    assert_eq!(ks.len(), 1, "{r}");
    &ks[0]
}

/// The one kernel of the entry at `path`, whose inspection exits with `code`.
fn kernel(path: &Path, code: i32) -> Value {
    let (got, r) = inspect(path);
    assert_eq!(got, code, "{r}");
    only(&r).clone()
}

/// The verdict on a kernel's claim of `mechanism` ("stages", "tma", "async"), which must be
/// `outcome`: what it says was emitted.
fn verdict<'a>(k: &'a Value, mechanism: &str, outcome: &str) -> &'a str {
    let v = k["claims"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["claim"]["mechanism"] == mechanism)
        .unwrap_or_else(|| panic!("no {mechanism} claim: {}", k["claims"]));
    assert_eq!(v["outcome"], outcome, "{v}");
    v["emitted"].as_str().unwrap()
}

/// Resident blocks per SM and their limiter.
fn occupancy(k: &Value) -> (u64, &str) {
    let o = &k["resources"]["occupancy"];
    (
        o["blocks_per_sm"].as_u64().unwrap(),
        o["limiter"].as_str().unwrap(),
    )
}

/// The one kernel of the fixture entry `name`, which inspect passes (exit 0); None when the
/// disassemblers are missing.
fn passing(name: &str) -> Option<Value> {
    tools().then(|| kernel(&entry(name), 0))
}

/// Fails, quoting `text`, unless it holds every one of `parts`.
fn holds_all(text: &str, parts: &[&str]) {
    for p in parts {
        assert!(text.contains(p), "'{p}' is not in: {text}");
    }
}

fn set_stages(n: u32) -> impl Fn(&mut Value) {
    move |m| m["num_stages"] = n.into()
}

#[test]
fn a_pipelined_matmul_keeps_its_three_cp_async_stages() {
    let Some(k) = passing("matmul-s3") else {
        return;
    };
    holds_all(
        verdict(&k, "stages", "attested"),
        &["3: ", "4 cp.async group(s) in flight, 2 per trip"],
    );
    verdict(&k, "async", "attested");
    let movement = k["movement"].as_str().unwrap();
    assert!(movement.contains("LDGSTS.E.BYPASS.128"), "{movement}");
    assert_eq!(k["arch"], "sm_90a");
    // the launch is Triton's: 4 warps and 48 KiB of dynamic shared memory
    assert_eq!(k["resources"]["launch"]["threads"], 128);
    assert_eq!(k["resources"]["launch"]["dynamic_smem"], 49152);
    assert_eq!(occupancy(&k), (3, "registers"));
    // controls: metadata claiming one stage more, or tensor descriptors, is contradicted
    let more = edited("matmul-s3", set_stages(4));
    let k = kernel(more.path(), 1);
    assert!(verdict(&k, "stages", "contradicted").starts_with("3: "));
    let tma = edited("matmul-s3", |m| {
        m["tensordesc_meta"] = serde_json::json!([{"swizzle": 3, "elem_size": 2}]);
    });
    let k = kernel(tma.path(), 1);
    let emitted = verdict(&k, "tma", "contradicted");
    assert!(emitted.starts_with("cp.async 16 B"), "{emitted}");
}

#[test]
fn a_persistent_tma_matmul_is_attested_as_tma_with_its_ring() {
    let Some(k) = passing("matmul-tma-persistent") else {
        return;
    };
    holds_all(
        verdict(&k, "tma", "attested"),
        &["TMA, cp.async.bulk.tensor (UTMALDG.2D"],
    );
    holds_all(
        verdict(&k, "stages", "attested"),
        &[
            "2 mbarrier fill(s) in flight, 1 per trip",
            "(3 mbarrier(s) initialised)",
        ],
    );
    assert_eq!(occupancy(&k), (1, "shared_memory"));
    // control: two stages claimed of a ring that keeps three
    let fewer = edited("matmul-tma-persistent", set_stages(2));
    verdict(&kernel(fewer.path(), 1), "stages", "contradicted");
}

#[test]
fn num_stages_1_is_seen_as_synchronous() {
    let Some(k) = passing("matmul-s1") else {
        return;
    };
    verdict(&k, "stages", "attested");
    assert_eq!(
        k["claims"].as_array().unwrap().len(),
        1,
        "one stage claims no copy"
    );
    let movement = k["movement"].as_str().unwrap();
    assert!(
        movement.starts_with("synchronous: global loads into registers"),
        "{movement}"
    );
    // control: the same kernel said to keep three stages is caught on both counts
    let three = edited("matmul-s1", set_stages(3));
    let k = kernel(three.path(), 1);
    let emitted = verdict(&k, "stages", "contradicted");
    assert!(
        emitted.starts_with("1: no loop issues an asynchronous copy"),
        "{emitted}"
    );
    verdict(&k, "async", "contradicted");
}

#[test]
fn stages_the_compiler_dropped_are_claimed_3_emitted_1() {
    if !tools() {
        return;
    }
    // a loop whose next load needs the last one's data: cp.async, but waited for at once
    let out = tilepipe()
        .args(["inspect", "--quiet"])
        .arg(entry("chase-s3"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("CONTRADICTED: claimed 3 stages, emitted 1: the loop")
            && text.contains("each copy is waited for in the trip that issues it"),
        "{text}"
    );
    let k = kernel(&entry("chase-s3"), 1);
    verdict(&k, "async", "attested");
    // a kernel without a loop
    let k = kernel(&entry("rmsnorm-s3"), 1);
    assert_eq!(
        verdict(&k, "stages", "contradicted"),
        "1: no loop: nothing is pipelined"
    );
    // controls: the same kernels asked for one stage are attested
    for name in ["chase-s3", "rmsnorm-s3"] {
        let one = edited(name, set_stages(1));
        verdict(&kernel(one.path(), 0), "stages", "attested");
    }
}

#[test]
fn an_unrolled_inductor_matmul_keeps_its_five_stages_counted_per_tile() {
    // torch.compile's triton_mm, num_stages 5: the compiler unrolled the K loop 4x, so one trip
    // commits 8 groups, 2 for each of its 4 tiles, and 8 are in flight at the back edge
    let Some(k) = passing("inductor-mm-unrolled-s5") else {
        return;
    };
    holds_all(
        verdict(&k, "stages", "attested"),
        &[
            "5: the loop 0x08b0..0x1350 goes round with 8 cp.async group(s) in flight",
            "8 per trip of 4 tiles (unrolled: 4 waits before shared reads), 2 per tile",
            "4 tile(s) in flight ahead of the one consumed",
        ],
    );
    verdict(&k, "async", "attested");
    // Triton's launch: 8 warps and five 6 KiB slots of dynamic shared memory
    assert_eq!(k["resources"]["launch"]["threads"], 256);
    assert_eq!(k["resources"]["launch"]["dynamic_smem"], 30720);
    // controls: one stage more is contradicted, and so is the 2 a per-trip count read
    for n in [6, 2] {
        let edited = edited("inductor-mm-unrolled-s5", set_stages(n));
        let k = kernel(edited.path(), 1);
        assert!(verdict(&k, "stages", "contradicted").starts_with("5: "));
    }
    // the same template not unrolled: one tile per trip, the same five stages
    let Some(k) = passing("inductor-mm-s5") else {
        return;
    };
    holds_all(
        verdict(&k, "stages", "attested"),
        &[
            "5: ",
            "8 cp.async group(s) in flight, 2 per trip: 4 tile(s) in flight ahead",
        ],
    );
    let fewer = edited("inductor-mm-s5", set_stages(4));
    verdict(&kernel(fewer.path(), 1), "stages", "contradicted");
}

#[test]
fn a_k_loop_unrolled_whole_is_read_at_the_reads_after_each_wait() {
    if !tools() {
        return;
    }
    // torch.compile's triton_mm, num_stages 2, its 32-trip K loop unrolled whole: each of the 33
    // tiles is committed into the one 16 KiB buffer and waited for to the last group before
    // ldmatrix reads it
    let k = kernel(&entry("inductor-mm-straight-s2"), 1);
    assert_eq!(
        verdict(&k, "stages", "contradicted"),
        "1: no loop: straight-line copies, 33 wait(s), each leaves 0 cp.async group(s) in flight before the shared reads: each tile is waited for before it is read"
    );
    verdict(&k, "async", "attested");
    assert_eq!(k["resources"]["launch"]["dynamic_smem"], 16384);
    // control: the same kernel said to keep one stage is attested
    let one = edited("inductor-mm-straight-s2", set_stages(1));
    verdict(&kernel(one.path(), 0), "stages", "attested");
}

#[test]
fn a_cache_folder_is_read_whole_and_summed_up() {
    if !tools() {
        return;
    }
    let (code, r) = inspect(&entry(""));
    assert_eq!(code, 1, "three kernels dropped their stages");
    assert_eq!(r["kind"], "triton");
    let want = [
        ("chase-s3/chase_kernel.cubin", "contradicted"),
        ("inductor-mm-s5/triton_mm.cubin", "attested"),
        ("inductor-mm-straight-s2/triton_mm.cubin", "contradicted"),
        // 4 tiles per trip: 5 stages, not the 2 a count of trips gives
        ("inductor-mm-unrolled-s5/triton_mm.cubin", "attested"),
        ("matmul-s1/matmul_kernel.cubin", "attested"),
        ("matmul-s3/matmul_kernel.cubin", "attested"),
        (
            "matmul-tma-persistent/matmul_tma_persistent.cubin",
            "attested",
        ),
        ("rmsnorm-s3/rmsnorm_kernel.cubin", "contradicted"),
        // one group per trip, two slots, three stages: the rule counts trips, not slots
        ("rowsum-s3/rowsum_kernel.cubin", "attested"),
    ];
    let ks = r["kernels"].as_array().unwrap();
    assert_eq!(ks.len(), want.len());
    for (k, (cubin, outcome)) in ks.iter().zip(want) {
        assert_eq!(k["cubin"], cubin);
        verdict(k, "stages", outcome);
    }
    let out = tilepipe()
        .args(["inspect", "--quiet"])
        .arg(entry(""))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("9 Triton kernel(s)") && text.contains("blocks/SM (limiter)"),
        "{text}"
    );
    assert!(
        text.contains("CONTRADICTED (claimed 3 stages, claimed async)"),
        "{text}"
    );
}

#[test]
fn what_is_not_a_readable_triton_kernel_is_refused() {
    if !tools() {
        return;
    }
    let refused = |path: &Path, extra: &[&str], needles: &[&str]| {
        let out = tilepipe()
            .args(["inspect", "--quiet"])
            .arg(path)
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
        for n in needles {
            assert_says(&out, n);
        }
    };
    let empty = tempfile::tempdir().unwrap();
    refused(
        empty.path(),
        &[],
        &[
            "no Triton kernel in this folder",
            "NAME.json beside NAME.cubin",
        ],
    );
    let bad = edited("rowsum-s3", |m| m["num_stages"] = "three".into());
    refused(
        bad.path(),
        &[],
        &[
            "rowsum_kernel.json: not Triton kernel metadata: invalid type",
            "allowed: the NAME.json",
        ],
    );
    refuses(
        &["inspect", &fixture("triton"), "--arch", "sm_80"],
        "holds no cubin for sm_80 (it holds sm_90)",
    );
    // the cubin said to be for sm_35, which this CUDA's disassemblers no longer read
    let old = edited("rowsum-s3", |_| {});
    let cubin = old.path().join("rowsum_kernel.cubin");
    let mut elf = std::fs::read(&cubin).unwrap();
    let flags = u32::from_le_bytes(elf[48..52].try_into().unwrap());
    let sm35 = (flags & !0x00ff_00ff) | 0x23 | (0x23 << 16);
    elf[48..52].copy_from_slice(&sm35.to_le_bytes());
    std::fs::write(&cubin, elf).unwrap();
    refused(
        old.path(),
        &[],
        &[
            "rowsum_kernel.cubin",
            "sm_35",
            "allowed: a cubin this CUDA's",
        ],
    );
}
