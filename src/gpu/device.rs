//! What the device and its toolchain are, read from the driver and NVRTC.

use crate::arch::Arch;
use crate::{Error, Result};
use cudarc::driver::CudaContext;
use cudarc::driver::sys::CUdevice_attribute as A;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceInfo {
    pub ordinal: usize,
    pub name: String,
    pub arch: Arch,
    pub sm_count: u32,
    pub total_memory: u64,
    pub l2_bytes: u64,
    pub smem_per_block: u32,
    pub smem_per_block_optin: u32,
    pub smem_per_sm: u32,
    /// Shared memory the system reserves per block (1 KB on sm_80+), part of every block's footprint.
    pub smem_reserved_per_block: u32,
    pub regs_per_sm: u32,
    pub regs_per_block: u32,
    pub max_threads_per_sm: u32,
    pub max_threads_per_block: u32,
    pub max_blocks_per_sm: u32,
    pub sm_clock_mhz: u32,
    pub mem_clock_mhz: u32,
    pub mem_bus_bits: u32,
    pub driver_version: String,
    pub nvrtc_version: String,
    /// PCI domain, bus and device: how NVML's view of the GPU is matched to CUDA's.
    #[serde(default)]
    pub pci: [u32; 3],
    /// The GPU's UUID as nvidia-smi prints it (GPU-xxxxxxxx-...): which physical GPU measured.
    #[serde(default)]
    pub uuid: String,
}

/// nvidia-smi's spelling of a GPU UUID: GPU-8-4-4-4-12 hex digits.
fn uuid_text(b: &[u8; 16]) -> String {
    let hex =
        |r: std::ops::Range<usize>| b[r].iter().map(|x| format!("{x:02x}")).collect::<String>();
    format!(
        "GPU-{}-{}-{}-{}-{}",
        hex(0..4),
        hex(4..6),
        hex(6..8),
        hex(8..10),
        hex(10..16)
    )
}

impl DeviceInfo {
    /// One line naming the GPU and its toolchain.
    pub fn summary(&self) -> String {
        format!(
            "{} ({}, {} SMs, {} MB L2), driver {}, NVRTC {}",
            self.name,
            self.arch,
            self.sm_count,
            self.l2_bytes >> 20,
            self.driver_version,
            self.nvrtc_version
        )
    }

    pub(super) fn query(ctx: &Arc<CudaContext>, ordinal: usize) -> Result<Self> {
        let attr = |a: A| {
            ctx.attribute(a)
                .map(|v| v as u32)
                .map_err(|e| Error::cuda("cuDeviceGetAttribute", e))
        };
        let (major, minor) = ctx
            .compute_capability()
            .map_err(|e| Error::cuda("cuDeviceGetAttribute", e))?;
        let mut driver = 0i32;
        // SAFETY: writes one int; the driver library is loaded (a context exists).
        unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut driver) }
            .result()
            .map_err(|e| Error::cuda("cuDriverGetVersion", e))?;
        Ok(DeviceInfo {
            ordinal,
            name: ctx.name().map_err(|e| Error::cuda("cuDeviceGetName", e))?,
            arch: Arch {
                major: major as u32,
                minor: minor as u32,
            },
            sm_count: attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
            total_memory: ctx
                .total_mem()
                .map_err(|e| Error::cuda("cuDeviceTotalMem", e))? as u64,
            l2_bytes: attr(A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)? as u64,
            smem_per_block: attr(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)?,
            smem_per_block_optin: attr(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?,
            smem_per_sm: attr(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)?,
            smem_reserved_per_block: attr(A::CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK)?,
            regs_per_sm: attr(A::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR)?,
            regs_per_block: attr(A::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK)?,
            max_threads_per_sm: attr(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)?,
            max_threads_per_block: attr(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
            max_blocks_per_sm: attr(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR)?,
            sm_clock_mhz: attr(A::CU_DEVICE_ATTRIBUTE_CLOCK_RATE)? / 1000,
            mem_clock_mhz: attr(A::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)? / 1000,
            mem_bus_bits: attr(A::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)?,
            driver_version: format!("{}.{}", driver / 1000, (driver % 1000) / 10),
            nvrtc_version: super::nvrtc::version()
                .map(|(a, b)| format!("{a}.{b}"))
                .unwrap_or_else(|e| e.to_string()),
            pci: [
                attr(A::CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID)?,
                attr(A::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID)?,
                attr(A::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID)?,
            ],
            uuid: ctx
                .uuid()
                .map(|u| uuid_text(&u.bytes.map(|b| b as u8)))
                .map_err(|e| Error::cuda("cuDeviceGetUuid", e))?,
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_uuid_is_spelled_as_nvidia_smi_does() {
        let b: [u8; 16] = std::array::from_fn(|i| (i * 17) as u8);
        assert_eq!(
            super::uuid_text(&b),
            "GPU-00112233-4455-6677-8899-aabbccddeeff"
        );
    }
}
