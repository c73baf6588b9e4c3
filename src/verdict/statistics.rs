//! Summary statistics of timing samples: samples in, numbers out, and the noise rule every
//! comparison of two timings uses.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub n: usize,
    pub min: f64,
    pub median: f64,
    pub max: f64,
    pub mean: f64,
    /// Sample standard deviation (n - 1).
    pub stdev: f64,
    /// stdev / mean.
    pub rel_stdev: f64,
}

impl Summary {
    /// The same samples in another unit (each figure times `factor`; the relative spread stays).
    pub fn scaled(&self, factor: f64) -> Summary {
        Summary {
            min: self.min * factor,
            median: self.median * factor,
            max: self.max * factor,
            mean: self.mean * factor,
            stdev: self.stdev * factor,
            ..*self
        }
    }

    /// None for no samples or any non-finite sample.
    pub fn of(samples: &[f64]) -> Option<Summary> {
        if samples.is_empty() || samples.iter().any(|s| !s.is_finite()) {
            return None;
        }
        let mut s = samples.to_vec();
        s.sort_by(f64::total_cmp);
        let n = s.len();
        let median = if n % 2 == 1 {
            s[n / 2]
        } else {
            0.5 * (s[n / 2 - 1] + s[n / 2])
        };
        let mean = s.iter().sum::<f64>() / n as f64;
        let stdev = if n > 1 {
            (s.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        Some(Summary {
            n,
            min: s[0],
            median,
            max: s[n - 1],
            mean,
            stdev,
            rel_stdev: if mean > 0.0 { stdev / mean } else { 0.0 },
        })
    }

    /// True when the two medians differ by less than either's min..max range: a difference that
    /// small is noise.
    pub fn indistinguishable(&self, other: &Summary) -> bool {
        let d = (self.median - other.median).abs();
        d <= (self.max - self.min).max(other.max - other.min)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_computed_summary() {
        let s = Summary::of(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!(
            (s.n, s.min, s.median, s.max, s.mean),
            (4, 1.0, 2.5, 4.0, 2.5)
        );
        // sample variance of 1..4 is 5/3
        assert!((s.stdev - (5.0f64 / 3.0).sqrt()).abs() < 1e-12);
        assert!((s.rel_stdev - s.stdev / 2.5).abs() < 1e-12);
        let odd = Summary::of(&[5.0, 1.0, 9.0]).unwrap();
        assert_eq!(odd.median, 5.0);
        assert_eq!(Summary::of(&[7.0]).unwrap().stdev, 0.0);
    }

    #[test]
    fn empty_or_nan_samples_give_nothing() {
        assert!(Summary::of(&[]).is_none());
        assert!(Summary::of(&[1.0, f64::NAN]).is_none());
    }

    #[test]
    fn noise_test_uses_ranges() {
        let a = Summary::of(&[10.0, 10.2, 10.4]).unwrap();
        let b = Summary::of(&[10.3, 10.5, 10.6]).unwrap();
        let c = Summary::of(&[12.0, 12.1, 12.2]).unwrap();
        assert!(a.indistinguishable(&b));
        assert!(!a.indistinguishable(&c));
    }
}
