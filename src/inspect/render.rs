//! The inspect report as text for a terminal, and as JSON for scripts.

use super::checks::Status;
use super::{KernelReport, Report};
use std::fmt::Write;

pub fn json(r: &Report) -> String {
    serde_json::to_string_pretty(r).expect("the report is plain data")
}

fn census_line(m: &std::collections::BTreeMap<String, u32>) -> String {
    if m.is_empty() {
        return "-".into();
    }
    m.iter()
        .map(|(k, n)| format!("{k} x{n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn kernel(out: &mut String, k: &KernelReport) {
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
    let _ = writeln!(out, "movement: {}", k.movement);
    let _ = writeln!(out, "math: {}", k.math);
    let _ = writeln!(
        out,
        "census: {} instructions; {}",
        k.instructions,
        census_line(&k.movement_census)
    );
    let _ = writeln!(out, "  math: {}", census_line(&k.math_census));
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
        let status = match c.status {
            Status::Holds => "holds",
            Status::Hazard => "HAZARD",
            Status::NotApplicable => "n/a",
        };
        let _ = writeln!(out, "check {}: {status}: {}", c.name, c.detail);
        if c.status == Status::Hazard {
            for s in &c.sites {
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
        }
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

pub fn text(r: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}: {}", r.input, r.kind.describe());
    if let Some(c) = &r.compiled {
        let _ = writeln!(out, "compiled by {c}");
    }
    for n in &r.notes {
        let _ = writeln!(out, "note: {n}");
    }
    for k in &r.kernels {
        out.push('\n');
        kernel(&mut out, k);
    }
    let contradicted: usize = r.kernels.iter().map(KernelReport::contradicted).sum();
    let hazards: usize = r.kernels.iter().map(KernelReport::hazards).sum();
    let _ = writeln!(
        out,
        "\n{} kernel(s): {contradicted} claim(s) contradicted, {hazards} protocol hazard(s)",
        r.kernels.len()
    );
    out
}
