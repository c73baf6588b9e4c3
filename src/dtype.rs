//! Element types of the activation tensors and what each one's rounding allows.

use half::{bf16, f16};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DType {
    F32,
    F16,
    Bf16,
}

/// Error bounds against the f64 reference. `rel_l2` bounds ||out - ref|| / ||ref|| over the tensor;
/// the per-element bound |out - ref| <= atol + rtol |ref| catches a single stale tile that the
/// global norm would hide.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Tolerance {
    pub rel_l2: f64,
    pub rtol: f64,
    pub atol: f64,
}

impl DType {
    pub const ALL: [DType; 3] = [DType::F32, DType::F16, DType::Bf16];

    /// `n` standard normal values rounded to this precision, as the GPU receives them (bytes)
    /// and as f32 values of exactly those rounded numbers (what a host reference reads); in
    /// parallel chunks, each seeded from `seed` and its index.
    pub fn normal(self, n: usize, seed: u64) -> (Vec<u8>, Vec<f32>) {
        use rand::SeedableRng;
        use rand_distr::Distribution;
        use rayon::prelude::*;
        const CHUNK: usize = 1 << 16;
        let vals: Vec<f32> = (0..n.div_ceil(CHUNK))
            .into_par_iter()
            .flat_map_iter(|c| {
                let mut rng = rand::rngs::SmallRng::seed_from_u64(
                    seed ^ (c as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
                );
                let len = CHUNK.min(n - c * CHUNK);
                (0..len)
                    .map(move |_| {
                        let v: f32 = rand_distr::StandardNormal.sample(&mut rng);
                        let mut b = Vec::with_capacity(4);
                        self.push(v, &mut b);
                        self.get(&b, 0) as f32
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        let mut bytes = Vec::with_capacity(n * self.size());
        vals.iter().for_each(|&v| self.push(v, &mut bytes));
        (bytes, vals)
    }

    pub fn size(self) -> usize {
        match self {
            DType::F32 => 4,
            DType::F16 | DType::Bf16 => 2,
        }
    }

    /// The value of DTYPE in the kernel sources.
    pub fn kernel_code(self) -> u32 {
        match self {
            DType::F32 => 0,
            DType::F16 => 1,
            DType::Bf16 => 2,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::F16 => "f16",
            DType::Bf16 => "bf16",
        }
    }

    /// Output rounding dominates: half an ulp is 2^-24 (f32), 2^-11 (f16), 2^-9 (bf16).
    pub fn tolerance(self) -> Tolerance {
        match self {
            DType::F32 => Tolerance {
                rel_l2: 1e-5,
                rtol: 1e-4,
                atol: 1e-6,
            },
            DType::F16 => Tolerance {
                rel_l2: 1e-3,
                rtol: 2e-3,
                atol: 1e-5,
            },
            DType::Bf16 => Tolerance {
                rel_l2: 8e-3,
                rtol: 8e-3,
                atol: 1e-6,
            },
        }
    }

    /// Rounds to this type (nearest even) and appends its little-endian bytes.
    pub fn push(self, v: f32, out: &mut Vec<u8>) {
        match self {
            DType::F32 => out.extend_from_slice(&v.to_le_bytes()),
            DType::F16 => out.extend_from_slice(&f16::from_f32(v).to_le_bytes()),
            DType::Bf16 => out.extend_from_slice(&bf16::from_f32(v).to_le_bytes()),
        }
    }

    /// The value of element `i` of a little-endian buffer of this type.
    pub fn get(self, bytes: &[u8], i: usize) -> f64 {
        match self {
            DType::F32 => f32::from_le_bytes(bytes[4 * i..4 * i + 4].try_into().unwrap()) as f64,
            DType::F16 => f16::from_le_bytes([bytes[2 * i], bytes[2 * i + 1]]).to_f64(),
            DType::Bf16 => bf16::from_le_bytes([bytes[2 * i], bytes[2 * i + 1]]).to_f64(),
        }
    }

    /// Poison byte written over outputs before a run: 0xFF.. is a NaN in all three types, so an
    /// element the kernel never wrote cannot pass.
    pub const POISON_BYTE: u8 = 0xFF;

    /// True when element `i` still holds the poison pattern.
    pub fn is_poison(self, bytes: &[u8], i: usize) -> bool {
        let n = self.size();
        bytes[n * i..n * i + n]
            .iter()
            .all(|&b| b == Self::POISON_BYTE)
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for DType {
    type Err = crate::Error;
    fn from_str(s: &str) -> crate::Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "f32" | "fp32" | "float" => Ok(DType::F32),
            "f16" | "fp16" | "half" => Ok(DType::F16),
            "bf16" | "bfloat16" => Ok(DType::Bf16),
            _ => Err(crate::Error::InvalidArgument(format!(
                "unknown dtype '{s}' (allowed: f32, f16, bf16)"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_rounds_to_nearest() {
        for dt in DType::ALL {
            let mut b = Vec::new();
            dt.push(1.0, &mut b);
            dt.push(-2.5, &mut b);
            dt.push(1.0 + 1.0 / 4096.0, &mut b);
            assert_eq!(b.len(), 3 * dt.size());
            assert_eq!(dt.get(&b, 0), 1.0);
            assert_eq!(dt.get(&b, 1), -2.5);
            let third = dt.get(&b, 2);
            match dt {
                DType::F32 => assert_eq!(third, 1.0 + 1.0 / 4096.0),
                // 2^-12 is below half an ulp of both 16-bit types at 1.0
                DType::F16 | DType::Bf16 => assert_eq!(third, 1.0),
            }
        }
    }

    #[test]
    fn poison_is_nan_and_detected() {
        for dt in DType::ALL {
            let b = vec![DType::POISON_BYTE; dt.size() * 2];
            assert!(dt.get(&b, 1).is_nan());
            assert!(dt.is_poison(&b, 0));
            let mut w = Vec::new();
            dt.push(0.25, &mut w);
            assert!(!dt.is_poison(&w, 0));
        }
    }

    #[test]
    fn parse_names_and_reject_others() {
        assert_eq!("BF16".parse::<DType>().unwrap(), DType::Bf16);
        assert_eq!("fp32".parse::<DType>().unwrap(), DType::F32);
        let e = "int8".parse::<DType>().unwrap_err().to_string();
        assert!(
            e.contains("int8") && e.contains("allowed: f32, f16, bf16"),
            "{e}"
        );
    }
}
