//! cuTensorMapEncodeTiled on a validated TensorMapSpec.

use crate::tma::{L2Promotion, OobFill, Swizzle, TensorMapSpec};
use crate::{Error, Result, dtype::DType};
use cudarc::driver::sys::{
    self, CUtensorMap, CUtensorMapDataType as T, CUtensorMapFloatOOBfill as F,
    CUtensorMapInterleave, CUtensorMapL2promotion as L, CUtensorMapSwizzle as S,
};

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
