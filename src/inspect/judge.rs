//! One kernel judged: its census in the movement and math families, the mechanism in words,
//! the stages its loops keep in flight, each claim attested or contradicted (not judged on an
//! empty stub), the protocol checks over its feasible paths and its resources (with the launch
//! Triton's metadata describes, for a Triton kernel).

use super::claims::{self, Claim, Stated, Verdict};
use super::input::{Source, Target};
use super::listing::Kernel;
use super::report::KernelReport;
use super::stages::{self, Depth};
use super::triton::Meta;
use super::usage::{self, Launch, Usage};
use super::{checks, flow, mechanism, names};
use crate::evidence::sass::Census;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// Movement and synchronisation: Blackwell's with the rest (the TMA unit's command flush and
/// cache control, tcgen05's tensor-memory loads, stores, copies, commits and allocation).
const MOVEMENT: [&str; 33] = [
    "LDGSTS",
    "LDGDEPBAR",
    "DEPBAR",
    "ARRIVES",
    "UBLKCP",
    "UBLKRED",
    "UBLKPF",
    "UTMALDG",
    "UTMASTG",
    "UTMAREDG",
    "UTMAPF",
    "UTMACCTL",
    "UTMACMDFLUSH",
    "LDG",
    "STG",
    "LDS",
    "STS",
    "LDSM",
    "STSM",
    "LDL",
    "STL",
    "LDTM",
    "STTM",
    "UTCCP",
    "UTCBAR",
    "UTCATOMSWS",
    "SYNCS",
    "BAR",
    "FENCE",
    "MEMBAR",
    "WARPGROUP",
    "UCGABAR_ARV",
    "UCGABAR_WAIT",
];

const MATH: [&str; 28] = [
    "HMMA", "IMMA", "DMMA", "BMMA", "QMMA", "OMMA", "HGMMA", "IGMMA", "QGMMA", "BGMMA", "UTCHMMA",
    "UTCQMMA", "UTCIMMA", "UTCOMMA", "UTCMMA", "FFMA", "FMUL", "FADD", "FFMA2", "FMUL2", "FADD2",
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
pub struct Lines<'a> {
    source: Option<&'a Source>,
    files: HashMap<String, Option<Vec<String>>>,
}

impl<'a> Lines<'a> {
    pub fn new(source: Option<&'a Source>) -> Lines<'a> {
        Lines {
            source,
            files: HashMap::new(),
        }
    }

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

/// The claims: Triton's stages, then --claim alone, or else the metadata's mechanism, the
/// name's and the source's.
fn stated(
    k: &Kernel,
    claim: Option<Claim>,
    triton: Option<&Meta>,
    lines: &mut Lines,
) -> Vec<Stated> {
    let (staged, meta): (Vec<Stated>, Vec<Stated>) = triton
        .map(Meta::claims)
        .unwrap_or_default()
        .into_iter()
        .partition(|s| matches!(s.claim, Claim::Stages { .. }));
    if let Some(claim) = claim {
        let given = Stated {
            claim,
            from: "--claim".into(),
            arch: None,
        };
        return staged.into_iter().chain([given]).collect();
    }
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
    let mut s = staged;
    let read = claims::from_name(&k.function.name)
        .into_iter()
        .chain(claims::from_source(
            texts.iter().map(|(a, t)| (a.clone(), t.as_str())),
        ));
    for c in meta.into_iter().chain(read) {
        if !s.iter().any(|o| o.claim == c.claim) {
            s.push(c);
        }
    }
    s
}

/// A wgmma claim that ptxas serialised in this kernel (its compile log says so) is not the claim
/// a user makes: the MMAs wait for each other.
fn serialised(mut claims: Vec<Verdict>, log: &str, function: &str) -> Vec<Verdict> {
    if let Some(warning) = crate::evidence::sass::ptxas::wgmma_serialised(log, Some(function)) {
        for v in claims
            .iter_mut()
            .filter(|v| v.stated.claim == Claim::Wgmma && v.attested())
        {
            v.outcome = claims::Outcome::Contradicted;
            v.emitted = format!("{}, serialised by ptxas: {warning}", v.emitted);
        }
    }
    claims
}

/// Where a kernel comes from and what the request asks of it.
pub struct Context<'a> {
    pub cubin: &'a str,
    pub tool: &'a str,
    pub target: Option<&'a Target>,
    pub usage: std::result::Result<&'a HashMap<String, Usage>, &'a str>,
    pub claim: Option<Claim>,
    pub launch: Option<Launch>,
    pub log: &'a str,
    /// Triton's metadata of the cubin.
    pub triton: Option<&'a Meta>,
}

/// What a kernel's instructions alone tell: the same in every cubin that holds them.
pub struct Analysis {
    census: Census,
    /// The stages its loops keep in flight and its protocol checks, or why it is a stub with
    /// nothing to judge.
    body: std::result::Result<(Depth, Vec<checks::Check>), String>,
}

pub fn analyse(k: &Kernel) -> Analysis {
    let census = Census::of(&k.function);
    let body = match mechanism::stub(&census) {
        Some(why) => Err(why),
        None => {
            let cfg = flow::Cfg::of(k);
            Ok((stages::depth(k, &cfg), checks::all(k, &cfg)))
        }
    };
    Analysis { census, body }
}

/// The kernel's report in the cubin `cx` names, from its analysis.
pub fn kernel(k: &Kernel, a: &Analysis, cx: &Context, lines: &mut Lines) -> KernelReport {
    let census = &a.census;
    let name = &k.function.name;
    let mut resources = usage::resources(
        cx.usage.ok().and_then(|u| u.get(name).copied()),
        census,
        cx.target.map(|t| t.arch),
        cx.launch.or(cx.triton.map(Meta::launch)),
    );
    if let Err(why) = cx.usage {
        resources.note.get_or_insert_with(|| why.to_string());
    }
    let said = stated(k, cx.claim, cx.triton, lines);
    let verdicts = match &a.body {
        Err(why) => said.iter().map(|s| Verdict::not_judged(s, why)).collect(),
        Ok((depth, _)) => {
            // what the kernel claims of itself is judged on the builds that can emit it; a
            // --claim is the user's about this very build
            let read = cx.target.filter(|_| cx.claim.is_none());
            let judge = |s: &Stated| match read.and_then(|t| claims::beyond(s, t)) {
                Some(why) => Verdict::not_judged(s, &why),
                None => claims::attest(s, census, depth),
            };
            serialised(said.iter().map(judge).collect(), cx.log, name)
        }
    };
    KernelReport {
        id: format!("{}:{name}", cx.cubin),
        display_name: names::display_name(name),
        demangled: names::demangle(name),
        arch: cx.target.map(|t| t.name.clone()),
        cubin: cx.cubin.to_string(),
        disassembler: cx.tool.to_string(),
        instructions: census.total,
        movement_census: select(census, &MOVEMENT),
        math_census: select(census, &MATH),
        movement: mechanism::movement(census),
        math: mechanism::math(census),
        stub: a.body.as_ref().err().cloned(),
        stages: a.body.as_ref().ok().map(|(d, _)| d.clone()),
        claims: verdicts,
        checks: a.body.as_ref().map(|(_, c)| c.clone()).unwrap_or_default(),
        resources,
        triton: cx.triton.cloned(),
        name: name.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Forms from sgl-kernel 0.3.21's sm100 `common_ops` (sm_100a and sm_120a builds).
    #[test]
    fn blackwell_families_are_in_the_census() {
        let forms = [
            "UTMACMDFLUSH",
            "UTMALDG.3D.MULTICAST.2CTA",
            "UTCATOMSWS.2CTA.FIND_AND_SET.ALIGN",
            "UTCCP.T.S.2CTA.4x32dp128bit",
            "LDTM.16dp256bit.x8",
            "STTM.x32",
            "UTCBAR.2CTA.MULTICAST",
            "UTCQMMA.2CTA",
            "UTCOMMA.4X",
            "FMUL2",
            "FADD2",
            "QMMA.16832.F32.E4M3.E4M3",
            "OMMA.SF.16864.F32.E2M1.E2M1.UE4M3.4X",
            "IMAD.WIDE",
        ];
        let c = Census {
            kernel: "k".into(),
            total: forms.len() as u32,
            opcodes: forms.iter().map(|f| (f.to_string(), 1)).collect(),
        };
        let (movement, math) = (select(&c, &MOVEMENT), select(&c, &MATH));
        assert_eq!(movement.len(), 7, "{movement:?}");
        assert_eq!(math.len(), 6, "{math:?}");
        assert!(!movement.contains_key("IMAD.WIDE") && !math.contains_key("IMAD.WIDE"));
    }
}
