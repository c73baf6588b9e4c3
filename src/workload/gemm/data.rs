//! A GEMM's inputs (seeded normal values rounded to the precision, never constants), its kernel
//! parameters, and the launch grid.

use super::Problem;
use super::catalogue::Tile;
use crate::dtype::DType;
use crate::mechanism::Ctl;
use bytemuck::{Pod, Zeroable};
use rand::SeedableRng;
use rand::rngs::SmallRng;
use rand_distr::{Distribution, StandardNormal};
use rayon::prelude::*;

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
    pub reserved: [u64; 2],
}
const _: () = assert!(std::mem::size_of::<GemmParams>() == 128);

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
            reserved: [0; 2],
        }
    }

    /// One block per tile of C.
    pub fn grid(&self) -> u32 {
        (self.tiles_m * self.tiles_n) as u32
    }
}

/// A and B as the GPU receives them (little-endian bytes of the precision) and as f32 values of
/// exactly those rounded numbers, for the host reference.
pub struct Inputs {
    pub problem: Problem,
    pub a: Vec<u8>,
    pub b: Vec<u8>,
    pub a_vals: Vec<f32>,
    pub b_vals: Vec<f32>,
}

/// `n` standard normal values rounded to `dtype`, in parallel chunks each seeded from `seed`.
fn normal(n: usize, dtype: DType, seed: u64) -> (Vec<u8>, Vec<f32>) {
    const CHUNK: usize = 1 << 16;
    let vals: Vec<f32> = (0..n.div_ceil(CHUNK))
        .into_par_iter()
        .flat_map_iter(|c| {
            let mut rng =
                SmallRng::seed_from_u64(seed ^ (c as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let len = CHUNK.min(n - c * CHUNK);
            (0..len)
                .map(move |_| {
                    let v: f32 = StandardNormal.sample(&mut rng);
                    let mut b = Vec::with_capacity(4);
                    dtype.push(v, &mut b);
                    dtype.get(&b, 0) as f32
                })
                .collect::<Vec<_>>()
        })
        .collect();
    let mut bytes = Vec::with_capacity(n * dtype.size());
    vals.iter().for_each(|&v| dtype.push(v, &mut bytes));
    (bytes, vals)
}

impl Inputs {
    pub fn new(problem: Problem, seed: u64) -> Inputs {
        let (a, a_vals) = normal(problem.m * problem.k, problem.dtype, seed);
        let (b, b_vals) = normal(problem.k * problem.n, problem.dtype, seed ^ 0xB0B);
        Inputs {
            problem,
            a,
            b,
            a_vals,
            b_vals,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
    fn the_grid_covers_every_tile() {
        let p = Problem::new(257, 130, 64, Layout::Kn, DType::F32).unwrap();
        let k = GemmParams::new(&p, &Tile::family(DType::F32), (0, 0, 0, 0), Ctl::default());
        assert_eq!((k.tiles_m, k.tiles_n, k.grid()), (3, 2, 6));
        assert_eq!((k.lda, k.ldb, k.ldc), (64, 130, 130));
    }
}
