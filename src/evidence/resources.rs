//! Occupancy from first principles: blocks per SM allowed by registers, shared memory, threads
//! and block slots, and which one binds. Cross-checked against the driver's calculator.

use crate::gpu::{DeviceInfo, FunctionResources};
use serde::{Deserialize, Serialize};

/// The per-SM limits occupancy depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SmLimits {
    pub regs_per_sm: u32,
    pub regs_per_block: u32,
    pub max_threads_per_sm: u32,
    pub max_blocks_per_sm: u32,
    pub smem_per_sm: u32,
    pub smem_per_block_optin: u32,
    pub smem_reserved_per_block: u32,
}

impl SmLimits {
    /// Registers are allocated per warp in units of 256.
    pub const REG_UNIT: u32 = 256;
    /// Warps are given registers in groups of this many (one per SM sub-partition): the warps
    /// registers allow are rounded down to a multiple of it.
    pub const WARP_ALLOC: u32 = 4;
    /// Shared memory is allocated per block in units of 128 bytes.
    pub const SMEM_UNIT: u32 = 128;

    pub fn of(d: &DeviceInfo) -> SmLimits {
        SmLimits {
            regs_per_sm: d.regs_per_sm,
            regs_per_block: d.regs_per_block,
            max_threads_per_sm: d.max_threads_per_sm,
            max_blocks_per_sm: d.max_blocks_per_sm,
            smem_per_sm: d.smem_per_sm,
            smem_per_block_optin: d.smem_per_block_optin,
            smem_reserved_per_block: d.smem_reserved_per_block,
        }
    }

    /// A100 (sm_80): 164 KB shared memory per SM.
    pub fn sm80() -> SmLimits {
        SmLimits {
            regs_per_sm: 65536,
            regs_per_block: 65536,
            max_threads_per_sm: 2048,
            max_blocks_per_sm: 32,
            smem_per_sm: 167936,
            smem_per_block_optin: 166912,
            smem_reserved_per_block: 1024,
        }
    }

    /// RTX 30xx / A10 / A40 (sm_86): 100 KB shared memory and 1536 threads per SM, 16 blocks.
    pub fn sm86() -> SmLimits {
        SmLimits {
            max_threads_per_sm: 1536,
            max_blocks_per_sm: 16,
            smem_per_sm: 102400,
            smem_per_block_optin: 101376,
            ..SmLimits::sm80()
        }
    }

    /// L4 / L40 / RTX 40xx (sm_89): as sm_86 with 24 blocks per SM.
    pub fn sm89() -> SmLimits {
        SmLimits {
            max_blocks_per_sm: 24,
            ..SmLimits::sm86()
        }
    }

    /// The limits of an architecture without a GPU to ask (CUDA's published per-architecture
    /// figures); None for an architecture this table does not hold.
    pub fn for_arch(arch: crate::arch::Arch) -> Option<SmLimits> {
        match arch.sm() {
            80 => Some(SmLimits::sm80()),
            86 => Some(SmLimits::sm86()),
            89 => Some(SmLimits::sm89()),
            90 => Some(SmLimits::sm90()),
            _ => None,
        }
    }

    /// The architectures `for_arch` knows.
    pub const TABLE: &'static str = "sm_80, sm_86, sm_89, sm_90";

    /// H100 / H200 (sm_90): 228 KB shared memory per SM.
    pub fn sm90() -> SmLimits {
        SmLimits {
            regs_per_sm: 65536,
            regs_per_block: 65536,
            max_threads_per_sm: 2048,
            max_blocks_per_sm: 32,
            smem_per_sm: 233472,
            smem_per_block_optin: 232448,
            smem_reserved_per_block: 1024,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Limiter {
    Registers,
    SharedMemory,
    Threads,
    BlockSlots,
}

impl Limiter {
    pub fn name(self) -> &'static str {
        match self {
            Limiter::Registers => "registers",
            Limiter::SharedMemory => "shared memory",
            Limiter::Threads => "threads",
            Limiter::BlockSlots => "block slots",
        }
    }
}

/// Resources of one prepared variant: the driver's numbers and the occupancy they imply.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Resources {
    pub threads: u32,
    pub function: FunctionResources,
    pub dynamic_smem: u32,
    /// slots x slot bytes (none for direct): what the pipeline's slots should take; equals
    /// dynamic_smem by construction and is compared with the driver's static + dynamic report.
    pub slot_footprint: u32,
    pub occupancy: Occupancy,
    /// Blocks per SM from the driver's occupancy calculator, for the cross-check.
    pub driver_blocks_per_sm: u32,
    /// Clusters of this many blocks the build is launched in (1: none), and how many of them the
    /// driver can keep resident on the GPU at once.
    #[serde(default = "one")]
    pub cluster: u32,
    #[serde(default)]
    pub resident_clusters: Option<u32>,
}

fn one() -> u32 {
    1
}

impl Resources {
    /// Blocks resident on the GPU at once: whole clusters where the build runs in clusters.
    pub fn resident_blocks(&self, sm_count: u32) -> u32 {
        match self.resident_clusters {
            Some(c) => c * self.cluster,
            None => self.driver_blocks_per_sm.max(1) * sm_count,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Occupancy {
    pub blocks_per_sm: u32,
    pub warps_per_sm: u32,
    pub limiter: Limiter,
    pub by_registers: u32,
    pub by_shared_memory: u32,
    pub by_threads: u32,
    pub by_block_slots: u32,
    /// Shared memory one block holds: static + dynamic + the system's reservation, rounded.
    pub smem_per_block: u32,
}

pub fn occupancy(
    l: &SmLimits,
    threads: u32,
    regs_per_thread: u32,
    static_smem: u32,
    dyn_smem: u32,
) -> Occupancy {
    let warps = threads.div_ceil(32);
    let regs_per_warp =
        (regs_per_thread.max(1) * 32).div_ceil(SmLimits::REG_UNIT) * SmLimits::REG_UNIT;
    let by_registers = if regs_per_warp * warps > l.regs_per_block {
        0
    } else {
        (l.regs_per_sm / regs_per_warp) / SmLimits::WARP_ALLOC * SmLimits::WARP_ALLOC / warps
    };
    let smem_per_block = (static_smem + dyn_smem + l.smem_reserved_per_block)
        .div_ceil(SmLimits::SMEM_UNIT)
        * SmLimits::SMEM_UNIT;
    let by_shared_memory = if static_smem + dyn_smem > l.smem_per_block_optin {
        0
    } else {
        l.smem_per_sm / smem_per_block
    };
    let by_threads = l.max_threads_per_sm / (warps * 32);
    let by_block_slots = l.max_blocks_per_sm;
    let candidates = [
        (by_registers, Limiter::Registers),
        (by_shared_memory, Limiter::SharedMemory),
        (by_threads, Limiter::Threads),
        (by_block_slots, Limiter::BlockSlots),
    ];
    // ties go to the first listed: registers, then shared memory, then threads
    let (blocks, limiter) = candidates
        .iter()
        .copied()
        .min_by_key(|(b, _)| *b)
        .expect("four candidates");
    Occupancy {
        blocks_per_sm: blocks,
        warps_per_sm: blocks * warps,
        limiter,
        by_registers,
        by_shared_memory,
        by_threads,
        by_block_slots,
        smem_per_block,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sm90_shared_memory_bound_pipeline() {
        // 4 stages of 16 KB + 1152 B static, 256 threads at 64 registers
        let o = occupancy(&SmLimits::sm90(), 256, 64, 1152, 4 * 16384);
        // per block: 65536 + 1152 + 1024 = 67712 -> 233472 / 67712 = 3.45 -> 3
        assert_eq!(o.smem_per_block, 67712);
        assert_eq!(o.by_shared_memory, 3);
        // 64 regs x 32 = 2048 per warp -> 32 warps -> 4 blocks of 8 warps
        assert_eq!(o.by_registers, 4);
        assert_eq!(o.by_threads, 8);
        assert_eq!(
            (o.blocks_per_sm, o.warps_per_sm, o.limiter),
            (3, 24, Limiter::SharedMemory)
        );
    }

    #[test]
    fn register_bound_and_rounding() {
        // 128 registers x 32 = 4096 per warp -> 16 warps -> 2 blocks of 8 warps
        let o = occupancy(&SmLimits::sm90(), 256, 128, 1152, 16384);
        assert_eq!((o.blocks_per_sm, o.limiter), (2, Limiter::Registers));
        // 40 registers round to 1280 per warp -> 51 warps, 48 in whole groups of 4 -> 6 blocks
        let o = occupancy(&SmLimits::sm90(), 256, 40, 1280, 16384);
        assert_eq!(o.by_registers, 6);
        assert_eq!(o.by_shared_memory, 233472 / (16384 + 1280 + 1024));
        assert_eq!((o.blocks_per_sm, o.limiter), (6, Limiter::Registers));
    }

    #[test]
    fn register_warps_come_in_groups_of_four() {
        // two-warp blocks at 40 registers: 51 warps fit the register file, but warps are given
        // registers four at a time, so 48 do; the H200's driver said 24 blocks where counting
        // single warps said 25 (benchmarks/h200-2026-12-01-peers/direct-4-vectors-failed/)
        let o = occupancy(&SmLimits::sm90(), 64, 40, 0, 0);
        assert_eq!((o.by_registers, o.limiter), (24, Limiter::Registers));
    }

    #[test]
    fn thread_and_slot_bound() {
        let o = occupancy(&SmLimits::sm80(), 1024, 16, 0, 0);
        assert_eq!((o.blocks_per_sm, o.limiter), (2, Limiter::Threads));
        let o = occupancy(&SmLimits::sm80(), 32, 16, 0, 0);
        assert_eq!((o.blocks_per_sm, o.limiter), (32, Limiter::BlockSlots));
        assert_eq!(o.warps_per_sm, 32);
    }

    #[test]
    fn per_architecture_limits_bind_differently() {
        let at = |sm: &str| SmLimits::for_arch(sm.parse().unwrap()).unwrap();
        // 256 threads, 32 registers, 40 KB of shared memory per block
        let o = |l: &SmLimits| occupancy(l, 256, 32, 0, 40 * 1024);
        // sm_86: 102400 / (40960 + 1024) = 2 by shared memory; 1536 threads allow 6
        assert_eq!(
            (o(&at("sm_86")).blocks_per_sm, o(&at("sm_86")).limiter),
            (2, Limiter::SharedMemory)
        );
        assert_eq!(o(&at("sm_89")).by_threads, 6);
        // sm_80: 167936 / 41984 = 4 exactly
        assert_eq!(o(&at("sm_80")).blocks_per_sm, 4);
        assert_eq!(o(&at("sm_90")).blocks_per_sm, 5);
        // one warp of 16 registers: block slots bind at 16 on sm_86, 24 on sm_89, 32 on sm_90
        for (sm, slots) in [("sm_86", 16), ("sm_89", 24), ("sm_90", 32)] {
            let o = occupancy(&at(sm), 32, 16, 0, 0);
            assert_eq!(
                (o.blocks_per_sm, o.limiter),
                (slots, Limiter::BlockSlots),
                "{sm}"
            );
        }
        assert!(SmLimits::for_arch("sm_75".parse().unwrap()).is_none());
    }

    #[test]
    fn sm80_has_less_shared_memory_than_sm90() {
        let a = occupancy(&SmLimits::sm80(), 256, 40, 1152, 3 * 16384);
        let h = occupancy(&SmLimits::sm90(), 256, 40, 1152, 3 * 16384);
        // sm_80: 167936 / 51328 = 3; sm_90: 233472 / 51328 = 4
        assert_eq!((a.blocks_per_sm, a.limiter), (3, Limiter::SharedMemory));
        assert_eq!((h.blocks_per_sm, h.limiter), (4, Limiter::SharedMemory));
        // beyond the per-block opt-in nothing fits
        let none = occupancy(&SmLimits::sm80(), 256, 40, 0, 170_000);
        assert_eq!(none.blocks_per_sm, 0);
    }
}
