//! `tilepipe inspect PATH`: a user's own kernel (a `.cu`, a cubin, a fatbinary or an executable
//! holding one) judged as tilepipe judges its own: per kernel, the census of movement and math
//! instructions and the mechanism they make, each claim ("claimed X, emitted Y") from --claim or
//! read from the kernel's name, its CUTLASS/CuTe template arguments and its source, the protocol
//! checks over its feasible paths, the stages its loops keep in flight, and the resources with
//! the occupancy of a launch shape. A folder is read as Triton's cache: each kernel's metadata
//! beside its cubin gives its claims (num_stages, tensor descriptors) and its launch. No GPU is
//! needed. Cubins are disassembled in parallel; --arch and --kernel leave cubins out
//! before they are disassembled.

pub mod checks;
pub mod claims;
pub mod declares;
pub mod flow;
pub mod input;
pub mod judge;
pub mod listing;
pub mod mechanism;
pub mod names;
pub mod render;
pub mod report;
pub mod select;
pub mod stages;
pub mod triton;
pub mod usage;

pub use report::{Exit, FailOn, KernelReport, Report, Unreadable};

use crate::progress::Progress;
use crate::toolchain::Toolchain;
use crate::{Error, Result};
use claims::Claim;
use input::{Cubin, Kind, Target};
use rayon::prelude::*;
use select::KernelFilter;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use usage::Launch;

/// What the user asked for.
#[derive(Debug, Clone, Default)]
pub struct Request {
    pub path: PathBuf,
    /// --arch: what a `.cu` is compiled for, and which cubins of a binary are inspected.
    pub target: Option<Target>,
    /// -D NAME[=VALUE] and -I DIR, passed to NVRTC.
    pub defines: Vec<String>,
    pub includes: Vec<PathBuf>,
    /// Only kernels whose symbol, name or demangled name this matches (a substring or a
    /// regular expression).
    pub kernel: Option<String>,
    /// The claim to attest instead of the ones read from names and source.
    pub claim: Option<Claim>,
    pub launch: Option<Launch>,
}

/// One cubin's kernels, or why it could not be read.
type Judged = std::result::Result<Vec<KernelReport>, Unreadable>;

/// A cubin to judge, with the symbol indices of the kernels --kernel asks for in it.
struct Todo<'a> {
    cubin: &'a Cubin,
    only: Option<Vec<usize>>,
}

fn judge_cubin(
    todo: &Todo,
    req: &Request,
    loaded: &input::Loaded,
    filter: Option<&KernelFilter>,
    tc: &Toolchain,
) -> Result<Judged> {
    let cubin = todo.cubin;
    // the cubin is named beside the reason: a disassembler's failure is said once
    let unreadable = |e: Error| Unreadable {
        cubin: cubin.name.clone(),
        reason: match e {
            Error::Disassembler { detail, .. } => detail,
            e => e.to_string(),
        },
    };
    let (tool, text) = match input::disassemble(&cubin.path, tc, todo.only.as_deref()) {
        Ok(d) => d,
        Err(e) => return Ok(Err(unreadable(e))),
    };
    let target = listing::target(&text)
        .and_then(|t| t.parse::<Target>().ok())
        .or_else(|| cubin.target.clone());
    if let (Kind::Cubin, Some(want), Some(have)) = (loaded.kind, &req.target, &target)
        && want.arch != have.arch
    {
        return Err(Error::InvalidArgument(format!(
            "{} is a cubin for {}, not {}",
            req.path.display(),
            have.name,
            want.name
        )));
    }
    let usage = input::res_usage(&cubin.path, tc).map(|t| usage::parse(&t));
    let kernels: Vec<listing::Kernel> = listing::kernels(&text)
        .into_iter()
        .filter(|k| filter.is_none_or(|f| f.matches(&k.function.name)))
        .collect();
    drop(text);
    let cx = judge::Context {
        cubin: &cubin.name,
        tool: &tool,
        target: target.as_ref(),
        usage: usage.as_ref().map_err(String::as_str),
        claim: req.claim,
        launch: req.launch,
        log: &loaded.log,
        triton: cubin.triton.as_ref(),
    };
    // kernels in parallel too: one cubin can hold hundreds of long kernels (cuBLASLt's), and
    // judged one after the other they would keep the whole run waiting on that cubin
    Ok(Ok(kernels
        .par_iter()
        .with_max_len(1)
        .map(|k| judge::kernel(k, &cx, &mut judge::Lines::new(loaded.source.as_ref())))
        .collect()))
}

pub fn inspect(req: &Request, tc: &Toolchain, progress: &Progress) -> Result<Report> {
    let filter = req.kernel.as_deref().map(KernelFilter::new).transpose()?;
    let spec = input::Spec {
        path: &req.path,
        target: req.target.as_ref(),
        defines: &req.defines,
        includes: &req.includes,
    };
    let loaded = input::load(&spec, tc)?;
    let mut report = Report {
        input: req.path.display().to_string(),
        kind: loaded.kind,
        compiled: loaded.compiled.clone(),
        kernels: Vec::new(),
        notes: Vec::new(),
        cubins: loaded.cubins.len() + loaded.skipped_by_arch,
        skipped_by_arch: loaded.skipped_by_arch,
        skipped_by_kernel: 0,
        unreadable: Vec::new(),
    };
    if !loaded.log.is_empty() {
        report.notes.push(format!("NVRTC: {}", loaded.log));
    }
    // the kernels each cubin's symbol table names, read without disassembling
    let mut names: Vec<String> = Vec::new();
    let mut todo: Vec<Todo> = Vec::new();
    match &filter {
        None => todo.extend(loaded.cubins.iter().map(|cubin| Todo { cubin, only: None })),
        Some(f) => {
            let symbols: Vec<Result<Vec<(usize, String)>>> = loaded
                .cubins
                .par_iter()
                .map(|c| select::kernel_symbols(&c.path))
                .collect();
            for (c, s) in loaded.cubins.iter().zip(symbols) {
                match s {
                    Ok(list) => {
                        let only: Vec<usize> = list
                            .iter()
                            .filter(|(_, n)| f.matches(n))
                            .map(|(i, _)| *i)
                            .collect();
                        if only.is_empty() {
                            report.skipped_by_kernel += 1;
                            names.extend(list.iter().map(|(_, n)| names::display_name(n)));
                        } else {
                            todo.push(Todo {
                                cubin: c,
                                only: Some(only),
                            });
                        }
                    }
                    Err(e) => report.unreadable.push(Unreadable {
                        cubin: c.name.clone(),
                        reason: e.to_string(),
                    }),
                }
            }
        }
    }
    progress.stage("inspect", todo.len() as u64);
    let single = loaded.cubins.len() == 1;
    // the biggest cubins first, so that no long one starts last and runs alone; the report
    // keeps the library's order
    let mut order: Vec<usize> = (0..todo.len()).collect();
    let size = |t: &Todo| std::fs::metadata(&t.cubin.path).map_or(0, |m| m.len());
    order.sort_by_cached_key(|&i| std::cmp::Reverse(size(&todo[i])));
    // (one queue the workers take from in that order: rayon's halving would not keep it)
    let next = AtomicUsize::new(0);
    let mut judged: Vec<(usize, Result<Judged>)> = (0..rayon::current_num_threads())
        .into_par_iter()
        .flat_map_iter(|_| {
            std::iter::from_fn(|| {
                let &i = order.get(next.fetch_add(1, Ordering::Relaxed))?;
                let t = &todo[i];
                let r = judge_cubin(t, req, &loaded, filter.as_ref(), tc);
                progress.step(&t.cubin.name);
                Some((i, r))
            })
        })
        .collect();
    progress.done();
    judged.sort_by_key(|j| j.0);
    let judged = judged.into_iter().map(|j| j.1);
    for j in judged {
        match j? {
            Ok(kernels) => report.kernels.extend(kernels),
            Err(u) if single => {
                return Err(Error::Disassembler {
                    what: u.cubin,
                    detail: u.reason,
                });
            }
            Err(u) => report.unreadable.push(u),
        }
    }
    if let (Some(f), true) = (&filter, report.kernels.is_empty()) {
        names.sort();
        names.dedup();
        let shown: Vec<&str> = names.iter().take(30).map(String::as_str).collect();
        return Err(Error::InvalidArgument(format!(
            "no kernel matching '{}' in {} (allowed: a symbol, a name or part of one, or a regular expression; kernels there include {}{})",
            f.text(),
            req.path.display(),
            shown.join(", "),
            if names.len() > shown.len() {
                format!(" and {} more", names.len() - shown.len())
            } else {
                String::new()
            }
        )));
    }
    Ok(report)
}
