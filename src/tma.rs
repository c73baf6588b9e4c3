//! Tensor maps for TMA, described from the logical tensor and checked against the driver's rules
//! before cuTensorMapEncodeTiled sees them, so a bad description fails with the rule it broke.

use crate::dtype::DType;
use crate::workload::View;
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

/// Width (elements) of the innermost TMA dimension for rows of `hidden`: the largest divisor of
/// hidden that fits a box (<= 256) with a whole number of 16-byte units, leaving <= 256 chunks.
pub fn row_chunk(hidden: usize, dtype: DType) -> Option<usize> {
    (1..=256usize.min(hidden)).rev().find(|&c| {
        hidden.is_multiple_of(c) && (c * dtype.size()).is_multiple_of(16) && hidden / c <= 256
    })
}

/// The rank-3 map of the rmsnorm view {chunk, hidden/chunk, tokens} whose box is one tile of
/// `tile_rows` whole rows, landing in shared memory as dense rows. `row_stride_bytes_override`
/// exists for the wrong-stride control alone.
pub fn rmsnorm_map(
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

    fn good() -> TensorMapSpec {
        let v = View::new(1000, 4096, Some(4160), 64, None, DType::Bf16).unwrap();
        rmsnorm_map(&v, DType::Bf16, 2, 0x7f00_0000_0000, None).unwrap()
    }

    fn fails(f: impl Fn(&mut TensorMapSpec), needle: &str) {
        let mut s = good();
        f(&mut s);
        let e = s.validate().unwrap_err();
        assert!(e.contains(needle), "expected '{needle}' in '{e}'");
    }

    #[test]
    fn rmsnorm_map_describes_rows_of_the_view() {
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
        let e = rmsnorm_map(&v, DType::Bf16, 2, 0x1000, None).unwrap_err();
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
}
