//! A row problem on the device: X (with any gaps of its allocation), Y's allocation (its view's
//! rows and gaps), the compute body's per-column vector; the kernel parameters of a launch
//! (`struct RowParams` in kernels/common/rows.cuh), the tensor maps of row tiles, and the rotated
//! copies that make every timed launch read device memory.

use super::catalogue::{self, RowVariant};
use super::config::window_chunk;
use super::{HostData, RowBody, RowProblem, View};
use crate::Error;
use crate::Result;
use crate::dtype::DType;
use crate::gpu::{self, DevBuf, Gpu, L2Promotion, OobFill, Swizzle, TensorMapSpec};
use crate::pipeline::{Control, Ctl, Mechanism};
use bytemuck::{Pod, Zeroable};

/// Kernel parameters of a row workload (`struct RowParams` in kernels/common/rows.cuh), passed by
/// value as a `__grid_constant__` so the tensor map lives in param space.
#[repr(C, align(64))]
#[derive(Debug, Clone, Copy, Default, Pod, Zeroable)]
pub struct RowParams {
    pub tensor_map: [u64; 16],
    pub ctl: Ctl,
    pub x: u64,
    pub y: u64,
    pub aux: u64,
    pub row_stride: i64,
    pub tokens: i32,
    pub ntiles: i32,
    pub y_row_stride: i64,
    pub reserved: [u64; 6],
}
const _: () = assert!(std::mem::size_of::<RowParams>() == 256);

/// Number of row tiles of `tile_rows` rows covering the view.
pub fn tiles(view: &View, tile_rows: usize) -> usize {
    view.tokens.div_ceil(tile_rows)
}

/// Width (elements) of the innermost TMA dimension for rows of `hidden`: the largest divisor of
/// hidden that fits a box (<= 256) with a whole number of 16-byte units, leaving <= 256 chunks.
pub fn row_chunk(hidden: usize, dtype: DType) -> Option<usize> {
    (1..=256usize.min(hidden)).rev().find(|&c| {
        hidden.is_multiple_of(c) && (c * dtype.size()).is_multiple_of(16) && hidden / c <= 256
    })
}

/// The rank-2 map of a view whose rows start inside 16-byte chunks (X_WINDOW TMA): from the chunk
/// that holds the view's first element (a map's base must be 16-byte aligned, a box's start need
/// not be), {that element's offset in its chunk + hidden, tokens} at the view's row stride, and a
/// box of `window_chunk` elements of one row. The kernel places each box at the row's offset as
/// its coordinate, so one descriptor describes every row. `row_stride_bytes_override` exists for
/// the wrong-stride control alone.
pub fn window_map(
    view: &View,
    dtype: DType,
    x_base: u64,
    row_stride_bytes_override: Option<u64>,
) -> Result<TensorMapSpec, String> {
    let es = dtype.size() as u64;
    let first = x_base + view.offset as u64 * es;
    let chunk = window_chunk(view.hidden, dtype).ok_or_else(|| {
        format!(
            "hidden {} has no divisor <= 256 of whole 128-byte units (a box lands 128-byte aligned), so a row is not whole boxes",
            view.hidden
        )
    })?;
    let spec = TensorMapSpec {
        dtype,
        base_addr: first & !15,
        dims: vec![(first % 16) / es + view.hidden as u64, view.tokens as u64],
        strides_bytes: vec![row_stride_bytes_override.unwrap_or(view.row_stride as u64 * es)],
        box_dims: vec![chunk as u32, 1],
        element_strides: vec![1, 1],
        swizzle: Swizzle::None,
        l2_promotion: L2Promotion::B256,
        oob_fill: OobFill::Zero,
    };
    spec.validate()?;
    Ok(spec)
}

/// The rank-3 map of the view {chunk, hidden/chunk, tokens} whose box is one tile of `tile_rows`
/// whole rows, landing in shared memory as dense rows. `row_stride_bytes_override` exists for the
/// wrong-stride control alone.
pub fn row_map(
    view: &View,
    dtype: DType,
    tile_rows: usize,
    x_base: u64,
    row_stride_bytes_override: Option<u64>,
) -> Result<TensorMapSpec, String> {
    let es = dtype.size() as u64;
    let chunk = row_chunk(view.hidden, dtype).ok_or_else(|| {
        format!(
            "hidden {} has no divisor <= 256 of whole 16-byte units leaving <= 256 chunks, so a row is not one box",
            view.hidden
        )
    })?;
    let spec = TensorMapSpec {
        dtype,
        base_addr: x_base + view.offset as u64 * es,
        dims: vec![
            chunk as u64,
            (view.hidden / chunk) as u64,
            view.tokens as u64,
        ],
        strides_bytes: vec![
            chunk as u64 * es,
            row_stride_bytes_override.unwrap_or(view.row_stride as u64 * es),
        ],
        box_dims: vec![chunk as u32, (view.hidden / chunk) as u32, tile_rows as u32],
        element_strides: vec![1, 1, 1],
        swizzle: Swizzle::None,
        l2_promotion: L2Promotion::B256,
        oob_fill: OobFill::Zero,
    };
    spec.validate()?;
    Ok(spec)
}

/// Device bytes that hold an allocation of `bytes`: whole 16-byte chunks, as every CUDA allocation
/// (256-byte aligned, sizes rounded up to its granule) and PyTorch's caching allocator (512-byte
/// blocks) do, so that a window's last chunk, which holds the last byte of a row, lies inside.
pub fn device_bytes(bytes: usize) -> usize {
    bytes.next_multiple_of(16)
}

/// X's allocation on the device, `host` copied into its first bytes.
fn upload_x(gpu: &Gpu, host: &[u8]) -> Result<DevBuf> {
    let mut x = gpu.alloc(device_bytes(host.len()), "the input X")?;
    gpu.write_at(&mut x, 0, host)?;
    Ok(x)
}

/// One row problem's buffers on the device, and the rotated copies timing adds.
pub struct DeviceData {
    pub problem: RowProblem,
    pub x: DevBuf,
    pub y: DevBuf,
    /// The compute body's per-column vector, if it has one.
    pub aux: Option<DevBuf>,
    /// Copies of X (and outputs) that timed launches rotate through.
    rot: Vec<(DevBuf, DevBuf)>,
}

impl DeviceData {
    pub fn upload(gpu: &Gpu, data: &HostData) -> Result<DeviceData> {
        let out_bytes = data.view.out_alloc() * data.dtype.size();
        Ok(DeviceData {
            problem: RowProblem {
                view: data.view,
                dtype: data.dtype,
                tile_rows: data.tile_rows,
            },
            x: upload_x(gpu, &data.x)?,
            y: gpu.alloc(out_bytes, "the output Y")?,
            aux: if data.aux.is_empty() {
                None
            } else {
                Some(gpu.upload(&data.aux, "the per-column vector")?)
            },
            rot: Vec::new(),
        })
    }

    /// Timing data for a large contiguous view: a seeded random block of at most `block_bytes`
    /// generated on the host and repeated on the device to fill the view. The values are random
    /// (never a constant); only their period is the block. Host generation and upload of the whole
    /// view cost seconds per GiB, which a sweep of many points pays once per worker.
    pub fn repeated(
        gpu: &Gpu,
        body: &'static dyn RowBody,
        p: &RowProblem,
        seed: u64,
        block_bytes: usize,
    ) -> Result<DeviceData> {
        let (view, dtype) = (p.view, p.dtype);
        let row_bytes = view.hidden * dtype.size();
        let contiguous = view.offset == 0 && view.row_stride == view.hidden && view.out.is_none();
        let rows = (block_bytes / row_bytes).clamp(1, view.tokens);
        if !contiguous || rows == view.tokens {
            return Self::upload(gpu, &HostData::generate(body, p, seed));
        }
        let block = RowProblem {
            view: View::new(rows, view.hidden, None, 0, None, dtype)?,
            ..*p
        };
        let mut d = Self::upload(gpu, &HostData::generate(body, &block, seed))?;
        let mut x = gpu.alloc(view.elements() * dtype.size(), "the input X")?;
        gpu.copy(&d.x, &mut x, rows * row_bytes)?;
        for (from, to, bytes) in doubling_copies(rows * row_bytes, x.len()) {
            gpu.copy_within(&mut x, from, to, bytes)?;
        }
        d.x = x;
        d.y = gpu.alloc(view.elements() * dtype.size(), "the output Y")?;
        d.problem = *p;
        Ok(d)
    }

    /// This data set to `p`, a dense view of its first rows (a sweep's smaller point), if it holds
    /// them: the same buffers, fewer rows.
    pub fn shrink_to(&mut self, p: &RowProblem) -> bool {
        let (v, q) = (&self.problem.view, &p.view);
        let dense = |v: &View| v.offset == 0 && v.row_stride == v.hidden && v.out.is_none();
        let fits = dense(v)
            && dense(q)
            && (q.hidden, p.dtype, p.tile_rows)
                == (v.hidden, self.problem.dtype, self.problem.tile_rows)
            && q.tokens <= v.tokens;
        if fits {
            self.problem = *p;
        }
        fits
    }

    /// Kernel parameters for `v` on this data: pointers, shapes, and for TMA the tensor map
    /// (with the wrong stride for that control).
    pub fn params(&self, gpu: &Gpu, v: &RowVariant, ctl: Ctl) -> Result<RowParams> {
        params_on(
            gpu,
            v,
            &self.problem,
            (&self.x, &self.y),
            self.aux.as_ref(),
            ctl,
        )
    }

    /// Parameter sets over enough copies of X that every timed launch reads device memory, not
    /// L2: copies are added until x + y of all sets span 4x L2.
    pub fn rotated(&mut self, gpu: &Gpu, v: &RowVariant, ctl: Ctl) -> Result<Vec<RowParams>> {
        let (view, es) = (self.problem.view, self.problem.dtype.size());
        let x_bytes = View::extent(view.tokens, view.hidden, view.row_stride, view.offset) * es;
        let y_bytes = view.out_alloc() * es;
        self.rot
            .retain(|(x, y)| x.len() == device_bytes(x_bytes) && y.len() == y_bytes);
        let want = rotation_sets(gpu.info.l2_bytes as usize, x_bytes + y_bytes);
        while self.rot.len() + 1 < want {
            let mut x = gpu.alloc(device_bytes(x_bytes), "a rotated input copy")?;
            gpu.copy(&self.x, &mut x, x_bytes)?;
            self.rot.push((x, gpu.alloc(y_bytes, "a rotated output")?));
        }
        let mut sets = vec![self.params(gpu, v, ctl)?];
        for (x, y) in &self.rot {
            sets.push(params_on(
                gpu,
                v,
                &self.problem,
                (x, y),
                self.aux.as_ref(),
                ctl,
            )?);
        }
        Ok(sets)
    }
}

/// Parameters for `v` on problem `p` laid over the buffers (x, y) with `aux`.
fn params_on(
    gpu: &Gpu,
    v: &RowVariant,
    p: &RowProblem,
    (x, y): (&DevBuf, &DevBuf),
    aux: Option<&DevBuf>,
    ctl: Ctl,
) -> Result<RowParams> {
    let (view, dtype) = (&p.view, p.dtype);
    let es = dtype.size() as u64;
    let cfg = catalogue::config(v, &p.config());
    let mut k = RowParams {
        ctl,
        x: gpu.ptr(x) + view.offset as u64 * es,
        y: gpu.ptr(y) + view.out_layout().offset as u64 * es,
        aux: aux.map_or(0, |a| gpu.ptr(a)),
        row_stride: view.row_stride as i64,
        tokens: view.tokens as i32,
        ntiles: tiles(view, cfg.tile_rows) as i32,
        y_row_stride: view.out_layout().row_stride as i64,
        ..RowParams::default()
    };
    if v.mechanism == Mechanism::Tma {
        let wrong =
            (v.control == Some(Control::WrongStride)).then(|| view.row_stride as u64 * es - 16);
        let spec = match v.shape.x_window {
            true => window_map(view, dtype, gpu.ptr(x), wrong),
            false => row_map(view, dtype, cfg.tile_rows, gpu.ptr(x), wrong),
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::TensorMapSpec;

    fn good() -> TensorMapSpec {
        let v = View::new(1000, 4096, Some(4160), 64, None, DType::Bf16).unwrap();
        row_map(&v, DType::Bf16, 2, 0x7f00_0000_0000, None).unwrap()
    }

    fn fails(f: impl Fn(&mut TensorMapSpec), needle: &str) {
        let mut s = good();
        f(&mut s);
        let e = s.validate().unwrap_err();
        assert!(e.contains(needle), "expected '{needle}' in '{e}'");
    }

    #[test]
    fn row_map_describes_rows_of_the_view() {
        let s = good();
        assert_eq!(s.dims, vec![256, 16, 1000]);
        assert_eq!(s.strides_bytes, vec![512, 4160 * 2]);
        assert_eq!(s.box_dims, vec![256, 16, 2]);
        assert_eq!(s.base_addr, 0x7f00_0000_0000 + 128);
        assert_eq!(s.box_bytes(), 2 * 4096 * 2);
    }

    #[test]
    fn each_rule_has_a_passing_and_a_failing_case() {
        assert!(good().validate().is_ok());
        fails(|s| s.base_addr += 8, "16-byte aligned");
        fails(|s| s.strides_bytes[1] += 8, "multiple of 16");
        fails(|s| s.strides_bytes[1] = 1 << 40, "below 2^40");
        fails(|s| s.box_dims[2] = 257, "allowed 1..=256");
        fails(|s| s.box_dims[0] = 0, "allowed 1..=256");
        fails(|s| s.box_dims[0] = 12, "multiple of 16");
        fails(|s| s.element_strides[1] = 9, "allowed 1..=8");
        fails(|s| s.dims[2] = 0, "allowed 1..=2^32");
        fails(|s| s.swizzle = Swizzle::B128, "swizzle");
        fails(
            |s| {
                s.dims.push(1);
                s.dims.push(1);
                s.dims.push(1);
            },
            "rank 6",
        );
        fails(
            |s| s.strides_bytes.pop().map(|_| ()).unwrap(),
            "needs 2 strides",
        );
        let mut ok = good();
        ok.box_dims[0] = 8; // 16 bytes of bf16
        ok.swizzle = Swizzle::B32;
        assert!(ok.validate().is_ok());
    }

    /// A view whose rows start inside a chunk: the map starts at that chunk and is wide enough for
    /// the row at its offset; the box is a row's part. Rows of more than one offset (a row stride
    /// off whole chunks) have no map, and the rule is named.
    #[test]
    fn window_maps_start_at_the_chunk_and_keep_the_row_stride() {
        for (dt, offset, phase) in [
            (DType::Bf16, 17, 1),
            (DType::Bf16, 7, 7),
            (DType::F32, 3, 3),
        ] {
            let v = View::new(4099, 3072, Some(3200), offset, None, dt).unwrap();
            let es = dt.size() as u64;
            let base = 0x7f00_0000_0000;
            let s = window_map(&v, dt, base, None).unwrap();
            assert_eq!(s.base_addr, (base + offset as u64 * es) & !15);
            assert_eq!(
                s.base_addr + phase * es,
                base + offset as u64 * es,
                "{dt} {offset}"
            );
            assert_eq!(s.dims, vec![phase + 3072, 4099]);
            assert_eq!(s.strides_bytes, vec![3200 * es]);
            assert_eq!(s.box_dims, vec![256, 1]);
            let wrong = window_map(&v, dt, base, Some(3200 * es - 16)).unwrap();
            assert_eq!(wrong.strides_bytes, vec![3200 * es - 16]);
            let every = View::new(4099, 3072, Some(3073), offset, None, dt).unwrap();
            let e = window_map(&every, dt, base, None).unwrap_err();
            assert!(e.contains("multiple of 16"), "{e}");
        }
        assert_eq!(window_chunk(3072, DType::F32), Some(256));
        assert_eq!(window_chunk(96, DType::F32), Some(96));
        assert_eq!(window_chunk(192, DType::Bf16), Some(192));
        // 1544 = 8 x 193: no part of a row of it is a whole number of 128-byte units
        assert_eq!(window_chunk(1544, DType::Bf16), None);
        let odd = View::new(9, 1544, None, 1, None, DType::Bf16).unwrap();
        let e = window_map(&odd, DType::Bf16, 0, None).unwrap_err();
        assert!(e.contains("128-byte"), "{e}");
    }

    #[test]
    fn offset_that_breaks_alignment_is_named() {
        let v = View::new(10, 4096, None, 3, None, DType::Bf16).unwrap();
        let e = row_map(&v, DType::Bf16, 2, 0x1000, None).unwrap_err();
        assert!(e.contains("16-byte aligned"), "{e}");
    }

    #[test]
    fn chunks_split_rows_into_boxes() {
        assert_eq!(row_chunk(4096, DType::Bf16), Some(256));
        assert_eq!(row_chunk(1544, DType::Bf16), Some(8)); // 1544 = 8 x 193
        assert_eq!(row_chunk(1544, DType::F32), Some(8));
        assert_eq!(row_chunk(8, DType::F32), Some(8));
        // 65536 bf16: chunks of 256 leave 256 chunks, the most a box holds
        assert_eq!(row_chunk(65536, DType::Bf16), Some(256));
        assert_eq!(row_chunk(65536 * 2, DType::Bf16), None);
    }

    #[test]
    fn the_row_params_match_the_kernels_layout() {
        // offsets in kernels/common/rows.cuh: tensor map 0, ctl 128, x 160, row_stride 184,
        // y_row_stride 200
        let p = RowParams::default();
        let base = &p as *const RowParams as usize;
        assert_eq!(&p.ctl as *const Ctl as usize - base, 128);
        assert_eq!(&p.x as *const u64 as usize - base, 160);
        assert_eq!(&p.row_stride as *const i64 as usize - base, 184);
        assert_eq!(&p.ntiles as *const i32 as usize - base, 196);
        assert_eq!(&p.y_row_stride as *const i64 as usize - base, 200);
        assert_eq!(std::mem::align_of::<RowParams>(), 64);
    }

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
