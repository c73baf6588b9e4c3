//! Verdicts on outputs: what an output was compared with, how far off it was, which elements and
//! tiles were wrong, and whether it passed. Pure: every workload's checks produce one of these,
//! and every rule is tested without a GPU.

use crate::dtype::{DType, Tolerance};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

pub mod statistics;
pub mod tally;

/// How many wrong elements and tiles a verdict lists by coordinates.
pub const SHOWN: usize = 8;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct WrongElement {
    pub row: usize,
    pub col: usize,
    pub got: f64,
    pub expected: f64,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Verdict {
    pub passed: bool,
    /// What the output was compared with.
    pub checked_against: String,
    /// Elements compared where a check samples them (0: every element of the output).
    #[serde(default)]
    pub checked: usize,
    pub rel_l2: Option<f64>,
    pub max_abs_err: Option<f64>,
    /// The largest |error| / bound of checks that bound each element (below 1 passes).
    #[serde(default)]
    pub max_ratio: Option<f64>,
    pub nan: usize,
    pub unwritten: usize,
    /// Bytes of the output's allocation outside its view that a launch changed (they are
    /// poisoned before it, and nothing may write them).
    #[serde(default)]
    pub written_outside: usize,
    pub beyond_tolerance: usize,
    /// Elements whose bits differ from the sequential baseline on the same input.
    pub differs_from_baseline: Option<usize>,
    pub wrong_tiles: usize,
    pub first_wrong_tiles: Vec<usize>,
    pub first_wrong: Vec<WrongElement>,
    pub failure: Option<String>,
}

/// Number of elements whose bits differ between two outputs of the same shape.
pub fn differing_elements(out: &[u8], baseline: &[u8], dtype: DType) -> usize {
    let n = dtype.size();
    out.par_chunks(n * 4096)
        .zip(baseline.par_chunks(n * 4096))
        .map(|(a, b)| a.chunks(n).zip(b.chunks(n)).filter(|(x, y)| x != y).count())
        .sum()
}

impl Verdict {
    /// Sets `passed` and `failure` from the counts.
    pub fn conclude(&mut self, tol: Tolerance) {
        let mut why = Vec::new();
        if self.unwritten > 0 {
            why.push(format!("{} elements never written", self.unwritten));
        }
        if self.nan > 0 {
            why.push(format!("{} NaN", self.nan));
        }
        if self.written_outside > 0 {
            why.push(format!(
                "{} bytes outside the output view written",
                self.written_outside
            ));
        }
        if let Some(r) = self.rel_l2
            && (r.is_nan() || r > tol.rel_l2)
        {
            why.push(format!("rel L2 error {r:.3e} > {:.0e}", tol.rel_l2));
        }
        if self.beyond_tolerance > 0 {
            why.push(format!(
                "{} elements beyond |err| <= {:.0e} + {:.0e}|ref| in {} tiles (first tiles {:?})",
                self.beyond_tolerance, tol.atol, tol.rtol, self.wrong_tiles, self.first_wrong_tiles
            ));
        }
        if let Some(d) = self.differs_from_baseline
            && d > 0
        {
            why.push(format!("{d} elements differ from sync bit for bit"));
        }
        if let Some(w) = self.first_wrong.first() {
            why.push(format!(
                "first wrong: row {} col {} got {} expected {:.6}",
                w.row, w.col, w.got, w.expected
            ));
        }
        self.passed = self.unwritten == 0
            && self.nan == 0
            && self.written_outside == 0
            && self.rel_l2.is_some_and(|r| r <= tol.rel_l2)
            && self.beyond_tolerance == 0
            && self.differs_from_baseline.unwrap_or(0) == 0;
        self.failure = if self.passed {
            None
        } else {
            Some(why.join("; "))
        };
    }

    /// A verdict of a check that bounds each element on its own (`checked` of them,
    /// `failures` outside their bound, the worst ratio seen, the first failure in words).
    pub fn bounded(
        against: &str,
        checked: usize,
        failures: usize,
        max_ratio: f64,
        worst: Option<String>,
    ) -> Verdict {
        let passed = failures == 0 && checked > 0;
        Verdict {
            passed,
            checked_against: against.into(),
            checked,
            max_ratio: Some(max_ratio),
            beyond_tolerance: failures,
            failure: (!passed).then(|| {
                format!(
                    "{against}: {failures} of {checked} elements wrong; {}",
                    worst.unwrap_or_default()
                )
            }),
            ..Verdict::default()
        }
    }

    /// The verdict in one line: why it failed, or what it passed.
    pub fn summary(&self) -> String {
        match (&self.failure, self.max_ratio) {
            (Some(why), _) => why.clone(),
            (None, Some(r)) if self.checked > 0 => format!(
                "{}: {} elements within bounds (worst at {r:.2} of its bound)",
                self.checked_against, self.checked
            ),
            (None, _) => self.checked_against.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bounded_verdict_passes_only_with_every_element_inside_and_something_checked() {
        let ok = Verdict::bounded("f64 reference", 96, 0, 0.25, None);
        assert!(ok.passed);
        assert_eq!(
            ok.summary(),
            "f64 reference: 96 elements within bounds (worst at 0.25 of its bound)"
        );
        let bad = Verdict::bounded("cuBLAS", 96, 3, 2.0, Some("C[1][2] = 5".into()));
        assert!(!bad.passed);
        assert_eq!(bad.summary(), "cuBLAS: 3 of 96 elements wrong; C[1][2] = 5");
        assert!(
            !Verdict::bounded("x", 0, 0, 0.0, None).passed,
            "nothing checked"
        );
    }

    #[test]
    fn differing_elements_counts_elements_not_bytes() {
        let a = vec![1u8, 2, 3, 4, 5, 6];
        let mut b = a.clone();
        b[1] ^= 1;
        b[5] ^= 1;
        assert_eq!(differing_elements(&a, &b, DType::Bf16), 2);
        assert_eq!(differing_elements(&a, &a, DType::Bf16), 0);
    }
}
