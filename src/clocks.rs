//! GPU clocks, temperature, power and throttle reasons read through NVML around every timed
//! measurement, and the judgement whether the clocks held still while it ran. NVML is optional:
//! without it the results say why nothing was recorded.

use nvml_wrapper::Nvml;
use nvml_wrapper::bitmasks::device::ThrottleReasons;
use nvml_wrapper::enum_wrappers::device::{Clock, TemperatureSensor};
use serde::{Deserialize, Serialize};

/// A measurement whose SM clock moved by more than this fraction of its highest reading is flagged.
pub const CLOCK_TOLERANCE: f64 = 0.02;

/// One NVML reading.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClockSample {
    pub sm_mhz: u32,
    pub mem_mhz: u32,
    pub temp_c: u32,
    pub power_w: f64,
    /// Active throttle reasons, idle excluded (e.g. sw_power_cap, hw_slowdown).
    pub throttle: Vec<String>,
}

/// Readings before a measurement and after each batch of it, with the verdict.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClockTrace {
    pub samples: Vec<ClockSample>,
    /// Set when the SM or memory clock moved by more than CLOCK_TOLERANCE during the measurement.
    pub warning: Option<String>,
}

impl ClockTrace {
    pub fn new(samples: Vec<ClockSample>) -> ClockTrace {
        let warning = assess(&samples);
        ClockTrace { samples, warning }
    }

    /// Lowest and highest SM clock read (MHz).
    pub fn sm_range(&self) -> Option<(u32, u32)> {
        let lo = self.samples.iter().map(|s| s.sm_mhz).min()?;
        let hi = self.samples.iter().map(|s| s.sm_mhz).max()?;
        Some((lo, hi))
    }
}

/// Whether SM clocks of `lo` and `hi` MHz lie more than CLOCK_TOLERANCE apart.
fn apart(lo: u32, hi: u32) -> bool {
    hi > 0 && f64::from(hi - lo) / f64::from(hi) > CLOCK_TOLERANCE
}

/// The lowest and highest SM clock of a measurement whose SM clock moved by more than
/// CLOCK_TOLERANCE; None where it held.
pub fn sm_moved(t: &ClockTrace) -> Option<(u32, u32)> {
    t.sm_range().filter(|&(lo, hi)| apart(lo, hi))
}

/// Why two measurements' ratio is not a comparison at one clock, if it is not: either one's SM
/// clock moved during it (a GPU at its power cap slows a kernel timed long enough), or the two ran
/// at SM clocks more than CLOCK_TOLERANCE apart. `who`: how the first is named.
pub fn unmatched(who: &str, a: &ClockTrace, b: &ClockTrace) -> Option<String> {
    let (Some((alo, ahi)), Some((blo, bhi))) = (a.sm_range(), b.sm_range()) else {
        return Some("no clock readings to match".into());
    };
    let span = |lo: u32, hi: u32| match lo == hi {
        true => format!("{lo} MHz"),
        false => format!("{lo}..{hi} MHz"),
    };
    (apart(alo, ahi) || apart(blo, bhi) || apart(alo.min(blo), ahi.max(bhi))).then(|| {
        format!(
            "not at one clock: {who} timed at {}, this at {}",
            span(alo, ahi),
            span(blo, bhi)
        )
    })
}

/// Why a series of readings cannot be trusted to describe one clock, if it cannot.
pub fn assess(samples: &[ClockSample]) -> Option<String> {
    let moved = |name: &str, f: fn(&ClockSample) -> u32| {
        let lo = samples.iter().map(f).min()?;
        let hi = samples.iter().map(f).max()?;
        (hi > 0 && f64::from(hi - lo) / f64::from(hi) > CLOCK_TOLERANCE)
            .then(|| format!("{name} clock moved {lo}..{hi} MHz"))
    };
    let mut why: Vec<String> = [moved("SM", |s| s.sm_mhz), moved("memory", |s| s.mem_mhz)]
        .into_iter()
        .flatten()
        .collect();
    if why.is_empty() {
        return None;
    }
    let reasons = reasons_seen(samples.iter());
    if !reasons.is_empty() {
        why.push(format!("throttle reasons seen: {}", reasons.join(", ")));
    }
    Some(format!(
        "{} during the measurement (tolerance {:.0} %)",
        why.join("; "),
        CLOCK_TOLERANCE * 100.0
    ))
}

/// "lo..hi" of `f` over `all`, or one number where it held.
fn range(all: &[&ClockSample], f: fn(&ClockSample) -> f64) -> String {
    let lo = all.iter().map(|s| f(s)).fold(f64::INFINITY, f64::min);
    let hi = all.iter().map(|s| f(s)).fold(f64::NEG_INFINITY, f64::max);
    if lo == hi {
        format!("{lo:.0}")
    } else {
        format!("{lo:.0}..{hi:.0}")
    }
}

/// Every reading of `traces` and the throttle reasons seen in them; None without readings.
fn readings<'a>(
    traces: impl IntoIterator<Item = &'a ClockTrace>,
) -> Option<(Vec<&'a ClockSample>, Vec<&'a str>)> {
    let all: Vec<&ClockSample> = traces.into_iter().flat_map(|t| &t.samples).collect();
    let reasons = reasons_seen(all.iter().copied());
    (!all.is_empty()).then_some((all, reasons))
}

/// "SM 1575..1980 MHz, memory 3201 MHz" over `all`.
fn sm_and_memory(all: &[&ClockSample]) -> String {
    format!(
        "SM {} MHz, memory {} MHz",
        range(all, |s| f64::from(s.sm_mhz)),
        range(all, |s| f64::from(s.mem_mhz))
    )
}

/// "SM 1575..1980 MHz, memory 3201 MHz (throttled: sw_power_cap)" over every reading, the
/// throttle reasons seen in brackets; None without readings.
pub fn span<'a>(traces: impl IntoIterator<Item = &'a ClockTrace>) -> Option<String> {
    let (all, reasons) = readings(traces)?;
    Some(match reasons.is_empty() {
        true => sm_and_memory(&all),
        false => format!(
            "{} (throttled: {})",
            sm_and_memory(&all),
            reasons.join(", ")
        ),
    })
}

/// One line over every reading of a run: the range of each quantity and the reasons seen.
pub fn summary<'a>(traces: impl IntoIterator<Item = &'a ClockTrace>) -> Option<String> {
    let (all, reasons) = readings(traces)?;
    Some(format!(
        "clocks (NVML, {} readings between timed batches): {}, {} C, {} W; throttle reasons seen: {}",
        all.len(),
        sm_and_memory(&all),
        range(&all, |s| f64::from(s.temp_c)),
        range(&all, |s| s.power_w),
        if reasons.is_empty() {
            "none".to_string()
        } else {
            reasons.join(", ")
        }
    ))
}

/// Every throttle reason named in the readings, once each, sorted.
fn reasons_seen<'a>(samples: impl Iterator<Item = &'a ClockSample>) -> Vec<&'a str> {
    let mut reasons: Vec<&str> = samples
        .flat_map(|s| s.throttle.iter().map(String::as_str))
        .collect();
    reasons.sort_unstable();
    reasons.dedup();
    reasons
}

/// Names of the active throttle reasons that limit clocks (idle is not a limit).
fn reason_names(r: ThrottleReasons) -> Vec<String> {
    [
        (
            ThrottleReasons::APPLICATIONS_CLOCKS_SETTING,
            "applications_clocks",
        ),
        (ThrottleReasons::SW_POWER_CAP, "sw_power_cap"),
        (ThrottleReasons::HW_SLOWDOWN, "hw_slowdown"),
        (ThrottleReasons::SYNC_BOOST, "sync_boost"),
        (ThrottleReasons::SW_THERMAL_SLOWDOWN, "sw_thermal_slowdown"),
        (ThrottleReasons::HW_THERMAL_SLOWDOWN, "hw_thermal_slowdown"),
        (ThrottleReasons::HW_POWER_BRAKE_SLOWDOWN, "hw_power_brake"),
    ]
    .into_iter()
    .filter(|(bit, _)| r.contains(*bit))
    .map(|(_, name)| name.to_string())
    .collect()
}

/// NVML opened on the GPU that CUDA calls by this PCI location.
pub struct Monitor {
    nvml: Nvml,
    index: u32,
}

impl Monitor {
    /// The NVML device at PCI (domain, bus, device), or why clocks cannot be read.
    pub fn open(pci: [u32; 3]) -> Result<Monitor, String> {
        let nvml = Nvml::init().map_err(|e| format!("NVML unavailable ({e})"))?;
        let count = nvml
            .device_count()
            .map_err(|e| format!("NVML device count failed ({e})"))?;
        let index = (0..count)
            .find(|&i| {
                nvml.device_by_index(i)
                    .and_then(|d| d.pci_info())
                    .is_ok_and(|p| [p.domain, p.bus, p.device] == pci)
            })
            .ok_or_else(|| {
                format!(
                    "NVML lists no GPU at PCI {:04x}:{:02x}:{:02x}",
                    pci[0], pci[1], pci[2]
                )
            })?;
        let m = Monitor { nvml, index };
        m.sample()
            .map(|_| m)
            .ok_or_else(|| "NVML could not read clocks on this GPU".to_string())
    }

    /// One reading, or None if NVML refused any part of it.
    pub fn sample(&self) -> Option<ClockSample> {
        let d = self.nvml.device_by_index(self.index).ok()?;
        Some(ClockSample {
            sm_mhz: d.clock_info(Clock::SM).ok()?,
            mem_mhz: d.clock_info(Clock::Memory).ok()?,
            temp_c: d.temperature(TemperatureSensor::Gpu).ok()?,
            power_w: f64::from(d.power_usage().ok()?) / 1000.0,
            throttle: d
                .current_throttle_reasons()
                .map_or_else(|_| Vec::new(), reason_names),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(sm: u32, mem: u32, throttle: &[&str]) -> ClockSample {
        ClockSample {
            sm_mhz: sm,
            mem_mhz: mem,
            temp_c: 40,
            power_w: 300.0,
            throttle: throttle.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn steady_clocks_pass() {
        let s = [
            at(1980, 3201, &[]),
            at(1965, 3201, &[]),
            at(1980, 3201, &[]),
        ];
        assert_eq!(assess(&s), None);
        assert_eq!(assess(&[]), None);
    }

    #[test]
    fn a_moving_sm_clock_is_flagged_with_its_range_and_reasons() {
        let s = [at(1980, 3201, &[]), at(1755, 3201, &["sw_power_cap"])];
        let w = assess(&s).expect("1755 vs 1980 MHz is an 11 % move");
        assert!(w.contains("SM clock moved 1755..1980 MHz"), "{w}");
        assert!(w.contains("sw_power_cap"), "{w}");
        assert!(!w.contains("memory"), "{w}");
    }

    #[test]
    fn a_moving_memory_clock_is_flagged() {
        let s = [at(1980, 3201, &[]), at(1980, 1593, &[])];
        assert!(
            assess(&s)
                .unwrap()
                .contains("memory clock moved 1593..3201 MHz")
        );
    }

    #[test]
    fn a_ratio_is_clock_matched_only_when_both_ran_steady_at_one_clock() {
        let trace = |mhz: &[u32]| {
            ClockTrace::new(
                mhz.iter()
                    .map(|&sm_mhz| ClockSample {
                        sm_mhz,
                        mem_mhz: 3201,
                        temp_c: 50,
                        power_w: 500.0,
                        throttle: Vec::new(),
                    })
                    .collect(),
            )
        };
        let steady = trace(&[1980, 1980, 1965]);
        assert_eq!(unmatched("cuBLAS", &steady, &trace(&[1950, 1965])), None);
        let why = unmatched("cuBLAS", &trace(&[1515, 1980, 1980]), &steady).unwrap();
        assert!(
            why.contains("cuBLAS timed at 1515..1980 MHz")
                && why.contains("this at 1965..1980 MHz"),
            "{why}"
        );
        assert!(unmatched("cuBLAS", &steady, &trace(&[1725, 1725])).is_some());
        assert!(unmatched("cuBLAS", &steady, &trace(&[])).is_some());
    }

    #[test]
    fn the_tolerance_is_a_fraction_of_the_highest_reading() {
        // 2 % of 2000 is 40 MHz: 40 passes, 41 does not
        assert_eq!(assess(&[at(2000, 3201, &[]), at(1960, 3201, &[])]), None);
        assert!(assess(&[at(2000, 3201, &[]), at(1959, 3201, &[])]).is_some());
    }

    #[test]
    fn summary_spans_every_reading() {
        let a = ClockTrace::new(vec![at(1980, 3201, &[]), at(1965, 3201, &["sw_power_cap"])]);
        let b = ClockTrace::new(vec![at(1980, 3201, &["sw_power_cap"])]);
        let s = summary([&a, &b]).unwrap();
        assert!(s.contains("3 readings"), "{s}");
        assert!(s.contains("SM 1965..1980 MHz"), "{s}");
        assert!(s.contains("memory 3201 MHz"), "{s}");
        assert!(s.ends_with("throttle reasons seen: sw_power_cap"), "{s}");
        assert_eq!(a.sm_range(), Some((1965, 1980)));
        assert_eq!(ClockTrace::default().sm_range(), None);
        assert_eq!(summary([&ClockTrace::default()]), None);
    }

    #[test]
    fn reasons_name_only_limits() {
        let r = ThrottleReasons::GPU_IDLE | ThrottleReasons::HW_SLOWDOWN;
        assert_eq!(reason_names(r), vec!["hw_slowdown".to_string()]);
    }
}
