//! The view every row workload takes: X [tokens x hidden], strided and offset inside its allocation,
//! and its rules (sizes that fit the kernels' 32-bit counters, extents that fit the allocation and
//! the host's memory).

use crate::dtype::DType;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};

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
    /// The most rows a view may have: the kernels count rows and tiles in 32-bit `int`s
    /// (`RowParams.tokens`, `ntiles`).
    pub const MAX_TOKENS: usize = i32::MAX as usize;

    /// The smallest allocation that holds the view, None when it does not fit in `usize`.
    pub fn checked_extent(
        tokens: usize,
        hidden: usize,
        row_stride: usize,
        offset: usize,
    ) -> Option<usize> {
        tokens
            .saturating_sub(1)
            .checked_mul(row_stride)?
            .checked_add(offset)?
            .checked_add(hidden)
    }

    /// `checked_extent`, saturated at `usize::MAX` (an allocation no machine holds): for views
    /// `new` accepted, where it never saturates.
    pub fn extent(tokens: usize, hidden: usize, row_stride: usize, offset: usize) -> usize {
        Self::checked_extent(tokens, hidden, row_stride, offset).unwrap_or(usize::MAX)
    }

    /// Checks the view against what every kernel needs; `alloc` None means "just large enough".
    /// Every size is computed with checked arithmetic, so an accepted view's element counts and
    /// byte counts (`host_bytes` included) fit in `usize`.
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
                "tokens and hidden must be at least 1 (got tokens {tokens}, hidden {hidden}); allowed: both >= 1"
            )));
        }
        if tokens > Self::MAX_TOKENS {
            return Err(Error::InvalidShape(format!(
                "tokens {tokens} is more than the kernels' 32-bit row and tile counts hold; allowed: tokens = 1..={}",
                Self::MAX_TOKENS
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
        let span = format!(
            "offset {offset} + {} rows x stride {row_stride} + hidden {hidden}",
            tokens - 1
        );
        let extent = Self::checked_extent(tokens, hidden, row_stride, offset).ok_or_else(|| {
            Error::InvalidShape(format!(
                "the view's extent ({span}) does not fit in 64 bits; allowed: offset + (tokens-1) x stride + hidden <= {}",
                usize::MAX
            ))
        })?;
        let alloc = alloc.unwrap_or(extent);
        if extent > alloc {
            return Err(Error::InvalidShape(format!(
                "the view reaches element {extent} ({span}) but the allocation holds {alloc}; \
                 allowed: offset + (tokens-1) x stride + hidden <= allocation"
            )));
        }
        let es = dtype.size();
        // the input allocation and two dense outputs: `host_bytes`, which then cannot saturate
        let bytes = tokens
            .checked_mul(hidden)
            .and_then(|e| e.checked_mul(2)?.checked_add(alloc)?.checked_mul(es));
        if bytes.is_none() {
            return Err(Error::InvalidShape(format!(
                "an allocation of {alloc} and an output of {tokens} x {hidden} {dtype} elements ({es} bytes each) \
                 do not fit in 64-bit byte counts; allowed: (allocation + 2 x tokens x hidden) x {es} <= {}",
                usize::MAX
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

    /// Bytes of host memory a run on this view holds at once: the whole input allocation, the
    /// output read back and the sequential baseline's output kept for the bit-exact comparison.
    pub fn host_bytes(&self, dtype: DType) -> u64 {
        let es = dtype.size() as u64;
        (self.alloc as u64)
            .saturating_add((self.tokens as u64).saturating_mul(self.hidden as u64 * 2))
            .saturating_mul(es)
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
