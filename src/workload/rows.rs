//! Row tiles of an activation view X [tokens x hidden] that may be strided and offset (`View`), the
//! problem every workload here takes: seeded inputs, what each mechanism needs of a view, the tensor map of a row tile, and the kernel parameters (`RowParams` in
//! kernels/common/rows.cuh). The output Y is dense.

use super::{View, Workload};
use crate::Result;
use crate::dtype::DType;
use crate::gpu::{L2Promotion, OobFill, Swizzle, TensorMapSpec};
use crate::pipeline::{BuildConfig, Variant};
use crate::pipeline::{Control, Ctl, Mechanism};
use bytemuck::{Pod, Zeroable};
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, StandardNormal};
use rayon::prelude::*;

/// Seeded host inputs of one workload: the whole X allocation (gaps included) and the workload's
/// per-column vector (empty if it has none), in the element type.
pub struct HostData {
    pub workload: &'static dyn Workload,
    pub view: View,
    pub dtype: DType,
    pub x: Vec<u8>,
    pub aux: Vec<u8>,
}

const CHUNK: usize = 1 << 16;

fn chunk_seed(seed: u64, stream: u64, chunk: u64) -> u64 {
    // splitmix64 of (seed, stream, chunk): independent streams, same data for any thread count
    let mut z = seed
        ^ stream.wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ chunk.wrapping_mul(0xD1B5_4A32_D192_ED03);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl HostData {
    /// Random normal activations with a per-row scale (so rows, and tiles, differ in size as well
    /// as content), gap elements of the allocation drawn far larger so a wrong stride or offset
    /// shows, and the workload's own per-column vector. Never zeros or constants.
    pub fn generate(workload: &'static dyn Workload, view: View, dtype: DType, seed: u64) -> Self {
        let es = dtype.size();
        let mut x = vec![0u8; view.alloc * es];
        x.par_chunks_mut(CHUNK * es)
            .enumerate()
            .for_each(|(c, out)| {
                let mut rng = SmallRng::seed_from_u64(chunk_seed(seed, 1, c as u64));
                let mut buf = Vec::with_capacity(out.len());
                for i in 0..out.len() / es {
                    let e = c * CHUNK + i;
                    let in_view = e >= view.offset && {
                        let rel = e - view.offset;
                        rel / view.row_stride < view.tokens && rel % view.row_stride < view.hidden
                    };
                    let z: f32 = StandardNormal.sample(&mut rng);
                    let v = if in_view {
                        let row = (e - view.offset) / view.row_stride;
                        z * row_scale(seed, row)
                    } else {
                        64.0 + 16.0 * z
                    };
                    dtype.push(v, &mut buf);
                }
                out.copy_from_slice(&buf);
            });
        HostData {
            workload,
            view,
            dtype,
            x,
            aux: workload.aux(&view, dtype, seed),
        }
    }

    pub fn x_at(&self, row: usize, col: usize) -> f64 {
        self.dtype.get(&self.x, self.view.index(row, col))
    }

    /// The workload's f64 reference for one output row.
    pub fn reference_row(&self, row: usize, out: &mut [f64]) {
        self.workload.reference_row(self, row, out)
    }

    /// The workload's error bounds for this precision.
    pub fn tolerance(&self) -> crate::dtype::Tolerance {
        self.workload.tolerance(self.dtype)
    }
}

/// A seeded vector of `n` values uniform in `range`, in the element type (RMSNorm's gamma).
pub fn uniform_vector(n: usize, range: std::ops::Range<f32>, dtype: DType, seed: u64) -> Vec<u8> {
    let mut rng = SmallRng::seed_from_u64(chunk_seed(seed, 2, 0));
    let mut out = Vec::with_capacity(n * dtype.size());
    for _ in 0..n {
        dtype.push(rng.random_range(range.clone()), &mut out);
    }
    out
}

/// Row scales in [0.25, 4): tiles differ in magnitude, not only in noise.
fn row_scale(seed: u64, row: usize) -> f32 {
    let u = (chunk_seed(seed, 3, row as u64) >> 11) as f64 / (1u64 << 53) as f64;
    (0.25 * 16f64.powf(u)) as f32
}

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
    pub reserved: [u64; 7],
}
const _: () = assert!(std::mem::size_of::<RowParams>() == 256);

/// Number of row tiles of `tile_rows` rows covering the view.
pub fn tiles(view: &View, tile_rows: usize) -> usize {
    view.tokens.div_ceil(tile_rows)
}

/// The row tiles' build constants (HIDDEN, TILE_ROWS in kernels/common/rows.cuh).
pub fn defines(cfg: &BuildConfig) -> Vec<String> {
    vec![
        format!("-DHIDDEN={}", cfg.hidden),
        format!("-DTILE_ROWS={}", cfg.tile_rows),
    ]
}

/// `v` fitted to every view it will run on: the register-staged mechanisms (the sequential
/// baseline among them) narrow their copy unit, down to one element, until it divides each view's
/// offset and row stride in bytes, so they take any element-aligned view. Others are unchanged.
pub fn fit(v: &Variant, views: &[View], cfg: &BuildConfig) -> Variant {
    let mut fitted = v.clone();
    if matches!(v.mechanism, Mechanism::Sync | Mechanism::Regprefetch) {
        let es = cfg.dtype.size();
        let divides = |b: usize, view: &View| {
            (view.offset * es).is_multiple_of(b) && (view.row_stride * es).is_multiple_of(b)
        };
        let mut b = v.copy_bytes as usize;
        while b > es && !views.iter().all(|view| divides(b, view)) {
            b /= 2;
        }
        fitted.copy_bytes = b as u32;
    }
    fitted
}

/// Why `v` cannot take this view, if it cannot: each mechanism's alignment, a tensor map TMA can
/// describe, a view strided enough for the wrong-stride control.
pub fn can_implement(v: &Variant, view: &View, cfg: &BuildConfig) -> Result<(), String> {
    let es = cfg.dtype.size();
    let align = match v.mechanism {
        // direct reads the rows in place as 16-byte vectors
        Mechanism::Bulk | Mechanism::Tma | Mechanism::Direct => 16,
        Mechanism::MemcpyAsyncPipeline | Mechanism::MemcpyAsyncBarrier => {
            v.bytes_per_copy(cfg) as usize
        }
        _ => v.copy_bytes as usize,
    };
    if !(view.offset * es).is_multiple_of(align) || !(view.row_stride * es).is_multiple_of(align) {
        return Err(format!(
            "rows must start {align}-byte aligned: offset {} B and row stride {} B must be multiples of {align}",
            view.offset * es,
            view.row_stride * es
        ));
    }
    if v.mechanism == Mechanism::Tma
        && let Err(e) = row_map(view, cfg.dtype, cfg.tile_rows, 0, None)
    {
        return Err(format!("no valid tensor map: {e}"));
    }
    if v.control == Some(Control::WrongStride) && view.row_stride < view.hidden + 16 / es {
        return Err("the wrong-stride control needs a view strided by at least 16 bytes".into());
    }
    Ok(())
}

/// Width (elements) of the innermost TMA dimension for rows of `hidden`: the largest divisor of
/// hidden that fits a box (<= 256) with a whole number of 16-byte units, leaving <= 256 chunks.
pub fn row_chunk(hidden: usize, dtype: DType) -> Option<usize> {
    (1..=256usize.min(hidden)).rev().find(|&c| {
        hidden.is_multiple_of(c) && (c * dtype.size()).is_multiple_of(16) && hidden / c <= 256
    })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::TensorMapSpec;

    #[test]
    fn the_baseline_fits_any_element_aligned_view() {
        let all = Variant::catalogue();
        let by = |n: &str| all.iter().find(|v| v.name == n).unwrap().clone();
        let (sync, cp) = (by("sync"), by("cpasync-cg16-s2"));
        let view =
            |stride, offset, dt| View::new(64, 4096, Some(stride), offset, None, dt).unwrap();
        for (dt, stride, offset, want) in [
            (DType::Bf16, 4096, 0, 16),
            (DType::Bf16, 4096, 1, 2),
            (DType::Bf16, 4100, 0, 8),
            (DType::F16, 4098, 4, 4),
            (DType::F32, 4096, 3, 4),
            (DType::F32, 4098, 0, 8),
        ] {
            let cfg = BuildConfig::new(dt, 4096, None);
            let v = view(stride, offset, dt);
            let fitted = fit(&sync, &[v], &cfg);
            assert_eq!(
                fitted.copy_bytes, want,
                "{dt} stride {stride} offset {offset}"
            );
            assert_eq!(can_implement(&fitted, &v, &cfg), Ok(()));
            // the fitted unit divides every view at once
            let aligned = view(4096, 0, dt);
            assert_eq!(fit(&sync, &[aligned, v], &cfg).copy_bytes, want);
            // other mechanisms are not narrowed: they take the view or say why not
            assert_eq!(fit(&cp, &[v], &cfg), cp);
            if want < 16 {
                let why = can_implement(&cp, &v, &cfg).unwrap_err();
                assert!(why.contains("16-byte aligned"), "{why}");
            }
        }
    }

    #[test]
    fn inputs_are_seeded_random_and_gaps_differ() {
        let view = View::new(70, 64, Some(80), 16, None, DType::Bf16).unwrap();
        let w = &crate::workload::copy::Copy;
        let a = HostData::generate(w, view, DType::Bf16, 7);
        let b = HostData::generate(w, view, DType::Bf16, 7);
        let c = HostData::generate(w, view, DType::Bf16, 8);
        assert_eq!(a.x, b.x);
        assert_ne!(a.x, c.x);
        let vals: Vec<f64> = (0..64).map(|i| a.x_at(5, i)).collect();
        assert!(vals.iter().any(|v| *v != vals[0]), "row is constant");
        assert!(vals.iter().all(|v| v.abs() < 40.0));
        // the gap between rows holds the large filler values
        let gap = a.dtype.get(&a.x, view.index(5, 64) + 3);
        assert!(gap > 20.0, "{gap}");
    }

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
    fn each_mechanism_names_what_it_needs_of_a_view() {
        let c = BuildConfig::new(DType::Bf16, 4096, None);
        let cp = Variant::cpasync(2, 16);
        let ok = View::new(100, 4096, Some(4160), 64, None, DType::Bf16).unwrap();
        assert_eq!(can_implement(&cp, &ok, &c), Ok(()));
        let odd = View::new(100, 4096, Some(4100), 4, None, DType::Bf16).unwrap();
        let why = can_implement(&cp, &odd, &c).unwrap_err();
        assert!(why.contains("16-byte aligned"), "{why}");
        // 4-byte copies take rows aligned to 4 bytes
        assert_eq!(can_implement(&Variant::cpasync(2, 4), &odd, &c), Ok(()));
        let tma = Variant::ring(Mechanism::Tma, 2, false);
        let why = can_implement(&tma, &odd, &c).unwrap_err();
        assert!(why.contains("aligned"), "{why}");
        // direct reads 16-byte vectors in place: any 16-byte aligned stride, never narrowed
        let direct = Variant::with_stages(Mechanism::Direct, 1, false);
        assert_eq!(can_implement(&direct, &ok, &c), Ok(()));
        let why = can_implement(&direct, &odd, &c).unwrap_err();
        assert!(why.contains("16-byte aligned"), "{why}");
        assert_eq!(fit(&direct, &[odd], &c), direct);
        let dense = View::new(100, 4096, None, 0, None, DType::Bf16).unwrap();
        let ctl = Variant::controls()
            .into_iter()
            .find(|v| v.control == Some(Control::WrongStride))
            .unwrap();
        assert!(
            can_implement(&ctl, &dense, &c)
                .unwrap_err()
                .contains("strided")
        );
        assert_eq!(can_implement(&ctl, &ok, &c), Ok(()));
    }

    #[test]
    fn the_row_params_match_the_kernels_layout() {
        // offsets in kernels/common/rows.cuh: tensor map 0, ctl 128, x 160, row_stride 184
        let p = RowParams::default();
        let base = &p as *const RowParams as usize;
        assert_eq!(&p.ctl as *const Ctl as usize - base, 128);
        assert_eq!(&p.x as *const u64 as usize - base, 160);
        assert_eq!(&p.row_stride as *const i64 as usize - base, 184);
        assert_eq!(&p.ntiles as *const i32 as usize - base, 196);
        assert_eq!(std::mem::align_of::<RowParams>(), 64);
    }
}
