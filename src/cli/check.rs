//! `tilepipe check`: the GPU suite (and compute-sanitizer).

use super::args::{Format, GpuArgs, WorkloadArg, bounded, with_controls};
use super::print;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;
use tilepipe::check::cases;
use tilepipe::check::sanitize;
use tilepipe::check::suite::{SuiteOptions, run_suite};
use tilepipe::dtype::DType;
use tilepipe::fsio;
use tilepipe::gemm::suite::GemmSuiteOptions;
use tilepipe::pipeline::{BuildConfig, Variant};
use tilepipe::workload::View;
use tilepipe::workload::gemm::Layout;

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
    /// GEMM (--workload gemm): B's layouts, comma-separated (kn: [K x N], nk: [N x K]).
    #[arg(long, default_value = "kn,nk", value_delimiter = ',', value_enum)]
    layouts: Vec<Layout>,
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
    /// How the outcome is printed: table (a line per test as it runs, then the totals), markdown
    /// (failures, skips and sanitizer runs, every test collapsed), csv (one row per test, skip
    /// and sanitizer run) or json (check.json); test lines go to stderr then.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Variants left out (they faulted the process that started this one).
    #[arg(long, hide = true, value_delimiter = ',')]
    exclude: Vec<String>,
    /// The (dtype, hidden) group to start at (the earlier ones ran in the process that started this one).
    #[arg(long, hide = true, default_value_t = 0)]
    from_group: usize,
    /// Child mode, for the process that started this one after a fault: print nothing, write the
    /// report here as JSON.
    #[arg(long, hide = true)]
    child_results: Option<PathBuf>,
    /// GEMM, child mode: run only the named controls (those that can fault the GPU run in
    /// processes of their own).
    #[arg(long, hide = true)]
    only_controls: bool,
}

pub fn cmd_check(a: CheckArgs) -> anyhow::Result<ExitCode> {
    let dtypes = a
        .dtypes
        .split(',')
        .map(|s| s.trim().parse::<DType>())
        .collect::<Result<Vec<_>, _>>()?;
    if let WorkloadArg::Gemm = a.gpu.workload {
        if a.sanitize.is_some() {
            anyhow::bail!(tilepipe::Error::InvalidArgument(
                "--sanitize takes the row workloads; allowed with --workload gemm: --dtypes --layouts --variants --runs --seed --out".into()
            ));
        }
        let opts = GemmSuiteOptions {
            dtypes,
            layouts: a.layouts,
            variants: a.variants,
            runs: a.runs,
            seed: a.seed,
            command: std::env::args().collect(),
            only_controls: a.only_controls,
        };
        let child = a.child_results.as_deref();
        return super::gemm::cmd_check(&a.gpu, opts, child, (a.out.as_deref(), a.format));
    }
    let hidden = cases::parse_hidden(&a.suite_hidden)?;
    for &dt in &dtypes {
        for &h in &hidden {
            View::new(1, h, None, 0, None, dt)?;
            BuildConfig::checked(dt, h, None)?;
        }
    }
    let all = with_controls(a.gpu.workload.rows()?);
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
        exclude: a.exclude,
        from_group: a.from_group,
        command: std::env::args().collect(),
    };
    let h = a.gpu.open_for(a.format)?;
    if a.child_results.is_none() {
        print::notice(&format!("{}; {}", h.info().summary(), h.tc.describe()));
    }
    let (mut report, poisoned) = run_suite(&h, &opts)?;
    // after a fault the process that went on ran the sanitizer, if asked
    if let (Some(tools), false, None) = (&tools, poisoned, &report.stopped) {
        sanitize::run_all(&h, &mut report, tools, &a.sanitize_variants, a.seed)?;
    }
    if let Some(file) = &a.child_results {
        fsio::write_atomic(file, serde_json::to_string(&report)?.as_bytes())?;
        return Ok(ExitCode::SUCCESS);
    }
    super::suite_end::end_suite(&report, a.out.as_deref(), a.format)
}
