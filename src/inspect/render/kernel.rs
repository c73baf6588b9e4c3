//! One kernel in full: census, mechanism, claims, checks with their findings (severity, the
//! instructions on the path and the path), resources.

use crate::inspect::KernelReport;
use crate::inspect::checks::{Check, Status};
use crate::inspect::claims::Claim;
use std::fmt::Write;

fn census_line(m: &std::collections::BTreeMap<String, u32>) -> String {
    if m.is_empty() {
        return "-".into();
    }
    m.iter()
        .map(|(k, n)| format!("{k} x{n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Block offsets of a path, the middle elided when long.
fn path(p: &[u32]) -> String {
    let hex = |o: &u32| format!("{o:#06x}");
    if p.len() <= 12 {
        return p.iter().map(hex).collect::<Vec<_>>().join(" > ");
    }
    let head: Vec<String> = p[..3].iter().map(hex).collect();
    let tail: Vec<String> = p[p.len() - 8..].iter().map(hex).collect();
    format!(
        "{} > ({} blocks) > {}",
        head.join(" > "),
        p.len() - 11,
        tail.join(" > ")
    )
}

fn check(out: &mut String, c: &Check) {
    let _ = writeln!(out, "check {}: {}: {}", c.name, c.status.label(), c.detail);
    for f in c
        .findings
        .iter()
        .filter(|f| matches!(f.status, Status::Hazard | Status::Undecided))
    {
        if !std::ptr::eq(f, &c.findings[0]) {
            let _ = writeln!(out, "  {}: {}", f.status.label(), f.detail);
        }
        for s in &f.sites {
            let _ = writeln!(
                out,
                "  {:<10} {:#06x}  {}{}",
                s.role,
                s.offset,
                s.instruction,
                s.source
                    .as_ref()
                    .map_or(String::new(), |l| format!("  // {l}"))
            );
        }
        let _ = writeln!(out, "  path       {}", path(&f.path));
    }
}

pub fn kernel(out: &mut String, k: &KernelReport) {
    let name = if k.display_name == k.name {
        k.name.clone()
    } else {
        format!("{} ({})", k.display_name, k.name)
    };
    let _ = writeln!(
        out,
        "== {name} [{}, {}]",
        k.arch.as_deref().unwrap_or("architecture unknown"),
        k.cubin
    );
    if let Some(s) = &k.stub {
        let _ = writeln!(out, "stub: {s}");
    }
    let _ = writeln!(out, "movement: {}", k.movement);
    let _ = writeln!(out, "math: {}", k.math);
    let _ = writeln!(
        out,
        "census: {} instructions; {}",
        k.instructions,
        census_line(&k.movement_census)
    );
    let _ = writeln!(out, "  math: {}", census_line(&k.math_census));
    if let Some(m) = &k.triton {
        let _ = writeln!(
            out,
            "triton: {}: num_stages {}, num_warps {}, {} B dynamic shared, {} tensor descriptor(s){}",
            m.file,
            m.num_stages,
            m.num_warps,
            m.shared,
            m.descriptors(),
            m.triton_version
                .as_ref()
                .map_or(String::new(), |v| format!(", Triton {v}"))
        );
    }
    let staged = k
        .claims
        .iter()
        .any(|v| matches!(v.stated.claim, Claim::Stages { .. }));
    // a stage claim's verdict says the same
    if let Some(d) = k
        .stages
        .as_ref()
        .filter(|_| !staged && !k.copies().is_empty())
    {
        let _ = writeln!(
            out,
            "stages kept: {}: {}",
            d.stages.map_or("undecided".into(), |n| n.to_string()),
            d.detail
        );
    }
    if k.claims.is_empty() {
        let _ = writeln!(
            out,
            "claim: none (the name and source claim no mechanism; give one with --claim)"
        );
    }
    for v in &k.claims {
        let _ = writeln!(out, "claim ({}): {}", v.stated.from, v.label());
    }
    for c in &k.checks {
        check(out, c);
    }
    let r = &k.resources;
    match r.usage {
        Some(u) => {
            let _ = writeln!(
                out,
                "resources: {} registers, {} B static shared, {} B stack, {} B local per thread; LDL x{}, STL x{}{}",
                u.registers,
                u.static_smem,
                u.stack,
                u.local,
                r.ldl,
                r.stl,
                if r.ldl + r.stl > 0 {
                    " (local memory traffic: spills or local arrays)"
                } else {
                    ""
                }
            );
        }
        None => {
            let _ = writeln!(out, "resources: unknown; LDL x{}, STL x{}", r.ldl, r.stl);
        }
    }
    if let (Some(l), Some(o)) = (r.launch, r.occupancy) {
        let _ = writeln!(
            out,
            "occupancy ({} threads, {} B dynamic shared, {} limits): {} blocks/SM, {} warps/SM, limited by {} (registers {}, shared memory {}, threads {}, block slots {})",
            l.threads,
            l.dynamic_smem,
            k.arch.as_deref().unwrap_or("?"),
            o.blocks_per_sm,
            o.warps_per_sm,
            o.limiter.name(),
            o.by_registers,
            o.by_shared_memory,
            o.by_threads,
            o.by_block_slots
        );
    }
    if let Some(n) = &r.note {
        let _ = writeln!(out, "  note: {n}");
    }
}
