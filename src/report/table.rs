//! Terminal tables: performance first (baseline first, speedups against it), then the evidence.

use super::{RunResults, Status, VariantResult};
use comfy_table::{Cell, CellAlignment, ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};

pub(crate) fn table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(header.to_vec());
    t
}

fn num(v: Option<f64>, digits: usize) -> Cell {
    Cell::new(v.map_or("-".to_string(), |x| format!("{x:.digits$}")))
        .set_alignment(CellAlignment::Right)
}

/// Baseline first, with speedups against it; "~" marks a speedup within the spread of the two
/// timings (noise).
pub fn performance(r: &RunResults) -> String {
    let mut t = table(&[
        "variant",
        "mechanism",
        "stages",
        "B/copy",
        "status",
        "device median us",
        "min..max us",
        "GB/s",
        "% of copy",
        "vs sync",
        "host submit us",
    ]);
    let base = r.baseline().and_then(|b| b.timing.as_ref());
    for v in r.variants.iter().filter(|v| v.control.is_none()) {
        let tm = v.timing.as_ref();
        let p = v.perf.as_ref();
        // a difference inside either side's min..max range is noise, and said so
        let noise =
            matches!((tm, base), (Some(t), Some(b)) if t.device.indistinguishable(&b.device));
        t.add_row(vec![
            Cell::new(&v.name),
            Cell::new(v.mechanism.name()),
            Cell::new(v.stages),
            Cell::new(v.bytes_per_copy),
            Cell::new(v.status.label()),
            num(tm.map(|t| t.device.median * 1e3), 1),
            Cell::new(tm.map_or("-".into(), |t| {
                format!("{:.1}..{:.1}", t.device.min * 1e3, t.device.max * 1e3)
            })),
            num(p.map(|p| p.gbps), 0),
            num(p.and_then(|p| p.pct_of_ceiling), 1),
            Cell::new(p.and_then(|p| p.speedup_vs_sync).map_or("-".into(), |x| {
                format!(
                    "{x:.3}{}",
                    if noise && !v.name.eq("sync") {
                        " ~"
                    } else {
                        ""
                    }
                )
            }))
            .set_alignment(CellAlignment::Right),
            num(tm.map(|t| t.host_submit.median), 1),
        ]);
    }
    t.to_string()
}

pub fn evidence(r: &RunResults) -> String {
    let mut t = table(&[
        "variant",
        "regs",
        "smem static+dyn",
        "local B",
        "blocks/SM (warps)",
        "limiter",
        "emitted",
        "attestation",
        "completion",
    ]);
    for v in r.variants.iter().filter(|v| v.resources.is_some()) {
        let res = v.resources.as_ref().expect("filtered");
        let o = &res.occupancy;
        let occ = if o.blocks_per_sm == res.driver_blocks_per_sm {
            format!("{} ({})", o.blocks_per_sm, o.warps_per_sm)
        } else {
            format!(
                "{} ({}), driver says {}",
                o.blocks_per_sm, o.warps_per_sm, res.driver_blocks_per_sm
            )
        };
        let (emitted, attestation) =
            v.sass
                .as_ref()
                .map_or(("-".to_string(), "-".to_string()), |s| {
                    (
                        s.census
                            .as_ref()
                            .map_or("-".into(), |c| c.movement_summary()),
                        s.attestation.label(),
                    )
                });
        t.add_row(vec![
            Cell::new(&v.name),
            Cell::new(res.function.registers),
            Cell::new(format!("{}+{}", res.function.static_smem, res.dynamic_smem)),
            Cell::new(res.function.local_bytes),
            Cell::new(occ),
            Cell::new(o.limiter.name()),
            Cell::new(emitted),
            Cell::new(attestation),
            Cell::new(&v.completion),
        ]);
    }
    t.to_string()
}

/// Lines for variants that were skipped, failed or errored, with the reason.
/// Variants that did not pass, then timings taken while the clocks moved.
pub fn problems(r: &RunResults) -> Vec<String> {
    let clock_warnings = r.variants.iter().filter_map(|v| {
        let w = v.timing.as_ref()?.clocks.as_ref()?.warning.as_ref()?;
        Some(format!("CLOCKS {}: {w}", v.name))
    });
    r.variants
        .iter()
        .filter(|v| v.status != Status::Passed)
        .map(line)
        .chain(clock_warnings)
        .collect()
}

fn line(v: &VariantResult) -> String {
    format!(
        "{} {}: {}",
        v.status.label(),
        v.name,
        v.detail.as_deref().unwrap_or("(no detail)")
    )
}
