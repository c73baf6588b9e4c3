//! Every output format of a `Comparison`: the terminal table, a GitHub table for a pull request,
//! CSV and JSON. Pure: each returns the text whole.

use super::{Change, Comparison, RunInfo, Side, VariantChange};
use crate::report::table::table;
use comfy_table::{Cell, CellAlignment};

const HEADER: [&str; 7] = [
    "variant",
    "BASE device us (min..max)",
    "NEW device us (min..max)",
    "NEW/BASE",
    "verdict",
    "status",
    "changes",
];

/// The terminal: the runs, any warnings, the table, the summary.
pub fn terminal(c: &Comparison) -> String {
    let mut t = table(&HEADER);
    for v in &c.variants {
        t.add_row(cells(v).into_iter().enumerate().map(|(i, s)| {
            let cell = Cell::new(s);
            if (1..=3).contains(&i) {
                cell.set_alignment(CellAlignment::Right)
            } else {
                cell
            }
        }));
    }
    let mut out = runs(c, "");
    out += &format!("{t}\n{}", c.summary());
    out
}

/// A GitHub table to paste into a pull request, under a one-line summary.
pub fn markdown(c: &Comparison) -> String {
    let mut out = format!("**{}**\n\n", c.summary());
    out += &runs(c, "- ");
    out += "\n";
    out += &row(HEADER.iter().map(|h| h.to_string()));
    out += "| --- | ---: | ---: | ---: | --- | --- | --- |\n";
    for v in &c.variants {
        out += &row(cells(v).into_iter());
    }
    out
}

/// One row per variant under a header row; times in ms at full precision, empty where absent.
pub fn csv(c: &Comparison) -> String {
    let mut out = [
        "variant",
        "verdict",
        "regression",
        "ratio",
        "base_status",
        "new_status",
        "base_median_ms",
        "base_min_ms",
        "base_max_ms",
        "new_median_ms",
        "new_min_ms",
        "new_max_ms",
        "changes",
    ]
    .join(",");
    out.push('\n');
    for v in &c.variants {
        let status = |s: Option<&Side>| s.map_or(String::new(), |s| s.status.label().into());
        let times = |s: Option<&Side>| {
            let d = s.and_then(|s| s.device);
            [d.map(|d| d.median), d.map(|d| d.min), d.map(|d| d.max)]
                .map(|x| x.map_or(String::new(), |x| x.to_string()))
        };
        let fields = [
            v.name.clone(),
            v.verdict.label().into(),
            v.regression.to_string(),
            v.ratio.map_or(String::new(), |r| r.to_string()),
            status(v.base.as_ref()),
            status(v.new.as_ref()),
        ]
        .into_iter()
        .chain(times(v.base.as_ref()))
        .chain(times(v.new.as_ref()))
        .chain([changes(v)]);
        out += &fields.map(|f| csv_field(&f)).collect::<Vec<_>>().join(",");
        out.push('\n');
    }
    out
}

pub fn json(c: &Comparison) -> String {
    serde_json::to_string_pretty(c).expect("a comparison serialises")
}

/// The two runs, then the warnings, one line each behind `prefix`.
fn runs(c: &Comparison, prefix: &str) -> String {
    let run = |name: &str, r: &RunInfo| {
        format!(
            "{prefix}{name}: {}, copy ceiling {}, {}, tilepipe {}\n",
            r.device,
            r.ceiling_gbps
                .map_or("not measured".into(), |g| format!("{g:.0} GB/s")),
            r.workload,
            r.tilepipe_version
        )
    };
    let mut out = run("BASE", &c.base) + &run("NEW", &c.new);
    for w in &c.warnings {
        out += &format!("{prefix}warning: {w}\n");
    }
    out
}

fn cells(v: &VariantChange) -> [String; 7] {
    let time = |s: &Option<Side>| {
        s.as_ref().and_then(|s| s.device).map_or("-".into(), |d| {
            format!(
                "{:.1} ({:.1}..{:.1})",
                d.median * 1e3,
                d.min * 1e3,
                d.max * 1e3
            )
        })
    };
    let status = match (&v.base, &v.new) {
        (Some(b), Some(n)) if b.status != n.status => {
            format!("{} -> {}", b.status.label(), n.status.label())
        }
        _ => v
            .new
            .as_ref()
            .or(v.base.as_ref())
            .map_or("-".into(), |s| s.status.label().into()),
    };
    [
        v.name.clone(),
        time(&v.base),
        time(&v.new),
        v.ratio.map_or("-".into(), |r| format!("{r:.3}")),
        if v.regression {
            format!("{} (regression)", v.verdict.label())
        } else {
            v.verdict.label().into()
        },
        status,
        changes(v),
    ]
}

/// The changes besides status, which has its own column.
fn changes(v: &VariantChange) -> String {
    v.changes
        .iter()
        .filter(|c| !matches!(c, Change::Status { .. }))
        .map(Change::describe)
        .collect::<Vec<_>>()
        .join("; ")
}

fn row(cells: impl Iterator<Item = String>) -> String {
    let cells: Vec<String> = cells.map(|c| c.replace('|', "\\|")).collect();
    format!("| {} |\n", cells.join(" | "))
}

/// RFC 4180: a field holding a comma, quote or line break is quoted, its quotes doubled
/// (attestation labels read "claimed X, emitted Y").
fn csv_field(f: &str) -> String {
    if f.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", f.replace('"', "\"\""))
    } else {
        f.to_string()
    }
}
