//! Attention's inputs (seeded normal values rounded to the precision, never constants), its
//! device buffers, its kernel parameters and the tensor maps of K and V.

use super::Problem;
use super::catalogue::{AttnTile, AttnVariant};
use crate::Result;
use crate::gpu::{DevBuf, Gpu, L2Promotion, OobFill, Swizzle, TensorMapSpec, encode_tensor_map};
use crate::pipeline::{Control, Ctl, Mechanism};
use bytemuck::{Pod, Zeroable};

/// Kernel parameters (`struct AttnParams` in kernels/attention.cu); pointers as device addresses.
#[repr(C, align(64))]
#[derive(Debug, Clone, Copy, Default, Pod, Zeroable)]
pub struct AttnParams {
    pub ctl: Ctl,
    pub q: u64,
    pub k: u64,
    pub v: u64,
    pub o: u64,
    pub zeros: u64,
    pub heads: i32,
    pub seqlen: i32,
    pub q_tiles: i32,
    pub causal: i32,
    pub scale_log2: f32,
    pub reserved: [u32; 9],
    /// CUtensorMaps of K and V (TMA variants; zeros otherwise), each 64-byte aligned in the
    /// kernel's param space as TMA requires (a map at offset 104 faulted every launch).
    pub map_k: [u64; 16],
    pub map_v: [u64; 16],
}
const _: () = assert!(std::mem::size_of::<AttnParams>() == 384);
const _: () = assert!(
    std::mem::offset_of!(AttnParams, map_k) == 128
        && std::mem::offset_of!(AttnParams, map_v) == 256
);

impl AttnParams {
    /// For a block of `tile.bm` query rows.
    pub fn new(
        p: &Problem,
        (q, k, v, o, zeros): (u64, u64, u64, u64, u64),
        ctl: Ctl,
        tile: AttnTile,
    ) -> Self {
        AttnParams {
            ctl,
            q,
            k,
            v,
            o,
            zeros,
            heads: p.heads_total() as i32,
            seqlen: p.seqlen as i32,
            q_tiles: p.seqlen.div_ceil(tile.bm as usize) as i32,
            causal: i32::from(p.causal),
            scale_log2: (p.scale() * std::f64::consts::LOG2_E) as f32,
            ..AttnParams::default()
        }
    }
}

/// The map a TMA variant's boxes of K or V are cut from: {head dim, seqlen, heads}, boxes of 64
/// elements (one 128-byte swizzled panel) x the tile's keys x one head; keys past the last land
/// as zeros. `control` breaks it on purpose: a row stride 16 bytes short.
pub fn kv_map(
    p: &Problem,
    base_addr: u64,
    control: Option<Control>,
    tile: AttnTile,
) -> TensorMapSpec {
    let es = p.dtype.size() as u64;
    let row = p.head_dim as u64 * es;
    let mut spec = TensorMapSpec {
        dtype: p.dtype,
        base_addr,
        dims: vec![p.head_dim as u64, p.seqlen as u64, p.heads_total() as u64],
        strides_bytes: vec![row, row * p.seqlen as u64],
        box_dims: vec![64, tile.bn, 1],
        element_strides: vec![1, 1, 1],
        swizzle: Swizzle::B128,
        l2_promotion: L2Promotion::B256,
        oob_fill: OobFill::Zero,
    };
    if control == Some(Control::WrongStride) {
        spec.strides_bytes[0] -= 16;
    }
    spec
}

/// Q, K and V as the GPU receives them (little-endian bytes of the precision) and as f32 values
/// of exactly those rounded numbers, for the host reference, and the rows of O it checks.
pub struct Inputs {
    pub problem: Problem,
    pub q: Vec<u8>,
    pub k: Vec<u8>,
    pub v: Vec<u8>,
    pub q_vals: Vec<f32>,
    pub k_vals: Vec<f32>,
    pub v_vals: Vec<f32>,
    /// (head, query row) pairs the reference checks.
    pub rows: Vec<(usize, usize)>,
}

impl Inputs {
    pub fn new(problem: Problem, seed: u64) -> Inputs {
        let n = problem.elements() as usize;
        let (q, q_vals) = problem.dtype.normal(n, seed);
        let (k, k_vals) = problem.dtype.normal(n, seed ^ 0x4B);
        let (v, v_vals) = problem.dtype.normal(n, seed ^ 0x56);
        Inputs {
            problem,
            q,
            k,
            v,
            q_vals,
            k_vals,
            v_vals,
            rows: super::rows::checked_rows(&problem, seed),
        }
    }
}

/// A problem's tensors on the device, and a zero source for the copies past the last key.
pub struct Buffers {
    pub problem: Problem,
    pub q: DevBuf,
    pub k: DevBuf,
    pub v: DevBuf,
    pub o: DevBuf,
    zeros: DevBuf,
}

impl Buffers {
    pub fn upload(gpu: &Gpu, x: &Inputs) -> Result<Buffers> {
        let p = x.problem;
        let mut zeros = gpu.alloc(256, "the zero source")?;
        gpu.fill(&mut zeros, 0)?;
        Ok(Buffers {
            problem: p,
            q: gpu.upload(&x.q, "Q")?,
            k: gpu.upload(&x.k, "K")?,
            v: gpu.upload(&x.v, "V")?,
            o: gpu.alloc(p.elements() as usize * p.dtype.size(), "O")?,
            zeros,
        })
    }

    /// The launch's parameters; TMA variants get their tensor maps encoded here.
    pub fn params(&self, gpu: &Gpu, v: &AttnVariant, ctl: Ctl) -> Result<AttnParams> {
        let ptrs = (
            gpu.ptr(&self.q),
            gpu.ptr(&self.k),
            gpu.ptr(&self.v),
            gpu.ptr(&self.o),
            gpu.ptr(&self.zeros),
        );
        let mut params = AttnParams::new(&self.problem, ptrs, ctl, v.shape);
        if v.mechanism == Mechanism::Tma {
            params.map_k = encode_tensor_map(&kv_map(&self.problem, ptrs.1, v.control, v.shape))?;
            params.map_v = encode_tensor_map(&kv_map(&self.problem, ptrs.2, None, v.shape))?;
        }
        Ok(params)
    }
}

/// `vals` as bytes of `dtype` (each rounded), for tests.
#[cfg(test)]
pub fn bytes_of(vals: &[f32], dtype: crate::dtype::DType) -> Vec<u8> {
    let mut out = Vec::with_capacity(vals.len() * dtype.size());
    vals.iter().for_each(|&v| dtype.push(v, &mut out));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DType;

    #[test]
    fn params_describe_the_heads_and_the_maps_cut_panels_of_keys() {
        let p = Problem::new(2, 3, 200, 128, true, DType::Bf16).unwrap();
        let tile = crate::workload::attention::catalogue::TILE;
        let a = AttnParams::new(&p, (1, 2, 3, 4, 5), Ctl::default(), tile);
        assert_eq!((a.heads, a.seqlen, a.q_tiles, a.causal), (6, 200, 4, 1));
        let wide = AttnTile { bm: 128, ..tile };
        let b = AttnParams::new(&p, (1, 2, 3, 4, 5), Ctl::default(), wide);
        assert_eq!(b.q_tiles, 2, "200 rows in blocks of 128");
        assert!((a.scale_log2 as f64 - std::f64::consts::LOG2_E / 128f64.sqrt()).abs() < 1e-6);
        let m = kv_map(&p, 1 << 20, None, tile);
        assert_eq!(m.dims, vec![128, 200, 6]);
        assert_eq!(m.strides_bytes, vec![256, 256 * 200]);
        assert_eq!(
            m.box_bytes(),
            64 * 2 * tile.bn as u64,
            "one 128-byte panel of the tile's keys"
        );
        assert!(m.validate().is_ok());
        let broken = kv_map(&p, 1 << 20, Some(Control::WrongStride), tile);
        assert_eq!(
            kv_map(&p, 0, None, AttnTile { bn: 128, ..tile }).box_dims,
            vec![64, 128, 1]
        );
        assert_eq!(broken.strides_bytes[0], 256 - 16);
    }

    #[test]
    fn inputs_are_random_rounded_and_seeded() {
        let p = Problem::new(1, 2, 70, 64, false, DType::F16).unwrap();
        let x = Inputs::new(p, 5);
        assert_eq!(x.q.len(), 2 * 70 * 64 * 2);
        assert_eq!(bytes_of(&x.k_vals, DType::F16), x.k);
        assert_ne!(x.q_vals, x.k_vals);
        assert_ne!(Inputs::new(p, 6).v, x.v);
        let distinct: std::collections::BTreeSet<u32> =
            x.v_vals.iter().map(|v| v.to_bits()).collect();
        assert!(distinct.len() > 100);
    }
}
