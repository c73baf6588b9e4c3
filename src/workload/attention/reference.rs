//! Is an attention output right? Against an f64 host reference on every row of small problems and
//! on sampled rows (tails and tile edges among them) of large ones, and bit for bit against
//! `sync` (the same arithmetic in the same order). Each element's bound follows the kernel's
//! roundings: P rounded to the input precision before P V, O rounded on store, f32 sums over the
//! keys and the head dimension; so it grows with seqlen and with the precision. An element never
//! written (still the poison NaN) or NaN never passes.

use super::Problem;
use super::data::Inputs;
use crate::dtype::DType;
use crate::verdict::Verdict;
use rayon::prelude::*;

/// The unit roundoff of the precision: P's rounding before P V, and O's on store.
fn unit(dtype: DType) -> f64 {
    match dtype {
        DType::F32 => 2f64.powi(-24),
        DType::F16 => 2f64.powi(-11),
        DType::Bf16 => 2f64.powi(-8),
    }
}

/// Row i of head h: O's elements in f64 from the rounded inputs, and each one's bound.
pub fn reference_row(x: &Inputs, h: usize, i: usize) -> Vec<(f64, f64)> {
    let p = &x.problem;
    let (d, s) = (p.head_dim, p.seqlen);
    let base = h * s * d;
    let q = &x.q_vals[base + i * d..base + (i + 1) * d];
    let visible = if p.causal { i + 1 } else { s };
    let mut scores = Vec::with_capacity(visible);
    let mut worst_dot = 0.0f64;
    for j in 0..visible {
        let k = &x.k_vals[base + j * d..base + (j + 1) * d];
        let (dot, abs) = q
            .iter()
            .zip(k)
            .fold((0.0f64, 0.0f64), |(a, b), (&qv, &kv)| {
                let t = qv as f64 * kv as f64;
                (a + t, b + t.abs())
            });
        scores.push(dot * p.scale());
        worst_dot = worst_dot.max(abs * p.scale());
    }
    let top = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let weights: Vec<f64> = scores.iter().map(|sc| (sc - top).exp()).collect();
    let total: f64 = weights.iter().sum();
    // an f32 score is off by up to d ulps of f32 of its products' size: exp moves by that much
    let score_err = d as f64 * 2f64.powi(-23) * worst_dot;
    let u = unit(p.dtype);
    (0..d)
        .map(|c| {
            let (mut o, mut a) = (0.0f64, 0.0f64);
            for (j, w) in weights.iter().enumerate() {
                let v = x.v_vals[base + j * d + c] as f64;
                o += w * v;
                a += w * v.abs();
            }
            let (o, a) = (o / total, a / total);
            let sums = (s + d) as f64 * 2f64.powi(-23) * a;
            let bound =
                2.0 * (u * o.abs() + u * a + sums + 2.0 * score_err * a) + f64::MIN_POSITIVE;
            (o, bound)
        })
        .collect()
}

/// A checked row: its head, its query row, and each element's reference value and bound.
type RowCheck = (usize, usize, Vec<(f64, f64)>);

/// `out` (O as the GPU wrote it) against the f64 reference on the checked rows.
pub fn against_reference(out: &[u8], x: &Inputs) -> Verdict {
    let p = x.problem;
    let d = p.head_dim;
    let rows: Vec<RowCheck> = x
        .rows
        .par_iter()
        .map(|&(h, i)| (h, i, reference_row(x, h, i)))
        .collect();
    let (mut failures, mut max_ratio, mut worst, mut n) = (0, 0.0f64, None, 0);
    for (h, i, want) in rows {
        for (c, (w, bound)) in want.into_iter().enumerate() {
            n += 1;
            let got = p.dtype.get(out, (h * p.seqlen + i) * d + c);
            let ratio = (got - w).abs() / bound;
            if ratio.is_finite() {
                max_ratio = max_ratio.max(ratio);
            }
            // NaN compares false: a NaN output fails too
            if ratio.is_nan() || ratio >= 1.0 {
                failures += 1;
                worst.get_or_insert_with(|| {
                    format!("O[head {h}][row {i}][{c}] = {got}, expected {w} (bound {bound:.3e})")
                });
            }
        }
    }
    Verdict::bounded("f64 reference", n, failures, max_ratio, worst)
}

/// `out` bit for bit against `sync`'s O (the same products in the same order).
pub fn against_baseline(out: &[u8], baseline: &[u8], p: &Problem) -> Verdict {
    let (es, d) = (p.dtype.size(), p.head_dim);
    let wrong = |e: usize| {
        out[e * es..(e + 1) * es] != baseline[e * es..(e + 1) * es]
            || !p.dtype.get(out, e).is_finite()
    };
    let total = p.elements() as usize;
    let (failures, first) = (0..total)
        .into_par_iter()
        .filter(|&e| wrong(e))
        .fold(|| (0usize, usize::MAX), |(n, f), e| (n + 1, f.min(e)))
        .reduce(|| (0, usize::MAX), |a, b| (a.0 + b.0, a.1.min(b.1)));
    let worst = (failures > 0).then(|| {
        let (row, c) = (first / d, first % d);
        format!(
            "O[head {}][row {}][{c}] = {}, expected {}",
            row / p.seqlen,
            row % p.seqlen,
            p.dtype.get(out, first),
            p.dtype.get(baseline, first)
        )
    });
    Verdict::bounded("sync, bit for bit", total, failures, 0.0, worst)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// O as the kernel computes it, on the host in f32: scores, exp2 of the scaled scores less the
    /// row's maximum, P rounded to the precision before P V, the sum of the unrounded P; with
    /// `skip` a key tile left out (a stale tile) and `shift` keys more shown under the mask.
    fn host_o(x: &Inputs, skip: Option<usize>, shift: usize) -> Vec<u8> {
        let p = &x.problem;
        let (d, s) = (p.head_dim, p.seqlen);
        let scale_log2 = (p.scale() * std::f64::consts::LOG2_E) as f32;
        let mut out = Vec::new();
        for h in 0..p.heads_total() {
            let base = h * s * d;
            for i in 0..s {
                let keys: Vec<usize> = (0..s)
                    .filter(|&j| !p.causal || j <= i + shift)
                    .filter(|&j| skip != Some(j / 64))
                    .collect();
                let sc: Vec<f32> = keys
                    .iter()
                    .map(|&j| {
                        (0..d)
                            .map(|c| x.q_vals[base + i * d + c] * x.k_vals[base + j * d + c])
                            .sum()
                    })
                    .collect();
                let top = sc.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
                let w: Vec<f32> = sc.iter().map(|v| ((v - top) * scale_log2).exp2()).collect();
                let total: f32 = w.iter().sum();
                for c in 0..d {
                    let o: f32 = keys
                        .iter()
                        .zip(&w)
                        .map(|(&j, &wj)| {
                            p.dtype
                                .get(&super::super::data::bytes_of(&[wj], p.dtype), 0)
                                as f32
                                * x.v_vals[base + j * d + c]
                        })
                        .sum();
                    p.dtype.push(o / total, &mut out);
                }
            }
        }
        out
    }

    fn inputs(dtype: DType, causal: bool) -> Inputs {
        Inputs::new(Problem::new(1, 2, 150, 64, causal, dtype).unwrap(), 9)
    }

    #[test]
    fn an_o_computed_as_the_kernel_does_passes() {
        for dtype in [DType::F16, DType::Bf16] {
            for causal in [false, true] {
                let x = inputs(dtype, causal);
                assert_eq!(x.rows.len(), 2 * 150, "small: every row");
                let o = host_o(&x, None, 0);
                let v = against_reference(&o, &x);
                assert!(v.passed, "{dtype} causal {causal}: {}", v.summary());
                assert!(against_baseline(&o, &o, &x.problem).passed);
            }
        }
    }

    /// Negative controls: a stale key tile, the causal mask one key off, one element unwritten,
    /// one low bit flipped against the baseline.
    #[test]
    fn stale_tiles_shifted_masks_holes_and_flipped_bits_fail() {
        let x = inputs(DType::Bf16, true);
        let stale = host_o(&x, Some(1), 0);
        assert!(!against_reference(&stale, &x).passed, "a key tile left out");
        let shifted = host_o(&x, None, 1);
        let v = against_reference(&shifted, &x);
        assert!(
            !v.passed && v.summary().contains("row 0"),
            "{}",
            v.summary()
        );
        let mut hole = host_o(&x, None, 0);
        let at = 2 * (150 * 64 + 77);
        hole[at..at + 2].copy_from_slice(&[0xC0, 0x7F]);
        assert!(
            !against_reference(&hole, &x).passed,
            "a NaN (poison) element"
        );
        let good = host_o(&x, None, 0);
        let mut flipped = good.clone();
        flipped[10] ^= 1;
        let v = against_baseline(&flipped, &good, &x.problem);
        assert!(
            !v.passed && v.summary().contains("row 0"),
            "{}",
            v.summary()
        );
    }
}
