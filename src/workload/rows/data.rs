//! A row problem's seeded inputs: random normal activations with a per-row scale, gap elements of
//! the allocation far larger (so a wrong stride or offset shows), and the compute body's own
//! per-column vector. Never zeros or constants; the same data for any thread count.

use super::{RowBody, RowProblem, View};
use crate::dtype::DType;
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, StandardNormal};
use rayon::prelude::*;

/// Seeded host inputs of one row problem: the whole X allocation (gaps included) and the compute
/// body's per-column vector (empty if it has none), in the element type.
pub struct HostData {
    pub body: &'static dyn RowBody,
    pub view: View,
    pub dtype: DType,
    /// The run's tile height, for naming the tiles a wrong element lies in.
    pub tile_rows: usize,
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
    pub fn generate(body: &'static dyn RowBody, p: &RowProblem, seed: u64) -> Self {
        let (view, dtype) = (p.view, p.dtype);
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
            body,
            view,
            dtype,
            tile_rows: p.tile_rows,
            x,
            aux: body.aux(&view, dtype, seed),
        }
    }

    pub fn x_at(&self, row: usize, col: usize) -> f64 {
        self.dtype.get(&self.x, self.view.index(row, col))
    }

    /// The compute body's f64 reference for one output row.
    pub fn reference_row(&self, row: usize, out: &mut [f64]) {
        self.body.reference_row(self, row, out)
    }

    /// The compute body's error bounds for this precision.
    pub fn tolerance(&self) -> crate::dtype::Tolerance {
        self.body.tolerance(self.dtype)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_are_seeded_random_and_gaps_differ() {
        let view = View::new(70, 64, Some(80), 16, None, DType::Bf16).unwrap();
        let p = RowProblem::new(view, DType::Bf16, Some(2));
        let w = &crate::workload::copy::Copy;
        let a = HostData::generate(w, &p, 7);
        let b = HostData::generate(w, &p, 7);
        let c = HostData::generate(w, &p, 8);
        assert_eq!(a.x, b.x);
        assert_ne!(a.x, c.x);
        let vals: Vec<f64> = (0..64).map(|i| a.x_at(5, i)).collect();
        assert!(vals.iter().any(|v| *v != vals[0]), "row is constant");
        assert!(vals.iter().all(|v| v.abs() < 40.0));
        // the gap between rows holds the large filler values
        let gap = a.dtype.get(&a.x, view.index(5, 64) + 3);
        assert!(gap > 20.0, "{gap}");
    }
}
