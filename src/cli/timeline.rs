//! `tilepipe timeline`: instrumented builds, overlap figures, Chrome trace, SVG. Also the pieces
//! `run --timeline` shares: which variants can be traced, and the files a timeline writes.

use super::args::{GemmArgs, GpuArgs, ProblemArgs, WorkloadArg};
use super::print;
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tilepipe::fsio;
use tilepipe::harness::Harness;
use tilepipe::pipeline::{BuildConfig, Variant};
use tilepipe::timeline::{
    self, TimelineResult,
    capture::{TimelineOptions, capture},
};

#[derive(Args)]
pub struct TimelineArgs {
    /// Variants to trace (default: sync, cpasync-cg16-s2, tma-s3 where the GPU has them; with
    /// --workload gemm: sync, cpasync-cg16-s3, tma-wgmma-s2, tma-wgmma-ws-s4).
    variants: Vec<String>,
    #[command(flatten)]
    problem: ProblemArgs,
    #[command(flatten)]
    gemm: GemmArgs,
    #[command(flatten)]
    gpu: GpuArgs,
    /// Blocks that record.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=256))]
    blocks: u32,
    /// Tiles per block that record.
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=1024))]
    tiles: u32,
    /// Writes timeline.json (Chrome trace), timeline.svg and timeline-results.json here.
    #[arg(long)]
    out: Option<PathBuf>,
}

/// The variants chosen for a timeline, minus those this GPU cannot run (said on stderr).
pub fn traceable(h: &Harness, chosen: Vec<Variant>, problem: &ProblemArgs) -> Vec<Variant> {
    let cfg = BuildConfig::new(problem.dtype, problem.hidden, problem.tile_rows);
    chosen
        .into_iter()
        .filter(|v| match h.unsupported_here(v, &cfg) {
            Some(why) => {
                print::notice(&format!("not traced: {}: {why}", v.name));
                false
            }
            None => true,
        })
        .collect()
}

/// Writes timeline.json (Chrome trace), timeline.svg and timeline-results.json.
pub fn write_timeline(tl: &[TimelineResult], out: Option<&Path>) -> anyhow::Result<()> {
    let named = timeline::named(tl);
    let svg = timeline::svg::render(&named, timeline::svg::TITLE).map_err(anyhow::Error::msg)?;
    if let Some(dir) = out {
        fsio::create_dir_all(dir)?;
        fsio::write_atomic(
            &dir.join("timeline.json"),
            serde_json::to_string(&timeline::chrome_trace(&named))?.as_bytes(),
        )?;
        fsio::write_atomic(&dir.join("timeline.svg"), svg.as_bytes())?;
        fsio::write_atomic(
            &dir.join("timeline-results.json"),
            serde_json::to_string_pretty(tl)?.as_bytes(),
        )?;
        print::notice(&format!(
            "wrote timeline.json (Perfetto / chrome://tracing), timeline.svg, timeline-results.json in {}",
            dir.display()
        ));
    }
    Ok(())
}

pub fn cmd_timeline(a: TimelineArgs) -> anyhow::Result<ExitCode> {
    if let WorkloadArg::Gemm = a.gpu.workload {
        let names = match a.variants.is_empty() {
            true => "sync,cpasync-cg16-s3,tma-wgmma-s2,tma-wgmma-ws-s4".to_string(),
            false => a.variants.join(","),
        };
        let tl = super::gemm::cmd_timeline(
            &a.gpu,
            &a.gemm,
            (a.problem.dtype, a.problem.seed),
            &names,
            (a.blocks, a.tiles),
        )?;
        return finish(&tl, a.out.as_deref());
    }
    let view = a.problem.view()?;
    let list = if a.variants.is_empty() {
        "sync,cpasync-cg16-s2,tma-s3".to_string()
    } else {
        a.variants.join(",")
    };
    let chosen = Variant::select(a.gpu.workload.rows()?.catalogue(), Some(&list))?;
    if let Some(dir) = &a.out {
        fsio::writable_dir(dir)?;
    }
    let h = a.gpu.open()?;
    let variants = traceable(&h, chosen, &a.problem);
    let t = TimelineOptions {
        view,
        dtype: a.problem.dtype,
        seed: a.problem.seed,
        tile_rows: a.problem.tile_rows,
        blocks: a.blocks,
        tiles: a.tiles,
    };
    let tl = capture(&h, &variants, &t)?;
    finish(&tl, a.out.as_deref())
}

/// Prints and writes the timelines; fails if an instrumented launch's output was wrong.
fn finish(tl: &[TimelineResult], out: Option<&Path>) -> anyhow::Result<ExitCode> {
    print::timelines(tl);
    write_timeline(tl, out)?;
    Ok(if tl.iter().all(|t| t.verdict.passed) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
