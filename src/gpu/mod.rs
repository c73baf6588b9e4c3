//! The GPU layer over cudarc: device discovery, NVRTC compilation with an on-disk cache, memory,
//! launches, events and tensor maps. All of tilepipe's `unsafe` lives in this module and its
//! children; each block says why it holds.

pub mod cache;
pub mod cublas;
mod device;
pub mod nvrtc;
mod tensor_map;

pub use device::DeviceInfo;
pub use tensor_map::{L2Promotion, OobFill, Swizzle, TensorMapSpec, encode_tensor_map};

use crate::{Error, Result};
use cudarc::driver::sys::{CUevent_flags, CUfunction_attribute};
use cudarc::driver::{
    CudaContext, CudaEvent, CudaFunction, CudaSlice, CudaStream, DevicePtr, DeviceRepr,
    LaunchConfig, PushKernelArg,
};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long one launch may take before it is reported as hung.
pub const HANG_LIMIT: Duration = Duration::from_secs(60);

/// Kernel parameters of any workload, passed by value as one `__grid_constant__` struct whose
/// layout the type mirrors. Plain old data (bytemuck's Pod: no padding, any bit pattern valid),
/// so handing its bytes to the driver is sound for every such type.
#[repr(transparent)]
struct Params<P>(P);

// SAFETY: P is Pod: its bytes are exactly what the kernel's parameter struct receives.
unsafe impl<P: bytemuck::Pod> DeviceRepr for Params<P> {}

/// Registers, shared and local memory, as the driver reports them for a loaded kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionResources {
    pub registers: u32,
    pub static_smem: u32,
    pub local_bytes: u32,
    pub max_threads: u32,
}

pub struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    pub info: DeviceInfo,
}

pub struct Kernel {
    func: CudaFunction,
    pub resources: FunctionResources,
}

/// A device allocation of raw bytes.
pub type DevBuf = CudaSlice<u8>;

/// Page-locked host memory mapped into the device's address space: what a kernel writes there the
/// host reads with no CUDA call, so it outlives a fault that loses the context (and device memory
/// with it). Read and written with volatile accesses only between launches.
pub struct Mapped {
    host: *mut u8,
    bytes: usize,
    device: u64,
    /// Kept so that the context outlives the allocation it frees.
    ctx: Arc<CudaContext>,
}

// SAFETY: the allocation belongs to this value alone and lives until it drops; every access is a
// volatile byte read or write through the pointer, made while no kernel writes it.
unsafe impl Send for Mapped {}
// SAFETY: as for Send: shared use only reads or zeroes bytes between launches.
unsafe impl Sync for Mapped {}

impl Mapped {
    /// The address a kernel writes it at.
    pub fn device_ptr(&self) -> u64 {
        self.device
    }

    pub fn read(&self) -> Vec<u8> {
        // SAFETY: every i < bytes lies in the allocation.
        (0..self.bytes)
            .map(|i| unsafe { self.host.add(i).read_volatile() })
            .collect()
    }

    pub fn zero(&self) {
        for i in 0..self.bytes {
            // SAFETY: i < bytes lies in the allocation; no kernel is writing it now.
            unsafe { self.host.add(i).write_volatile(0) }
        }
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        // SAFETY: host came from cuMemHostAlloc in ctx, which this value keeps alive, and is freed
        // once, here. After a lost context the call may fail; the process frees it at exit.
        let _ = self.ctx.bind_to_thread();
        let _ = unsafe { cudarc::driver::result::free_host(self.host.cast()) };
    }
}

fn driver_err(call: &str) -> impl Fn(cudarc::driver::DriverError) -> Error + '_ {
    move |e| Error::cuda(call, e)
}

/// GPUs visible to CUDA. Fails with a clear message when there is no driver or no GPU.
pub fn device_count() -> Result<usize> {
    // SAFETY: only probes whether libcuda can be loaded; no CUDA call is made.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err(Error::NoDriver {
            detail: "libcuda.so could not be loaded".into(),
        });
    }
    let count = CudaContext::device_count().map_err(|e| Error::NoGpu {
        detail: e.to_string(),
    })?;
    if count == 0 {
        return Err(Error::NoGpu {
            detail: "the driver reports 0 devices".into(),
        });
    }
    Ok(count as usize)
}

impl Gpu {
    /// Opens device `ordinal`. Fails with a clear message when there is no driver or no GPU.
    pub fn open(ordinal: usize) -> Result<Gpu> {
        let count = device_count()?;
        if ordinal >= count {
            return Err(Error::BadDevice { ordinal, count });
        }
        let ctx = CudaContext::new(ordinal).map_err(driver_err("cuCtxCreate"))?;
        // SAFETY: tilepipe uses one stream and orders all work on it itself, so cudarc's per-buffer
        // event tracking (extra event records inside timed regions) is switched off before any
        // allocation exists.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.default_stream();
        let info = DeviceInfo::query(&ctx, ordinal)?;
        Ok(Gpu { ctx, stream, info })
    }

    pub fn free_memory(&self) -> Result<u64> {
        let (free, _) = self
            .ctx
            .mem_get_info()
            .map_err(driver_err("cuMemGetInfo"))?;
        Ok(free as u64)
    }

    /// Allocates `bytes` (uninitialised); when the device is full, says what it was for, the bytes
    /// asked and the bytes free.
    pub fn alloc(&self, bytes: usize, what: &str) -> Result<DevBuf> {
        let free = self.free_memory()?;
        let oom = |free: u64| Error::OutOfMemory {
            what: what.to_string(),
            needed: bytes as u64,
            free,
        };
        // 64 MiB stay free for the driver, modules and launches
        if (bytes as u64).saturating_add(64 << 20) > free {
            return Err(oom(free));
        }
        // SAFETY: every buffer is written (upload, poison or memset) before a kernel reads it.
        unsafe { self.stream.alloc::<u8>(bytes.max(1)) }.map_err(|e| match e.0 {
            // free again: what the failed attempt found, not what the check before it saw
            cudarc::driver::sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY => {
                oom(self.free_memory().unwrap_or(free))
            }
            _ => Error::cuda("cuMemAlloc", e),
        })
    }

    /// `bytes` of zeroed host memory mapped for the device (`Mapped`).
    pub fn alloc_mapped(&self, bytes: usize) -> Result<Mapped> {
        self.ctx
            .bind_to_thread()
            .map_err(driver_err("cuCtxSetCurrent"))?;
        let flags = cudarc::driver::sys::CU_MEMHOSTALLOC_DEVICEMAP;
        // SAFETY: allocates with this context current; the pointer is checked before any use.
        let host = unsafe { cudarc::driver::result::malloc_host(bytes.max(1), flags) }
            .map_err(driver_err("cuMemHostAlloc"))?
            .cast::<u8>();
        let mut device = 0;
        // SAFETY: host is a live cuMemHostAlloc allocation made with DEVICEMAP; device is written.
        unsafe { cudarc::driver::sys::cuMemHostGetDevicePointer_v2(&mut device, host.cast(), 0) }
            .result()
            .map_err(driver_err("cuMemHostGetDevicePointer"))?;
        let m = Mapped {
            host,
            bytes,
            device,
            ctx: self.ctx.clone(),
        };
        m.zero();
        Ok(m)
    }

    /// Writes `host` into `dst` at byte `offset`.
    pub fn write_at(&self, dst: &mut DevBuf, offset: usize, host: &[u8]) -> Result<()> {
        let mut view = dst.slice_mut(offset..offset + host.len());
        self.stream
            .memcpy_htod(host, &mut view)
            .map_err(driver_err("cuMemcpyHtoD"))
    }

    pub fn upload(&self, host: &[u8], what: &str) -> Result<DevBuf> {
        let mut d = self.alloc(host.len(), what)?;
        self.stream
            .memcpy_htod(host, &mut d)
            .map_err(driver_err("cuMemcpyHtoD"))?;
        Ok(d)
    }

    pub fn download(&self, src: &DevBuf) -> Result<Vec<u8>> {
        self.stream
            .clone_dtoh(src)
            .map_err(driver_err("cuMemcpyDtoH"))
    }

    pub fn fill(&self, dst: &mut DevBuf, byte: u8) -> Result<()> {
        let (ptr, _sync) = dst.device_ptr(&self.stream);
        // SAFETY: ptr addresses dst.len() bytes owned by dst for the duration of the call.
        unsafe {
            cudarc::driver::result::memset_d8_async(ptr, byte, dst.len(), self.stream.cu_stream())
        }
        .map_err(driver_err("cuMemsetD8Async"))
    }

    /// Device-to-device copy of `bytes` from the start of src to the start of dst.
    pub fn copy(&self, src: &DevBuf, dst: &mut DevBuf, bytes: usize) -> Result<()> {
        assert!(bytes <= src.len() && bytes <= dst.len());
        let (s, _a) = src.device_ptr(&self.stream);
        let (d, _b) = dst.device_ptr(&self.stream);
        // SAFETY: both ranges lie inside their allocations (asserted above) and do not overlap.
        unsafe { cudarc::driver::result::memcpy_dtod_async(d, s, bytes, self.stream.cu_stream()) }
            .map_err(driver_err("cuMemcpyDtoDAsync"))
    }

    /// Device-to-device copy of `bytes` inside one buffer, from offset `from` to offset `to`.
    pub fn copy_within(
        &self,
        buf: &mut DevBuf,
        from: usize,
        to: usize,
        bytes: usize,
    ) -> Result<()> {
        assert!(from.max(to) + bytes <= buf.len(), "copy inside the buffer");
        assert!(
            from + bytes <= to || to + bytes <= from,
            "ranges do not overlap"
        );
        let (base, _sync) = buf.device_ptr(&self.stream);
        // SAFETY: both ranges lie inside the allocation and do not overlap (asserted above).
        unsafe {
            cudarc::driver::result::memcpy_dtod_async(
                base + to as u64,
                base + from as u64,
                bytes,
                self.stream.cu_stream(),
            )
        }
        .map_err(driver_err("cuMemcpyDtoDAsync"))
    }

    pub fn ptr(&self, buf: &DevBuf) -> u64 {
        buf.device_ptr(&self.stream).0
    }

    /// Loads a cubin and reads the kernel's resources from the driver.
    pub fn load(&self, cubin: &[u8], name: &str) -> Result<Kernel> {
        let module = self
            .ctx
            .load_module(cudarc::nvrtc::Ptx::from_binary(cubin.to_vec()))
            .map_err(driver_err("cuModuleLoadData"))?;
        let func = module
            .load_function(name)
            .map_err(driver_err("cuModuleGetFunction"))?;
        let get = |a: CUfunction_attribute| {
            func.get_attribute(a)
                .map(|v| v as u32)
                .map_err(driver_err("cuFuncGetAttribute"))
        };
        let resources = FunctionResources {
            registers: get(CUfunction_attribute::CU_FUNC_ATTRIBUTE_NUM_REGS)?,
            static_smem: get(CUfunction_attribute::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?,
            local_bytes: get(CUfunction_attribute::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)?,
            max_threads: get(CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
        };
        Ok(Kernel { func, resources })
    }

    /// Raises the kernel's dynamic shared-memory limit (needed above 48 KB) and returns the
    /// blocks per SM the driver's occupancy calculator allows at this block size.
    pub fn prepare(&self, k: &Kernel, threads: u32, dyn_smem: u32) -> Result<u32> {
        k.func
            .set_attribute(
                CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                dyn_smem as i32,
            )
            .map_err(driver_err(
                "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)",
            ))?;
        k.func
            .occupancy_max_active_blocks_per_multiprocessor(threads, dyn_smem as usize, None)
            .map_err(driver_err("cuOccupancyMaxActiveBlocksPerMultiprocessor"))
    }

    /// Clusters of `cluster` blocks (the kernel's compile-time cluster dimensions) that can be
    /// resident on the GPU at once: a cluster must fit in one GPC, so this can be fewer than the
    /// blocks per SM times the SMs over `cluster`.
    pub fn resident_clusters(
        &self,
        k: &Kernel,
        threads: u32,
        dyn_smem: u32,
        cluster: u32,
    ) -> Result<u32> {
        let cfg = LaunchConfig {
            grid_dim: (cluster, 1, 1),
            block_dim: (threads, 1, 1),
            shared_mem_bytes: dyn_smem,
        };
        k.func
            .occupancy_max_active_clusters(cfg, &self.stream)
            .map_err(driver_err("cuOccupancyMaxActiveClusters"))
    }

    /// Submits one launch; the return code of cuLaunchKernel is checked here, faults inside the
    /// kernel surface at the next `finish`.
    pub fn launch<P: bytemuck::Pod>(
        &self,
        k: &Kernel,
        grid: u32,
        threads: u32,
        dyn_smem: u32,
        params: &P,
    ) -> Result<()> {
        let cfg = LaunchConfig {
            grid_dim: (grid, 1, 1),
            block_dim: (threads, 1, 1),
            shared_mem_bytes: dyn_smem,
        };
        let params = Params(*params);
        let mut b = self.stream.launch_builder(&k.func);
        b.arg(&params);
        // SAFETY: the kernel takes exactly one argument, a `const __grid_constant__` struct whose
        // layout P mirrors (each workload asserts its size on both sides); every pointer in it is a live allocation of the sizes the
        // kernel was built for (checked by the caller's plan).
        unsafe { b.launch(cfg) }
            .map(|_| ())
            .map_err(driver_err("cuLaunchKernel"))
    }

    /// Launches `tilepipe_smem_poison` (kernels/poison.cu), prepared for `bytes` of dynamic shared
    /// memory, on `blocks` blocks: every block fills its whole shared memory with all-ones bytes.
    pub fn poison_shared_memory(&self, k: &Kernel, blocks: u32, bytes: u32) -> Result<()> {
        let cfg = LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: bytes,
        };
        let mut b = self.stream.launch_builder(&k.func);
        b.arg(&bytes);
        // SAFETY: the kernel takes one `u32`, the bytes it writes, which never exceed the dynamic
        // shared memory of the launch; it touches no global memory.
        unsafe { b.launch(cfg) }
            .map(|_| ())
            .map_err(driver_err("cuLaunchKernel(tilepipe_smem_poison)"))
    }

    /// Waits for all submitted work, polling so that a kernel that never ends is reported after
    /// `limit` instead of blocking forever, and surfaces any asynchronous fault.
    pub fn finish(&self, what: &str, limit: Duration) -> Result<()> {
        let done = self.event(false)?;
        done.record(&self.stream)
            .map_err(driver_err("cuEventRecord"))?;
        let start = Instant::now();
        loop {
            match done.try_is_complete() {
                Ok(true) => {
                    return self
                        .stream
                        .synchronize()
                        .map_err(driver_err("cuStreamSynchronize"));
                }
                Ok(false) if start.elapsed() < limit => {
                    std::thread::sleep(Duration::from_micros(50))
                }
                Ok(false) => {
                    return Err(Error::Hung {
                        variant: what.to_string(),
                        seconds: limit.as_secs(),
                    });
                }
                Err(e) => return Err(Error::cuda(&format!("kernel {what}"), e)),
            }
        }
    }

    /// An event; `timing` true makes one that elapsed_ms can read (cudarc's default cannot).
    pub fn event(&self, timing: bool) -> Result<CudaEvent> {
        let flags = if timing {
            CUevent_flags::CU_EVENT_DEFAULT
        } else {
            CUevent_flags::CU_EVENT_DISABLE_TIMING
        };
        self.ctx
            .new_event(Some(flags))
            .map_err(driver_err("cuEventCreate"))
    }

    pub fn record(&self, ev: &CudaEvent) -> Result<()> {
        ev.record(&self.stream).map_err(driver_err("cuEventRecord"))
    }

    /// Whether the stream has passed `ev` (recorded earlier).
    pub fn reached(&self, ev: &CudaEvent) -> Result<bool> {
        ev.try_is_complete().map_err(driver_err("cuEventQuery"))
    }

    pub fn elapsed_ms(&self, start: &CudaEvent, end: &CudaEvent) -> Result<f32> {
        start
            .elapsed_ms(end)
            .map_err(driver_err("cuEventElapsedTime"))
    }
}
