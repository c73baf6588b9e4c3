//! `--format markdown|csv|json` of run, check and sweep: the renderers on recorded H200 results,
//! and the flag as the binary takes it (the commands themselves need a GPU).

use assert_cmd::Command;
use std::path::Path;
use tilepipe::render::formats;
use tilepipe::results::sweep::Record;
use tilepipe::results::sweep_store;

type RunResults = tilepipe::results::RunResults<serde_json::Value>;

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn run() -> RunResults {
    RunResults::read(&fixture("h200-run.json")).unwrap()
}

#[test]
fn run_as_markdown_is_two_github_tables_and_the_warnings() {
    let r = run();
    let md = formats::run::markdown(&r);
    assert!(md.starts_with("**tilepipe 0.1.0: rmsnorm bf16 on NVIDIA H200 (sm_90, 132 SMs)"));
    assert!(md.contains(
        "| variant | mechanism | tile | stages | B/copy | status | device median us | min..max us | GB/s | % of copy |"
    ));
    assert!(md.contains(
        "| --- | --- | --- | ---: | --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |"
    ));
    assert!(md.contains("| sync | sync | 2 rows | 1 | 16 | passed | 1146.3 |"));
    assert!(md.contains("| variant | regs | smem static+dyn |"));
    // every variant in both tables, every row as wide as its header
    let rows: Vec<&str> = md.lines().filter(|l| l.starts_with("| ")).collect();
    assert_eq!(rows.len(), 2 * (r.variants.len() + 2));
    for row in &rows {
        let cells = row.matches(" | ").count() + 1;
        assert!(cells == 13 || cells == 11, "{row}");
    }
    assert!(md.contains("\n- CLOCKS tma-ws-s2-64k: SM clock moved"));
    assert!(md.contains("\n- repeatability: sync measured again"));
    assert!(!md.contains("traced variant"), "no timeline in this run");
}

#[test]
fn the_checking_builds_cost_stands_beside_the_clean_builds_resources() {
    let mut r = run();
    // a results.json from before the monitor has no checking build: shown as "-"
    assert!(r.variants.iter().all(|v| v.checking.is_none()));
    r.variants[0].checking = Some(tilepipe::gpu::FunctionResources {
        registers: 96,
        static_smem: 3328,
        local_bytes: 0,
        max_threads: 1024,
    });
    let md = formats::run::markdown(&r);
    assert!(md.contains("| local B | checking build |"), "{md}");
    let sync = md
        .lines()
        .find(|l| l.starts_with("| sync |") && l.contains("regs"))
        .unwrap();
    assert!(
        sync.contains("| 96 regs, 3328 B static, 0 B local |"),
        "{sync}"
    );
    let other = md
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| sync |"))
        .find(|l| l.matches(" | ").count() + 1 == 11 && !l.contains("variant"))
        .unwrap();
    assert!(!other.contains(" regs, "), "{other}");
}

/// One CSV line's fields, a quoted field (one holding commas) as one.
fn fields(line: &str) -> Vec<String> {
    let (mut out, mut cur, mut quoted) = (Vec::new(), String::new(), false);
    for ch in line.chars() {
        match ch {
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    out.push(cur);
    out
}

#[test]
fn run_as_csv_is_one_row_per_variant_at_full_precision() {
    let r = run();
    let csv = formats::run::csv(&r);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), r.variants.len() + 1);
    assert!(lines[0].starts_with("variant,mechanism,tile,stages,bytes_per_copy,"));
    let header = fields(lines[0]);
    let sync = fields(lines[1]);
    let at = |name: &str| sync[header.iter().position(|h| h == name).unwrap()].as_str();
    assert_eq!(at("variant"), "sync");
    let median = r.variants[0].timing.as_ref().unwrap().device.median;
    assert_eq!(at("device_median_ms"), median.to_string());
    assert!(at("device_median_ms").starts_with("1.146288037300"));
    assert_eq!(at("speedup_vs_sync"), "1");
    assert_eq!(at("limiter"), "registers");
    assert_eq!(at("clock_warning"), "");
    // a field with a comma is quoted: what cp.async emitted lists several instructions
    assert!(csv.contains(",\"LDGSTS.E.BYPASS.128 x8, LDGDEPBAR x2, DEPBAR.LE x2\","));
}

#[test]
fn run_as_json_is_results_json() {
    let r = run();
    let back: RunResults = serde_json::from_str(&formats::run::json(&r)).unwrap();
    assert_eq!(back.variants.len(), r.variants.len());
    assert_eq!(back.notes, r.notes);
}

#[test]
fn a_traced_run_as_markdown_has_its_timeline_table() {
    let r = RunResults::read(&fixture("results.json")).unwrap();
    let md = formats::run::markdown(&r);
    assert!(md.contains("| traced variant | copy time under compute |"));
    assert!(md.contains("| tma-s3 | 76.9% |"));
}

#[test]
fn sweep_points_as_markdown_csv_and_json() {
    let records = sweep_store::read(&fixture("sweep.jsonl")).unwrap().records;
    let md = formats::sweep::markdown(&records);
    assert!(md.starts_with(&format!("**{} sweep points**", records.len())));
    assert!(md.contains("| sync | pipeline | bf16 | h4096 r2 | tiles | 4 | 4 |"));
    assert!(md.contains("| copy stage only |"));
    assert!(
        md.contains("| variant | stages | steps/blk | predicted |") && md.contains("FLAGGED: "),
        "the model beside the points"
    );
    let csv = formats::sweep::csv(&records);
    assert_eq!(csv.lines().count(), records.len() + 1);
    assert!(csv.starts_with("key,workload,variant,mechanism,stages,only,"));
    assert!(
        csv.lines()
            .nth(1)
            .unwrap()
            .starts_with("sync|only0|bf16|h4096|r2|t4,rmsnorm,sync,sync,1,0,")
    );
    let back: Vec<Record> = serde_json::from_str(&formats::sweep::json(&records)).unwrap();
    assert_eq!(back.len(), records.len());
    assert_eq!(back[0].key, records[0].key);
}

/// Points of a sweep dealt over two GPUs are listed GPU by GPU, each naming its GPU.
#[test]
fn sweep_points_of_two_gpus_are_grouped_by_gpu() {
    let mut records = sweep_store::read(&fixture("sweep.jsonl")).unwrap().records;
    for (i, r) in records.iter_mut().enumerate() {
        r.gpu = Some(format!("GPU {}: NVIDIA H200 (GPU-{})", i % 2, i % 2));
    }
    let md = formats::sweep::markdown(&records);
    let gpu_of_row = |l: &str| {
        l.trim_end_matches(" |")
            .rsplit("| ")
            .next()
            .map(str::to_string)
    };
    let column: Vec<String> = md
        .lines()
        .filter(|l| l.contains("NVIDIA H200"))
        .filter_map(gpu_of_row)
        .collect();
    assert_eq!(column.len(), records.len());
    let first_of_gpu1 = column.iter().position(|g| g.starts_with("GPU 1")).unwrap();
    assert!(
        column[..first_of_gpu1]
            .iter()
            .all(|g| g.starts_with("GPU 0"))
    );
    assert!(
        column[first_of_gpu1..]
            .iter()
            .all(|g| g.starts_with("GPU 1"))
    );
    let csv = formats::sweep::csv(&records);
    assert!(csv.lines().next().unwrap().ends_with(",validated,gpu,peer"));
    assert!(
        csv.lines()
            .nth(2)
            .unwrap()
            .ends_with(",GPU 1: NVIDIA H200 (GPU-1),")
    );
}

#[test]
fn run_check_and_sweep_take_the_four_formats_and_refuse_others() {
    for cmd in ["run", "check", "sweep"] {
        let out = Command::cargo_bin("tilepipe")
            .unwrap()
            .args([cmd, "--format", "yaml"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{cmd}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("[possible values: table, markdown, csv, json]"),
            "{cmd}: {err}"
        );
    }
}

/// A run with its torch peers: one timed (as fast as `sync`), one skipped with its reason.
fn with_peers() -> RunResults {
    use tilepipe::results::Peer;
    let mut r = run();
    let sync = r.variants[0].clone();
    let mut eager = Peer::new(
        "torch eager",
        Some("torch 2.11.0".into()),
        "eager: f32 math",
    );
    eager.timing = sync.timing.clone();
    eager.perf = sync.perf.clone();
    eager.checked = Some("f64 reference on every element: 0 beyond tolerance".into());
    r.peers = vec![
        eager,
        Peer::skipped("torch.compile", "cannot import triton".into()),
    ];
    r
}

#[test]
fn peers_sit_in_every_format_beside_the_variants() {
    let r = with_peers();
    let md = formats::run::markdown(&r);
    assert!(md.contains("| torch eager | peer: torch 2.11.0 | - | - | - | passed | 1146.3 |"));
    assert!(md.contains("| torch.compile | peer: version unknown | - | - | - | skipped | - |"));
    assert!(md.contains("\n- skipped torch.compile (peer): cannot import triton"));
    let csv = formats::run::csv(&r);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), r.variants.len() + 3);
    let width = lines[0].split(',').count();
    let eager = lines
        .iter()
        .find(|l| l.starts_with("torch eager,"))
        .unwrap();
    assert_eq!(eager.split(',').count(), width, "{eager}");
    assert!(eager.contains(",passed,"));
    let html = tilepipe::render::html::render(&r);
    assert!(html.contains("Peers: the same problem through other tools"));
    assert!(html.contains("f64 reference on every element: 0 beyond tolerance"));
    assert!(html.contains("torch.compile (peer): cannot import triton"));
    let json = formats::run::json(&r);
    let back: RunResults = serde_json::from_str(&json).unwrap();
    assert_eq!(back.peers.len(), 2);
}

#[test]
fn torch_peers_join_a_gemm_run_and_sweep_after_the_shape_is_judged() {
    for cmd in ["run", "sweep"] {
        let out = Command::cargo_bin("tilepipe")
            .unwrap()
            .args([cmd, "--workload", "gemm", "--peers", "torch", "--m", "0"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{cmd}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("M = 0") && !err.contains("--peers"),
            "{cmd}: {err}"
        );
    }
}

#[test]
fn a_kernel_faster_than_the_copy_ceiling_is_said_to_be_never_shown_over_100_percent() {
    let mut r = run();
    let c = r.ceiling.clone().unwrap();
    let v = &mut r.variants[1];
    let p = v.perf.as_mut().unwrap();
    p.gbps = c.gbps * 1.03;
    p.pct_of_ceiling = Some(103.0);
    let name = v.name.clone();
    let md = formats::run::markdown(&r);
    assert!(md.contains(&format!("| {name} |")));
    assert!(md.contains("| above it |"), "{md}");
    assert!(!md.contains("| 103.0 |"));
    assert!(md.contains(&format!("- ABOVE THE CEILING {name}: ")));
    // the untouched run has no such line
    assert!(!formats::run::markdown(&run()).contains("ABOVE THE CEILING"));
}

#[test]
fn the_ceiling_names_the_copy_that_set_it_and_shows_both() {
    use tilepipe::results::timing::OwnCopy;
    use tilepipe::verdict::statistics::Summary;
    let mut c = run().ceiling.unwrap();
    // a recorded run from before the plain copy kernel: the driver's copy, named
    assert_eq!(c.kernel, "cuMemcpyDtoD");
    assert!(
        c.describe()
            .starts_with(&format!("copy ceiling {:.0} GB/s by cuMemcpyDtoD", c.gbps))
    );
    let t = Summary::of(&[c.time.median * 0.9]).unwrap();
    c.own_kernel = Some(OwnCopy {
        grid: 1056,
        threads: 256,
        samples_ms: vec![t.median],
        time: t,
        gbps: c.gbps / 0.9,
    });
    c.kernel = "tilepipe_plain_copy".into();
    c.gbps /= 0.9;
    let d = c.describe();
    assert!(
        d.contains("by tilepipe_plain_copy")
            && d.contains("tilepipe_plain_copy (1056 x 256 threads)"),
        "{d}"
    );
    assert!(!d.contains("problem's size"), "{d}");
    // a small problem's own-size copy sits beside the ceiling, never in place of it
    let t = Summary::of(&[0.0159]).unwrap();
    c.at_problem_size = Some(tilepipe::results::SizedCopy {
        bytes_copied: 25_178_112,
        buffer_sets: 5,
        time: t,
        gbps: 3167.0,
    });
    let d = c.describe();
    assert!(d.starts_with("copy ceiling "), "{d}");
    assert!(
        d.ends_with("; at the problem's size (24.0 MiB, 5 rotated sets) cuMemcpyDtoD takes 15.9 us (3167 GB/s)"),
        "{d}"
    );
}

#[test]
fn a_recorded_h200_run_with_torch_peers_shows_them_validated_or_failed() {
    let r = RunResults::read(&fixture("h200-peers.json")).unwrap();
    let md = formats::run::markdown(&r);
    // the f32-math spellings validated and timed, the dtype-rounding one refused by the same bound
    assert!(md.contains("| torch eager | peer: torch 2.11.0+cu130 | - | - | - | passed |"));
    assert!(md.contains(
        "| torch.compile | peer: torch 2.11.0+cu130, triton 3.6.0 | - | - | - | passed |"
    ));
    assert!(md.contains(
        "| torch eager, F.rms_norm | peer: torch 2.11.0+cu130 | - | - | - | FAILED | - |"
    ));
    assert!(md.contains("- FAILED torch eager, F.rms_norm (peer): validation: "));
    let compiled = r.peers.iter().find(|p| p.name == "torch.compile").unwrap();
    assert!(
        compiled
            .checked
            .as_deref()
            .unwrap()
            .contains("0 beyond tolerance")
    );
    assert!(compiled.timing.as_ref().unwrap().device_ms.len() >= 20);
}

#[test]
fn a_share_taken_at_one_clock_replaces_the_starred_one() {
    use tilepipe::results::timing::{Matched, PairedRound};
    let mut r = RunResults::read(&fixture("gemm-h200-hopper.json")).unwrap();
    // as the run recorded it: cuBLAS timed while its clock fell, so the plain shares flatter
    let starred = formats::run::markdown(&r);
    assert!(starred.contains("| 111.0* |"), "{starred}");
    assert!(
        starred.contains("% of cuBLAS*: cuBLAS's SM clock moved"),
        "{starred}"
    );
    let round = |cublas: f64, ours: f64| PairedRound {
        reference_ms: cublas,
        subject_ms: ours,
        reference_mhz: Some(1755),
        subject_mhz: Some(1770),
    };
    for v in r.variants.iter_mut().filter(|v| v.perf.is_some()) {
        let slower = if v.name == "tma-wgmma-ws-s4" {
            1.0
        } else {
            2.0
        };
        v.perf.as_mut().unwrap().matched = Matched::of(vec![
            round(1.0, slower + 0.05),
            round(1.0, slower + 0.07),
            round(1.0, slower + 0.06),
        ]);
    }
    let md = formats::run::markdown(&r);
    let row = md
        .lines()
        .find(|l| l.starts_with("| tma-wgmma-ws-s4 |"))
        .unwrap();
    assert!(row.contains("| 94.3 |"), "{row}");
    assert!(
        !md.contains("% of cuBLAS*"),
        "every share taken at one clock: {md}"
    );
}
