//! `tilepipe probe`: one validated launch for external tools to watch.

use super::args::{GpuArgs, ProblemArgs, with_controls};
use super::print;
use clap::Args;
use std::process::ExitCode;
use tilepipe::pipeline::Variant;

#[derive(Args)]
pub struct ProbeArgs {
    /// Exact variant or control name.
    variant: String,
    #[command(flatten)]
    problem: ProblemArgs,
    #[command(flatten)]
    gpu: GpuArgs,
    /// Random sleeps: 1 producer, 2 consumer, 3 both.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=3))]
    stress: u32,
    /// Blocks to launch (default: the persistent grid).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=65536))]
    blocks: Option<u32>,
    /// Bound on each in-kernel wait, in ms (raise it under compute-sanitizer).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=3_600_000))]
    wait_timeout_ms: u64,
    /// Launches, each on fresh inputs (seed, seed + 1, ...); one line per run.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    runs: u64,
}

pub fn cmd_probe(a: ProbeArgs) -> anyhow::Result<ExitCode> {
    let view = a.problem.view()?;
    let names = with_controls(a.gpu.workload.rows()?);
    if !names.iter().any(|v| v.name == a.variant) {
        // select names what is allowed when nothing matches; a prefix alone is not enough here
        let hits: Vec<String> = Variant::select(names, Some(&a.variant))?
            .into_iter()
            .map(|v| v.name)
            .collect();
        return Err(tilepipe::Error::InvalidArgument(format!(
            "probe takes one exact variant name, got '{}' (allowed: one of {})",
            a.variant,
            hits.join(", ")
        ))
        .into());
    }
    let h = a.gpu.open()?;
    let mut all_passed = true;
    for i in 0..a.runs {
        let seed = a.problem.seed.wrapping_add(i);
        let r = tilepipe::run::probe(
            &h,
            &a.variant,
            view,
            a.problem.dtype,
            seed,
            a.problem.tile_rows,
            a.stress,
            a.blocks,
            a.wait_timeout_ms * 1_000_000,
        );
        let (passed, detail) = match r {
            Ok(v) => (v.passed, v.failure.unwrap_or(v.checked_against)),
            Err(e @ tilepipe::Error::WaitTimeout { .. }) => (false, e.to_string()),
            Err(e) => {
                // a fault the kernel caused says so before this process ends; any other error
                // (arguments, a build) is no verdict on the run
                if !h.healthy() {
                    print::probe_faulted(i, &a.variant, &e.to_string());
                }
                return Err(e.into());
            }
        };
        print::probe_run(i, &a.variant, passed, &detail);
        all_passed &= passed;
    }
    Ok(if all_passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
