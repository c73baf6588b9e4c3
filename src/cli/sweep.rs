//! `tilepipe sweep`: named axes expanded to a sweep for the workload named, appended to
//! sweep.jsonl as measured, plotted.

use super::args::{Format, GpuArgs, PeerArgs, ProblemArgs, bounded};
use super::print;
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tilepipe::commands::sweep::measure::check;
use tilepipe::commands::sweep::shard::{SHARD_SPEC, Shard, ShardSpec, can_write_spec};
use tilepipe::commands::sweep::{SweepOptions, SweepSpec, sweep};
use tilepipe::engine::TimingOptions;
use tilepipe::engine::isolate as child;
use tilepipe::engine::time::MAX_REPEATS;
use tilepipe::results::sweep_store;
use tilepipe::workload::{Problem, Visitor, Workload};
use tilepipe::{fsio, meminfo};

#[derive(Args)]
pub struct SweepArgs {
    #[command(flatten)]
    gpu: GpuArgs,
    /// An axis as name=values (repeatable): mechanism=sync,cpasync,tma  stages=1..6  dtype=bf16,f32,
    /// and the workload's size axis (row workloads: tiles=4,1048576 and tile_rows=1,2,4; GEMM:
    /// k=512,2048,8192).
    #[arg(long = "axis")]
    axes: Vec<String>,
    /// The problem every point starts from (row workloads: --hidden; GEMM: --m --n --layout); the
    /// size axis and the precision axis set the rest.
    #[command(flatten)]
    problem: ProblemArgs,
    /// Without copy-only and compute-only probes (no model).
    #[arg(long)]
    no_probes: bool,
    // at every tile count: by worker 0 under --devices, by the shard that owns each point under --shard
    #[command(flatten)]
    peers: PeerArgs,
    /// Output folder: sweep.jsonl and the SVG plots.
    #[arg(long, default_value = "sweep")]
    out: PathBuf,
    /// Continue an interrupted sweep, skipping measured points.
    #[arg(long)]
    resume: bool,
    /// Fewest timed launches per point (more until the spread settles or the time budget ends).
    #[arg(long, default_value_t = 20, value_parser = bounded::<1, { MAX_REPEATS as u64 }>())]
    repeats: usize,
    /// Measure only shard I of N (0 <= I < N) of the same expansion, e.g. a Slurm array task's
    /// $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT; `tilepipe merge` joins the shards.
    #[arg(long, allow_hyphen_values = true)]
    shard: Option<Shard>,
    /// One worker process per GPU: `all` or ordinals (0,1,...). Each GPU measures whole variants,
    /// never two timed kernels at once on one GPU; every point lands in the one sweep.jsonl as it
    /// is measured, with the GPU that measured it.
    #[arg(long, conflicts_with_all = ["worker", "device"])]
    devices: Option<String>,
    /// Worker I of N of `--devices`: measure every N-th variant from I.
    #[arg(long, hide = true)]
    worker: Option<Shard>,
    /// How the points are printed: table (the model against them, then the tail), markdown (the
    /// points and the model), csv or json (every field of every point).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

pub fn cmd_sweep(a: SweepArgs) -> anyhow::Result<ExitCode> {
    let name = a.gpu.workload.clone();
    tilepipe::workload::visit(&name, a)?
}

impl Visitor for SweepArgs {
    type Output = anyhow::Result<ExitCode>;

    fn visit<W: Workload>(self, w: &'static W) -> Self::Output {
        let a = self;
        // the axes set each point's size: of the problem's flags, only the base it starts from
        let ignored = a
            .problem
            .flags()
            .given_except(&["--dtype", "--hidden", "--m", "--n", "--layout"]);
        if !ignored.is_empty() {
            anyhow::bail!(tilepipe::Error::InvalidArgument(format!(
                "sweep sets each point's size from its axes, so {} cannot be taken (allowed: \
                 --dtype and the base --hidden, or --m --n --layout; sizes as --axis tiles=..., \
                 --axis tile_rows=... or --axis k=...); every point is a dense view",
                ignored.join(", ")
            )));
        }
        let base = w.problem(&a.problem.flags())?;
        let mut spec = SweepSpec {
            peers: a.peers.torch_python().is_some(),
            ..SweepSpec::default_for(w)
        };
        spec.dtypes = vec![base.dtype()];
        spec.probes &= !a.no_probes;
        let mut named: Vec<&str> = Vec::new();
        for axis in &a.axes {
            let name = axis
                .split_once('=')
                .map_or(axis.as_str(), |(n, _)| n)
                .trim();
            if named.contains(&name) {
                return Err(tilepipe::Error::InvalidArgument(format!(
                    "--axis {name} is given twice: allowed: each axis once, with all its values (e.g. --axis {name}=1,2,4)"
                ))
                .into());
            }
            if let (Some(d), "dtype") = (a.problem.flags().dtype, name) {
                return Err(tilepipe::Error::InvalidArgument(format!(
                    "--dtype {d} and --axis {axis} both set the precision: allowed: one of them \
                     (--axis dtype=... sweeps several)"
                ))
                .into());
            }
            named.push(name);
            spec.set_axis(w, axis)?;
        }
        let jsonl = a.out.join("sweep.jsonl");
        let o = SweepOptions {
            spec,
            base,
            seed: a.problem.seed,
            jsonl: jsonl.clone(),
            resume: a.resume,
            timing: TimingOptions {
                min_repeats: a.repeats,
                ..TimingOptions::default()
            },
            shard: a.shard,
            worker: a.worker,
            torch_python: a.peers.torch_python(),
        };
        check(w, &o, meminfo::available())?;
        // everything is judged before the first file is touched: the GPUs asked for, the cache
        // folder, the points and shard description already in --out
        let devices = a.devices.as_deref().map(device_list).transpose()?;
        a.gpu.judge()?;
        if a.resume {
            sweep_store::can_resume(&jsonl, w.name())?;
        }
        let shard_spec = a.shard.map(|shard| ShardSpec {
            workload: w.name().into(),
            spec: o.spec.clone(),
            problem: o.base.label(),
            seed: o.seed,
            shard,
        });
        if let Some(spec) = &shard_spec {
            can_write_spec(&jsonl, spec)?;
        }
        fsio::writable_dir(&a.out)?;
        if let Some(spec) = &shard_spec {
            fsio::write_atomic(
                &a.out.join(SHARD_SPEC),
                serde_json::to_string_pretty(spec)?.as_bytes(),
            )?;
        }
        if let Some(devices) = devices {
            if a.resume {
                for line in sweep_store::resume(&jsonl, w.name())?.warnings {
                    print::notice(&line);
                }
            }
            let failed = spread(&devices)?;
            plot(&a.out, &jsonl, a.format)?;
            return Ok(match failed.is_empty() {
                true => ExitCode::SUCCESS,
                false => {
                    print::notice(&format!("workers that failed: {}", failed.join("; ")));
                    ExitCode::from(1)
                }
            });
        }
        let e = a.gpu.engine(a.format)?;
        let result = sweep(&e, w, &o);
        if a.worker.is_some() {
            // the process that started the workers plots the whole file once they are all done
            result?;
            return Ok(ExitCode::SUCCESS);
        }
        // plot whatever is on disk, also after an interruption; the sweep's own error comes first
        let plotted = plot(&a.out, &jsonl, a.format);
        if let Err(tilepipe::Error::Interrupted) = result {
            print::notice(&format!(
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
}

/// `all` (every GPU CUDA sees) or comma-separated ordinals, each once.
fn device_list(list: &str) -> anyhow::Result<Vec<usize>> {
    if list == "all" {
        return Ok((0..tilepipe::gpu::device_count()?).collect());
    }
    let mut out: Vec<usize> = Vec::new();
    for d in list.split(',') {
        let n = d.trim().parse().map_err(|_| {
            tilepipe::Error::InvalidArgument(format!(
                "--devices {list}: '{d}' is not a GPU ordinal; allowed: all, or ordinals like 0,1"
            ))
        })?;
        if out.contains(&n) {
            return Err(tilepipe::Error::InvalidArgument(format!(
                "--devices {list}: GPU {n} is named twice (two timed kernels would share it)"
            ))
            .into());
        }
        out.push(n);
    }
    Ok(out)
}

/// Runs this sweep once per GPU in `devices`, worker i of N measuring every N-th variant from i,
/// all appending to the same sweep.jsonl (`--resume` lets each one find the others' points).
/// Returns the workers that failed, each with its exit status.
fn spread(devices: &[usize]) -> anyhow::Result<Vec<String>> {
    let exe = std::env::current_exe()?;
    let argv: Vec<String> = std::env::args().collect();
    let base = child::without(&argv, &["--devices", "--device"]);
    let n = devices.len();
    let mut workers = Vec::new();
    for (i, d) in devices.iter().enumerate() {
        let mut args = base.clone();
        args.extend([
            "--device".into(),
            d.to_string(),
            "--worker".into(),
            format!("{i}/{n}"),
        ]);
        let args = child::with_switch(
            child::with_switch(args, "--resume", "--resume"),
            "--quiet",
            "-q",
        );
        workers.push((*d, std::process::Command::new(&exe).args(&args).spawn()?));
    }
    print::notice(&format!("{n} workers, one per GPU: {devices:?}"));
    let mut failed = Vec::new();
    for (d, mut w) in workers {
        let status = w.wait()?;
        if !status.success() {
            failed.push(format!("GPU {d}: {status}"));
        }
    }
    Ok(failed)
}

/// Draws the plots of what `jsonl` holds and prints the points in `format`; nothing when no point
/// was written.
pub fn plot(out: &Path, jsonl: &Path, format: Format) -> anyhow::Result<()> {
    if !jsonl.exists() {
        return Ok(());
    }
    let loaded = sweep_store::read(jsonl)?;
    print::skipped_lines(jsonl, &loaded);
    let records = loaded.records;
    for (name, svg) in tilepipe::render::sweep::plots(&records) {
        match svg {
            Ok(svg) => fsio::write_atomic(&out.join(name), svg.as_bytes())?,
            Err(e) => print::notice(&format!("{name} not drawn: {e}")),
        }
    }
    print::sweep_end(&records, jsonl, format);
    Ok(())
}
