//! The view every row workload takes: X [tokens x hidden], strided and offset inside its allocation,
//! written to an output view of the same shape with a layout of its own (dense unless given); the
//! rules (sizes that fit the kernels' 32-bit counters, extents that fit the allocation and the
//! host's memory), and where each lies against 16-byte chunks.

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
    /// Where the output's rows lie in their allocation (just large enough); None: dense
    /// [tokens x hidden].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub out: Option<OutLayout>,
}

/// The output view's rows: elements between their starts and before the first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct OutLayout {
    pub row_stride: usize,
    pub offset: usize,
}

/// Bytes of the chunks every 16-byte access (vector loads and stores, cp.async.cg, bulk copies,
/// a tensor map's base and strides) must be aligned to.
pub const CHUNK: usize = 16;

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
            out: None,
        })
    }

    /// This view written to an output laid out with `row_stride` (default hidden) and `offset`;
    /// dense when both are left as they are. Checked as X is: rows that do not overlap, an extent
    /// that fits in 64-bit byte counts, with X, in host memory.
    pub fn with_out(self, row_stride: Option<usize>, offset: usize, dtype: DType) -> Result<View> {
        let stride = row_stride.unwrap_or(self.hidden);
        if stride == self.hidden && offset == 0 {
            return Ok(View { out: None, ..self });
        }
        if stride < self.hidden {
            return Err(Error::InvalidShape(format!(
                "output row stride {stride} is smaller than hidden {}: rows would overlap; allowed: --out-row-stride >= hidden",
                self.hidden
            )));
        }
        let extent = Self::checked_extent(self.tokens, self.hidden, stride, offset);
        let fits = extent.and_then(|e| {
            e.checked_mul(2)?
                .checked_add(self.alloc)?
                .checked_mul(dtype.size())
        });
        if fits.is_none() {
            return Err(Error::InvalidShape(format!(
                "the output view (offset {offset} + {} rows x stride {stride} + hidden {}) and the input's {} {dtype} \
                 elements do not fit in 64-bit byte counts; allowed: (allocation + 2 x output extent) x {} <= {}",
                self.tokens - 1,
                self.hidden,
                self.alloc,
                dtype.size(),
                usize::MAX
            )));
        }
        let out = Some(OutLayout {
            row_stride: stride,
            offset,
        });
        Ok(View { out, ..self })
    }

    /// The output's row stride and offset (hidden and 0 for a dense output).
    pub fn out_layout(&self) -> OutLayout {
        self.out.unwrap_or(OutLayout {
            row_stride: self.hidden,
            offset: 0,
        })
    }

    /// Elements of the output's allocation: just enough for its view.
    pub fn out_alloc(&self) -> usize {
        let o = self.out_layout();
        Self::extent(self.tokens, self.hidden, o.row_stride, o.offset)
    }

    /// Where output element (row, col) lies in the output's allocation.
    pub fn out_index(&self, row: usize, col: usize) -> usize {
        let o = self.out_layout();
        o.offset + row * o.row_stride + col
    }

    /// Whether every row of X starts on a 16-byte chunk (its offset and row stride are whole chunks).
    pub fn rows_aligned(&self, dtype: DType) -> bool {
        let es = dtype.size();
        (self.offset * es).is_multiple_of(CHUNK) && (self.row_stride * es).is_multiple_of(CHUNK)
    }

    /// Whether every row of the output starts on a 16-byte chunk.
    pub fn out_aligned(&self, dtype: DType) -> bool {
        let (o, es) = (self.out_layout(), dtype.size());
        (o.offset * es).is_multiple_of(CHUNK) && (o.row_stride * es).is_multiple_of(CHUNK)
    }

    /// Bytes of host memory a run on this view holds at once: the whole input allocation, the
    /// output's read back and the sequential baseline's kept for the bit-exact comparison.
    pub fn host_bytes(&self, dtype: DType) -> u64 {
        let es = dtype.size() as u64;
        (self.alloc as u64)
            .saturating_add((self.out_alloc() as u64).saturating_mul(2))
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

    /// `tokens` rows of this view's width laid out as `like` lies against 16-byte chunks: the
    /// offsets and row strides of X and of the output here (`offset`, `row_stride` of X; dense
    /// output) plus `like`'s remainders past whole chunks. An aligned `like` leaves them as given.
    pub fn like(
        like: &View,
        dtype: DType,
        (tokens, row_stride, offset): (usize, Option<usize>, usize),
    ) -> Result<View> {
        let vec = CHUNK / dtype.size();
        let h = like.hidden;
        let stride = row_stride.unwrap_or(h) + (like.row_stride - h) % vec;
        let x = View::new(
            tokens,
            h,
            Some(stride),
            offset + like.offset % vec,
            None,
            dtype,
        )?;
        let o = like.out_layout();
        let out_stride = h + (o.row_stride - h) % vec;
        x.with_out(Some(out_stride), o.offset % vec, dtype)
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

    #[test]
    fn an_output_view_has_rules_and_a_layout_of_its_own() {
        let dt = DType::Bf16;
        let x = View::new(4, 64, Some(80), 8, None, dt).unwrap();
        assert_eq!(
            x.with_out(None, 0, dt).unwrap(),
            x,
            "dense: no layout at all"
        );
        assert_eq!(x.out_alloc(), 4 * 64);
        let y = x.with_out(Some(67), 3, dt).unwrap();
        assert_eq!(y.out_index(2, 5), 3 + 2 * 67 + 5);
        assert_eq!(y.out_alloc(), 3 + 3 * 67 + 64);
        assert_eq!(
            y.host_bytes(dt),
            (x.alloc as u64 + 2 * y.out_alloc() as u64) * 2
        );
        let e = x.with_out(Some(63), 0, dt).unwrap_err().to_string();
        assert!(
            e.contains("smaller than hidden") && e.contains("--out-row-stride"),
            "{e}"
        );
        let e = x.with_out(None, usize::MAX, dt).unwrap_err().to_string();
        assert!(e.contains("64-bit byte counts"), "{e}");
    }

    #[test]
    fn chunks_tell_where_rows_start() {
        for (dt, offset, stride, aligned) in [
            (DType::Bf16, 0, 64, true),
            (DType::Bf16, 8, 72, true),
            (DType::Bf16, 1, 64, false),
            (DType::Bf16, 0, 65, false),
            (DType::F32, 4, 68, true),
            (DType::F32, 2, 64, false),
        ] {
            let v = View::new(3, 64, Some(stride), offset, None, dt).unwrap();
            assert_eq!(v.rows_aligned(dt), aligned, "{dt} {offset} {stride}");
            assert!(v.out_aligned(dt));
            let o = View::new(3, 64, None, 0, None, dt)
                .unwrap()
                .with_out(Some(stride), offset, dt);
            assert_eq!(
                o.unwrap().out_aligned(dt),
                aligned,
                "{dt} out {offset} {stride}"
            );
        }
    }

    /// A case laid out like a view keeps its offsets inside chunks (X's and the output's) and
    /// adds them to the case's own; an aligned view leaves the case as given.
    #[test]
    fn like_keeps_a_views_offsets_inside_chunks() {
        let dt = DType::Bf16;
        let aligned = View::new(1, 64, None, 0, None, dt).unwrap();
        let plain = View::like(&aligned, dt, (9, Some(96), 32)).unwrap();
        assert_eq!(plain, View::new(9, 64, Some(96), 32, None, dt).unwrap());
        let dense = View::like(&aligned, dt, (9, None, 0)).unwrap();
        assert_eq!(dense, View::new(9, 64, None, 0, None, dt).unwrap());
        let odd = View::new(1, 64, Some(65), 3, None, dt)
            .unwrap()
            .with_out(Some(67), 5, dt)
            .unwrap();
        let v = View::like(&odd, dt, (9, Some(96), 32)).unwrap();
        assert_eq!((v.row_stride, v.offset), (97, 35));
        let o = v.out_layout();
        assert_eq!((o.row_stride, o.offset), (67, 5));
        assert!(!v.rows_aligned(dt) && !v.out_aligned(dt));
    }
}
