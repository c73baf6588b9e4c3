//! Turns variants into ready kernels on one GPU (build through the cache, load, resources,
//! occupancy, SASS evidence) and runs them on device data with every fault checked.

use crate::check::compare;
use crate::evidence::resources::{Resources, SmLimits, occupancy};
use crate::evidence::sass::{self, SassEvidence};
use crate::gpu::{self, DevBuf, Gpu, Kernel};
use crate::kernels::{self, Built};
use crate::pipeline::Ctl;
use crate::pipeline::{BuildConfig, Control, Variant};
use crate::workload::rows::{self, RowParams};
use crate::workload::{HostData, View, Workload};
use crate::{Error, Result, dtype::DType};

pub use crate::engine::{CacheStats, Engine, HANG_LIMIT, WAIT_TIMEOUT_NS, sources_note};

pub struct Harness {
    /// The GPU and everything that does not depend on the workload.
    pub engine: Engine,
    /// What every kernel this harness builds computes.
    pub workload: &'static dyn Workload,
}

impl std::ops::Deref for Harness {
    type Target = Engine;
    fn deref(&self) -> &Engine {
        &self.engine
    }
}

pub struct Prepared {
    pub variant: Variant,
    pub cfg: BuildConfig,
    pub built: Built,
    kernel: Kernel,
    pub resources: Resources,
    pub sass: SassEvidence,
}

impl Harness {
    /// Why `v` cannot run on this GPU at all, if it cannot.
    pub fn unsupported_here(&self, v: &Variant, cfg: &BuildConfig) -> Option<String> {
        v.unsupported_on(self.info().arch.sm(), self.info().smem_per_block_optin, cfg)
    }

    /// Why `v` cannot run here on `view`, if it cannot.
    pub fn unsupported(&self, v: &Variant, view: &View, cfg: &BuildConfig) -> Option<String> {
        self.unsupported_here(v, cfg)
            .or_else(|| self.workload.can_implement(v, view, cfg).err())
    }

    /// Builds every job in parallel (NVRTC is thread-safe), through the cache.
    pub fn build_all(&self, jobs: &[(Variant, BuildConfig)]) -> Vec<Result<Built>> {
        self.build_each(
            jobs,
            |(v, cfg)| format!("{} {}", v.name, cfg.dtype),
            |(v, cfg)| {
                kernels::build(
                    self.workload,
                    v,
                    cfg,
                    self.info().arch,
                    &self.tc,
                    self.nvrtc_version(),
                    &self.cache,
                )
            },
        )
    }

    /// SASS evidence of a build. Stress, timeline and stage-probe builds are not examined: their
    /// evidence is their clean build's.
    pub fn evidence(
        &self,
        variant: &Variant,
        cfg: &BuildConfig,
        built: &Built,
    ) -> Result<SassEvidence> {
        if cfg.stress != 0 || cfg.trace_tiles != 0 || cfg.only != 0 {
            return Ok(SassEvidence {
                tool: None,
                census: None,
                attestation: crate::evidence::sass::Attestation::Unverified {
                    reason: "instrumented build: see the clean build's evidence".into(),
                },
                excerpt: None,
                listing: String::new(),
            });
        }
        sass::examine(
            &built.cubin,
            &self.tc,
            self.workload.kernel().entry,
            variant.claim(),
        )
    }

    /// Loads a build and records its resources and occupancy beside its SASS evidence.
    pub fn prepare(
        &self,
        variant: &Variant,
        cfg: &BuildConfig,
        built: Built,
        sass: SassEvidence,
    ) -> Result<Prepared> {
        let kernel = self.gpu.load(&built.cubin, self.workload.kernel().entry)?;
        let threads = variant.threads(cfg);
        let dynamic_smem = variant.dynamic_smem(cfg);
        let driver_blocks_per_sm = self.gpu.prepare(&kernel, threads, dynamic_smem)?;
        let f = kernel.resources;
        let occupancy = occupancy(
            &SmLimits::of(self.info()),
            threads,
            f.registers,
            f.static_smem,
            dynamic_smem,
        );
        Ok(Prepared {
            variant: variant.clone(),
            cfg: *cfg,
            built,
            kernel,
            resources: Resources {
                threads,
                function: f,
                dynamic_smem,
                slot_footprint: dynamic_smem,
                occupancy,
                driver_blocks_per_sm,
            },
            sass,
        })
    }

    /// The grid timing launches: persistent (as many blocks as can be resident, never more than
    /// there are tiles), except for `direct`, which launches one block per tile as Triton's
    /// kernels do: with no pipeline to keep filled, the block scheduler starting a fresh block the
    /// moment a row finishes keeps more loads in flight than a block walking tiles in turn.
    pub fn persistent_grid(&self, p: &Prepared, ntiles: usize) -> u32 {
        if p.variant.mechanism == crate::pipeline::Mechanism::Direct {
            return (ntiles as u32).max(1);
        }
        let resident = p.resources.driver_blocks_per_sm.max(1) * self.info().sm_count;
        resident.min(ntiles as u32).max(1)
    }

    /// Runs `p` once on `d` with the output and every SM's shared memory poisoned and the L2
    /// scrubbed first, waits (bounded), surfaces in-kernel timeouts and faults, and returns the
    /// output.
    pub fn run_checked(
        &self,
        p: &Prepared,
        d: &mut DeviceData,
        grid: u32,
        seed: u32,
    ) -> Result<Vec<u8>> {
        self.gpu.fill(&mut d.y, DType::POISON_BYTE)?;
        self.gpu.fill(&mut d.status, 0)?;
        self.scrub_and_poison(seed)?;
        let params = d.params(&self.gpu, p, seed)?;
        self.gpu.launch(
            &p.kernel,
            grid,
            p.resources.threads,
            p.resources.dynamic_smem,
            &params,
        )?;
        self.gpu.finish(&p.variant.name, HANG_LIMIT)?;
        d.check_status(&self.gpu, &p.variant.name)?;
        self.gpu.download(&d.y)
    }

    pub fn launch(&self, p: &Prepared, grid: u32, params: &RowParams) -> Result<()> {
        self.gpu.launch(
            &p.kernel,
            grid,
            p.resources.threads,
            p.resources.dynamic_smem,
            params,
        )
    }
}

pub use rows::tiles;

/// One problem's buffers on the device.
pub struct DeviceData {
    /// Bound on each in-kernel wait (ns).
    pub wait_timeout_ns: u64,
    pub view: View,
    pub dtype: DType,
    pub x: DevBuf,
    pub y: DevBuf,
    /// The workload's per-column vector, if it has one.
    pub aux: Option<DevBuf>,
    pub status: DevBuf,
}

impl DeviceData {
    pub fn upload(gpu: &Gpu, data: &HostData) -> Result<DeviceData> {
        let out_bytes = data.view.elements() * data.dtype.size();
        Ok(DeviceData {
            wait_timeout_ns: WAIT_TIMEOUT_NS,
            view: data.view,
            dtype: data.dtype,
            x: gpu.upload(&data.x, "the input X")?,
            y: gpu.alloc(out_bytes, "the output Y")?,
            aux: if data.aux.is_empty() {
                None
            } else {
                Some(gpu.upload(&data.aux, "the per-column vector")?)
            },
            status: gpu.alloc(32, "the status word")?,
        })
    }

    /// Timing data for a large contiguous view: a seeded random block of at most `block_bytes`
    /// generated on the host and repeated on the device to fill the view. The values are random
    /// (never a constant); only their period is the block. Host generation and upload of the whole
    /// view cost seconds per GiB, which a sweep of many points pays once per worker.
    pub fn repeated(
        gpu: &Gpu,
        workload: &'static dyn Workload,
        view: View,
        dtype: DType,
        seed: u64,
        block_bytes: usize,
    ) -> Result<DeviceData> {
        let row_bytes = view.hidden * dtype.size();
        let contiguous = view.offset == 0 && view.row_stride == view.hidden;
        let rows = (block_bytes / row_bytes).clamp(1, view.tokens);
        if !contiguous || rows == view.tokens {
            return Self::upload(gpu, &HostData::generate(workload, view, dtype, seed));
        }
        let block = View::new(rows, view.hidden, None, 0, None, dtype)?;
        let mut d = Self::upload(gpu, &HostData::generate(workload, block, dtype, seed))?;
        let mut x = gpu.alloc(view.elements() * dtype.size(), "the input X")?;
        gpu.copy(&d.x, &mut x, rows * row_bytes)?;
        for (from, to, bytes) in doubling_copies(rows * row_bytes, x.len()) {
            gpu.copy_within(&mut x, from, to, bytes)?;
        }
        d.x = x;
        d.y = gpu.alloc(view.elements() * dtype.size(), "the output Y")?;
        d.view = view;
        Ok(d)
    }

    /// Kernel parameters for `p` on this data: pointers, shape, and for TMA the tensor map
    /// (with the wrong stride for that control).
    pub fn params(&self, gpu: &Gpu, p: &Prepared, seed: u32) -> Result<RowParams> {
        let mut k = params_on(
            gpu,
            p,
            &self.view,
            self.dtype,
            (&self.x, &self.y),
            (self.aux.as_ref(), &self.status),
            seed,
        )?;
        k.ctl.timeout_ns = self.wait_timeout_ns;
        Ok(k)
    }

    /// Parameter sets over enough copies of the first `view.tokens` rows that every timed launch
    /// reads device memory, not L2: copies are added to `rot` until x + y of all sets span 4x L2.
    pub fn rotated(
        &self,
        gpu: &Gpu,
        p: &Prepared,
        view: &View,
        rot: &mut Vec<(DevBuf, DevBuf)>,
    ) -> Result<Vec<RowParams>> {
        let es = self.dtype.size();
        let x_bytes = View::extent(view.tokens, view.hidden, view.row_stride, view.offset) * es;
        let y_bytes = view.elements() * es;
        rot.retain(|(x, y)| x.len() == x_bytes && y.len() == y_bytes);
        let want = rotation_sets(gpu.info.l2_bytes as usize, x_bytes + y_bytes);
        while rot.len() + 1 < want {
            let mut x = gpu.alloc(x_bytes, "a rotated input copy")?;
            gpu.copy(&self.x, &mut x, x_bytes)?;
            rot.push((x, gpu.alloc(y_bytes, "a rotated output")?));
        }
        let side = (self.aux.as_ref(), &self.status);
        let mut sets = vec![params_on(
            gpu,
            p,
            view,
            self.dtype,
            (&self.x, &self.y),
            side,
            0,
        )?];
        for (x, y) in rot.iter() {
            sets.push(params_on(gpu, p, view, self.dtype, (x, y), side, 0)?);
        }
        Ok(sets)
    }

    /// Fails with the block, stage and phase of the first in-kernel wait that timed out.
    pub fn check_status(&self, gpu: &Gpu, variant: &str) -> Result<()> {
        check_status(gpu, &self.status, variant)
    }
}

/// Fails with the block, stage and phase of the first in-kernel wait that timed out, as the
/// kernel wrote them to its status word (`report_timeout` in kernels/common/hooks.cuh).
pub fn check_status(gpu: &Gpu, status: &DevBuf, variant: &str) -> Result<()> {
    let raw = gpu.download(status)?;
    let w: Vec<u32> = raw
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    if w[0] != 0 {
        return Err(Error::WaitTimeout {
            variant: variant.to_string(),
            block: w[1],
            stage: w[2],
            parity: w[3],
            role: if w[4] == 1 {
                "producer".into()
            } else {
                "consumer".into()
            },
            tile: w[5],
        });
    }
    Ok(())
}

/// Parameters for `p` on `view` laid over the buffers (x, y) with (aux, status).
fn params_on(
    gpu: &Gpu,
    p: &Prepared,
    view: &View,
    dtype: DType,
    (x, y): (&DevBuf, &DevBuf),
    (aux, status): (Option<&DevBuf>, &DevBuf),
    seed: u32,
) -> Result<RowParams> {
    let es = dtype.size() as u64;
    let mut k = RowParams {
        ctl: Ctl {
            status: gpu.ptr(status),
            timeout_ns: WAIT_TIMEOUT_NS,
            seed,
            ..Ctl::default()
        },
        x: gpu.ptr(x) + view.offset as u64 * es,
        y: gpu.ptr(y),
        aux: aux.map_or(0, |a| gpu.ptr(a)),
        row_stride: view.row_stride as i64,
        tokens: view.tokens as i32,
        ntiles: tiles(view, p.cfg.tile_rows) as i32,
        ..RowParams::default()
    };
    if p.variant.mechanism == crate::pipeline::Mechanism::Tma {
        let wrong = (p.variant.control == Some(Control::WrongStride))
            .then(|| view.row_stride as u64 * es - 16);
        let spec = rows::row_map(view, dtype, p.cfg.tile_rows, gpu.ptr(x), wrong)
            .map_err(Error::TensorMap)?;
        k.tensor_map = gpu::encode_tensor_map(&spec)?;
    }
    Ok(k)
}

/// Copies (from, to, bytes) that fill `total` bytes from the first `block` bytes already in place,
/// doubling what is filled each time; every copy reads only bytes written before it.
fn doubling_copies(block: usize, total: usize) -> Vec<(usize, usize, usize)> {
    let mut out = Vec::new();
    let mut filled = block.min(total);
    while filled < total {
        let n = filled.min(total - filled);
        out.push((0, filled, n));
        filled += n;
    }
    out
}

/// Buffer sets a timing rotates through so that every launch reads device memory, not L2: enough
/// that the sets' inputs and outputs (`bytes_per_set` each) span 4x the L2, at most 64.
pub fn rotation_sets(l2_bytes: usize, bytes_per_set: usize) -> usize {
    (4 * l2_bytes).div_ceil(bytes_per_set.max(1)).clamp(1, 64)
}

/// Validates `p` on `data`: against the reference when it is the baseline (or no baseline output
/// exists), else bit for bit against the baseline's output.
pub fn verdict(
    out: &[u8],
    data: &HostData,
    tile_rows: usize,
    baseline: Option<(&[u8], &compare::Verdict)>,
) -> compare::Verdict {
    match baseline {
        Some((b, bv)) => compare::against_baseline(out, data, tile_rows, b, bv),
        None => compare::against_reference(out, data, tile_rows),
    }
}

#[cfg(test)]
mod tests {
    use super::doubling_copies;

    /// Every byte past the block is written exactly once, each copy from bytes already written.
    #[test]
    fn doubling_copies_fill_the_buffer_once_from_written_bytes() {
        for (block, total) in [(7, 7), (7, 8), (7, 100), (256, 1 << 20), (3, 5), (10, 4)] {
            let mut written = vec![0u32; total];
            written[..block.min(total)].iter_mut().for_each(|w| *w = 1);
            let copies = doubling_copies(block, total);
            for (from, to, n) in &copies {
                assert!(
                    written[*from..from + n].iter().all(|w| *w > 0),
                    "{block} {total}"
                );
                written[*to..to + n].iter_mut().for_each(|w| *w += 1);
            }
            assert!(
                written.iter().all(|w| *w == 1),
                "{block} {total}: {copies:?}"
            );
            assert!(copies.len() <= (total / block.max(1)).max(1).ilog2() as usize + 1);
        }
    }
}
