//! The run's two tables as rows of text, performance first (baseline first, speedups against it),
//! then the evidence; drawn for the terminal here, as GitHub tables, CSV and HTML elsewhere.

use super::{Perf, RunResults, Status, VariantResult};
use crate::bench::Timing;
use comfy_table::{Cell, CellAlignment, ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};

fn table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(header.to_vec());
    t
}

/// A terminal table; the columns in `right` (numbers) aligned right.
pub fn render<R: IntoIterator<Item = String>>(
    header: &[&str],
    right: &[usize],
    rows: impl IntoIterator<Item = R>,
) -> String {
    let mut t = table(header);
    for r in rows {
        t.add_row(r.into_iter().enumerate().map(|(i, s)| {
            let cell = Cell::new(s);
            if right.contains(&i) {
                cell.set_alignment(CellAlignment::Right)
            } else {
                cell
            }
        }));
    }
    t.to_string()
}

pub const PERFORMANCE_HEADER: [&str; 11] = [
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
];
/// The performance columns that hold one number.
pub const PERFORMANCE_RIGHT: [usize; 5] = [5, 7, 8, 9, 10];

fn num(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".to_string(), |x| format!("{x:.digits$}"))
}

/// A share of the copy ceiling; a kernel faster than the ceiling is said to be, never shown
/// as more than 100 % of a bound it is not bound by.
fn pct_of_copy(pct: Option<f64>) -> String {
    match pct {
        Some(x) if x > 100.0 => "above it".into(),
        x => num(x, 1),
    }
}

/// One row per variant that is not a control, baseline first, then the peers; "~" marks a
/// speedup within the spread of the two timings (noise).
pub fn performance_rows(r: &RunResults) -> Vec<[String; 11]> {
    let base = r.baseline().and_then(|b| b.timing.as_ref());
    r.variants
        .iter()
        .filter(|v| v.control.is_none())
        .map(|v| {
            let head = [
                v.name.clone(),
                v.mechanism.name().to_string(),
                v.stages.to_string(),
                v.bytes_per_copy.to_string(),
                v.status.label().to_string(),
            ];
            let base = base.filter(|_| v.name != "sync");
            joined(head, timed_cells(v.timing.as_ref(), v.perf.as_ref(), base))
        })
        .chain(r.peers.iter().map(|p| {
            // a peer names its tool and version where a variant names its mechanism
            let head = [
                p.name.clone(),
                format!(
                    "peer: {}",
                    p.version.as_deref().unwrap_or("version unknown")
                ),
                "-".into(),
                "-".into(),
                p.status.label().to_string(),
            ];
            joined(head, timed_cells(p.timing.as_ref(), p.perf.as_ref(), base))
        }))
        .collect()
}

/// A row: what was timed, then its timing columns.
fn joined(head: [String; 5], timed: [String; 6]) -> [String; 11] {
    let mut row: [String; 11] = Default::default();
    for (cell, v) in row.iter_mut().zip(head.into_iter().chain(timed)) {
        *cell = v;
    }
    row
}

/// The timing columns of one row: median, min..max, GB/s, % of copy, vs sync (marked "~" when
/// inside either side's min..max range of `base`), host submit.
fn timed_cells(tm: Option<&Timing>, p: Option<&Perf>, base: Option<&Timing>) -> [String; 6] {
    let noise = matches!((tm, base), (Some(t), Some(b)) if t.device.indistinguishable(&b.device));
    [
        num(tm.map(|t| t.device.median * 1e3), 1),
        tm.map_or("-".into(), |t| {
            format!("{:.1}..{:.1}", t.device.min * 1e3, t.device.max * 1e3)
        }),
        num(p.map(|p| p.gbps), 0),
        pct_of_copy(p.and_then(|p| p.pct_of_ceiling)),
        p.and_then(|p| p.speedup_vs_sync).map_or("-".into(), |x| {
            format!("{x:.3}{}", if noise { " ~" } else { "" })
        }),
        num(tm.map(|t| t.host_submit.median), 1),
    ]
}

pub fn performance(r: &RunResults) -> String {
    render(&PERFORMANCE_HEADER, &PERFORMANCE_RIGHT, performance_rows(r))
}

pub const EVIDENCE_HEADER: [&str; 9] = [
    "variant",
    "regs",
    "smem static+dyn",
    "local B",
    "blocks/SM (warps)",
    "limiter",
    "emitted",
    "attestation",
    "completion",
];

/// One row per variant with resources (those that were built and loaded).
pub fn evidence_rows(r: &RunResults) -> Vec<[String; 9]> {
    r.variants
        .iter()
        .filter_map(|v| Some((v, v.resources.as_ref()?)))
        .map(|(v, res)| {
            let o = &res.occupancy;
            let mut occ = format!("{} ({})", o.blocks_per_sm, o.warps_per_sm);
            if o.blocks_per_sm != res.driver_blocks_per_sm {
                occ += &format!(", driver says {}", res.driver_blocks_per_sm);
            }
            let census = v.sass.as_ref().and_then(|s| s.census.as_ref());
            [
                v.name.clone(),
                res.function.registers.to_string(),
                format!("{}+{}", res.function.static_smem, res.dynamic_smem),
                res.function.local_bytes.to_string(),
                occ,
                o.limiter.name().to_string(),
                census.map_or("-".into(), |c| c.movement_summary()),
                v.sass
                    .as_ref()
                    .map_or("-".into(), |s| s.attestation.label()),
                v.completion.clone(),
            ]
        })
        .collect()
}

pub fn evidence(r: &RunResults) -> String {
    render(&EVIDENCE_HEADER, &[], evidence_rows(r))
}

/// Variants and peers that did not pass, those faster than the copy ceiling, then timings taken
/// while the clocks moved.
pub fn problems(r: &RunResults) -> Vec<String> {
    let above = beyond_ceiling(r);
    let peers = r
        .peers
        .iter()
        .filter(|p| p.status != Status::Passed)
        .map(|p| {
            format!(
                "{} {} (peer): {}",
                p.status.label(),
                p.name,
                p.detail.as_deref().unwrap_or("(no detail)")
            )
        });
    r.variants
        .iter()
        .filter(|v| v.status != Status::Passed)
        .map(line)
        .chain(peers)
        .chain(above)
        .chain(clock_warnings(r))
        .collect()
}

/// "CLOCKS variant: what moved", per variant and peer whose clocks moved while it was timed.
pub fn clock_warnings(r: &RunResults) -> impl Iterator<Item = String> + '_ {
    let variants = r
        .variants
        .iter()
        .map(|v| (v.name.clone(), v.timing.as_ref()));
    let peers = r
        .peers
        .iter()
        .map(|p| (format!("{} (peer)", p.name), p.timing.as_ref()));
    variants.chain(peers).filter_map(|(name, t)| {
        let w = t?.clocks.as_ref()?.warning.as_ref()?;
        Some(format!("CLOCKS {name}: {w}"))
    })
}

fn line(v: &VariantResult) -> String {
    format!(
        "{} {}: {}",
        v.status.label(),
        v.name,
        v.detail.as_deref().unwrap_or("(no detail)")
    )
}

/// "ABOVE THE CEILING name: ..." for each variant or peer that moved its bytes faster than the copy
/// ceiling of the same run: the ceiling is then no bound for it, and the table says so.
fn beyond_ceiling(r: &RunResults) -> Vec<String> {
    let Some(c) = &r.ceiling else {
        return Vec::new();
    };
    let rows = r
        .variants
        .iter()
        .filter(|v| v.control.is_none())
        .map(|v| (v.name.as_str(), v.perf.as_ref()))
        .chain(r.peers.iter().map(|p| (p.name.as_str(), p.perf.as_ref())));
    rows.filter_map(|(name, p)| {
        let p = p?;
        (p.pct_of_ceiling? > 100.0).then(|| {
            format!(
                "ABOVE THE CEILING {name}: {:.0} GB/s, faster than the copy ceiling measured in this run ({:.0} GB/s by {}); that copy is no bound for it",
                p.gbps, c.gbps, c.kernel
            )
        })
    })
    .collect()
}
