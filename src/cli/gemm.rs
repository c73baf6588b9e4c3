//! `run` and `check` with `--workload gemm`: the GEMM engine, its table and its suite.

use super::args::{Format, GemmArgs, GpuArgs};
use super::print;
use std::path::Path;
use std::process::ExitCode;
use tilepipe::bench::TimingOptions;
use tilepipe::dtype::DType;
use tilepipe::gemm::suite::{GemmSuiteOptions, run_suite};
use tilepipe::gemm::sweep::{self, GemmSweepOptions};
use tilepipe::gemm::timeline::{self, GemmTimelineOptions};
use tilepipe::gemm::{GemmOptions, run, selected};
use tilepipe::meminfo;
use tilepipe::report::formats::md_table;
use tilepipe::report::gemm::GemmRun;
use tilepipe::report::{self, Status, gemm, table};
use tilepipe::timeline::TimelineResult;
use tilepipe::workload::gemm::Problem;

/// `run --workload gemm`.
pub fn cmd_run(
    g: &GemmArgs,
    gpu: &GpuArgs,
    (dtype, seed): (DType, u64),
    variants: Option<String>,
    (timing, torch_python): (TimingOptions, Option<std::path::PathBuf>),
    (out, format): (Option<&Path>, Format),
) -> anyhow::Result<ExitCode> {
    let problem = Problem::new(g.m, g.n, g.k, g.layout, dtype)?;
    meminfo::check(
        "the GEMM's host buffers",
        problem.host_bytes(),
        meminfo::available(),
    )?;
    selected(dtype, variants.as_deref())?;
    if let Some(dir) = out {
        tilepipe::fsio::writable_dir(dir)?;
    }
    let e = gpu.engine(format)?;
    print::notice(&e.info().summary());
    let opts = GemmOptions {
        problem,
        seed,
        variants,
        timing,
        command: std::env::args().collect(),
        torch_python,
    };
    let outcome = run(&e, &opts)?;
    let r = &outcome.run;
    let stats = e.cache_stats();
    if format == Format::Table {
        print::line(&format!(
            "cubin cache: {} hits, {} compiled",
            stats.hits, stats.compiled
        ));
    }
    print_run(r, format);
    if let Some(dir) = out {
        let path = dir.join("results.json");
        r.write(&path)?;
        let html = dir.join("report.html");
        tilepipe::fsio::write_atomic(&html, report::html::gemm::render(r).as_bytes())?;
        print::notice(&format!("wrote {} and {}", path.display(), html.display()));
    }
    if let Some(e) = outcome.fatal {
        if tilepipe::interrupt::requested() {
            print::notice("interrupted: the results above were measured before Ctrl-C");
            return Ok(ExitCode::from(130));
        }
        return Err(
            anyhow::Error::new(e).context("the run stopped early; results so far were kept")
        );
    }
    let bad = r
        .variants
        .iter()
        .any(|v| !matches!(v.status, Status::Passed | Status::Skipped));
    Ok(if bad {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// A GEMM run as `format` says: the table with its header line, or one document; the problems
/// and notes on stderr.
pub fn print_run(r: &GemmRun, format: Format) {
    let rows = || gemm::rows(r);
    match format {
        Format::Json => {
            print::document(&serde_json::to_string_pretty(r).expect("results serialise"))
        }
        Format::Markdown => {
            let mut doc = md_table(&gemm::HEADER, &gemm::RIGHT, rows());
            let ladder = gemm::ladder(r);
            if !ladder.is_empty() {
                doc += "\n";
                doc += &md_table(&gemm::LADDER_HEADER, &gemm::LADDER_RIGHT, ladder);
            }
            print::document(&doc)
        }
        Format::Csv => print::document(&gemm::csv(r)),
        Format::Table => {
            print::line(&format!(
                "gemm {} ({:.1} GFLOP); cuBLAS: {}",
                r.problem.label(),
                r.problem.flops() as f64 / 1e9,
                r.cublas.math
            ));
            print::line(&table::render(&gemm::HEADER, &gemm::RIGHT, rows()));
            let ladder = gemm::ladder(r);
            if !ladder.is_empty() {
                print::line("the Hopper ladder, each step's fastest variant in this run:");
                print::line(&table::render(
                    &gemm::LADDER_HEADER,
                    &gemm::LADDER_RIGHT,
                    ladder,
                ));
            }
        }
    }
    for p in gemm::problems(r).iter().chain(&r.notes) {
        print::notice(p);
    }
}

/// `check --workload gemm`; with `child`, quietly, its report written there as JSON (a process
/// started to run controls that can fault the GPU).
pub fn cmd_check(
    gpu: &GpuArgs,
    opts: GemmSuiteOptions,
    child: Option<&Path>,
    (out, format): (Option<&Path>, Format),
) -> anyhow::Result<ExitCode> {
    if let Some(dir) = out {
        tilepipe::fsio::writable_dir(dir)?;
    }
    let e = gpu.engine(format)?;
    if child.is_none() {
        print::notice(&format!("{}; {}", e.info().summary(), e.tc.describe()));
    }
    let report = run_suite(&e, &opts)?;
    if let Some(file) = child {
        tilepipe::fsio::write_atomic(file, serde_json::to_string(&report)?.as_bytes())?;
        return Ok(ExitCode::SUCCESS);
    }
    super::suite_end::end_suite(&report, out, format)
}

/// `timeline --workload gemm`: the named variants' mainloops on the problem.
pub fn cmd_timeline(
    gpu: &GpuArgs,
    g: &GemmArgs,
    (dtype, seed): (DType, u64),
    names: &str,
    (blocks, tiles): (u32, u32),
) -> anyhow::Result<Vec<TimelineResult>> {
    let problem = Problem::new(g.m, g.n, g.k, g.layout, dtype)?;
    let e = gpu.engine(Format::Table)?;
    let (variants, skipped) = timeline::traceable(&e, names, &problem)?;
    for why in skipped {
        print::notice(&format!("not traced: {why}"));
    }
    let o = GemmTimelineOptions {
        problem,
        seed,
        blocks,
        tiles,
    };
    Ok(timeline::capture(&e, &variants, &o)?)
}

/// `sweep --workload gemm`: gemm-sweep.jsonl (a point per line, as measured) and two plots.
pub fn cmd_sweep(
    gpu: &GpuArgs,
    o: GemmSweepOptions,
    out: &Path,
    format: Format,
) -> anyhow::Result<ExitCode> {
    if o.ks.is_empty() {
        anyhow::bail!("--ks is empty: give at least one K");
    }
    for &k in &o.ks {
        let p = Problem::new(o.m, o.n, k, o.layout, o.dtype)?;
        meminfo::check(
            "the GEMM's host buffers",
            p.host_bytes(),
            meminfo::available(),
        )?;
    }
    tilepipe::fsio::writable_dir(out)?;
    let e = gpu.engine(format)?;
    print::notice(&e.info().summary());
    let jsonl = out.join("gemm-sweep.jsonl");
    let mut lines = String::new();
    let points = sweep::sweep(&e, &o, |p| {
        lines.push_str(&serde_json::to_string(p).expect("points serialise"));
        lines.push('\n');
        tilepipe::fsio::write_atomic(&jsonl, lines.as_bytes())
    })?;
    for (name, svg) in [
        ("gemm-k.svg", sweep::plot_k(&points)),
        ("gemm-stages.svg", sweep::plot_stages(&points)),
    ] {
        match svg {
            Ok(svg) => tilepipe::fsio::write_atomic(&out.join(name), svg.as_bytes())?,
            Err(why) => print::notice(&format!("{name} not drawn: {why}")),
        }
    }
    let header = [
        "variant",
        "K",
        "K slices",
        "median us",
        "TFLOP/s",
        "blocks/SM",
        "limiter",
        "smem KiB",
    ];
    let rows = points.iter().map(|p| {
        [
            p.variant.clone(),
            p.problem.k.to_string(),
            p.k_steps.to_string(),
            format!("{:.1}", p.median_ms * 1e3),
            format!("{:.1}", p.tflops),
            p.blocks_per_sm.to_string(),
            p.limiter.clone(),
            (p.dynamic_smem / 1024).to_string(),
        ]
    });
    match format {
        Format::Json => print::document(&serde_json::to_string_pretty(&points)?),
        Format::Markdown => print::document(&md_table(&header, &[1, 2, 3, 4, 5, 7], rows)),
        Format::Csv => print::document(
            &std::iter::once(header.join(","))
                .chain(rows.map(|r| r.join(",")))
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        Format::Table => print::line(&table::render(&header, &[1, 2, 3, 4, 5, 7], rows)),
    }
    print::notice(&format!(
        "wrote {} and the plots gemm-k.svg, gemm-stages.svg",
        jsonl.display()
    ));
    Ok(ExitCode::SUCCESS)
}
