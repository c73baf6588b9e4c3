//! What `tilepipe sass VARIANT` shows, for any workload: one variant (or control) built for an
//! architecture (the GPU's, or one named, without a GPU), its claim, the disassembler's census of
//! the movement classes, the attestation, the workload's math, the completion protocol and the
//! mbarrier initialisation check, the main loop's instructions a pass, the kernel's registers and
//! local memory (spills), beside the annotated listing.

use crate::Result;
use crate::arch::Arch;
use crate::engine::build;
use crate::evidence::sass::Census;
use crate::evidence::sass::{self, SassEvidence, attest, loops, parse, protocol};
use crate::gpu::cache::Cache;
use crate::inspect::{input, usage};
use crate::pipeline::Instrument;
use crate::toolchain::Toolchain;
use crate::workload::{Problem, Workload};

pub struct Inspection {
    pub header: String,
    pub evidence: SassEvidence,
    /// The cubin cache's warnings, for the caller to show.
    pub warnings: Vec<String>,
}

/// Builds the variant or control named `name` for `p` on `arch` and examines its SASS.
pub fn inspect<W: Workload>(
    w: &W,
    name: &str,
    p: &W::Problem,
    arch: Arch,
    cache: &Cache,
) -> Result<Inspection> {
    // as a run on `p` builds it (windows, narrower copies, split stores where the view needs them)
    let variant = w.fit(&crate::commands::probe::named(w, p.dtype(), name)?, &[p]);
    let refuse = |why: String| {
        Err(crate::Error::InvalidArgument(format!(
            "{}: {why}",
            variant.name
        )))
    };
    let min = variant.mechanism.min_sm();
    if arch.sm() < min {
        return refuse(format!(
            "{} needs sm_{min} or newer; this build is for {arch} (allowed: --arch sm_{min} and newer)",
            variant.mechanism.name()
        ));
    }
    if w.build(&variant, p, Instrument::CLEAN).arch_specific && arch.sm() != 90 {
        return refuse(format!(
            "it uses sm_90a's own instructions (wgmma, setmaxnreg); this build is for {arch} (allowed: --arch sm_90)"
        ));
    }
    let tc = Toolchain::discover();
    let nvrtc = crate::gpu::nvrtc::version().map(|(a, b)| format!("{a}.{b}"))?;
    let built = build::build(
        w,
        &variant,
        p,
        Instrument::CLEAN,
        (arch, &tc),
        &nvrtc,
        cache,
    )?;
    let entry = w.kernel().entry;
    let evidence = sass::examine(&built.cubin, &tc, entry, variant.claim())?;
    let mut header = format!(
        "{} {} ({} on {}, tile {}) for {arch}, NVRTC {nvrtc}{}\nclaim: {}\nattestation: {}\ncompletion: {}\n",
        w.name(),
        variant.name,
        variant.mechanism.name(),
        p.label(),
        w.tile_label(&variant, p),
        if built.cache_hit {
            ", cubin from cache"
        } else {
            ""
        },
        attest::describe(variant.claim()),
        evidence.attestation.label(),
        w.completion(&variant, p),
    );
    if let Some(m) = w.math(&variant, p, evidence.census.as_ref(), &built.log) {
        header.push_str(&format!("math: {}\n", m.label()));
    }
    let functions = parse::parse(&evidence.listing);
    if let Some(f) = functions.iter().find(|f| f.name == entry) {
        for v in [
            protocol::init_published(f),
            protocol::wgmma_retired(f, protocol::mma_lag(&built.options)),
            protocol::uniforms_written(f),
        ]
        .into_iter()
        .flatten()
        {
            header.push_str(&format!(
                "protocol: {}\n",
                v.unwrap_or_else(|e| format!("HAZARD: {e}"))
            ));
        }
    }
    if let Some(l) = functions
        .iter()
        .find(|f| f.name == entry)
        .and_then(|f| loops::main_loop(&evidence.listing, f))
    {
        header.push_str(&format!("main loop: {}\n", l.describe(8)));
    }
    header.push_str(&format!(
        "resources: {}\n",
        resources(&built.cubin, &tc, entry, evidence.census.as_ref())
    ));
    if let Some(c) = &evidence.census {
        header.push_str(&format!(
            "disassembler: {}\ncensus: {} instructions; {}\n",
            evidence.tool.as_deref().unwrap_or("-"),
            c.total,
            c.movement()
                .iter()
                .map(|(k, n)| format!("{k} {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        for b in [
            "LDGSTS", "UBLKCP", "UTMALDG", "LDG", "STS", "SYNCS", "DEPBAR", "LDL", "STL", "HGMMA",
            "HMMA",
        ] {
            let f = c.forms(b);
            if !f.is_empty() {
                header.push_str(&format!("  {b}: {}\n", f.join(", ")));
            }
        }
    }
    Ok(Inspection {
        header,
        evidence,
        warnings: built.cache_warnings,
    })
}

/// The kernel's registers, stack and local memory as `cuobjdump -res-usage` reads the cubin, and
/// its local loads and stores (spills, where the stack is not a declared array); what is unknown
/// says why.
fn resources(cubin: &[u8], tc: &Toolchain, entry: &str, census: Option<&Census>) -> String {
    let read = || -> std::result::Result<usage::Usage, String> {
        let text = sass::with_cubin_file(cubin, |path| input::res_usage(path, tc))
            .map_err(|e| e.to_string())??;
        usage::parse(&text)
            .get(entry)
            .copied()
            .ok_or_else(|| format!("cuobjdump -res-usage names no {entry}"))
    };
    let spills = census.map_or_else(
        || "LDL and STL unknown (no disassembler)".to_string(),
        |c| format!("LDL {}, STL {}", c.count("LDL"), c.count("STL")),
    );
    match read() {
        Ok(u) => format!(
            "{} registers a thread, {} B stack, {} B local, {} B static shared; {spills}",
            u.registers, u.stack, u.local, u.static_smem
        ),
        Err(why) => format!("unknown ({why}); {spills}"),
    }
}
