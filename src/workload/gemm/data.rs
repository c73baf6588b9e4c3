//! A GEMM's inputs (seeded normal values rounded to the precision, never constants, and the
//! elements the host reference checks), its device buffers, its kernel parameters and tensor
//! maps, and the launch grid.

use super::tile::{GemmShape, GemmVariant, Tile};
use super::{Layout, Problem, reference};
use crate::Result;
use crate::gpu::{DevBuf, Gpu, L2Promotion, OobFill, Swizzle, TensorMapSpec, encode_tensor_map};
use crate::pipeline::{Control, Ctl, Mechanism};
use bytemuck::{Pod, Zeroable};

/// Kernel parameters (`struct GemmParams` in kernels/gemm.cu); pointers as device addresses.
#[repr(C, align(64))]
#[derive(Debug, Clone, Copy, Default, Pod, Zeroable)]
pub struct GemmParams {
    pub ctl: Ctl,
    pub a: u64,
    pub b: u64,
    pub c: u64,
    pub zeros: u64,
    pub lda: i64,
    pub ldb: i64,
    pub ldc: i64,
    pub m: i32,
    pub n: i32,
    pub k: i32,
    pub tiles_m: i32,
    pub tiles_n: i32,
    pub group_m: i32,
    /// Split-K: the partial sums, [splits][M][N] f32, and a counter per tile (zero between launches).
    pub workspace: u64,
    pub counters: u64,
    /// CUtensorMaps of A and B (TMA variants; zeros otherwise), and of C (TMA stores).
    pub map_a: [u64; 16],
    pub map_b: [u64; 16],
    pub map_c: [u64; 16],
}
const _: () = assert!(std::mem::size_of::<GemmParams>() == 512);

/// Tile rows of C per raster group: consecutive blocks walk down 8 tile rows before moving right,
/// so the B slices they share are still in L2.
const GROUP_M: u32 = 8;

impl GemmParams {
    /// Parameters for `p` on a tile, with the matrices and the zero source at the given addresses.
    pub fn new(p: &Problem, tile: &Tile, (a, b, c, zeros): (u64, u64, u64, u64), ctl: Ctl) -> Self {
        GemmParams {
            ctl,
            a,
            b,
            c,
            zeros,
            lda: p.lda() as i64,
            ldb: p.ldb() as i64,
            ldc: p.ldc() as i64,
            m: p.m as i32,
            n: p.n as i32,
            k: p.k as i32,
            tiles_m: p.m.div_ceil(tile.bm as usize) as i32,
            tiles_n: p.n.div_ceil(tile.bn as usize) as i32,
            group_m: GROUP_M as i32,
            workspace: 0,
            counters: 0,
            map_a: [0; 16],
            map_b: [0; 16],
            map_c: [0; 16],
        }
    }
}

/// The tensor maps a TMA variant's boxes are cut from (kernels/gemm.cu, `tma_load`): A as {K, M}
/// with boxes of {BK, BM}; B [N x K] as {K, N} with boxes {BK, BN / cluster} (each CTA of a
/// cluster loads its part); B [K x N] as {N, K} with boxes {64, BK}. Rows are 128-byte swizzled as
/// wgmma reads them; past an edge, zeros. `control` breaks A's map on purpose: a row stride 16
/// bytes short, or a box of half the tile's rows.
pub fn tensor_maps(
    p: &Problem,
    shape: &GemmShape,
    (a, b): (u64, u64),
    control: Option<Control>,
) -> (TensorMapSpec, TensorMapSpec) {
    let tile = &shape.tile;
    let mut ma = map2d(p, a, (p.k, p.m, p.lda()), [tile.bk, tile.bm]);
    match control {
        Some(Control::WrongStride) => ma.strides_bytes[0] -= 16,
        Some(Control::WrongBox) => ma.box_dims[1] /= 2,
        _ => {}
    }
    let mb = match p.layout {
        Layout::Nk => map2d(
            p,
            b,
            (p.k, p.n, p.ldb()),
            [tile.bk, tile.bn / shape.cluster],
        ),
        Layout::Kn => map2d(p, b, (p.n, p.k, p.ldb()), [64, tile.bk]),
    };
    (ma, mb)
}

/// The map a TMA-store epilogue stores C through: {N, M}, boxes of 64 x 64 in 128-byte-swizzled
/// rows as the consumers stage them (kernels/gemm/wgmma.cuh); nothing is written past an edge.
pub fn store_map(p: &Problem, c: u64) -> TensorMapSpec {
    map2d(p, c, (p.n, p.m, p.ldc()), [64, 64])
}

/// A 2-D map of `dims` = (inner, outer, row stride in elements) over the problem's precision,
/// 128-byte swizzled, zeros past the edges.
fn map2d(
    p: &Problem,
    base_addr: u64,
    dims: (usize, usize, usize),
    box_dims: [u32; 2],
) -> TensorMapSpec {
    let (inner, outer, ld) = dims;
    TensorMapSpec {
        dtype: p.dtype,
        base_addr,
        dims: vec![inner as u64, outer as u64],
        strides_bytes: vec![(ld * p.dtype.size()) as u64],
        box_dims: box_dims.to_vec(),
        element_strides: vec![1, 1],
        swizzle: Swizzle::B128,
        l2_promotion: L2Promotion::B256,
        oob_fill: OobFill::Zero,
    }
}

/// A and B as the GPU receives them (little-endian bytes of the precision) and as f32 values of
/// exactly those rounded numbers, for the host reference, and the elements of C it checks.
pub struct Inputs {
    pub problem: Problem,
    pub a: Vec<u8>,
    pub b: Vec<u8>,
    pub a_vals: Vec<f32>,
    pub b_vals: Vec<f32>,
    pub elements: Vec<(usize, usize)>,
}

impl Inputs {
    pub fn new(problem: Problem, seed: u64) -> Inputs {
        let (a, a_vals) = problem.dtype.normal(problem.m * problem.k, seed);
        let (b, b_vals) = problem.dtype.normal(problem.k * problem.n, seed ^ 0xB0B);
        Inputs {
            problem,
            a,
            b,
            a_vals,
            b_vals,
            elements: reference::checked_elements(&problem, seed),
        }
    }
}

/// The most parts a split-K launch divides K into.
pub const MAX_SPLITS: u32 = 16;
/// The largest split-K workspace a problem gets (MAX_SPLITS planes of f32 partial sums of whole
/// tiles): split-K is for problems of few tiles, such as a decode step's.
pub const WORKSPACE_LIMIT: usize = 256 << 20;

/// A plane holds every tile whole (kernels/gemm.cu, `reduced_here`), so it covers M and N
/// rounded up to the largest split-K tile, 128 x 256, whose sides every other one divides.
fn workspace_bytes(p: &Problem) -> usize {
    MAX_SPLITS as usize * p.m.next_multiple_of(128) * p.n.next_multiple_of(256) * 4
}

/// The split-K counters a problem gets: one per tile of 16 x 64, which covers the tiles of every
/// split-K variant (16 rows of A at the fewest, 128 columns of B).
pub fn counters(p: &Problem) -> usize {
    p.m.div_ceil(16) * p.n.div_ceil(64)
}

/// Why a split-K variant cannot take `p`, if it cannot: its partial sums would not fit.
pub fn split_k_unfit(p: &Problem) -> Option<String> {
    (workspace_bytes(p) > WORKSPACE_LIMIT).then(|| {
        format!(
            "split-K keeps up to {MAX_SPLITS} planes of f32 partial sums of whole tiles, at most {} MiB: M x N = {} x {} needs {} MiB; it is for problems of few tiles (decode shapes)",
            WORKSPACE_LIMIT >> 20,
            p.m,
            p.n,
            workspace_bytes(p) >> 20
        )
    })
}

/// A problem's matrices on the device, a zero source for the copies past an edge, and where the
/// problem takes split-K, its partial sums and per-tile counters (zeroed once; every launch
/// leaves them zero).
pub struct Buffers {
    pub problem: Problem,
    pub a: DevBuf,
    pub b: DevBuf,
    pub c: DevBuf,
    zeros: DevBuf,
    split: Option<(DevBuf, DevBuf)>,
}

impl Buffers {
    pub fn upload(gpu: &Gpu, x: &Inputs) -> Result<Buffers> {
        let p = x.problem;
        let mut zeros = gpu.alloc(256, "the zero source")?;
        gpu.fill(&mut zeros, 0)?;
        let split = match split_k_unfit(&p) {
            Some(_) => None,
            None => {
                let mut counters = gpu.alloc(counters(&p) * 4, "the split-K counters")?;
                gpu.fill(&mut counters, 0)?;
                Some((
                    gpu.alloc(workspace_bytes(&p), "the split-K partial sums")?,
                    counters,
                ))
            }
        };
        Ok(Buffers {
            problem: p,
            a: gpu.upload(&x.a, "A")?,
            b: gpu.upload(&x.b, "B")?,
            c: gpu.alloc(p.m * p.n * p.dtype.size(), "C")?,
            zeros,
            split,
        })
    }

    /// The launch's parameters; TMA variants get their tensor maps encoded here.
    pub fn params(&self, gpu: &Gpu, v: &GemmVariant, ctl: Ctl) -> Result<GemmParams> {
        let ptrs = (
            gpu.ptr(&self.a),
            gpu.ptr(&self.b),
            gpu.ptr(&self.c),
            gpu.ptr(&self.zeros),
        );
        let tile = &v.shape.tile;
        let mut params = GemmParams::new(&self.problem, tile, ptrs, ctl);
        if v.mechanism == Mechanism::Tma {
            let (a, b) = tensor_maps(&self.problem, &v.shape, (ptrs.0, ptrs.1), v.control);
            params.map_a = encode_tensor_map(&a)?;
            params.map_b = encode_tensor_map(&b)?;
        }
        if v.shape.tma_store {
            params.map_c = encode_tensor_map(&store_map(&self.problem, ptrs.2))?;
        }
        if let (true, Some((workspace, counters))) = (v.shape.split_k, &self.split) {
            params.workspace = gpu.ptr(workspace);
            params.counters = gpu.ptr(counters);
        }
        Ok(params)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DType;
    use crate::workload::gemm::Layout;

    #[test]
    fn inputs_are_rounded_random_and_seeded() {
        let p = Problem::new(33, 17, 9, Layout::Nk, DType::Bf16).unwrap();
        let x = Inputs::new(p, 7);
        assert_eq!(x.a.len(), 33 * 9 * 2);
        assert_eq!(x.b_vals.len(), 17 * 9);
        for (i, v) in x.a_vals.iter().enumerate() {
            assert_eq!(DType::Bf16.get(&x.a, i), *v as f64);
        }
        let distinct: std::collections::BTreeSet<u32> =
            x.a_vals.iter().map(|v| v.to_bits()).collect();
        assert!(distinct.len() > 100, "not a constant: {}", distinct.len());
        assert_eq!(Inputs::new(p, 7).a, x.a);
        assert_ne!(Inputs::new(p, 8).a, x.a);
    }

    #[test]
    fn tensor_maps_follow_the_layout_and_break_only_when_asked() {
        let t = GemmShape::plain(Tile::hopper(true));
        let nk = Problem::new(4096, 4096, 256, Layout::Nk, DType::Bf16).unwrap();
        let (a, b) = tensor_maps(&nk, &t, (1 << 20, 1 << 24), None);
        assert_eq!(
            (a.dims.clone(), a.box_dims.clone()),
            (vec![256, 4096], vec![64, 128])
        );
        assert_eq!(
            (b.dims.clone(), b.box_dims.clone()),
            (vec![256, 4096], vec![64, 256])
        );
        assert!(a.validate().is_ok() && b.validate().is_ok());
        assert_eq!(a.box_bytes() + b.box_bytes(), 384 * 128);
        let kn = Problem {
            layout: Layout::Kn,
            ..nk
        };
        let (_, b) = tensor_maps(&kn, &t, (1 << 20, 1 << 24), None);
        assert_eq!(
            (b.dims.clone(), b.box_dims.clone()),
            (vec![4096, 256], vec![64, 64])
        );
        assert_eq!(b.box_bytes() * 4, 256 * 128, "four boxes make B's slice");
        let (w, _) = tensor_maps(&nk, &t, (1 << 20, 1 << 24), Some(Control::WrongStride));
        assert_eq!(w.strides_bytes[0], 512 - 16);
        let (w, _) = tensor_maps(&nk, &t, (1 << 20, 1 << 24), Some(Control::WrongBox));
        assert_eq!(w.box_dims, vec![64, 64]);
        let (c, _) = tensor_maps(&nk, &t, (1 << 20, 1 << 24), Some(Control::TxShort));
        assert_eq!(c.strides_bytes[0], 512);
    }

    #[test]
    fn params_count_the_tiles_and_strides() {
        let p = Problem::new(257, 130, 64, Layout::Kn, DType::F32).unwrap();
        let k = GemmParams::new(&p, &Tile::family(DType::F32), (0, 0, 0, 0), Ctl::default());
        assert_eq!((k.tiles_m, k.tiles_n), (3, 2));
        assert_eq!((k.lda, k.ldb, k.ldc), (64, 130, 130));
    }

    #[test]
    fn a_cluster_splits_b_and_c_is_stored_in_swizzled_boxes() {
        let nk = Problem::new(4096, 4096, 256, Layout::Nk, DType::Bf16).unwrap();
        let shape = GemmShape {
            cluster: 2,
            ..GemmShape::plain(Tile::hopper(true))
        };
        let (_, b) = tensor_maps(&nk, &shape, (1 << 20, 1 << 24), None);
        assert_eq!(
            b.box_dims,
            vec![64, 128],
            "each CTA loads half of B's slice"
        );
        let c = store_map(&nk, 1 << 28);
        assert_eq!(
            (c.dims.clone(), c.box_dims.clone()),
            (vec![4096, 4096], vec![64, 64])
        );
        assert_eq!(c.box_bytes(), 64 * 128, "a box is one staging buffer");
        assert!(c.validate().is_ok());
    }
}
