//! A kernel's resources from `cuobjdump -res-usage` (registers, static shared memory, stack and
//! local memory), its local-memory traffic from the census, and the occupancy a launch shape
//! would get on the cubin's architecture.

use crate::arch::Arch;
use crate::evidence::resources::{Occupancy, SmLimits, occupancy};
use crate::evidence::sass::Census;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    pub registers: u32,
    /// Bytes of `__shared__` declared in the kernel.
    pub static_smem: u32,
    /// Bytes of stack frame per thread: spills and local arrays live here.
    pub stack: u32,
    /// Bytes of local memory per thread outside the stack.
    pub local: u32,
}

/// `cuobjdump -res-usage`: ` Function NAME:` then `  REG:40 STACK:0 SHARED:1024 LOCAL:0 ...`.
pub fn parse(text: &str) -> HashMap<String, Usage> {
    let mut out = HashMap::new();
    let mut name: Option<String> = None;
    for line in text.lines() {
        let t = line.trim();
        if let Some(n) = t
            .strip_prefix("Function ")
            .and_then(|n| n.strip_suffix(':'))
        {
            name = Some(n.trim().to_string());
            continue;
        }
        let Some(n) = name.take() else { continue };
        let field = |key: &str| -> u32 {
            t.split_whitespace()
                .find_map(|kv| kv.strip_prefix(key))
                .and_then(|v| v.parse().ok())
                .unwrap_or(0)
        };
        out.insert(
            n,
            Usage {
                registers: field("REG:"),
                static_smem: field("SHARED:"),
                stack: field("STACK:"),
                local: field("LOCAL:"),
            },
        );
    }
    out
}

/// A launch shape the user asks occupancy for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Launch {
    pub threads: u32,
    pub dynamic_smem: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resources {
    /// None when cuobjdump could not say (the reason is in `note`).
    pub usage: Option<Usage>,
    /// Local loads and stores in the SASS: spill traffic or local arrays.
    pub ldl: u32,
    pub stl: u32,
    pub occupancy: Option<Occupancy>,
    pub launch: Option<Launch>,
    /// Why something is missing, or why nothing fits.
    pub note: Option<String>,
}

pub fn resources(
    usage: Option<Usage>,
    census: &Census,
    arch: Option<Arch>,
    launch: Option<Launch>,
) -> Resources {
    let mut r = Resources {
        usage,
        ldl: census.count("LDL"),
        stl: census.count("STL"),
        occupancy: None,
        launch,
        note: None,
    };
    let Some(launch) = launch else { return r };
    let (Some(u), Some(arch)) = (usage, arch) else {
        r.note = Some("occupancy needs the register and shared-memory counts (cuobjdump -res-usage) and the architecture".into());
        return r;
    };
    let Some(limits) = SmLimits::for_arch(arch) else {
        r.note = Some(format!(
            "no per-SM limits for {arch} (known: {})",
            SmLimits::TABLE
        ));
        return r;
    };
    let o = occupancy(
        &limits,
        launch.threads,
        u.registers,
        u.static_smem,
        launch.dynamic_smem,
    );
    if o.blocks_per_sm == 0 {
        r.note = Some(format!(
            "does not fit on {arch}: {}",
            if o.by_shared_memory == 0 {
                format!(
                    "{} B static + {} B dynamic shared memory exceed the {} B a block may have",
                    u.static_smem, launch.dynamic_smem, limits.smem_per_block_optin
                )
            } else {
                format!(
                    "{} registers x {} threads exceed the {} a block may have",
                    u.registers, launch.threads, limits.regs_per_block
                )
            }
        ));
    }
    r.occupancy = Some(o);
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    const RES: &str = "
Resource usage:
 Common:
  GLOBAL:0
 Function cpasync_two_stage:
  REG:32 STACK:0 SHARED:8192 LOCAL:0 CONSTANT[0]:372 TEXTURE:0 SURFACE:0 SAMPLER:0
 Function _Z10stage_rowsPKtPti:
  REG:14 STACK:16 SHARED:4120 LOCAL:8 CONSTANT[2]:8 CONSTANT[0]:372 TEXTURE:0 SURFACE:0 SAMPLER:0
";

    #[test]
    fn res_usage_is_read_per_function() {
        let u = parse(RES);
        assert_eq!(u.len(), 2);
        assert_eq!(
            u["_Z10stage_rowsPKtPti"],
            Usage {
                registers: 14,
                static_smem: 4120,
                stack: 16,
                local: 8
            }
        );
        assert_eq!(u["cpasync_two_stage"].static_smem, 8192);
    }

    #[test]
    fn occupancy_names_its_limiter_and_what_does_not_fit() {
        let u = parse(RES)["cpasync_two_stage"];
        let c = Census::default();
        let sm80: Arch = "sm_80".parse().unwrap();
        let launch = |threads, dynamic_smem| {
            Some(Launch {
                threads,
                dynamic_smem,
            })
        };
        let r = resources(Some(u), &c, Some(sm80), launch(256, 64 * 1024));
        let o = r.occupancy.unwrap();
        // 8192 + 65536 + 1024 per block: 167936 / 74752 = 2
        assert_eq!((o.blocks_per_sm, o.limiter.name()), (2, "shared memory"));
        let r = resources(Some(u), &c, Some(sm80), launch(256, 200_000));
        assert_eq!(r.occupancy.unwrap().blocks_per_sm, 0);
        assert!(r.note.unwrap().contains("exceed the 166912 B"));
        let r = resources(Some(u), &c, Some("sm_75".parse().unwrap()), launch(256, 0));
        assert!(r.occupancy.is_none());
        assert!(r.note.unwrap().contains("no per-SM limits for sm_75"));
        assert!(resources(Some(u), &c, Some(sm80), None).occupancy.is_none());
    }
}
