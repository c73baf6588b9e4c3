//! `tilepipe timeline`: instrumented builds, overlap figures, Chrome trace, SVG, for the workload
//! named. Also what `run --timeline` shares: the files a timeline writes.

use super::args::{GpuArgs, ProblemArgs};
use super::print;
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tilepipe::commands::timeline::traceable;
use tilepipe::engine::trace::TraceOptions;
use tilepipe::engine::trace::capture;
use tilepipe::fsio;
use tilepipe::render::timeline as svg;
use tilepipe::results::TimelineResult;
use tilepipe::results::timeline::named;
use tilepipe::workload::{Visitor, Workload};

#[derive(Args)]
pub struct TimelineArgs {
    /// Variants to trace (default: the workload's one per kind of pipeline, where the GPU has
    /// them).
    variants: Vec<String>,
    #[command(flatten)]
    problem: ProblemArgs,
    #[command(flatten)]
    gpu: GpuArgs,
    /// Blocks that record.
    #[arg(long, default_value_t = 4, value_parser = super::args::bounded32::<1, 256>())]
    blocks: u32,
    /// Tiles per block that record.
    #[arg(long, default_value_t = 32, value_parser = super::args::bounded32::<1, 1024>())]
    tiles: u32,
    /// Writes timeline.json (Chrome trace), timeline.svg and timeline-results.json here.
    #[arg(long)]
    out: Option<PathBuf>,
}

/// Writes timeline.json (Chrome trace), timeline.svg and timeline-results.json.
pub fn write_timeline(tl: &[TimelineResult], out: Option<&Path>) -> anyhow::Result<()> {
    let named = named(tl);
    let drawn = svg::render(&named, svg::TITLE).map_err(anyhow::Error::msg)?;
    if let Some(dir) = out {
        fsio::create_dir_all(dir)?;
        fsio::write_atomic(
            &dir.join("timeline.json"),
            serde_json::to_string(&svg::chrome_trace(&named))?.as_bytes(),
        )?;
        fsio::write_atomic(&dir.join("timeline.svg"), drawn.as_bytes())?;
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
    let name = a.gpu.workload.clone();
    tilepipe::workload::visit(&name, a)?
}

impl Visitor for TimelineArgs {
    type Output = anyhow::Result<ExitCode>;

    fn visit<W: Workload>(self, w: &'static W) -> Self::Output {
        let a = self;
        let p = a.problem.problem(w)?;
        let list = match a.variants.is_empty() {
            true => w.traced().to_string(),
            false => a.variants.join(","),
        };
        tilepipe::pipeline::Variant::select(
            w.catalogue(tilepipe::workload::Problem::dtype(&p)),
            Some(&list),
        )?;
        if let Some(dir) = &a.out {
            fsio::writable_dir(dir)?;
        }
        let e = a.gpu.engine(super::args::Format::Table)?;
        let (variants, skipped) = traceable(&e, w, &list, &p)?;
        for why in skipped {
            print::notice(&format!("not traced: {why}"));
        }
        let o = TraceOptions {
            blocks: a.blocks,
            tiles: a.tiles,
        };
        let tl = capture(&e, w, &variants, &p, a.problem.seed, o)?;
        print::timelines(&tl);
        write_timeline(&tl, a.out.as_deref())?;
        Ok(if tl.iter().all(|t| t.verdict.passed) {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        })
    }
}
