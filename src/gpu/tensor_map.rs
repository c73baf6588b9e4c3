//! Tensor maps for TMA: a tiled map described from the logical tensor and checked against the
//! driver's rules before cuTensorMapEncodeTiled sees it, so a bad description fails with the rule
//! it broke.

use crate::{Error, Result, dtype::DType};
use cudarc::driver::sys::{
    self, CUtensorMap, CUtensorMapDataType as T, CUtensorMapFloatOOBfill as F,
    CUtensorMapInterleave, CUtensorMapL2promotion as L, CUtensorMapSwizzle as S,
};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Swizzle {
    None,
    B32,
    B64,
    B128,
}

impl Swizzle {
    pub fn span(self) -> Option<u64> {
        match self {
            Swizzle::None => None,
            Swizzle::B32 => Some(32),
            Swizzle::B64 => Some(64),
            Swizzle::B128 => Some(128),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum L2Promotion {
    None,
    B64,
    B128,
    B256,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum OobFill {
    Zero,
    NanRequestZeroFma,
}

/// A tiled tensor map: dimensions innermost first, strides in bytes for dimensions 1.. .
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TensorMapSpec {
    pub dtype: DType,
    pub base_addr: u64,
    pub dims: Vec<u64>,
    pub strides_bytes: Vec<u64>,
    pub box_dims: Vec<u32>,
    pub element_strides: Vec<u32>,
    pub swizzle: Swizzle,
    pub l2_promotion: L2Promotion,
    pub oob_fill: OobFill,
}

impl TensorMapSpec {
    /// Checks every rule of cuTensorMapEncodeTiled (no interleave) that tilepipe can violate.
    pub fn validate(&self) -> Result<(), String> {
        let rank = self.dims.len();
        if !(1..=5).contains(&rank) {
            return Err(format!(
                "rank {rank}: a tiled tensor map has 1 to 5 dimensions"
            ));
        }
        if self.strides_bytes.len() != rank - 1
            || self.box_dims.len() != rank
            || self.element_strides.len() != rank
        {
            return Err(format!(
                "rank {rank} needs {} strides, {rank} box dims and {rank} element strides (got {}, {}, {})",
                rank - 1,
                self.strides_bytes.len(),
                self.box_dims.len(),
                self.element_strides.len()
            ));
        }
        if !self.base_addr.is_multiple_of(16) {
            return Err(format!(
                "global address {:#x} is not 16-byte aligned",
                self.base_addr
            ));
        }
        for (i, &d) in self.dims.iter().enumerate() {
            if d == 0 || d > 1 << 32 {
                return Err(format!("dimension {i} is {d}: allowed 1..=2^32"));
            }
        }
        for (i, &s) in self.strides_bytes.iter().enumerate() {
            if s % 16 != 0 {
                return Err(format!(
                    "stride of dimension {} is {s} bytes: must be a multiple of 16",
                    i + 1
                ));
            }
            if s >= 1 << 40 {
                return Err(format!(
                    "stride of dimension {} is {s} bytes: must be below 2^40",
                    i + 1
                ));
            }
        }
        for (i, &b) in self.box_dims.iter().enumerate() {
            if !(1..=256).contains(&b) {
                return Err(format!("box dimension {i} is {b}: allowed 1..=256"));
            }
        }
        let inner = self.box_dims[0] as u64 * self.dtype.size() as u64;
        if !inner.is_multiple_of(16) {
            return Err(format!(
                "inner box is {inner} bytes ({} x {}): must be a multiple of 16",
                self.box_dims[0], self.dtype
            ));
        }
        for (i, &e) in self.element_strides.iter().enumerate() {
            if !(1..=8).contains(&e) {
                return Err(format!("element stride {i} is {e}: allowed 1..=8"));
            }
        }
        if let Some(span) = self.swizzle.span()
            && inner > span
        {
            return Err(format!(
                "inner box is {inner} bytes but the {span}-byte swizzle spans {span}: must be <= {span}"
            ));
        }
        Ok(())
    }

    pub fn box_bytes(&self) -> u64 {
        self.box_dims.iter().map(|&b| b as u64).product::<u64>() * self.dtype.size() as u64
    }
}

/// Encodes the map into the 128 bytes the kernel receives inside its parameters.
pub fn encode_tensor_map(spec: &TensorMapSpec) -> Result<[u64; 16]> {
    spec.validate().map_err(Error::TensorMap)?;
    let dt = match spec.dtype {
        DType::F32 => T::CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
        DType::F16 => T::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
        DType::Bf16 => T::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
    };
    let swizzle = match spec.swizzle {
        Swizzle::None => S::CU_TENSOR_MAP_SWIZZLE_NONE,
        Swizzle::B32 => S::CU_TENSOR_MAP_SWIZZLE_32B,
        Swizzle::B64 => S::CU_TENSOR_MAP_SWIZZLE_64B,
        Swizzle::B128 => S::CU_TENSOR_MAP_SWIZZLE_128B,
    };
    let l2 = match spec.l2_promotion {
        L2Promotion::None => L::CU_TENSOR_MAP_L2_PROMOTION_NONE,
        L2Promotion::B64 => L::CU_TENSOR_MAP_L2_PROMOTION_L2_64B,
        L2Promotion::B128 => L::CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
        L2Promotion::B256 => L::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
    };
    let oob = match spec.oob_fill {
        OobFill::Zero => F::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        OobFill::NanRequestZeroFma => F::CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA,
    };
    let mut map = std::mem::MaybeUninit::<CUtensorMap>::zeroed();
    // SAFETY: the arrays have the lengths the rank implies (validate checked them) and outlive the
    // call; `map` is 64-byte aligned storage of CUtensorMap's size that the driver fills in.
    let r = unsafe {
        sys::cuTensorMapEncodeTiled(
            map.as_mut_ptr(),
            dt,
            spec.dims.len() as u32,
            spec.base_addr as *mut std::ffi::c_void,
            spec.dims.as_ptr(),
            spec.strides_bytes.as_ptr(),
            spec.box_dims.as_ptr(),
            spec.element_strides.as_ptr(),
            CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
            swizzle,
            l2,
            oob,
        )
    };
    r.result()
        .map_err(|e| Error::TensorMap(format!("cuTensorMapEncodeTiled: {e} for {spec:?}")))?;
    // SAFETY: the driver initialised the map (the call succeeded).
    Ok(unsafe { map.assume_init() }.opaque)
}
