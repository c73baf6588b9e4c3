//! A Triton cache's kernels in one table: what each asked for (num_stages, tensor descriptors),
//! the stages and copies its SASS has, and what a block costs on an SM.

use crate::inspect::KernelReport;
use comfy_table::{ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};

/// The copy instructions: the asynchronous ones by mechanism, else the synchronous loads.
fn copies(k: &KernelReport) -> String {
    let asynchronous = k.copies();
    if !asynchronous.is_empty() {
        return asynchronous.join(", ");
    }
    let has = |b: &str| {
        k.movement_census
            .keys()
            .any(|f| f.split('.').next() == Some(b))
    };
    match (has("LDG"), has("STS")) {
        (true, true) => "LDG + STS".into(),
        (true, false) => "LDG only".into(),
        _ => "-".into(),
    }
}

/// "2 (registers)": resident blocks per SM and their limiter, or "-" when unknown.
fn occupancy(k: &KernelReport) -> String {
    match k.resources.occupancy {
        Some(o) if o.blocks_per_sm > 0 => format!("{} ({})", o.blocks_per_sm, o.limiter.name()),
        Some(_) => "0 (does not fit)".into(),
        None => "-".into(),
    }
}

pub fn table(ks: &[&KernelReport]) -> String {
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header([
            "kernel",
            "num_stages",
            "stages kept",
            "copies",
            "shared B",
            "registers",
            "blocks/SM (limiter)",
        ]);
    for k in ks.iter().take(super::table::ROWS) {
        let Some(m) = &k.triton else { continue };
        let static_smem = k.resources.usage.map_or(0, |u| u.static_smem);
        t.add_row([
            k.cubin.clone(),
            format!(
                "{}{}",
                m.num_stages,
                if m.descriptors() > 0 { ", TMA" } else { "" }
            ),
            k.stages
                .as_ref()
                .and_then(|d| d.stages)
                .map_or("undecided".into(), |n| n.to_string()),
            copies(k),
            (m.shared + static_smem).to_string(),
            k.resources
                .usage
                .map_or("-".into(), |u| u.registers.to_string()),
            occupancy(k),
        ]);
    }
    let mut out = format!("{} Triton kernel(s)\n{t}\n", ks.len());
    if ks.len() > super::table::ROWS {
        out.push_str(&format!(
            "and {} more (--format json has them all)\n",
            ks.len() - super::table::ROWS
        ));
    }
    out
}
