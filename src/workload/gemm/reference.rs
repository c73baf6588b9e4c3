//! Is a GEMM's output right? Against an f64 host reference (every element of small problems, a
//! sampled grid with the edges of large ones), against cuBLAS on every element, and bit for bit
//! against the same-tile `sync` variant. Bounds grow with K and with the output's precision; an
//! element never written (still the poison NaN) or NaN never passes.

use super::Problem;
use super::data::Inputs;
use crate::dtype::DType;
use crate::verdict::Verdict;
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use rayon::prelude::*;

/// Problems up to this many multiply-adds are checked on every element against the host.
const FULL_CHECK_MACS: u64 = 1 << 27;
/// Rows and columns of the sampled grid (edges included) for larger problems.
const SAMPLED: usize = 64;

/// Half an ulp of the output's precision, relative: C's rounding.
fn out_rel(dtype: DType) -> f64 {
    match dtype {
        DType::F32 => 2f64.powi(-24),
        DType::F16 => 2f64.powi(-11),
        DType::Bf16 => 2f64.powi(-8),
    }
}

/// f32 accumulation over K terms whose products have root-sum-square `rss`: 4 K ulps of f32 on
/// that scale (tensor cores align the addends with fewer bits than an FFMA keeps).
fn acc_bound(k: usize, rss: f64) -> f64 {
    4.0 * k as f64 * 2f64.powi(-23) * rss
}

/// The rows (or columns) a sampled check visits: the first and last 8 (tails live there) and
/// random ones between.
fn sample_axis(n: usize, rng: &mut SmallRng) -> Vec<usize> {
    if n <= SAMPLED {
        return (0..n).collect();
    }
    let mut v: Vec<usize> = (0..8).chain(n - 8..n).collect();
    while v.len() < SAMPLED {
        v.push(rng.random_range(8..n - 8));
    }
    v.sort_unstable();
    v.dedup();
    v
}

/// The elements the host reference checks for `p`: all of them when small, else a sampled grid.
pub fn checked_elements(p: &Problem, seed: u64) -> Vec<(usize, usize)> {
    if p.m as u64 * p.n as u64 * p.k as u64 <= FULL_CHECK_MACS {
        return (0..p.m)
            .flat_map(|i| (0..p.n).map(move |j| (i, j)))
            .collect();
    }
    let mut rng = SmallRng::seed_from_u64(seed);
    let rows = sample_axis(p.m, &mut rng);
    let cols = sample_axis(p.n, &mut rng);
    rows.iter()
        .flat_map(|&i| cols.iter().map(move |&j| (i, j)))
        .collect()
}

/// C[i][j] in f64 from the rounded inputs, and the root-sum-square of its products.
pub fn reference(x: &Inputs, i: usize, j: usize) -> (f64, f64) {
    let p = &x.problem;
    let (mut sum, mut sq) = (0.0f64, 0.0f64);
    for kk in 0..p.k {
        let t = x.a_vals[i * p.k + kk] as f64 * x.b_vals[p.b_index(kk, j)] as f64;
        sum += t;
        sq += t * t;
    }
    (sum, sq.sqrt())
}

fn tally(against: &str, items: Vec<(usize, usize, f64, f64, f64)>) -> Verdict {
    let (mut failures, mut max_ratio, mut worst) = (0, 0.0f64, None);
    for (i, j, got, want, bound) in &items {
        let ratio = if got.is_nan() {
            f64::INFINITY
        } else {
            (got - want).abs() / bound
        };
        if ratio.is_finite() {
            max_ratio = max_ratio.max(ratio);
        }
        // NaN compares false: a NaN error or bound fails too
        if ratio.is_nan() || ratio >= 1.0 {
            failures += 1;
            if worst.is_none() {
                worst = Some(format!(
                    "C[{i}][{j}] = {got}, expected {want} (bound {bound:.3e})"
                ));
            }
        }
    }
    Verdict::bounded(against, items.len(), failures, max_ratio, worst)
}

/// `out` (C as the GPU wrote it) against the f64 reference on `elements`.
pub fn against_reference(out: &[u8], x: &Inputs) -> Verdict {
    let p = x.problem;
    let items = x
        .elements
        .par_iter()
        .map(|&(i, j)| {
            let (want, rss) = reference(x, i, j);
            let got = p.dtype.get(out, i * p.ldc() + j);
            // C's rounding applies to the accumulated value, which is off by up to the acc bound
            let acc = acc_bound(p.k, rss);
            let bound = out_rel(p.dtype) * (want.abs() + acc) + acc + f64::MIN_POSITIVE;
            (i, j, got, want, bound)
        })
        .collect();
    tally("f64 reference", items)
}

/// `out` against cuBLAS's C on every element: each has its own rounding and accumulation order,
/// so the bound is twice either's (products of N(0, 1) inputs: root-sum-square about sqrt(K)).
pub fn against_cublas(out: &[u8], cublas: &[u8], p: &Problem) -> Verdict {
    let rss = (p.k as f64).sqrt();
    let items = (0..p.m * p.n)
        .into_par_iter()
        .map(|e| {
            let (got, want) = (p.dtype.get(out, e), p.dtype.get(cublas, e));
            let bound = 2.0 * (out_rel(p.dtype) * got.abs().max(want.abs()) + acc_bound(p.k, rss));
            (e / p.n, e % p.n, got, want, bound)
        })
        .collect();
    tally("cuBLAS", items)
}

/// `out` bit for bit against the same-tile `sync` variant's C (same products, same order): an
/// element fails where its bits differ, or where it is not finite though they agree. Counted in
/// parallel without a list of every element: a control's C has 16 M of them, checked every run.
pub fn against_baseline(out: &[u8], baseline: &[u8], p: &Problem) -> Verdict {
    let es = p.dtype.size();
    let same = |e: usize| out[e * es..(e + 1) * es] == baseline[e * es..(e + 1) * es];
    let wrong = |e: usize| !same(e) || !p.dtype.get(out, e).is_finite();
    let (failures, first) = (0..p.m * p.n)
        .into_par_iter()
        .filter(|&e| wrong(e))
        .fold(|| (0usize, usize::MAX), |(n, f), e| (n + 1, f.min(e)))
        .reduce(|| (0, usize::MAX), |a, b| (a.0 + b.0, a.1.min(b.1)));
    let worst = (failures > 0).then(|| {
        let (got, want) = (p.dtype.get(out, first), p.dtype.get(baseline, first));
        let bound = if same(first) { f64::INFINITY } else { 0.0 };
        format!(
            "C[{}][{}] = {got}, expected {want} (bound {bound:.3e})",
            first / p.n,
            first % p.n
        )
    });
    Verdict::bounded("sync, bit for bit", p.m * p.n, failures, 0.0, worst)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::gemm::Layout;

    /// C computed on the host in f32, as the GPU would write it.
    fn host_c(x: &Inputs) -> Vec<u8> {
        let p = x.problem;
        let mut out = Vec::new();
        for i in 0..p.m {
            for j in 0..p.n {
                let mut acc = 0.0f32;
                for kk in 0..p.k {
                    acc = x.a_vals[i * p.k + kk].mul_add(x.b_vals[p.b_index(kk, j)], acc);
                }
                p.dtype.push(acc, &mut out);
            }
        }
        out
    }

    fn inputs(dtype: DType, layout: Layout) -> Inputs {
        Inputs::new(Problem::new(40, 24, 200, layout, dtype).unwrap(), 3)
    }

    #[test]
    fn a_correct_c_passes_every_check() {
        for dt in DType::ALL {
            for layout in [Layout::Kn, Layout::Nk] {
                let x = inputs(dt, layout);
                let c = host_c(&x);
                let all = checked_elements(&x.problem, 1);
                assert_eq!(all.len(), 40 * 24);
                let v = against_reference(&c, &x);
                assert!(v.passed, "{dt} {layout:?}: {}", v.summary());
                assert!(against_cublas(&c, &c, &x.problem).passed);
                assert!(against_baseline(&c, &c, &x.problem).passed);
            }
        }
    }

    /// Negative controls: one stale K slice (16 products left out), a swapped B layout, an
    /// unwritten element, one flipped low bit.
    #[test]
    fn broken_outputs_fail() {
        for dt in DType::ALL {
            let x = inputs(dt, Layout::Kn);
            let p = x.problem;
            let mut stale = x.a_vals.clone();
            stale[5 * p.k + 32..5 * p.k + 48].fill(0.0);
            let c_stale = host_c(&Inputs {
                a_vals: stale,
                ..Inputs::new(p, 3)
            });
            let v = against_reference(&c_stale, &x);
            assert!(
                !v.passed && v.failure.as_deref().unwrap().contains("C[5]"),
                "{dt}: {}",
                v.summary()
            );

            let swapped = Inputs::new(
                Problem {
                    layout: Layout::Nk,
                    ..p
                },
                3,
            );
            let v = against_reference(&host_c(&swapped), &x);
            assert!(v.beyond_tolerance > p.m * p.n / 2, "{dt}");

            let mut unwritten = host_c(&x);
            let es = dt.size();
            unwritten[7 * es..8 * es].fill(DType::POISON_BYTE);
            assert_eq!(against_reference(&unwritten, &x).beyond_tolerance, 1);
            assert_eq!(
                against_cublas(&unwritten, &host_c(&x), &p).beyond_tolerance,
                1
            );

            let mut flipped = host_c(&x);
            flipped[0] ^= 1;
            assert_eq!(
                against_baseline(&flipped, &host_c(&x), &p).beyond_tolerance,
                1
            );
        }
    }

    /// Bit for bit: every differing element counts and the first in C's order is named; equal
    /// bits that are not a finite number fail too.
    #[test]
    fn bit_for_bit_counts_every_difference_and_names_the_first() {
        let x = inputs(DType::F32, Layout::Kn);
        let (p, c) = (x.problem, host_c(&x));
        let mut two = c.clone();
        two[30 * 4] ^= 1;
        two[3 * 4 + 1] ^= 1;
        let v = against_baseline(&two, &c, &p);
        assert_eq!(
            (v.passed, v.beyond_tolerance, v.checked),
            (false, 2, 40 * 24)
        );
        assert!(
            v.failure.as_deref().unwrap().contains("C[0][3]"),
            "{}",
            v.summary()
        );
        let mut nan = c.clone();
        nan[8..12].copy_from_slice(&f32::NAN.to_le_bytes());
        let v = against_baseline(&nan, &nan, &p);
        assert_eq!((v.passed, v.beyond_tolerance), (false, 1));
        assert!(
            v.failure.as_deref().unwrap().contains("C[0][2]"),
            "{}",
            v.summary()
        );
    }

    #[test]
    fn large_problems_sample_the_edges() {
        let p = Problem::new(4096, 3000, 4096, Layout::Nk, DType::Bf16).unwrap();
        let e = checked_elements(&p, 9);
        assert!(e.len() <= SAMPLED * SAMPLED && e.len() > 1000);
        for corner in [(0, 0), (4095, 2999), (0, 2999), (4095, 0)] {
            assert!(e.contains(&corner), "{corner:?}");
        }
    }
}
