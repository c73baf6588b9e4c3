//! RMSNorm + GELU over an activation view X [tokens x hidden] that may be strided and offset:
//! Y = gelu(X * rsqrt(mean(X^2) + eps) * gamma), gelu in its tanh form. Y is dense.

use crate::dtype::DType;
use crate::{Error, Result};
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, StandardNormal};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// The epsilon the kernels are built with (EPS in kernels/rmsnorm.cu).
pub const EPS: f64 = 1e-6;

/// A strided, offset view of the activation tensor, in elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct View {
    pub tokens: usize,
    pub hidden: usize,
    /// Elements between the starts of consecutive rows (>= hidden).
    pub row_stride: usize,
    /// Elements before the first row in the allocation.
    pub offset: usize,
    /// Elements in the underlying allocation.
    pub alloc: usize,
}

impl View {
    /// The smallest allocation that holds the view.
    pub fn extent(tokens: usize, hidden: usize, row_stride: usize, offset: usize) -> usize {
        offset + (tokens.saturating_sub(1)) * row_stride + hidden
    }

    /// Checks the view against what every kernel needs; `alloc` None means "just large enough".
    pub fn new(
        tokens: usize,
        hidden: usize,
        row_stride: Option<usize>,
        offset: usize,
        alloc: Option<usize>,
        dtype: DType,
    ) -> Result<Self> {
        if tokens == 0 || hidden == 0 {
            return Err(Error::InvalidShape(format!(
                "tokens and hidden must be at least 1 (got tokens {tokens}, hidden {hidden})"
            )));
        }
        let vec = 16 / dtype.size();
        if !hidden.is_multiple_of(vec) {
            return Err(Error::InvalidShape(format!(
                "hidden {hidden} is not a multiple of {vec}: every kernel reads rows as 16-byte vectors \
                 ({vec} {dtype} elements); allowed: hidden = {vec}k"
            )));
        }
        let row_stride = row_stride.unwrap_or(hidden);
        if row_stride < hidden {
            return Err(Error::InvalidShape(format!(
                "row stride {row_stride} is smaller than hidden {hidden}: rows would overlap; allowed: stride >= hidden"
            )));
        }
        let extent = Self::extent(tokens, hidden, row_stride, offset);
        let alloc = alloc.unwrap_or(extent);
        if extent > alloc {
            return Err(Error::InvalidShape(format!(
                "the view reaches element {extent} (offset {offset} + {} rows x stride {row_stride} + hidden {hidden}) \
                 but the allocation holds {alloc}; allowed: offset + (tokens-1) x stride + hidden <= allocation",
                tokens - 1
            )));
        }
        Ok(View {
            tokens,
            hidden,
            row_stride,
            offset,
            alloc,
        })
    }

    pub fn index(&self, row: usize, col: usize) -> usize {
        self.offset + row * self.row_stride + col
    }

    pub fn elements(&self) -> usize {
        self.tokens * self.hidden
    }

    /// Bytes a perfect kernel moves through device memory: X read once, Y written once.
    pub fn bytes_moved(&self, dtype: DType) -> u64 {
        2 * (self.elements() * dtype.size()) as u64
    }

    pub fn is_strided(&self) -> bool {
        self.row_stride != self.hidden || self.offset != 0
    }
}

/// Seeded host inputs: the whole X allocation (gaps included) and gamma, in the element type.
pub struct HostData {
    pub view: View,
    pub dtype: DType,
    pub x: Vec<u8>,
    pub gamma: Vec<u8>,
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
    /// shows, and gamma uniform in [0.5, 1.5). Never zeros or constants.
    pub fn generate(view: View, dtype: DType, seed: u64) -> Self {
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
        let mut rng = SmallRng::seed_from_u64(chunk_seed(seed, 2, 0));
        let mut gamma = Vec::with_capacity(view.hidden * es);
        for _ in 0..view.hidden {
            dtype.push(rng.random_range(0.5f32..1.5f32), &mut gamma);
        }
        HostData {
            view,
            dtype,
            x,
            gamma,
        }
    }

    pub fn x_at(&self, row: usize, col: usize) -> f64 {
        self.dtype.get(&self.x, self.view.index(row, col))
    }

    /// f64 reference for one row, from the same rounded inputs the GPU sees.
    pub fn reference_row(&self, row: usize, out: &mut [f64]) {
        let h = self.view.hidden;
        let mut ss = 0.0f64;
        for (c, o) in out.iter_mut().enumerate().take(h) {
            let v = self.x_at(row, c);
            *o = v;
            ss += v * v;
        }
        let inv = 1.0 / (ss / h as f64 + EPS).sqrt();
        for (c, o) in out.iter_mut().enumerate().take(h) {
            *o = gelu(*o * inv * self.dtype.get(&self.gamma, c));
        }
    }
}

/// Row scales in [0.25, 4): tiles differ in magnitude, not only in noise.
fn row_scale(seed: u64, row: usize) -> f32 {
    let u = (chunk_seed(seed, 3, row as u64) >> 11) as f64 / (1u64 << 53) as f64;
    (0.25 * 16f64.powf(u)) as f32
}

/// gelu, tanh form: v * sigmoid(2u), u = sqrt(2/pi) (v + 0.044715 v^3).
pub fn gelu(v: f64) -> f64 {
    let two_u = 2.0 * (2.0 / std::f64::consts::PI).sqrt() * (v + 0.044715 * v * v * v);
    v / (1.0 + (-two_u).exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gelu_matches_hand_values() {
        // tanh-form gelu: 0 -> 0; 1 -> 0.8411920; -1 -> -0.1588080; 3 -> 2.9963627
        assert_eq!(gelu(0.0), 0.0);
        assert!((gelu(1.0) - 0.841_192_0).abs() < 1e-6);
        assert!((gelu(-1.0) + 0.158_808_0).abs() < 1e-6);
        assert!((gelu(3.0) - 2.996_362_7).abs() < 1e-6);
    }

    #[test]
    fn reference_row_by_hand() {
        // one row [3, 4] (f32), gamma [1, 0.5]: mean(x^2) = 12.5, inv = 1/sqrt(12.5 + 1e-6)
        let view = View::new(1, 4, None, 0, None, DType::F32).unwrap();
        let mut d = HostData::generate(view, DType::F32, 1);
        d.x.clear();
        for v in [3.0f32, 4.0, 0.0, 0.0] {
            DType::F32.push(v, &mut d.x);
        }
        d.gamma.clear();
        for v in [1.0f32, 0.5, 1.0, 1.0] {
            DType::F32.push(v, &mut d.gamma);
        }
        let mut out = [0.0; 4];
        d.reference_row(0, &mut out);
        let inv = 1.0 / (25.0f64 / 4.0 + EPS).sqrt();
        assert!((out[0] - gelu(3.0 * inv)).abs() < 1e-15);
        assert!((out[1] - gelu(4.0 * inv * 0.5)).abs() < 1e-15);
        assert_eq!(out[2], 0.0);
        // 3 * 0.4 = 1.2 -> gelu(1.2) = 1.0617028 (0.5 v (1 + tanh(...)) by hand)
        assert!((out[0] - 1.061_702_8).abs() < 1e-6, "{}", out[0]);
    }

    #[test]
    fn view_rejects_bad_shapes_with_reasons() {
        let e = View::new(0, 64, None, 0, None, DType::Bf16)
            .unwrap_err()
            .to_string();
        assert!(e.contains("at least 1"), "{e}");
        let e = View::new(4, 100, None, 0, None, DType::Bf16)
            .unwrap_err()
            .to_string();
        assert!(e.contains("multiple of 8"), "{e}");
        let e = View::new(4, 64, Some(32), 0, None, DType::F32)
            .unwrap_err()
            .to_string();
        assert!(e.contains("smaller than hidden"), "{e}");
        let e = View::new(4, 64, Some(80), 8, Some(300), DType::F32)
            .unwrap_err()
            .to_string();
        assert!(e.contains("allocation holds 300"), "{e}");
        let v = View::new(4, 64, Some(80), 8, Some(312), DType::F32).unwrap();
        assert_eq!(v.index(3, 63), 8 + 240 + 63);
        assert!(v.is_strided());
    }

    #[test]
    fn inputs_are_seeded_random_and_gaps_differ() {
        let view = View::new(70, 64, Some(80), 16, None, DType::Bf16).unwrap();
        let a = HostData::generate(view, DType::Bf16, 7);
        let b = HostData::generate(view, DType::Bf16, 7);
        let c = HostData::generate(view, DType::Bf16, 8);
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
