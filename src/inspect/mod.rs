//! `tilepipe inspect PATH`: a user's own kernel (a `.cu`, a cubin, a fatbinary or an executable
//! holding one) judged as tilepipe judges its own: per kernel, the census of movement and math
//! instructions and the mechanism they make, each claim ("claimed X, emitted Y") from --claim or
//! read from the kernel's name, its CUTLASS/CuTe template arguments and its source, the protocol
//! checks over its feasible paths, the stages its loops keep in flight, and the resources with
//! the occupancy of a launch shape. A folder is read as Triton's cache: each kernel's metadata
//! beside its cubin gives its claims (num_stages, tensor descriptors) and its launch. No GPU is
//! needed. Cubins are disassembled in parallel; --arch and --kernel leave cubins out before they
//! are disassembled, and twins (the same code built for two architectures) are disassembled and
//! analysed once.

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
pub mod twins;
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

/// Cubins to judge from one listing (twins: the same code, `twins`), with their places in the
/// library's order and the symbol indices of the kernels --kernel asks for in them.
struct Todo<'a> {
    cubins: Vec<&'a Cubin>,
    at: Vec<usize>,
    only: Option<Vec<usize>>,
}

/// Each twin's todo merged into its group's first: twins asked for the same kernels whose
/// architectures their names say (the listing of the first cannot say the others').
fn twins_together(todo: Vec<Todo>) -> Vec<Todo> {
    let paths: Vec<&std::path::Path> = todo.iter().map(|t| t.cubins[0].path.as_path()).collect();
    let groups = twins::groups(&paths);
    let mut slots: Vec<Option<Todo>> = todo.into_iter().map(Some).collect();
    let mut out = Vec::new();
    for group in groups {
        let mut first = slots[group[0]].take().expect("each todo is in one group");
        for &i in &group[1..] {
            let t = slots[i].take().expect("each todo is in one group");
            let named = |t: &Todo| t.cubins.iter().all(|c| c.target.is_some());
            if t.only == first.only && named(&t) && named(&first) {
                first.cubins.extend(t.cubins);
                first.at.extend(t.at);
            } else {
                out.push(t);
            }
        }
        out.push(first);
    }
    out
}

/// The todo's cubins judged, in its order: the first is disassembled, and each kernel's
/// analysis serves every twin, reported with the twin's own name and architecture.
fn judge_cubins(
    todo: &Todo,
    req: &Request,
    loaded: &input::Loaded,
    filter: Option<&KernelFilter>,
    tc: &Toolchain,
) -> Result<Vec<Judged>> {
    let cubin = todo.cubins[0];
    // each twin is named beside the reason: a disassembler's failure is said once a cubin
    let unreadable = |e: Error| {
        let reason = match e {
            Error::Disassembler { detail, .. } => detail,
            e => e.to_string(),
        };
        let each = todo.cubins.iter().map(|c| {
            Err(Unreadable {
                cubin: c.name.clone(),
                reason: reason.clone(),
            })
        });
        Ok(each.collect())
    };
    let (tool, text) = match input::disassemble(&cubin.path, tc, todo.only.as_deref()) {
        Ok(d) => d,
        Err(e) => return unreadable(e),
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
    let targets: Vec<Option<&Target>> = std::iter::once(target.as_ref())
        .chain(todo.cubins[1..].iter().map(|c| c.target.as_ref()))
        .collect();
    let contexts: Vec<judge::Context> = todo
        .cubins
        .iter()
        .zip(targets)
        .map(|(c, target)| judge::Context {
            cubin: &c.name,
            tool: &tool,
            target,
            usage: usage.as_ref().map_err(String::as_str),
            claim: req.claim,
            launch: req.launch,
            log: &loaded.log,
            triton: c.triton.as_ref(),
        })
        .collect();
    // kernels in parallel too: one cubin can hold hundreds of long kernels (cuBLASLt's), and
    // judged one after the other they would keep the whole run waiting on that cubin
    let per_kernel: Vec<Vec<KernelReport>> = kernels
        .par_iter()
        .with_max_len(1)
        .map(|k| {
            let a = judge::analyse(k);
            let mut lines = judge::Lines::new(loaded.source.as_ref());
            contexts
                .iter()
                .map(|cx| judge::kernel(k, &a, cx, &mut lines))
                .collect()
        })
        .collect();
    let mut out: Vec<Vec<KernelReport>> = contexts.iter().map(|_| Vec::new()).collect();
    for reports in per_kernel {
        for (o, r) in out.iter_mut().zip(reports) {
            o.push(r);
        }
    }
    Ok(out.into_iter().map(Ok).collect())
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
        None => todo.extend(loaded.cubins.iter().map(|c| Todo {
            cubins: vec![c],
            at: Vec::new(),
            only: None,
        })),
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
                                cubins: vec![c],
                                at: Vec::new(),
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
    for (i, t) in todo.iter_mut().enumerate() {
        t.at = vec![i];
    }
    let single = loaded.cubins.len() == 1;
    if !single {
        todo = twins_together(todo);
    }
    // the biggest cubins first, so that no long one starts last and runs alone; the report
    // keeps the library's order
    let mut order: Vec<usize> = (0..todo.len()).collect();
    let size = |t: &Todo| std::fs::metadata(&t.cubins[0].path).map_or(0, |m| m.len());
    order.sort_by_cached_key(|&i| std::cmp::Reverse(size(&todo[i])));
    // (one queue the workers take from in that order: rayon's halving would not keep it)
    let next = AtomicUsize::new(0);
    let mut judged: Vec<(usize, Result<Judged>)> = (0..rayon::current_num_threads())
        .into_par_iter()
        .flat_map_iter(|_| {
            std::iter::from_fn(|| {
                let &i = order.get(next.fetch_add(1, Ordering::Relaxed))?;
                let t = &todo[i];
                let r = judge_cubins(t, req, &loaded, filter.as_ref(), tc);
                let each: Vec<(usize, Result<Judged>)> = match r {
                    Ok(list) => t.at.iter().copied().zip(list.into_iter().map(Ok)).collect(),
                    Err(e) => vec![(t.at[0], Err(e))],
                };
                for c in &t.cubins {
                    progress.step(&c.name);
                }
                Some(each)
            })
            .flatten()
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
