//! The inspect report as text for a terminal (the flagged kernels in a table first, then what
//! each was found to do) and as JSON for scripts.

mod kernel;
mod table;
mod triton;

use super::checks::Status;
use super::{KernelReport, Report};
use std::fmt::Write;

pub fn json(r: &Report) -> String {
    serde_json::to_string_pretty(r).expect("the report is plain data")
}

/// Kernels shown in full even when none is flagged.
const SHOWN: usize = 8;

/// The totals: kernels judged, cubins left out, claims and checks, per copy mechanism.
pub fn totals(r: &Report) -> String {
    let ks = &r.kernels;
    let sum = |f: &dyn Fn(&KernelReport) -> usize| ks.iter().map(f).sum::<usize>();
    let mut left = Vec::new();
    if r.skipped_by_arch > 0 {
        left.push(format!("{} not for --arch", r.skipped_by_arch));
    }
    if r.skipped_by_kernel > 0 {
        left.push(format!("{} without a --kernel match", r.skipped_by_kernel));
    }
    if !r.unreadable.is_empty() {
        left.push(format!("{} unreadable", r.unreadable.len()));
    }
    let mut out = format!(
        "{} kernel(s) judged from {} cubin(s){}: {} claim(s) contradicted, {} protocol hazard(s), {} undecided",
        ks.len(),
        r.cubins,
        if left.is_empty() {
            String::new()
        } else {
            format!(
                " ({} left out: {})",
                r.skipped_by_arch + r.skipped_by_kernel + r.unreadable.len(),
                left.join(", ")
            )
        },
        sum(&|k| k.contradicted()),
        sum(&|k| k.hazards()),
        sum(&|k| k.with_status(Status::Undecided)),
    );
    for mech in ["cp.async", "bulk", "TMA"] {
        let with: Vec<&KernelReport> = ks.iter().filter(|k| k.copies().contains(&mech)).collect();
        if !with.is_empty() {
            let hazard = with.iter().filter(|k| k.hazards() > 0).count();
            let undecided = with
                .iter()
                .filter(|k| k.hazards() == 0 && k.with_status(Status::Undecided) > 0)
                .count();
            let _ = write!(
                out,
                "\n  {mech} kernels: {} ({hazard} with a hazard, {undecided} undecided)",
                with.len()
            );
        }
    }
    out
}

pub fn text(r: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}: {}", r.input, r.kind.describe());
    if let Some(c) = &r.compiled {
        let _ = writeln!(out, "compiled by {c}");
    }
    for n in &r.notes {
        let _ = writeln!(out, "note: {n}");
    }
    for u in &r.unreadable {
        let _ = writeln!(out, "unreadable: {}: {}", u.cubin, u.reason);
    }
    let from_triton: Vec<&KernelReport> = r.kernels.iter().filter(|k| k.triton.is_some()).collect();
    if !from_triton.is_empty() {
        out.push('\n');
        out.push_str(&triton::table(&from_triton));
    }
    let flagged: Vec<&KernelReport> = r.kernels.iter().filter(|k| k.flagged()).collect();
    if !flagged.is_empty() {
        out.push('\n');
        out.push_str(&table::flagged(&flagged));
    }
    let all = r.kernels.len() <= SHOWN;
    for k in r
        .kernels
        .iter()
        .filter(|k| all || k.flagged())
        .take(table::ROWS)
    {
        out.push('\n');
        kernel::kernel(&mut out, k);
    }
    if !all {
        let _ = writeln!(
            out,
            "\n{} kernel(s) not flagged are not shown one by one (--format json has them all)",
            r.kernels.len() - flagged.len()
        );
    }
    let _ = writeln!(out, "\n{}", totals(r));
    out
}
