//! `tilepipe inspect PATH`: a user's kernel judged as tilepipe judges its own (host only), with a
//! progress bar on stderr while cubins are disassembled; a folder is read as Triton's cache.
//! Exit 0 when nothing --fail-on names failed, 1 when it did (a contradicted claim, a protocol
//! hazard, or either), 2 when nothing could be judged (bad arguments, a file that is not CUDA, a
//! folder with no Triton kernel or a malformed metadata file, a compile error, no disassembler,
//! no kernel matching --kernel, no cubin that could be read). Undecided checks never fail.

use super::print;
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use tilepipe::inspect::claims::Claim;
use tilepipe::inspect::input::Target;
use tilepipe::inspect::usage::Launch;
use tilepipe::inspect::{FailOn, Request, render};
use tilepipe::progress::Progress;
use tilepipe::toolchain::Toolchain;

#[derive(Args)]
pub struct InspectArgs {
    /// A .cu file (compiled with NVRTC), a cubin, a fatbinary, an executable or shared library
    /// with device code (unpacked with cuobjdump), or a folder of Triton kernels (a Triton or
    /// torch.compile cache, or one kernel's folder: NAME.json beside NAME.cubin).
    path: PathBuf,
    /// Architecture: what a .cu is compiled for (default: the GPU's), and which cubins of a
    /// binary are inspected (default: all). sm_90a for wgmma.
    #[arg(long, value_parser = parse::<Target>)]
    arch: Option<Target>,
    /// A macro for NVRTC, NAME or NAME=VALUE (repeatable).
    #[arg(short = 'D', value_name = "NAME[=VALUE]")]
    define: Vec<String>,
    /// An include folder for NVRTC (repeatable); the .cu's own folder is always searched.
    #[arg(short = 'I', value_name = "DIR")]
    include: Vec<PathBuf>,
    /// Only kernels whose symbol, name or demangled name (with template arguments) this matches:
    /// a regular expression, or a literal substring when it is not a valid one. Cubins that hold
    /// no matching kernel are not disassembled.
    #[arg(long)]
    kernel: Option<String>,
    /// The mechanism to attest instead of those read from kernel names, source and Triton's
    /// metadata (its num_stages is still judged): cpasync16, cpasync8, cpasync4, cpasync, bulk,
    /// tma, wgmma, mma, sync, async.
    #[arg(long, value_parser = parse::<Claim>)]
    claim: Option<Claim>,
    /// Threads per block: adds resident blocks per SM and the limiting resource (a Triton
    /// kernel's launch is read from its metadata unless this is given).
    #[arg(long, value_parser = super::args::bounded32::<1, 1024>())]
    block_size: Option<u32>,
    /// Dynamic shared memory per block in bytes (with --block-size); no GPU gives a block more
    /// than 256 KiB.
    #[arg(long, default_value_t = 0, requires = "block_size", value_parser = super::args::bounded32::<0, 262144>())]
    dynamic_smem: u32,
    /// text (the terminal) or json (the whole report, for scripts).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// What makes the exit code 1: contradicted claims, protocol hazards, or both.
    #[arg(long, default_value = "both", value_parser = parse::<FailOn>)]
    fail_on: FailOn,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Text,
    Json,
}

fn parse<T: std::str::FromStr<Err = tilepipe::Error>>(s: &str) -> Result<T, String> {
    s.parse().map_err(|e: tilepipe::Error| e.to_string())
}

/// -D and -I, judged before any work: they reach NVRTC, so they belong to a .cu alone, and each
/// must say something.
fn judge_compile_flags(a: &InspectArgs) -> Result<(), String> {
    let is_source = a.path.extension().is_some_and(|e| e == "cu");
    let compiles = !(a.define.is_empty() && a.include.is_empty());
    if compiles && !is_source {
        return Err(format!(
            "-D and -I reach the compiler, and {} is not a .cu source (allowed: -D and -I with a .cu)",
            a.path.display()
        ));
    }
    if let Some(d) = a.define.iter().find(|d| {
        let name = d.split_once('=').map_or(d.as_str(), |(n, _)| n);
        name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    }) {
        return Err(format!(
            "-D '{d}' is not a macro (allowed: NAME or NAME=VALUE, NAME of letters, digits and _)"
        ));
    }
    match a.include.iter().find(|i| !i.is_dir()) {
        Some(i) => Err(format!(
            "-I {}: not a folder (allowed: an include folder that exists)",
            i.display()
        )),
        None => Ok(()),
    }
}

pub fn cmd_inspect(a: InspectArgs) -> anyhow::Result<ExitCode> {
    if let Err(why) = judge_compile_flags(&a) {
        print::error(&why);
        return Ok(ExitCode::from(2));
    }
    let req_path = a.path.clone();
    let req = Request {
        path: a.path,
        target: a.arch,
        defines: a.define,
        includes: a.include,
        kernel: a.kernel,
        claim: a.claim,
        launch: a.block_size.map(|threads| Launch {
            threads,
            dynamic_smem: a.dynamic_smem,
        }),
    };
    let progress = Progress::new(Arc::new(super::progress::Terminal::new(a.quiet, false)));
    let report = match tilepipe::inspect::inspect(&req, &Toolchain::discover(), &progress) {
        Ok(r) => r,
        Err(e) => {
            print::error(&e.to_string());
            return Ok(ExitCode::from(2));
        }
    };
    let text = match a.format {
        Format::Text => render::text(&report),
        Format::Json => render::json(&report),
    };
    print::line(text.trim_end_matches('\n'));
    let outcome = report.outcome(a.fail_on);
    if outcome == tilepipe::inspect::report::Exit::NothingJudged {
        // exit 2 says why on stderr too, where a script that keeps stdout looks
        print::error(&format!(
            "{}: nothing to judge: no kernel found (allowed: a .cu with a __global__ function, a \
             cubin, a fatbinary, an executable with device code or a Triton cache folder)",
            req_path.display()
        ));
    }
    Ok(ExitCode::from(outcome.code()))
}
