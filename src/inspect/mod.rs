//! `tilepipe inspect PATH`: a user's own kernel (a `.cu`, a cubin, a fatbinary or an executable
//! holding one) judged as tilepipe judges its own: per kernel, the census of movement and math
//! instructions and the mechanism they make, each claim ("claimed X, emitted Y") from --claim or
//! read from the kernel's name and source, the protocol checks, and the resources with the
//! occupancy of a launch shape. No GPU is needed.

pub mod checks;
pub mod claims;
pub mod flow;
pub mod input;
pub mod listing;
pub mod render;
pub mod usage;

use crate::evidence::sass::Census;
use crate::toolchain::Toolchain;
use crate::{Error, Result};
use checks::{Check, Status};
use claims::{Claim, Stated, Verdict};
use input::{Kind, Source, Target};
use listing::Kernel;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use usage::{Launch, Resources};

/// What the user asked for.
#[derive(Debug, Clone, Default)]
pub struct Request {
    pub path: PathBuf,
    /// --arch: what a `.cu` is compiled for, and which cubins of a binary are inspected.
    pub target: Option<Target>,
    /// -D NAME[=VALUE] and -I DIR, passed to NVRTC.
    pub defines: Vec<String>,
    pub includes: Vec<PathBuf>,
    /// Only the kernel of this name (mangled, or as demangled).
    pub kernel: Option<String>,
    /// The claim to attest instead of the ones read from names and source.
    pub claim: Option<Claim>,
    pub launch: Option<Launch>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    pub input: String,
    pub kind: Kind,
    /// How a `.cu` was compiled.
    pub compiled: Option<String>,
    pub kernels: Vec<KernelReport>,
    /// NVRTC's warnings, cubins that could not be read.
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KernelReport {
    /// The symbol, as in the SASS.
    pub name: String,
    /// Its readable form (demangled names only).
    pub display_name: String,
    pub arch: Option<String>,
    pub cubin: String,
    pub disassembler: String,
    pub instructions: u32,
    /// Movement and synchronisation instructions, form -> count.
    pub movement_census: BTreeMap<String, u32>,
    /// Math instructions, form -> count.
    pub math_census: BTreeMap<String, u32>,
    /// The copy mechanism in words.
    pub movement: String,
    /// The math units in words.
    pub math: String,
    pub claims: Vec<Verdict>,
    pub checks: Vec<Check>,
    pub resources: Resources,
}

impl KernelReport {
    pub fn contradicted(&self) -> usize {
        self.claims.iter().filter(|v| !v.attested).count()
    }

    pub fn hazards(&self) -> usize {
        self.checks
            .iter()
            .filter(|c| c.status == Status::Hazard)
            .count()
    }
}

impl Report {
    /// A claim contradicted or a protocol hazard found: the command's exit code is 1.
    pub fn failed(&self) -> bool {
        self.kernels
            .iter()
            .any(|k| k.contradicted() + k.hazards() > 0)
    }
}

const MOVEMENT: [&str; 23] = [
    "LDGSTS",
    "LDGDEPBAR",
    "DEPBAR",
    "ARRIVES",
    "UBLKCP",
    "UBLKRED",
    "UTMALDG",
    "UTMASTG",
    "UTMAREDG",
    "UTMAPF",
    "LDG",
    "STG",
    "LDS",
    "STS",
    "LDSM",
    "STSM",
    "LDL",
    "STL",
    "SYNCS",
    "BAR",
    "FENCE",
    "MEMBAR",
    "WARPGROUP",
];

const MATH: [&str; 18] = [
    "HMMA", "IMMA", "DMMA", "BMMA", "HGMMA", "IGMMA", "QGMMA", "BGMMA", "FFMA", "FMUL", "FADD",
    "HFMA2", "HMUL2", "HADD2", "DFMA", "DMUL", "DADD", "MUFU",
];

fn select(c: &Census, bases: &[&str]) -> BTreeMap<String, u32> {
    c.opcodes
        .iter()
        .filter(|(k, _)| bases.contains(&k.split('.').next().unwrap_or(k)))
        .map(|(k, n)| (k.clone(), *n))
        .collect()
}

/// Source lines by (file, line), read once: the compiled `.cu` as it was compiled, other files
/// only under the source's own folders.
struct Lines<'a> {
    source: Option<&'a Source>,
    files: HashMap<String, Option<Vec<String>>>,
}

impl Lines<'_> {
    fn line(&mut self, file: &str, line: u32) -> Option<String> {
        let source = self.source?;
        let text = self.files.entry(file.to_string()).or_insert_with(|| {
            let path = Path::new(file).canonicalize().ok()?;
            if path == source.path {
                return Some(source.text.lines().map(str::to_string).collect());
            }
            let inside = source
                .roots
                .iter()
                .filter_map(|r| r.canonicalize().ok())
                .any(|r| path.starts_with(r));
            inside
                .then(|| std::fs::read_to_string(&path).ok())
                .flatten()
                .map(|t| t.lines().map(str::to_string).collect())
        });
        text.as_ref()?.get(line.checked_sub(1)? as usize).cloned()
    }
}

fn claims_of(k: &Kernel, census: &Census, req: &Request, lines: &mut Lines) -> Vec<Verdict> {
    let stated: Vec<Stated> = match req.claim {
        Some(claim) => vec![Stated {
            claim,
            from: "--claim".into(),
        }],
        None => {
            let mut seen = std::collections::HashSet::new();
            let mut texts = Vec::new();
            for sl in k.sources.iter().flatten() {
                if !seen.insert(sl.clone()) {
                    continue;
                }
                if let Some(t) = lines.line(&sl.file, sl.line) {
                    texts.push((sl.to_string(), t));
                }
            }
            let mut s = claims::from_name(&k.function.name);
            for c in claims::from_source(texts.iter().map(|(a, t)| (a.clone(), t.as_str()))) {
                if !s.iter().any(|o| o.claim == c.claim) {
                    s.push(c);
                }
            }
            s
        }
    };
    stated.iter().map(|s| claims::attest(s, census)).collect()
}

/// A wgmma claim that ptxas serialised in this kernel (its compile log says so) is not the claim
/// a user makes: the MMAs wait for each other.
fn serialised(mut claims: Vec<Verdict>, log: &str, function: &str) -> Vec<Verdict> {
    if let Some(warning) = crate::evidence::sass::ptxas::wgmma_serialised(log, Some(function)) {
        for v in claims
            .iter_mut()
            .filter(|v| v.stated.claim == Claim::Wgmma && v.attested)
        {
            v.attested = false;
            v.emitted = format!("{}, serialised by ptxas: {warning}", v.emitted);
        }
    }
    claims
}

pub fn inspect(req: &Request, tc: &Toolchain) -> Result<Report> {
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
    };
    if !loaded.log.is_empty() {
        report.notes.push(format!("NVRTC: {}", loaded.log));
    }
    let mut lines = Lines {
        source: loaded.source.as_ref(),
        files: HashMap::new(),
    };
    let mut names: Vec<String> = Vec::new();
    let single = loaded.cubins.len() == 1;
    for cubin in &loaded.cubins {
        let (tool, listing) = match input::disassemble(&cubin.path, tc) {
            Ok(d) => d,
            Err(e) if !single => {
                report.notes.push(format!("{}: skipped: {e}", cubin.name));
                continue;
            }
            Err(e) => return Err(e),
        };
        let target = listing::target(&listing)
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
        for k in listing::kernels(&listing) {
            let display = claims::display_name(&k.function.name);
            names.push(display.clone());
            if req
                .kernel
                .as_ref()
                .is_some_and(|want| *want != k.function.name && *want != display)
            {
                continue;
            }
            let census = Census::of(&k.function);
            let cfg = flow::Cfg::of(&k);
            let mut resources = usage::resources(
                usage
                    .as_ref()
                    .ok()
                    .and_then(|u| u.get(&k.function.name).copied()),
                &census,
                target.as_ref().map(|t| t.arch),
                req.launch,
            );
            if let Err(why) = &usage {
                resources.note.get_or_insert_with(|| why.clone());
            }
            report.kernels.push(KernelReport {
                display_name: display,
                arch: target.as_ref().map(|t| t.name.clone()),
                cubin: cubin.name.clone(),
                disassembler: tool.clone(),
                instructions: census.total,
                movement_census: select(&census, &MOVEMENT),
                math_census: select(&census, &MATH),
                movement: claims::movement(&census),
                math: claims::math(&census),
                claims: serialised(
                    claims_of(&k, &census, req, &mut lines),
                    &loaded.log,
                    &k.function.name,
                ),
                checks: checks::all(&k, &cfg),
                resources,
                name: k.function.name.clone(),
            });
        }
    }
    if let (Some(want), true) = (&req.kernel, report.kernels.is_empty()) {
        names.sort();
        names.dedup();
        let shown: Vec<&str> = names.iter().take(30).map(String::as_str).collect();
        return Err(Error::InvalidArgument(format!(
            "no kernel named '{want}' in {} (allowed: {}{})",
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
