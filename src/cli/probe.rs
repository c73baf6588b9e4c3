//! `tilepipe probe`: validated launches of one variant or control for external tools to watch, and
//! the runs of a control that may fault the GPU in a process of their own.

use super::args::{GpuArgs, ProblemArgs, bounded, bounded32};
use super::print;
use clap::Args;
use std::process::ExitCode;
use tilepipe::commands::probe::{named, probe};
use tilepipe::pipeline::Instrument;
use tilepipe::results::Grid;
use tilepipe::workload::{Case, Problem, Visitor, Workload};

#[derive(Args)]
pub struct ProbeArgs {
    /// Exact variant or control name.
    variant: String,
    #[command(flatten)]
    problem: ProblemArgs,
    #[command(flatten)]
    gpu: GpuArgs,
    /// Random sleeps: 1 producer, 2 consumer, 3 both.
    #[arg(long, default_value_t = 0, value_parser = bounded32::<0, 3>())]
    stress: u32,
    /// A protocol-monitor build: a run whose monitor records a broken rule fails with it.
    #[arg(long)]
    monitor: bool,
    /// Blocks to launch (default: the persistent grid).
    #[arg(long, value_parser = bounded32::<1, 65536>())]
    blocks: Option<u32>,
    /// Bound on each in-kernel wait, in ms (raise it under compute-sanitizer).
    #[arg(long, default_value_t = 100, value_parser = bounded::<1, 3_600_000>())]
    wait_timeout_ms: usize,
    /// Launches, each on fresh inputs (seed, seed + 1, ...); one line per run.
    #[arg(long, default_value_t = 1, value_parser = bounded::<1, 10_000>())]
    runs: usize,
}

pub fn cmd_probe(a: ProbeArgs) -> anyhow::Result<ExitCode> {
    let name = a.gpu.workload.clone();
    tilepipe::workload::visit(&name, a)?
}

impl Visitor for ProbeArgs {
    type Output = anyhow::Result<ExitCode>;

    fn visit<W: Workload>(self, w: &'static W) -> Self::Output {
        let a = self;
        let p = a.problem.problem(w)?;
        let v = named(w, p.dtype(), &a.variant)?;
        let mut e = a.gpu.engine(super::args::Format::Table)?;
        e.wait_timeout_ms(a.wait_timeout_ms as u64);
        let grid = a.blocks.map_or(Grid::Persistent, Grid::Fixed);
        let case = Case::new("probe", p, grid);
        let instrument = Instrument {
            stress: a.stress,
            monitor: a.monitor,
            ..Instrument::CLEAN
        };
        let done = std::cell::Cell::new(0);
        let each = |i: u64, verdict: &Result<(), String>| {
            done.set(i + 1);
            match verdict {
                Ok(()) => print::probe_run(i, &v.name, true, "ok"),
                Err(why) => print::probe_run(i, &v.name, false, why),
            }
        };
        match probe(
            &e,
            w,
            &v,
            &case,
            instrument,
            (a.runs as u64, a.problem.seed),
            (|twin| print::probe_built(&v.name, a.runs, twin), each),
        ) {
            Ok(true) => Ok(ExitCode::SUCCESS),
            Ok(false) => Ok(ExitCode::from(1)),
            Err(err) => {
                // a fault the kernel caused says so before this process ends; any other error
                // (arguments, a build) is no verdict on the run
                if !e.healthy() {
                    print::probe_faulted(done.get(), &v.name, &err.to_string());
                }
                Err(err.into())
            }
        }
    }
}
