//! `tilepipe sweep`: named axes expanded to a sweep, appended to sweep.jsonl as measured, plotted.

use super::args::{Format, GpuArgs, bounded};
use super::print;
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tilepipe::bench::{MAX_REPEATS, TimingOptions};
use tilepipe::sweep::{self, SweepSpec, measure::SweepOptions};
use tilepipe::{fsio, meminfo};

#[derive(Args)]
pub struct SweepArgs {
    #[command(flatten)]
    gpu: GpuArgs,
    /// An axis as name=values (repeatable): mechanism=sync,cpasync,tma  stages=1..6  tiles=4,1048576
    /// tile_rows=1,2,4  dtype=bf16,f32.
    #[arg(long = "axis")]
    axes: Vec<String>,
    #[arg(long, default_value_t = 4096)]
    hidden: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Without copy-only and compute-only probes (no model).
    #[arg(long)]
    no_probes: bool,
    /// Output folder: sweep.jsonl and the SVG plots.
    #[arg(long, default_value = "sweep")]
    out: PathBuf,
    /// Continue an interrupted sweep, skipping measured points.
    #[arg(long)]
    resume: bool,
    #[arg(long, default_value_t = 20, value_parser = bounded::<1, { MAX_REPEATS as u64 }>())]
    repeats: usize,
    /// How the points are printed: table (the model against them, then the tail), markdown (the
    /// points and the model), csv or json (every field of every point).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

pub fn cmd_sweep(a: SweepArgs) -> anyhow::Result<ExitCode> {
    let mut spec = SweepSpec {
        probes: !a.no_probes,
        ..SweepSpec::default()
    };
    for axis in &a.axes {
        spec.set_axis(axis)?;
    }
    let jsonl = a.out.join("sweep.jsonl");
    let o = SweepOptions {
        spec,
        hidden: a.hidden,
        seed: a.seed,
        jsonl: jsonl.clone(),
        resume: a.resume,
        timing: TimingOptions {
            min_repeats: a.repeats,
            ..TimingOptions::default()
        },
    };
    sweep::measure::check(&o, meminfo::available())?;
    fsio::writable_dir(&a.out)?;
    let h = a.gpu.open_for(a.format)?;
    let result = sweep::measure::sweep(&h, &o);
    // plot whatever is on disk, also after an interruption; the sweep's own error comes first
    let plotted = plot(&a.out, &jsonl, a.format);
    if let Err(tilepipe::Error::Interrupted) = result {
        super::print::notice(&format!(
            "interrupted: every point measured before Ctrl-C is in {} (--resume continues)",
            jsonl.display()
        ));
        plotted?;
        return Ok(ExitCode::from(130));
    }
    result?;
    plotted?;
    Ok(ExitCode::SUCCESS)
}

/// Draws the plots of what `jsonl` holds and prints the points in `format`; nothing when no point
/// was written.
fn plot(out: &Path, jsonl: &Path, format: Format) -> anyhow::Result<()> {
    if !jsonl.exists() {
        return Ok(());
    }
    let loaded = sweep::read(jsonl)?;
    print::skipped_lines(jsonl, &loaded);
    let records = loaded.records;
    for (name, svg) in [
        ("time-per-tile.svg", sweep::plots::time_per_tile(&records)),
        ("bandwidth.svg", sweep::plots::bandwidth(&records)),
        (
            "speedup-vs-stages.svg",
            sweep::plots::speedup_vs_stages(&records),
        ),
    ] {
        match svg {
            Ok(svg) => fsio::write_atomic(&out.join(name), svg.as_bytes())?,
            Err(e) => print::notice(&format!("{name} not drawn: {e}")),
        }
    }
    print::sweep_end(&records, jsonl, format);
    Ok(())
}
