//! `tilepipe check`: the GPU suite (and compute-sanitizer), for the workload named.

use super::args::{Format, GpuArgs, bounded};
use super::print;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;
use tilepipe::commands::check::{SuiteOptions, run_suite};
use tilepipe::dtype::DType;
use tilepipe::engine::sanitize;
use tilepipe::fsio;
use tilepipe::pipeline::Variant;
use tilepipe::workload::{Visitor, Workload};

#[derive(Args)]
pub struct CheckArgs {
    #[command(flatten)]
    gpu: GpuArgs,
    /// Precisions, comma-separated [default: the workload's: f32,f16,bf16; attention f16,bf16].
    #[arg(long)]
    dtypes: Option<String>,
    /// Row workloads: hidden sizes of the suite's shapes, comma-separated [default: 4096,1544].
    #[arg(long)]
    suite_hidden: Option<String>,
    /// GEMM: B's layouts, comma-separated (kn: [K x N], nk: [N x K]) [default: kn,nk].
    #[arg(long)]
    layouts: Option<String>,
    /// Attention: head dimensions, comma-separated (64, 128) [default: 64,128].
    #[arg(long)]
    head_dims: Option<String>,
    /// Variants and controls by name or prefix, comma-separated.
    #[arg(long)]
    variants: Option<String>,
    /// Runs per control, each on fresh inputs; all must catch it.
    #[arg(long, default_value_t = 20, value_parser = bounded::<1, 10000>())]
    runs: usize,
    /// Seed of the suite's inputs: every case and run draws fresh ones from it.
    #[arg(long, default_value_t = 1, value_parser = super::args::seed)]
    seed: u64,
    /// Writes check.json here.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Also run variants under compute-sanitizer: racecheck, synccheck, memcheck (comma-separated).
    #[arg(long)]
    sanitize: Option<String>,
    /// Variants and controls run under the sanitizer (default: a few of each mechanism and two
    /// controls, the workload's own).
    #[arg(long, requires = "sanitize")]
    sanitize_variants: Option<String>,
    /// How the outcome is printed: table (a line per test as it runs, then the totals), markdown
    /// (failures, skips and sanitizer runs, every test collapsed), csv (one row per test, skip
    /// and sanitizer run) or json (check.json); test lines go to stderr then.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Variants left out (they faulted the process that started this one).
    #[arg(long, hide = true, value_delimiter = ',')]
    exclude: Vec<String>,
    /// The group to start at (the earlier ones ran in the process that started this one).
    #[arg(long, hide = true, default_value_t = 0)]
    from_group: usize,
    /// Child mode, for the process that started this one after a fault: print nothing, write the
    /// report here as JSON.
    #[arg(long, hide = true)]
    child_results: Option<PathBuf>,
}

pub fn cmd_check(a: CheckArgs) -> anyhow::Result<ExitCode> {
    let name = a.gpu.workload.clone();
    tilepipe::workload::visit(&name, a)?
}

impl Visitor for CheckArgs {
    type Output = anyhow::Result<ExitCode>;

    fn visit<W: Workload>(self, w: &'static W) -> Self::Output {
        let a = self;
        let given = a.dtypes.clone().unwrap_or_else(|| {
            w.dtypes()
                .iter()
                .map(|d| d.name())
                .collect::<Vec<_>>()
                .join(",")
        });
        let dtypes = given
            .split(',')
            .map(|s| s.trim().parse::<DType>())
            .collect::<Result<Vec<_>, _>>()?;
        // each suite axis flag belongs to the workloads that name it; another's is refused
        let mut axis = None;
        for (flag, value) in [
            ("--suite-hidden", &a.suite_hidden),
            ("--layouts", &a.layouts),
            ("--head-dims", &a.head_dims),
        ] {
            match (value, flag == w.suite_axis()) {
                (Some(v), true) => axis = Some(v.clone()),
                (Some(_), false) => anyhow::bail!(tilepipe::workload::not_taken(
                    &[flag],
                    w.name(),
                    &[w.suite_axis()]
                )),
                (None, _) => {}
            }
        }
        let groups = w.suite_groups(&dtypes, axis.as_deref())?;
        // a value given twice would run its group twice
        if let Some((_, (label, _))) = groups
            .iter()
            .enumerate()
            .find(|(i, (l, _))| groups[..*i].iter().any(|(m, _)| m == l))
        {
            anyhow::bail!(tilepipe::Error::InvalidArgument(format!(
                "the suite group {label} is named twice (--dtypes {}{}): allowed: each precision and \
                 each {} value once",
                given,
                axis.as_deref()
                    .map_or(String::new(), |v| format!(", {} {v}", w.suite_axis())),
                w.suite_axis()
            )));
        }
        let all: Vec<_> = dtypes
            .iter()
            .flat_map(|&d| w.catalogue(d).into_iter().chain(w.controls(d)))
            .collect();
        if let Some(list) = &a.variants {
            Variant::select(all.clone(), Some(list))?;
        }
        let sanitized = (a.sanitize_variants.as_deref()).unwrap_or(w.sanitize_variants());
        let tools = match &a.sanitize {
            Some(list) => {
                Variant::select(all, Some(sanitized))?;
                Some(sanitize::parse_tools(list)?)
            }
            None => None,
        };
        if let Some(dir) = &a.out {
            fsio::writable_dir(dir)?;
        }
        let opts = SuiteOptions {
            dtypes,
            axis,
            variants: a.variants.clone(),
            runs: a.runs,
            seed: a.seed,
            exclude: a.exclude.clone(),
            from_group: a.from_group,
            command: std::env::args().collect(),
        };
        let e = a.gpu.engine(a.format)?;
        if a.child_results.is_none() {
            print::notice(&format!(
                "{}; {}; {} groups",
                e.info().summary(),
                e.tc.describe(),
                groups.len()
            ));
        }
        let (mut report, poisoned) = run_suite(&e, w, &opts)?;
        // after a fault the process that went on ran the sanitizer, if asked
        if let (Some(tools), false, None) = (&tools, poisoned, &report.stopped) {
            sanitize::run_all(&e, w, &mut report, tools, sanitized, a.seed)?;
        }
        if let Some(file) = &a.child_results {
            fsio::write_atomic(file, serde_json::to_string(&report)?.as_bytes())?;
            return Ok(ExitCode::SUCCESS);
        }
        super::suite_end::end_suite(&report, a.out.as_deref(), a.format)
    }
}
