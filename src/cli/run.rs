//! `tilepipe run`: the main job.

use super::args::{Format, GemmArgs, GpuArgs, PeerArgs, ProblemArgs, WorkloadArg, bounded};
use super::print;
use super::timeline::{traceable, write_timeline};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;
use tilepipe::bench::{MAX_REPEATS, TimingOptions};
use tilepipe::pipeline::Variant;
use tilepipe::run::{ChildRun, RunOptions, run_isolated};
use tilepipe::timeline::capture::{TimelineOptions, capture};
use tilepipe::{fsio, report};

#[derive(Args)]
pub struct RunArgs {
    #[command(flatten)]
    problem: ProblemArgs,
    #[command(flatten)]
    gpu: GpuArgs,
    #[command(flatten)]
    gemm: GemmArgs,
    /// Variants by name or prefix, comma-separated (sync is always included as the baseline).
    #[arg(long)]
    variants: Option<String>,
    /// Report folder: results.json (and report.html).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Fewest timed launches per variant.
    #[arg(long, default_value_t = 20, value_parser = bounded::<1, { MAX_REPEATS as u64 }>())]
    repeats: usize,
    /// Untimed launches before timing.
    #[arg(long, default_value_t = 5, value_parser = bounded::<0, 1000>())]
    warmup: usize,
    /// Also show a burst of launches whose host submission interval and device time disagree.
    #[arg(long)]
    explain_timing: bool,
    /// Also trace these variants (instrumented builds, timed apart) and add their overlap figure.
    #[arg(long, num_args = 0..=1, default_missing_value = "sync,cpasync-cg16-s2,tma-s3")]
    timeline: Option<String>,
    /// How the results are printed: table (the terminal), markdown (GitHub tables for a pull
    /// request), csv (one row per variant) or json (results.json).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    #[command(flatten)]
    peers: PeerArgs,
    /// Variants left out (they faulted the process that started this one).
    #[arg(long, hide = true, value_delimiter = ',')]
    exclude: Vec<String>,
    /// Child mode, for the process that started this one after a fault: print nothing, write the
    /// outcome here as JSON.
    #[arg(long, hide = true)]
    child_results: Option<PathBuf>,
}

pub fn cmd_run(a: RunArgs) -> anyhow::Result<ExitCode> {
    let timing = TimingOptions {
        warmup: a.warmup,
        min_repeats: a.repeats,
        ..TimingOptions::default()
    };
    if let WorkloadArg::Gemm = a.gpu.workload {
        if a.timeline.is_some() || a.explain_timing {
            anyhow::bail!(tilepipe::Error::InvalidArgument(
                "--timeline and --explain-timing take the row workloads; allowed with --workload gemm: --m --n --k --layout --dtype --variants --out".into()
            ));
        }
        return super::gemm::cmd_run(
            &a.gemm,
            &a.gpu,
            (a.problem.dtype, a.problem.seed),
            a.variants,
            (timing, a.peers.torch_python()),
            (a.out.as_deref(), a.format),
        );
    }
    let view = a.problem.view()?;
    if let Some(list) = &a.variants {
        Variant::select(a.gpu.workload.rows()?.catalogue(), Some(list))?;
    }
    let traced = match &a.timeline {
        Some(list) => Some(Variant::select(
            a.gpu.workload.rows()?.catalogue(),
            Some(list),
        )?),
        None => None,
    };
    if let Some(dir) = &a.out {
        fsio::writable_dir(dir)?;
    }
    let opts = RunOptions {
        view,
        dtype: a.problem.dtype,
        seed: a.problem.seed,
        tile_rows: a.problem.tile_rows,
        variants: a.variants,
        timing,
        ceiling_bytes: 1 << 30,
        explain_timing: a.explain_timing,
        command: std::env::args().collect(),
        exclude: a.exclude,
        torch_python: a.peers.torch_python(),
    };
    let h = a.gpu.open()?;
    if let Some(file) = &a.child_results {
        let outcome = run_isolated(&h, &opts)?;
        let child = ChildRun {
            fatal: outcome.fatal.map(|e| e.to_string()),
            results: outcome.results,
        };
        fsio::write_atomic(file, serde_json::to_string(&child)?.as_bytes())?;
        return Ok(ExitCode::SUCCESS);
    }
    print::notice(&h.info().summary());
    let mut outcome = run_isolated(&h, &opts)?;
    if outcome.poisoned && traced.is_some() {
        outcome.results.notes.push(
            "no timeline: a variant faulted this process's GPU context (run `tilepipe timeline` apart)"
                .into(),
        );
    } else if let (Some(traced), None) = (traced, &outcome.fatal) {
        let variants = traceable(&h, traced, &a.problem);
        let t = TimelineOptions {
            view,
            dtype: a.problem.dtype,
            seed: a.problem.seed,
            tile_rows: a.problem.tile_rows,
            blocks: 4,
            tiles: 32,
        };
        match capture(&h, &variants, &t) {
            Ok(tl) => {
                write_timeline(&tl, a.out.as_deref())?;
                outcome.results.timelines = tl;
            }
            Err(e) => outcome.fatal = Some(e),
        }
    }
    let r = &outcome.results;
    print::run(r, &view, h.cache_stats(), a.format);
    if let Some(dir) = &a.out {
        let path = dir.join("results.json");
        r.write(&path)?;
        let html = dir.join("report.html");
        fsio::write_atomic(&html, report::html::render(r).as_bytes())?;
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
        .any(|v| v.status != report::Status::Passed && v.status != report::Status::Skipped);
    Ok(if bad {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
