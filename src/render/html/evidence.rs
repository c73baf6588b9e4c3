//! One variant's evidence in report.html: resources and occupancy with its limiter, the
//! attestation, the completion protocol, the build, and a collapsed excerpt of its SASS.

use crate::evidence::sass::{Attestation, SassEvidence, source_by_name};
use crate::results::VariantResult;
use maud::{Markup, html};

/// The movement and synchronisation classes whose forms the census lists.
const FORMS: [&str; 10] = [
    "UTMALDG",
    "UBLKCP",
    "LDGSTS",
    "LDGDEPBAR",
    "DEPBAR",
    "SYNCS",
    "ARRIVES",
    "BAR",
    "LDG",
    "STS",
];

pub fn variant(v: &VariantResult) -> Markup {
    let attestation = v.sass.as_ref().map(|s| &s.attestation);
    html! {
        details.variant {
            summary {
                strong { (v.name) } " - " (v.mechanism.name()) ", " (v.stages) " stage(s), tile " (v.tile) ", " (v.status.label())
                @if let Some(a) = attestation {
                    ", "
                    span class=[(!a.is_attested()).then_some("bad")] { (a.label()) }
                }
            }
            dl {
                @if let Some(res) = &v.resources {
                    @let f = &res.function;
                    @let o = &res.occupancy;
                    dt { "resources" }
                    dd { (res.threads) " threads per block, " (f.registers) " registers per thread, shared memory "
                         (f.static_smem) " B static + " (res.dynamic_smem) " B dynamic (slots: " (res.slot_footprint) " B), "
                         (f.local_bytes) " B local (spills), at most " (f.max_threads) " threads per block" }
                    dt { "occupancy" }
                    dd { (o.blocks_per_sm) " blocks (" (o.warps_per_sm) " warps) per SM, limited by " strong { (o.limiter.name()) }
                         "; blocks per SM allowed by registers " (o.by_registers) ", shared memory " (o.by_shared_memory)
                         " (" (o.smem_per_block) " B per block), threads " (o.by_threads) ", block slots " (o.by_block_slots)
                         "; the driver's calculator says " (res.driver_blocks_per_sm) }
                }
                @if let Some(s) = &v.sass {
                    dt { "attestation" }
                    dd { (attestation_text(&s.attestation)) }
                }
                @if let Some(m) = &v.math {
                    dt { "math" }
                    dd { (attestation_text(m)) }
                }
                dt { "completion" }
                dd { (v.completion) }
                @if let Some(b) = &v.build {
                    dt { "build" }
                    dd { (if b.cache_hit { "from the cubin cache" } else { "compiled" }) "; " code { (b.options.join(" ")) }
                         @if !b.log.trim().is_empty() { pre { (b.log) } } }
                }
                @if let Some(d) = &v.detail {
                    dt { "detail" }
                    dd { (d) }
                }
            }
            @if let Some(s) = &v.sass { (sass(&v.name, s)) }
        }
    }
}

fn attestation_text(a: &Attestation) -> String {
    match a {
        Attestation::Attested { evidence } => format!("attested: {evidence}"),
        Attestation::Mismatch { claimed, emitted } => {
            format!("NOT attested: claimed {claimed}, emitted {emitted}")
        }
        Attestation::Unverified { reason } => format!("unverified (not a pass): {reason}"),
    }
}

/// The census's movement forms and the annotated excerpt, collapsed.
fn sass(name: &str, s: &SassEvidence) -> Markup {
    let lines = s.excerpt.as_deref().map_or(0, |x| x.lines().count());
    html! {
        details.sass {
            summary { "SASS: " (s.tool.as_deref().unwrap_or("no disassembler"))
                @if lines > 0 { ", excerpt of " (lines) " lines" } }
            @if let Some(c) = &s.census {
                p { (c.kernel) ": " (c.total) " instructions; "
                    (FORMS.iter().flat_map(|b| c.forms(b)).collect::<Vec<_>>().join(", ")) }
            }
            @match &s.excerpt {
                Some(x) => {
                    p { "\">>\" marks the movement and synchronisation instructions; \"//##\" lines name the CUDA source line (the file by its name as compiled, the kernel's own)." }
                    pre.listing { @for l in x.lines().map(source_by_name) {
                        @if l.starts_with(">>") { span.mv { (l) } }
                        @else if l.trim_start().starts_with("//##") { span.src { (l) } }
                        @else { (l) }
                        "\n"
                    } }
                }
                None => p { "These results keep no SASS excerpt (recorded before tilepipe kept one, or no disassembler ran); "
                            code { "tilepipe sass " (name) } " prints the annotated listing." },
            }
        }
    }
}
