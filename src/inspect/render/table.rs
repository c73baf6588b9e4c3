//! The flagged kernels in one table: what each copies with, its claims and its checks.

use crate::inspect::KernelReport;
use crate::inspect::checks::Status;
use crate::inspect::claims::Outcome;
use comfy_table::{ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};

/// Rows (and kernels shown in full) at most; JSON has the rest.
pub const ROWS: usize = 60;

fn short(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n - 1).collect::<String>())
    }
}

fn checks(k: &KernelReport) -> String {
    let mut parts: Vec<String> = k
        .checks
        .iter()
        .filter(|c| matches!(c.status, Status::Hazard | Status::Undecided))
        .map(|c| {
            let at = c
                .findings
                .first()
                .and_then(|f| f.sites.last())
                .map(|s| format!(" at {:#06x}", s.offset))
                .unwrap_or_default();
            format!("{} {}{at}", c.status.label(), c.name)
        })
        .collect();
    if parts.is_empty() {
        parts.push("-".into());
    }
    parts.join("; ")
}

fn claims(k: &KernelReport) -> String {
    let with = |o: Outcome| -> Vec<String> {
        k.claims
            .iter()
            .filter(|v| v.outcome == o)
            .map(|v| format!("claimed {}", v.stated.claim.short()))
            .collect()
    };
    let (bad, open) = (with(Outcome::Contradicted), with(Outcome::Undecided));
    let mut parts = Vec::new();
    if !bad.is_empty() {
        parts.push(format!("CONTRADICTED ({})", bad.join(", ")));
    }
    if !open.is_empty() {
        parts.push(format!("undecided ({})", open.join(", ")));
    }
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join("; ")
    }
}

/// Flagged kernels: hazards first, then contradicted claims, then undecided.
pub fn flagged(ks: &[&KernelReport]) -> String {
    let mut rows: Vec<&KernelReport> = ks.to_vec();
    rows.sort_by_key(|k| {
        (
            k.hazards() == 0,
            k.contradicted() == 0,
            k.display_name.clone(),
        )
    });
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(["kernel", "arch", "copies", "claims", "checks"]);
    for k in rows.iter().take(ROWS) {
        let copies = k.copies();
        t.add_row([
            short(&k.display_name, 48),
            k.arch.clone().unwrap_or_else(|| "?".into()),
            if copies.is_empty() {
                "-".into()
            } else {
                copies.join(", ")
            },
            claims(k),
            checks(k),
        ]);
    }
    let mut out = format!("{} flagged kernel(s)\n{t}\n", ks.len());
    if rows.len() > ROWS {
        out.push_str(&format!(
            "and {} more (--format json has them all)\n",
            rows.len() - ROWS
        ));
    }
    out
}
