//! `tilepipe run`: the main job, for the workload named.

use super::args::{Format, GpuArgs, PeerArgs, ProblemArgs, bounded};
use super::print;
use super::timeline::write_timeline;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;
use tilepipe::commands::run::{ChildRun, RunOptions, run_isolated};
use tilepipe::commands::timeline::traceable;
use tilepipe::engine::TimingOptions;
use tilepipe::engine::time::MAX_REPEATS;
use tilepipe::engine::trace::TraceOptions;
use tilepipe::engine::trace::capture;
use tilepipe::fsio;
use tilepipe::pipeline::Variant;
use tilepipe::render;
use tilepipe::results::Status;
use tilepipe::workload::{Problem, Visitor, Workload};

#[derive(Args)]
pub struct RunArgs {
    #[command(flatten)]
    problem: ProblemArgs,
    #[command(flatten)]
    gpu: GpuArgs,
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
    /// Also trace these variants (instrumented builds, timed apart) and add their overlap figure
    /// (without a list: the workload's one per kind of pipeline).
    #[arg(long, num_args = 0..=1, default_missing_value = NO_LIST)]
    timeline: Option<String>,
    /// How the results are printed: table (the terminal), markdown (GitHub tables for a pull
    /// request), csv (one row per variant) or json (results.json).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Tables with every column, wrapped only to the terminal (default: the main columns within
    /// 160 columns, long cells wrapped).
    #[arg(long)]
    wide: bool,
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

/// `--timeline` given without a list (no argument can hold a NUL, so no list is read as this),
/// apart from an explicit empty list, which is refused.
const NO_LIST: &str = "\0";

pub fn cmd_run(a: RunArgs) -> anyhow::Result<ExitCode> {
    let name = a.gpu.workload.clone();
    tilepipe::workload::visit(&name, a)?
}

impl Visitor for RunArgs {
    type Output = anyhow::Result<ExitCode>;

    fn visit<W: Workload>(self, w: &'static W) -> Self::Output {
        let a = self;
        let p = a.problem.problem(w)?;
        let dtype = p.dtype();
        if let Some(list) = &a.variants {
            Variant::select(w.catalogue(dtype), Some(list))?;
        }
        let traced = match a.timeline.as_deref() {
            Some(NO_LIST) => Some(Variant::select(w.catalogue(dtype), Some(w.traced()))?),
            Some(list) => Some(Variant::select(w.catalogue(dtype), Some(list))?),
            None => None,
        };
        if let Some(dir) = &a.out {
            fsio::writable_dir(dir)?;
        }
        let opts = RunOptions {
            problem: p.clone(),
            seed: a.problem.seed,
            variants: a.variants.clone(),
            timing: TimingOptions {
                warmup: a.warmup,
                min_repeats: a.repeats,
                ..TimingOptions::default()
            },
            ceiling_bytes: 1 << 30,
            explain_timing: a.explain_timing,
            command: std::env::args().collect(),
            exclude: a.exclude.clone(),
            torch_python: a.peers.torch_python(),
        };
        let e = a.gpu.engine(a.format)?;
        if let Some(file) = &a.child_results {
            let outcome = run_isolated(&e, w, &opts)?;
            let child = ChildRun {
                fatal: outcome.fatal.map(|e| e.to_string()),
                results: outcome.results,
            };
            fsio::write_atomic(file, serde_json::to_string(&child)?.as_bytes())?;
            return Ok(ExitCode::SUCCESS);
        }
        print::notice(&e.info().summary());
        let mut outcome = run_isolated(&e, w, &opts)?;
        if outcome.poisoned && traced.is_some() {
            outcome.results.notes.push(
                "no timeline: a variant faulted this process's GPU context (run `tilepipe timeline` apart)"
                    .into(),
            );
        } else if let (Some(traced), None) = (traced, &outcome.fatal) {
            let names: Vec<String> = traced.iter().map(|v| v.name.clone()).collect();
            let (variants, skipped) = traceable(&e, w, &names.join(","), &p)?;
            skipped
                .iter()
                .for_each(|s| print::notice(&format!("not traced: {s}")));
            let o = TraceOptions {
                blocks: 4,
                tiles: 32,
            };
            match capture(&e, w, &variants, &p, a.problem.seed, o) {
                Ok(tl) => {
                    write_timeline(&tl, a.out.as_deref())?;
                    outcome.results.timelines = tl;
                }
                Err(err) => outcome.fatal = Some(err),
            }
        }
        let r = &outcome.results;
        print::run(r, a.format, print::width(a.wide));
        if let Some(dir) = &a.out {
            let path = dir.join("results.json");
            r.write(&path)?;
            let html = dir.join("report.html");
            fsio::write_atomic(&html, render::html::render(r).as_bytes())?;
            print::notice(&format!("wrote {} and {}", path.display(), html.display()));
        }
        if let Some(err) = outcome.fatal {
            if tilepipe::interrupt::requested() {
                print::notice("interrupted: the results above were measured before Ctrl-C");
                return Ok(ExitCode::from(130));
            }
            return Err(
                anyhow::Error::new(err).context("the run stopped early; results so far were kept")
            );
        }
        let bad = r
            .variants
            .iter()
            .any(|v| v.status != Status::Passed && v.status != Status::Skipped);
        Ok(if bad {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        })
    }
}
