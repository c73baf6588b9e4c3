//! Every output format of a `Comparison`: the terminal table, a GitHub table for a pull request,
//! CSV and JSON (HTML: report::html::compare). Pure: each returns the text whole.

use super::{Change, Comparison, RunInfo, Side, VariantChange};
use crate::render::formats::{csv_doc, md_table};
use crate::render::table;

pub const HEADER: [&str; 7] = [
    "variant",
    "BASE device us (min..max)",
    "NEW device us (min..max)",
    "NEW/BASE",
    "verdict",
    "status",
    "changes",
];
/// The columns of times and ratios.
pub const RIGHT: [usize; 3] = [1, 2, 3];

/// The terminal: the runs, any warnings, the table, the summary.
pub fn terminal(c: &Comparison) -> String {
    let t = table::render(&HEADER, &RIGHT, c.variants.iter().map(cells));
    let mut out = runs(c, "");
    out += &format!("{t}\n{}", c.summary());
    out
}

/// A GitHub table to paste into a pull request, under a one-line summary.
pub fn markdown(c: &Comparison) -> String {
    let mut out = format!("**{}**\n\n", c.summary());
    out += &runs(c, "- ");
    out += "\n";
    out += &md_table(&HEADER, &RIGHT, c.variants.iter().map(cells));
    out
}

/// One row per variant under a header row; times in us at full precision, empty where absent.
pub fn csv(c: &Comparison) -> String {
    let header = [
        "variant",
        "verdict",
        "regression",
        "ratio",
        "base_status",
        "new_status",
        "base_median_us",
        "base_min_us",
        "base_max_us",
        "new_median_us",
        "new_min_us",
        "new_max_us",
        "changes",
        "unreliable",
    ];
    let rows = c.variants.iter().map(|v| {
        let status = |s: Option<&Side>| s.map_or(String::new(), |s| s.status.label().into());
        let times = |s: Option<&Side>| {
            let d = s.and_then(|s| s.device_us);
            [d.map(|d| d.median), d.map(|d| d.min), d.map(|d| d.max)]
                .map(|x| x.map_or(String::new(), |x| x.to_string()))
        };
        [
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
        .chain([changes(v), v.unreliable.clone().unwrap_or_default()])
    });
    csv_doc(&header, rows)
}

pub fn json(c: &Comparison) -> String {
    serde_json::to_string_pretty(c).expect("a comparison serialises")
}

/// The two runs, then the warnings, one line each behind `prefix`.
fn runs(c: &Comparison, prefix: &str) -> String {
    let run = |name: &str, r: &RunInfo| {
        let from = match r.file.is_empty() {
            true => String::new(),
            false => format!("{}: ", r.file),
        };
        format!("{prefix}{name}: {from}{}\n", r.describe())
    };
    let mut out = run("BASE", &c.base) + &run("NEW", &c.new);
    for w in &c.warnings {
        out += &format!("{prefix}warning: {w}\n");
    }
    out
}

pub fn cells(v: &VariantChange) -> [String; 7] {
    let time = |s: &Option<Side>| {
        s.as_ref()
            .and_then(|s| s.device_us)
            .map_or("-".into(), |d| {
                format!("{:.1} ({:.1}..{:.1})", d.median, d.min, d.max)
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
        format!(
            "{}{}{}",
            v.verdict.label(),
            if v.regression { " (regression)" } else { "" },
            if v.unreliable.is_some() {
                " (clocks moved)"
            } else {
                ""
            }
        ),
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
