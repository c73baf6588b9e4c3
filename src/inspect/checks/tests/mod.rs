//! Each check on small listings written for it: the broken protocol is caught, the correct one
//! holds, and the cases that need paths, predicates, values or addresses go the way the
//! hardware would.

mod cpasync;
mod fence;
mod mbarrier;
mod pipelines;

use super::*;
use crate::inspect::listing::kernels;

/// An nvdisasm listing of kernel `k` from instructions one per line (offsets added), labels
/// (`.L_x_1:`) and line-info comments (`//## ...`).
pub fn listing(body: &str) -> String {
    let mut out = String::from("\t.target\tsm_90\n.text.k:\n");
    let mut offset = 0u32;
    for line in body.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if line.ends_with(':') || line.starts_with("//") {
            out.push_str(line);
        } else {
            out.push_str(&format!("        /*{offset:04x}*/ {line} ;"));
            offset += 0x10;
        }
        out.push('\n');
    }
    out
}

pub fn run(name: &str, body: &str) -> Check {
    let k = kernels(&listing(body)).remove(0);
    let cfg = Cfg::of(&k);
    all(&k, &cfg)
        .into_iter()
        .find(|c| c.name == name)
        .expect("every check reports")
}

pub fn status(name: &str, body: &str) -> Status {
    run(name, body).status
}

/// The check finds `want` (a hazard, or undecided) and says `text` about it.
pub fn found(name: &str, body: &str, want: Status, text: &str) -> Check {
    let c = run(name, body);
    assert_eq!(c.status, want, "{}", c.detail);
    assert!(c.detail.contains(text), "{}", c.detail);
    c
}

pub fn hazard(name: &str, body: &str, text: &str) -> Check {
    found(name, body, Status::Hazard, text)
}

/// Thread index in R0; R2 = 16 * tid (this thread's element of a 16 KiB tile at 0),
/// R3 = 16 * (255 - tid) (another thread's); UR4 = the block's shared window (uniform).
pub const PROLOGUE: &str = "
    S2R R0, SR_TID.X
    IMAD.SHL.U32 R2, R0, 0x10, RZ
    IADD3 R3, -R0, 0xff, RZ
    IMAD.SHL.U32 R3, R3, 0x10, RZ
    S2UR UR5, SR_CgaCtaId
    UMOV UR4, 0x400
    ULEA UR4, UR5, UR4, 0x18
";

pub fn with_prologue(body: &str) -> String {
    format!("{PROLOGUE}{body}")
}
