//! `tilepipe check`: the GPU suite (and compute-sanitizer).

use super::args::{GpuArgs, bounded, with_controls};
use super::print;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;
use tilepipe::check::cases;
use tilepipe::check::sanitize;
use tilepipe::check::suite::{SuiteOptions, run_suite};
use tilepipe::dtype::DType;
use tilepipe::fsio;
use tilepipe::variant::{BuildConfig, Variant};
use tilepipe::workload::View;

#[derive(Args)]
pub struct CheckArgs {
    #[command(flatten)]
    gpu: GpuArgs,
    /// Precisions, comma-separated.
    #[arg(long, default_value = "f32,f16,bf16")]
    dtypes: String,
    /// Hidden sizes of the suite's shapes, comma-separated.
    #[arg(long, default_value = "4096,1544")]
    suite_hidden: String,
    /// Variants and controls by name or prefix, comma-separated.
    #[arg(long)]
    variants: Option<String>,
    /// Runs per control, each on fresh inputs; all must catch it.
    #[arg(long, default_value_t = 20, value_parser = bounded::<1, 10000>())]
    runs: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Writes check.json here.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Also run variants under compute-sanitizer: racecheck, synccheck, memcheck (comma-separated).
    #[arg(long)]
    sanitize: Option<String>,
    /// Variants and controls run under the sanitizer.
    #[arg(
        long,
        default_value = "sync,cpasync-cg16-s2,mca-pipeline-a16-s2,mca-barrier-a16-s2,bulk-s2,tma-s3,tma-ws-s3,ctl-cpasync-skip-wait,ctl-cpasync-early-release"
    )]
    sanitize_variants: String,
}

pub fn cmd_check(a: CheckArgs) -> anyhow::Result<ExitCode> {
    let dtypes = a
        .dtypes
        .split(',')
        .map(|s| s.trim().parse::<DType>())
        .collect::<Result<Vec<_>, _>>()?;
    let hidden = cases::parse_hidden(&a.suite_hidden)?;
    for &dt in &dtypes {
        for &h in &hidden {
            View::new(1, h, None, 0, None, dt)?;
            BuildConfig::checked(dt, h, None)?;
        }
    }
    let all = with_controls(a.gpu.workload);
    if let Some(list) = &a.variants {
        Variant::select(all.clone(), Some(list))?;
    }
    let tools = match &a.sanitize {
        Some(list) => {
            Variant::select(all, Some(&a.sanitize_variants))?;
            Some(sanitize::parse_tools(list)?)
        }
        None => None,
    };
    if let Some(dir) = &a.out {
        fsio::writable_dir(dir)?;
    }
    let opts = SuiteOptions {
        dtypes,
        hidden,
        variants: a.variants,
        runs: a.runs,
        seed: a.seed,
    };
    let mut opened = 0;
    let mut open = || {
        let h = a.gpu.open()?;
        if opened == 0 {
            print::notice(&format!("{}; {}", h.info().summary(), h.tc.describe()));
        }
        opened += 1;
        Ok(h)
    };
    let (h, mut report, stopped) = run_suite(&mut open, &opts)?;
    if let (Some(tools), None) = (&tools, &stopped) {
        sanitize::run_all(&h, &mut report, tools, &a.sanitize_variants, a.seed)?;
    }
    print::skipped(&report);
    if let Some(dir) = &a.out {
        fsio::create_dir_all(dir)?;
        fsio::write_atomic(
            &dir.join("check.json"),
            serde_json::to_string_pretty(&report)?.as_bytes(),
        )?;
    }
    print::suite_totals(&report);
    if let Some(e) = stopped {
        print::notice(&format!("the suite stopped early: {e}"));
        return Ok(ExitCode::from(
            if matches!(e, tilepipe::Error::Interrupted) {
                130
            } else {
                1
            },
        ));
    }
    Ok(if report.failed() == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
