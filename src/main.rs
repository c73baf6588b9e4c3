//! tilepipe's command line: parse, dispatch to the library, print. Errors end in one line on
//! stderr and a non-zero exit.

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use tilepipe::bench::TimingOptions;
use tilepipe::check::cases;
use tilepipe::check::sanitize;
use tilepipe::check::suite::{SuiteOptions, run_suite};
use tilepipe::dtype::DType;
use tilepipe::gpu::cache::Cache;
use tilepipe::harness::Harness;
use tilepipe::progress::Progress;
use tilepipe::queue_lab;
use tilepipe::report::{self, table};
use tilepipe::run::{RunOptions, run};
use tilepipe::sweep::{self, SweepSpec, measure::SweepOptions};
use tilepipe::timeline::{
    self,
    capture::{TimelineOptions, TimelineResult},
};
use tilepipe::variant::Variant;
use tilepipe::workload::View;

#[derive(Parser)]
#[command(
    name = "tilepipe",
    version,
    about = "Build, validate and measure asynchronous-copy tile pipelines on NVIDIA GPUs"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The main job: build, validate, record evidence, time, report.
    Run(RunArgs),
    /// The GPU suite: every variant x precision x shape, SASS attestation, controls.
    Check(CheckArgs),
    /// Census and annotated SASS of one variant (works without a GPU with --arch).
    Sass(SassArgs),
    /// One launch of one variant on fresh inputs, checked against the reference: for
    /// compute-sanitizer, Nsight Compute and other tools to observe.
    Probe(ProbeArgs),
    /// Instrumented builds: copy/compute timeline per sampled block, overlap figure, Chrome trace.
    Timeline(TimelineArgs),
    /// Named axes (tiles, stages, mechanism, tile_rows, dtype) expanded to a sweep; JSONL + plots.
    Sweep(SweepArgs),
    /// The pipeline model against a sweep's measurements (host only).
    Model(ModelArgs),
    /// Tables and report.html from a results.json (host only).
    Report(ReportArgs),
    /// The queue lab: an analogy for outstanding tiles (host only).
    Lab(LabArgs),
}

#[derive(Args)]
struct TimelineArgs {
    /// Variants to trace (default: sync, cpasync-cg16-s2, tma-s3 where the GPU has them).
    variants: Vec<String>,
    #[command(flatten)]
    problem: ProblemArgs,
    #[command(flatten)]
    gpu: GpuArgs,
    /// Blocks that record.
    #[arg(long, default_value_t = 4)]
    blocks: u32,
    /// Tiles per block that record.
    #[arg(long, default_value_t = 32)]
    tiles: u32,
    /// Writes timeline.json (Chrome trace), timeline.svg and timeline-results.json here.
    #[arg(long)]
    out: Option<PathBuf>,
}

#[derive(Args)]
struct SweepArgs {
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
    #[arg(long, default_value_t = 20)]
    repeats: usize,
}

#[derive(Args)]
struct ModelArgs {
    /// A sweep.jsonl with copy-only and compute-only probes.
    #[arg(long)]
    from: PathBuf,
}

#[derive(Args)]
struct ReportArgs {
    /// A results.json written by `tilepipe run`.
    results: PathBuf,
    /// Writes report.html here.
    #[arg(long)]
    out: Option<PathBuf>,
}

#[derive(Args)]
struct LabArgs {
    #[command(subcommand)]
    lab: Lab,
}

#[derive(Subcommand)]
enum Lab {
    /// The fluid queue: Reset, rates, predict, Step (dt 0.5 s).
    Queue(QueueArgs),
}

#[derive(Args)]
struct QueueArgs {
    /// Commands instead of the interactive UI: "reset; arrival 3; service 2; step; step; show".
    #[arg(long)]
    script: Option<String>,
    /// Read commands from standard input.
    #[arg(long)]
    stdin: bool,
    /// Seconds per Step.
    #[arg(long, default_value_t = 0.5)]
    dt: f64,
    /// Slots of the bounded pipeline shown beside the queue.
    #[arg(long, default_value_t = 4.0)]
    slots: f64,
}

#[derive(Args, Clone)]
struct ProblemArgs {
    /// Rows of the activation view.
    #[arg(long, default_value_t = 262_144)]
    tokens: usize,
    /// Elements per row.
    #[arg(long, default_value_t = 4096)]
    hidden: usize,
    /// Elements between row starts (default: hidden, a dense view).
    #[arg(long)]
    row_stride: Option<usize>,
    /// Elements before the first row in the allocation.
    #[arg(long, default_value_t = 0)]
    offset: usize,
    /// Elements in the underlying allocation (default: just enough for the view).
    #[arg(long)]
    alloc: Option<usize>,
    /// Element type: f32, f16, bf16.
    #[arg(long, default_value = "bf16")]
    dtype: DType,
    /// Seed of the random inputs.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Rows per tile (default: about 16 KB per tile).
    #[arg(long)]
    tile_rows: Option<usize>,
}

impl ProblemArgs {
    fn view(&self) -> tilepipe::Result<View> {
        View::new(
            self.tokens,
            self.hidden,
            self.row_stride,
            self.offset,
            self.alloc,
            self.dtype,
        )
    }
}

#[derive(Args, Clone)]
struct GpuArgs {
    /// GPU ordinal.
    #[arg(long, default_value_t = 0)]
    device: usize,
    /// Cubin cache folder (default: TILEPIPE_CACHE_DIR or ~/.cache/tilepipe).
    #[arg(long)]
    cache_dir: Option<PathBuf>,
    /// Compile everything afresh and store nothing (also TILEPIPE_NO_CACHE=1).
    #[arg(long)]
    no_cache: bool,
    /// No progress on stderr.
    #[arg(long, short)]
    quiet: bool,
}

impl GpuArgs {
    fn open(&self) -> tilepipe::Result<Harness> {
        Harness::open(
            self.device,
            Cache::configure(self.cache_dir.clone(), self.no_cache),
            Progress::new(self.quiet),
        )
    }
}

#[derive(Args)]
struct RunArgs {
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
    #[arg(long, default_value_t = 20)]
    repeats: usize,
    /// Untimed launches before timing.
    #[arg(long, default_value_t = 5)]
    warmup: usize,
    /// Also show a burst of launches whose host submission interval and device time disagree.
    #[arg(long)]
    explain_timing: bool,
    /// Also trace these variants (instrumented builds, timed apart) and add their overlap figure.
    #[arg(long, num_args = 0..=1, default_missing_value = "sync,cpasync-cg16-s2,tma-s3")]
    timeline: Option<String>,
}

#[derive(Args)]
struct CheckArgs {
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
    #[arg(long, default_value_t = 20)]
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

#[derive(Args)]
struct ProbeArgs {
    /// Exact variant or control name.
    variant: String,
    #[command(flatten)]
    problem: ProblemArgs,
    #[command(flatten)]
    gpu: GpuArgs,
    /// Random sleeps: 1 producer, 2 consumer, 3 both.
    #[arg(long, default_value_t = 0)]
    stress: u32,
    /// Blocks to launch (default: the persistent grid).
    #[arg(long)]
    blocks: Option<u32>,
    /// Bound on each in-kernel wait, in ms (raise it under compute-sanitizer).
    #[arg(long, default_value_t = 100)]
    wait_timeout_ms: u64,
    /// Launches, each on fresh inputs (seed, seed + 1, ...); one line per run.
    #[arg(long, default_value_t = 1)]
    runs: u64,
}

#[derive(Args)]
struct SassArgs {
    /// Variant name.
    variant: String,
    /// Compile for this architecture without a GPU (e.g. sm_90); default: the GPU's.
    #[arg(long)]
    arch: Option<tilepipe::arch::Arch>,
    #[arg(long, default_value = "bf16")]
    dtype: DType,
    #[arg(long, default_value_t = 4096)]
    hidden: usize,
    #[arg(long)]
    tile_rows: Option<usize>,
    /// Lines of listing shown around each movement instruction.
    #[arg(long, default_value_t = 2)]
    context: usize,
    /// Writes the full listing here.
    #[arg(long)]
    listing: Option<PathBuf>,
    #[command(flatten)]
    gpu: GpuArgs,
}

fn main() -> ExitCode {
    // A reader that stops early (`tilepipe run | head`) closes stdout and println! panics: leave
    // quietly instead, as other command-line tools do.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let msg = info
            .payload()
            .downcast_ref::<String>()
            .map_or("", String::as_str);
        if msg.starts_with("failed printing to stdout") && msg.contains("Broken pipe") {
            std::process::exit(0);
        }
        default_hook(info);
    }));
    let cli = Cli::parse();
    match dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("tilepipe: error: {e:#}");
            ExitCode::from(
                if e.downcast_ref::<tilepipe::Error>()
                    .is_some_and(is_input_error)
                {
                    2
                } else {
                    1
                },
            )
        }
    }
}

fn is_input_error(e: &tilepipe::Error) -> bool {
    use tilepipe::Error::*;
    matches!(
        e,
        InvalidShape(_) | InvalidArgument(_) | Unsupported { .. } | TensorMap(_) | Lab(_)
    )
}

fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Run(a) => cmd_run(a),
        Command::Check(a) => cmd_check(a),
        Command::Sass(a) => cmd_sass(a),
        Command::Probe(a) => cmd_probe(a),
        Command::Timeline(a) => cmd_timeline(a),
        Command::Sweep(a) => cmd_sweep(a),
        Command::Model(a) => cmd_model(a),
        Command::Report(a) => cmd_report(a),
        Command::Lab(LabArgs { lab: Lab::Queue(a) }) => cmd_lab(a),
    }
}

fn cmd_run(a: RunArgs) -> anyhow::Result<ExitCode> {
    let view = a.problem.view()?;
    let h = a.gpu.open()?;
    eprintln!("{}", h.info().summary());
    let opts = RunOptions {
        view,
        dtype: a.problem.dtype,
        seed: a.problem.seed,
        tile_rows: a.problem.tile_rows,
        variants: a.variants,
        timing: TimingOptions {
            warmup: a.warmup,
            min_repeats: a.repeats,
            ..TimingOptions::default()
        },
        ceiling_bytes: 1 << 30,
        explain_timing: a.explain_timing,
        command: std::env::args().collect(),
    };
    let mut outcome = run(&h, &opts)?;
    let mut timeline_svg = None;
    if let (Some(list), None) = (&a.timeline, &outcome.fatal) {
        let variants = traceable(&h, list, &a.problem)?;
        let t = TimelineOptions {
            view,
            dtype: a.problem.dtype,
            seed: a.problem.seed,
            tile_rows: a.problem.tile_rows,
            blocks: 4,
            tiles: 32,
        };
        match timeline::capture::capture(&h, &variants, &t) {
            Ok(tl) => {
                timeline_svg = write_timeline(&tl, a.out.as_deref())?;
                outcome.results.timelines = tl;
            }
            Err(e) => outcome.fatal = Some(e),
        }
    }
    let r = &outcome.results;
    let stats = h.cache_stats();
    println!(
        "rmsnorm {} tokens {} hidden {} stride {} offset {} ({} MiB moved), tile {} rows; cubin cache: {} hits, {} compiled",
        r.workload.dtype,
        view.tokens,
        view.hidden,
        view.row_stride,
        view.offset,
        r.workload.bytes_moved >> 20,
        r.workload.tile_rows,
        stats.hits,
        stats.compiled
    );
    if let Some(c) = &r.ceiling {
        println!(
            "copy ceiling (cuMemcpyDtoD, read + write): {:.0} GB/s, median of {}",
            c.gbps,
            c.samples_ms.len()
        );
    }
    println!("{}", table::performance(r));
    println!("{}", table::evidence(r));
    println!(
        "device times are CUDA-event medians per launch; host submit is the CPU time of the launch call, not device time"
    );
    print_timelines(&r.timelines);
    for line in table::problems(r).iter().chain(&r.notes) {
        println!("{line}");
    }
    if let Some(dir) = &a.out {
        let path = dir.join("results.json");
        r.write(&path)?;
        let html = dir.join("report.html");
        std::fs::write(&html, report::html::render(r, timeline_svg.as_deref()))
            .with_context(|| html.display().to_string())?;
        eprintln!("wrote {} and {}", path.display(), html.display());
    }
    if let Some(e) = outcome.fatal {
        return Err(
            anyhow::Error::new(e).context("the run stopped early; results so far were kept")
        );
    }
    let bad = r
        .variants
        .iter()
        .any(|v| matches!(v.status, report::Status::Failed | report::Status::Error));
    Ok(if bad {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn cmd_check(a: CheckArgs) -> anyhow::Result<ExitCode> {
    let dtypes = a
        .dtypes
        .split(',')
        .map(|s| s.trim().parse::<DType>())
        .collect::<Result<Vec<_>, _>>()?;
    let hidden = cases::parse_hidden(&a.suite_hidden)?;
    let h = a.gpu.open()?;
    eprintln!("{}; {}", h.info().summary(), h.tc.describe());
    let opts = SuiteOptions {
        dtypes,
        hidden,
        variants: a.variants,
        runs: a.runs.max(1),
        seed: a.seed,
    };
    let mut report = run_suite(&h, &opts)?;
    if let Some(tools) = &a.sanitize {
        sanitize::run_all(
            &h,
            &mut report,
            &sanitize::parse_tools(tools)?,
            &a.sanitize_variants,
            a.seed,
        )?;
    }
    for s in &report.skipped {
        println!("skip {s}");
    }
    if let Some(dir) = &a.out {
        std::fs::create_dir_all(dir).with_context(|| dir.display().to_string())?;
        let path = dir.join("check.json");
        std::fs::write(&path, serde_json::to_string_pretty(&report)?)
            .with_context(|| path.display().to_string())?;
    }
    println!("{} passed, {} failed", report.passed(), report.failed());
    Ok(if report.failed() == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn cmd_probe(a: ProbeArgs) -> anyhow::Result<ExitCode> {
    let view = a.problem.view()?;
    let h = a.gpu.open()?;
    let mut all_passed = true;
    for i in 0..a.runs.max(1) {
        let seed = a.problem.seed + i;
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
            Err(e) => return Err(e.into()),
        };
        println!(
            "run {i} {}: {}: {detail}",
            a.variant,
            if passed { "passed" } else { "FAILED" }
        );
        all_passed &= passed;
    }
    Ok(if all_passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The variants a timeline list names, minus those this GPU cannot run (said on stderr).
fn traceable(h: &Harness, list: &str, problem: &ProblemArgs) -> anyhow::Result<Vec<Variant>> {
    let all = Variant::select(Variant::catalogue(), Some(list))?;
    let cfg = tilepipe::variant::BuildConfig::new(problem.dtype, problem.hidden, problem.tile_rows);
    Ok(all
        .into_iter()
        .filter(|v| match h.unsupported_here(v, &cfg) {
            Some(why) => {
                eprintln!("not traced: {}: {why}", v.name);
                false
            }
            None => true,
        })
        .collect())
}

fn print_timelines(tl: &[TimelineResult]) {
    for t in tl {
        println!(
            "timeline {}: {:.1}% of copy-in-flight time ran under compute ({} sampled blocks); instrumented {:.3} ms vs clean {:.3} ms ({:+.1}%); instrumented output {}",
            t.variant,
            100.0 * t.overlap.share,
            t.blocks.len(),
            t.instrumented_ms,
            t.clean_ms,
            100.0 * t.overhead,
            if t.verdict.passed {
                "validated"
            } else {
                "FAILED validation"
            }
        );
    }
}

/// Writes timeline.json (Chrome trace), timeline.svg and timeline-results.json; returns the SVG.
fn write_timeline(
    tl: &[TimelineResult],
    out: Option<&std::path::Path>,
) -> anyhow::Result<Option<String>> {
    let named: Vec<(String, Vec<timeline::BlockTrace>)> = tl
        .iter()
        .map(|t| (t.variant.clone(), t.blocks.clone()))
        .collect();
    let svg = timeline::svg::render(
        &named,
        "copy in flight (blue) and compute (orange) per sampled block",
    )
    .map_err(anyhow::Error::msg)?;
    if let Some(dir) = out {
        std::fs::create_dir_all(dir).with_context(|| dir.display().to_string())?;
        std::fs::write(
            dir.join("timeline.json"),
            serde_json::to_string(&timeline::chrome_trace(&named))?,
        )?;
        std::fs::write(dir.join("timeline.svg"), &svg)?;
        std::fs::write(
            dir.join("timeline-results.json"),
            serde_json::to_string_pretty(tl)?,
        )?;
        eprintln!(
            "wrote timeline.json (Perfetto / chrome://tracing), timeline.svg, timeline-results.json in {}",
            dir.display()
        );
    }
    Ok(Some(svg))
}

fn cmd_timeline(a: TimelineArgs) -> anyhow::Result<ExitCode> {
    let view = a.problem.view()?;
    let h = a.gpu.open()?;
    let list = if a.variants.is_empty() {
        "sync,cpasync-cg16-s2,tma-s3".to_string()
    } else {
        a.variants.join(",")
    };
    let variants = traceable(&h, &list, &a.problem)?;
    let t = TimelineOptions {
        view,
        dtype: a.problem.dtype,
        seed: a.problem.seed,
        tile_rows: a.problem.tile_rows,
        blocks: a.blocks,
        tiles: a.tiles,
    };
    let tl = timeline::capture::capture(&h, &variants, &t)?;
    print_timelines(&tl);
    write_timeline(&tl, a.out.as_deref())?;
    Ok(if tl.iter().all(|t| t.verdict.passed) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn cmd_sweep(a: SweepArgs) -> anyhow::Result<ExitCode> {
    let mut spec = SweepSpec {
        probes: !a.no_probes,
        ..SweepSpec::default()
    };
    for axis in &a.axes {
        spec.set_axis(axis)?;
    }
    let h = a.gpu.open()?;
    std::fs::create_dir_all(&a.out).with_context(|| a.out.display().to_string())?;
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
    let result = sweep::measure::sweep(&h, &o);
    // plot whatever is on disk, also after an interruption
    let records = sweep::read(&jsonl)?;
    for (name, svg) in [
        ("time-per-tile.svg", sweep::plots::time_per_tile(&records)),
        ("bandwidth.svg", sweep::plots::bandwidth(&records)),
        (
            "speedup-vs-stages.svg",
            sweep::plots::speedup_vs_stages(&records),
        ),
    ] {
        match svg {
            Ok(svg) => std::fs::write(a.out.join(name), svg)?,
            Err(e) => eprintln!("{name} not drawn: {e}"),
        }
    }
    print_model(&records);
    for r in records.iter().filter(|r| r.clock_warning.is_some()) {
        println!(
            "CLOCKS {}: {}",
            r.key,
            r.clock_warning.as_deref().unwrap_or_default()
        );
    }
    println!("{} points in {}", records.len(), jsonl.display());
    result?;
    Ok(ExitCode::SUCCESS)
}

fn print_model(records: &[sweep::Record]) {
    let rows = sweep::plots::model_table(records);
    if rows.is_empty() {
        println!("model: no copy-only and compute-only probes in these records");
        return;
    }
    println!(
        "{:<22} {:>6} {:>10} {:>11} {:>11} {:>11} {:>10}  why",
        "variant", "stages", "tiles/blk", "predicted", "simulated", "measured", "departure"
    );
    for (c, _, why) in rows {
        println!(
            "{:<22} {:>6} {:>10} {:>9.4}ms {:>9.4}ms {:>9.4}ms {:>+9.1}%  {}{}",
            c.variant,
            c.stages,
            c.tiles_per_block,
            c.predicted,
            c.simulated,
            c.measured,
            100.0 * c.departure,
            if c.flagged { "FLAGGED: " } else { "" },
            why
        );
    }
}

fn cmd_model(a: ModelArgs) -> anyhow::Result<ExitCode> {
    let records = sweep::read(&a.from)?;
    if records.is_empty() {
        anyhow::bail!(
            "{}: no sweep records (run tilepipe sweep first)",
            a.from.display()
        );
    }
    print_model(&records);
    Ok(ExitCode::SUCCESS)
}

fn cmd_report(a: ReportArgs) -> anyhow::Result<ExitCode> {
    let r = report::RunResults::read(&a.results)?;
    println!("{}", table::performance(&r));
    println!("{}", table::evidence(&r));
    print_timelines(&r.timelines);
    for line in table::problems(&r).iter().chain(&r.notes) {
        println!("{line}");
    }
    if let Some(dir) = &a.out {
        std::fs::create_dir_all(dir).with_context(|| dir.display().to_string())?;
        let named: Vec<(String, Vec<timeline::BlockTrace>)> = r
            .timelines
            .iter()
            .map(|t| (t.variant.clone(), t.blocks.clone()))
            .collect();
        let svg = if named.is_empty() {
            None
        } else {
            timeline::svg::render(&named, "timeline").ok()
        };
        let html = dir.join("report.html");
        std::fs::write(&html, report::html::render(&r, svg.as_deref()))
            .with_context(|| html.display().to_string())?;
        eprintln!("wrote {}", html.display());
    }
    Ok(ExitCode::SUCCESS)
}

fn cmd_lab(a: QueueArgs) -> anyhow::Result<ExitCode> {
    let mut q = queue_lab::Queue::new(a.dt, a.slots)?;
    let script = match (a.script, a.stdin) {
        (Some(s), _) => Some(s),
        (None, true) => Some(std::io::read_to_string(std::io::stdin())?),
        (None, false) => None,
    };
    match script {
        Some(s) => {
            for line in queue_lab::script::run(&mut q, &s)? {
                println!("{line}");
            }
        }
        None => queue_lab::tui::run(q)?,
    }
    Ok(ExitCode::SUCCESS)
}

fn cmd_sass(a: SassArgs) -> anyhow::Result<ExitCode> {
    let ev = tilepipe::sass::inspect(
        &a.variant,
        a.arch,
        a.dtype,
        a.hidden,
        a.tile_rows,
        Cache::configure(a.gpu.cache_dir.clone(), a.gpu.no_cache),
        a.gpu.device,
    )?;
    println!("{}", ev.header);
    println!(
        "{}",
        tilepipe::sass::excerpt(&ev.evidence.listing, a.context)
    );
    if let Some(path) = &a.listing {
        std::fs::write(path, &ev.evidence.listing).with_context(|| path.display().to_string())?;
    }
    Ok(ExitCode::SUCCESS)
}
