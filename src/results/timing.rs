//! The plain records a timing produces (samples, summaries, clocks, the copy ceiling, the
//! repeat) and the notes a run draws from them.

use crate::clocks::{CLOCK_TOLERANCE, ClockTrace};
pub use crate::verdict::statistics::Summary;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Device time per launch (CUDA events, ms) and, labelled apart, how long the host spent
/// submitting each launch (us). The two are never mixed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Timing {
    pub device_ms: Vec<f64>,
    pub device: Summary,
    pub host_submit_us: Vec<f64>,
    pub host_submit: Summary,
    pub warmup: usize,
    /// Buffer sets rotated through so that every sample reads from device memory.
    pub buffer_sets: usize,
    /// Samples whose launch the device was already waiting for when the host submitted it: they
    /// include host time. Zero in a sound timing.
    #[serde(default)]
    pub host_bound_samples: usize,
    /// NVML readings after the warm-up and after every batch (absent without NVML).
    #[serde(default)]
    pub clocks: Option<ClockTrace>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct TimingOptions {
    pub warmup: usize,
    pub min_repeats: usize,
    pub max_repeats: usize,
    /// Stop once the relative standard deviation of device times falls under this.
    pub target_rel_stdev: f64,
    /// Stop adding repeats (past min_repeats) after this long.
    pub budget: Duration,
}

/// One round of a paired timing: a batch of the reference (the vendor library) and a batch of the
/// subject back to back, each as its median per launch (ms) with the SM clock read right after it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairedRound {
    pub reference_ms: f64,
    pub subject_ms: f64,
    pub reference_mhz: Option<u32>,
    pub subject_mhz: Option<u32>,
}

impl PairedRound {
    /// Whether both batches ran at one SM clock (within `CLOCK_TOLERANCE` of the higher).
    pub fn matched(&self) -> bool {
        match (self.reference_mhz, self.subject_mhz) {
            (Some(a), Some(b)) => {
                let hi = a.max(b);
                hi > 0 && f64::from(hi - a.min(b)) / f64::from(hi) <= CLOCK_TOLERANCE
            }
            _ => false,
        }
    }
}

/// The subject's speed as a share of the reference's at one clock: the median over the rounds
/// whose two batches ran at one SM clock of 100 x reference time / subject time. A GPU at its
/// power cap drifts in clock over a long timing, so two timings taken one after the other compare
/// two clocks; alternating short batches compare the two at the clocks of the same moment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Matched {
    pub pct: f64,
    /// The lowest and highest share among the matched rounds.
    pub pct_range: (f64, f64),
    /// Matched rounds, of `rounds.len()` run.
    pub matched: usize,
    /// The SM clocks (MHz) the matched rounds ran at, lowest and highest.
    pub mhz: (u32, u32),
    pub rounds: Vec<PairedRound>,
}

impl Matched {
    /// None where no round ran both batches at one clock (or gave no clock to match).
    pub fn of(rounds: Vec<PairedRound>) -> Option<Matched> {
        let kept: Vec<&PairedRound> = rounds.iter().filter(|r| r.matched()).collect();
        let shares: Vec<f64> = kept
            .iter()
            .map(|r| 100.0 * r.reference_ms / r.subject_ms)
            .collect();
        let s = Summary::of(&shares)?;
        let clocks = kept
            .iter()
            .flat_map(|r| [r.reference_mhz, r.subject_mhz])
            .flatten();
        let mhz = (clocks.clone().min()?, clocks.max()?);
        Some(Matched {
            pct: s.median,
            pct_range: (s.min, s.max),
            matched: kept.len(),
            mhz,
            rounds,
        })
    }

    /// "97.1 % at 1755..1770 MHz (8 of 8 rounds)".
    pub fn label(&self) -> String {
        let clock = match self.mhz.0 == self.mhz.1 {
            true => format!("{} MHz", self.mhz.0),
            false => format!("{}..{} MHz", self.mhz.0, self.mhz.1),
        };
        format!(
            "{:.1} % at {clock} ({} of {} rounds, {:.1}..{:.1} %)",
            self.pct,
            self.matched,
            self.rounds.len(),
            self.pct_range.0,
            self.pct_range.1
        )
    }
}

/// The most timed launches per variant: the timing loop stops there whatever else it is asked.
pub const MAX_REPEATS: usize = 200;

impl Default for TimingOptions {
    fn default() -> Self {
        TimingOptions {
            warmup: 5,
            min_repeats: 20,
            max_repeats: MAX_REPEATS,
            target_rel_stdev: 0.01,
            budget: Duration::from_secs(3),
        }
    }
}

/// For a small problem, the fastest timed kernel against the copy of the problem's own size: the
/// line a reader needs where the large-copy ceiling's percentage understates a kernel.
pub fn sized_copy_note<'a>(
    copy: &SizedCopy,
    timings: impl IntoIterator<Item = (&'a str, &'a Timing)>,
) -> Option<String> {
    let (name, t) = timings
        .into_iter()
        .min_by(|a, b| a.1.device.median.total_cmp(&b.1.device.median))?;
    Some(format!(
        "at the problem's size: the fastest, {name}, takes {:.1} us, {:.2}x the {:.1} us of {DRIVER_COPY_NAME} moving the same bytes alone",
        t.device.median * 1e3,
        t.device.median / copy.time.median,
        copy.time.median * 1e3
    ))
}

/// Launches timed back to back between one event and the next sync.
pub const BATCH: usize = 10;

/// A note naming the timings some of whose samples include host time
/// (`Timing::host_bound_samples`); None when the device never waited for the host.
pub fn host_bound_note<'a>(
    timings: impl IntoIterator<Item = (&'a str, &'a Timing)>,
) -> Option<String> {
    let bound: Vec<String> = timings
        .into_iter()
        .filter(|(_, t)| t.host_bound_samples > 0)
        .map(|(name, t)| {
            format!(
                "{name} ({} of {} samples)",
                t.host_bound_samples,
                t.device_ms.len()
            )
        })
        .collect();
    (!bound.is_empty()).then(|| {
        format!(
            "host-bound timing: the device was idle, waiting for the host to submit the next launch, in {}; those samples include host time",
            bound.join(", ")
        )
    })
}

/// One variant timed twice in a run, apart: the wider of the two ranges should cover the difference.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Repeat {
    pub variant: String,
    pub first: Summary,
    pub second: Summary,
    pub agrees: bool,
}

impl Repeat {
    pub fn new(variant: &str, first: Summary, second: Summary) -> Repeat {
        Repeat {
            variant: variant.into(),
            agrees: first.indistinguishable(&second),
            first,
            second,
        }
    }

    /// The run's note on it; `after` says what ran in between ("every other variant"). Both
    /// ranges are shown: the medians agree when they differ by no more than the wider of them.
    pub fn note(&self, after: &str) -> String {
        let (a, b) = (&self.first, &self.second);
        format!(
            "repeatability: {} measured again after {after}: median {:.1} us, range {:.1}..{:.1} (first {:.1} us, range {:.1}..{:.1}); the medians differ by {:.1} %, {}",
            self.variant,
            b.median * 1e3,
            b.min * 1e3,
            b.max * 1e3,
            a.median * 1e3,
            a.min * 1e3,
            a.max * 1e3,
            (b.median - a.median).abs() / a.median * 1e2,
            if self.agrees {
                "within the wider range"
            } else {
                "more than either range: treat differences of this size as noise"
            }
        )
    }
}

pub const DRIVER_COPY_NAME: &str = "cuMemcpyDtoD";
pub const PLAIN_COPY_NAME: &str = "tilepipe_plain_copy";

fn driver_copy() -> String {
    DRIVER_COPY_NAME.into()
}

/// The device-to-device copy ceiling measured in this run: the faster of the driver's copy and a
/// plain copy kernel of our own, named in `kernel`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Ceiling {
    pub bytes_copied: u64,
    /// The driver's copy (cuMemcpyDtoD).
    pub samples_ms: Vec<f64>,
    pub time: Summary,
    /// (bytes read + bytes written) / median time of the faster copy.
    pub gbps: f64,
    /// Which copy set the ceiling.
    #[serde(default = "driver_copy")]
    pub kernel: String,
    /// The plain copy kernel of our own, on the same buffers.
    #[serde(default)]
    pub own_kernel: Option<OwnCopy>,
    /// cuMemcpyDtoD at the problem's own size, timed like the variants (small problems only).
    #[serde(default)]
    pub at_problem_size: Option<SizedCopy>,
}

/// A copy of one problem's size, rotated past the L2 and timed by the variants' rule: how fast
/// movement alone goes when launch and ramp-up are a visible part of the time.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SizedCopy {
    pub bytes_copied: u64,
    pub buffer_sets: usize,
    pub time: Summary,
    /// (bytes read + bytes written) / median time.
    pub gbps: f64,
}

impl Ceiling {
    /// The ceiling in one line: which copy set it, and both copies' figures.
    pub fn describe(&self) -> String {
        let own = self.own_kernel.as_ref().map_or(String::new(), |o| {
            format!(
                ", {PLAIN_COPY_NAME} ({} x {} threads) {:.0} GB/s",
                o.grid, o.threads, o.gbps
            )
        });
        let driver = 2.0 * self.bytes_copied as f64 / (self.time.median * 1e-3) / 1e9;
        let sized = self.at_problem_size.as_ref().map_or(String::new(), |s| {
            format!(
                "; at the problem's size ({:.1} MiB, {} rotated sets) {DRIVER_COPY_NAME} takes {:.1} us ({:.0} GB/s)",
                s.bytes_copied as f64 / (1 << 20) as f64,
                s.buffer_sets,
                s.time.median * 1e3,
                s.gbps
            )
        });
        format!(
            "copy ceiling {:.0} GB/s by {} ({} MiB read + written, medians of {}: {DRIVER_COPY_NAME} {driver:.0} GB/s{own}){sized}",
            self.gbps,
            self.kernel,
            self.bytes_copied >> 20,
            self.samples_ms.len()
        )
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OwnCopy {
    pub grid: u32,
    pub threads: u32,
    pub samples_ms: Vec<f64>,
    pub time: Summary,
    pub gbps: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeat_agrees_only_within_the_spread() {
        let first = Summary::of(&[1.00, 1.02, 1.04]).unwrap();
        let near = Repeat::new("k", first, Summary::of(&[1.05, 1.06, 1.07]).unwrap());
        assert!(near.agrees, "medians 0.04 apart, spread 0.04");
        assert!(
            near.note("x").ends_with("within the wider range"),
            "{}",
            near.note("x")
        );
        // a second run whose own range is wide agrees though its median is past the first range
        let wide = Repeat::new("k", first, Summary::of(&[1.0, 1.12, 1.14]).unwrap());
        assert!(wide.agrees);
        assert!(wide.note("x").contains("median 1120.0 us, range 1000.0..1140.0 (first 1020.0 us, range 1000.0..1040.0); the medians differ by 9.8 %, within the wider range"), "{}", wide.note("x"));
        let far = Repeat::new("k", first, Summary::of(&[1.10, 1.11, 1.12]).unwrap());
        assert!(!far.agrees, "medians 0.09 apart, spreads 0.04 and 0.02");
        let n = far.note("every variant");
        assert!(n.contains("k measured again after every variant: median 1110.0 us, range 1100.0..1120.0 (first 1020.0 us, range 1000.0..1040.0)"), "{n}");
        assert!(n.contains("more than either range"), "{n}");
    }

    fn timing(samples: usize, host_bound_samples: usize) -> Timing {
        let ms = vec![1.0; samples];
        Timing {
            device: Summary::of(&ms).unwrap(),
            host_submit: Summary::of(&ms).unwrap(),
            device_ms: ms.clone(),
            host_submit_us: ms,
            warmup: 5,
            buffer_sets: 1,
            host_bound_samples,
            clocks: None,
        }
    }

    #[test]
    fn host_bound_note_names_only_host_bound_timings() {
        let (sound, bound) = (timing(40, 0), timing(40, 3));
        assert_eq!(host_bound_note([("sync", &sound)]), None);
        let note = host_bound_note([("sync", &sound), ("torch.compile", &bound)]).unwrap();
        assert!(note.contains("torch.compile (3 of 40 samples)"), "{note}");
        assert!(!note.contains("sync"), "{note}");
    }

    #[test]
    fn the_sized_copy_note_names_the_fastest_against_the_copy() {
        let copy = SizedCopy {
            bytes_copied: 1 << 24,
            buffer_sets: 5,
            time: Summary::of(&[0.0187]).unwrap(),
            gbps: 1800.0,
        };
        let (mut slow, mut fast) = (timing(20, 0), timing(20, 0));
        slow.device = Summary::of(&[0.0209]).unwrap();
        fast.device = Summary::of(&[0.0188]).unwrap();
        let note = sized_copy_note(&copy, [("sync", &slow), ("cpasync-cg16-s2", &fast)]).unwrap();
        assert!(
            note.contains(
                "the fastest, cpasync-cg16-s2, takes 18.8 us, 1.01x the 18.7 us of cuMemcpyDtoD"
            ),
            "{note}"
        );
        assert_eq!(sized_copy_note(&copy, []), None);
    }

    fn round(reference_ms: f64, subject_ms: f64, clocks: (u32, u32)) -> PairedRound {
        PairedRound {
            reference_ms,
            subject_ms,
            reference_mhz: Some(clocks.0),
            subject_mhz: Some(clocks.1),
        }
    }

    #[test]
    fn a_matched_ratio_keeps_only_rounds_at_one_clock() {
        let rounds = vec![
            round(1.0, 1.0, (1980, 1980)),
            round(1.0, 0.98, (1755, 1770)),
            // the subject at a far lower clock: slower, and not comparable
            round(1.0, 1.30, (1980, 1500)),
            round(1.0, 1.02, (1755, 1755)),
        ];
        let m = Matched::of(rounds).unwrap();
        assert_eq!((m.matched, m.rounds.len()), (3, 4));
        assert!((m.pct - 100.0).abs() < 1e-9, "{}", m.pct);
        assert_eq!(m.mhz, (1755, 1980));
        let (lo, hi) = m.pct_range;
        assert!((lo - 100.0 / 1.02).abs() < 1e-9 && (hi - 100.0 / 0.98).abs() < 1e-9);
        assert!(
            m.label()
                .starts_with("100.0 % at 1755..1980 MHz (3 of 4 rounds"),
            "{}",
            m.label()
        );
    }

    #[test]
    fn no_matched_round_gives_no_ratio() {
        assert_eq!(Matched::of(vec![round(1.0, 1.3, (1980, 1500))]), None);
        let unread = PairedRound {
            reference_mhz: None,
            ..round(1.0, 1.0, (0, 1980))
        };
        assert!(!unread.matched());
        assert_eq!(Matched::of(vec![unread]), None);
        assert_eq!(Matched::of(Vec::new()), None);
    }
}
