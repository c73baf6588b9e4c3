//! The identity over row tiles: Y = X, through every mechanism and control. Its compute stage
//! (kernels/copy.cu) only writes the slot back out, so it measures how close each mechanism's
//! movement alone comes to the device-to-device copy ceiling. Validation is bit for bit: a copy
//! has no rounding to forgive.

use super::KernelSource;
use super::rows::{HostData, RowBody, View};
use crate::dtype::{DType, Tolerance};

pub struct Copy;

impl RowBody for Copy {
    fn name(&self) -> &'static str {
        "copy"
    }

    fn formula(&self) -> &'static str {
        "Y = X, X a strided view, Y dense"
    }

    fn kernel(&self) -> KernelSource {
        KernelSource {
            file: "copy.cu",
            text: include_str!("../../../kernels/copy.cu"),
            entry: "tilepipe_copy",
            headers: &[],
        }
    }

    fn aux(&self, _view: &View, _dtype: DType, _seed: u64) -> Vec<u8> {
        Vec::new()
    }

    fn torch(&self) -> &'static str {
        include_str!("torch.py")
    }

    fn reference_row(&self, data: &HostData, row: usize, out: &mut [f64]) {
        for (c, o) in out.iter_mut().enumerate().take(data.view.hidden) {
            *o = data.x_at(row, c);
        }
    }

    /// Exact: every element must come back as it went in.
    fn tolerance(&self, _dtype: DType) -> Tolerance {
        Tolerance {
            rel_l2: 0.0,
            rtol: 0.0,
            atol: 0.0,
        }
    }

    fn flops_per_element(&self) -> u64 {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::rows::{Layout, RowProblem, against_reference};

    #[test]
    fn the_reference_is_the_view_and_one_flipped_bit_fails() {
        let view = View::new(6, 64, Some(72), 8, None, DType::F16).unwrap();
        let data = HostData::generate(&Copy, &RowProblem::new(view, DType::F16, Some(2)), 5);
        assert!(data.aux.is_empty());
        let mut out = Vec::new();
        for r in 0..view.tokens {
            for c in 0..view.hidden {
                let i = view.index(r, c) * 2;
                out.extend_from_slice(&data.x[i..i + 2]);
            }
        }
        let v = against_reference(&out, &data, Layout::View);
        assert!(v.passed, "{:?}", v.failure);
        assert_eq!(v.max_abs_err, Some(0.0));
        out[2 * (3 * 64 + 5)] ^= 1; // lowest mantissa bit of row 3, column 5
        let v = against_reference(&out, &data, Layout::View);
        assert!(!v.passed);
        assert_eq!(v.beyond_tolerance, 1);
        assert_eq!(v.first_wrong_tiles, vec![1]);
    }
}
