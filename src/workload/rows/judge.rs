//! A row output judged: against the f64 reference row by row (per-precision bounds on the relative
//! L2 error and on every element, NaN and unwritten elements never pass, wrong tiles located),
//! every byte of the output's allocation outside its view still the poison it was given, and bit
//! for bit against the sequential baseline's output on the same input. Pure functions over host
//! buffers, so every rule is tested without a GPU.

use super::{HostData, View};
use crate::dtype::DType;
use crate::verdict::{SHOWN, Verdict, WrongElement, differing_elements};
use rayon::prelude::*;

#[derive(Default)]
struct Acc {
    diff2: f64,
    ref2: f64,
    max_abs: f64,
    nan: usize,
    unwritten: usize,
    beyond: usize,
    wrong_rows: Vec<usize>,
    first: Vec<WrongElement>,
}

impl Acc {
    fn merge(mut self, o: Acc) -> Acc {
        self.diff2 += o.diff2;
        self.ref2 += o.ref2;
        self.max_abs = self.max_abs.max(o.max_abs);
        self.nan += o.nan;
        self.unwritten += o.unwritten;
        self.beyond += o.beyond;
        self.wrong_rows.extend(o.wrong_rows);
        self.first.extend(o.first);
        self.first.sort_by_key(|w| (w.row, w.col));
        self.first.truncate(SHOWN);
        self
    }
}

/// Where an output holds element (row, col).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// The output view's allocation, as tilepipe's kernels write it (its gaps judged too).
    View,
    /// Dense [tokens x hidden], as a peer writes it.
    Dense,
}

/// Bytes of the output view's allocation `out` outside the view that are not the poison byte:
/// before the first row, between rows, past the last.
pub fn written_outside(out: &[u8], view: &View, dtype: DType) -> usize {
    let es = dtype.size();
    let (o, h) = (view.out_layout(), view.hidden);
    let dirty = |a: usize, b: usize| {
        out[(a * es).min(out.len())..(b * es).min(out.len())]
            .iter()
            .filter(|&&b| b != DType::POISON_BYTE)
            .count()
    };
    let gaps: usize = (0..view.tokens.saturating_sub(1))
        .into_par_iter()
        .map(|r| dirty(view.out_index(r, h), view.out_index(r + 1, 0)))
        .sum();
    let last = view.out_index(view.tokens - 1, h);
    gaps + dirty(0, o.offset) + dirty(last, out.len() / es)
}

/// Compares an output (`layout`: the output view's allocation, or dense) with the f64 reference
/// computed from `data`.
pub fn against_reference(out: &[u8], data: &HostData, layout: Layout) -> Verdict {
    let tile_rows = data.tile_rows;
    let (view, dt) = (data.view, data.dtype);
    let at = |row: usize, col: usize| match layout {
        Layout::View => view.out_index(row, col),
        Layout::Dense => row * view.hidden + col,
    };
    let tol = data.tolerance();
    let h = view.hidden;
    let acc = (0..view.tokens)
        .into_par_iter()
        .fold(
            || (Acc::default(), vec![0.0f64; h]),
            |(mut acc, mut reference), row| {
                data.reference_row(row, &mut reference);
                let mut row_wrong = false;
                for (col, &expected) in reference.iter().enumerate() {
                    let i = at(row, col);
                    acc.ref2 += expected * expected;
                    let got = (!dt.is_poison(out, i)).then(|| dt.get(out, i));
                    let wrong = match got {
                        None => {
                            acc.unwritten += 1;
                            true
                        }
                        Some(g) if g.is_nan() => {
                            acc.nan += 1;
                            true
                        }
                        Some(g) => {
                            let err = (g - expected).abs();
                            acc.diff2 += err * err;
                            acc.max_abs = acc.max_abs.max(err);
                            let beyond = err > tol.atol + tol.rtol * expected.abs();
                            acc.beyond += usize::from(beyond);
                            beyond
                        }
                    };
                    if wrong {
                        row_wrong = true;
                        if acc.first.len() < SHOWN {
                            acc.first.push(WrongElement {
                                row,
                                col,
                                got: got.unwrap_or(f64::NAN),
                                expected,
                            });
                        }
                    }
                }
                if row_wrong {
                    acc.wrong_rows.push(row);
                }
                (acc, reference)
            },
        )
        .map(|(acc, _)| acc)
        .reduce(Acc::default, Acc::merge);
    let rel_l2 = if acc.ref2 > 0.0 {
        (acc.diff2 / acc.ref2).sqrt()
    } else {
        f64::INFINITY
    };
    let mut tiles: Vec<usize> = acc.wrong_rows.iter().map(|r| r / tile_rows).collect();
    tiles.sort_unstable();
    tiles.dedup();
    let mut v = Verdict {
        checked_against: "f64 reference".into(),
        rel_l2: Some(rel_l2),
        max_abs_err: Some(acc.max_abs),
        nan: acc.nan,
        unwritten: acc.unwritten,
        written_outside: match layout {
            Layout::View => written_outside(out, &view, dt),
            Layout::Dense => 0,
        },
        beyond_tolerance: acc.beyond,
        wrong_tiles: tiles.len(),
        first_wrong_tiles: tiles.into_iter().take(SHOWN).collect(),
        first_wrong: acc.first,
        ..Verdict::default()
    };
    v.conclude(tol);
    v
}

/// Validates `out` given the baseline's output and verdict on the same input. A bit-identical
/// output inherits the baseline's reference verdict; any other is checked against the reference
/// in full and fails for differing from the baseline.
pub fn against_baseline(
    out: &[u8],
    data: &HostData,
    baseline: &[u8],
    baseline_verdict: &Verdict,
) -> Verdict {
    let differ = differing_elements(out, baseline, data.dtype);
    let mut v = if differ == 0 && baseline_verdict.passed {
        Verdict {
            checked_against: "bit-identical to sync, which passed the f64 reference".into(),
            ..baseline_verdict.clone()
        }
    } else {
        against_reference(out, data, Layout::View)
    };
    v.differs_from_baseline = Some(differ);
    v.conclude(data.tolerance());
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::rows::RowProblem;

    fn reference_output(data: &HostData) -> Vec<u8> {
        let v = data.view;
        let mut out = Vec::new();
        let mut row = vec![0.0; v.hidden];
        for r in 0..v.tokens {
            data.reference_row(r, &mut row);
            for &x in &row {
                data.dtype.push(x as f32, &mut out);
            }
        }
        out
    }

    fn setup(dt: DType) -> (HostData, Vec<u8>) {
        let view = View::new(37, 64, Some(72), 8, None, dt).unwrap();
        let p = RowProblem::new(view, dt, Some(4));
        let data = HostData::generate(&crate::workload::rmsnorm::RmsNorm, &p, 11);
        let out = reference_output(&data);
        (data, out)
    }

    #[test]
    fn rounded_reference_passes_every_precision() {
        for dt in DType::ALL {
            let (data, out) = setup(dt);
            let v = against_reference(&out, &data, Layout::View);
            assert!(v.passed, "{dt}: {:?}", v.failure);
            assert!(v.rel_l2.unwrap() < dt.tolerance().rel_l2);
        }
    }

    #[test]
    fn one_stale_tile_is_caught_and_located() {
        for dt in DType::ALL {
            let (data, mut out) = setup(dt);
            // tile 5 (rows 20..24 with 4-row tiles) holds tile 4's values: a stale slot
            let row_bytes = 64 * dt.size();
            let (src, dst) = (16 * row_bytes, 20 * row_bytes);
            out.copy_within(src..src + 4 * row_bytes, dst);
            let v = against_reference(&out, &data, Layout::View);
            assert!(!v.passed, "{dt}: stale tile passed");
            assert_eq!(v.first_wrong_tiles, vec![5], "{dt}");
            assert_eq!(v.first_wrong[0].row, 20);
            // the global norm alone may or may not notice; the per-element bound must
            assert!(v.beyond_tolerance > 0);
        }
    }

    #[test]
    fn nan_and_unwritten_never_pass() {
        let (data, mut out) = setup(DType::Bf16);
        let mut nan = Vec::new();
        DType::Bf16.push(f32::NAN, &mut nan);
        out[10..12].copy_from_slice(&nan[..2]);
        let v = against_reference(&out, &data, Layout::View);
        assert!(!v.passed);
        assert_eq!(v.nan, 1);
        let (data, mut out) = setup(DType::F32);
        out[400..404].fill(DType::POISON_BYTE);
        let v = against_reference(&out, &data, Layout::View);
        assert!(!v.passed);
        assert_eq!(v.unwritten, 1);
        assert_eq!(v.first_wrong[0].row, 1);
        assert_eq!(v.first_wrong[0].col, 36);
        assert!(v.failure.unwrap().contains("never written"));
    }

    #[test]
    fn small_drift_in_one_element_is_caught_per_precision() {
        for (dt, scale) in [
            (DType::F32, 1.001f32),
            (DType::F16, 1.02),
            (DType::Bf16, 1.1),
        ] {
            let (data, mut out) = setup(dt);
            let i = 5 * 64 + 7;
            let mut ref_row = vec![0.0; 64];
            data.reference_row(5, &mut ref_row);
            let mut b = Vec::new();
            dt.push((ref_row[7] as f32) * scale + 0.01, &mut b);
            out[i * dt.size()..(i + 1) * dt.size()].copy_from_slice(&b);
            let v = against_reference(&out, &data, Layout::View);
            assert!(!v.passed, "{dt}: drift passed");
            assert_eq!(v.beyond_tolerance, 1, "{dt}");
        }
    }

    #[test]
    fn baseline_comparison_is_bit_exact() {
        let (data, out) = setup(DType::F16);
        let base = against_reference(&out, &data, Layout::View);
        let same = against_baseline(&out, &data, &out, &base);
        assert!(same.passed);
        assert_eq!(same.differs_from_baseline, Some(0));
        assert!(same.checked_against.contains("bit-identical"));
        // flip the lowest mantissa bit of one element: within tolerance, but not the same arithmetic
        let mut other = out.clone();
        other[2 * 100] ^= 1;
        let v = against_baseline(&other, &data, &out, &base);
        assert!(!v.passed);
        assert_eq!(v.differs_from_baseline, Some(1));
        assert_eq!(v.beyond_tolerance, 0);
        assert!(v.failure.unwrap().contains("differ from sync"));
    }

    /// The reference laid into an output view's allocation, its gaps left poisoned.
    fn in_view(data: &HostData, dense: &[u8]) -> Vec<u8> {
        let (v, es) = (data.view, data.dtype.size());
        let mut out = vec![DType::POISON_BYTE; v.out_alloc() * es];
        for r in 0..v.tokens {
            let (from, to) = (r * v.hidden * es, v.out_index(r, 0) * es);
            out[to..to + v.hidden * es].copy_from_slice(&dense[from..from + v.hidden * es]);
        }
        out
    }

    #[test]
    fn a_byte_written_outside_the_output_view_fails_it() {
        for dt in DType::ALL {
            let (dense, reference) = setup(dt);
            let view = dense.view.with_out(Some(67), 3, dt).unwrap();
            let p = RowProblem::new(view, dt, Some(4));
            let data = HostData::generate(&crate::workload::rmsnorm::RmsNorm, &p, 11);
            let out = in_view(&data, &reference);
            let v = against_reference(&out, &data, Layout::View);
            assert!(v.passed, "{dt}: {:?}", v.failure);
            assert_eq!(v.written_outside, 0);
            // the same bytes read densely are another layout: wrong
            assert!(!against_reference(&out, &data, Layout::Dense).passed);
            let es = dt.size();
            // before the first row, after rows 0 and 4 (the allocation ends with the last row)
            assert_eq!(out.len(), view.out_index(view.tokens - 1, view.hidden) * es);
            let gaps = [
                view.out_index(0, view.hidden),
                view.out_index(4, view.hidden),
            ];
            for at in [es, gaps[0] * es, gaps[1] * es + 1] {
                let mut bad = out.clone();
                bad[at] ^= 0x5a;
                let v = against_reference(&bad, &data, Layout::View);
                assert!(!v.passed, "{dt}: a byte at {at} outside the view passed");
                assert_eq!(v.written_outside, 1, "{dt} at {at}");
                assert_eq!(
                    v.beyond_tolerance + v.unwritten,
                    0,
                    "{dt}: the view itself is right"
                );
                assert!(
                    v.failure
                        .unwrap()
                        .contains("1 bytes outside the output view written")
                );
            }
        }
    }
}
