//! A run's tables as rows of text, whichever workload: performance first (the vendor library
//! first where there is one, then the baseline and the variants, then the peers), then the
//! evidence, then the workload's ladder where it has one; drawn for the terminal here, as GitHub
//! tables, CSV and HTML elsewhere.

use super::clock_notes::{RatioClocks, ceiling_column, clock_notes, ratio_clocks};
use crate::results::{Bound, Peer, Perf, RunResults, Status, Timing, VariantResult};
use comfy_table::{Cell, CellAlignment, ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};

/// How wide the terminal tables are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Width {
    /// Within `COMPACT_COLUMNS`: the columns a reader needs first, long cells wrapped inside
    /// their column (never cut).
    Compact,
    /// Every column, wrapped only to a terminal's own width.
    Wide,
}

/// The widest a compact table is drawn, in terminal columns.
pub const COMPACT_COLUMNS: u16 = 160;

/// A terminal table; the columns in `right` (numbers) aligned right.
pub fn render<R: IntoIterator<Item = String>>(
    header: &[&str],
    right: &[usize],
    rows: impl IntoIterator<Item = R>,
) -> String {
    render_at(header, right, rows, Width::Wide)
}

/// `render` at `width`: a compact table wraps its cells to fit `COMPACT_COLUMNS`.
pub fn render_at<R: IntoIterator<Item = String>>(
    header: &[&str],
    right: &[usize],
    rows: impl IntoIterator<Item = R>,
    width: Width,
) -> String {
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED)
        .set_header(header.to_vec());
    match width {
        Width::Compact => t
            .set_content_arrangement(ContentArrangement::Dynamic)
            .set_width(COMPACT_COLUMNS),
        Width::Wide => t.set_content_arrangement(ContentArrangement::Dynamic),
    };
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

/// The columns of `header` a compact table keeps (all of them but `dropped`), for `project`.
fn kept(header: &[String], dropped: &[&str]) -> Vec<usize> {
    (0..header.len())
        .filter(|&i| !dropped.contains(&header[i].as_str()))
        .collect()
}

/// `render_at` of the columns `keep` of `header`, `right` and `rows`.
fn project<const N: usize>(
    header: &[String],
    right: &[usize],
    rows: Vec<[String; N]>,
    keep: &[usize],
    width: Width,
) -> String {
    let h: Vec<&str> = keep.iter().map(|&i| header[i].as_str()).collect();
    let r: Vec<usize> = (0..keep.len())
        .filter(|j| right.contains(&keep[*j]))
        .collect();
    let rows = rows
        .into_iter()
        .map(|row| keep.iter().map(|&i| row[i].clone()).collect::<Vec<_>>());
    render_at(&h, &r, rows, width)
}

/// The performance table's header: the run's metric (GB/s for a memory-bound workload, TFLOP/s
/// for a compute-bound one) and its ceiling (the copy, or the vendor library) name two columns.
pub fn performance_header<P>(r: &RunResults<P>) -> [String; 13] {
    let metric = match r.workload.bound {
        Bound::Memory => "GB/s",
        Bound::Compute => "TFLOP/s",
    };
    [
        "variant".into(),
        "mechanism".into(),
        "tile".into(),
        "stages".into(),
        "B/copy".into(),
        "status".into(),
        "device median us".into(),
        "min..max us".into(),
        metric.into(),
        ceiling_column(r),
        "vs sync".into(),
        "vs regprefetch".into(),
        "host submit us".into(),
    ]
}

/// The performance columns that hold one number.
pub const PERFORMANCE_RIGHT: [usize; 7] = [3, 6, 8, 9, 10, 11, 12];

fn num(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".to_string(), |x| format!("{x:.digits$}"))
}

/// A share of the ceiling. Above the copy ceiling a kernel is said to be, never shown as more
/// than 100 % of a bound it is not bound by; the vendor library's share taken at one clock where
/// there is one, else a share at other clocks than the ceiling's is marked `*` (`clock_notes`
/// says why).
fn pct(r_bound: Bound, p: Option<&Perf>, unequal: bool) -> String {
    let Some(p) = p else { return "-".into() };
    if let Some(m) = &p.matched {
        return format!("{:.1}", m.pct);
    }
    match (r_bound, p.pct_of_ceiling) {
        (Bound::Memory, Some(x)) if x > 100.0 => "above it".into(),
        (_, Some(x)) if unequal => format!("{x:.1}*"),
        (_, x) => num(x, 1),
    }
}

/// One row per variant that is not a control, baseline first, after the vendor library where
/// the run has one, then the peers; "~" marks a speedup within the spread of the two timings.
pub fn performance_rows<P>(r: &RunResults<P>) -> Vec<[String; 13]> {
    let base = r.baseline().and_then(|b| b.timing.as_ref());
    let bound = r.workload.bound;
    let peer_row = |p: &Peer| {
        let head = [
            p.name.clone(),
            format!(
                "peer: {}",
                p.version.as_deref().unwrap_or("version unknown")
            ),
            "-".into(),
            "-".into(),
            "-".into(),
            p.status.label().to_string(),
        ];
        let clocks = ratio_clocks(r, p.timing.as_ref(), p.perf.as_ref());
        joined(
            head,
            timed_cells(bound, p.timing.as_ref(), p.perf.as_ref(), base, &clocks),
        )
    };
    r.vendor
        .iter()
        .map(peer_row)
        .chain(r.variants.iter().filter(|v| v.control.is_none()).map(|v| {
            let head = [
                v.name.clone(),
                v.mechanism.name().to_string(),
                v.tile.clone(),
                v.stages.to_string(),
                bytes_per_copy(v),
                v.status.label().to_string(),
            ];
            let base = base.filter(|_| !(v.mechanism == crate::pipeline::Mechanism::Sync));
            let clocks = ratio_clocks(r, v.timing.as_ref(), v.perf.as_ref());
            joined(
                head,
                timed_cells(bound, v.timing.as_ref(), v.perf.as_ref(), base, &clocks),
            )
        }))
        .chain(r.peers.iter().map(peer_row))
        .collect()
}

/// What one copy instruction moves: its bytes, or "box" for a TMA copy recorded without them (a
/// tensor-map box, whose size is the kernel's, per operand).
pub fn bytes_per_copy(v: &VariantResult) -> String {
    match (v.mechanism, v.bytes_per_copy) {
        (crate::pipeline::Mechanism::Tma, 0) => "box".into(),
        (_, b) => b.to_string(),
    }
}

/// A row: what was timed, then its timing columns.
fn joined(head: [String; 6], timed: [String; 7]) -> [String; 13] {
    let mut row: [String; 13] = Default::default();
    for (cell, v) in row.iter_mut().zip(head.into_iter().chain(timed)) {
        *cell = v;
    }
    row
}

/// The timing columns of one row: median, min..max, the metric, % of the ceiling, vs sync (marked
/// "~" when inside either side's min..max range of `base`), vs regprefetch, host submit; a ratio
/// taken at unequal `clocks` marked `*`.
fn timed_cells(
    bound: Bound,
    tm: Option<&Timing>,
    p: Option<&Perf>,
    base: Option<&Timing>,
    clocks: &RatioClocks,
) -> [String; 7] {
    let noise = matches!((tm, base), (Some(t), Some(b)) if t.device.indistinguishable(&b.device));
    let metric = match bound {
        Bound::Memory => num(p.map(|p| p.gbps), 0),
        Bound::Compute => num(p.and_then(|p| p.tflops), 1),
    };
    [
        num(tm.map(|t| t.device.median * 1e3), 1),
        tm.map_or("-".into(), |t| {
            format!("{:.1}..{:.1}", t.device.min * 1e3, t.device.max * 1e3)
        }),
        metric,
        pct(bound, p, clocks.ceiling.is_some()),
        p.and_then(|p| p.speedup_vs_sync).map_or("-".into(), |x| {
            format!(
                "{x:.3}{}{}",
                if noise { " ~" } else { "" },
                if clocks.sync.is_some() { "*" } else { "" }
            )
        }),
        num(p.and_then(|p| p.speedup_vs_regprefetch), 3),
        num(tm.map(|t| t.host_submit.median), 1),
    ]
}

/// The performance columns a compact table leaves to the wide one: the mechanism (the variant's
/// name says it), the second baseline's ratio and the host submission time (the legend and the
/// wide table keep it apart from device time).
const PERFORMANCE_WIDE_ONLY: [&str; 3] = ["mechanism", "vs regprefetch", "host submit us"];

pub fn performance<P>(r: &RunResults<P>, width: Width) -> String {
    let header = performance_header(r);
    let keep = match width {
        Width::Compact => kept(&header, &PERFORMANCE_WIDE_ONLY),
        Width::Wide => (0..header.len()).collect(),
    };
    project(
        &header,
        &PERFORMANCE_RIGHT,
        performance_rows(r),
        &keep,
        width,
    )
}

pub const EVIDENCE_HEADER: [&str; 11] = [
    "variant",
    "regs",
    "smem static+dyn",
    "local B",
    "checking build",
    "blocks/SM (warps)",
    "limiter",
    "emitted",
    "attestation",
    "math",
    "completion",
];

/// One row per variant with resources (those that were built and loaded).
pub fn evidence_rows<P>(r: &RunResults<P>) -> Vec<[String; 11]> {
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
                v.checking.map_or("-".into(), |c| {
                    format!(
                        "{} regs, {} B static, {} B local",
                        c.registers, c.static_smem, c.local_bytes
                    )
                }),
                occ,
                o.limiter.name().to_string(),
                census.map_or("-".into(), |c| c.movement_summary()),
                v.sass
                    .as_ref()
                    .map_or("-".into(), |s| s.attestation.label()),
                v.math.as_ref().map_or("-".into(), |m| m.label()),
                v.completion.clone(),
            ]
        })
        .collect()
}

/// The evidence columns a compact table leaves to the wide one: the checking build's resources
/// and the completion protocol in words (report.html and the JSON keep both too).
const EVIDENCE_WIDE_ONLY: [&str; 2] = ["checking build", "completion"];

pub fn evidence<P>(r: &RunResults<P>, width: Width) -> String {
    let header: Vec<String> = EVIDENCE_HEADER.iter().map(|h| h.to_string()).collect();
    let keep = match width {
        Width::Compact => kept(&header, &EVIDENCE_WIDE_ONLY),
        Width::Wide => (0..header.len()).collect(),
    };
    project(&header, &[], evidence_rows(r), &keep, width)
}

pub const LADDER_HEADER: [&str; 4] = ["step", "best variant", "figure", "over the step before"];
pub const LADDER_RIGHT: [usize; 2] = [2, 3];

/// The workload's ladder as this run measured it: per step the fastest timed variant and its gain
/// over the step before. Empty when the workload has none or none of its steps was timed.
pub fn ladder_rows<P>(r: &RunResults<P>) -> Vec<[String; 4]> {
    let mut before: Option<f64> = None;
    r.ladder
        .iter()
        .map(|s| {
            let row = [
                s.step.clone(),
                s.variant.clone(),
                format!("{:.1} {}", s.figure, s.unit),
                before.map_or("-".into(), |b| format!("{:.2}x", s.figure / b)),
            ];
            before = Some(s.figure);
            row
        })
        .collect()
}

/// Variants and peers that did not pass, why a ratio is starred, those faster than the copy
/// ceiling, then timings taken while the clocks moved.
pub fn problems<P>(r: &RunResults<P>) -> Vec<String> {
    let peers = r
        .vendor
        .iter()
        .chain(&r.peers)
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
        .chain(clock_notes(r))
        .chain(beyond_ceiling(r))
        .chain(clock_warnings(r))
        .collect()
}

/// "CLOCKS variant: what moved", per variant and peer whose clocks moved while it was timed.
pub fn clock_warnings<P>(r: &RunResults<P>) -> impl Iterator<Item = String> + '_ {
    let variants = r
        .variants
        .iter()
        .map(|v| (v.name.clone(), v.timing.as_ref()));
    let peers = r
        .vendor
        .iter()
        .chain(&r.peers)
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
fn beyond_ceiling<P>(r: &RunResults<P>) -> Vec<String> {
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
